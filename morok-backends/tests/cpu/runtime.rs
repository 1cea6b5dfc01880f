//! The device around the kernels: threefry, the object cache, threading,
//! argument checking.

use super::common::*;
use super::reduce::{matmul_ast, optimized_matmul_ref};
use morok_backends::CpuDevice;
use morok_core::device::{CompiledKernel, Device, DeviceError};
use morok_core::dtype::DType;
use morok_core::threefry2x32;
use morok_core::uop::{AxisType, ConstValue, Op, UOp};
use std::sync::Arc;

#[test]
fn threefry_matches_the_reference_and_known_answer() {
    let (dev, _dir) = device(1);
    let ast = elementwise(4, &[DType::U64, DType::U64], |v| {
        v[0].bin(Op::Threefry, &v[1])
    });
    let ctr = [0u64, u64::MAX, 0x85a308d3_243f6a88, 12345];
    let key = [0u64, u64::MAX, 0x03707344_13198a2e, 0xdead_beef_0000_0001];
    let mut args = [
        Arg::zeros(DType::U64, 4),
        Arg::new(DType::U64, &ctr),
        Arg::new(DType::U64, &key),
    ];
    exec(&dev, &ast, &mut args);
    let got: Vec<u64> = args[0].get();
    assert_eq!(got[0], 0x99ba4efe_6b200159);
    let want: Vec<u64> = ctr
        .iter()
        .zip(&key)
        .map(|(c, k)| threefry2x32(*c, *k))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn disk_cache_hit_skips_the_compiler_and_corruption_is_rebuilt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let objs = dir.path().join("objs");
    // A kernel no other test compiles (constant 4242), so this process
    // has never loaded its object.
    let ast = elementwise(3, &[DType::I32], |v| {
        v[0].add(&UOp::const_(DType::I32, ConstValue::Int(4242)))
    });
    let check = |dev: &morok_backends::CpuDevice| {
        let mut args = [
            Arg::zeros(DType::I32, 3),
            Arg::new(DType::I32, &[1i32, 2, 3]),
        ];
        exec(dev, &ast, &mut args);
        assert_eq!(args[0].get::<i32>(), vec![4243, 4244, 4245]);
    };
    let first = device_in(&objs, 1);
    check(&first);
    assert_eq!(first.compiler_invocations(), 1);
    check(&first);
    assert_eq!(first.compiler_invocations(), 1, "in-memory hit");

    let second = device_in(&objs, 1);
    check(&second);
    assert_eq!(second.compiler_invocations(), 0, "disk hit");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&objs).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
    // Garbage in place of every cached object: detected and rebuilt. The
    // file is replaced (new inode) rather than truncated, as corruption by
    // another process would be: this process still maps the old object,
    // and truncating a mapped file would fault its pages.
    // (C keeps `<key>.so` in the directory, LLVM `llvm/<key>.o`.)
    for d in [objs.clone(), objs.join("llvm")] {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "so" || x == "o") {
                std::fs::remove_file(&p).unwrap();
                std::fs::write(&p, b"not an object file").unwrap();
            }
        }
    }
    let third = device_in(&objs, 1);
    check(&third);
    assert_eq!(third.compiler_invocations(), 1, "rebuilt after corruption");
    let fourth = device_in(&objs, 1);
    check(&fourth);
    assert_eq!(
        fourth.compiler_invocations(),
        0,
        "the rebuilt entry is valid"
    );
}

/// Devices in several threads building the same kernels at once into one
/// empty cache directory (as processes sharing a cache would) all get a
/// working kernel, and the entries they leave are valid.
#[test]
fn concurrent_builds_of_one_kernel_all_succeed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let objs = dir.path().join("objs");
    for round in 0..4i64 {
        // Constants no other test uses: every device builds from scratch.
        let c = 7100 + round;
        let ast = elementwise(3, &[DType::I64], |v| {
            v[0].add(&UOp::const_(DType::I64, ConstValue::Int(c)))
        });
        let barrier = std::sync::Barrier::new(6);
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    let dev = device_in(&objs, 1);
                    barrier.wait();
                    let mut args = [
                        Arg::zeros(DType::I64, 3),
                        Arg::new(DType::I64, &[1i64, 2, 3]),
                    ];
                    exec(&dev, &ast, &mut args);
                    assert_eq!(args[0].get::<i64>(), vec![c + 1, c + 2, c + 3]);
                });
            }
        });
        let later = device_in(&objs, 1);
        let mut args = [
            Arg::zeros(DType::I64, 3),
            Arg::new(DType::I64, &[0i64, 0, 0]),
        ];
        exec(&later, &ast, &mut args);
        assert_eq!(args[0].get::<i64>(), vec![c; 3]);
    }
}

