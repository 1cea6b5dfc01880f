//! The C renderer: a [`LoweredKernel`] becomes one C11 function.
//!
//! # Calling convention
//!
//! ```c
//! void NAME(void *const *bufs, const int64_t *sizes, const int64_t *vars,
//!           int64_t gstart, int64_t gend);
//! ```
//!
//! `bufs[i]` is the buffer of `DEFINE_GLOBAL` slot `i` and `sizes[i]` its
//! element count, against which the accesses lowering marked as guarded
//! (`LoweredKernel::guarded`: data-dependent offsets) are checked when
//! they execute (an out-of-range read yields 0, an out-of-range write is
//! dropped; all other accesses are proven in bounds before the call, see
//! `BufferSlot::access`). `vars[k]` is the value of the `k`-th scalar
//! variable (`DEFINE_VAR`, in order of first appearance). When the kernel has
//! a parallel loop, it runs only the iterations `[gstart, gend)` of it, so
//! the host can split the loop across threads; otherwise both are ignored.
//!
//! # Semantics the generated code guarantees
//!
//! - Floats follow IEEE 754 exactly (no fast-math; see the compiler flags
//!   in `compiler.rs`). `f16` and `bf16` values live in `float` registers
//!   and every operation producing one is rounded back to the type
//!   (round to nearest even): for `+ - * /` and `sqrt` this equals native
//!   half arithmetic, because `float` has more than twice the precision
//!   plus two bits. Conversions are bit manipulation helpers, so any C
//!   compiler works.
//! - `MAX`/`MIN` propagate NaN.
//! - Signed integer `+ - *`, negation and left shifts wrap (computed in
//!   unsigned arithmetic), except for index arithmetic proven not to
//!   overflow (`LoweredKernel::no_overflow`), which stays plain so the C
//!   compiler can reason about loop induction variables.
//! - Integer division and remainder truncate (C semantics). Division or
//!   remainder by zero yields 0, and `MIN / -1` wraps to `MIN` (its
//!   remainder is 0): nothing traps.
//! - Shift amounts are masked to the type's width.
//! - Float → integer casts saturate and map NaN to 0 (Rust `as`).
//! - `bool` buffers are bytes; any non-zero byte reads as true.

use morok_core::dtype::{AddrSpace, DType, ScalarType};
use morok_core::kernel::indexes_global;
use morok_core::lower::LoweredKernel;
use morok_core::render::{Caps, RenderError, RenderedKernel, Renderer};
use morok_core::uop::{Arg, ConstValue, Op, UOp};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// Renders linear programs as C11 for the system C compiler.
#[derive(Clone, Copy, Debug, Default)]
pub struct CRenderer;

/// Helpers every kernel may use: f16/bf16 conversions by bit
/// manipulation (round to nearest even, NaN stays NaN), and a
/// round-to-odd f64 → f32 step that makes f64 → f16/bf16 a single correct
/// rounding (rounding to odd first, with at least two extra bits, cannot
/// create a tie that the final rounding would resolve wrongly).
const PRELUDE: &str = r#"#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <math.h>

static inline float morok_f16_to_f32(uint16_t h) {
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
static inline float morok_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t morok_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
static inline float morok_f64_to_f32_odd(double d) {
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

/// The C type of a value of scalar type `t` (halves compute in `float`).
fn value_type(t: ScalarType) -> Option<&'static str> {
    Some(match t {
        ScalarType::Bool => "bool",
        ScalarType::I8 => "int8_t",
        ScalarType::I16 => "int16_t",
        ScalarType::I32 => "int32_t",
        ScalarType::I64 => "int64_t",
        ScalarType::U8 => "uint8_t",
        ScalarType::U16 => "uint16_t",
        ScalarType::U32 => "uint32_t",
        ScalarType::U64 => "uint64_t",
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 => "float",
        ScalarType::F64 => "double",
        ScalarType::Index | ScalarType::Void => return None,
    })
}

/// The C type an element of scalar type `t` is stored as in a buffer.
fn storage_type(t: ScalarType) -> Option<&'static str> {
    match t {
        ScalarType::Bool => Some("uint8_t"),
        ScalarType::F16 | ScalarType::BF16 => Some("uint16_t"),
        t => value_type(t),
    }
}

/// The unsigned type wrapping arithmetic on `t` is done in.
fn wrap_type(t: ScalarType) -> &'static str {
    if t.bits() <= 32 {
        "uint32_t"
    } else {
        "uint64_t"
    }
}

/// The libm name of a float function for `t` (`expf` / `exp`).
fn libm(base: &str, t: ScalarType) -> String {
    if t == ScalarType::F64 {
        base.to_string()
    } else {
        format!("{base}f")
    }
}

/// The C operator of a binary ALU op (`+ - * /`, comparisons, bitwise).
fn infix(op: Op) -> &'static str {
    match op {
        Op::Add => "+",
        Op::Sub => "-",
        Op::Mul => "*",
        Op::Fdiv => "/",
        Op::CmpLt => "<",
        Op::CmpLe => "<=",
        Op::CmpEq => "==",
        Op::CmpNe => "!=",
        Op::And => "&",
        Op::Or => "|",
        _ => "^",
    }
}

/// The libm base name of a rounding op (`rint` rounds half to even in
/// the default rounding mode, which kernels never change).
fn rounding(op: Op) -> &'static str {
    match op {
        Op::Floor => "floor",
        Op::Ceil => "ceil",
        Op::Trunc => "trunc",
        _ => "rint",
    }
}

