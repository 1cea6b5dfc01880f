//! The helper definitions a C kernel's source starts with: half-float
//! conversions, the vector typedefs and their load/store, rounding, FMA
//! and streaming-store helpers, each emitted only for the types a kernel
//! uses.

use super::types::{libm, same_width_ints, value_type, vec_of, vector_type};
use morok_core::dtype::{DType, ScalarType};
use morok_core::uop::Op;
use morok_core::LoweredKernel;
use std::collections::BTreeSet;

/// The helpers kernel `kernel` needs, in a fixed order (the source is the
/// object cache's key): the scalar prelude, then per vector type of the
/// kernel (with the integer and mask types of its width) its typedef and
/// load/store, the float ones' roundings, the vector FMAs of its float
/// `MULACC`s, the register pin when `in_register` (see
/// [`super::registers`]), and the streaming stores of the vector types in
/// `streamed` with their fence.
pub(super) fn kernel_prelude(
    kernel: &LoweredKernel,
    in_register: bool,
    streamed: &BTreeSet<String>,
) -> String {
    let mut src = String::from(C_HEADERS);
    src.push_str(&scalar_helpers());
    let all = vector_types(kernel);
    for &(t, count) in &all {
        src.push_str(&vector_prelude(DType::scalar(t).vec(count)));
    }
    for &(t, count) in &all {
        if t.is_float() {
            src.push_str(&rounding_prelude(t, count));
        }
    }
    let fused: BTreeSet<(ScalarType, u16)> = kernel
        .ops
        .iter()
        .filter(|n| n.op() == Op::MulAcc && n.dtype().is_vector())
        .map(|n| (n.dtype().scalar_type(), n.dtype().count()))
        .filter(|(t, _)| matches!(t, ScalarType::F32 | ScalarType::F64))
        .collect();
    if !fused.is_empty() {
        src.push_str(FMA_PRELUDE);
    }
    for &(t, count) in &fused {
        src.push_str(&fma_prelude(t, count));
    }
    if in_register {
        src.push_str(super::registers::IN_REGISTER_PRELUDE);
    }
    if !streamed.is_empty() {
        src.push_str(STREAM_FENCE);
    }
    for name in streamed {
        src.push_str(&stream_prelude(name));
    }
    src
}

/// The vector types of `kernel`'s values and pointees, each with the
/// integer and mask types of its width (as element type and lanes).
fn vector_types(kernel: &LoweredKernel) -> BTreeSet<(ScalarType, u16)> {
    let vectors: BTreeSet<(ScalarType, u16)> = kernel
        .ops
        .iter()
        .flat_map(|n| std::iter::once(n.dtype()).chain(n.src().iter().map(|x| x.dtype())))
        .map(DType::pointee)
        .filter(|d| vector_type(*d).is_some())
        .map(|d| (d.scalar_type(), d.count()))
        .collect();
    let mut all = BTreeSet::new();
    for &(t, count) in &vectors {
        let (i, u) = same_width_ints(t);
        all.extend([
            (t, count),
            (i, count),
            (u, count),
            (ScalarType::Bool, count),
        ]);
    }
    all
}

/// The vector types of a CUDA kernel (NVRTC has no GCC vector types):
/// for each, a struct of its lanes with `v[i]` access (the C renderer's
/// lane syntax) and the same unaligned load and store helpers as in C; and
/// `morok_bits<T>(x)`, a bit copy between equally wide types (the vector
/// `BITCAST`). The renderer builds every vector value lane by lane in the
/// CUDA dialect, so no operators are needed.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn cuda_vector_prelude(kernel: &LoweredKernel) -> String {
    let all = vector_types(kernel);
    if all.is_empty() {
        return String::new();
    }
    let mut src = String::from(
        "template <class T, class F> static inline T morok_bits(F f) { T t; memcpy(&t, &f, sizeof t); return t; }\n",
    );
    for &(t, count) in &all {
        let d = DType::scalar(t).vec(count);
        let name = vector_type(d).unwrap_or_default();
        let elem = if t == ScalarType::Bool {
            "int32_t"
        } else {
            value_type(t).unwrap_or("void")
        };
        src.push_str(&format!(
            "struct {name} {{\n\
             \x20 {elem} v[{count}];\n\
             \x20 {elem} &operator[](int i) {{ return v[i]; }}\n\
             \x20 const {elem} &operator[](int i) const {{ return v[i]; }}\n\
             }};\n\
             static inline {name} {name}_load(const void *p) {{ {name} v; memcpy(&v, p, sizeof v); return v; }}\n\
             static inline void {name}_store(void *p, {name} v) {{ memcpy(p, &v, sizeof v); }}\n"
        ));
    }
    src
}

