//! `--fuzz-mode malformed-commands`: commands with the wrong arity, arguments of the wrong type
//! (huge, negative, not-a-number, empty, binary), and broken RESP framing. Framing goes out as
//! [`Payload::Raw`] on a connection of its own, because the server answers a protocol error by
//! closing the connection: the fuzz client's own connection is not lost to it.

use super::Payload;
use super::generate::Generator;

/// Values that are wrong for most argument types.
const HOSTILE: &[&[u8]] = &[
    b"-1",
    b"-9223372036854775808",
    b"9223372036854775807",
    b"99999999999999999999999999",
    b"nan",
    b"-inf",
    b"1e400",
    b"0x10",
    b"",
    b"\x00\xff\xfe",
    b"*",
    b"%s%n",
];

impl Generator {
    /// A malformed command or framing (here, beside what it draws, so the generator reaches it
    /// as a method and this file alone names the generator).
    pub(super) fn malformed(&mut self) -> Payload {
        generate(self)
    }
}

/// A malformed command or framing.
fn generate(g: &mut Generator) -> Payload {
    match g.below(10) {
        0..=3 => Payload::Command(wrong_arity(g)),
        4..=6 => Payload::Command(wrong_type(g)),
        _ => Payload::Raw(framing(g)),
    }
}

/// A valid command with arguments dropped or added.
fn wrong_arity(g: &mut Generator) -> Vec<Vec<u8>> {
    let mut c = g.valid_command();
    if c.len() > 1 && g.one_in(2) {
        let keep = 1 + g.below(c.len() as u64 - 1) as usize;
        c.truncate(keep);
    } else {
        for _ in 0..1 + g.below(4) {
            let k = g.key();
            c.push(k);
        }
    }
    c
}

/// A valid command with one argument swapped for a hostile value.
fn wrong_type(g: &mut Generator) -> Vec<Vec<u8>> {
    let mut c = g.valid_command();
    let v = match g.one_in(12) {
        true => vec![b'9'; 8192],
        false => HOSTILE[g.below(HOSTILE.len() as u64) as usize].to_vec(),
    };
    if c.len() > 1 {
        let i = 1 + g.below(c.len() as u64 - 1) as usize;
        c[i] = v;
    } else {
        c.push(v);
    }
    c
}

/// Bytes that are not a well-formed RESP command.
fn framing(g: &mut Generator) -> Vec<u8> {
    let mut out = Vec::new();
    match g.below(9) {
        0 => {
            // A command cut short: the server waits for the rest.
            resp::encode_command(&mut out, &g.valid_command());
            let cut = 1 + g.below(out.len() as u64 - 1) as usize;
            out.truncate(cut);
        }
        1 => out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$-7\r\nk\r\n"),
        2 => out.extend_from_slice(b"*2147483647\r\n$4\r\nPING\r\n"),
        3 => out.extend_from_slice(b"*1\r\n$99999999999\r\n"),
        4 => out.extend_from_slice(b"*1\r\n:5\r\n"),
        5 => out.extend_from_slice(b"SET \"key:1 value\r\n"),
        6 => out.extend_from_slice(b"*-5\r\n*1\r\n$4\r\nPING\r\n"),
        7 => out.extend_from_slice(b"*1\r\n$4\r\nPINGxx\r\n"),
        _ => {
            let len = 1 + g.below(64) as usize;
            out.extend((0..len).map(|_| g.below(256) as u8));
        }
    }
    out
}
