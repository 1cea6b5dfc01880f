//! How closely a node's compiled values must match the reference
//! evaluator's, and when they cannot be compared at all.
//!
//! The reference computes every float op in f64 and rounds its result to
//! the op's type; a compiled kernel rounds at other places (fused
//! multiply-adds, sums split into partial accumulators, transcendental
//! approximations). Both are right to within rounding, so:
//!
//! - a value is compared within the tolerance of the *least precise* float
//!   type it was computed through ([`Trust::precision`]): an f32 result
//!   cast to f64 carries f32's rounding, not f64's;
//! - a *discontinuous* op (a comparison, a float → integer cast, `floor`,
//!   `argmax`, a `where` on a computed condition, an index computed from
//!   floats) of a value that was rounded turns a difference in the last
//!   bit into a different result: `eq(realize(x), x)` is true when the two
//!   kernels that compute `x` round alike and false when they do not. A
//!   difference in such a value, or in anything computed from it, is
//!   counted as not comparable rather than as a mismatch
//!   ([`Trust::unchecked`], in the run's report);
//! - the derivative of `max`, `min`, `maximum`, `minimum`, `clamp`,
//!   `relu` and `abs` jumps where operands tie or cross a bound, so a
//!   difference in a gradient through one of them applied to rounded
//!   values is not a mismatch either ([`Trust::kinked`]);
//! - `sin` of a rounded value: the argument's absolute error grows with
//!   its magnitude (an f32 near 8,000, `exp(9)`, is off by up to 5e-4)
//!   and `sin` passes it on undiminished, so a difference in its result
//!   is not a mismatch;
//! - a gradient goes through about twice the roundings of its forward
//!   pass, some in cancellations (`1 - n·softmax` in `log_softmax`'s), so
//!   it is compared at [`GRADIENT_LOOSENESS`] times its type's tolerance;
//! - the reference holds elements as f64, exact for integers up to 2^53
//!   only: a 64-bit integer node holding larger values (a negative value
//!   cast to `u64`, say) is rounded in the reference; a difference in it,
//!   or in anything computed from it, is not a mismatch.
//!
//! Integer and bool ops of exact operands are exact on both sides, as are
//! ops that only select or move values (movement, indexing, `where`,
//! `max`): their values are compared exactly (or within the tolerance of
//! the float types they came through).

use crate::program::Step;
use morok::{DType, ScalarType};

/// How many times looser than a forward value's tolerance a gradient's is.
pub const GRADIENT_LOOSENESS: f64 = 4.0;

/// What the checker may expect of one node's compiled values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trust {
    /// The least precise float type the value was computed through (its
    /// own type included), if any.
    pub precision: Option<ScalarType>,
    /// Some op on the way rounded: compiled and reference values may
    /// differ in their last bits.
    pub rounded: bool,
    /// A discontinuous op took a rounded operand on the way: the values
    /// may differ by a whole step, and a difference is not a mismatch.
    pub unchecked: bool,
    /// An op whose derivative jumps took a rounded operand on the way:
    /// a difference in a gradient through the node is not a mismatch.
    pub kinked: bool,
    /// A gradient: compared at [`GRADIENT_LOOSENESS`] times the tolerance.
    pub gradient: bool,
}

/// Ops whose result is one of their operands' values (or a fixed
/// function of it that rounds nothing): they pass rounding on but add
/// none.
const SELECTING: &[&str] = &[
    "input",
    "index_input",
    "realize",
    "reshape",
    "permute",
    "transpose",
    "expand_new",
    "broadcast_to",
    "pad",
    "shrink",
    "slice",
    "flip",
    "squeeze",
    "unsqueeze",
    "flatten",
    "repeat",
    "cat",
    "stack",
    "chunk",
    "split",
    "neg",
    "abs",
    "sign",
    "relu",
    "floor",
    "round",
    "maximum",
    "minimum",
    "clamp",
    "where",
    "max",
    "min",
    "gather",
    "index_select",
    "scatter",
    "index",
    "cast",
    "lt",
    "eq",
    "ge",
    "ne",
    "gt0",
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "argmax",
    "argmin",
    "any",
    "all",
];

/// Ops whose result jumps as an operand crosses a threshold.
const DISCONTINUOUS: &[&str] = &[
    "lt",
    "eq",
    "ge",
    "ne",
    "gt0",
    "floor",
    "round",
    "sign",
    "argmax",
    "argmin",
    "any",
    "all",
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "floor_div",
    "remainder",
];

/// Ops that pass an argument's absolute rounding error on undiminished
/// whatever its magnitude (see the module docs).
const MAGNITUDE_SENSITIVE: &[&str] = &["sin"];

/// Ops whose derivative jumps where operands tie or cross a bound.
const KINKED: &[&str] = &["maximum", "minimum", "max", "min", "clamp", "relu", "abs"];

/// Ops whose operands after the first are positions (index tensors):
/// a rounded position selects another element.
const POSITIONAL: &[&str] = &["gather", "index_select", "scatter", "scatter_add", "index"];

/// How loose a float type's rounding is: the larger, the looser.
fn looseness(t: ScalarType) -> u8 {
    match t {
        ScalarType::BF16 => 3,
        ScalarType::F16 => 2,
        ScalarType::F32 => 1,
        _ => 0,
    }
}

