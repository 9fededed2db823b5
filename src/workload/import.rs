//! memtier_benchmark's import file (`--data-import`): the dump CSV memtier reads
//! (`file_io.cpp`, `README.import`), indexed once, then read item by item as requests are
//! written.
//!
//! The format is the engine's input (items are written from the file as requests go), so its
//! reader lives in `workload`; memtier's line (`--data-import`) is its one user.
//!
//! The format, as memtier's reader takes it: a first line starting `dumpflags, time, exptime`
//! (the rest of it is the other column names), then one item per line:
//! `dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data`. The eight
//! numbers are unsigned decimals, each followed by a comma, whitespace allowed before each
//! (memtier reads them with `fscanf("%u, %u, …, ")`); `nkey` is the key's length and `nbytes`
//! the value's length plus 2 (memcached counts the value's CRLF). The key and the value are
//! either quoted (`"…"`, a `"` inside written `""`; the quoted form may hold any byte, commas,
//! CR and LF included) or bare (exactly that many bytes, none of them `,`, `"`, CR or LF). The
//! key is followed by a comma and one space; the value by the end of the line (LF or CRLF, or
//! the end of the file). `exptime` is the item's time to live in seconds (0: none), as memtier
//! sends it.
//!
//! Why stricter than memtier: memtier warns and goes on when a length disagrees with its field
//! (and then sends whatever the buffer held); here every line is checked when the file is
//! indexed, and the first one that does not parse is one message naming the file and the line.
//!
//! Memory: the file's bytes are the caller's (`plan` maps the file read-only: the kernel's page
//! cache holds it, nothing is copied) and the index is one 8-byte offset per item. An item is
//! parsed again from its offset each time it is written (eight numbers and a copy): no
//! allocation per request.

use std::fmt;

/// What the first line must start with (memtier compares these bytes).
pub const HEADER: &[u8] = b"dumpflags, time, exptime";

/// The eight numbers' names, in order (for messages).
const COLUMNS: [&str; 8] = [
    "dumpflags",
    "time",
    "exptime",
    "nbytes",
    "nsuffix",
    "it_flags",
    "clsid",
    "nkey",
];

/// An indexed import file.
pub struct ImportFile {
    /// The file's name as given (messages).
    name: String,
    bytes: Box<dyn AsRef<[u8]> + Send + Sync>,
    /// Where each item starts, in file order.
    items: Vec<u64>,
    /// The longest key and value (a batch buffer is reserved for them).
    max_key: usize,
    max_value: usize,
}

impl fmt::Debug for ImportFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportFile")
            .field("name", &self.name)
            .field("items", &self.items.len())
            .finish()
    }
}

/// Two handles are equal when they are the same file's index (plans compare by identity).
impl PartialEq for ImportFile {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// A key or a value as the file holds it: quoted (its `""` pairs still in `raw`) or bare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    raw: &'a [u8],
    quoted: bool,
    /// Its length once unquoted.
    len: usize,
}

/// One item: its key, its value and its time to live (seconds, 0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item<'a> {
    pub key: Field<'a>,
    pub value: Field<'a>,
    pub exptime: u64,
}

/// Why a line does not parse: where (a byte offset) and what.
#[derive(Debug, PartialEq, Eq)]
struct Malformed {
    at: usize,
    what: String,
}

fn bad<T>(at: usize, what: impl Into<String>) -> Result<T, Malformed> {
    Err(Malformed {
        at,
        what: what.into(),
    })
}

impl ImportFile {
    /// Indexes `bytes` (the file named `name`). The error is one line: `NAME: …` or
    /// `NAME:LINE: …`.
    pub fn index(name: &str, bytes: Box<dyn AsRef<[u8]> + Send + Sync>) -> Result<Self, String> {
        let b = (*bytes).as_ref();
        if !b.starts_with(HEADER) {
            return Err(format!(
                "{name}: not a memtier import file: the first line must start with \"{}\"",
                String::from_utf8_lossy(HEADER)
            ));
        }
        let mut at = b
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |i| i + 1);
        let (mut items, mut max_key, mut max_value) = (Vec::new(), 0, 0);
        loop {
            at = skip_space(b, at);
            if at == b.len() {
                break;
            }
            let (item, next) = parse_item(b, at)
                .map_err(|m| format!("{name}:{}: {}", line_of(b, m.at), m.what))?;
            max_key = max_key.max(item.key.len);
            max_value = max_value.max(item.value.len);
            items.push(at as u64);
            at = next;
        }
        if items.is_empty() {
            return Err(format!("{name}: no items after the header line"));
        }
        items.shrink_to_fit();
        Ok(Self {
            name: name.to_string(),
            bytes,
            items,
            max_key,
            max_value,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many items the file holds (at least 1).
    pub fn len(&self) -> u64 {
        self.items.len() as u64
    }

    /// Never: an index holds at least one item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The longest key and the longest value, unquoted.
    pub fn longest(&self) -> (usize, usize) {
        (self.max_key, self.max_value)
    }

    /// Item `i` (taken modulo the item count: a walk past the end starts again at the first,
    /// as memtier reopens the file at its end).
    #[inline]
    pub fn item(&self, i: u64) -> Item<'_> {
        let b = (*self.bytes).as_ref();
        let at = self.items[(i % self.len()) as usize] as usize;
        // Every item parsed when the file was indexed; the bytes are the same.
        parse_item(b, at).map_or(Item::EMPTY, |(item, _)| item)
    }
}

impl Item<'_> {
    /// What an item reads as should its bytes have changed since they were indexed.
    const EMPTY: Item<'static> = Item {
        key: Field::EMPTY,
        value: Field::EMPTY,
        exptime: 0,
    };
}

