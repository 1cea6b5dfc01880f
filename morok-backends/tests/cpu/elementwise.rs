//! Elementwise kernels over several dtypes, through the whole path:
//! kernel AST → lower → render C → compile → run.

use super::common::*;
use half::{bf16, f16};
use morok_core::dtype::DType;
use morok_core::uop::{AxisType, ConstValue, Op, UOp};

#[test]
fn add_f32() {
    let (dev, _dir) = device(1);
    let ast = elementwise(7, &[DType::F32, DType::F32], |v| v[0].add(&v[1]));
    let a: Vec<f32> = (0..7).map(|x| x as f32 * 1.5).collect();
    let b: Vec<f32> = (0..7).map(|x| 10.0 - x as f32).collect();
    let mut args = [
        Arg::zeros(DType::F32, 7),
        Arg::new(DType::F32, &a),
        Arg::new(DType::F32, &b),
    ];
    let k = exec(&dev, &ast, &mut args);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(args[0].get::<f32>(), want, "{}", k.source());
}

#[test]
fn mul_f64_and_where() {
    let (dev, _dir) = device(1);
    // out = a < b ? a * b : b
    let ast = elementwise(5, &[DType::F64, DType::F64], |v| {
        v[0].bin(Op::CmpLt, &v[1]).where_(&v[0].mul(&v[1]), &v[1])
    });
    let a = [1.0f64, 5.0, -2.0, 0.1, 3.0];
    let b = [2.0f64, 4.0, -1.0, 0.3, 3.0];
    let mut args = [
        Arg::zeros(DType::F64, 5),
        Arg::new(DType::F64, &a),
        Arg::new(DType::F64, &b),
    ];
    exec(&dev, &ast, &mut args);
    let want: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| if x < y { x * y } else { *y })
        .collect();
    assert_eq!(args[0].get::<f64>(), want);
}

#[test]
fn f16_and_bf16_round_like_native_half() {
    let (dev, _dir) = device(1);
    for dt in [DType::F16, DType::BF16] {
        let ast = elementwise(6, &[dt, dt], |v| v[0].mul(&v[1]).add(&v[0]));
        let a = [1.0f64, 0.1, 65000.0, -3.3, 1e-6, 300.0];
        let b = [3.0f64, 0.7, 2.0, 0.5, 0.001, -1.0 / 3.0];
        let (want, got): (Vec<f64>, Vec<f64>) = if dt == DType::F16 {
            let a: Vec<f16> = a.iter().map(|x| f16::from_f64(*x)).collect();
            let b: Vec<f16> = b.iter().map(|x| f16::from_f64(*x)).collect();
            let mut args = [Arg::zeros(dt, 6), Arg::new(dt, &a), Arg::new(dt, &b)];
            exec(&dev, &ast, &mut args);
            let want = a.iter().zip(&b).map(|(x, y)| (*x * *y + *x).to_f64());
            (
                want.collect(),
                args[0].get::<f16>().iter().map(|x| x.to_f64()).collect(),
            )
        } else {
            let a: Vec<bf16> = a.iter().map(|x| bf16::from_f64(*x)).collect();
            let b: Vec<bf16> = b.iter().map(|x| bf16::from_f64(*x)).collect();
            let mut args = [Arg::zeros(dt, 6), Arg::new(dt, &a), Arg::new(dt, &b)];
            exec(&dev, &ast, &mut args);
            let want = a.iter().zip(&b).map(|(x, y)| (*x * *y + *x).to_f64());
            (
                want.collect(),
                args[0].get::<bf16>().iter().map(|x| x.to_f64()).collect(),
            )
        };
        // half's operators compute in f32 and round once, like the kernel.
        assert_eq!(got, want, "{dt}");
    }
}

