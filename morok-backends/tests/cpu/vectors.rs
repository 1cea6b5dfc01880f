//! Explicit vector types: kernels whose upcast lanes lowering turns into
//! vector loads, stores, ALU ops and accumulators (or gathers them where
//! the lanes are not consecutive), rendered with C vector types, compiled
//! and run on random data. Each must store exactly the bytes the
//! unoptimized scalar kernel stores, on sizes that are prime or not a
//! multiple of the vector width.

use super::common::*;
use super::reduce::{matmul_ast, optimized_matmul_ref};
use morok_backends::host::host_vector_bytes;
use morok_core::device::Device;
use morok_core::dtype::DType;
use morok_core::uop::{AxisType, ConstValue, Op, ReduceOp, UOp};
use morok_core::{apply_opts, Opt, OptOps::*};
use morok_core::{lower, LowerOptions};
use std::sync::Arc;

/// Deterministic pseudo-random values in [-4, 4) (a 64-bit LCG).
fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 40) as f64 / (1u64 << 24) as f64 * 8.0 - 4.0
        })
        .collect()
}

/// An input buffer of `n` random elements of `dtype` (f32, f64 or i32).
fn input(dtype: DType, n: usize, seed: u64) -> Arg {
    let v = random(n, seed);
    match dtype {
        DType::F64 => Arg::new(dtype, &v),
        DType::I32 => Arg::new(
            dtype,
            &v.iter().map(|x| (x * 1e8) as i32).collect::<Vec<_>>(),
        ),
        _ => Arg::new(dtype, &v.iter().map(|x| *x as f32).collect::<Vec<_>>()),
    }
}

/// `ast` with `opts` applied under the host CPU's limits and vector width.
fn optimized_for_host(ast: &Arc<UOp>, opts: &[Opt]) -> Arc<UOp> {
    let limits = super::common::scalar_host().with_vector_bytes(host_vector_bytes());
    apply_opts(ast, opts, &limits).unwrap_or_else(|e| panic!("{e}"))
}

/// Lowers `ast` for the C device's capabilities (host vectors, no FMA),
/// runs it on copies of `args` and returns the output bytes and source.
fn run_lowered(dev: &morok_backends::CpuDevice, ast: &Arc<UOp>, args: &[Arg]) -> (Vec<u8>, String) {
    run_lowered_with(dev, ast, &LowerOptions::new(dev.renderer().caps()), args)
}

/// Applies `opts` to `ast` and checks the result stores the unoptimized
/// kernel's bytes; returns the optimized kernel's C source. With the
/// `llvm` feature, the optimized kernel built by the LLVM codegen (its
/// vectors as LLVM vector types) must store the same bytes too.
fn same_as_scalar(ast: &Arc<UOp>, args: &[Arg], opts: &[Opt]) -> String {
    let (dev, _dir) = c_device();
    let (want, _) = run_lowered(&dev, ast, args);
    same_bytes_as(ast, args, opts, &want)
}

/// The C device with a private cache (these tests read C source).
fn c_device() -> (morok_backends::CpuDevice, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    (c_device_in(&dir.path().join("cache"), 2), dir)
}

/// The f32 vector width the host's registers hold.
fn f32_lanes() -> usize {
    usize::from(host_vector_bytes() / 4)
}

/// out[i, j] = f(x1[i, j], x2[i, j], ...) over a `rows × cols` grid.
fn grid(rows: i64, cols: i64, inputs: &[DType], f: impl Fn(&[Arc<UOp>]) -> Arc<UOp>) -> Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let idx = i.mul(&UOp::index(cols)).add(&j);
    let vals: Vec<Arc<UOp>> = inputs
        .iter()
        .enumerate()
        .map(|(k, d)| load(k as i64 + 1, *d, &idx))
        .collect();
    store_kernel(0, &idx, &f(&vals), &[i, j])
}

/// The arguments of a grid kernel: output, then random inputs.
fn grid_args(out: DType, n: usize, inputs: &[DType]) -> Vec<Arg> {
    let mut args = vec![Arg::zeros(out, n)];
    args.extend(
        inputs
            .iter()
            .enumerate()
            .map(|(k, d)| input(*d, n, k as u64 + 1)),
    );
    args
}

