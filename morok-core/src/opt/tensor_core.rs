//! `TC`: a matrix product's reduce becomes tensor-core instructions
//! (`WMMA`), one `mma.m16n8k16` of a warp per 16 steps of the reduce.
//!
//! The kernel must reduce (`ADD`, in the shape's accumulator type) a
//! product of two operands of the shape's input type, as `f16`/`bf16`
//! matmuls are built: `CAST(MUL(a, b))` or `MUL(CAST(a), CAST(b))`. One
//! output axis `m` (16 | size) must be used by `A` only, one `n`
//! (8 | size) by `B` only, and a reduce axis `k` (16 | size) is taken.
//!
//! **The splits** put the instruction's layout into ranges:
//!
//! - `m = m_o·16 + e_hi·8 + gid`, with `gid` (8) a `WARP` range and
//!   `e_hi` (2) an `UPCAST` range;
//! - `n = n_o·8 + tig·2 + e_lo`, with `tig` (4) a `WARP` range and `e_lo`
//!   (2) an `UPCAST` range;
//! - `k = k_o·16 + k_i`.
//!
//! Lowering maps the two warp ranges onto the 32 lanes of a warp, lane
//! `= 4·gid + tig` (`crate::lower::gpu_dims`), so each thread owns the
//! four outputs of its lane in the instruction's `D` fragment: element
//! `e = 2·e_hi + e_lo` is row `gid + 8·e_hi`, column `2·tig + e_lo`.
//!
//! **The fragments** (with `use_tc = 1`): the reduce over `k_i` is
//! replaced by a `WMMA` node whose operands are the lane's share of `A`
//! (8 values) and of `B` (4 values), each the operand's expression with
//! ranges substituted at once:
//!
//! - `A` element `e` (row `gid + 8·((e>>1)&1)`, column
//!   `2·tig + (e&1) + 8·(e>>2)`): `e_hi := (e>>1)&1`,
//!   `k_i := 2·tig + (e&1) + 8·(e>>2)`;
//! - `B` element `e` (row `2·tig + (e&1) + 8·(e>>1)`, column `gid`):
//!   `k_i := 2·tig + (e&1) + 8·(e>>1)`, and the `n` ranges of the lane's
//!   column, `tig := gid / 2`, `e_lo := gid % 2`.
//!
//! The `WMMA`'s last operand is the element `2·e_hi + e_lo` of the
//! product it yields (a constant once `UPCAST` lanes are expanded; the
//! four lanes share their twelve operands, and the renderer emits one
//! instruction for them). The reduce over the rest of `k` adds the
//! products. With `use_tc = 2` only the splits are made (the same
//! threads and outputs, each computed by a plain reduce).
//!
//! Refused: no tensor cores on the target, an opt before it, more than
//! one reduce, another operand shape, sizes the instruction does not
//! divide (no padding), kernels whose threads would read what others
//! write, or stores that do not all run over `m` and `n`.

use super::kernel::OptKernel;
use super::opts::{check, Opt, OptArg};
use crate::dtype::DType;
use crate::kernel::{range_size, reads_what_others_write, uses_range};
use crate::target::TensorCoreShape;
use crate::uop::{Arg, AxisType, Op, ReduceOp, UOp};
use std::collections::HashMap;
use std::sync::Arc;

/// The two operands of a product reduce, `CAST(MUL(a, b))` or
/// `MUL(CAST(a), CAST(b))` with `a` and `b` of one type, and that type.
fn product_operands(value: &Arc<UOp>) -> Option<(Arc<UOp>, Arc<UOp>, DType)> {
    let (a, b) = match value.op() {
        Op::Cast if value.s(0).op() == Op::Mul => {
            (value.s(0).s(0).clone(), value.s(0).s(1).clone())
        }
        Op::Mul if value.s(0).op() == Op::Cast && value.s(1).op() == Op::Cast => {
            (value.s(0).s(0).clone(), value.s(1).s(0).clone())
        }
        _ => return None,
    };
    (a.dtype() == b.dtype()).then(|| {
        let dt = a.dtype();
        (a, b, dt)
    })
}

/// The kernel's only `REDUCE`, if it has exactly one.
fn only_reduce(ast: &Arc<UOp>) -> Result<Arc<UOp>, String> {
    let reduces: Vec<Arc<UOp>> = ast
        .toposort()
        .into_iter()
        .filter(|n| n.op() == Op::Reduce)
        .collect();
    match reduces.as_slice() {
        [r] => Ok(r.clone()),
        [] => Err("TC needs a reduce".into()),
        _ => Err("TC of a kernel with more than one reduce".into()),
    }
}

