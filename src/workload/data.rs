//! Payload bytes for values (`-d`) and `__data__`.
//!
//! The generator is the reference tool's: a 32-bit linear congruential generator seeded with 1234,
//! each byte `'0' + ((state >> 16) & 63)` (64 printable characters, `0`..`o`). Using the same
//! sequence keeps payloads, and so RDB compressibility, comparable with valkey-benchmark runs.
//! Like the reference, `--seed` does not affect it.

/// Deterministic payload generator; the state carries over between calls, so successive chunks
/// differ (the reference regenerates the suite's value on every `-l` pass).
#[derive(Clone, Debug)]
pub struct PayloadGenerator {
    state: u32,
}

impl Default for PayloadGenerator {
    fn default() -> Self {
        Self { state: 1234 }
    }
}

impl PayloadGenerator {
    /// The next `len` bytes of the sequence.
    pub fn chunk(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        for _ in 0..len {
            self.state = self.state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            out.push(b'0' + ((self.state >> 16) & 63) as u8);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_in_the_64_char_alphabet_and_chunks_continue() {
        let mut g = PayloadGenerator::default();
        let a = g.chunk(1000);
        let b = g.chunk(1000);
        assert!(a.iter().chain(&b).all(|&c| (b'0'..=b'o').contains(&c)));
        assert_ne!(a, b, "the second chunk continues the sequence");
        let mut again = PayloadGenerator::default();
        assert_eq!(again.chunk(1000), a, "deterministic from the fixed seed");
    }

    #[test]
    fn first_bytes_match_the_reference_lcg() {
        // state1 = 1234*1103515245+12345 mod 2^32; byte = '0' + ((state >> 16) & 63).
        let mut state: u32 = 1234;
        let mut expect = Vec::new();
        for _ in 0..8 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            expect.push(b'0' + ((state >> 16) & 63) as u8);
        }
        assert_eq!(PayloadGenerator::default().chunk(8), expect);
    }
}
