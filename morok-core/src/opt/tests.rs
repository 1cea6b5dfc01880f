//! Every opt on small kernels, checked against the kernel-AST interpreter:
//! the optimized AST must store exactly what the original stores (range
//! splits keep the iteration and accumulation order, padding folds
//! identities), and refused opts must say why.

use super::*;
use crate::dtype::DType;
use crate::sample_kernels::{load, range};
pub(crate) use crate::sample_kernels::{matmul, run_seeded as run};
use crate::target::Target;
use crate::uop::{AxisType, Op, ReduceOp, UOp};

pub(super) fn store(idx: &Arc<UOp>, v: &Arc<UOp>) -> Arc<UOp> {
    UOp::define_global(0, v.dtype())
        .index_into(idx, None)
        .store(v)
}

/// out[i] = op_k x[i*K + k].
pub(crate) fn row_reduce(op: ReduceOp, rows: i64, k: i64) -> Arc<UOp> {
    typed_row_reduce(DType::F32, op, rows, k)
}

/// [`row_reduce`] of a `dtype` input.
pub(crate) fn typed_row_reduce(dtype: DType, op: ReduceOp, rows: i64, k: i64) -> Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let r = range(k, 1, AxisType::Reduce);
    let v = UOp::define_global(1, dtype)
        .index_into(&i.mul(&UOp::index(k)).add(&r), None)
        .load()
        .reduce(op, std::slice::from_ref(&r));
    UOp::sink(vec![store(&i, &v).end(&[i])])
}

/// out[i, j] = exp(x[i, j] - max_k x[i, k]) / sum_k exp(x[i, k] - max):
/// a reduce nested in another one's value.
pub(crate) fn softmax(rows: i64, cols: i64) -> Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let r = range(cols, 2, AxisType::Reduce);
    let x = |c: &Arc<UOp>| load(1, &i.mul(&UOp::index(cols)).add(c));
    let mx = x(&r).reduce(ReduceOp::Max, std::slice::from_ref(&r));
    let r2 = range(cols, 3, AxisType::Reduce);
    let sum = x(&r2)
        .sub(&mx)
        .un(Op::Exp)
        .reduce(ReduceOp::Add, std::slice::from_ref(&r2));
    let v = x(&j).sub(&mx).un(Op::Exp).bin(Op::Fdiv, &sum);
    UOp::sink(vec![
        store(&i.mul(&UOp::index(cols)).add(&j), &v).end(&[i, j])
    ])
}

/// out[i, j] = (x[i, j] - mean_i) · rsqrt(var_i + 1e-5) · g[j] + b[j]
/// (`x` slot 1, `g` slot 2, `b` slot 3): two reductions that read `x`
/// along the row only, an affine epilogue that reads `g` and `b` along
/// `j` only; the variance's value holds the mean.
pub(crate) fn layernorm(rows: i64, cols: i64) -> Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let x = |c: &Arc<UOp>| load(1, &i.mul(&UOp::index(cols)).add(c));
    let n = UOp::const_f64(DType::F32, cols as f64);
    let r = range(cols, 2, AxisType::Reduce);
    let mean = x(&r)
        .reduce(ReduceOp::Add, std::slice::from_ref(&r))
        .bin(Op::Fdiv, &n);
    let r2 = range(cols, 3, AxisType::Reduce);
    let d = x(&r2).sub(&mean);
    let var = d
        .mul(&d)
        .reduce(ReduceOp::Add, std::slice::from_ref(&r2))
        .bin(Op::Fdiv, &n);
    let scale = var.add(&UOp::const_f64(DType::F32, 1e-5)).un(Op::Rsqrt);
    let v = x(&j)
        .sub(&mean)
        .mul(&scale)
        .mul(&load(2, &j))
        .add(&load(3, &j));
    UOp::sink(vec![
        store(&i.mul(&UOp::index(cols)).add(&j), &v).end(&[i, j])
    ])
}

pub(crate) fn cpu() -> Target {
    Target {
        threads: 4,
        ..Target::cpu(0, 0, 2)
    }
}

/// Applies `opts` and checks the result stores exactly what `ast` does.
fn same(ast: &Arc<UOp>, sizes: &[usize], opts: &[Opt]) -> Arc<UOp> {
    let out = apply_opts(ast, opts, &cpu()).unwrap_or_else(|e| panic!("{e}"));
    crate::lower::validate::validate(&out).expect("a valid kernel AST");
    assert_eq!(run(ast, sizes), run(&out, sizes), "opts {opts:?}");
    out
}

