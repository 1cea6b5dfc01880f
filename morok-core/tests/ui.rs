//! Compile-fail cases of the `patterns!` macro: each file in
//! `ui-tests/patterns/` must fail with the messages in its `.stderr`.

#[test]
fn patterns_compile_errors() {
    trybuild::TestCases::new().compile_fail("../ui-tests/patterns/*.rs");
}