/// Rounds a `float` expression to the half type `t` (identity otherwise).
fn round_half(expr: String, t: ScalarType) -> String {
    match t {
        ScalarType::F16 => format!("morok_round_f16({expr})"),
        ScalarType::BF16 => format!("morok_round_bf16({expr})"),
        _ => expr,
    }
}

/// A C literal for a constant of scalar type `t`.
fn literal(c: ConstValue, t: ScalarType) -> String {
    match t {
        ScalarType::Bool => (if c.truthy() { "1" } else { "0" }).to_string(),
        t if t.is_float() => {
            let v = c.as_f64();
            let double = t == ScalarType::F64;
            if v.is_nan() {
                if double { "((double)NAN)" } else { "NAN" }.to_string()
            } else if v.is_infinite() {
                let inf = if double {
                    "((double)INFINITY)"
                } else {
                    "INFINITY"
                };
                if v < 0.0 {
                    format!("(-{inf})")
                } else {
                    inf.to_string()
                }
            } else if double {
                format!("{v:e}")
            } else {
                // Shortest round-trip form of the f32 value; C parses it
                // back to the same float.
                format!("{:e}f", v as f32)
            }
        }
        t if t.is_unsigned() => {
            let v = c.as_i128().unwrap_or(0) as u64;
            if t.bits() <= 32 {
                format!("{v}u")
            } else {
                format!("{v}ull")
            }
        }
        t => {
            let v = c.as_i64().unwrap_or(0);
            match t.bits() {
                64 if v == i64::MIN => "(-9223372036854775807ll - 1)".to_string(),
                64 => format!("{v}ll"),
                _ if v == i32::MIN as i64 => "(-2147483647 - 1)".to_string(),
                _ => format!("{v}"),
            }
        }
    }
}

/// The name of the vector typedef for `d` (`morok_f32x8`), if `d` is a
/// vector of a type that has one.
fn vector_type(d: DType) -> Option<String> {
    let t = d.scalar_type();
    if d.is_vector() && t == ScalarType::Bool {
        return Some(mask_type(d.count()));
    }
    (d.is_vector() && morok_core::caps::is_vector_element(t))
        .then(|| format!("morok_{}x{}", t.name(), d.count()))
}

/// The C type of a `bool` vector of `w` lanes: a mask of 32-bit lanes,
/// all ones for true and 0 for false (what vector comparisons produce).
fn mask_type(w: u16) -> String {
    format!("morok_b32x{w}")
}

/// The vector typedef of `w` lanes of `t`.
fn vec_of(t: ScalarType, w: u16) -> String {
    vector_type(DType::scalar(t).vec(w)).unwrap_or_default()
}

/// The signed and the unsigned integer type as wide as `t`.
fn same_width_ints(t: ScalarType) -> (ScalarType, ScalarType) {
    if t.itemsize() == 8 {
        (ScalarType::I64, ScalarType::U64)
    } else {
        (ScalarType::I32, ScalarType::U32)
    }
}

/// `m ? a : b` per lane, for a mask `m` of lanes as wide as `t`'s (all
/// ones or 0) and vectors `a`, `b` of type `t`: a bit select (C has no
/// vector `?:`), which compilers turn into a blend.
fn select(m: &str, a: &str, b: &str, t: ScalarType, w: u16) -> String {
    let ty = vec_of(t, w);
    let i = vec_of(same_width_ints(t).0, w);
    format!("(({ty})((({i})({m}) & ({i})({a})) | (~({i})({m}) & ({i})({b}))))")
}

/// A mask (as produced by comparing vectors of `from`) as the mask of
/// lanes of type `to`'s width.
fn mask_as(m: String, from: ScalarType, to: ScalarType, w: u16) -> String {
    if from.itemsize() == to.itemsize() {
        m
    } else {
        format!(
            "__builtin_convertvector({m}, {})",
            vec_of(same_width_ints(to).0, w)
        )
    }
}

/// A vector of `w` copies of the C expression `x` of type `t`.
fn splat(x: &str, t: ScalarType, w: u16) -> String {
    format!("(({}){{{}}})", vec_of(t, w), vec![x; w as usize].join(", "))
}

/// The C type of a value of dtype `d` (of node `n`, for errors): a
/// scalar type or a vector typedef.
fn c_type(n: &UOp, d: DType) -> Result<String, RenderError> {
    if d.is_vector() {
        return vector_type(d).ok_or_else(|| err(n, "no C vector type for this dtype"));
    }
    value_type(d.scalar_type())
        .map(str::to_string)
        .ok_or_else(|| err(n, "no C type for this dtype"))
}

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

/// Rendering state of one kernel.
struct Ctx<'a> {
    kernel: &'a LoweredKernel,
    names: HashMap<u64, String>,
    /// Run-time bounds conditions of the accesses lowering marked as
    /// guarded ([`LoweredKernel::guarded`]), by INDEX node.
    guards: HashMap<u64, String>,
    /// Launch-order positions of the scalar variables, by name.
    vars: HashMap<String, usize>,
    /// Counter for variable names: names follow program order, never node
    /// ids, so equal programs render to equal source (the cache key).
    next: usize,
    out: String,
    depth: usize,
    /// The vector types stored with non-temporal stores (see
    /// [`crate::cpu::stream`]); the kernel fences them before it returns.
    streamed: std::collections::BTreeSet<String>,
    /// The vector loads kept in a register (see [`super::registers`]).
    in_register: std::collections::HashSet<u64>,
}