#[test]
fn elementwise_lanes_become_vector_ops() {
    let relu = |v: &[Arc<UOp>]| {
        v[0].mul(&v[1])
            .add(&v[2])
            .bin(Op::Max, &UOp::zero(DType::F32))
    };
    let f = [DType::F32; 3];
    let w = f32_lanes() as i64;
    // (rows, cols, upcast): a whole vector, a width that only 4 and 2
    // divide (so narrower vectors), prime rows.
    for (rows, cols, up) in [(7, 3 * w, w), (13, 12, 12), (5, 6, 6), (11, 2 * w, 2 * w)] {
        let ast = grid(rows, cols, &f, relu);
        let args = grid_args(DType::F32, (rows * cols) as usize, &f);
        let src = same_as_scalar(&ast, &args, &[Opt::new(Upcast, 1, up)]);
        assert!(src.contains("_load(") && src.contains("_store("), "{src}");
    }
}

#[test]
fn f64_and_int_lanes_stay_exact() {
    let ast = grid(9, 8, &[DType::F64; 2], |v| {
        v[0].bin(Op::Fdiv, &v[1]).sub(&v[0].un(Op::Neg))
    });
    let src = same_as_scalar(
        &ast,
        &grid_args(DType::F64, 72, &[DType::F64; 2]),
        &[Opt::new(Upcast, 1, 8)],
    );
    assert!(src.contains("morok_f64x"), "{src}");
    // wrapping multiply, truncating division by values that include 0
    let ast = grid(3, 16, &[DType::I32; 2], |v| {
        v[0].mul(&v[1]).bin(
            Op::Idiv,
            &v[1].bin(Op::Mod, &UOp::const_(DType::I32, ConstValue::Int(7))),
        )
    });
    let src = same_as_scalar(
        &ast,
        &grid_args(DType::I32, 48, &[DType::I32; 2]),
        &[Opt::new(Upcast, 1, 16)],
    );
    assert!(src.contains("morok_i32x"), "{src}");
}

#[test]
fn strided_lanes_are_gathered_and_casts_and_selects_work() {
    // out[i, j] = (i < 3 ? a[j, i] : -a[j, i]) + float(j): the load of the
    // transposed input steps by `rows` along the lanes (a gather), the
    // condition is shared by the lanes, the cast is of index arithmetic.
    let (rows, cols) = (5i64, 24i64);
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let a = load(1, DType::F32, &j.mul(&UOp::index(rows)).add(&i));
    let cond = i.bin(Op::CmpLt, &UOp::index(3));
    let v = cond.where_(&a, &a.un(Op::Neg)).add(&j.cast(DType::F32));
    let idx = i.mul(&UOp::index(cols)).add(&j);
    let ast = store_kernel(0, &idx, &v, &[i, j]);
    let args = vec![Arg::zeros(DType::F32, 120), input(DType::F32, 120, 3)];
    let src = same_as_scalar(&ast, &args, &[Opt::new(Upcast, 1, 8)]);
    assert!(
        src.contains("_store("),
        "a vector store of gathered lanes:\n{src}"
    );
}

#[test]
fn per_lane_masks_compare_select_and_shift() {
    // Conditions that vary across the lanes (vector masks): compares of
    // floats (NaN-free random data) and ints, logic on the masks, casts
    // of masks, selects per lane, shifts by per-lane amounts.
    let w = f32_lanes() as i64;
    let f = [DType::F32; 2];
    let ast = grid(5, 2 * w, &f, |v| {
        let zero = UOp::zero(DType::F32);
        let lt = v[0].bin(Op::CmpLt, &v[1]);
        let keep = lt.bin(Op::And, &v[0].bin(Op::CmpNe, &zero).un(Op::Not));
        let sel = keep.where_(&v[0], &v[1].mul(&v[1]));
        sel.add(&v[0].bin(Op::CmpLe, &v[1]).cast(DType::F32))
    });
    same_as_scalar(
        &ast,
        &grid_args(DType::F32, (10 * w) as usize, &f),
        &[Opt::new(Upcast, 1, w)],
    );
    let i = [DType::I32; 2];
    let ast = grid(3, 2 * w, &i, |v| {
        let seven = UOp::const_(DType::I32, ConstValue::Int(7));
        let lt = v[0]
            .bin(Op::CmpLt, &v[1])
            .bin(Op::Xor, &v[1].bin(Op::CmpEq, &seven));
        let shl = v[0].bin(Op::Shl, &v[1].bin(Op::And, &seven));
        let shr = v[1].bin(Op::Shr, &v[0]);
        lt.where_(&shl, &shr)
            .sub(&v[0].bin(Op::CmpNe, &v[1]).cast(DType::I32))
    });
    same_as_scalar(
        &ast,
        &grid_args(DType::I32, (6 * w) as usize, &i),
        &[Opt::new(Upcast, 1, w)],
    );
}