fn refused(ast: &Arc<UOp>, opts: &[Opt], why: &str) {
    let e = apply_opts(ast, opts, &cpu())
        .expect_err("refused")
        .to_string();
    assert!(e.contains(why), "{e}");
}

fn types(ast: &Arc<UOp>) -> Vec<(AxisType, i64)> {
    OptKernel::new(ast, cpu())
        .ranges()
        .iter()
        .map(|r| {
            (
                r.axis_type().unwrap(),
                crate::kernel::range_size(r).unwrap(),
            )
        })
        .collect()
}

use OptOps::*;

#[test]
fn upcast_and_unroll_split_ranges_and_keep_results() {
    let mm = matmul(8, 12, 8);
    let sizes = [64, 96, 96];
    let out = same(
        &mm,
        &sizes,
        &[
            Opt::new(Upcast, 1, 4),
            Opt::new(Upcast, 0, 4),
            Opt::new(Unroll, 0, 4),
        ],
    );
    use AxisType as T;
    assert_eq!(
        types(&out),
        vec![
            (T::Loop, 2),
            (T::Loop, 2),
            (T::Upcast, 4),
            (T::Upcast, 4),
            (T::Reduce, 3),
            (T::Unroll, 4)
        ]
    );
    // arg 0 = the whole axis
    let out = same(&mm, &sizes, &[Opt::new(Unroll, 0, 0)]);
    assert_eq!(
        types(&out),
        vec![(T::Loop, 8), (T::Loop, 8), (T::Unroll, 12)]
    );
    same(
        &mm,
        &sizes,
        &[
            Opt::new(Upcast, 0, 2),
            Opt::new(Upcast, 0, 2),
            Opt::new(Upcast, 0, 2),
        ],
    );
}

#[test]
fn thread_is_a_top_split_placed_outermost() {
    let mm = matmul(8, 4, 6);
    let out = same(&mm, &[48, 32, 24], &[Opt::new(Thread, 1, 3)]);
    // The END lists start with the thread range.
    let end = out.s(0);
    assert_eq!(end.s(1).axis_type(), Some(AxisType::Thread));
    refused(
        &mm,
        &[Opt::new(Thread, 0, 2), Opt::new(Thread, 0, 2)],
        "only one THREAD",
    );
    refused(&mm, &[Opt::new(Thread, 0, 8)], "above the thread count");
    refused(&mm, &[Opt::new(Thread, 2, 2)], "needs a LOOP axis");
}

#[test]
fn reductions_of_every_kind_survive_every_split() {
    for op in [ReduceOp::Add, ReduceOp::Max, ReduceOp::Min, ReduceOp::Mul] {
        let k = row_reduce(op, 6, 16);
        let sizes = [6, 96];
        same(
            &k,
            &sizes,
            &[Opt::new(Unroll, 0, 4), Opt::new(Upcast, 0, 3)],
        );
        same(
            &k,
            &sizes,
            &[Opt::new(Thread, 0, 2), Opt::new(Unroll, 0, 0)],
        );
        same(&k, &sizes, &[Opt::new(Upcast, 0, 0)]);
    }
}

#[test]
fn padto_gates_accesses_and_folds_identities() {
    for op in [ReduceOp::Add, ReduceOp::Max, ReduceOp::Min] {
        // prime sizes: padding must not change sums or maxima
        let k = row_reduce(op, 7, 13);
        let sizes = [7, 91];
        same(&k, &sizes, &[Opt::new(PadTo, 1, 4)]);
        same(&k, &sizes, &[Opt::new(PadTo, 0, 4), Opt::new(Upcast, 0, 4)]);
        same(&k, &sizes, &[Opt::new(PadTo, 1, 8), Opt::new(Unroll, 0, 8)]);
    }
    let sm = softmax(5, 7);
    same(
        &sm,
        &[35, 35],
        &[Opt::new(PadTo, 1, 4), Opt::new(PadTo, 2, 4)],
    );
    let mm = matmul(5, 7, 3);
    same(
        &mm,
        &[15, 35, 21],
        &[Opt::new(PadTo, 0, 2), Opt::new(PadTo, 2, 4)],
    );
    refused(&mm, &[Opt::new(PadTo, 0, 32)], "double the work");
    refused(
        &mm,
        &[Opt::new(Upcast, 1, 3), Opt::new(PadTo, 1, 4)],
        "UPCAST, UNROLL or THREAD",
    );
    refused(
        &row_reduce(ReduceOp::Add, 8, 8),
        &[Opt::new(PadTo, 0, 4)],
        "no padding needed",
    );
}

