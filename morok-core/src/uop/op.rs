//! The operation set (the seeds' "Op Bestiary") and the data a node carries
//! besides its operands ([`Arg`]).

use crate::dtype::ScalarType;
use smallvec::SmallVec;
use std::fmt;
use std::hash::{Hash, Hasher};

macro_rules! op_table {
    ($( $(#[$doc:meta])* $name:ident = $group:ident ),* $(,)?) => {
        /// Every operation a [`UOp`](crate::UOp) can perform, at every level of
        /// abstraction: tensor movement, reductions, memory, loops, kernels,
        /// vectors, and scalar ALU instructions.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Op { $( $(#[$doc])* $name ),* }

        impl Op {
            /// Every op, in declaration order.
            pub const ALL: &'static [Op] = &[$(Op::$name),*];
            /// Number of ops (the size of per-op dispatch tables).
            pub const COUNT: usize = Op::ALL.len();

            /// The op's group (what kind of operation it is).
            pub const fn group(self) -> OpGroup {
                match self { $(Op::$name => OpGroup::$group),* }
            }

            /// The op's name as written in `patterns!` (`Add`, `ReduceAxis`, ...).
            pub const fn name(self) -> &'static str {
                match self { $(Op::$name => stringify!($name)),* }
            }

            /// Looks an op up by its `patterns!` name.
            pub fn from_name(name: &str) -> Option<Op> {
                match name { $(stringify!($name) => Some(Op::$name),)* _ => None }
            }
        }
    };
}

impl Op {
    /// The name used in IR dumps: upper snake case (`REDUCE_AXIS`).
    pub fn dump_name(self) -> String {
        let mut out = String::new();
        for (i, c) in self.name().chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        out
    }
}

macro_rules! op_groups {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// Broad category of an [`Op`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum OpGroup { $( $(#[$doc])* $name ),* }
    };
}

// The op list lives in the `patterns!` crate so the macro can check op
// names at expansion time; the crate hands it over as tokens, which the
// two macros above turn into `OpGroup` and `Op`.
morok_patterns::op_table_source!();

/// The reduction performed by REDUCE_AXIS / REDUCE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceOp {
    /// Sum (identity 0).
    Add,
    /// Product (identity 1).
    Mul,
    /// Maximum (identity: the type's minimum).
    Max,
    /// Minimum (identity: the type's maximum).
    Min,
}

impl ReduceOp {
    /// The binary ALU op that combines two partial results.
    pub const fn alu(self) -> Op {
        match self {
            ReduceOp::Add => Op::Add,
            ReduceOp::Mul => Op::Mul,
            ReduceOp::Max => Op::Max,
            ReduceOp::Min => Op::Min,
        }
    }

    /// The identity element for a scalar type.
    pub fn identity(self, t: ScalarType) -> ConstValue {
        match self {
            ReduceOp::Add => ConstValue::zero(t),
            ReduceOp::Mul => ConstValue::one(t),
            ReduceOp::Max => ConstValue::min_of(t),
            ReduceOp::Min => ConstValue::max_of(t),
        }
    }
}

/// How a RANGE is scheduled; lower priority nests further out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AxisType {
    /// Kernel boundary marker.
    Outer,
    /// Sequential loop.
    Loop,
    /// Grid parallelism (GPU blocks).
    Global,
    /// CPU thread parallelism.
    Thread,
    /// Sub-group parallelism.
    Warp,
    /// Workgroup parallelism (GPU threads).
    Local,
    /// Two-stage reduction through shared memory.
    GroupReduce,
    /// Vectorized (SIMD lanes).
    Upcast,
    /// Reduction loop (accumulator).
    Reduce,
    /// Unrolled loop.
    Unroll,
}

impl AxisType {
    /// Nesting priority: lower values are outer loops.
    pub const fn priority(self) -> i8 {
        match self {
            AxisType::Outer => -2,
            AxisType::Loop => -1,
            AxisType::Global | AxisType::Thread => 0,
            AxisType::Warp => 1,
            AxisType::Local | AxisType::GroupReduce => 2,
            AxisType::Upcast => 3,
            AxisType::Reduce => 4,
            AxisType::Unroll => 5,
        }
    }
}

