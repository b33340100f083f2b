//! One hasher for keys that are already well spread (addresses, offsets, table indexes)
//! and for digests of texts kept once: a multiply per word instead of SipHash. Not keyed:
//! where a file's author could choose keys to collide, the caller keeps a keyed map.

/// A multiply per 64-bit word.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Eight bytes at a time: texts of a few hundred bytes are hashed too.
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        for b in words.remainder() {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

pub type Fast = std::hash::BuildHasherDefault<FastHasher>;