#[test]
fn threading_gives_the_same_result() {
    let (m, k, n) = (64usize, 48usize, 40usize);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 13) as f32 * 0.1 - 0.6).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 7) as f32 * 0.3 - 1.0).collect();
    // the heuristics tile this matmul and accumulate with fused mul-adds
    // where the host has them
    let want = optimized_matmul_ref(&a, &b, m, k, n);
    for threads in [1, 4] {
        let (dev, _dir) = device(threads);
        let mut args = [
            Arg::zeros(DType::F32, m * n),
            Arg::new(DType::F32, &a),
            Arg::new(DType::F32, &b),
        ];
        exec(&dev, &matmul_ast(m as i64, k as i64, n as i64), &mut args);
        assert_eq!(args[0].get::<f32>(), want, "{threads} threads");
    }
}

#[test]
fn bad_arguments_are_errors_not_crashes() {
    let (dev, _dir) = device(1);
    let ast = elementwise(8, &[DType::F32], |v| v[0].add(&v[0]));
    let k = compile(&dev, &ast);
    let small = dev.allocate(DType::F32, 4).unwrap();
    let ok = dev.allocate(DType::F32, 8).unwrap();
    let wrong_type = dev.allocate(DType::I32, 8).unwrap();
    let cases: [(&[&dyn morok_core::device::DeviceBuffer], &str); 4] = [
        (&[ok.as_ref()], "1 buffers given"),
        (&[ok.as_ref(), small.as_ref()], "may access elements 0..=7"),
        (&[wrong_type.as_ref(), ok.as_ref()], "holds i32"),
        (&[ok.as_ref(), ok.as_ref()], "written and also passed"),
    ];
    for (bufs, msg) in cases {
        match k.run(bufs, &[]) {
            Err(e @ DeviceError::BadArgs { .. }) => assert!(e.to_string().contains(msg), "{e}"),
            other => panic!("expected BadArgs containing {msg:?}, got {other:?}"),
        }
    }
    let mut b = dev.allocate(DType::F32, 2).unwrap();
    assert!(b.copy_in(&[0u8; 3]).is_err());
}

/// A kernel variable `name` of dtype index declared for `1..=max`.
fn index_var(name: &str, max: i64) -> Arc<UOp> {
    UOp::new(
        Op::DefineVar,
        DType::INDEX,
        morok_core::uop::Srcs::new(),
        morok_core::Arg::Var {
            name: name.into(),
            min: 1,
            max,
        },
    )
}

#[test]
fn scalar_variables_are_passed_at_launch_and_checked() {
    // out[i] = in[i] * n for a kernel variable n in 1..=9.
    let (dev, _dir) = device(1);
    let n = index_var("n", 9);
    let ast = elementwise(3, &[DType::I32], |v| v[0].mul(&n.cast(DType::I32)));
    let k = compile(&dev, &ast);
    let out = dev.allocate(DType::I32, 3).unwrap();
    let mut inp = dev.allocate(DType::I32, 3).unwrap();
    inp.copy_in(&to_bytes(&[1i32, 2, 3])).unwrap();
    k.run(&[out.as_ref(), inp.as_ref()], &[7]).unwrap();
    let mut bytes = vec![0u8; 12];
    out.copy_out(&mut bytes).unwrap();
    assert_eq!(from_bytes::<i32>(&bytes), vec![7, 14, 21]);
    for (vars, msg) in [
        (&[][..], "0 variable values given"),
        (&[10][..], "variable n = 10 is outside 1..=9"),
    ] {
        match k.run(&[out.as_ref(), inp.as_ref()], vars) {
            Err(e @ DeviceError::BadArgs { .. }) => assert!(e.to_string().contains(msg), "{e}"),
            other => panic!("expected BadArgs containing {msg:?}, got {other:?}"),
        }
    }
}