#[test]
fn half_conversions_cover_specials_and_subnormals() {
    let (dev, _dir) = device(1);
    let vals = [
        0.0f32,
        -0.0,
        1.0,
        65504.0,
        65520.0,
        1e9,
        -1e9,
        6.0e-8,
        3.0e-8,
        2.9e-8,
        1e-10,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.333_333_34,
        5.960_464_5e-8,
        6.1e-5,
    ];
    for dt in [DType::F16, DType::BF16] {
        let ast = elementwise(vals.len() as i64, &[DType::F32], |v| v[0].cast(dt));
        let mut args = [Arg::zeros(dt, vals.len()), Arg::new(DType::F32, &vals)];
        exec(&dev, &ast, &mut args);
        let got: Vec<u16> = args[0].get();
        let want: Vec<u16> = vals
            .iter()
            .map(|v| {
                if dt == DType::F16 {
                    f16::from_f32(*v).to_bits()
                } else {
                    bf16::from_f32(*v).to_bits()
                }
            })
            .collect();
        assert_eq!(got, want, "{dt}");
        // And back to f32 exactly.
        let ast = elementwise(vals.len() as i64, &[dt], |v| v[0].cast(DType::F32));
        let mut back = [Arg::zeros(DType::F32, vals.len()), Arg::new(dt, &got)];
        exec(&dev, &ast, &mut back);
        let want: Vec<f32> = got
            .iter()
            .map(|b| {
                if dt == DType::F16 {
                    f16::from_bits(*b).to_f32()
                } else {
                    bf16::from_bits(*b).to_f32()
                }
            })
            .collect();
        assert_eq!(back[0].get::<f32>(), want, "{dt} back");
    }
    // NaN stays NaN.
    let ast = elementwise(1, &[DType::F32], |v| v[0].cast(DType::F16));
    let mut args = [Arg::zeros(DType::F16, 1), Arg::new(DType::F32, &[f32::NAN])];
    exec(&dev, &ast, &mut args);
    assert!(f16::from_bits(args[0].get::<u16>()[0]).is_nan());
}

#[test]
fn i8_wraps_and_u8_works() {
    let (dev, _dir) = device(1);
    let ast = elementwise(4, &[DType::I8, DType::I8], |v| v[0].add(&v[1]).mul(&v[1]));
    let a: [i8; 4] = [127, -128, 100, -5];
    let b: [i8; 4] = [1, -1, 100, 3];
    let mut args = [
        Arg::zeros(DType::I8, 4),
        Arg::new(DType::I8, &a),
        Arg::new(DType::I8, &b),
    ];
    exec(&dev, &ast, &mut args);
    let want: Vec<i8> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.wrapping_add(*y).wrapping_mul(*y))
        .collect();
    assert_eq!(args[0].get::<i8>(), want);

    let ast = elementwise(3, &[DType::U8, DType::U8], |v| v[0].bin(Op::Sub, &v[1]));
    let mut args = [
        Arg::zeros(DType::U8, 3),
        Arg::new(DType::U8, &[5u8, 0, 255]),
        Arg::new(DType::U8, &[7u8, 1, 255]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<u8>(), vec![254, 255, 0]);
}