/// The C library headers a C kernel includes.
const C_HEADERS: &str =
    "#include <stdint.h>\n#include <stdbool.h>\n#include <string.h>\n#include <math.h>\n\n";

/// The scalar helpers of every C kernel: [`F16_BITS`], [`BF16_BITS`] and
/// [`ROUNDING_HELPERS`].
fn scalar_helpers() -> String {
    [F16_BITS, BF16_BITS, F32_TO_BF16_BITS, ROUNDING_HELPERS].concat()
}

/// The scalar helpers of a CUDA kernel (`crate::cuda`): the C kernels'
/// with the half conversions the GPU has as instructions (`cvt`: the same
/// round-to-nearest-even; a NaN becomes the canonical NaN), bf16 rounding
/// in software below `sm_80`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn cuda_scalar_helpers() -> String {
    [
        CUDA_F16_CVT,
        BF16_BITS,
        "#if __CUDA_ARCH__ >= 800\n",
        CUDA_F32_TO_BF16_CVT,
        "#else\n",
        F32_TO_BF16_BITS,
        "#endif\n",
        ROUNDING_HELPERS,
    ]
    .concat()
}

/// f16 ↔ f32 by bit manipulation (round to nearest even, NaN stays NaN).
const F16_BITS: &str = r#"static inline float morok_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  float f;
  if (e == 0x1fu) bits = sign | 0x7f800000u | (m << 13);
  else if (e != 0) bits = sign | ((e + 112u) << 23) | (m << 13);
  else { f = (float)m * 0x1p-24f; memcpy(&bits, &f, 4); bits |= sign; }
  memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t morok_f32_to_f16(float f) {
  uint32_t x, ax, sign;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    float a;
    memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint32_t)rintf(a * 0x1p24f));
  }
  ax -= 0x38000000u;
  ax += 0xfffu + ((ax >> 13) & 1u);
  return (uint16_t)(sign | (ax >> 13));
}
"#;

/// bf16 → f32 (exact: the high half of the f32's bits).
const BF16_BITS: &str = r#"static inline float morok_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
"#;

/// f32 → bf16 by bit manipulation (round to nearest even, NaN stays NaN).
const F32_TO_BF16_BITS: &str = r#"static inline uint16_t morok_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
"#;

/// f16 ↔ f32 as the GPU's conversion instructions.
const CUDA_F16_CVT: &str = r#"static inline float morok_f16_to_f32(uint16_t h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
static inline uint16_t morok_f32_to_f16(float f) { uint16_t h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
"#;

/// f32 → bf16 as the conversion instruction of `sm_80` and later.
const CUDA_F32_TO_BF16_CVT: &str = r#"static inline uint16_t morok_f32_to_bf16(float f) { uint16_t h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
"#;

/// A round-to-odd f64 → f32 step that makes f64 → f16/bf16 a single
/// correct rounding (rounding to odd first, with at least two extra bits,
/// cannot create a tie that the final rounding would resolve wrongly),
/// and the roundings of a `float` to the halves.
const ROUNDING_HELPERS: &str = r#"static inline float morok_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f != d && d == d) {
    uint32_t b;
    memcpy(&b, &f, 4);
    if (fabs((double)f) > fabs(d)) b -= 1u;
    b |= 1u;
    memcpy(&f, &b, 4);
  }
  return f;
}
static inline float morok_round_f16(float f) { return morok_f16_to_f32(morok_f32_to_f16(f)); }
static inline float morok_round_bf16(float f) { return morok_bf16_to_f32(morok_f32_to_bf16(f)); }
"#;

/// The typedef of a vector type (GCC/Clang `vector_size`: lane-wise
/// arithmetic, `v[i]` lanes) and its unaligned load and store helpers
/// (`memcpy`, which compilers turn into one unaligned vector move; no
/// alignment is assumed).
fn vector_prelude(d: DType) -> String {
    let name = vector_type(d).unwrap_or_default();
    let t = d.scalar_type();
    let (elem, bytes) = if t == ScalarType::Bool {
        ("int32_t", 4 * d.count() as usize)
    } else {
        (value_type(t).unwrap_or("void"), d.itemsize())
    };
    format!(
        "typedef {elem} {name} __attribute__((vector_size({bytes})));\n\
         static inline {name} {name}_load(const void *p) {{ {name} v; memcpy(&v, p, sizeof v); return v; }}\n\
         static inline void {name}_store(void *p, {name} v) {{ memcpy(p, &v, sizeof v); }}\n"
    )
}