#[test]
fn lanes_gated_by_padding_stay_scalar() {
    // out[i, j] = j + 2 < 13 ? x[i*13 + j + 2] : 0 over 16 columns: the
    // gate differs between lanes, so the store keeps scalar lanes (no
    // vector store: per-lane gathers measured slower than scalar lanes).
    let (rows, cols) = (3i64, 16i64);
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let shifted = j.add(&UOp::index(2));
    let gate = shifted.bin(Op::CmpLt, &UOp::index(13));
    let x = UOp::define_global(1, DType::F32)
        .index_into(&i.mul(&UOp::index(13)).add(&shifted), Some(&gate))
        .load();
    let idx = i.mul(&UOp::index(cols)).add(&j);
    let ast = store_kernel(0, &idx, &x.mul(&x), &[i, j]);
    let args = vec![Arg::zeros(DType::F32, 48), input(DType::F32, 39, 4)];
    let src = same_as_scalar(&ast, &args, &[Opt::new(Upcast, 1, 16)]);
    assert!(!src.contains("_store("), "{src}");
}

#[test]
fn vector_accumulators_reduce_like_scalar_ones() {
    // column max and column sum with NaNs among the values: vector
    // accumulators, one lane per column, in the scalar order.
    for op in [ReduceOp::Max, ReduceOp::Add] {
        let (rows, cols) = (31i64, 24i64);
        let j = range(cols, 0, AxisType::Loop);
        let r = range(rows, 1, AxisType::Reduce);
        let x = load(1, DType::F32, &r.mul(&UOp::index(cols)).add(&j));
        let v = x.reduce(op, std::slice::from_ref(&r));
        let ast = store_kernel(0, &j, &v, std::slice::from_ref(&j));
        let mut data: Vec<f32> = random(744, 9).iter().map(|x| *x as f32).collect();
        data[5] = f32::NAN;
        data[24 * 30 + 17] = f32::NAN;
        let args = vec![Arg::zeros(DType::F32, 24), Arg::new(DType::F32, &data)];
        let src = same_as_scalar(
            &ast,
            &args,
            &[Opt::new(Upcast, 0, 8), Opt::new(Unroll, 0, 0)],
        );
        // 8 lanes: one accumulator of 8, or two of 4 on 16-byte vectors
        let acc = format!("morok_f32x{} acc0", f32_lanes().min(8));
        assert!(src.contains(&acc), "a vector accumulator:\n{src}");
    }
}