#[test]
fn bool_arithmetic_and_logic() {
    let (dev, _dir) = device(1);
    // (a + b) * !a  ==  (a | b) & !a
    let ast = elementwise(4, &[DType::BOOL, DType::BOOL], |v| {
        v[0].add(&v[1]).mul(&v[0].un(Op::Not))
    });
    let mut args = [
        Arg::zeros(DType::BOOL, 4),
        Arg::new(DType::BOOL, &[0u8, 0, 1, 1]),
        Arg::new(DType::BOOL, &[0u8, 1, 0, 1]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<u8>(), vec![0, 1, 0, 0]);
}

#[test]
fn max_and_min_propagate_nan() {
    let (dev, _dir) = device(1);
    let nan = f32::NAN;
    let a = [nan, 1.0, nan, 2.0, -0.5];
    let b = [1.0, nan, nan, 3.0, -0.25];
    for op in [Op::Max, Op::Min] {
        let ast = elementwise(5, &[DType::F32, DType::F32], |v| v[0].bin(op, &v[1]));
        let mut args = [
            Arg::zeros(DType::F32, 5),
            Arg::new(DType::F32, &a),
            Arg::new(DType::F32, &b),
        ];
        exec(&dev, &ast, &mut args);
        let got: Vec<f32> = args[0].get();
        assert!(
            got[0].is_nan() && got[1].is_nan() && got[2].is_nan(),
            "{op:?} {got:?}"
        );
        let want = if op == Op::Max {
            [3.0, -0.25]
        } else {
            [2.0, -0.5]
        };
        assert_eq!(&got[3..], &want, "{op:?}");
    }
}

#[test]
fn int_div_mod_truncate_and_never_trap() {
    let (dev, _dir) = device(1);
    let a: [i32; 7] = [7, -7, 7, -7, 5, i32::MIN, i32::MIN];
    let b: [i32; 7] = [2, 2, -2, -2, 0, -1, 3];
    for op in [Op::Idiv, Op::Mod] {
        let ast = elementwise(7, &[DType::I32, DType::I32], |v| v[0].bin(op, &v[1]));
        let mut args = [
            Arg::zeros(DType::I32, 7),
            Arg::new(DType::I32, &a),
            Arg::new(DType::I32, &b),
        ];
        exec(&dev, &ast, &mut args);
        let want: Vec<i32> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| match (op, *y) {
                (_, 0) => 0,
                (Op::Idiv, _) => x.wrapping_div(*y),
                _ => x.wrapping_rem(*y),
            })
            .collect();
        assert_eq!(args[0].get::<i32>(), want, "{op:?}");
    }
}