/// Roundings of a float vector type `t` × `w` to integers, exact like
/// libm's `trunc`, `floor`, `ceil` and `rint` (which lanes would call):
/// lanes of magnitude below `2^mantissa` round through an integer
/// conversion (their sign bit put back, so `-0.5` gives `-0.0`), larger
/// lanes, infinities and NaN are already integers and stay. `rint` adds
/// and subtracts `2^mantissa` (round to nearest even, the default mode).
fn rounding_prelude(t: ScalarType, w: u16) -> String {
    let (i, u) = same_width_ints(t);
    let (ty, it, ut) = (vec_of(t, w), vec_of(i, w), vec_of(u, w));
    let (sign, lim, one) = if t == ScalarType::F64 {
        ("0x8000000000000000ull", "0x1p52", "0x3ff0000000000000ull")
    } else {
        ("0x80000000u", "0x1p23f", "0x3f800000u")
    };
    format!(
        "static inline {ty} {ty}_trunc({ty} a) {{\n\
         \x20 {ut} bits = ({ut})a, sign = bits & {sign};\n\
         \x20 {it} small = ({ty})(bits & ~sign) < {lim};\n\
         \x20 {ty} t = __builtin_convertvector(__builtin_convertvector(({ty})(({ut})small & bits), {it}), {ty});\n\
         \x20 return ({ty})(((({ut})t | sign) & ({ut})small) | (bits & ~({ut})small));\n\
         }}\n\
         static inline {ty} {ty}_floor({ty} a) {{ {ty} t = {ty}_trunc(a); return t - ({ty})(({ut})(t > a) & {one}); }}\n\
         static inline {ty} {ty}_ceil({ty} a) {{\n\
         \x20 {ty} t = {ty}_trunc(a); t = t + ({ty})(({ut})(t < a) & {one});\n\
         \x20 return ({ty})(({ut})t | (({ut})a & {sign}));\n\
         }}\n\
         static inline {ty} {ty}_rint({ty} a) {{\n\
         \x20 {ut} bits = ({ut})a, sign = bits & {sign};\n\
         \x20 {ty} mag = ({ty})(bits & ~sign);\n\
         \x20 {it} small = mag < {lim};\n\
         \x20 {ty} r = ({ty})(({ut})((mag + {lim}) - {lim}) | sign);\n\
         \x20 return ({ty})((({ut})r & ({ut})small) | (bits & ~({ut})small));\n\
         }}\n"
    )
}

/// Defines `MOROK_ELEMENTWISE_FMA` where the compiler has Clang's
/// generic vector FMA `__builtin_elementwise_fma` (recent Clang: 19 has
/// it, 14 does not; GCC has none), which the helpers of [`fma_prelude`]
/// prefer.
const FMA_PRELUDE: &str = "#if defined(__has_builtin)\n\
     #if __has_builtin(__builtin_elementwise_fma)\n\
     #define MOROK_ELEMENTWISE_FMA 1\n\
     #endif\n\
     #endif\n";

/// The x86 builtin computing one fused multiply-add of whole vectors of
/// `bytes` bytes of `t` (the one `_mm*_fmadd_p[sd]` calls, named alike by
/// GCC and Clang), the macro of the instruction set it needs, and for the
/// AVX-512 forms the C type of their lane mask (they take a mask, all
/// ones here, and a rounding mode, 4: the current one); `None` for other
/// vectors. An `f32 × 2` vector (8 bytes) uses the 16-byte form.
fn x86_fma_builtin(
    t: ScalarType,
    bytes: usize,
) -> Option<(&'static str, &'static str, Option<&'static str>)> {
    Some(match (t, bytes) {
        (ScalarType::F32, 8 | 16) => ("__builtin_ia32_vfmaddps", "__FMA__", None),
        (ScalarType::F32, 32) => ("__builtin_ia32_vfmaddps256", "__FMA__", None),
        (ScalarType::F32, 64) => (
            "__builtin_ia32_vfmaddps512_mask",
            "__AVX512F__",
            Some("unsigned short"),
        ),
        (ScalarType::F64, 16) => ("__builtin_ia32_vfmaddpd", "__FMA__", None),
        (ScalarType::F64, 32) => ("__builtin_ia32_vfmaddpd256", "__FMA__", None),
        (ScalarType::F64, 64) => (
            "__builtin_ia32_vfmaddpd512_mask",
            "__AVX512F__",
            Some("unsigned char"),
        ),
        _ => return None,
    })
}

