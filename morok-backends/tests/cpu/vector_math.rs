//! Transcendentals on vector lanes (vector masks, see
//! `morok_core::vectorize`): the upcast lanes of `exp`, `exp2`,
//! `log`, `log2` and `tanh` run their decomposition on whole vectors. Each kernel must
//! store exactly the bytes of the scalar decomposition (the same ops per
//! lane, rendered without vectors), or of libm where the C kernel's
//! vectors are too narrow to take the decomposition (16 bytes: see
//! `morok_core::min_decomposed_bytes`), on random data mixed with the special
//! values: NaN, ±inf, ±0, subnormals, huge and tiny magnitudes, halves
//! (rounding ties). With the `llvm` feature the LLVM codegen's vector
//! kernels must store the same bytes.

use super::common::*;
use morok_backends::host::host_vector_bytes;
use morok_core::caps::Caps;
use morok_core::dtype::DType;
use morok_core::min_decomposed_bytes;
use morok_core::uop::{AxisType, Op, UOp};
use morok_core::LowerOptions;
use morok_core::{apply_opts, Opt, OptOps};
use std::sync::Arc;

/// Special values and random ones in roughly [-300, 300] (f64 values,
/// rounded to `dtype` by [`args`]).
fn values(n: usize) -> Vec<f64> {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        1e-310,
        f64::MIN_POSITIVE,
        1e-30,
        -1e-30,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        1.0,
        -1.0,
        88.5,
        -103.9,
        709.0,
        -745.0,
        1e30,
        -1e30,
        3e38,
        1e300,
        8388607.5,
        4503599627370495.5,
        2.0f64.powi(31),
        -(2.0f64.powi(31)),
        1e5,
        -1e5,
    ];
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|k| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (s >> 11) as f64 / (1u64 << 53) as f64;
            match k % 3 {
                0 => specials[(s >> 7) as usize % specials.len()],
                1 => (r - 0.5) * 20.0,
                _ => (r - 0.5) * 600.0,
            }
        })
        .collect()
}

/// The output and input buffers of an `n`-element kernel of `dtype`.
fn args(dtype: DType, n: usize) -> Vec<Arg> {
    let v = values(n);
    let input = if dtype == DType::F64 {
        Arg::new(dtype, &v)
    } else {
        Arg::new(dtype, &v.iter().map(|x| *x as f32).collect::<Vec<_>>())
    };
    vec![Arg::zeros(dtype, n), input]
}

/// A function of one node.
type UnaryFn = dyn Fn(&Arc<UOp>) -> Arc<UOp>;

/// `out[i] = f(x[i])` over `n` elements.
fn unary(n: i64, dtype: DType, f: &dyn Fn(&Arc<UOp>) -> Arc<UOp>) -> Arc<UOp> {
    let i = range(n, 0, AxisType::Loop);
    store_kernel(0, &i, &f(&load(1, dtype, &i)), std::slice::from_ref(&i))
}

/// Runs `ast` lowered with `caps` (and the C renderer) on copies of
/// `args`; the output bytes and the C source.
fn run_with(ast: &Arc<UOp>, caps: Caps, args: &[Arg]) -> (Vec<u8>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let dev = c_device_in(&dir.path().join("cache"), 1);
    run_lowered_with(&dev, ast, &LowerOptions::new(caps), args)
}

/// The C device's capabilities (host vectors, vector masks).
fn c_caps() -> Caps {
    use morok_core::device::Device;
    let dir = tempfile::tempdir().expect("temp dir");
    c_device_in(&dir.path().join("cache"), 1).renderer().caps()
}

/// Checks that `f` upcast by the host's vector width stores the bytes of
/// its scalar decomposition, and that no libm call is left in the
/// vectorized kernel. Where the C device's vectors are narrower than
/// [`min_decomposed_bytes`] (16-byte vectors) its lanes keep libm: there
/// the C kernel must store the bytes of the scalar libm kernel instead
/// (the LLVM codegen, with no libm, always decomposes).
fn same_as_scalar_decomposition(name: &str, dtype: DType, f: &dyn Fn(&Arc<UOp>) -> Arc<UOp>) {
    let lanes = (morok_core::MIN_DECOMPOSED_BYTES / dtype.itemsize()) as i64;
    let n = lanes * 37;
    let ast = unary(n, dtype, f);
    let args = args(dtype, n as usize);
    // The scalar decomposition for a target like the C renderer's: with
    // `MULACC` exactly when it has it.
    let mut scalar = Caps::none_native();
    if c_caps().native.contains(Op::MulAcc) {
        scalar.native = scalar.native.with(Op::MulAcc);
    }
    let (decomposition, _) = run_with(&ast, scalar, &args);
    let decomposed = min_decomposed_bytes(&c_caps()) <= usize::from(host_vector_bytes());
    let want = if decomposed {
        decomposition.clone()
    } else {
        run_with(&ast, c_caps(), &args).0
    };
    let up = apply_opts(
        &ast,
        &[Opt::new(OptOps::Upcast, 0, lanes)],
        &super::common::scalar_host().with_vector_bytes(host_vector_bytes()),
    )
    .expect("upcast");
    let (got, src) = run_with(&up, c_caps(), &args);
    if want != got {
        let t = dtype.itemsize();
        let x = &args[1].bytes;
        for k in 0..n as usize {
            let r = k * t..(k + 1) * t;
            assert_eq!(
                got[r.clone()],
                want[r.clone()],
                "{name} {dtype} lane {k}: input bytes {:?}\n{src}",
                &x[r]
            );
        }
    }
    if decomposed {
        for call in [
            "expf(", "logf(", "sinf(", "cosf(", "exp2f(", "log2f(", "tanhf(",
        ] {
            assert!(!src.contains(call), "{name}: {call} left in\n{src}");
        }
    }
    #[cfg(feature = "llvm")]
    same_on_llvm(name, dtype, &up, &args, &decomposition);
}

