//! The respbench trace format: writing it, and reading one entry of it.
//!
//! An entry is a readable header line (`SEQ TIME_US CLIENT DB KIND LEN`) and a length-prefixed
//! body, so any bytes (a fuzzer's malformed framing, binary values) survive exactly, and reading
//! never guesses where an entry ends.

use std::io::{self, Write};

use super::{Entry, MAX_ENTRY, Payload, TraceError};
use crate::redact;

/// The first line of a respbench trace; the `1` is the format's version.
pub const FORMAT_LINE: &str = "#respbench-trace 1";

/// Writes a respbench trace. Commands pass through the one redaction function, so a trace never
/// holds a password (the bytes on the wire were the user's; the file is what gets shared).
pub struct Writer<W: Write> {
    out: W,
    body: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A writer that has written the format line.
    pub fn new(mut out: W) -> io::Result<Writer<W>> {
        writeln!(out, "{FORMAT_LINE}")?;
        Ok(Writer {
            out,
            body: Vec::new(),
        })
    }

    /// A comment line (`# text`): what wrote the trace, its seed, its target. Line breaks in
    /// `text` become spaces, so a comment cannot start an entry.
    pub fn comment(&mut self, text: &str) -> io::Result<()> {
        let one_line: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        writeln!(self.out, "# {one_line}")
    }

    /// One entry. The client token's whitespace becomes `_` (the header is split on spaces).
    pub fn write(&mut self, entry: &Entry) -> io::Result<()> {
        self.body.clear();
        let kind = match &entry.payload {
            Payload::Command(args) => {
                match redact::command_words(args) {
                    Some(hidden) => resp::encode_command(&mut self.body, &hidden),
                    None => resp::encode_command(&mut self.body, args),
                }
                "cmd"
            }
            Payload::Raw(bytes) => {
                self.body.extend_from_slice(bytes);
                "raw"
            }
        };
        let client = client_token(&entry.client);
        writeln!(
            self.out,
            "{} {} {} {} {} {}",
            entry.seq,
            entry.time_us,
            client,
            entry.db,
            kind,
            self.body.len()
        )?;
        self.out.write_all(&self.body)?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer (to sync a file, say).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A client name as a header token: never empty, no whitespace.
fn client_token(client: &str) -> String {
    if client.is_empty() {
        return "-".to_string();
    }
    client
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// What an entry's header line says: the fields of [`Entry`] but the payload, and the body's kind
/// and length.
pub(super) struct Header {
    pub raw: bool,
    pub len: usize,
}

/// Parses a header line into `entry` (seq, time, client, db); `line` is its number in the file.
pub(super) fn parse_header(
    text: &[u8],
    line: u64,
    entry: &mut Entry,
) -> Result<Header, TraceError> {
    let bad = |reason: String| TraceError::Malformed { line, reason };
    let text = std::str::from_utf8(text).map_err(|_| bad("a header that is not UTF-8".into()))?;
    let fields: Vec<&str> = text.split(' ').collect();
    let [seq, time, client, db, kind, len] = fields[..] else {
        return Err(bad(format!(
            "expected `SEQ TIME_US CLIENT DB KIND LEN`, found {:?}",
            shorten(text)
        )));
    };
    let number = |what: &str, v: &str| -> Result<i64, TraceError> {
        v.parse()
            .map_err(|_| bad(format!("{what} {:?} is not a whole number", shorten(v))))
    };
    entry.seq = u64::try_from(number("SEQ", seq)?).map_err(|_| bad("a negative SEQ".into()))?;
    entry.time_us = number("TIME_US", time)?;
    entry.client.clear();
    entry.client.push_str(client);
    entry.db =
        u32::try_from(number("DB", db)?).map_err(|_| bad(format!("DB {db} out of range")))?;
    let raw = match kind {
        "cmd" => false,
        "raw" => true,
        other => {
            return Err(bad(format!(
                "KIND {:?}: expected cmd or raw",
                shorten(other)
            )));
        }
    };
    let len = usize::try_from(number("LEN", len)?).map_err(|_| bad("a negative LEN".into()))?;
    if len > MAX_ENTRY {
        return Err(TraceError::TooLarge { line, size: len });
    }
    Ok(Header { raw, len })
}

/// Reads a `cmd` body (a RESP array of bulk strings) into `args`, reusing its buffers.
pub(super) fn parse_command(body: &[u8], args: &mut Vec<Vec<u8>>) -> Result<(), String> {
    let mut at = 0;
    let count = header_number(body, &mut at, b'*')?;
    if count == 0 {
        return Err("an empty command".into());
    }
    let count = count as usize;
    args.truncate(count);
    for i in 0..count {
        let len = header_number(body, &mut at, b'$')? as usize;
        let end = at.checked_add(len).filter(|&e| e + 2 <= body.len());
        let Some(end) = end else {
            return Err(format!("argument {} runs past the entry", i + 1));
        };
        if &body[end..end + 2] != b"\r\n" {
            return Err(format!("argument {} is not followed by CRLF", i + 1));
        }
        if i < args.len() {
            args[i].clear();
            args[i].extend_from_slice(&body[at..end]);
        } else {
            args.push(body[at..end].to_vec());
        }
        at = end + 2;
    }
    if at != body.len() {
        return Err(format!("{} bytes after the command", body.len() - at));
    }
    Ok(())
}

/// `*N\r\n` or `$N\r\n` at `*at`: N, with `*at` moved past the line.
fn header_number(body: &[u8], at: &mut usize, type_byte: u8) -> Result<u64, String> {
    if body.get(*at) != Some(&type_byte) {
        return Err(format!(
            "expected `{}` at byte {} of the entry",
            type_byte as char, *at
        ));
    }
    let start = *at + 1;
    let crlf = body[start..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or_else(|| format!("no CRLF after `{}`", type_byte as char))?;
    let digits = std::str::from_utf8(&body[start..start + crlf]).unwrap_or("");
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{}{digits}` is not a length", type_byte as char))?;
    *at = start + crlf + 2;
    Ok(n)
}

/// At most 60 characters of `s`, for a message.
pub(super) fn shorten(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