/// `PADTO` of an output axis that every store indexes gates the stores
/// only: loads read at the index clamped to the last real row, with no
/// gate (the padded rows compute a copy nothing stores). Padding a
/// reduce axis gates its loads (they must read the identity).
#[test]
fn padto_of_an_output_axis_clamps_loads_and_gates_stores() {
    let gates = |ast: &Arc<UOp>, op: Op| -> Vec<bool> {
        ast.toposort()
            .iter()
            .filter(|n| n.op() == op && n.s(0).op() == Op::Index)
            .map(|n| n.s(0).src().len() > 2)
            .collect()
    };
    let mm = matmul(5, 7, 3);
    let sizes = [15, 35, 21];
    let rows = same(&mm, &sizes, &[Opt::new(PadTo, 0, 2)]);
    assert_eq!(gates(&rows, Op::Store), vec![true]);
    assert_eq!(gates(&rows, Op::Load), vec![false, false]);
    let clamped = rows.toposort().iter().filter(|n| n.op() == Op::Min).count();
    assert_eq!(clamped, 1, "one clamp of the row, shared by the A loads");
    // the padded rows and the tile after it keep the results
    same(
        &mm,
        &sizes,
        &[Opt::new(PadTo, 0, 2), Opt::new(Upcast, 0, 2)],
    );
    let reduce = same(&mm, &sizes, &[Opt::new(PadTo, 2, 4)]);
    assert_eq!(gates(&reduce, Op::Store), vec![false]);
    assert_eq!(gates(&reduce, Op::Load), vec![true, true]);
}

/// `PADTO` pads an axis by less than its own size: a size-16 output axis
/// is not padded to 32 (the second half of the host's two-way split of
/// the outer loop, or of a `THREAD 2` axis, would be all padding), nor a
/// size-2 axis to 4; a size-17 axis padded to 32 keeps the results alone
/// and under a `THREAD 2` split.
#[test]
fn padto_pads_by_less_than_the_axis_size() {
    let sizes = |rows: usize| [rows, rows * 13];
    let doubles = "double the work";
    refused(
        &row_reduce(ReduceOp::Add, 16, 13),
        &[Opt::new(PadTo, 0, 32)],
        doubles,
    );
    refused(
        &row_reduce(ReduceOp::Max, 2, 13),
        &[Opt::new(PadTo, 0, 4)],
        doubles,
    );
    refused(
        &row_reduce(ReduceOp::Add, 7, 16),
        &[Opt::new(PadTo, 1, 32)],
        doubles,
    );
    let k = row_reduce(ReduceOp::Add, 17, 13);
    same(&k, &sizes(17), &[Opt::new(PadTo, 0, 32)]);
    let out = same(
        &k,
        &sizes(17),
        &[Opt::new(PadTo, 0, 32), Opt::new(Thread, 0, 2)],
    );
    use AxisType as T;
    assert_eq!(
        types(&out),
        vec![(T::Loop, 16), (T::Thread, 2), (T::Reduce, 13)]
    );
}

#[test]
fn swap_reorders_output_loops() {
    let mm = matmul(4, 3, 5);
    let out = same(&mm, &[20, 12, 15], &[Opt::new(Swap, 0, 1)]);
    let end = out.s(0);
    assert_eq!(crate::kernel::range_size(end.s(1)), Some(5));
    refused(&mm, &[Opt::new(Swap, 0, 2)], "two GLOBAL or LOOP");
}

#[test]
fn nested_reduces_split_correctly() {
    let sm = softmax(4, 8);
    let sizes = [32, 32];
    same(
        &sm,
        &sizes,
        &[Opt::new(Upcast, 1, 4), Opt::new(Unroll, 0, 2)],
    );
    same(
        &sm,
        &sizes,
        &[Opt::new(Thread, 0, 2), Opt::new(Unroll, 1, 4)],
    );
}

