//! How an upcast range of a kernel is cut into vectors of the target's
//! width (the optimizer sizes upcasts by it; lowering's upcast expansion
//! cuts by it).

/// `count` vectors of `width` lanes (`width` 1: scalar lanes), the first
/// starting at lane `offset` of the upcast range being cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorPiece {
    /// First lane of the piece.
    pub offset: i64,
    /// Lanes of each vector (a power of two; 1 for scalar lanes).
    pub width: i64,
    /// Vectors (or scalar lanes) in the piece.
    pub count: i64,
}
/// Fewest bytes of a vector piece: C compilers handle a 16-byte vector
/// in one SSE register, but an 8-byte `f32x2` through shuffles in and out
/// of general registers (GCC 12: 6 instructions around each `f32x2` FMA
/// of an MLP's 10-wide output, 4 on its loop-carried chain), slower than
/// its two scalar lanes.
const MIN_VECTOR_BYTES: usize = 16;

/// The pieces an upcast range of `size` consecutive lanes of
/// `itemsize`-byte elements is cut into on a target with `lanes`-lane
/// vectors: greedily the widest power of two up to `lanes` that fits what
/// is left, as many times as it fits, down to `MIN_VECTOR_BYTES` (16 bytes, at
/// least 2 lanes); the rest are scalar lanes. A 10-wide `f32` output with
/// 16-lane vectors: one vector of 8 and 2 scalars, where one width for
/// all would need five `f32x2`. `None` when no vector fits (`size` below
/// the narrowest vector, or fewer than 2 lanes).
pub fn vector_pieces(size: i64, lanes: i64, itemsize: usize) -> Option<Vec<VectorPiece>> {
    let narrowest = i64::try_from(MIN_VECTOR_BYTES / itemsize.max(1))
        .unwrap_or(2)
        .clamp(2, lanes.max(2));
    if lanes < 2 || size < narrowest {
        return None;
    }
    let mut pieces = Vec::new();
    let mut offset = 0;
    while offset < size {
        let left = size - offset;
        let mut width = if left < narrowest { 1 } else { narrowest };
        while width >= narrowest && width * 2 <= lanes && width * 2 <= left {
            width *= 2;
        }
        let count = left / width;
        pieces.push(VectorPiece {
            offset,
            width,
            count,
        });
        offset += count * width;
    }
    Some(pieces)
}