#[test]
fn matmul_tiles_with_prime_reduce_and_fma() {
    let (m, k, n) = (6usize, 31usize, 24usize);
    let ast = matmul_ast(m as i64, k as i64, n as i64);
    // The whole row of 24 where upcasts may span it (32-byte vectors and
    // wider); half of it where they stop at 16 lanes (16-byte vectors).
    let limits = super::common::scalar_host().with_vector_bytes(host_vector_bytes());
    let whole_row = if limits.max_upcast >= 24 { 24 } else { 12 };
    let args = vec![
        Arg::zeros(DType::F32, m * n),
        input(DType::F32, m * k, 1),
        input(DType::F32, k * n, 2),
    ];
    for opts in [
        &[
            Opt::new(Upcast, 1, 8),
            Opt::new(Upcast, 0, 3),
            Opt::new(Unroll, 0, 0),
        ][..],
        &[Opt::new(Upcast, 1, whole_row), Opt::new(Upcast, 0, 2)],
        &[Opt::new(Upcast, 0, 6), Opt::new(Upcast, 0, 4)],
    ] {
        same_as_scalar(&ast, &args, opts);
    }
    // the heuristics' tile, with fused multiply-adds where the host has
    // them: equal to the reference of that rounding (k ascending, one
    // rounding per step with FMA, two without)
    let (m, k, n) = (24usize, 19usize, 64usize);
    let (a, b) = (input(DType::F32, m * k, 3), input(DType::F32, k * n, 4));
    let (dev, _dir) = c_device();
    let mut args = [Arg::zeros(DType::F32, m * n), a, b];
    let kernel = exec(&dev, &matmul_ast(m as i64, k as i64, n as i64), &mut args);
    let want = optimized_matmul_ref(&args[1].get(), &args[2].get(), m, k, n);
    assert_eq!(args[0].get::<f32>(), want, "{}", kernel.source());
    let fma = morok_backends::host::host_has_fma();
    assert_eq!(
        kernel.source().contains("fmaf("),
        fma,
        "FMAs exactly where the host has them:\n{}",
        kernel.source()
    );
    #[cfg(feature = "llvm")]
    {
        // the same tile on the LLVM codegen: vector FMAs where the host
        // has them, same bytes
        let dir = tempfile::tempdir().expect("temp dir");
        let llvm = llvm_device_in(&dir.path().join("cache"), 2);
        let mut out = [
            Arg::zeros(DType::F32, m * n),
            args[1].clone(),
            args[2].clone(),
        ];
        let kernel = exec(&llvm, &matmul_ast(m as i64, k as i64, n as i64), &mut out);
        assert_eq!(out[0].get::<f32>(), want, "{}", kernel.source());
        assert_eq!(
            kernel.source().contains("@llvm.fma.v"),
            fma,
            "vector FMAs exactly where the host has them:\n{}",
            kernel.source()
        );
    }
}

#[test]
fn whole_tile_rows_keep_their_shared_loads_in_registers() {
    // A 24-column matmul under the heuristics: on AVX-512 16 does not
    // divide the row, so the tile takes the whole row (a vector of 16
    // and one of 8) instead of 8-lane vectors; wherever FMAs are native,
    // each loaded row vector feeds one FMA per tile row and is rendered
    // pinned to a register (a no-op without AVX). The bytes equal the
    // reference of the host's rounding (fused where it has FMA).
    let (m, k, n) = (64usize, 19usize, 24usize);
    let (dev, _dir) = c_device();
    let mut args = [
        Arg::zeros(DType::F32, m * n),
        input(DType::F32, m * k, 5),
        input(DType::F32, k * n, 6),
    ];
    let kernel = exec(&dev, &matmul_ast(m as i64, k as i64, n as i64), &mut args);
    let src = kernel.source();
    let want = optimized_matmul_ref(&args[1].get(), &args[2].get(), m, k, n);
    assert_eq!(args[0].get::<f32>(), want, "{src}");
    if host_vector_bytes() == 64 {
        for part in ["morok_f32x16_load(&data2", "morok_f32x8_load(&data2"] {
            assert!(src.contains(part), "{part} in a whole-row tile:\n{src}");
        }
    }
    if morok_backends::host::host_has_fma() {
        // Every load of the row feeds one FMA per tile row: all are pinned
        // (2 on AVX-512's whole-row tile, 1 vector of 8 on AVX2).
        let loads: Vec<&str> = src.lines().filter(|l| l.contains("_load(&data2")).collect();
        let pinned = loads
            .iter()
            .filter(|l| l.contains("MOROK_IN_REGISTER("))
            .count();
        let least = if host_vector_bytes() == 64 { 2 } else { 1 };
        assert!(
            pinned == loads.len() && pinned >= least,
            "the row's loads kept in registers:\n{src}"
        );
    }
}