#[test]
fn cpu_refuses_gpu_opts_and_bad_arguments() {
    let mm = matmul(8, 8, 8);
    refused(&mm, &[Opt::new(Local, 0, 2)], "no local memory");
    refused(&mm, &[Opt::new(Group, 0, 2)], "no local memory");
    refused(&mm, &[Opt::new(GroupTop, 0, 2)], "no local memory");
    let tc = Opt {
        op: Tc,
        axis: Some(0),
        arg: OptArg::Tc(0, 0, 1),
    };
    refused(&mm, &[tc], "no tensor cores");
    refused(
        &mm,
        &[Opt::new(Upcast, 0, 3)],
        "3 does not divide the axis size 8",
    );
    refused(&mm, &[Opt::new(Upcast, 5, 2)], "axis 5 does not exist");
    refused(
        &mm,
        &[Opt::new(Upcast, 2, 2)],
        "UPCAST needs a GLOBAL, LOCAL or LOOP",
    );
    refused(&mm, &[Opt::new(Unroll, 1, 2)], "axis 1 does not exist");
    refused(&mm, &[Opt::new(Upcast, 0, 1)], "above 1");
    // the sum's value holds the max, which does not use the sum's axis
    same(&softmax(4, 8), &[32, 32], &[Opt::new(Unroll, 1, 2)]);
    // error names the kernel and the opt's position
    let e = apply_opts(
        &mm,
        &[Opt::new(Upcast, 0, 2), Opt::new(Local, 0, 2)],
        &cpu(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("r_8_8") && e.to_string().contains("opt 1 Local(axis 0, 2)"),
        "{e}"
    );
    // NOLOCALS is accepted on the CPU (there are no local axes)
    same(&mm, &[64, 64, 64], &[Opt::no_locals()]);
}

#[test]
fn gpu_limits_allow_locals_and_groups() {
    let gpu = Target {
        gpu: Some(crate::target::GpuTarget {
            threads_per_block: 1024,
            shared_bytes: 1 << 15,
            warp_size: 32,
            tensor_cores: &[],
        }),
        ..Target::cpu(0, 0, 1)
    };
    let mm = matmul(8, 8, 8);
    let out = apply_opts(
        &mm,
        &[Opt::new(Local, 0, 4), Opt::new(GroupTop, 0, 2)],
        &gpu,
    )
    .unwrap();
    let ts: Vec<AxisType> = OptKernel::new(&out, gpu)
        .ranges()
        .iter()
        .filter_map(|r| r.axis_type())
        .collect();
    assert!(ts.contains(&AxisType::Local) && ts.contains(&AxisType::GroupReduce));
    let e = apply_opts(&mm, &[Opt::no_locals(), Opt::new(Local, 0, 4)], &gpu).unwrap_err();
    assert!(e.to_string().contains("NOLOCALS"));
    let e = apply_opts(&mm, &[Opt::new(Local, 0, 4), Opt::no_locals()], &gpu).unwrap_err();
    assert!(e.to_string().contains("local axes present"));
}

#[test]
fn apply_opts_is_deterministic() {
    let opts = [
        Opt::new(Upcast, 1, 4),
        Opt::new(Unroll, 0, 2),
        Opt::new(Thread, 0, 2),
    ];
    let a = apply_opts(&matmul(8, 8, 8), &opts, &cpu()).unwrap();
    let b = apply_opts(&matmul(8, 8, 8), &opts, &cpu()).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "hash-consed results are the same node");
}

/// `OptMode::Random`'s lists: valid for the target, the same for the same
/// seed, different across seeds, and the kernels they give store what the
/// original does.
#[test]
fn random_opts_are_valid_reproducible_and_keep_results() {
    let kernels = [
        (matmul(8, 8, 8), vec![8 * 8, 8 * 8, 8 * 8]),
        (row_reduce(ReduceOp::Add, 6, 10), vec![6, 60]),
        (softmax(4, 12), vec![48, 48]),
    ];
    for (ast, sizes) in &kernels {
        let lists: Vec<Vec<Opt>> = (0..24).map(|s| random_opts(ast, &cpu(), s)).collect();
        for (seed, opts) in lists.iter().enumerate() {
            assert_eq!(opts, &random_opts(ast, &cpu(), seed as u64));
            same(ast, sizes, opts);
        }
        let distinct: std::collections::HashSet<_> = lists.iter().collect();
        assert!(
            distinct.len() > 4,
            "{} distinct lists of 24",
            distinct.len()
        );
    }
}

pub(super) fn heuristics(ast: &Arc<UOp>) -> OptKernel {
    let mut k = OptKernel::new(ast, cpu());
    heuristic::hand_coded_optimizations(&mut k);
    k
}

/// The sizes of `k`'s upcast axes, smallest first.
fn upcast_sizes(k: &OptKernel) -> Vec<i64> {
    let mut s: Vec<i64> = k
        .ranges_of(&[AxisType::Upcast])
        .iter()
        .filter_map(|r| crate::kernel::range_size(r))
        .collect();
    s.sort_unstable();
    s
}

