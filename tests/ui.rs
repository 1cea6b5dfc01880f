//! The DSL macros' compile-time errors and happy paths: each file in
//! `ui-tests/dsl/fail/` must fail with the messages in its `.stderr`, and
//! each file in `ui-tests/dsl/pass/` must build and run.

#[test]
fn dsl_compile_errors_and_happy_paths() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui-tests/dsl/fail/*.rs");
    t.pass("ui-tests/dsl/pass/*.rs");
}
