//! Data types: scalars, vectors of scalars, and pointers with an address space.
//!
//! A [`DType`] is a small `Copy` value: a [`ScalarType`], a vector width
//! (`count`, 1 for scalars) and, for pointers, the [`AddrSpace`] the pointee
//! lives in. `Index` is the abstract integer type of index arithmetic; it is
//! lowered to `i32` or `i64` before code generation.
//!
//! Type promotion follows the lattice PyTorch and NumPy users expect
//! (see [`ScalarType::promote`]).

use std::fmt;

/// The element type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// Boolean (stored as one byte).
    Bool,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE half precision (via the `half` crate).
    F16,
    /// bfloat16 (via the `half` crate).
    BF16,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// The abstract integer type of index arithmetic (lowered to i32/i64).
    Index,
    /// No value (the type of STORE, SINK, END, ...).
    Void,
}

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddrSpace {
    /// Device memory visible to every thread (kernel arguments).
    Global,
    /// Workgroup-shared memory.
    Local,
    /// Per-thread registers (accumulators).
    Reg,
}

/// A value type: scalar, vector (`count > 1`) or pointer (`ptr` set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DType {
    scalar: ScalarType,
    count: u16,
    ptr: Option<AddrSpace>,
}

impl ScalarType {
    /// Every scalar type that can hold data (all but `Index` and `Void`).
    pub const ALL_DATA: [ScalarType; 13] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Size of one element in bytes (`Index` counts as 8, `Void` as 0).
    pub const fn itemsize(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::BF16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 | ScalarType::Index => 8,
            ScalarType::Void => 0,
        }
    }

    /// Bit width of the type.
    pub const fn bits(self) -> u32 {
        (self.itemsize() * 8) as u32
    }

    /// The type sums and products of this type accumulate in: small
    /// integers widen to 32 bits, bools count as `i32`, half floats
    /// accumulate in `f32` (so a sum of many half values loses no more
    /// than its final rounding; PyTorch does the same).
    pub const fn sum_accumulator(self) -> ScalarType {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::I16 => ScalarType::I32,
            ScalarType::U8 | ScalarType::U16 => ScalarType::U32,
            ScalarType::F16 | ScalarType::BF16 => ScalarType::F32,
            t => t,
        }
    }

    /// True for f16, bf16, f32, f64.
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// True for every integer type, `Index` included (not `Bool`).
    pub const fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned()
    }

    /// True for i8..i64 and `Index`.
    pub const fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::I8
                | ScalarType::I16
                | ScalarType::I32
                | ScalarType::I64
                | ScalarType::Index
        )
    }

    /// True for u8..u64.
    pub const fn is_unsigned(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
        )
    }

    /// True for `Bool`.
    pub const fn is_bool(self) -> bool {
        matches!(self, ScalarType::Bool)
    }

    /// Smallest representable value, as f64 (floats: `-inf`).
    pub fn min_f64(self) -> f64 {
        match self {
            ScalarType::Bool | ScalarType::Void => 0.0,
            t if t.is_unsigned() => 0.0,
            t if t.is_float() => f64::NEG_INFINITY,
            t => -(2f64.powi(t.bits() as i32 - 1)),
        }
    }

    /// Largest representable value, as f64 (floats: `inf`).
    pub fn max_f64(self) -> f64 {
        match self {
            ScalarType::Bool => 1.0,
            ScalarType::Void => 0.0,
            t if t.is_unsigned() => 2f64.powi(t.bits() as i32) - 1.0,
            t if t.is_float() => f64::INFINITY,
            t => 2f64.powi(t.bits() as i32 - 1) - 1.0,
        }
    }

    /// Smallest value of an integer type as i128 (bool: 0).
    pub fn min_int(self) -> i128 {
        match self {
            t if t.is_signed_int() => -(1i128 << (t.bits() - 1)),
            _ => 0,
        }
    }

    /// Largest value of an integer type as i128 (bool: 1).
    pub fn max_int(self) -> i128 {
        match self {
            ScalarType::Bool => 1,
            t if t.is_signed_int() => (1i128 << (t.bits() - 1)) - 1,
            t if t.is_unsigned() => (1i128 << t.bits()) - 1,
            _ => 0,
        }
    }

    /// Rank in the promotion lattice's category: bool < int < float.
    fn category(self) -> u8 {
        match self {
            ScalarType::Bool => 0,
            t if t.is_int() => 1,
            _ => 2,
        }
    }

    /// The type both operands are converted to in a binary op
    /// (NumPy/PyTorch rules for two tensors):
    ///
    /// - bool < integers < floats: the higher category wins;
    /// - two signed or two unsigned ints: the wider;
    /// - signed and unsigned: the signed type wide enough for both
    ///   (`u8 + i8 → i16`, `u32 + i32 → i64`); `u64` with any signed int
    ///   gives `f64` as NumPy does (PyTorch has no u64 arithmetic);
    /// - floats: the wider; `f16` with `bf16` gives `f32`;
    /// - `Index` with any int stays `Index`.
    pub fn promote(self, other: ScalarType) -> ScalarType {
        use ScalarType::*;
        if self == other {
            return self;
        }
        if self == Index || other == Index {
            let o = if self == Index { other } else { self };
            return if o.is_float() { o } else { Index };
        }
        let (ca, cb) = (self.category(), other.category());
        if ca != cb {
            return if ca > cb { self } else { other };
        }
        match ca {
            1 => {
                if self.is_signed_int() == other.is_signed_int() {
                    if self.bits() >= other.bits() {
                        self
                    } else {
                        other
                    }
                } else {
                    let (s, u) = if self.is_signed_int() {
                        (self, other)
                    } else {
                        (other, self)
                    };
                    if s.bits() > u.bits() {
                        s
                    } else {
                        match u.bits() {
                            8 => I16,
                            16 => I32,
                            32 => I64,
                            _ => F64,
                        }
                    }
                }
            }
            2 => {
                if matches!((self, other), (F16, BF16) | (BF16, F16)) {
                    F32
                } else if self.bits() >= other.bits() {
                    self
                } else {
                    other
                }
            }
            _ => self,
        }
    }

    /// The type an integer or bool tensor is converted to by an op that
    /// needs a float (`exp`, `/`, `mean`, ...): f32, as in PyTorch.
    pub fn to_float(self) -> ScalarType {
        if self.is_float() {
            self
        } else {
            ScalarType::F32
        }
    }

    /// The C spelling of the scalar type.
    pub const fn c_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "signed char",
            ScalarType::I16 => "short",
            ScalarType::I32 => "int",
            ScalarType::I64 => "long long",
            ScalarType::U8 => "unsigned char",
            ScalarType::U16 => "unsigned short",
            ScalarType::U32 => "unsigned int",
            ScalarType::U64 => "unsigned long long",
            ScalarType::F16 => "_Float16",
            ScalarType::BF16 => "__bf16",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
            ScalarType::Index => "long long",
            ScalarType::Void => "void",
        }
    }

    /// Short name used in IR dumps (`f32`, `i64`, `index`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::Index => "index",
            ScalarType::Void => "void",
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! dtype_consts {
    ($($name:ident => $s:ident),* $(,)?) => {
        $(
            #[doc = concat!("The scalar `", stringify!($s), "` type.")]
            pub const $name: DType = DType::scalar(ScalarType::$s);
        )*
    };
}