#[test]
fn heuristics_tile_a_matmul_and_keep_its_results() {
    let mm = matmul(32, 64, 32);
    let k = heuristics(&mm);
    assert_eq!(
        k.applied,
        vec![
            Opt::new(Upcast, 1, 4),
            Opt::new(Upcast, 0, 4),
            Opt::new(Unroll, 0, 4),
            // 65536 loop-nest iterations: two threads of 2^15 each
            Opt::new(Thread, 0, 2),
        ]
    );
    let sizes = [32 * 32, 32 * 64, 64 * 32];
    assert_eq!(run(&mm, &sizes), run(&k.ast, &sizes));
}

#[test]
fn heuristics_on_reductions_and_elementwise_kernels() {
    // small output: no tile; the reduce is unrolled fully when short
    let k = heuristics(&row_reduce(ReduceOp::Max, 8, 16));
    assert_eq!(
        k.applied,
        vec![Opt::new(Unroll, 0, 0), Opt::new(Upcast, 0, 4)]
    );
    assert_eq!(
        run(&row_reduce(ReduceOp::Max, 8, 16), &[8, 128]),
        run(&k.ast, &[8, 128])
    );
    // elementwise: upcast the last axis by 4
    let i = range(4096, 0, AxisType::Loop);
    let e = UOp::sink(vec![
        store(&i, &load(1, &i).mul(&load(2, &i))).end(std::slice::from_ref(&i))
    ]);
    let k = heuristics(&e);
    assert_eq!(k.applied, vec![Opt::new(Upcast, 0, 4)]);
    assert_eq!(run(&e, &[4096; 3]), run(&k.ast, &[4096; 3]));
    // softmax keeps its results
    let sm = softmax(4, 8);
    assert_eq!(run(&sm, &[32, 32]), run(&heuristics(&sm).ast, &[32, 32]));
}

#[test]
fn heuristics_size_register_tiles_and_upcasts_by_the_vector_width() {
    let with = |bytes: u16, ast: &Arc<UOp>| {
        let mut k = OptKernel::new(ast, cpu().with_vector_bytes(bytes));
        heuristic::hand_coded_optimizations(&mut k);
        k
    };
    let mm = matmul(48, 16, 64);
    // AVX-512 (16 lanes): j by 32 (two vectors), i by 8 (16 accumulators
    // + 2 rows + 1 broadcast ≤ 32 registers)
    let unroll = Opt::new(Unroll, 0, 4);
    let k = with(64, &mm);
    assert_eq!(
        k.applied,
        vec![Opt::new(Upcast, 1, 32), Opt::new(Upcast, 0, 8), unroll]
    );
    let sizes = [48 * 64, 48 * 16, 16 * 64];
    assert_eq!(run(&mm, &sizes), run(&k.ast, &sizes));
    // AVX2 (8 lanes): j by 16, i by 6 (12 + 2 + 1 ≤ 16 registers)
    let k = with(32, &mm);
    assert_eq!(
        k.applied,
        vec![Opt::new(Upcast, 1, 16), Opt::new(Upcast, 0, 6), unroll]
    );
    // 16-byte vectors: j by 8, i by 6
    let k = with(16, &mm);
    assert_eq!(
        k.applied,
        vec![Opt::new(Upcast, 1, 8), Opt::new(Upcast, 0, 6), unroll]
    );
    // AVX2 on 100 rows, which 6 does not divide: 4 rows would leave 8
    // accumulators, so the rows are padded to 102 for 6
    let mm100 = matmul(100, 16, 64);
    let k = with(32, &mm100);
    assert_eq!(
        k.applied,
        vec![
            Opt::new(Upcast, 1, 16),
            Opt::new(PadTo, 0, 6),
            Opt::new(Upcast, 0, 6),
            unroll,
            // 17 row tiles do not split in two: the threads take the
            // 4 column tiles
            Opt::new(Thread, 1, 2),
        ]
    );
    let sizes = [100 * 64, 100 * 16, 16 * 64];
    assert_eq!(run(&mm100, &sizes), run(&k.ast, &sizes));
    // ... but not where padding would add more than 1/32 of the rows
    let k = with(32, &matmul(32, 16, 64));
    assert_eq!(
        k.applied,
        vec![Opt::new(Upcast, 1, 16), Opt::new(Upcast, 0, 4), unroll]
    );
    // elementwise: one vector of the stored type per iteration
    let i = range(4096, 0, AxisType::Loop);
    let e = UOp::sink(vec![
        store(&i, &load(1, &i).mul(&load(2, &i))).end(std::slice::from_ref(&i))
    ]);
    assert_eq!(with(64, &e).applied, vec![Opt::new(Upcast, 0, 16)]);
    assert_eq!(with(32, &e).applied, vec![Opt::new(Upcast, 0, 8)]);
    assert_eq!(run(&e, &[4096; 3]), run(&with(64, &e).ast, &[4096; 3]));
}

