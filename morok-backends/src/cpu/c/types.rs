//! C types and literals of the C renderer: the value, storage and vector
//! typedef of each dtype, constants as C literals.

use super::render::err;
use morok_core::dtype::{DType, ScalarType};
use morok_core::render::RenderError;
use morok_core::uop::{ConstValue, UOp};

/// The C type of a value of scalar type `t` (halves compute in `float`).
pub(super) fn value_type(t: ScalarType) -> Option<&'static str> {
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
pub(crate) fn storage_type(t: ScalarType) -> Option<&'static str> {
    match t {
        ScalarType::Bool => Some("uint8_t"),
        ScalarType::F16 | ScalarType::BF16 => Some("uint16_t"),
        t => value_type(t),
    }
}

/// The unsigned type wrapping arithmetic on `t` is done in.
pub(super) fn wrap_type(t: ScalarType) -> &'static str {
    if t.bits() <= 32 {
        "uint32_t"
    } else {
        "uint64_t"
    }
}

/// The libm name of a float function for `t` (`expf` / `exp`).
pub(super) fn libm(base: &str, t: ScalarType) -> String {
    if t == ScalarType::F64 {
        base.to_string()
    } else {
        format!("{base}f")
    }
}

/// A C literal for a constant of scalar type `t`.
pub(super) fn literal(c: ConstValue, t: ScalarType) -> String {
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
pub(super) fn vector_type(d: DType) -> Option<String> {
    let t = d.scalar_type();
    if d.is_vector() && t == ScalarType::Bool {
        return Some(mask_type(d.count()));
    }
    (d.is_vector() && morok_core::caps::is_vector_element(t))
        .then(|| format!("morok_{}x{}", t.name(), d.count()))
}

/// The C type of a `bool` vector of `w` lanes: a mask of 32-bit lanes,
/// all ones for true and 0 for false (what vector comparisons produce).
pub(super) fn mask_type(w: u16) -> String {
    format!("morok_b32x{w}")
}

/// The vector typedef of `w` lanes of `t`.
pub(super) fn vec_of(t: ScalarType, w: u16) -> String {
    vector_type(DType::scalar(t).vec(w)).unwrap_or_default()
}

/// The signed and the unsigned integer type as wide as `t`.
pub(super) fn same_width_ints(t: ScalarType) -> (ScalarType, ScalarType) {
    if t.itemsize() == 8 {
        (ScalarType::I64, ScalarType::U64)
    } else {
        (ScalarType::I32, ScalarType::U32)
    }
}

/// The C type of a value of dtype `d` (of node `n`, for errors): a
/// scalar type or a vector typedef.
pub(super) fn c_type(n: &UOp, d: DType) -> Result<String, RenderError> {
    if d.is_vector() {
        return vector_type(d).ok_or_else(|| err(n, "no C vector type for this dtype"));
    }
    value_type(d.scalar_type())
        .map(str::to_string)
        .ok_or_else(|| err(n, "no C type for this dtype"))
}

/// The storage dtype check the device uses before handing buffers over.
pub(crate) fn storable(d: DType) -> bool {
    !d.is_ptr() && !d.is_vector() && storage_type(d.scalar_type()).is_some()
}

/// The open interval `(lo, hi)` of floats that convert to the integer type
/// `t` without saturating: the casts render `x <= lo` and `x >= hi` as
/// `t`'s minimum and maximum.
pub(super) fn int_range_exclusive(t: ScalarType) -> (f64, f64) {
    let bits = t.bits() as i32;
    if t.is_unsigned() {
        (-1.0, 2f64.powi(bits))
    } else {
        (-(2f64.powi(bits - 1)) - 1.0, 2f64.powi(bits - 1))
    }
}