/// A constant value. Floats compare and hash by bit pattern, so NaN
/// constants intern correctly and `0.0` and `-0.0` stay distinct.
#[derive(Clone, Copy, Debug)]
pub enum ConstValue {
    /// A boolean.
    Bool(bool),
    /// A signed integer (also used for `Index`).
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (any float dtype, stored as f64).
    Float(f64),
}

impl PartialEq for ConstValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ConstValue::Bool(a), ConstValue::Bool(b)) => a == b,
            (ConstValue::Int(a), ConstValue::Int(b)) => a == b,
            (ConstValue::UInt(a), ConstValue::UInt(b)) => a == b,
            (ConstValue::Float(a), ConstValue::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}
impl Eq for ConstValue {}

impl Hash for ConstValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match *self {
            ConstValue::Bool(b) => b.hash(state),
            ConstValue::Int(i) => i.hash(state),
            ConstValue::UInt(u) => u.hash(state),
            ConstValue::Float(f) => f.to_bits().hash(state),
        }
    }
}

impl ConstValue {
    /// Zero of a scalar type.
    pub fn zero(t: ScalarType) -> ConstValue {
        ConstValue::from_f64(0.0, t)
    }

    /// One of a scalar type.
    pub fn one(t: ScalarType) -> ConstValue {
        ConstValue::from_f64(1.0, t)
    }

    /// The smallest value of a type (floats: `-inf`).
    pub fn min_of(t: ScalarType) -> ConstValue {
        if t.is_float() {
            ConstValue::Float(f64::NEG_INFINITY)
        } else if t.is_unsigned() {
            ConstValue::UInt(0)
        } else if t.is_bool() {
            ConstValue::Bool(false)
        } else {
            ConstValue::Int(t.min_int() as i64)
        }
    }

    /// The largest value of a type (floats: `inf`).
    pub fn max_of(t: ScalarType) -> ConstValue {
        if t.is_float() {
            ConstValue::Float(f64::INFINITY)
        } else if t.is_unsigned() {
            ConstValue::UInt(t.max_int() as u64)
        } else if t.is_bool() {
            ConstValue::Bool(true)
        } else {
            ConstValue::Int(t.max_int() as i64)
        }
    }

    /// Converts an f64 to the canonical constant of type `t`: floats are
    /// rounded to the type's precision, integers truncate toward zero and
    /// wrap to the type's width (as a C cast of an in-range value does).
    pub fn from_f64(v: f64, t: ScalarType) -> ConstValue {
        match t {
            ScalarType::Bool => ConstValue::Bool(v != 0.0),
            t if t.is_float() => ConstValue::Float(round_to_float(v, t)),
            t if t.is_unsigned() => ConstValue::UInt(wrap_u(v as i128, t)),
            t => ConstValue::Int(wrap_i(v as i128, t)),
        }
    }

    /// Builds the canonical constant of type `t` from an integer, wrapping.
    pub fn from_i128(v: i128, t: ScalarType) -> ConstValue {
        match t {
            ScalarType::Bool => ConstValue::Bool(v != 0),
            t if t.is_float() => ConstValue::Float(round_to_float(v as f64, t)),
            t if t.is_unsigned() => ConstValue::UInt(wrap_u(v, t)),
            t => ConstValue::Int(wrap_i(v, t)),
        }
    }

    /// The value as f64 (bool: 0/1).
    pub fn as_f64(self) -> f64 {
        match self {
            ConstValue::Bool(b) => b as u8 as f64,
            ConstValue::Int(i) => i as f64,
            ConstValue::UInt(u) => u as f64,
            ConstValue::Float(f) => f,
        }
    }

    /// The value as i128 when it is a bool or integer.
    pub fn as_i128(self) -> Option<i128> {
        match self {
            ConstValue::Bool(b) => Some(b as i128),
            ConstValue::Int(i) => Some(i as i128),
            ConstValue::UInt(u) => Some(u as i128),
            ConstValue::Float(_) => None,
        }
    }