/// A row-wise normalization with an affine epilogue (layernorm with
/// weight and bias): its reductions read nothing along the stored axis
/// `j`, so it gets no row tile (`g[j]` and `b[j]` are reused across rows
/// only in the epilogue) and no reduce unroll; `j` is upcast by two
/// vectors and each reduction gets vector partials, two vectors' worth
/// (32 `f32` lanes on AVX-512, 16 on AVX2), one where its value holds
/// a transcendental (softmax's sum of exps). (A matmul keeps its tile:
/// `heuristics_size_register_tiles_and_upcasts_by_the_vector_width`.)
#[test]
fn heuristics_give_row_normalizations_partials_and_no_row_tile() {
    let with = |bytes: u16, ast: &Arc<UOp>| {
        let mut k = OptKernel::new(ast, cpu().with_vector_bytes(bytes));
        heuristic::hand_coded_optimizations(&mut k);
        k
    };
    let ln = layernorm(8, 128);
    // the interpreter evaluates the mean and variance again for every
    // element (no reuse across loops): results are checked on 4 × 64
    let small = layernorm(4, 64);
    let sizes = [4 * 64, 4 * 64, 64, 64];
    let want = run(&small, &sizes);
    for (bytes, j, partials) in [(64, 32, 32), (32, 16, 16)] {
        let k = with(bytes, &ln);
        assert_eq!(
            k.applied,
            vec![
                Opt::new(Upcast, 1, j),
                Opt::new(Partials, 0, partials),
                Opt::new(Partials, 1, partials),
                // 8 · 128³ loop-nest iterations: 4 threads (the limit)
                Opt::new(Thread, 0, 4),
            ],
            "{bytes}-byte vectors"
        );
        let limits = cpu().with_vector_bytes(bytes);
        let out = apply_opts(&small, &k.applied, &limits).unwrap_or_else(|e| panic!("{e}"));
        for (g, w) in run(&out, &sizes).iter().zip(&want) {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
        }
    }
    // a row sum: two vectors' worth of partials where that is above 16;
    // an f64 sum on AVX-512 (8 lanes) keeps 16
    let sum = row_reduce(ReduceOp::Add, 8, 4096);
    assert_eq!(with(64, &sum).applied, vec![Opt::new(Partials, 0, 32)]);
    assert_eq!(with(32, &sum).applied, vec![Opt::new(Partials, 0, 16)]);
    let f64_sum = typed_row_reduce(DType::F64, ReduceOp::Add, 8, 4096);
    assert_eq!(with(64, &f64_sum).applied, vec![Opt::new(Partials, 0, 16)]);
    // softmax: two vectors for the max, one for the sum of exps
    let sm = softmax(8, 256);
    let partials: Vec<Opt> = with(64, &sm)
        .applied
        .into_iter()
        .filter(|o| o.op == Partials)
        .collect();
    assert_eq!(
        partials,
        vec![Opt::new(Partials, 0, 32), Opt::new(Partials, 1, 16)]
    );
}

/// out[o, y, x] = sum_{c, ky, kx} in[c, y + ky, x + kx] · w[o, c, ky, kx]:
/// a 3×3 convolution over an already padded input of `(h + 2)·(wd + 2)`
/// pixels per channel.
fn conv3x3(outs: i64, chans: i64, h: i64, wd: i64) -> Arc<UOp> {
    conv3x3_strided(outs, chans, h, wd, 1, false)
}

/// A 3×3 convolution of stride `s` with output `h × wd`; its weights laid
/// out `[outs, chans, 3, 3]`, or with the output channels innermost
/// (`w[((c·3 + ky)·3 + kx)·outs + o]`, as `morok-onnx` keeps a Conv's
/// weights) when `channels_inner`.
fn conv3x3_strided(
    outs: i64,
    chans: i64,
    h: i64,
    wd: i64,
    s: i64,
    channels_inner: bool,
) -> Arc<UOp> {
    let o = range(outs, 0, AxisType::Loop);
    let y = range(h, 1, AxisType::Loop);
    let x = range(wd, 2, AxisType::Loop);
    let c = range(chans, 3, AxisType::Reduce);
    let ky = range(3, 4, AxisType::Reduce);
    let kx = range(3, 5, AxisType::Reduce);
    let (ih, iw) = (UOp::index(s * h + 2), UOp::index(s * wd + 2));
    let (sy, sx) = (y.mul(&UOp::index(s)), x.mul(&UOp::index(s)));
    let pixel = c.mul(&ih).add(&sy.add(&ky)).mul(&iw).add(&sx.add(&kx));
    let tap = c.mul(&UOp::index(3)).add(&ky).mul(&UOp::index(3)).add(&kx);
    let weight = if channels_inner {
        tap.mul(&UOp::index(outs)).add(&o)
    } else {
        o.mul(&UOp::index(chans * 9)).add(&tap)
    };
    let v = load(1, &pixel)
        .mul(&load(2, &weight))
        .reduce(ReduceOp::Add, &[c.clone(), ky.clone(), kx.clone()]);
    let idx = o.mul(&UOp::index(h)).add(&y).mul(&UOp::index(wd)).add(&x);
    UOp::sink(vec![store(&idx, &v).end(&[o, y, x])])
}

