//! Counter-based random bits shared by every consumer of `Op::Threefry`.
//!
//! The tensor front end draws random numbers as `THREEFRY(counter, key)` on
//! `u64` operands. The reference evaluator, constant folding and the code
//! generators all need the same function, bit for bit, so it lives here.

/// Rotation amounts of Threefry-2x32, one per round modulo 8.
pub const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// The key-schedule parity constant of Threefry-2x32.
pub const PARITY: u32 = 0x1BD1_1BDA;

/// Number of rounds.
pub const ROUNDS: usize = 20;

/// Threefry-2x32 with 20 rounds (Random123), on a 64-bit counter and key.
///
/// Each `u64` is split into its words `(lo, hi)`; the two output words are
/// joined as `(hi << 32) | lo`. The function is a bijection of the counter
/// for a fixed key, so distinct counters give distinct bits.
pub fn threefry2x32(counter: u64, key: u64) -> u64 {
    let ks = [
        key as u32,
        (key >> 32) as u32,
        PARITY ^ key as u32 ^ (key >> 32) as u32,
    ];
    let mut x0 = (counter as u32).wrapping_add(ks[0]);
    let mut x1 = ((counter >> 32) as u32).wrapping_add(ks[1]);
    for round in 0..ROUNDS {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(ROTATIONS[round % 8]) ^ x0;
        if round % 4 == 3 {
            // Key injection after every fourth round.
            let i = round / 4 + 1;
            x0 = x0.wrapping_add(ks[i % 3]);
            x1 = x1.wrapping_add(ks[(i + 1) % 3]).wrapping_add(i as u32);
        }
    }
    ((x1 as u64) << 32) | x0 as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random123_known_answers() {
        // Random123's kat_vectors for threefry2x32_20.
        assert_eq!(threefry2x32(0, 0), (0x99ba_4efe << 32) | 0x6b20_0159);
        let all_ones = u64::MAX;
        assert_eq!(
            threefry2x32(all_ones, all_ones),
            (0xbb00_2be7 << 32) | 0x1cb9_96fc
        );
        let ctr = (0x85a3_08d3 << 32) | 0x243f_6a88;
        let key = (0x0370_7344 << 32) | 0x1319_8a2e;
        assert_eq!(threefry2x32(ctr, key), (0x483d_f7a0 << 32) | 0xc492_3a9c);
    }

    #[test]
    fn distinct_counters_give_distinct_bits() {
        let outs: std::collections::HashSet<u64> = (0..1000).map(|c| threefry2x32(c, 7)).collect();
        assert_eq!(outs.len(), 1000);
    }
}