impl<'a> Field<'a> {
    const EMPTY: Field<'static> = Field {
        raw: b"",
        quoted: false,
        len: 0,
    };

    /// Its length once unquoted.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the unquoted bytes.
    #[inline]
    pub fn write_to(&self, out: &mut Vec<u8>) {
        if !self.quoted {
            out.extend_from_slice(self.raw);
            return;
        }
        let mut rest = self.raw;
        // Each `"` inside stands for itself and is followed by the `"` that escapes it.
        while let Some(i) = rest.iter().position(|&c| c == b'"') {
            out.extend_from_slice(&rest[..=i]);
            rest = rest.get(i + 2..).unwrap_or_default();
        }
        out.extend_from_slice(rest);
    }

    /// Appends it as a RESP bulk string argument.
    #[inline]
    pub fn write_arg(&self, out: &mut Vec<u8>) {
        resp::push_header(out, b'$', self.len as u64);
        self.write_to(out);
        out.extend_from_slice(b"\r\n");
    }

    /// Whether its unquoted bytes are `v`.
    pub fn is(&self, v: &[u8]) -> bool {
        if !self.quoted {
            return self.raw == v;
        }
        v.len() == self.len && self.bytes().eq(v.iter().copied())
    }

    /// The unquoted bytes, one by one.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + 'a {
        let (raw, quoted) = (self.raw, self.quoted);
        let mut i = 0;
        std::iter::from_fn(move || {
            let c = *raw.get(i)?;
            i += if quoted && c == b'"' { 2 } else { 1 };
            Some(c)
        })
    }
}

/// Whitespace `fscanf` skips before a number.
fn skip_space(b: &[u8], mut at: usize) -> usize {
    while at < b.len() && matches!(b[at], b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c) {
        at += 1;
    }
    at
}

/// The line `at` is on (1-based), counted only for a message.
fn line_of(b: &[u8], at: usize) -> usize {
    b[..at.min(b.len())].iter().filter(|&&c| c == b'\n').count() + 1
}

/// Parses the item that starts at `at`; returns it and where the next one may start.
fn parse_item(b: &[u8], at: usize) -> Result<(Item<'_>, usize), Malformed> {
    let mut p = at;
    let mut n = [0u64; 8];
    for (i, value) in n.iter_mut().enumerate() {
        p = skip_space(b, p);
        let start = p;
        while p < b.len() && b[p].is_ascii_digit() {
            p += 1;
        }
        if p == start {
            return bad(start, format!("expected a number for {}", COLUMNS[i]));
        }
        // memtier reads them as `unsigned int`.
        *value = std::str::from_utf8(&b[start..p])
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
            .map(u64::from)
            .ok_or_else(|| Malformed {
                at: start,
                what: format!("{} is above 4294967295", COLUMNS[i]),
            })?;
        if b.get(p) != Some(&b',') {
            return bad(p, format!("expected ',' after {}", COLUMNS[i]));
        }
        p += 1;
    }
    let (exptime, nbytes, nkey) = (n[2], n[3], n[7]);
    if nbytes < 2 {
        return bad(at, "nbytes is below 2 (it counts the value and its CRLF)");
    }
    let (key, p) = field(b, skip_space(b, p), nkey as usize, "key")?;
    if b.get(p) != Some(&b',') {
        return bad(p, "expected ',' after the key");
    }
    // memtier's writer puts one space after the comma; its reader skips one character.
    let p = if b.get(p + 1) == Some(&b' ') {
        p + 2
    } else {
        p + 1
    };
    let (value, p) = field(b, p, nbytes as usize - 2, "value")?;
    let next = match &b[p..] {
        [] => p,
        [b'\n', ..] => p + 1,
        [b'\r', b'\n', ..] => p + 2,
        _ => return bad(p, "expected the end of the line after the value"),
    };
    Ok((
        Item {
            key,
            value,
            exptime,
        },
        next,
    ))
}

/// A field of `len` unquoted bytes at `at`, quoted or bare; returns it and where it ends.
fn field<'a>(
    b: &'a [u8],
    at: usize,
    len: usize,
    what: &str,
) -> Result<(Field<'a>, usize), Malformed> {
    if b.get(at) != Some(&b'"') {
        let end = at.saturating_add(len);
        let Some(raw) = b.get(at..end) else {
            return bad(at, format!("the file ends inside the {what}"));
        };
        if let Some(i) = raw
            .iter()
            .position(|c| matches!(c, b',' | b'"' | b'\r' | b'\n'))
        {
            return bad(
                at + i,
                format!(
                    "the {what} is {i} bytes, the line says {len} (quote it to hold , \" CR or LF)"
                ),
            );
        }
        let field = Field {
            raw,
            quoted: false,
            len,
        };
        return Ok((field, end));
    }
    let start = at + 1;
    let (mut q, mut got) = (start, 0);
    while got < len {
        match b.get(q) {
            None => return bad(at, format!("the file ends inside the quoted {what}")),
            Some(b'"') if b.get(q + 1) == Some(&b'"') => q += 2,
            Some(b'"') => {
                return bad(q, format!("the {what} is {got} bytes, the line says {len}"));
            }
            Some(_) => q += 1,
        }
        got += 1;
    }
    if b.get(q) != Some(&b'"') {
        return bad(
            q,
            format!(
                "the {what} is longer than the {len} bytes the line says (or lacks its closing '\"')"
            ),
        );
    }
    let field = Field {
        raw: &b[start..q],
        quoted: true,
        len,
    };
    Ok((field, q + 1))
}

#[cfg(test)]
mod tests;
