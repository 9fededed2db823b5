//! Command encoding: turning an argument list into a RESP array of bulk strings.
//!
//! Owns: [`encode_command`], [`encoded_command_len`] and the allocation-free decimal formatting
//! used by every encoder in this crate, and by callers that rewrite a bulk string's header in
//! place ([`push_header`], [`decimal_len`]: respbench's per-request value sizes).
//! Must not: allocate anything but the growth of the caller's output buffer, validate or interpret
//! arguments (they are opaque, binary-safe bytes), or write anything but the appended command.
//! Invariant: `encoded_command_len(args)` is exactly the number of bytes `encode_command` appends.

/// Longest decimal `u64` (20 digits) plus a type byte and CRLF.
const HEADER_BUF: usize = 23;

/// Number of decimal digits in `n`.
#[inline]
pub fn decimal_len(n: u64) -> usize {
    // `ilog10` is a couple of instructions; 0 has one digit.
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Appends `<type_byte><n>\r\n` with a single copy from a stack buffer.
#[inline]
pub fn push_header(out: &mut Vec<u8>, type_byte: u8, n: u64) {
    let mut buf = [0u8; HEADER_BUF];
    let mut i = HEADER_BUF - 2;
    buf[i] = b'\r';
    buf[i + 1] = b'\n';
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    i -= 1;
    buf[i] = type_byte;
    out.extend_from_slice(&buf[i..]);
}

/// Appends `<type_byte><n>\r\n` for a signed `n`.
#[inline]
pub(crate) fn push_header_i64(out: &mut Vec<u8>, type_byte: u8, n: i64) {
    if n < 0 {
        out.push(type_byte);
        push_header(out, b'-', n.unsigned_abs());
    } else {
        push_header(out, type_byte, n as u64);
    }
}

/// Appends one command as a RESP array of bulk strings: `*<n>\r\n`, then `$<len>\r\n<arg>\r\n` per
/// argument. Arguments are binary safe (they may contain CR, LF and NUL); an empty argument encodes
/// as `$0\r\n\r\n`.
///
/// Reserves [`encoded_command_len`] bytes up front, so `out` grows at most once.
///
/// ```
/// let mut out = Vec::new();
/// resp::encode_command(&mut out, &["SET", "key", "v"]);
/// assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1\r\nv\r\n");
/// ```
#[inline]
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    out.reserve(encoded_command_len(args));
    push_header(out, b'*', args.len() as u64);
    for arg in args {
        let arg = arg.as_ref();
        push_header(out, b'$', arg.len() as u64);
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// The exact number of bytes [`encode_command`] appends for `args`.
///
/// ```
/// assert_eq!(resp::encoded_command_len(&["PING"]), b"*1\r\n$4\r\nPING\r\n".len());
/// ```
#[inline]
pub fn encoded_command_len<A: AsRef<[u8]>>(args: &[A]) -> usize {
    let mut total = 3 + decimal_len(args.len() as u64);
    for arg in args {
        let len = arg.as_ref().len();
        total += 5 + decimal_len(len as u64) + len;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_len_matches_formatting() {
        let mut n: u64 = 1;
        let mut probes = vec![0, u64::MAX, u64::MAX - 1];
        while let Some(next) = n.checked_mul(10) {
            probes.extend([n - 1, n, n + 1]);
            n = next;
        }
        for p in probes {
            assert_eq!(decimal_len(p), p.to_string().len(), "{p}");
            let mut out = Vec::new();
            push_header(&mut out, b'$', p);
            assert_eq!(out, format!("${p}\r\n").into_bytes());
        }
    }

    #[test]
    fn signed_headers() {
        for n in [0, 1, -1, 42, -42, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            push_header_i64(&mut out, b':', n);
            assert_eq!(out, format!(":{n}\r\n").into_bytes());
        }
    }
}
