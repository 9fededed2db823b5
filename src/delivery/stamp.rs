//! What a delivery message carries so that its receiver can time it and tell it from every
//! other: its send time (nanoseconds since the test's origin, an `Instant` every thread of the
//! process shares) and its number, as 16 hex digits each at the start of the payload, padded with
//! `x` to `-d` bytes. Hex of fixed width: written in place into a reused buffer (no allocation
//! per message) and readable in any RESP protocol version without escaping.

/// The stamp's size: the smallest payload (`-d`) the modes accept (`cli.rs` refuses a smaller `-d`).
pub const BYTES: usize = 32;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A payload of `size` bytes (at least [`BYTES`]; the plan refuses less), stamp zeroed.
pub fn payload(size: usize) -> Vec<u8> {
    let mut p = vec![b'x'; size.max(BYTES)];
    write(&mut p, 0, 0);
    p
}

/// Writes the send time `sent_ns` and the message number `number` into `payload[..BYTES]`.
pub fn write(payload: &mut [u8], sent_ns: u64, number: u64) {
    hex16(&mut payload[..16], sent_ns);
    hex16(&mut payload[16..BYTES], number);
}

/// The send time and number of a received payload; `None` for one that is not a stamp (another
/// client's message on the same channel).
pub fn read(payload: &[u8]) -> Option<(u64, u64)> {
    if payload.len() < BYTES {
        return None;
    }
    Some((unhex16(&payload[..16])?, unhex16(&payload[16..BYTES])?))
}

fn hex16(out: &mut [u8], v: u64) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = HEX[((v >> (60 - 4 * i)) & 0xf) as usize];
    }
}

/// Read once per delivery: a digit is a subtraction, not a `char` conversion.
fn unhex16(s: &[u8]) -> Option<u64> {
    s.iter().try_fold(0u64, |acc, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_and_the_padding_stays() {
        let mut p = payload(40);
        assert_eq!(p.len(), 40);
        for (t, n) in [
            (0, 0),
            (1, 2),
            (u64::MAX, u64::MAX - 1),
            (0x0123_4567_89ab_cdef, 7),
        ] {
            write(&mut p, t, n);
            assert_eq!(read(&p), Some((t, n)));
            assert_eq!(&p[BYTES..], b"xxxxxxxx");
        }
        assert_eq!(read(b"hello"), None);
        assert_eq!(read(&[b'g'; 32]), None);
        assert_eq!(read(&[b'F'; 32]), Some((u64::MAX, u64::MAX)));
    }
}
