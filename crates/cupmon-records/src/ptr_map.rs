//! Maps keyed by a kernel's name pointer, hashed by one multiplication instead of
//! SipHash: pointers are not chosen by an adversary, and the digest looks one up for
//! every kernel record (a third of its cost with SipHash).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by name pointers (or other machine words).
pub type PtrMap<V> = HashMap<u64, V, BuildHasherDefault<PtrHasher>>;

/// Fibonacci hashing of one `u64`; other writes fold bytes in (not used by `u64` keys).
#[derive(Debug, Default, Clone, Copy)]
pub struct PtrHasher(u64);

impl Hasher for PtrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        // The high bits of the product mix every bit of `v`; hashbrown uses the top 7
        // bits and the low bits, so fold the high half down.
        let x = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 32);
    }
}
