//! Conversion between typed host data and the registry's bytes.
//!
//! Every element type converts exactly: values go through `f64` (exact for
//! every type up to 32 bits and for all floats), and the 64-bit integer
//! types, which `f64` cannot hold exactly, are moved as themselves.

use morok_core::dtype::Element;
use morok_core::ScalarType;
use std::any::Any;

/// The bytes of `data` in the registry's layout for `T::SCALAR`.
pub fn encode<T: Element>(data: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * T::SCALAR.itemsize());
    for x in data {
        let any: &dyn Any = x;
        if let Some(v) = any.downcast_ref::<i64>() {
            out.extend_from_slice(&v.to_ne_bytes());
        } else if let Some(v) = any.downcast_ref::<u64>() {
            out.extend_from_slice(&v.to_ne_bytes());
        } else {
            push_f64(&mut out, T::SCALAR, x.to_f64());
        }
    }
    out
}

/// Appends `v`, converted to `dtype`, in the registry's layout.
fn push_f64(out: &mut Vec<u8>, dtype: ScalarType, v: f64) {
    match dtype {
        ScalarType::Bool => out.push((v != 0.0) as u8),
        ScalarType::I8 => out.extend_from_slice(&(v as i8).to_ne_bytes()),
        ScalarType::I16 => out.extend_from_slice(&(v as i16).to_ne_bytes()),
        ScalarType::I32 => out.extend_from_slice(&(v as i32).to_ne_bytes()),
        ScalarType::I64 | ScalarType::Index => out.extend_from_slice(&(v as i64).to_ne_bytes()),
        ScalarType::U8 => out.push(v as u8),
        ScalarType::U16 => out.extend_from_slice(&(v as u16).to_ne_bytes()),
        ScalarType::U32 => out.extend_from_slice(&(v as u32).to_ne_bytes()),
        ScalarType::U64 => out.extend_from_slice(&(v as u64).to_ne_bytes()),
        ScalarType::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_ne_bytes()),
        ScalarType::BF16 => out.extend_from_slice(&half::bf16::from_f64(v).to_ne_bytes()),
        ScalarType::F32 => out.extend_from_slice(&(v as f32).to_ne_bytes()),
        ScalarType::F64 => out.extend_from_slice(&v.to_ne_bytes()),
        ScalarType::Void => {}
    }
}

/// Reads `N` bytes at element `i`.
fn word<const N: usize>(bytes: &[u8], i: usize) -> [u8; N] {
    let mut w = [0u8; N];
    w.copy_from_slice(&bytes[i * N..(i + 1) * N]);
    w
}

/// The elements of `bytes` (holding `dtype`) as f64; 64-bit integers
/// beyond 2^53 are rounded.
pub fn decode_f64(dtype: ScalarType, bytes: &[u8]) -> Vec<f64> {
    let n = bytes.len() / dtype.itemsize().max(1);
    (0..n)
        .map(|i| match dtype {
            ScalarType::Bool => (bytes[i] != 0) as u8 as f64,
            ScalarType::I8 => bytes[i] as i8 as f64,
            ScalarType::U8 => bytes[i] as f64,
            ScalarType::I16 => i16::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::U16 => u16::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::I32 => i32::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::U32 => u32::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::I64 | ScalarType::Index => i64::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::U64 => u64::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::F16 => half::f16::from_ne_bytes(word(bytes, i)).to_f64(),
            ScalarType::BF16 => half::bf16::from_ne_bytes(word(bytes, i)).to_f64(),
            ScalarType::F32 => f32::from_ne_bytes(word(bytes, i)) as f64,
            ScalarType::F64 => f64::from_ne_bytes(word(bytes, i)),
            ScalarType::Void => 0.0,
        })
        .collect()
}

/// The elements of `bytes` as `T`; `bytes` must hold `T::SCALAR` values.
pub fn decode<T: Element>(bytes: &[u8]) -> Vec<T> {
    let n = bytes.len() / T::SCALAR.itemsize().max(1);
    let exact: Box<dyn Any> = match T::SCALAR {
        ScalarType::I64 => Box::new(
            (0..n)
                .map(|i| i64::from_ne_bytes(word(bytes, i)))
                .collect::<Vec<_>>(),
        ),
        ScalarType::U64 => Box::new(
            (0..n)
                .map(|i| u64::from_ne_bytes(word(bytes, i)))
                .collect::<Vec<_>>(),
        ),
        _ => Box::new(()),
    };
    match exact.downcast::<Vec<T>>() {
        Ok(v) => *v,
        Err(_) => decode_f64(T::SCALAR, bytes)
            .into_iter()
            .map(T::from_f64)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_are_exact() {
        let big = [i64::MIN, -1, (1 << 60) + 1];
        assert_eq!(decode::<i64>(&encode(&big)), big);
        let ubig = [u64::MAX, 3];
        assert_eq!(decode::<u64>(&encode(&ubig)), ubig);
        let f = [0.1f32, -0.0, f32::INFINITY];
        assert_eq!(decode::<f32>(&encode(&f)), f);
        let h = [half::f16::from_f32(0.333), half::f16::MAX];
        assert_eq!(decode::<half::f16>(&encode(&h)), h);
        let b = [true, false, true];
        assert_eq!(encode(&b), [1, 0, 1]);
        assert_eq!(decode::<bool>(&encode(&b)), b);
        let i8s = [-128i8, 127];
        assert_eq!(decode_f64(ScalarType::I8, &encode(&i8s)), [-128.0, 127.0]);
    }
}