/// Lowers `ast` with `opts` applied for the C device once with its
/// vectors and once without any, runs both and checks they store the same
/// bytes; returns the vector kernel's C source. With the `llvm` feature
/// the LLVM codegen's vector kernel must store those bytes too.
fn same_with_and_without_vectors(ast: &Arc<UOp>, args: &[Arg], opts: &[Opt]) -> String {
    let (dev, _dir) = c_device();
    let optimized = optimized_for_host(ast, opts);
    let scalar = LowerOptions::new(dev.renderer().caps().with_vector_bytes(0));
    let (want, _) = run_lowered_with(&dev, &optimized, &scalar, args);
    same_bytes_as(ast, args, opts, &want)
}

/// Row sums of `x` (`rows` rows of `len`) in the order lowering gives
/// `PARTIALS(amt)` on `w`-lane vectors: partial `u` adds the elements
/// `u, u + amt, …` of its row in order; the `amt / w` vectors of `w`
/// partials are added pairwise, neighbours first; then the lanes of the
/// vector left are halved (low half + high half) down to one.
fn partial_row_sums<T: Copy + Default + std::ops::Add<Output = T>>(
    x: &[T],
    len: usize,
    amt: usize,
    w: usize,
) -> Vec<T> {
    x.chunks(len)
        .map(|row| {
            let mut partials = vec![T::default(); amt];
            for (i, v) in row.iter().enumerate() {
                partials[i % amt] = partials[i % amt] + *v;
            }
            let mut vectors: Vec<Vec<T>> = partials.chunks(w).map(<[T]>::to_vec).collect();
            while vectors.len() > 1 {
                vectors = vectors
                    .chunks(2)
                    .map(|p| match p {
                        [a, b] => a.iter().zip(b).map(|(x, y)| *x + *y).collect(),
                        _ => p[0].clone(),
                    })
                    .collect();
            }
            let mut v = vectors.swap_remove(0);
            while v.len() > 1 {
                let (lo, hi) = v.split_at(v.len() / 2);
                v = lo.iter().zip(hi).map(|(x, y)| *x + *y).collect();
            }
            v[0]
        })
        .collect()
}

#[test]
fn partial_accumulators_are_vectors_combined_by_halving() {
    // out[i] = ⊕_r x[i·len + r] with PARTIALS: the partial accumulators
    // are vectors of the host's lanes (several when amt is wider),
    // combined after the loop by vector ops and a halving of the lanes.
    // Max and min do not depend on the order: the bytes of the scalar
    // partials. Sums: exactly the bytes of that order (`partial_row_sums`).
    let lanes = |d: DType| usize::from(host_vector_bytes()) / d.itemsize();
    let cases = [
        (DType::F32, ReduceOp::Add, 5i64, 16 * 67i64, 16i64),
        (DType::F32, ReduceOp::Add, 3, 32 * 11, 32),
        (DType::F32, ReduceOp::Add, 4, 4 * 37, 4),
        (DType::F32, ReduceOp::Max, 3, 16 * 67, 16),
        (DType::F32, ReduceOp::Min, 3, 8 * 37, 8),
        (DType::F32, ReduceOp::Add, 7, 8 * 37, 8),
        (DType::F64, ReduceOp::Add, 3, 16 * 19, 16),
        (DType::F64, ReduceOp::Add, 2, 2 * 19, 2),
        (DType::F64, ReduceOp::Max, 2, 4 * 19, 4),
    ];
    for (dtype, op, rows, len, amt) in cases {
        let i = range(rows, 0, AxisType::Loop);
        let r = range(len, 1, AxisType::Reduce);
        let x = load(1, dtype, &i.mul(&UOp::index(len)).add(&r));
        let v = x.reduce(op, std::slice::from_ref(&r));
        let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
        let n = (rows * len) as usize;
        let mut data: Vec<f64> = random(n, 11);
        if rows > 2 {
            // NaN in row 1, +inf and -inf in row 2
            data[(len + 3) as usize] = f64::NAN;
            data[2 * len as usize] = f64::INFINITY;
            data[(2 * len + 9) as usize] = f64::NEG_INFINITY;
        }
        let data = match dtype {
            DType::F64 => Arg::new(dtype, &data),
            _ => Arg::new(dtype, &data.iter().map(|x| *x as f32).collect::<Vec<_>>()),
        };
        let args = [Arg::zeros(dtype, rows as usize), data];
        let opts = [Opt::new(Partials, 0, amt)];
        let w = lanes(dtype).min(amt as usize).max(1);
        let src = if op == ReduceOp::Add {
            let (len, amt) = (len as usize, amt as usize);
            let want = match dtype {
                DType::F64 => {
                    Arg::new(dtype, &partial_row_sums(&args[1].get::<f64>(), len, amt, w))
                }
                _ => Arg::new(dtype, &partial_row_sums(&args[1].get::<f32>(), len, amt, w)),
            };
            same_bytes_as(&ast, &args, &opts, &want.bytes)
        } else {
            same_with_and_without_vectors(&ast, &args, &opts)
        };
        let name = if dtype == DType::F64 { "f64" } else { "f32" };
        if w > 1 {
            assert!(
                src.contains(&format!("morok_{name}x{w} acc")),
                "{dtype} {op:?}: a vector accumulator of {w} lanes:\n{src}"
            );
        }
        if w > 2 {
            let half = format!("morok_{name}x{}){{", w / 2);
            assert!(
                src.contains(&half),
                "{dtype} {op:?}: halves of {w} lanes:\n{src}"
            );
        }
    }
}

