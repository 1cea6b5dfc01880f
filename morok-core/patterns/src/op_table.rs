// The op set, defined once: `morok-patterns` includes this file to check
// op names and operand counts in `patterns!` at expansion time, and emits
// it through the `op_table_source!` proc macro, from which `morok-core`
// generates its `OpGroup` and `Op` enums. Each user defines `op_groups!`
// and `op_table!` first. One entry per group and per op: doc comments,
// then `Group` / `Name = Group`.

op_groups! {
    /// One-operand ALU op.
    Unary,
    /// Two-operand ALU op.
    Binary,
    /// Three-operand ALU op.
    Ternary,
    /// Tensor-level view change (becomes index arithmetic in rangeify).
    Movement,
    /// Reductions at any level.
    Reduce,
    /// Buffers, indexing, loads and stores.
    Memory,
    /// Loops, branches, kernels and ordering.
    Control,
    /// Vector construction and lane access.
    Vector,
    /// Definitions: arguments, variables, registers, constants.
    Define,
    /// Type conversions.
    Cast,
    /// Tensor-level markers (contiguous, copy, detach, ...).
    Tensor,
}

op_table! {
    // ---- unary ALU ----
    /// `-x`.
    Neg = Unary,
    /// Logical / bitwise not.
    Not = Unary,
    /// `|x|`.
    Abs = Unary,
    /// Square root.
    Sqrt = Unary,
    /// `1 / sqrt(x)`.
    Rsqrt = Unary,
    /// `1 / x`.
    Recip = Unary,
    /// `e^x`.
    Exp = Unary,
    /// `2^x`.
    Exp2 = Unary,
    /// Natural logarithm.
    Log = Unary,
    /// Base-2 logarithm.
    Log2 = Unary,
    /// Sine.
    Sin = Unary,
    /// Cosine.
    Cos = Unary,
    /// Tangent.
    Tan = Unary,
    /// Hyperbolic tangent.
    Tanh = Unary,
    /// Error function.
    Erf = Unary,
    /// Round toward negative infinity.
    Floor = Unary,
    /// Round toward positive infinity.
    Ceil = Unary,
    /// Round half to even.
    Round = Unary,
    /// Round toward zero.
    Trunc = Unary,
    /// NaN test (bool result).
    IsNan = Unary,
    // ---- binary ALU ----
    /// `a + b` (wrapping for ints).
    Add = Binary,
    /// `a - b` (wrapping for ints).
    Sub = Binary,
    /// `a * b` (wrapping for ints).
    Mul = Binary,
    /// Integer division truncating toward zero (C semantics).
    Idiv = Binary,
    /// Float division.
    Fdiv = Binary,
    /// Remainder with the sign of the dividend (C semantics).
    Mod = Binary,
    /// Maximum (NaN-propagating for floats).
    Max = Binary,
    /// Minimum (NaN-propagating for floats).
    Min = Binary,
    /// `a ^ b` as power (floats).
    Pow = Binary,
    /// `a < b` (bool result).
    CmpLt = Binary,
    /// `a <= b` (bool result).
    CmpLe = Binary,
    /// `a == b` (bool result).
    CmpEq = Binary,
    /// `a != b` (bool result).
    CmpNe = Binary,
    /// Bitwise / logical and.
    And = Binary,
    /// Bitwise / logical or.
    Or = Binary,
    /// Bitwise / logical xor.
    Xor = Binary,
    /// Shift left.
    Shl = Binary,
    /// Shift right (arithmetic for signed).
    Shr = Binary,
    /// Counter-based random bits: threefry-2x32 of (counter, key).
    Threefry = Binary,
    // ---- ternary ALU ----
    /// `cond ? a : b`.
    Where = Ternary,
    /// `a * b + c` (fused multiply-add).
    MulAcc = Ternary,
    // ---- casts ----
    /// Value conversion.
    Cast = Cast,
    /// Reinterpretation of the bits.
    Bitcast = Cast,
    // ---- movement (tensor level) ----
    /// New shape, same element order. Arg: `Shape`.
    Reshape = Movement,
    /// Axis permutation. Arg: `Axes`.
    Permute = Movement,
    /// Broadcast size-1 axes. Arg: `Shape`.
    Expand = Movement,
    /// Pad with zeros (value via WHERE). Arg: `Pairs` (before, after).
    Pad = Movement,
    /// Keep `[begin, end)` on each axis. Arg: `Pairs`.
    Shrink = Movement,
    /// Reverse the listed axes. Arg: `Axes`.
    Flip = Movement,
    // ---- reductions ----
    /// Tensor-level reduction over axes. Arg: `ReduceAxis`.
    ReduceAxis = Reduce,
    /// Loop-level reduction over the RANGE operands after the first. Arg: `Reduce`.
    Reduce = Reduce,
    /// Cross-device reduction. Arg: `Reduce`.
    AllReduce = Reduce,
    // ---- memory ----
    /// A device buffer (tensor level). Arg: `Buffer`.
    Buffer = Memory,
    /// A view into a buffer at an element offset. Arg: `Int` (offset).
    BufferView = Memory,
    /// Materialize the source over the ranges that follow it. Arg: `Bufferize`.
    Bufferize = Memory,
    /// Multi-dimensional (or linear) access: buffer, indices..., optional gate.
    Index = Memory,
    /// Pointer plus linear offset.
    PointerIndex = Memory,
    /// Read memory at an INDEX (optional alternative value and gate).
    Load = Memory,
    /// Write a value at an INDEX (optional gate).
    Store = Memory,
    /// Tensor-level in-place assignment (target, value).
    Assign = Memory,
    /// Tensor-level copy to another device.
    Copy = Memory,
    // ---- control ----
    /// Loop opener over `[0, end)`. Arg: `Range`.
    Range = Control,
    /// Closes the RANGE operands after the first (the computation).
    End = Control,
    /// A kernel: its AST and the buffers it reads and writes.
    Kernel = Control,
    /// Collects several roots.
    Sink = Control,
    /// The first operand, ordered after the rest.
    After = Control,
    /// Workgroup barrier.
    Barrier = Control,
    /// Conditional block opener.
    If = Control,
    /// Conditional block closer.
    EndIf = Control,
    /// Groups nodes without meaning (scheduling hint).
    Group = Control,
    /// No operation (value passes through).
    Noop = Control,
    // ---- vectors ----
    /// Builds a vector from scalars.
    Vectorize = Vector,
    /// Lanes of a vector. Arg: `Axes` (lane list).
    Gep = Vector,
    /// A constant vector. Arg: `Consts`.
    VConst = Vector,
    /// Concatenates vectors.
    Cat = Vector,
    /// Concatenates pointers into a vector of pointers.
    PtrCat = Vector,
    /// Expands a value across upcast iterations. Arg: `Pairs` (axis, size).
    Unroll = Vector,
    /// Collapses unrolled values to a vector. Arg: `Pairs` (axis, size).
    Contract = Vector,
    /// The value of operand 0 in the thread of the warp whose lane is this
    /// thread's lane XOR operand 1 (a constant): the lanes of a warp
    /// exchanging registers (`__shfl_xor_sync`).
    ShuffleXor = Vector,
    /// One element of a warp's tensor-core product `A·B`: operands are the
    /// thread's fragment of `A` and of `B` (as the instruction lays them
    /// out) and the element of its `D` fragment it yields. Arg: `Str`
    /// (the instruction's shape, `m16n8k16`).
    Wmma = Vector,
    // ---- definitions ----
    /// A constant. Arg: `Const`.
    Const = Define,
    /// A kernel argument buffer. Arg: `Int` (slot).
    DefineGlobal = Define,
    /// Shared-memory allocation. Arg: `Int` (slot).
    DefineLocal = Define,
    /// A symbolic runtime variable. Arg: `Var`.
    DefineVar = Define,
    /// A register (accumulator) allocation. Arg: `Int` (slot).
    DefineReg = Define,
    /// Binds a DEFINE_VAR to a value.
    Bind = Define,
    /// Hardware index (thread/block id). Arg: `Str`.
    Special = Define,
    /// A fresh identity. Arg: `Int`.
    Unique = Define,
    /// A device name. Arg: `Str`.
    Device = Define,
    // ---- tensor-level markers ----
    /// Force materialization in row-major order.
    Contiguous = Tensor,
    /// Stop gradients (identity in the forward pass).
    Detach = Tensor,
}