/// The less precise of two optional float types.
fn loosest(a: Option<ScalarType>, b: Option<ScalarType>) -> Option<ScalarType> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if looseness(y) > looseness(x) { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Trust {
    /// The trust of the node `step` makes, of type `dtype`, from its
    /// operands' (`srcs`, in `step.src` order). `beyond_exact`: the node
    /// is a 64-bit integer whose reference values exceed 2^53.
    pub fn of_step(step: &Step, dtype: DType, srcs: &[Trust], beyond_exact: bool) -> Trust {
        let op = step.op.as_str();
        let st = dtype.scalar_type();
        let own = st.is_float().then_some(st);
        let precision = srcs.iter().fold(own, |p, s| loosest(p, s.precision));
        let any_rounded = srcs.iter().any(|s| s.rounded);
        let float_rounded = srcs.iter().any(|s| s.rounded && s.precision.is_some());
        let positions_rounded = POSITIONAL.contains(&op) && srcs.iter().skip(1).any(|s| s.rounded);
        let condition_rounded = op == "where" && srcs.first().is_some_and(|s| s.rounded);
        let to_integer = op == "cast" && !st.is_float() && float_rounded;
        let jumps =
            (DISCONTINUOUS.contains(&op) || MAGNITUDE_SENSITIVE.contains(&op)) && any_rounded;
        // Integer arithmetic on a value the reference already rounded
        // (beyond 2^53) is anybody's guess there.
        let integer_of_rounded = !st.is_float() && any_rounded && !SELECTING.contains(&op);
        Trust {
            precision,
            rounded: any_rounded || beyond_exact || (st.is_float() && !SELECTING.contains(&op)),
            unchecked: srcs.iter().any(|s| s.unchecked)
                || beyond_exact
                || jumps
                || to_integer
                || positions_rounded
                || condition_rounded
                || integer_of_rounded,
            kinked: srcs.iter().any(|s| s.kinked) || (KINKED.contains(&op) && float_rounded),
            gradient: false,
        }
    }

    /// The type whose tolerance applies to values of `dtype` with this
    /// trust: the less precise of `dtype` (if a float) and the types the
    /// values came through.
    pub fn tolerance_type(&self, dtype: DType) -> ScalarType {
        let st = dtype.scalar_type();
        loosest(st.is_float().then_some(st), self.precision).unwrap_or(st)
    }

    /// The trust of a gradient of a program whose nodes have the trusts
    /// `nodes`: rounded everywhere, as precise as the least precise node,
    /// unchecked where any node is unchecked or kinked, compared at
    /// [`GRADIENT_LOOSENESS`] times the tolerance.
    pub fn of_gradient(nodes: &[Trust]) -> Trust {
        Trust {
            precision: nodes.iter().fold(None, |p, n| loosest(p, n.precision)),
            rounded: true,
            unchecked: nodes.iter().any(|n| n.unchecked || n.kinked),
            kinked: false,
            gradient: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn step(op: &str) -> Step {
        Step {
            op: op.into(),
            src: vec![0],
            arg: Value::Null,
        }
    }

    #[test]
    fn a_comparison_of_a_rounded_float_is_not_compared_but_of_an_input_is() {
        let input = Trust::of_step(&step("input"), DType::F32, &[], false);
        assert!(!input.rounded && !input.unchecked);
        let exp = Trust::of_step(&step("exp"), DType::F32, &[input], false);
        assert!(exp.rounded && !exp.unchecked);
        assert!(Trust::of_step(&step("eq"), DType::BOOL, &[exp, exp], false).unchecked);
        assert!(!Trust::of_step(&step("eq"), DType::BOOL, &[input, input], false).unchecked);
        // ... and what follows an unchecked node is unchecked too.
        let lt = Trust::of_step(&step("lt"), DType::BOOL, &[exp, input], false);
        assert!(Trust::of_step(&step("reshape"), DType::BOOL, &[lt], false).unchecked);
    }

    #[test]
    fn a_value_is_compared_at_the_least_precise_type_it_came_through() {
        let input = Trust::of_step(&step("input"), DType::F32, &[], false);
        let bf = Trust::of_step(&step("cast"), DType::BF16, &[input], false);
        let back = Trust::of_step(&step("cast"), DType::F64, &[bf], false);
        assert_eq!(back.tolerance_type(DType::F64), ScalarType::BF16);
        assert_eq!(input.tolerance_type(DType::F32), ScalarType::F32);
        let ints = Trust::of_step(&step("input"), DType::I32, &[], false);
        assert_eq!(ints.tolerance_type(DType::I32), ScalarType::I32);
    }

    #[test]
    fn kinks_and_large_integers_stop_what_they_must() {
        let input = Trust::of_step(&step("input"), DType::F32, &[], false);
        let exp = Trust::of_step(&step("exp"), DType::F32, &[input], false);
        let max = Trust::of_step(&step("maximum"), DType::F32, &[exp, exp], false);
        assert!(max.kinked && !max.unchecked);
        assert!(Trust::of_gradient(&[input, exp, max]).unchecked);
        assert!(!Trust::of_gradient(&[input, exp]).unchecked);
        let big = Trust::of_step(&step("cast"), DType::U64, &[input], true);
        assert!(big.unchecked);
        let int = Trust::of_step(&step("input"), DType::I64, &[], false);
        assert!(!Trust::of_step(&step("add"), DType::I64, &[int, int], false).unchecked);
    }
}
