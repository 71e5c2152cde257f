//! A hasher whose output is the same on every machine and every run.
//!
//! `std`'s `DefaultHasher` is randomly keyed per process, and hashers such
//! as FNV feed integers in native byte order and `usize` at native width, so
//! a fingerprint computed with them differs between a little- and a
//! big-endian (or a 32- and 64-bit) machine. Golden trace hashes and
//! visited-state sets shared between machines need better: this hasher
//! normalises every integer to little-endian 64-bit words and mixes a word
//! at a time (fast enough to fingerprint a whole world per explored state).
//!
//! It is not a cryptographic hash: collisions are as unlikely as for any
//! good 64-bit mix, which is what visited-state dedup needs.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// The golden-ratio multiplier, odd, with well spread bits.
const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// Fixed seed so that an empty input does not hash to 0.
const SEED: u64 = 0x243F_6A88_85A3_08D3;

/// A deterministic, portable 64-bit hasher (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct StableHasher {
    state: u64,
}

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher { state: SEED }
    }
}

impl StableHasher {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn mix(&mut self, word: u64) {
        self.state = (self.state ^ word).wrapping_mul(K).rotate_left(29);
    }
}

impl Hasher for StableHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            // The tail length goes in the top byte so that "ab" and "ab\0" differ.
            self.mix(u64::from_le_bytes(word) ^ ((tail.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.mix(i as u64);
        self.mix((i >> 64) as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.mix(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // murmur3's fmix64 finaliser: every input bit reaches every output bit.
        let mut h = self.state;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        h
    }
}

/// Fingerprint any hashable value with [`StableHasher`].
pub fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = StableHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// A remembered [`stable_hash`] of a value that changes rarely and is
/// hashed often (a server's data tree: changed by an apply, hashed by every
/// fingerprint). The owner clears it whenever it changes the value and
/// hashes `memo.get_or(|| stable_hash(&value))` instead of the value.
///
/// The memo is invisible to comparison and hashing (it is a function of
/// the value), so its owner can still derive `Eq`. It is atomic so that the
/// owner stays `Sync` (explorers may share states between threads).
#[derive(Default)]
pub struct HashMemo(AtomicU64);

/// 0 means "not computed"; a real hash of 0 is stored as this instead.
const ZERO_STANDIN: u64 = 0x5a5a_5a5a_5a5a_5a5a;

impl HashMemo {
    /// The remembered hash, computing it with `hash` if unknown.
    #[inline]
    pub fn get_or(&self, hash: impl FnOnce() -> u64) -> u64 {
        let known = self.0.load(Ordering::Relaxed);
        if known != 0 {
            return known;
        }
        let fresh = match hash() {
            0 => ZERO_STANDIN,
            h => h,
        };
        self.0.store(fresh, Ordering::Relaxed);
        fresh
    }
    /// Forget the hash: the value changed.
    #[inline]
    pub fn clear(&mut self) {
        *self.0.get_mut() = 0;
    }
}

impl Clone for HashMemo {
    fn clone(&self) -> Self {
        HashMemo(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

impl PartialEq for HashMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for HashMemo {}

impl Hash for HashMemo {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl std::fmt::Debug for HashMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HashMemo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_do_not_drift() {
        // Pinned: a change here changes every golden trace hash.
        assert_eq!(stable_hash(&0u64), 0x969c_56ef_d660_4ca3);
        assert_eq!(stable_hash("zookeeper"), 0x8c57_3f01_6d28_4304);
        assert_eq!(stable_hash(&(1u32, -1i64, "ab")), 0x5bbf_913d_b147_685e);
        assert_ne!(stable_hash(&0u64), stable_hash(&1u64));
        assert_ne!(stable_hash("ab"), stable_hash("ab\0"));
        assert_ne!(stable_hash(&(1u32, 2u32)), stable_hash(&(2u32, 1u32)));
    }

    #[test]
    fn memo_remembers_until_cleared() {
        let mut memo = HashMemo::default();
        assert_eq!(memo.get_or(|| 7), 7);
        assert_eq!(memo.get_or(|| 9), 7);
        assert_eq!(memo.clone().get_or(|| 9), 7);
        memo.clear();
        assert_eq!(memo.get_or(|| 9), 9);
        memo.clear();
        assert_eq!(memo.get_or(|| 0), ZERO_STANDIN);
    }

    #[test]
    fn integer_width_does_not_matter_for_the_same_value() {
        let mut a = StableHasher::new();
        a.write_u32(7);
        let mut b = StableHasher::new();
        b.write_u64(7);
        assert_eq!(a.finish(), b.finish());
    }
}