/// Applies `opts` to `ast`, runs it on the C device and checks it stores
/// `want`; returns the C source. With the `llvm` feature, the kernel built
/// by the LLVM codegen (its vectors as LLVM vector types) must store
/// `want` too, with vector loads or stores where the C source has them.
fn same_bytes_as(ast: &Arc<UOp>, args: &[Arg], opts: &[Opt], want: &[u8]) -> String {
    let (dev, _dir) = c_device();
    let optimized = optimized_for_host(ast, opts);
    let (got, src) = run_lowered(&dev, &optimized, args);
    assert_eq!(got, want, "opts {opts:?}:\n{src}");
    #[cfg(feature = "llvm")]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let llvm = llvm_device_in(&dir.path().join("cache"), 2);
        let (got, ir) = run_lowered(&llvm, &optimized, args);
        assert_eq!(got, want, "LLVM, opts {opts:?}:\n{ir}");
        assert_eq!(
            ir.contains("load <") || ir.contains("store <"),
            src.contains("_load(") || src.contains("_store("),
            "LLVM vector accesses where C has them:\n{ir}\n{src}"
        );
    }
    src
}

/// `relu(a*b+c)` over a `rows × cols` grid whose output starts `offset`
/// elements into its buffer, with the columns upcast by the host's f32
/// width (vector stores at `i*cols + j*w + offset`).
fn relu_grid(rows: i64, cols: i64, offset: i64) -> Arc<UOp> {
    let i = range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let idx = i.mul(&UOp::index(cols)).add(&j);
    let v: Vec<Arc<UOp>> = (1..=3).map(|k| load(k, DType::F32, &idx)).collect();
    let ast = store_kernel(0, &idx.add(&UOp::index(offset)), &relu3(&v), &[i, j]);
    optimized_for_host(&ast, &[Opt::new(Upcast, 1, f32_lanes() as i64)])
}

/// `relu(a*b+c)` of the f32 values `v = [a, b, c]`.
fn relu3(v: &[Arc<UOp>]) -> Arc<UOp> {
    v[0].mul(&v[1])
        .add(&v[2])
        .bin(Op::Max, &UOp::zero(DType::F32))
}

/// The C source of `ast` lowered for the C device.
fn c_source(ast: &Arc<UOp>) -> String {
    let (dev, _dir) = c_device();
    let lowered = lower(ast, &LowerOptions::new(dev.renderer().caps())).expect("lower");
    dev.renderer().render(&lowered).expect("render").source
}

/// On a host whose C kernels may stream (x86-64 with at least 32-byte
/// vectors): its float32 lanes and the streaming threshold in bytes.
fn streaming_host() -> Option<(i64, i64)> {
    if host_vector_bytes() < 32 || !cfg!(target_arch = "x86_64") {
        return None;
    }
    let threshold = morok_backends::cpu::stream::stream_threshold() as i64;
    Some((f32_lanes() as i64, threshold))
}