/// `out[i] = in[i] * 2` for `i < n`, a kernel variable `n` in `1..=1000`.
fn doubling_below_n(dev: &CpuDevice) -> Arc<dyn CompiledKernel> {
    let n = index_var("n", 1000);
    let i = UOp::range(&n, 0, AxisType::Loop);
    let two = UOp::const_f64(DType::F32, 2.0);
    let ast = store_kernel(
        0,
        &i,
        &load(1, DType::F32, &i).mul(&two),
        std::slice::from_ref(&i),
    );
    compile(dev, &ast)
}

#[test]
fn variable_trip_counts_are_checked_against_the_values_given() {
    // The buffers only need n elements at a launch, whatever the
    // variable's declared maximum.
    let (dev, _dir) = device(1);
    let k = doubling_below_n(&dev);
    let out = dev.allocate(DType::F32, 3).unwrap();
    let mut inp = dev.allocate(DType::F32, 3).unwrap();
    inp.copy_in(&to_bytes(&[1.0f32, 2.0, 3.0])).unwrap();
    k.run(&[out.as_ref(), inp.as_ref()], &[3]).unwrap();
    let mut bytes = vec![0u8; 12];
    out.copy_out(&mut bytes).unwrap();
    assert_eq!(from_bytes::<f32>(&bytes), vec![2.0, 4.0, 6.0]);
    match k.run(&[out.as_ref(), inp.as_ref()], &[4]) {
        Err(e @ DeviceError::BadArgs { .. }) => {
            assert!(e.to_string().contains("may access elements 0..=3"), "{e}")
        }
        other => panic!("expected BadArgs for n = 4 on 3 elements, got {other:?}"),
    }
}

#[test]
fn large_index_expressions_use_64_bit_indices() {
    // idx = (i * 2^31) >> 31 over i < 2: the intermediate product leaves
    // the i32 range (and no rule folds the shift away), so the index type
    // must be i64 even though the kernel only touches elements 0 and 1.
    let i = range(2, 0, AxisType::Loop);
    let big = i.mul(&UOp::index(1 << 31));
    let ast = store_kernel(
        0,
        &big.bin(Op::Shr, &UOp::index(31)),
        &load(1, DType::F32, &i),
        std::slice::from_ref(&i),
    );
    let lowered = morok_core::lower(
        &ast,
        &morok_core::LowerOptions::new(morok_core::caps::Caps::all_native()),
    )
    .unwrap();
    assert_eq!(lowered.index_dtype, DType::I64);
    let (dev, _dir) = device(1);
    let k = compile_lowered(&dev, &ast, lowered);
    let mut args = [
        Arg::zeros(DType::F32, 2),
        Arg::new(DType::F32, &[1.5f32, 2.5]),
    ];
    run(&dev, &k, &mut args);
    assert_eq!(args[0].get::<f32>(), vec![1.5, 2.5]);
}

/// A store of a load of its own address disappears in lowering: a kernel
/// of only such a store compiles to one that does nothing and still takes
/// its buffer; beside another store it leaves that store's result as the
/// reference computes it.
#[test]
fn no_op_stores_disappear_and_empty_kernels_run() {
    let (dev, _dir) = device(2);
    let data: Vec<f32> = (0..8).map(|i| i as f32 * 1.5 - 3.0).collect();
    let i = range(8, 0, AxisType::Loop);
    let back = load(0, DType::F32, &i);
    let empty = store_kernel(0, &i, &back, std::slice::from_ref(&i));
    let mut args = [Arg::new(DType::F32, &data)];
    let k = exec(&dev, &empty, &mut args);
    assert_eq!(args[0].get::<f32>(), data, "{}", k.source());
    let doubled = UOp::define_global(1, DType::F32)
        .index_into(&i, None)
        .store(&back.mul(&UOp::const_f64(DType::F32, 2.0)));
    let st = UOp::define_global(0, DType::F32)
        .index_into(&i, None)
        .store(&back);
    let ast = UOp::sink(vec![st.end(std::slice::from_ref(&i)), doubled.end(&[i])]);
    let mut args = [Arg::new(DType::F32, &data), Arg::zeros(DType::F32, 8)];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<f32>(), data);
    let want: Vec<f32> = data.iter().map(|v| v * 2.0).collect();
    assert_eq!(args[1].get::<f32>(), want);
}

/// The `BadArgs` message of `r`, which must be an error.
fn bad_args<T>(r: morok_core::device::DeviceResult<T>) -> String {
    match r {
        Err(e @ DeviceError::BadArgs { .. }) => e.to_string(),
        Err(e) => panic!("expected BadArgs, got {e}"),
        Ok(_) => panic!("expected BadArgs, got Ok"),
    }
}