impl DType {
    dtype_consts! {
        BOOL => Bool, I8 => I8, I16 => I16, I32 => I32, I64 => I64,
        U8 => U8, U16 => U16, U32 => U32, U64 => U64,
        F16 => F16, BF16 => BF16, F32 => F32, F64 => F64,
        INDEX => Index, VOID => Void,
    }

    /// A scalar type.
    pub const fn scalar(s: ScalarType) -> DType {
        DType {
            scalar: s,
            count: 1,
            ptr: None,
        }
    }

    /// A vector of `count` elements of this type's scalar.
    pub const fn vec(self, count: u16) -> DType {
        DType {
            scalar: self.scalar,
            count,
            ptr: self.ptr,
        }
    }

    /// A pointer to this (scalar or vector) type in the given address space.
    pub const fn ptr(self, addr: AddrSpace) -> DType {
        DType {
            scalar: self.scalar,
            count: self.count,
            ptr: Some(addr),
        }
    }

    /// The type pointed to (identity for non-pointers).
    pub const fn pointee(self) -> DType {
        DType {
            scalar: self.scalar,
            count: self.count,
            ptr: None,
        }
    }

    /// The element type (vector width and pointer-ness dropped).
    pub const fn base(self) -> DType {
        DType::scalar(self.scalar)
    }

    /// The scalar element type.
    pub const fn scalar_type(self) -> ScalarType {
        self.scalar
    }

    /// Vector width (1 for scalars).
    pub const fn count(self) -> u16 {
        self.count
    }

    /// The address space for pointers.
    pub const fn addr_space(self) -> Option<AddrSpace> {
        self.ptr
    }

    /// True for pointer types.
    pub const fn is_ptr(self) -> bool {
        self.ptr.is_some()
    }

