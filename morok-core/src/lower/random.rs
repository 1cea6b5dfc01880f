//! Counter-based random numbers: Random123's threefry-2x32 with 20
//! rounds, the scalar reference for the `THREEFRY` op (used by the
//! reference evaluator, constant folding and the lowering's tests).

/// Rotation amounts of threefry-2x32, one per round modulo 8.
pub const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// The key schedule's parity constant.
pub const PARITY: u32 = 0x1BD1_1BDA;

/// Number of rounds.
pub const ROUNDS: usize = 20;

/// Threefry-2x32-20 of `counter` under `key`. Both are split into
/// `(lo, hi)` 32-bit words (word 0 is the low half); the result packs the
/// two output words as `(word1 << 32) | word0`.
///
/// Each round adds word 1 into word 0, rotates word 1 left and xors word
/// 0 into it; every fourth round injects the next key of the schedule
/// `(k0, k1, k0 ^ k1 ^ PARITY)` plus the injection count.
pub fn threefry2x32(counter: u64, key: u64) -> u64 {
    let ks = [key as u32, (key >> 32) as u32, 0];
    let ks = [ks[0], ks[1], ks[0] ^ ks[1] ^ PARITY];
    let mut x0 = (counter as u32).wrapping_add(ks[0]);
    let mut x1 = ((counter >> 32) as u32).wrapping_add(ks[1]);
    for round in 0..ROUNDS {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(ROTATIONS[round % 8]) ^ x0;
        if round % 4 == 3 {
            let s = round / 4 + 1;
            x0 = x0.wrapping_add(ks[s % 3]);
            x1 = x1.wrapping_add(ks[(s + 1) % 3]).wrapping_add(s as u32);
        }
    }
    (u64::from(x1) << 32) | u64::from(x0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for threefry2x32_20 (the same
    /// vectors JAX tests its implementation against).
    #[test]
    fn known_answers() {
        assert_eq!(threefry2x32(0, 0), 0x99ba4efe_6b200159);
        let all = u64::MAX;
        assert_eq!(threefry2x32(all, all), 0xbb002be7_1cb996fc);
        let ctr = 0x85a308d3_243f6a88;
        let key = 0x03707344_13198a2e;
        assert_eq!(threefry2x32(ctr, key), 0x483df7a0_c4923a9c);
    }
}