fn err(n: &UOp, what: impl Into<String>) -> RenderError {
    RenderError {
        renderer: "C".to_string(),
        node: format!("{n:?}"),
        what: what.into(),
    }
}

impl Ctx<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// The C expression of an operand (`AFTER` stands for its first operand).
    fn name(&self, n: &Arc<UOp>) -> Result<String, RenderError> {
        let mut n = n;
        while n.op() == Op::After {
            n = n.s(0);
        }
        if let Some(c) = n.const_value() {
            let ty = self.vtype(n)?;
            let mut lit = literal(c, n.dtype().scalar_type());
            if n.dtype().is_vector() {
                if n.dtype().is_bool() {
                    lit = if c.truthy() { "-1" } else { "0" }.to_string();
                }
                let lanes = vec![lit; n.dtype().count() as usize];
                return Ok(format!("(({ty}){{{}}})", lanes.join(", ")));
            }
            return Ok(lit);
        }
        self.names
            .get(&n.id())
            .cloned()
            .ok_or_else(|| err(n, "operand used before it is defined"))
    }

    /// The C type of `n`'s value: a scalar type, or for a vector of a
    /// vector element type its GCC/Clang vector typedef.
    fn vtype(&self, n: &UOp) -> Result<String, RenderError> {
        c_type(n, n.dtype())
    }

    /// The operand strings of `n` for lane `lane` (`x[lane]` for vector
    /// operands), or the whole operands when `lane` is `None`.
    fn operands(&self, n: &Arc<UOp>, lane: Option<usize>) -> Result<Vec<String>, RenderError> {
        n.src()
            .iter()
            .map(|x| {
                let name = self.name(x)?;
                Ok(match lane {
                    Some(i) if x.dtype().is_vector() && x.dtype().is_bool() => {
                        format!("({name}[{i}] != 0)")
                    }
                    Some(i) if x.dtype().is_vector() => format!("{name}[{i}]"),
                    _ => name,
                })
            })
            .collect()
    }

    /// `(T){e(0), ..., e(w-1)}`: a vector built lane by lane from the
    /// scalar expression of each lane.
    fn lanewise(
        &self,
        n: &Arc<UOp>,
        lane: impl Fn(usize) -> Result<String, RenderError>,
    ) -> Result<String, RenderError> {
        let mask = n.dtype().is_bool();
        let lanes: Vec<String> = (0..n.dtype().count() as usize)
            .map(|i| {
                Ok(if mask {
                    format!("-(int32_t)({})", lane(i)?)
                } else {
                    lane(i)?
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(format!("(({}){{{}}})", self.vtype(n)?, lanes.join(", ")))
    }

    /// A fresh variable name with `prefix`.
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next - 1)
    }

    /// Declares a fresh variable with the value of `expr`; one of the
    /// loads in `in_register` is pinned to a register after it.
    fn define(&mut self, n: &UOp, expr: String) -> Result<(), RenderError> {
        let ty = self.vtype(n)?;
        let name = self.fresh("v");
        if self.in_register.contains(&n.id()) {
            self.line(&format!("{ty} {name} = {expr}; MOROK_IN_REGISTER({name});"));
        } else {
            self.line(&format!("const {ty} {name} = {expr};"));
        }
        self.names.insert(n.id(), name);
        Ok(())
    }

    fn op(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        match n.op() {
            Op::DefineGlobal => {
                let Arg::Int(slot) = *n.arg() else {
                    return Err(err(n, "DEFINE_GLOBAL without a slot"));
                };
                let st = n.dtype().scalar_type();
                let ty = storage_type(st).ok_or_else(|| err(n, "no C type for buffer"))?;
                let written = self
                    .kernel
                    .buffers
                    .get(slot as usize)
                    .is_some_and(|b| b.written);
                let cq = if written { "" } else { "const " };
                let name = format!("data{slot}");
                self.line(&format!(
                    "{cq}{ty} *restrict {name} = ({cq}{ty} *)bufs[{slot}];"
                ));
                self.names.insert(n.id(), name);
            }
            Op::DefineReg => {
                let Arg::Int(slot) = *n.arg() else {
                    return Err(err(n, "DEFINE_REG without a slot"));
                };
                if n.dtype().addr_space() != Some(AddrSpace::Reg) {
                    return Err(err(n, "DEFINE_REG must be a register pointer"));
                }
                let ty = c_type(n, n.dtype().pointee())?;
                let name = format!("acc{slot}");
                self.line(&format!("{ty} {name};"));
                self.names.insert(n.id(), name);
            }
            Op::Const => {}
            Op::Range => {
                let ty = self.vtype(n)?;
                let name = self.fresh("ridx");
                let parallel = self
                    .kernel
                    .parallel
                    .as_ref()
                    .is_some_and(|p| Arc::ptr_eq(&p.range, n));
                let (start, end) = if parallel {
                    (format!("({ty})gstart"), format!("({ty})gend"))
                } else {
                    ("0".to_string(), self.name(n.s(0))?)
                };
                self.line(&format!(
                    "for ({ty} {name} = {start}; {name} < {end}; {name}++) {{"
                ));
                self.depth += 1;
                self.names.insert(n.id(), name);
            }
            Op::End | Op::EndIf => {
                self.depth = self.depth.saturating_sub(1);
                self.line("}");
            }
            Op::If => {
                let gate = self.name(n.s(0))?;
                self.line(&format!("if ({gate}) {{"));
                self.depth += 1;
            }
            Op::Index => {
                let buf = self.name(n.s(0))?;
                let mut base = n.s(0);
                while base.op() == Op::After {
                    base = base.s(0);
                }
                let place = if base.op() == Op::DefineReg {
                    if !n.s(1).is_zero_const() {
                        return Err(err(n, "registers hold one element"));
                    }
                    buf
                } else {
                    let idx = self.name(n.s(1))?;
                    if self.kernel.guarded.contains(&n.id()) {
                        let Arg::Int(slot) = *base.arg() else {
                            return Err(err(n, "DEFINE_GLOBAL without a slot"));
                        };
                        self.guards.insert(
                            n.id(),
                            format!("({idx} >= 0 && (int64_t){idx} < sizes[{slot}])"),
                        );
                    }
                    format!("{buf}[{idx}]")
                };
                self.names.insert(n.id(), place);
            }
            Op::Load => {
                let index = n.s(0);
                let place = self.name(index)?;
                let st = n.dtype().scalar_type();
                // Only global buffers hold the storage form; registers hold
                // the value type (`float` for the halves).
                let global = indexes_global(index);
                let vector = n.dtype().is_vector();
                if vector && self.guards.contains_key(&index.id()) {
                    return Err(err(n, "vector load through a guarded index"));
                }
                let value = match st {
                    _ if vector && global => format!("{}_load(&{place})", self.vtype(n)?),
                    ScalarType::F16 if global => format!("morok_f16_to_f32({place})"),
                    ScalarType::BF16 if global => format!("morok_bf16_to_f32({place})"),
                    ScalarType::Bool if global => format!("({place} != 0)"),
                    _ => place,
                };
                let mut conds: Vec<String> =
                    self.guards.get(&index.id()).cloned().into_iter().collect();
                if let Some(gate) = index.src().get(2) {
                    // The gate first: it may be what keeps the index in range.
                    conds.insert(0, self.name(gate)?);
                }
                let zero = if vector {
                    format!("(({}){{0}})", self.vtype(n)?)
                } else {
                    literal(ConstValue::zero(st), st)
                };
                let expr = if conds.is_empty() {
                    value
                } else {
                    format!("({} ? {value} : {zero})", conds.join(" && "))
                };
                self.define(n, expr)?;
            }
            Op::Store => {
                let index = n.s(0);
                if index.src().len() > 2 {
                    return Err(err(n, "gated stores must be lowered to IF"));
                }
                let place = self.name(index)?;
                let v = self.name(n.s(1))?;
                let global = indexes_global(index);
                if n.s(1).dtype().is_vector() {
                    if self.guards.contains_key(&index.id()) {
                        return Err(err(n, "vector store through a guarded index"));
                    }
                    let line = if global {
                        let how = if self.streams(n) { "stream" } else { "store" };
                        format!("{}_{how}(&{place}, {v});", self.vtype(n.s(1))?)
                    } else {
                        format!("{place} = {v};")
                    };
                    self.line(&line);
                    return Ok(());
                }
                let v = match n.s(1).dtype().scalar_type() {
                    ScalarType::F16 if global => format!("morok_f32_to_f16({v})"),
                    ScalarType::BF16 if global => format!("morok_f32_to_bf16({v})"),
                    ScalarType::Bool if global => format!("(uint8_t){v}"),
                    _ => v,
                };
                match self.guards.get(&index.id()) {
                    Some(cond) => self.line(&format!("if {cond} {place} = {v};")),
                    None => self.line(&format!("{place} = {v};")),
                }
            }
            Op::Cast => {
                let e = if let Some(e) = self.vector_cast(n)? {
                    e
                } else if n.dtype().is_vector() {
                    let ty = value_type(n.dtype().scalar_type())
                        .ok_or_else(|| err(n, "no C type for this dtype"))?;
                    self.lanewise(n, |i| self.cast(n, &self.operands(n, Some(i))?[0], ty))?
                } else {
                    self.cast(n, &self.name(n.s(0))?, &self.vtype(n)?)?
                };
                self.define(n, e)?;
            }
            Op::Vectorize => {
                let mut lanes = self.operands(n, None)?;
                if n.dtype().is_bool() {
                    lanes = lanes.iter().map(|l| format!("-(int32_t){l}")).collect();
                }
                let e = format!("(({}){{{}}})", self.vtype(n)?, lanes.join(", "));
                self.define(n, e)?;
            }
            Op::Gep => {
                let (Arg::Axes(lanes), true) = (n.arg(), n.src().len() == 1) else {
                    return Err(err(n, "GEP needs one vector and its lanes"));
                };
                // Several lanes: a vector literal of them, which GCC and
                // Clang both compile to one extract or shuffle (half of a
                // vector: `vextractf64x4`, `vextractf128`, ...).
                let v = self.name(n.s(0))?;
                let picked: Vec<String> = lanes.iter().map(|i| format!("{v}[{i}]")).collect();
                let e = match picked.as_slice() {
                    [one] => one.clone(),
                    _ => format!("(({}){{{}}})", self.vtype(n)?, picked.join(", ")),
                };
                self.define(n, e)?;
            }
            Op::Bitcast if n.dtype().is_vector() => {
                let e = format!("(({})({}))", self.vtype(n)?, self.name(n.s(0))?);
                self.define(n, e)?;
            }
            Op::Bitcast => self.bitcast(n)?,
            Op::DefineVar => {
                let Arg::Var { name, .. } = n.arg() else {
                    return Err(err(n, "DEFINE_VAR without a Var arg"));
                };
                let next = self.vars.len();
                let pos = *self.vars.entry(name.to_string()).or_insert(next);
                let ty = self.vtype(n)?;
                self.define(n, format!("({ty})vars[{pos}]"))?;
            }
            _ => {
                let e = self.alu(n)?;
                self.define(n, e)?;
            }
        }
        Ok(())
    }

    /// The scalar cast expression of `n` applied to the operand `a`, with
    /// `ty` the C type of the result (one lane's, for vectors).
    fn cast(&self, n: &Arc<UOp>, a: &str, ty: &str) -> Result<String, RenderError> {
        let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
        Ok(match (from, to) {
            (_, ScalarType::Bool) => format!("({a} != 0)"),
            (f, t) if f == t => a.to_string(),
            (ScalarType::Bool, _) => format!("({ty}){a}"),
            // Via f64 and round-to-odd: one correct rounding to the half.
            (f, ScalarType::F16 | ScalarType::BF16) if f.is_int() || f == ScalarType::F64 => {
                round_half(format!("morok_f64_to_f32_odd((double){a})"), to)
            }
            (_, ScalarType::F16 | ScalarType::BF16) => round_half(a.to_string(), to),
            (f, t) if f.is_float() && t.is_int() => {
                let (lo, hi) = int_range_exclusive(t);
                format!(
                    "({a} != {a} ? ({ty})0 : {a} >= {hi:e} ? {max} : {a} <= {lo:e} ? {min} : ({ty}){a})",
                    max = literal(ConstValue::max_of(t), t),
                    min = literal(ConstValue::min_of(t), t),
                )
            }
            _ => format!("({ty}){a}"),
        })
    }

    /// Bit reinterpretation through `memcpy` of the storage forms.
    fn bitcast(&mut self, n: &Arc<UOp>) -> Result<(), RenderError> {
        let a = self.name(n.s(0))?;
        let (from, to) = (n.s(0).dtype().scalar_type(), n.dtype().scalar_type());
        let (sf, stt) = match (storage_type(from), storage_type(to)) {
            (Some(f), Some(t)) if from.itemsize() == to.itemsize() => (f, t),
            _ => return Err(err(n, "bitcast between types of different sizes")),
        };
        let src_bits = match from {
            ScalarType::F16 => format!("morok_f32_to_f16({a})"),
            ScalarType::BF16 => format!("morok_f32_to_bf16({a})"),
            ScalarType::Bool => format!("(uint8_t){a}"),
            _ => a,
        };
        let bits = self.fresh("b");
        self.line(&format!(
            "{stt} {bits}; {{ const {sf} t = {src_bits}; memcpy(&{bits}, &t, sizeof t); }}"
        ));
        let value = match to {
            ScalarType::F16 => format!("morok_f16_to_f32({bits})"),
            ScalarType::BF16 => format!("morok_bf16_to_f32({bits})"),
            ScalarType::Bool => format!("({bits} != 0)"),
            _ => bits,
        };
        self.define(n, value)
    }

    /// The expression of ALU node `n`. Vectors: `+ - * /` and negation
    /// of floats are the vector operators (IEEE lane by lane, exactly the
    /// scalar operation), everything else is built lane by lane from the
    /// scalar expression, which the C compiler vectorizes where the ISA
    /// can.
    fn alu(&self, n: &Arc<UOp>) -> Result<String, RenderError> {
        let d = n.dtype();
        if !d.is_vector() {
            return self.scalar_alu(n, self.operands(n, None)?, &self.vtype(n)?);
        }
        if let Some(e) = self.vector_alu(n)? {
            return Ok(e);
        }
        let native = matches!(d.scalar_type(), ScalarType::F32 | ScalarType::F64)
            && n.src().iter().all(|x| x.dtype() == d);
        let s = self.operands(n, None)?;
        match n.op() {
            Op::Add | Op::Sub | Op::Mul | Op::Fdiv if native => {
                let sym = infix(n.op());
                Ok(format!("({} {sym} {})", s[0], s[1]))
            }
            Op::Neg if native => Ok(format!("(-{})", s[0])),
            _ => {
                let ty = value_type(d.scalar_type())
                    .ok_or_else(|| err(n, "no C type for this dtype"))?;
                self.lanewise(n, |i| self.scalar_alu(n, self.operands(n, Some(i))?, ty))
            }
        }
    }

    /// The expression of a vector ALU node `n` on whole vectors (vector
    /// masks, see `Caps::vector_masks`), or `None` for the ops left to
    /// [`Ctx::alu`]'s other forms. Every form computes exactly the scalar
    /// expression of each lane: integer `+ - *` and left shifts wrap in
    /// the unsigned type, shift amounts are masked, `MAX`/`MIN`
    /// propagate NaN, roundings are the exact helpers of
    /// [`rounding_prelude`], comparisons give 32-bit masks, `MULACC` of
    /// floats is the vector FMA of [`fma_prelude`].
    fn vector_alu(&self, n: &Arc<UOp>) -> Result<Option<String>, RenderError> {
        let d = n.dtype();
        let w = d.count();
        let t = d.scalar_type();
        if !n
            .src()
            .iter()
            .all(|x| x.dtype().is_vector() && x.dtype().count() == w)
        {
            return Ok(None);
        }
        let s = self.operands(n, None)?;
        let ty = self.vtype(n)?;
        let ot = n.s(0).dtype().scalar_type();
        let float = t.is_float();
        let int = morok_core::caps::is_vector_element(t) && t.is_int();
        let (_, u) = same_width_ints(t);
        let ut = vec_of(u, w);
        let bits = t.bits();
        let e = match n.op() {
            Op::Add | Op::Sub | Op::Mul if int => {
                let sym = infix(n.op());
                format!("(({ty})(({ut}){} {sym} ({ut}){}))", s[0], s[1])
            }
            Op::Neg if int => format!("(({ty})(-({ut}){}))", s[0]),
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe if !ot.is_bool() => {
                let sym = infix(n.op());
                mask_as(format!("({} {sym} {})", s[0], s[1]), ot, ScalarType::I32, w)
            }
            Op::And | Op::Or | Op::Xor if int || t.is_bool() => {
                let sym = infix(n.op());
                format!("({} {sym} {})", s[0], s[1])
            }
            Op::Not if int || t.is_bool() => format!("(~{})", s[0]),
            Op::Shl if int => format!(
                "(({ty})(({ut}){} << (({ut}){} & {})))",
                s[0],
                s[1],
                bits - 1
            ),
            Op::Shr if int => format!("(({ty})({} >> ({} & {})))", s[0], s[1], bits - 1),
            Op::Max | Op::Min if float || int => {
                let (a, b) = (&s[0], &s[1]);
                let cmp = if n.op() == Op::Max { ">" } else { "<" };
                let m = if float {
                    format!("(({a} {cmp} {b}) | ({a} != {a}))")
                } else {
                    format!("({a} {cmp} {b})")
                };
                select(&m, a, b, t, w)
            }
            Op::Where if n.s(0).dtype().is_bool() && (float || int || t.is_bool()) => {
                let m = mask_as(s[0].clone(), ScalarType::I32, t, w);
                select(&m, &s[1], &s[2], t, w)
            }
            Op::Abs if float => {
                let (_, u) = same_width_ints(t);
                let mag = literal(ConstValue::max_of(same_width_ints(t).0), u);
                format!("(({ty})(({ut}){} & {mag}))", s[0])
            }
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round if float => {
                let f = rounding(n.op());
                format!("{ty}_{f}({})", s[0])
            }
            Op::Recip if float => {
                let one = literal(ConstValue::Float(1.0), t);
                format!("({} / {})", splat(&one, t, w), s[0])
            }
            Op::MulAcc if float && n.src().iter().all(|x| x.dtype() == d) => {
                format!("{ty}_fma({}, {}, {})", s[0], s[1], s[2])
            }
            _ => return Ok(None),
        };
        Ok(Some(e))
    }

    /// A cast of vectors of vector-element types or masks as one vector
    /// conversion (`__builtin_convertvector`, the same conversion as the
    /// scalar cast per lane), or `None` for scalars. Float → integer
    /// saturates and maps NaN to 0 like [`Ctx::cast`]: lanes outside the
    /// target's range convert a 0 and are replaced by its bounds.
    fn vector_cast(&self, n: &Arc<UOp>) -> Result<Option<String>, RenderError> {
        let (d, sd) = (n.dtype(), n.s(0).dtype());
        let lane_type = |t: ScalarType| t.is_bool() || morok_core::caps::is_vector_element(t);
        if !d.is_vector()
            || !sd.is_vector()
            || !lane_type(d.scalar_type())
            || !lane_type(sd.scalar_type())
        {
            return Ok(None);
        }
        let (from, to, w) = (sd.scalar_type(), d.scalar_type(), d.count());
        let a = self.name(n.s(0))?;
        let ty = self.vtype(n)?;
        Ok(Some(match (from, to) {
            (ScalarType::Bool, _) => format!("__builtin_convertvector(({a} & 1), {ty})"),
            (_, ScalarType::Bool) => {
                let zero = literal(ConstValue::zero(from), from);
                mask_as(format!("({a} != {zero})"), from, ScalarType::I32, w)
            }
            (f, t) if f.is_float() && t.is_int() => {
                let (lo, hi) = int_range_exclusive(t);
                let (lo, hi) = (
                    literal(ConstValue::Float(lo), f),
                    literal(ConstValue::Float(hi), f),
                );
                let inside = format!("(({a} > {lo}) & ({a} < {hi}))");
                let zero = splat(&literal(ConstValue::zero(f), f), f, w);
                let conv = format!(
                    "__builtin_convertvector({}, {ty})",
                    select(&inside, &a, &zero, f, w)
                );
                let max = splat(&literal(ConstValue::max_of(t), t), t, w);
                let min = splat(&literal(ConstValue::min_of(t), t), t, w);
                let high = mask_as(format!("({a} >= {hi})"), f, t, w);
                let low = mask_as(format!("({a} <= {lo})"), f, t, w);
                select(&low, &min, &select(&high, &max, &conv, t, w), t, w)
            }
            _ => format!("__builtin_convertvector({a}, {ty})"),
        }))
    }

    /// The scalar expression of ALU node `n` on the operand expressions
    /// `s`, with `ty` the C type of the result (one lane's, for vectors).
    fn scalar_alu(&self, n: &Arc<UOp>, s: Vec<String>, ty: &str) -> Result<String, RenderError> {
        let arg = |i: usize| -> Result<&str, RenderError> {
            s.get(i)
                .map(String::as_str)
                .ok_or_else(|| err(n, "missing operand"))
        };
        let t = n.dtype().scalar_type();
        let operand_t = n
            .src()
            .first()
            .map(|x| x.dtype().scalar_type())
            .unwrap_or(t);
        let u = wrap_type(t);
        let plain = self.kernel.no_overflow.contains(&n.id());
        let float = t.is_float();
        let int = t.is_int();
        let bits = t.bits();
        let e = match n.op() {
            Op::Add | Op::Sub | Op::Mul => {
                let sym = infix(n.op());
                let (a, b) = (arg(0)?, arg(1)?);
                if int && !plain {
                    format!("({ty})(({u}){a} {sym} ({u}){b})")
                } else {
                    round_half(format!("({a} {sym} {b})"), t)
                }
            }
            Op::MulAcc => {
                let (a, b, c) = (arg(0)?, arg(1)?, arg(2)?);
                if float {
                    round_half(format!("{}({a}, {b}, {c})", libm("fma", t)), t)
                } else if int {
                    format!("({ty})(({u}){a} * ({u}){b} + ({u}){c})")
                } else {
                    return Err(err(n, "MULACC on bool"));
                }
            }
            Op::Neg => {
                let a = arg(0)?;
                if int && !plain {
                    format!("({ty})(({u})0 - ({u}){a})")
                } else {
                    format!("(-{a})")
                }
            }
            Op::Fdiv if float => round_half(format!("({} / {})", arg(0)?, arg(1)?), t),
            Op::Recip if float => {
                let one = literal(ConstValue::Float(1.0), t);
                round_half(format!("({one} / {})", arg(0)?), t)
            }
            Op::Idiv if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                if plain {
                    format!("({a} / {b})")
                } else if t.is_signed_int() {
                    format!(
                        "({b} == 0 ? ({ty})0 : {b} == -1 ? ({ty})(({u})0 - ({u}){a}) : ({ty})({a} / {b}))"
                    )
                } else {
                    format!("({b} == 0 ? ({ty})0 : ({ty})({a} / {b}))")
                }
            }
            Op::Mod if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                if plain {
                    format!("({a} % {b})")
                } else if t.is_signed_int() {
                    format!("(({b} == 0 || {b} == -1) ? ({ty})0 : ({ty})({a} % {b}))")
                } else {
                    format!("({b} == 0 ? ({ty})0 : ({ty})({a} % {b}))")
                }
            }
            Op::Mod if float => {
                round_half(format!("{}({}, {})", libm("fmod", t), arg(0)?, arg(1)?), t)
            }
            Op::Max | Op::Min => {
                let (a, b) = (arg(0)?, arg(1)?);
                let cmp = if n.op() == Op::Max { ">" } else { "<" };
                if float {
                    // NaN-propagating; the NaN test outside the compare
                    // lets the C compiler turn the compare into a blend
                    // (`a > b || a != a` became data-dependent branches,
                    // mispredicted half the time on a relu of random data)
                    format!("({a} != {a} ? {a} : ({a} {cmp} {b} ? {a} : {b}))")
                } else {
                    format!("({a} {cmp} {b} ? {a} : {b})")
                }
            }
            Op::CmpLt | Op::CmpLe | Op::CmpEq | Op::CmpNe => {
                let sym = infix(n.op());
                format!("({} {sym} {})", arg(0)?, arg(1)?)
            }
            Op::And | Op::Or | Op::Xor => {
                let sym = infix(n.op());
                if float {
                    return Err(err(n, "bitwise op on floats"));
                }
                format!("({ty})({} {sym} {})", arg(0)?, arg(1)?)
            }
            Op::Shl if int => {
                let (a, b) = (arg(0)?, arg(1)?);
                format!("({ty})(({u}){a} << ({b} & {}))", bits - 1)
            }
            Op::Shr if int => format!("({ty})({} >> ({} & {}))", arg(0)?, arg(1)?, bits - 1),
            Op::Not => {
                if t.is_bool() {
                    format!("(!{})", arg(0)?)
                } else if int {
                    format!("({ty})(~{})", arg(0)?)
                } else {
                    return Err(err(n, "NOT on floats"));
                }
            }
            Op::Abs => {
                let a = arg(0)?;
                if float {
                    format!("{}({a})", libm("fabs", t))
                } else if t.is_signed_int() {
                    format!("({a} < 0 ? ({ty})(({u})0 - ({u}){a}) : {a})")
                } else {
                    a.to_string()
                }
            }
            Op::Floor | Op::Ceil | Op::Trunc | Op::Round => {
                let a = arg(0)?;
                if float {
                    let f = rounding(n.op());
                    format!("{}({a})", libm(f, t))
                } else {
                    a.to_string()
                }
            }
            Op::Sqrt
            | Op::Exp
            | Op::Exp2
            | Op::Log
            | Op::Log2
            | Op::Sin
            | Op::Cos
            | Op::Tan
            | Op::Tanh
            | Op::Erf
                if float =>
            {
                let f = match n.op() {
                    Op::Sqrt => "sqrt",
                    Op::Exp => "exp",
                    Op::Exp2 => "exp2",
                    Op::Log => "log",
                    Op::Log2 => "log2",
                    Op::Sin => "sin",
                    Op::Cos => "cos",
                    Op::Tan => "tan",
                    Op::Tanh => "tanh",
                    _ => "erf",
                };
                round_half(format!("{}({})", libm(f, t), arg(0)?), t)
            }
            Op::Rsqrt if float => {
                let one = literal(ConstValue::Float(1.0), t);
                round_half(format!("({one} / {}({}))", libm("sqrt", t), arg(0)?), t)
            }
            Op::Pow if float => {
                round_half(format!("{}({}, {})", libm("pow", t), arg(0)?, arg(1)?), t)
            }
            Op::Where => format!("({} ? {} : {})", arg(0)?, arg(1)?, arg(2)?),
            op => {
                return Err(err(
                    n,
                    format!("{} on {} operands is not renderable", op.name(), operand_t),
                ));
            }
        };
        Ok(e)
    }
}