/// The LLVM codegen's kernel of `up` (lowered for its own capabilities:
/// vector masks, every transcendental decomposed) must store `want`, the
/// bytes of the scalar decomposition, and keep its comparisons and
/// selects in vector registers (`<w x i1>` masks, no lane extracted).
#[cfg(feature = "llvm")]
fn same_on_llvm(name: &str, dtype: DType, up: &Arc<UOp>, args: &[Arg], want: &[u8]) {
    use morok_core::device::Device;
    let dir = tempfile::tempdir().expect("temp dir");
    let llvm = llvm_device_in(&dir.path().join("cache"), 1);
    let opts = LowerOptions::new(llvm.renderer().caps());
    let (got, ir) = run_lowered_with(&llvm, up, &opts, args);
    assert!(
        got == want,
        "LLVM {name} {dtype}: not the scalar bytes\n{ir}"
    );
    if host_vector_bytes() > 0 {
        assert!(
            !ir.contains("extractelement"),
            "LLVM {name} {dtype}: lanes extracted\n{ir}"
        );
    }
}

#[test]
fn vector_transcendentals_match_the_scalar_decomposition() {
    let ops: [(&str, Op); 5] = [
        ("exp", Op::Exp),
        ("exp2", Op::Exp2),
        ("log", Op::Log),
        ("log2", Op::Log2),
        ("tanh", Op::Tanh),
    ];
    for dtype in [DType::F32, DType::F64] {
        for (name, op) in ops {
            same_as_scalar_decomposition(name, dtype, &|x| x.un(op));
        }
    }
}

/// On a target with 32-byte vectors (AVX2) one vector of 8 `f32` lanes
/// takes the `exp` decomposition (lowering never forms a 64-byte chunk
/// there); with 64-byte vectors the same 8 lanes keep libm. Both store
/// the bytes of their scalar form.
#[test]
fn avx2_vectors_take_the_decomposition_on_one_vector() {
    if host_vector_bytes() < 32 {
        return; // no 32-byte vectors to run here
    }
    let n = 8 * 37;
    let ast = unary(n, DType::F32, &|x| x.un(Op::Exp));
    let args = args(DType::F32, n as usize);
    for (bytes, decomposed) in [(32u16, true), (64, false)] {
        if bytes > host_vector_bytes() {
            continue;
        }
        let caps = c_caps().with_vector_bytes(bytes);
        let mut scalar = if decomposed {
            Caps::none_native()
        } else {
            c_caps()
        };
        if decomposed && caps.native.contains(Op::MulAcc) {
            scalar.native = scalar.native.with(Op::MulAcc);
        }
        let (want, _) = run_with(&ast, scalar, &args);
        let up = apply_opts(
            &ast,
            &[Opt::new(OptOps::Upcast, 0, 8)],
            &super::common::scalar_host().with_vector_bytes(bytes),
        )
        .expect("upcast");
        let (got, src) = run_with(&up, caps, &args);
        assert_eq!(got, want, "{bytes}-byte vectors:\n{src}");
        assert_eq!(
            !src.contains("expf("),
            decomposed,
            "{bytes}-byte vectors:\n{src}"
        );
    }
}

#[test]
fn sin_keeps_libm_on_vectors() {
    // Its decomposition on vectors measured 20× slower than libm per lane.
    let n = 64;
    let ast = unary(n, DType::F32, &|x| x.un(Op::Sin));
    let up = apply_opts(
        &ast,
        &[Opt::new(OptOps::Upcast, 0, 16)],
        &super::common::scalar_host().with_vector_bytes(host_vector_bytes()),
    )
    .expect("upcast");
    let args = args(DType::F32, n as usize);
    let (want, _) = run_with(&ast, c_caps(), &args);
    let (got, src) = run_with(&up, c_caps(), &args);
    assert!(src.contains("sinf("), "{src}");
    assert_eq!(got, want);
}

#[test]
fn vector_roundings_and_casts_match_scalars() {
    // The vector helpers of FLOOR, CEIL, TRUNC, ROUND, ABS, MAX and the
    // saturating float → int casts, lane by lane against scalar code.
    let fs: [(&str, &UnaryFn); 7] = [
        ("floor", &|x| x.un(Op::Floor)),
        ("ceil", &|x| x.un(Op::Ceil)),
        ("trunc", &|x| x.un(Op::Trunc)),
        ("round", &|x| x.un(Op::Round)),
        ("abs", &|x| x.un(Op::Abs)),
        ("cast_i32", &|x| x.cast(DType::I32).cast(x.dtype())),
        ("cast_i64", &|x| x.cast(DType::I64).cast(x.dtype())),
    ];
    for dtype in [DType::F32, DType::F64] {
        for (name, f) in fs {
            same_as_scalar_decomposition(name, dtype, f);
        }
    }
}