#[test]
fn shifts_are_masked_and_casts_saturate() {
    let (dev, _dir) = device(1);
    let ast = elementwise(3, &[DType::U32, DType::U32], |v| v[0].bin(Op::Shl, &v[1]));
    let mut args = [
        Arg::zeros(DType::U32, 3),
        Arg::new(DType::U32, &[1u32, 1, 3]),
        Arg::new(DType::U32, &[3u32, 33, 31]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<u32>(), vec![8, 2, 1 << 31]);

    let vals = [1e10f32, -1e10, f32::NAN, -3.7, 3.7, 200.0];
    let ast = elementwise(6, &[DType::F32], |v| v[0].cast(DType::I32));
    let mut args = [Arg::zeros(DType::I32, 6), Arg::new(DType::F32, &vals)];
    exec(&dev, &ast, &mut args);
    let want: Vec<i32> = vals.iter().map(|v| *v as i32).collect();
    assert_eq!(args[0].get::<i32>(), want);
    let ast = elementwise(6, &[DType::F32], |v| v[0].cast(DType::U8));
    let mut args = [Arg::zeros(DType::U8, 6), Arg::new(DType::F32, &vals)];
    exec(&dev, &ast, &mut args);
    let want: Vec<u8> = vals.iter().map(|v| *v as u8).collect();
    assert_eq!(args[0].get::<u8>(), want);
}

#[test]
fn gated_load_reads_zero_outside_the_gate() {
    // out[i] = i in [1, 5) ? in[i - 1] : 0 over 6 elements (padding by 1
    // before and 1 after a 4-element input).
    let (dev, _dir) = device(1);
    let i = range(6, 0, AxisType::Loop);
    let gate = UOp::index(1)
        .bin(Op::CmpLe, &i)
        .bin(Op::And, &i.bin(Op::CmpLt, &UOp::index(5)));
    let idx = i.bin(Op::Sub, &UOp::index(1));
    let v = UOp::define_global(1, DType::F32)
        .index_into(&idx, Some(&gate))
        .load();
    let ast = store_kernel(0, &i, &v, std::slice::from_ref(&i));
    let mut args = [
        Arg::zeros(DType::F32, 6),
        Arg::new(DType::F32, &[1.0f32, 2.0, 3.0, 4.0]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<f32>(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 0.0]);
}

#[test]
fn gated_store_writes_only_inside_the_gate() {
    let (dev, _dir) = device(1);
    let i = range(6, 0, AxisType::Loop);
    let gate = i.bin(Op::CmpLt, &UOp::index(3));
    let v = load(1, DType::I32, &i);
    let st = UOp::define_global(0, DType::I32)
        .index_into(&i, Some(&gate))
        .store(&v);
    let ast = UOp::sink(vec![st.end(std::slice::from_ref(&i))]);
    let mut args = [
        Arg::new(DType::I32, &[-1i32; 6]),
        Arg::new(DType::I32, &[10i32, 11, 12, 13, 14, 15]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<i32>(), vec![10, 11, 12, -1, -1, -1]);
}

#[test]
fn constants_of_every_type_render_exactly() {
    let (dev, _dir) = device(1);
    let cases: [(DType, ConstValue); 6] = [
        (DType::I64, ConstValue::Int(i64::MIN)),
        (DType::I32, ConstValue::Int(i32::MIN as i64)),
        (DType::U64, ConstValue::UInt(u64::MAX)),
        (DType::F32, ConstValue::Float(1e-45)),
        (DType::F64, ConstValue::Float(-0.1)),
        (DType::F32, ConstValue::Float(f64::NEG_INFINITY)),
    ];
    for (dt, c) in cases {
        let i = range(1, 0, AxisType::Loop);
        let ast = store_kernel(0, &i, &UOp::const_(dt, c), std::slice::from_ref(&i));
        let mut args = [Arg::zeros(dt, 1)];
        exec(&dev, &ast, &mut args);
        let want = ConstValue::from_f64_or_int(c, dt.scalar_type());
        let got = match dt.scalar_type() {
            s if s == DType::I64.scalar_type() => ConstValue::Int(args[0].get::<i64>()[0]),
            s if s == DType::I32.scalar_type() => ConstValue::Int(args[0].get::<i32>()[0] as i64),
            s if s == DType::U64.scalar_type() => ConstValue::UInt(args[0].get::<u64>()[0]),
            s if s == DType::F32.scalar_type() => ConstValue::Float(args[0].get::<f32>()[0] as f64),
            _ => ConstValue::Float(args[0].get::<f64>()[0]),
        };
        assert_eq!(got, want, "{dt}");
    }
}

#[test]
fn data_dependent_indices_are_checked_when_they_execute() {
    // out[i] = table[idx[i]] (a gather) and out2[idx[i]] = i (a scatter);
    // indices out of range read 0 and write nothing.
    let (dev, _dir) = device(1);
    let i = range(5, 0, AxisType::Loop);
    let idx = load(2, DType::I32, &i).cast(DType::INDEX);
    let gathered = UOp::define_global(1, DType::F32)
        .index_into(&idx, None)
        .load();
    let ast = store_kernel(0, &i, &gathered, std::slice::from_ref(&i));
    let mut args = [
        Arg::zeros(DType::F32, 5),
        Arg::new(DType::F32, &[10.0f32, 11.0, 12.0]),
        Arg::new(DType::I32, &[2i32, 0, -1, 3, 1]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<f32>(), vec![12.0, 10.0, 0.0, 0.0, 11.0]);

    let idx = load(1, DType::I32, &i).cast(DType::INDEX);
    let st = UOp::define_global(0, DType::I32)
        .index_into(&idx.bin(Op::Mod, &UOp::index(100)), None)
        .store(&i.cast(DType::I32));
    let ast = UOp::sink(vec![st.end(std::slice::from_ref(&i))]);
    let lowered = morok_core::lower(
        &ast,
        &morok_core::LowerOptions::new(morok_core::render::Caps::all_native()),
    )
    .unwrap();
    assert!(
        lowered.parallel.is_none(),
        "a scatter's iterations may collide"
    );
    let mut args = [
        Arg::new(DType::I32, &[-7i32; 3]),
        Arg::new(DType::I32, &[2i32, 0, -1, 3, 1]),
    ];
    exec(&dev, &ast, &mut args);
    assert_eq!(args[0].get::<i32>(), vec![1, 4, 0]);
}