impl Ctx<'_> {
    /// Whether the vector store `n` to a global buffer streams (the
    /// shared rule, [`crate::cpu::stream::streams`]); records its vector
    /// type when it does.
    fn streams(&mut self, n: &Arc<UOp>) -> bool {
        let name = vector_type(n.s(1).dtype());
        match name {
            Some(name) if crate::cpu::stream::streams(self.kernel, n) => {
                self.streamed.insert(name);
                true
            }
            _ => false,
        }
    }
}

impl Renderer for CRenderer {
    fn name(&self) -> &str {
        "c"
    }

    /// libm provides every transcendental function, and `fma`/`fmaf`
    /// render `MULACC` where the host has FMA (`-march=native` makes them
    /// one instruction; elsewhere `MULACC` is not native, so lowering keeps
    /// a multiply and an add rather than calling libm's slow `fma`). Vectors are as wide as the host's registers
    /// (detected at run time; kernels are compiled with `-march=native`
    /// for the host they run on).
    fn caps(&self) -> Caps {
        let mut caps = Caps::all_native().with_vector_bytes(crate::host::host_vector_bytes());
        if crate::host::host_has_fma() {
            caps.native = caps.native.with(Op::MulAcc);
        }
        caps.with_vector_masks()
    }

    fn render(&self, kernel: &LoweredKernel) -> Result<RenderedKernel, RenderError> {
        crate::cpu::codegen::check_entry_name(kernel, "C")?;
        let mut ctx = Ctx {
            kernel,
            names: HashMap::new(),
            guards: HashMap::new(),
            vars: HashMap::new(),
            next: 0,
            out: String::new(),
            depth: 1,
            streamed: Default::default(),
            in_register: super::registers::shared_fma_loads(kernel),
        };
        for n in &kernel.ops {
            ctx.op(n)?;
        }
        let mut src = String::from(PRELUDE);
        let vectors: std::collections::BTreeSet<(ScalarType, u16)> = kernel
            .ops
            .iter()
            .flat_map(|n| std::iter::once(n.dtype()).chain(n.src().iter().map(|x| x.dtype())))
            .map(DType::pointee)
            .filter(|d| vector_type(*d).is_some())
            .map(|d| (d.scalar_type(), d.count()))
            .collect();
        let mut all = std::collections::BTreeSet::new();
        for &(t, count) in &vectors {
            let (i, u) = same_width_ints(t);
            all.extend([
                (t, count),
                (i, count),
                (u, count),
                (ScalarType::Bool, count),
            ]);
        }
        for &(t, count) in &all {
            src.push_str(&vector_prelude(DType::scalar(t).vec(count)));
        }
        for &(t, count) in &all {
            if t.is_float() {
                src.push_str(&rounding_prelude(t, count));
            }
        }
        let fused: std::collections::BTreeSet<(ScalarType, u16)> = kernel
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
        if !ctx.in_register.is_empty() {
            src.push_str(super::registers::IN_REGISTER_PRELUDE);
        }
        if !ctx.streamed.is_empty() {
            src.push_str(STREAM_FENCE);
        }
        for name in &ctx.streamed {
            src.push_str(&stream_prelude(name));
        }
        let _ = writeln!(
            src,
            "\nvoid {}(void *const *bufs, const int64_t *sizes, const int64_t *vars, int64_t gstart, int64_t gend) {{",
            kernel.name
        );
        src.push_str("  (void)bufs; (void)sizes; (void)vars; (void)gstart; (void)gend;\n");
        src.push_str(&ctx.out);
        if !ctx.streamed.is_empty() {
            src.push_str("  morok_stream_fence();\n");
        }
        src.push_str("}\n");
        Ok(RenderedKernel {
            source: src,
            entry: kernel.name.clone(),
        })
    }
}

/// The storage dtype check the device uses before handing buffers over.
pub(crate) fn storable(d: DType) -> bool {
    !d.is_ptr() && !d.is_vector() && storage_type(d.scalar_type()).is_some()
}

/// The open interval `(lo, hi)` of floats that convert to the integer type
/// `t` without saturating: the casts render `x <= lo` and `x >= hi` as
/// `t`'s minimum and maximum.
fn int_range_exclusive(t: ScalarType) -> (f64, f64) {
    let bits = t.bits() as i32;
    if t.is_unsigned() {
        (-1.0, 2f64.powi(bits))
    } else {
        (-(2f64.powi(bits - 1)) - 1.0, 2f64.powi(bits - 1))
    }
}