/// `NAME_fma(a, b, c)` for the float vector type `t` × `w`: `a * b + c`
/// with one rounding per lane, as one vector FMA instruction: Clang's
/// `__builtin_elementwise_fma` where it exists, else on x86 with FMA the
/// builtin of [`x86_fma_builtin`] (an `f32 × 2` widened to 4 lanes by
/// `__builtin_shufflevector`, which needs GCC 12 or Clang), else
/// `fma`/`fmaf` lane by lane (which the compiler may still vectorize).
/// Every form rounds each lane once, so all equal the scalar `fma` bit for
/// bit.
fn fma_prelude(t: ScalarType, w: u16) -> String {
    let ty = vec_of(t, w);
    let f = libm("fma", t);
    let lanes: Vec<String> = (0..w)
        .map(|i| format!("{f}(a[{i}], b[{i}], c[{i}])"))
        .collect();
    let x86 = x86_fma_builtin(t, t.itemsize() * w as usize).map_or(
        String::new(),
        |(builtin, feature, mask)| {
            let call = |a: &str, b: &str, c: &str| match mask {
                Some(m) => format!("{builtin}({a}, {b}, {c}, ({m})-1, 4)"),
                None => format!("{builtin}({a}, {b}, {c})"),
            };
            if w == 2 && t == ScalarType::F32 {
                let wide = |v: &str| format!("__builtin_shufflevector({v}, {v}, 0, 1, 0, 1)");
                format!(
                    "#elif defined(__x86_64__) && defined({feature}) && (defined(__clang__) || __GNUC__ >= 12)\n\
                     \x20 typedef float {ty}_wide __attribute__((vector_size(16)));\n\
                     \x20 const {ty}_wide r = {};\n\
                     \x20 return __builtin_shufflevector(r, r, 0, 1);\n",
                    call(&wide("a"), &wide("b"), &wide("c"))
                )
            } else {
                format!(
                    "#elif defined(__x86_64__) && defined({feature})\n\x20 return {};\n",
                    call("a", "b", "c")
                )
            }
        },
    );
    format!(
        "static inline {ty} {ty}_fma({ty} a, {ty} b, {ty} c) {{\n\
         #if defined(MOROK_ELEMENTWISE_FMA)\n\
         \x20 return __builtin_elementwise_fma(a, b, c);\n\
         {x86}\
         #else\n\
         \x20 return ({ty}){{{}}};\n\
         #endif\n\
         }}\n",
        lanes.join(", ")
    )
}

/// The fence ending a kernel with streaming stores (see
/// [`crate::cpu::stream`]): `sfence` as inline assembly rather than
/// `<immintrin.h>`, whose parsing would add a noticeable part of a
/// kernel's compile time.
const STREAM_FENCE: &str = "#if defined(__x86_64__)\n\
     static inline void morok_stream_fence(void) { __asm__ volatile(\"sfence\" ::: \"memory\"); }\n\
     #else\n\
     static inline void morok_stream_fence(void) {}\n\
     #endif\n";

/// The streaming store helper `NAME_stream` of the vector typedef `name`
/// (of the host's vector width, see [`crate::cpu::stream`]): `vmovntdq` of the
/// vector's bits where the kernel is compiled for the instruction set
/// (Clang's `__builtin_nontemporal_store`, GCC's `movntdq` builtin), an
/// ordinary store otherwise. `p` must be aligned to the vector's size.
fn stream_prelude(name: &str) -> String {
    let (feature, bits, gcc) = if crate::host::host_vector_bytes() == 64 {
        ("__AVX512F__", 64, "__builtin_ia32_movntdq512")
    } else {
        ("__AVX__", 32, "__builtin_ia32_movntdq256")
    };
    let lanes = bits / 8;
    format!(
        "static inline void {name}_stream(void *p, {name} v) {{\n\
         #if defined(__x86_64__) && defined({feature}) && defined(__clang__)\n\
         \x20 __builtin_nontemporal_store(v, ({name} *)p);\n\
         #elif defined(__x86_64__) && defined({feature}) && defined(__GNUC__)\n\
         \x20 typedef long long i64x{lanes} __attribute__((vector_size({bits})));\n\
         \x20 {gcc}((i64x{lanes} *)p, (i64x{lanes})v);\n\
         #else\n\
         \x20 memcpy(p, &v, sizeof v);\n\
         #endif\n\
         }}\n"
    )
}