#[test]
fn heuristics_tile_a_convolution_by_whole_rows_or_vectors_and_output_rows() {
    let upcasts = |(outs, chans, h, wd): (i64, i64, i64, i64), bytes: u16| {
        let conv = conv3x3(outs, chans, h, wd);
        let sizes = [
            (outs * h * wd) as usize,
            (chans * (h + 2) * (wd + 2)) as usize,
            (outs * chans * 9) as usize,
        ];
        let mut k = OptKernel::new(&conv, cpu().with_vector_bytes(bytes));
        heuristic::hand_coded_optimizations(&mut k);
        assert_eq!(run(&conv, &sizes), run(&k.ast, &sizes), "{:?}", k.applied);
        upcast_sizes(&k)
    };
    // AVX-512: 16 does not divide 24 columns; the whole row is a vector
    // of 16 and one of 8 (12 lanes a register, against 8 in 8-lane
    // vectors), 8 output channels: 16 accumulators + 2 loaded vectors;
    // a second output row would not fit 32 registers
    assert_eq!(upcasts((16, 2, 6, 24), 64), vec![8, 24]);
    // W6's 56-wide rows: 3 vectors of 16 and one of 8, by 4 channels
    assert_eq!(upcasts((16, 2, 2, 56), 64), vec![4, 56]);
    // 16 divides 32 columns: two vectors, 8 channels, as a matmul's tile
    assert_eq!(upcasts((16, 2, 2, 32), 64), vec![8, 32]);
    // 40 columns: 2 vectors of 16 and one of 8 (13.3 lanes a register,
    // against 8-lane vectors); 20: 16 + 4 in two registers (10 lanes,
    // against 4-lane vectors)
    assert_eq!(upcasts((16, 2, 2, 40), 64), vec![8, 40]);
    assert_eq!(upcasts((16, 2, 4, 20), 64), vec![8, 20]);
    // 68 columns would take 5 registers a row: 4-lane vectors, 8
    // channels and 2 output rows
    assert_eq!(upcasts((16, 2, 2, 68), 64), vec![2, 4, 8]);
    // AVX2: 8 divides 24 columns: 8-lane vectors by 8 channels; a second
    // row would not fit 16 registers
    assert_eq!(upcasts((16, 2, 6, 24), 32), vec![8, 8]);
}

#[test]
fn heuristics_give_a_narrow_matmul_output_independent_accumulators() {
    // `[B, 128] @ [128, 10]`: no tile (fewer than 256 outputs, 4 does not
    // divide 10), so the 10 outputs become 10 accumulator chains
    for rows in [1, 5] {
        let mm = matmul(rows, 128, 10);
        let k = heuristics(&mm);
        assert_eq!(upcast_sizes(&k), vec![10], "rows {rows}: {:?}", k.applied);
        let sizes = [(rows * 10) as usize, (rows * 128) as usize, 128 * 10];
        assert_eq!(run(&mm, &sizes), run(&k.ast, &sizes), "rows {rows}");
    }
    // Rows tiled by 4 (≥ 256 outputs): with 64-byte vectors the 10
    // outputs are a vector of 8 and 2 scalars, 4 × 3 accumulators, so they
    // are upcast too; as scalars (no vectors) 40 accumulators would not
    // fit, so only the rows are.
    for rows in [64, 1024] {
        let mm = matmul(rows, 128, 10);
        let sizes = [(rows * 10) as usize, (rows * 128) as usize, 128 * 10];
        for (bytes, want) in [(64, vec![4, 10]), (32, vec![4, 10]), (0, vec![4])] {
            let mut k = OptKernel::new(&mm, cpu().with_vector_bytes(bytes));
            heuristic::hand_coded_optimizations(&mut k);
            assert_eq!(
                upcast_sizes(&k),
                want,
                "rows {rows}, {bytes} bytes: {:?}",
                k.applied
            );
            assert_eq!(run(&mm, &sizes), run(&k.ast, &sizes), "rows {rows}");
        }
    }
    // a kernel that already has a tile keeps it
    let k = heuristics(&matmul(32, 64, 32));
    assert!(
        !k.applied.contains(&Opt::new(Upcast, 1, 0)),
        "{:?}",
        k.applied
    );
}