/// The range of `k`'s current AST with the id and type of `like` (the
/// outer part a split left).
fn current_range(k: &OptKernel, like: (usize, AxisType)) -> Result<Arc<UOp>, String> {
    k.ranges()
        .into_iter()
        .find(|r| crate::kernel::axis_id(r) == like.0 && r.axis_type() == Some(like.1))
        .ok_or_else(|| "TC lost a range while splitting".to_string())
}

/// `rng`'s id and type.
fn key(rng: &Arc<UOp>) -> (usize, AxisType) {
    (
        crate::kernel::axis_id(rng),
        rng.axis_type().unwrap_or(AxisType::Loop),
    )
}

/// Whether every store of `ast` runs over `rng` (it is in every `END`).
fn every_store_runs_over(ast: &Arc<UOp>, rng: &Arc<UOp>) -> bool {
    ast.src()
        .iter()
        .all(|root| root.op() == Op::End && root.src()[1..].iter().any(|r| Arc::ptr_eq(r, rng)))
}

/// `TC` (see the module docs).
pub(super) fn apply_tc(k: &mut OptKernel, opt: &Opt) -> Result<(), String> {
    let shapes = k.target.gpu.map_or(&[][..], |g| g.tensor_cores);
    check(!shapes.is_empty(), "the target has no tensor cores")?;
    check(k.applied.is_empty(), "TC must be the first opt")?;
    let OptArg::Tc(select, tc_opt, use_tc) = opt.arg else {
        return Err("TC needs (select, opt, use_tc)".into());
    };
    check((0..=2).contains(&tc_opt), "tc_opt must be 0..=2")?;
    check((1..=2).contains(&use_tc), "use_tc must be 1..=2")?;
    check(
        !reads_what_others_write(&k.ast),
        "TC of a kernel that reads a buffer it writes elsewhere",
    )?;
    let reduce = only_reduce(&k.ast)?;
    check(
        matches!(reduce.arg(), Arg::Reduce(ReduceOp::Add)),
        "TC of a reduce that is not a sum",
    )?;
    let (x, y, input) =
        product_operands(reduce.s(0)).ok_or("TC of a reduce that is not of a product")?;
    if tc_opt == 0 {
        check(
            x.op() == Op::Load && y.op() == Op::Load,
            "TC with tc_opt 0 of operands that are not loads",
        )?;
    }
    let fits = |s: &&TensorCoreShape| {
        s.input == input.scalar_type() && s.accumulator == reduce.dtype().scalar_type()
    };
    let shape = match select {
        -1 => shapes.iter().find(fits),
        s => usize::try_from(s)
            .ok()
            .and_then(|s| shapes.get(s))
            .filter(fits),
    }
    .ok_or("TC of types no tensor-core shape takes")?;
    check(
        (shape.m, shape.n, shape.k) == (16, 8, 16),
        "TC of a shape without a fragment layout (only m16n8k16)",
    )?;
    let divides = |r: &Arc<UOp>, by: usize| range_size(r).is_some_and(|s| s % by as i64 == 0);
    let kr = reduce.src()[1..]
        .iter()
        .find(|r| divides(r, shape.k) && (uses_range(&x, r) || uses_range(&y, r)))
        .cloned()
        .ok_or("TC: no reduce axis divisible by 16")?;
    let outputs: Vec<Arc<UOp>> = k
        .ranges_of(&[AxisType::Loop, AxisType::Global])
        .into_iter()
        .filter(|r| every_store_runs_over(&k.ast, r))
        .rev()
        .collect();
    let only = |uses: &Arc<UOp>, not: &Arc<UOp>, by: usize| -> Vec<Arc<UOp>> {
        outputs
            .iter()
            .filter(|r| divides(r, by) && uses_range(uses, r) && !uses_range(not, r))
            .cloned()
            .collect()
    };
    let mut pairs = Vec::new();
    for (a, b) in [(&x, &y), (&y, &x)] {
        for m in only(a, b, shape.m) {
            for n in only(b, a, shape.n) {
                pairs.push((m.clone(), n, Arc::ptr_eq(a, &x)));
            }
        }
    }
    let (m, n, a_is_x) = pairs
        .get(opt.axis.unwrap_or(0))
        .cloned()
        .ok_or("TC: no output axes the operands split into A and B")?;
    let (m_key, n_key) = (key(&m), key(&n));
    let gid = k.shift_to(&m, 8, AxisType::Warp, false)?;
    let e_hi = k.shift_to(&current_range(k, m_key)?, 2, AxisType::Upcast, false)?;
    let e_lo = k.shift_to(&n, 2, AxisType::Upcast, false)?;
    let tig = k.shift_to(&current_range(k, n_key)?, 4, AxisType::Warp, false)?;
    let k_i = k.shift_to(&kr, 16, AxisType::Reduce, false)?;
    if use_tc == 2 {
        return Ok(());
    }
    let reduce = only_reduce(&k.ast)?;
    let (x, y, _) = product_operands(reduce.s(0)).ok_or("TC lost the product")?;
    let (a, b) = if a_is_x { (x, y) } else { (y, x) };
    let ix = UOp::index;
    let mut frags = Vec::with_capacity(13);
    for e in 0..8 {
        let col = tig.mul(&ix(2)).add(&ix((e & 1) + 8 * (e >> 2)));
        let map = HashMap::from([(e_hi.id(), ix((e >> 1) & 1)), (k_i.id(), col)]);
        frags.push(a.substitute(&map));
    }
    for e in 0..4 {
        let row = tig.mul(&ix(2)).add(&ix((e & 1) + 8 * (e >> 1)));
        let map = HashMap::from([
            (k_i.id(), row),
            (tig.id(), gid.bin(Op::Idiv, &ix(2))),
            (e_lo.id(), gid.bin(Op::Mod, &ix(2))),
        ]);
        frags.push(b.substitute(&map));
    }
    frags.push(e_hi.mul(&ix(2)).add(&e_lo));
    let wmma = UOp::new(Op::Wmma, reduce.dtype(), frags, Arg::Str("m16n8k16".into()));
    let rest: Vec<Arc<UOp>> = reduce.src()[1..]
        .iter()
        .filter(|r| !Arc::ptr_eq(r, &k_i))
        .cloned()
        .collect();
    let summed = if rest.is_empty() {
        wmma
    } else {
        wmma.reduce(ReduceOp::Add, &rest)
    };
    k.ast = k.ast.substitute(&HashMap::from([(reduce.id(), summed)]));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::LaunchLimits;
    use crate::interp::{run_kernel_exact, run_launch_exact};
    use crate::lower::gpu_dims::map_gpu_dims;
    use crate::opt::actions::apply_opt;
    use crate::opt::OptOps;
    use crate::target::{GpuTarget, Target, MMA_M16N8K16};
    use crate::uop::ConstValue;

    /// `out[i, j] = Σ_r a[i, r]·b[r, j]` over `dt` operands summed in
    /// `f32`, cast after the product (`CAST(MUL)`) or before it.
    fn half_matmul(dt: DType, m: i64, k: i64, n: i64, cast_first: bool) -> Arc<UOp> {
        let i = UOp::range(&UOp::index(m), 0, AxisType::Loop);
        let j = UOp::range(&UOp::index(n), 1, AxisType::Loop);
        let r = UOp::range(&UOp::index(k), 2, AxisType::Reduce);
        let ix = UOp::index;
        let a = UOp::define_global(1, dt)
            .index_into(&i.mul(&ix(k)).add(&r), None)
            .load();
        let b = UOp::define_global(2, dt)
            .index_into(&r.mul(&ix(n)).add(&j), None)
            .load();
        let product = if cast_first {
            a.cast(DType::F32).mul(&b.cast(DType::F32))
        } else {
            a.mul(&b).cast(DType::F32)
        };
        let sum = product.reduce(ReduceOp::Add, std::slice::from_ref(&r));
        let out = UOp::define_global(0, DType::F32).index_into(&i.mul(&ix(n)).add(&j), None);
        UOp::sink(vec![out.store(&sum).end(&[i, j])])
    }

    fn gpu() -> Target {
        Target {
            gpu: Some(GpuTarget {
                threads_per_block: 1024,
                shared_bytes: 48 * 1024,
                warp_size: 32,
                tensor_cores: MMA_M16N8K16,
            }),
            ..Target::cpu(0, 0, 1)
        }
    }

    const LIMITS: LaunchLimits = LaunchLimits {
        grid: [2_147_483_647, 65_535, 65_535],
        block: [1024, 1024, 64],
    };

    /// Small integers (exact products and sums in every type), the
    /// output unwritten (NaN).
    fn buffers(m: i64, k: i64, n: i64) -> Vec<Vec<ConstValue>> {
        let fill = |len: i64, seed: i64| {
            (0..len)
                .map(|x| ConstValue::Float(((x * 7 + seed) % 9 - 4) as f64))
                .collect()
        };
        vec![
            vec![ConstValue::Float(f64::NAN); (m * n) as usize],
            fill(m * k, 1),
            fill(k * n, 5),
        ]
    }

    fn tc(use_tc: i64) -> Opt {
        Opt {
            op: OptOps::Tc,
            axis: Some(0),
            arg: OptArg::Tc(-1, 1, use_tc),
        }
    }

    /// The launch of `ast` (after `TC`), run on the simulated GPU, stores
    /// what the plain kernel stores.
    fn check(ast: &Arc<UOp>, tc_ast: &Arc<UOp>, (m, k, n): (i64, i64, i64)) {
        let mut want = buffers(m, k, n);
        run_kernel_exact(ast, &mut want).expect("plain kernel");
        let (g, launch) = map_gpu_dims(tc_ast, &LIMITS).expect("mapped");
        let mut got = buffers(m, k, n);
        run_launch_exact(&g, &mut got, &launch).expect("tensor-core launch");
        assert_eq!(got[0], want[0]);
    }

    #[test]
    fn tensor_core_products_equal_the_plain_reduce() {
        let cases = [
            (DType::F16, (16, 16, 8), false),
            (DType::F16, (32, 32, 16), true),
            (DType::BF16, (48, 16, 24), false),
        ];
        for (dt, (m, k, n), cast_first) in cases {
            let ast = half_matmul(dt, m, k, n, cast_first);
            for use_tc in [1, 2] {
                let mut kernel = OptKernel::new(&ast, gpu());
                apply_opt(&mut kernel, &tc(use_tc)).expect("TC applies");
                let wmmas = kernel
                    .ast
                    .toposort()
                    .iter()
                    .filter(|n| n.op() == Op::Wmma)
                    .count();
                assert_eq!(wmmas > 0, use_tc == 1, "{dt} {m}×{k}×{n}");
                check(&ast, &kernel.ast, (m, k, n));
            }
        }
    }

    #[test]
    fn the_gpu_heuristics_keep_the_products_after_tensor_cores() {
        let ast = half_matmul(DType::F16, 64, 16, 64, false);
        let mut kernel = OptKernel::new(&ast, gpu());
        crate::opt::gpu_heuristic::gpu_optimizations(&mut kernel);
        assert_eq!(kernel.applied.first().map(|o| o.op), Some(OptOps::Tc));
        assert!(kernel.applied.len() > 1, "{:?}", kernel.applied);
        check(&ast, &kernel.ast, (64, 16, 64));
    }

    #[test]
    fn tensor_cores_refuse_what_they_cannot_compute() {
        let refused = |ast: &Arc<UOp>, target: Target, why: &str| {
            let mut kernel = OptKernel::new(ast, target);
            let e = apply_opt(&mut kernel, &tc(1)).expect_err("refused");
            assert!(e.contains(why), "{e}");
            assert!(Arc::ptr_eq(&kernel.ast, ast), "unchanged");
        };
        let half = half_matmul(DType::F16, 32, 32, 16, false);
        refused(&half, Target::cpu(32, 0, 1), "no tensor cores");
        let doubles = half_matmul(DType::F64, 32, 32, 16, true);
        refused(&doubles, gpu(), "no tensor-core shape");
        refused(
            &half_matmul(DType::F16, 8, 32, 8, false),
            gpu(),
            "no output axes",
        );
        refused(
            &half_matmul(DType::F16, 32, 8, 16, false),
            gpu(),
            "divisible by 16",
        );
        let mut after = OptKernel::new(&half, gpu());
        apply_opt(&mut after, &Opt::new(OptOps::Local, 0, 2)).expect("LOCAL");
        after.applied.push(Opt::new(OptOps::Local, 0, 2));
        let e = apply_opt(&mut after, &tc(1)).expect_err("refused");
        assert!(e.contains("first opt"), "{e}");
    }
}