    /// The value as i64 when it is an integer that fits.
    pub fn as_i64(self) -> Option<i64> {
        self.as_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// True if the value is zero (or false).
    pub fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    /// True if the value is one (or true).
    pub fn is_one(self) -> bool {
        self.as_f64() == 1.0
    }

    /// Truthiness (non-zero).
    pub fn truthy(self) -> bool {
        match self {
            ConstValue::Float(f) => f != 0.0,
            v => v.as_i128() != Some(0),
        }
    }
}

impl fmt::Display for ConstValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstValue::Bool(b) => write!(f, "{b}"),
            ConstValue::Int(i) => write!(f, "{i}"),
            ConstValue::UInt(u) => write!(f, "{u}"),
            ConstValue::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// Wraps an integer to a signed type's width (two's complement).
pub fn wrap_i(v: i128, t: ScalarType) -> i64 {
    let bits = t.bits();
    if bits >= 64 {
        v as i64
    } else {
        let shift = 128 - bits;
        ((v << shift) >> shift) as i64
    }
}

/// Wraps an integer to an unsigned type's width.
pub fn wrap_u(v: i128, t: ScalarType) -> u64 {
    let bits = t.bits();
    if bits >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

/// Rounds an f64 to the precision of a float type.
pub fn round_to_float(v: f64, t: ScalarType) -> f64 {
    match t {
        ScalarType::F16 => half::f16::from_f64(v).to_f64(),
        ScalarType::BF16 => half::bf16::from_f64(v).to_f64(),
        ScalarType::F32 => v as f32 as f64,
        _ => v,
    }
}

/// The extra data a node carries besides its operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    /// Nothing.
    None,
    /// A constant (CONST).
    Const(ConstValue),
    /// A list of constants (VCONST).
    Consts(SmallVec<[ConstValue; 4]>),
    /// An integer (slots, offsets, unique ids).
    Int(i64),
    /// A shape (RESHAPE, EXPAND).
    Shape(SmallVec<[usize; 4]>),
    /// A list of axes or lanes (PERMUTE, FLIP, GEP).
    Axes(SmallVec<[usize; 4]>),
    /// Pairs of integers (PAD, SHRINK, UNROLL, CONTRACT).
    Pairs(SmallVec<[(i64, i64); 4]>),
    /// A tensor-level reduction and its axes (REDUCE_AXIS).
    ReduceAxis(ReduceOp, SmallVec<[usize; 4]>),
    /// A loop-level reduction (REDUCE, ALLREDUCE).
    Reduce(ReduceOp),
    /// A loop (RANGE): identifier and scheduling type.
    Range {
        /// Identifier that keeps otherwise equal loops distinct.
        axis_id: usize,
        /// How the loop is scheduled.
        axis_type: AxisType,
    },
    /// A device buffer (BUFFER): unique id and element count.
    Buffer {
        /// Unique buffer id.
        id: u64,
        /// Number of elements.
        size: usize,
    },
    /// Materialization options (BUFFERIZE): address space and whether the
    /// result is a realized output.
    Bufferize {
        /// Memory the buffer lives in.
        addr: crate::dtype::AddrSpace,
        /// Buffer id for an output the user asked for, if any.
        output: Option<u64>,
        /// True when the scheduler may inline the computation into its
        /// consumers instead of materializing it (a heuristic realization,
        /// as opposed to a root or an explicit CONTIGUOUS).
        removable: bool,
    },
    /// A symbolic variable (DEFINE_VAR): name and inclusive bounds.
    Var {
        /// The variable's name.
        name: String,
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A name (SPECIAL, DEVICE, WMMA, kernel names).
    Str(String),
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::None => Ok(()),
            Arg::Const(c) => write!(f, "{c}"),
            Arg::Consts(c) => write!(f, "{c:?}"),
            Arg::Int(i) => write!(f, "{i}"),
            Arg::Shape(s) => write!(f, "shape={:?}", s.as_slice()),
            Arg::Axes(a) => write!(f, "axes={:?}", a.as_slice()),
            Arg::Pairs(p) => write!(f, "{:?}", p.as_slice()),
            Arg::ReduceAxis(op, axes) => write!(f, "{op:?}, axes={:?}", axes.as_slice()),
            Arg::Reduce(op) => write!(f, "{op:?}"),
            Arg::Range { axis_id, axis_type } => write!(f, "axis={axis_id}, {axis_type:?}"),
            Arg::Buffer { id, size } => write!(f, "id={id}, size={size}"),
            Arg::Bufferize {
                addr,
                output,
                removable,
            } => write!(f, "{addr:?}, output={output:?}, removable={removable}"),
            Arg::Var { name, min, max } => write!(f, "{name}, {min}..={max}"),
            Arg::Str(s) => f.write_str(s),
        }
    }
}