/// `P @ (V + bias)` per batch (attention's `P @ V` with the value
/// projection's bias fused in): the bias is read in the reduction's body
/// but not along it, so it does not decide the register tile's rows. The
/// rows are the query axis, across which `V`'s loaded vectors are
/// shared, not the batch axis, which the bias alone does not index.
#[test]
fn register_tile_rows_reuse_the_reductions_operand_not_a_bias() {
    use crate::sample_kernels::store as store_at;
    let (batch, m, kk, n) = (4, 16, 64, 32);
    let b = range(batch, 0, AxisType::Loop);
    let i = range(m, 1, AxisType::Loop);
    let j = range(n, 2, AxisType::Loop);
    let r = range(kk, 3, AxisType::Reduce);
    let p = load(
        1,
        &b.mul(&UOp::index(m * kk))
            .add(&i.mul(&UOp::index(kk)))
            .add(&r),
    );
    let v = load(
        2,
        &b.mul(&UOp::index(kk * n))
            .add(&r.mul(&UOp::index(n)))
            .add(&j),
    );
    let value = p
        .mul(&v.add(&load(3, &j)))
        .reduce(ReduceOp::Add, std::slice::from_ref(&r));
    let at = b
        .mul(&UOp::index(m * n))
        .add(&i.mul(&UOp::index(n)))
        .add(&j);
    let ast = UOp::sink(vec![store_at(0, &at, &value).end(&[b, i, j])]);
    let mut k = OptKernel::new(&ast, cpu().with_vector_bytes(64));
    heuristic::hand_coded_optimizations(&mut k);
    let upcast_axes: Vec<Option<usize>> = k
        .applied
        .iter()
        .filter(|o| o.op == Upcast)
        .map(|o| o.axis)
        .collect();
    assert_eq!(upcast_axes[..2], [Some(2), Some(1)], "{:?}", k.applied);
    let sizes = [
        (batch * m * n) as usize,
        (batch * m * kk) as usize,
        (batch * kk * n) as usize,
        n as usize,
    ];
    assert_eq!(run(&ast, &sizes), run(&k.ast, &sizes));
}

#[test]
fn heuristics_tile_short_or_strided_feature_maps_along_contiguous_weights() {
    // (outs, chans, h, wd, stride) -> the applied upcasts (axis, amount)
    let tile = |(outs, chans, h, wd, s): (i64, i64, i64, i64, i64)| {
        let conv = conv3x3_strided(outs, chans, h, wd, s, true);
        let sizes = [
            (outs * h * wd) as usize,
            (chans * (s * h + 2) * (s * wd + 2)) as usize,
            (outs * chans * 9) as usize,
        ];
        let mut k = OptKernel::new(&conv, cpu().with_vector_bytes(64));
        heuristic::hand_coded_optimizations(&mut k);
        assert_eq!(run(&conv, &sizes), run(&k.ast, &sizes), "{:?}", k.applied);
        let ups: Vec<(Option<usize>, i64)> = k
            .applied
            .iter()
            .filter(|o| o.op == Upcast)
            .map(|o| match o.arg {
                OptArg::Int(n) => (o.axis, n),
                _ => (o.axis, 0),
            })
            .collect();
        ups
    };
    // 7×7: the rows fill no 16-lane vector; two vectors of output
    // channels (axis 0) by 7 rows (14 accumulators)
    let amounts = |t: Vec<(Option<usize>, i64)>| t.iter().map(|u| u.1).collect::<Vec<_>>();
    let short = tile((64, 4, 7, 7, 1));
    assert_eq!(short[0], (Some(0), 32));
    assert_eq!(amounts(short)[..2], [32, 7]);
    // 14 wide: the same, 7 of the 14 rows
    let wider = tile((32, 2, 14, 14, 1));
    assert_eq!(wider[0], (Some(0), 32));
    assert_eq!(amounts(wider)[..2], [32, 7]);
    // 16 wide but read with stride 2: the output channels
    assert_eq!(tile((32, 2, 8, 16, 2))[0], (Some(0), 32));
    // 32 wide, read contiguously: the row stays the vector axis
    assert_eq!(tile((32, 2, 4, 32, 1))[0], (Some(2), 32));
}
