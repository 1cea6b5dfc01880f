//! The interpreter's model of the warp's tensor-core instruction
//! `mma.m16n8k16` (the `WMMA` op, built by the optimizer's `TC`): what
//! a kernel means where it uses one.
//!
//! The layout is the PTX ISA's (lane `l`, `gid = l / 4`, `tig = l % 4`):
//!
//! - `A` (16×16) element `i < 8` of lane `l`: row `gid + 8·((i / 2) % 2)`,
//!   column `2·tig + i % 2 + 8·(i / 4)`;
//! - `B` (16×8) element `i < 4`: row `2·tig + i % 2 + 8·(i / 2)`, column
//!   `gid`;
//! - `D` (16×8) element `i < 4`: row `gid + 8·(i / 2)`, column
//!   `2·tig + i % 2`.
//!
//! It is written from those tables, apart from the optimizer's
//! substitutions (`crate::opt` `tensor_core`), so that the differential
//! suite on a simulated GPU checks one against the other.

/// Threads that run one instruction together.
pub(super) const WARP: usize = 32;

/// What a launch tells a warp instruction: the block's shape, the running
/// thread's linear index in it (`x` fastest), and the thread-index
/// `SPECIAL`s (node id, dimension).
#[derive(Clone, Debug)]
pub(super) struct Lanes {
    pub(super) block: [usize; 3],
    pub(super) thread: usize,
    pub(super) lidx: Vec<(u64, usize)>,
}

impl Lanes {
    /// The thread indices (`x, y, z`) of the lanes of the running thread's
    /// warp, lane 0 first; `None` when the block does not hold the whole
    /// warp.
    pub(super) fn warp(&self) -> Option<Vec<[usize; 3]>> {
        let [bx, by, bz] = self.block;
        let base = self.thread - self.thread % WARP;
        (base + WARP <= bx * by * bz).then(|| {
            (base..base + WARP)
                .map(|t| [t % bx, t / bx % by, t / (bx * by)])
                .collect()
        })
    }
}

/// Row and column of `A` element `i` of lane `l`.
fn a_at(l: usize, i: usize) -> (usize, usize) {
    (l / 4 + 8 * ((i / 2) % 2), 2 * (l % 4) + i % 2 + 8 * (i / 4))
}

/// Row and column of `B` element `i` of lane `l`.
fn b_at(l: usize, i: usize) -> (usize, usize) {
    (2 * (l % 4) + i % 2 + 8 * (i / 2), l / 4)
}

/// Row and column of `D` element `i` of lane `l`.
fn d_at(l: usize, i: usize) -> (usize, usize) {
    (l / 4 + 8 * (i / 2), 2 * (l % 4) + i % 2)
}

/// Element `element` of lane `lane`'s `D` fragment of the product whose
/// operands are `fragments[l]` for each lane `l` (8 elements of `A`, then
/// 4 of `B`), placed by the layout and summed exactly.
pub(super) fn product(fragments: &[[f64; 12]], lane: usize, element: usize) -> f64 {
    let mut a = [[0f64; 16]; 16];
    let mut b = [[0f64; 8]; 16];
    for (l, f) in fragments.iter().enumerate() {
        for (i, v) in f[..8].iter().enumerate() {
            let (r, c) = a_at(l, i);
            a[r][c] = *v;
        }
        for (i, v) in f[8..].iter().enumerate() {
            let (r, c) = b_at(l, i);
            b[r][c] = *v;
        }
    }
    let (r, c) = d_at(lane, element);
    (0..16).map(|k| a[r][k] * b[k][c]).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Each table covers its matrix exactly once over the 32 lanes.
    #[test]
    fn the_fragment_tables_cover_each_matrix_once() {
        let cover = |f: fn(usize, usize) -> (usize, usize), per_lane: usize| {
            let all: HashSet<(usize, usize)> = (0..WARP)
                .flat_map(|l| (0..per_lane).map(move |i| f(l, i)))
                .collect();
            all.len()
        };
        assert_eq!(cover(a_at, 8), 16 * 16);
        assert_eq!(cover(b_at, 4), 16 * 8);
        assert_eq!(cover(d_at, 4), 16 * 8);
    }

    /// With `A` the identity, `D` is `B`: each lane reads its own elements
    /// back.
    #[test]
    fn an_identity_a_gives_b_back() {
        let mut frags = vec![[0f64; 12]; WARP];
        for (l, f) in frags.iter_mut().enumerate() {
            let (a, b) = f.split_at_mut(8);
            for (i, v) in a.iter_mut().enumerate() {
                let (r, c) = a_at(l, i);
                *v = f64::from(u8::from(r == c));
            }
            for (i, v) in b.iter_mut().enumerate() {
                let (r, c) = b_at(l, i);
                *v = (r * 8 + c) as f64;
            }
        }
        for l in 0..WARP {
            for e in 0..4 {
                let (r, c) = d_at(l, e);
                assert_eq!(product(&frags, l, e), (r * 8 + c) as f64);
            }
        }
    }
}