    /// True for vector (count > 1) value types.
    pub const fn is_vector(self) -> bool {
        self.count > 1
    }

    /// Size in bytes of one value (pointers: 8).
    pub const fn itemsize(self) -> usize {
        if self.ptr.is_some() {
            8
        } else {
            self.scalar.itemsize() * self.count as usize
        }
    }

    /// True if the element type is a float (and this is not a pointer).
    pub const fn is_float(self) -> bool {
        self.ptr.is_none() && self.scalar.is_float()
    }

    /// True if the element type is an integer (and this is not a pointer).
    pub const fn is_int(self) -> bool {
        self.ptr.is_none() && self.scalar.is_int()
    }

    /// True if the element type is unsigned (and this is not a pointer).
    pub const fn is_unsigned(self) -> bool {
        self.ptr.is_none() && self.scalar.is_unsigned()
    }

    /// True if the element type is bool (and this is not a pointer).
    pub const fn is_bool(self) -> bool {
        self.ptr.is_none() && self.scalar.is_bool()
    }

    /// Binary-op promotion of two value types (see [`ScalarType::promote`]).
    pub fn promote(self, other: DType) -> DType {
        DType::scalar(self.scalar.promote(other.scalar)).vec(self.count.max(other.count))
    }
}

impl From<ScalarType> for DType {
    fn from(s: ScalarType) -> DType {
        DType::scalar(s)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = if self.count > 1 {
            format!("<{} x {}>", self.count, self.scalar)
        } else {
            self.scalar.to_string()
        };
        match self.ptr {
            None => f.write_str(&inner),
            Some(AddrSpace::Global) => write!(f, "Ptr<{inner}>"),
            Some(AddrSpace::Local) => write!(f, "LocalPtr<{inner}>"),
            Some(AddrSpace::Reg) => write!(f, "RegPtr<{inner}>"),
        }
    }
}

/// Rust element types that a buffer can hold, tied to their [`ScalarType`].
pub trait Element: Copy + Send + Sync + 'static + fmt::Debug {
    /// The scalar type of this Rust type.
    const SCALAR: ScalarType;
    /// Converts to f64 (for the reference evaluator and comparisons).
    fn to_f64(self) -> f64;
    /// Converts from f64 with Rust `as` semantics (saturating for ints).
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($($t:ty => $s:ident),* $(,)?) => {$(
        impl Element for $t {
            const SCALAR: ScalarType = ScalarType::$s;
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
         u32 => U32, u64 => U64, f32 => F32, f64 => F64);

impl Element for bool {
    const SCALAR: ScalarType = ScalarType::Bool;
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}

impl Element for half::f16 {
    const SCALAR: ScalarType = ScalarType::F16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(v: f64) -> Self {
        half::f16::from_f64(v)
    }
}

impl Element for half::bf16 {
    const SCALAR: ScalarType = ScalarType::BF16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(v: f64) -> Self {
        half::bf16::from_f64(v)
    }
}

#[cfg(test)]
mod tests {
    use super::ScalarType::*;
    use super::*;

    #[test]
    fn itemsizes_and_bounds() {
        assert_eq!(F16.itemsize(), 2);
        assert_eq!(DType::F32.vec(4).itemsize(), 16);
        assert_eq!(DType::F32.ptr(AddrSpace::Global).itemsize(), 8);
        assert_eq!(I8.min_int(), -128);
        assert_eq!(U16.max_int(), 65535);
        assert_eq!(I64.max_f64(), 2f64.powi(63));
        assert!(F32.min_f64().is_infinite());
    }

    #[test]
    fn promotion_lattice() {
        assert_eq!(Bool.promote(I8), I8);
        assert_eq!(U8.promote(I8), I16);
        assert_eq!(U32.promote(I32), I64);
        assert_eq!(U64.promote(I64), F64);
        assert_eq!(I32.promote(F16), F16);
        assert_eq!(F16.promote(BF16), F32);
        assert_eq!(F32.promote(F64), F64);
        assert_eq!(I16.promote(I64), I64);
        assert_eq!(U8.promote(U32), U32);
        assert_eq!(Index.promote(I32), Index);
        // Symmetric on every pair.
        for a in ScalarType::ALL_DATA {
            for b in ScalarType::ALL_DATA {
                assert_eq!(a.promote(b), b.promote(a), "{a} {b}");
            }
        }
    }

    #[test]
    fn display() {
        assert_eq!(DType::F32.vec(4).to_string(), "<4 x f32>");
        assert_eq!(DType::F32.ptr(AddrSpace::Global).to_string(), "Ptr<f32>");
    }
}
