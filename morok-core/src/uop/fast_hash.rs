//! A fast, non-cryptographic hasher for the compiler's own tables.
//!
//! The keys hashed on hot paths are node ids (sequential `u64`s) and the
//! structural keys of the hash-consing table (op, dtype, arg, operand ids).
//! None of them comes from an adversary, so the DoS-resistant SipHash of
//! `std` buys nothing and costs a large share of a rewrite. This is the
//! rotate-xor-multiply scheme of rustc's `FxHasher`: each word is mixed in
//! with one rotate, one xor and one multiply; [`Hasher::finish`] rotates the
//! well-mixed high bits down, since hash tables index by the low bits.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Odd multiplier with well-spread bits (the one of rustc's `FxHasher`).
const K: u64 = 0xf135_7aea_2e62_a9c5;

/// The fast hasher (see the module docs).
#[derive(Clone, Copy, Default)]
pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8-byte chunk")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.mix(u64::from(v));
    }
    #[inline]
    fn write_u16(&mut self, v: u16) {
        self.mix(u64::from(v));
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.mix(u64::from(v));
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// `BuildHasher` of [`FastHasher`].
pub type FastBuild = BuildHasherDefault<FastHasher>;

/// A map keyed by node id (or any small integer key), fast-hashed.
pub type IdMap<V> = HashMap<u64, V, FastBuild>;

/// A set of node ids, fast-hashed.
pub type IdSet = HashSet<u64, FastBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(v: T) -> u64 {
        FastBuild::default().hash_one(v)
    }

    #[test]
    fn equal_keys_hash_equal_and_nearby_keys_differ() {
        assert_eq!(hash(42u64), hash(42u64));
        assert_eq!(hash("index"), hash("index"));
        assert_ne!(hash("ab"), hash("abc"));
        assert_ne!(hash([0u8; 3].as_slice()), hash([0u8; 4].as_slice()));
        // Sequential ids spread over the low bits tables index by.
        let low: IdSet = (0..1024u64).map(|i| hash(i) & 1023).collect();
        assert!(low.len() > 600, "{} distinct low-bit patterns", low.len());
    }
}
