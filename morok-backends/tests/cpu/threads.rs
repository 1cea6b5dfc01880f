//! Threads planned by the optimizer: the device's thread count
//! (`CpuConfig::threads`, `MOROK_THREADS`) caps the heuristic's `THREAD`
//! axis, small kernels get none, and every thread count stores the same
//! bits as one thread.

use super::common::*;
use super::reduce::{matmul_ast, matmul_ref};
use morok_core::device::Device;
use morok_core::dtype::DType;
use morok_core::program::Program;
use morok_core::uop::{AxisType, Op, UOp};
use morok_core::CompileOptions;
use morok_core::MIN_WORK_PER_THREAD;
use std::sync::Arc;

/// The heuristic program for `ast` on `dev`.
fn program(dev: &morok_backends::CpuDevice, ast: &Arc<UOp>) -> Program {
    morok_backends::compile_program(ast, dev, &CompileOptions::default()).expect("pipeline")
}

/// The sizes of the `THREAD` ranges of an optimized kernel.
fn thread_axes(p: &Program) -> Vec<i64> {
    p.ast
        .toposort()
        .iter()
        .filter(|n| n.op() == Op::Range && n.axis_type() == Some(AxisType::Thread))
        .filter_map(|n| n.range_size())
        .collect()
}

/// Compiles and runs `ast` on a device with `threads` workers; returns
/// the stored values and the program.
fn run_with(
    threads: usize,
    ast: &Arc<UOp>,
    out: usize,
    inputs: &[Vec<f32>],
) -> (Vec<f32>, Program) {
    let (dev, _dir) = device(threads);
    let p = program(&dev, ast);
    let k = dev.compile(&p).expect("compile");
    let mut args = vec![Arg::zeros(DType::F32, out)];
    args.extend(inputs.iter().map(|v| Arg::new(DType::F32, v)));
    run(&dev, &k, &mut args);
    (args[0].get::<f32>(), p)
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 250.0 - 2.0
        })
        .collect()
}

/// `out[i, j] = x[i, j] * 3 + 1` over a `[rows, cols]` kernel.
fn scale_2d(rows: i64, cols: i64) -> Arc<UOp> {
    scale_rows(&UOp::index(rows), cols)
}

/// `out[i, j] = x[i, j] * 3 + 1` over `[rows, cols]`, `rows` any index
/// value (a constant or a variable).
fn scale_rows(rows: &Arc<UOp>, cols: i64) -> Arc<UOp> {
    let i = UOp::range(rows, 0, AxisType::Loop);
    let j = range(cols, 1, AxisType::Loop);
    let idx = i.mul(&UOp::index(cols)).add(&j);
    let three = UOp::const_f64(DType::F32, 3.0);
    let v = load(1, DType::F32, &idx)
        .mul(&three)
        .add(&UOp::one(DType::F32));
    store_kernel(0, &idx, &v, &[i, j])
}

#[test]
fn the_device_thread_count_caps_the_thread_axis_and_results_stay_equal() {
    // Two rows: splitting the outer loop alone could use two threads; the
    // THREAD axis goes on the column axis and uses four.
    let (rows, cols) = (2i64, 65536i64);
    let n = (rows * cols) as usize;
    let x = data(n, 7);
    let want: Vec<f32> = x.iter().map(|v| v * 3.0 + 1.0).collect();
    let ast = scale_2d(rows, cols);
    let (one, p1) = run_with(1, &ast, n, std::slice::from_ref(&x));
    assert!(thread_axes(&p1).is_empty(), "one thread: no THREAD axis");
    assert_eq!(
        p1.launch.parallel,
        Some(2),
        "the outer loop stays splittable"
    );
    let (four, p4) = run_with(4, &ast, n, std::slice::from_ref(&x));
    assert_eq!(thread_axes(&p4), vec![4], "{}", p4.source);
    assert_eq!(p4.launch.parallel, Some(4));
    assert_eq!(one, want);
    assert_eq!(four, want);
    // The work bound: 131072 iterations allow at most 4 threads.
    let (eight, p8) = run_with(8, &ast, n, std::slice::from_ref(&x));
    assert_eq!(
        thread_axes(&p8),
        vec![(rows * cols / MIN_WORK_PER_THREAD as i64).min(8)]
    );
    assert_eq!(eight, want);
}

#[test]
fn small_kernels_get_no_thread_axis() {
    let (rows, cols) = (16i64, 1024i64);
    assert!(rows * cols < 2 * MIN_WORK_PER_THREAD as i64);
    let n = (rows * cols) as usize;
    let x = data(n, 3);
    let (got, p) = run_with(4, &scale_2d(rows, cols), n, std::slice::from_ref(&x));
    assert!(thread_axes(&p).is_empty(), "{}", p.source);
    let want: Vec<f32> = x.iter().map(|v| v * 3.0 + 1.0).collect();
    assert_eq!(got, want);
}

#[test]
fn matmul_threads_split_an_output_axis_and_match_one_thread_bit_for_bit() {
    let (m, k, n) = (96usize, 64usize, 48usize);
    let ast = matmul_ast(m as i64, k as i64, n as i64);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let inputs = [a.clone(), b.clone()];
    let (one, p1) = run_with(1, &ast, m * n, &inputs);
    let (three, p3) = run_with(3, &ast, m * n, &inputs);
    assert!(thread_axes(&p1).is_empty());
    assert_eq!(thread_axes(&p3), vec![3], "{}", p3.source);
    // The THREAD range is an output range: no REDUCE runs over it.
    let reduced_over_thread = p3.ast.toposort().iter().any(|n| {
        n.op() == Op::Reduce
            && n.src()[1..]
                .iter()
                .any(|r| r.axis_type() == Some(AxisType::Thread))
    });
    assert!(!reduced_over_thread);
    assert_eq!(one, three, "threads change no bit");
    let want = matmul_ref(&a, &b, m, k, n);
    for (g, w) in one.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
    }
}

/// `out[i, j] = x[i, j] * 3 + 1` over `[B, cols]` with `B` a kernel
/// variable (`DEFINE_VAR` in `1..=max_rows`).
fn scale_var_rows(max_rows: i64, cols: i64) -> Arc<UOp> {
    scale_rows(&UOp::define_var("B", DType::INDEX, 1, max_rows), cols)
}

#[test]
fn a_loop_bounded_by_a_variable_is_split_at_launch_from_its_value() {
    let cols = 1024i64;
    let ast = scale_var_rows(4096, cols);
    let (dev, _dir) = device(4);
    let p = program(&dev, &ast);
    let pv = p.launch.parallel_var.expect("the B loop is parallel");
    assert_eq!((pv.var, pv.scale), (0, 1), "{}", p.source);
    let k = dev.compile(&p).expect("compile");
    // Small values run on one thread; 300 rows (300 * 1024 iterations)
    // run on four, each on its own rows.
    for rows in [1usize, 3, 31, 300] {
        let n = rows * cols as usize;
        let x = data(n, rows as u32);
        let out = dev.allocate(DType::F32, n).expect("alloc");
        let mut inp = dev.allocate(DType::F32, n).expect("alloc");
        inp.copy_in(&to_bytes(&x)).expect("copy in");
        k.run(&[out.as_ref(), inp.as_ref()], &[rows as i64])
            .unwrap_or_else(|e| panic!("run failed: {e}\n{}", k.source()));
        let mut bytes = vec![0u8; n * 4];
        out.copy_out(&mut bytes).expect("copy out");
        let want: Vec<f32> = x.iter().map(|v| v * 3.0 + 1.0).collect();
        assert_eq!(from_bytes::<f32>(&bytes), want, "B = {rows}");
    }
}