#[test]
fn large_aligned_vector_stores_stream_and_others_do_not() {
    let Some((w, threshold)) = streaming_host() else {
        return;
    };
    // Rows enough for the output to span the threshold.
    let cols = 64 * w;
    let rows = threshold / 4 / cols + 3;
    let big = c_source(&relu_grid(rows, cols, 0));
    assert!(
        big.contains("_stream(&") && big.contains("morok_stream_fence();"),
        "{big}"
    );
    assert!(!big.contains("_store(&"), "{big}");
    // Small outputs and unaligned vectors keep ordinary stores.
    for (src, what) in [
        (c_source(&relu_grid(7, cols, 0)), "small"),
        (c_source(&relu_grid(rows, cols, 1)), "unaligned"),
    ] {
        assert!(src.contains("_store(&"), "{what}: {src}");
        assert!(
            !src.contains("_stream(") && !src.contains("fence"),
            "{what}: {src}"
        );
    }
    // The LLVM codegen takes the same decision: `!nontemporal` stores
    // (`vmovntps`) and an `sfence` only for the large aligned output.
    #[cfg(feature = "llvm")]
    for (offset, r, streams) in [(0, rows, true), (0, 7, false), (1, rows, false)] {
        use morok_backends::cpu::llvm::{emit_assembly, TargetSpec};
        use morok_backends::cpu::LlvmRenderer;
        use morok_core::render::Renderer;
        let opts = LowerOptions::new(LlvmRenderer.caps());
        let kernel = lower(&relu_grid(r, cols, offset), &opts).expect("lower");
        let ir = LlvmRenderer.render(&kernel).expect("render").source;
        let asm = emit_assembly(&kernel, &TargetSpec::host().expect("host")).expect("asm");
        let what = format!("LLVM, {r} rows, offset {offset}");
        assert_eq!(ir.contains("!nontemporal"), streams, "{what}:\n{ir}");
        assert_eq!(asm.contains("vmovntps"), streams, "{what}:\n{asm}");
        assert_eq!(asm.contains("sfence"), streams, "{what}:\n{asm}");
    }
}

#[test]
fn streaming_stores_write_the_scalar_kernels_bytes() {
    let Some((w, threshold)) = streaming_host() else {
        return;
    };
    // A prime number of rows, so the parallel split leaves each thread an
    // odd share.
    let cols = 8 * w;
    let rows = (threshold / 4 / cols + 1..)
        .find(|r| (2..*r).take_while(|d| d * d <= *r).all(|d| r % d != 0))
        .expect("prime");
    let f = [DType::F32; 3];
    let n = (rows * cols) as usize;
    let args = grid_args(DType::F32, n, &f);
    let (dev, _dir) = c_device();
    let scalar = grid(rows, cols, &f, relu3);
    let (want, _) = run_lowered(&dev, &scalar, &args);
    let (got, src) = run_lowered(&dev, &relu_grid(rows, cols, 0), &args);
    assert!(src.contains("_stream(&"), "{src}");
    assert!(
        got == want,
        "streamed output differs from the scalar kernel's"
    );
    // The LLVM codegen's streaming kernel stores the C kernel's bytes.
    #[cfg(feature = "llvm")]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let llvm = llvm_device_in(&dir.path().join("cache"), 2);
        let (from_llvm, ir) = run_lowered(&llvm, &relu_grid(rows, cols, 0), &args);
        assert!(ir.contains("!nontemporal"), "{ir}");
        assert!(
            from_llvm == got,
            "LLVM's streamed output differs from the C kernel's"
        );
    }
    // The values themselves: relu(a*b+c) in f32.
    let (a, b, c) = (
        args[1].get::<f32>(),
        args[2].get::<f32>(),
        args[3].get::<f32>(),
    );
    let out: Vec<f32> = from_bytes(&got);
    assert!((0..n).all(|k| out[k] == (a[k] * b[k] + c[k]).max(0.0)));
}