#[test]
fn prepared_launches_are_checked_once_and_frames_per_call() {
    use morok_backends::cpu::{CpuKernel, Frame, FrameSlot, FrameTable};
    let (dev, _dir) = device(1);
    let compiled = doubling_below_n(&dev);
    let k = compiled
        .as_any()
        .and_then(|a| a.downcast_ref::<CpuKernel>())
        .expect("a CPU kernel");
    let slot = |len, written| FrameSlot {
        dtype: DType::F32,
        len,
        written,
    };
    let table = FrameTable::new(vec![slot(3, true), slot(3, false)]);
    // Checked at preparation: access ranges at the values, aliasing, the
    // table's write marks, variable bounds.
    assert!(bad_args(k.prepare(&table, &[0, 1], &[4])).contains("may access elements 0..=3"));
    assert!(bad_args(k.prepare(&table, &[0, 0], &[3])).contains("written but shared"));
    assert!(bad_args(k.prepare(&table, &[1, 0], &[3])).contains("does not lock it for writing"));
    assert!(bad_args(k.prepare(&table, &[0, 1], &[0])).contains("outside 1..=1000"));
    let launch = k.prepare(&table, &[0, 1], &[3]).expect("a valid launch");

    let out = dev.allocate(DType::F32, 3).unwrap();
    let mut inp = dev.allocate(DType::F32, 3).unwrap();
    inp.copy_in(&to_bytes(&[1.0f32, 2.0, 3.0])).unwrap();
    let small = dev.allocate(DType::F32, 2).unwrap();
    let ints = dev.allocate(DType::I32, 3).unwrap();
    // Checked per call: count, types, sizes, distinct buffers.
    assert!(bad_args(Frame::bind(&table, &[out.as_ref()])).contains("1 buffers given"));
    assert!(bad_args(Frame::bind(&table, &[out.as_ref(), small.as_ref()])).contains("holds 2 f32"));
    assert!(bad_args(Frame::bind(&table, &[ints.as_ref(), inp.as_ref()])).contains("holds 3 i32"));
    assert!(bad_args(Frame::bind(&table, &[out.as_ref(), out.as_ref()])).contains("bound twice"));
    {
        let frame = Frame::bind(&table, &[out.as_ref(), inp.as_ref()]).unwrap();
        launch.launch(&frame).unwrap();
        let other = FrameTable::new(vec![slot(3, true), slot(3, false)]);
        let foreign = k.prepare(&other, &[0, 1], &[3]).unwrap();
        assert!(bad_args(foreign.launch(&frame)).contains("another plan"));
    }
    let mut bytes = vec![0u8; 12];
    out.copy_out(&mut bytes).unwrap();
    assert_eq!(from_bytes::<f32>(&bytes), vec![2.0, 4.0, 6.0]);
}

/// Lines of this process's memory map that name a file under `dir`.
#[cfg(target_os = "linux")]
fn mapped_under(dir: &std::path::Path) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let dir = dir.display().to_string();
    maps.lines().filter(|l| l.contains(&dir)).count()
}

/// A loaded object stays mapped while a kernel built from it lives, is
/// shared by the kernels of one source, and is unmapped with the last of
/// them (a beam search drops its candidates: holding every object ran a
/// long `MOROK_BEAM=2` process into the limit on memory mappings).
#[cfg(target_os = "linux")]
#[test]
fn objects_are_unmapped_with_their_last_kernel() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let dev = c_device_in(&cache, 1);
    let ast = matmul_ast(8, 8, 8);
    let first = compile(&dev, &ast);
    let mapped = mapped_under(&cache);
    assert!(mapped > 0, "the object is mapped while its kernel lives");
    let second = compile(&dev, &ast);
    assert_eq!(mapped_under(&cache), mapped, "one object for one source");
    drop(first);
    assert_eq!(mapped_under(&cache), mapped, "the second kernel holds it");
    drop(second);
    assert_eq!(mapped_under(&cache), 0, "unmapped with the last kernel");
    // built again from the on-disk cache, it runs
    let mut args = [
        Arg::zeros(DType::F32, 64),
        Arg::new(DType::F32, &[1.0f32; 64]),
        Arg::new(DType::F32, &[2.0f32; 64]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<f32>(), vec![16.0; 64]);
}
