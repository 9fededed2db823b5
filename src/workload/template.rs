//! Pre-encoded command units with fixed-width placeholders.
//!
//! A *unit* is what one pipeline copy sends: a single command, or a whole `;`-separated sequence
//! with its repeat counts. It is RESP-encoded once; `__rand_int__` and `__rand_1st__`..
//! `__rand_9th__` (12 bytes each) are recorded as offsets and overwritten in place with 12 digits
//! before each send, so filling a batch never allocates or moves bytes.

use super::data::PayloadGenerator;
use super::keys::{KeyGen, write_12_digits};

/// Width of every `__rand_*__` token and of the digits that replace it.
pub const PLACEHOLDER_LEN: usize = 12;

const RAND_TOKENS: [&[u8; PLACEHOLDER_LEN]; 10] = [
    b"__rand_int__",
    b"__rand_1st__",
    b"__rand_2nd__",
    b"__rand_3rd__",
    b"__rand_4th__",
    b"__rand_5th__",
    b"__rand_6th__",
    b"__rand_7th__",
    b"__rand_8th__",
    b"__rand_9th__",
];

/// One `__rand_*__` placeholder of a unit, where it is and which: index 0 is `__rand_int__` (a new draw for every occurrence),
/// 1..=9 are `__rand_1st__`..`__rand_9th__` (one draw per unit, shared by all occurrences).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placeholder {
    pub offset: usize,
    pub which: u8,
}

/// A value body at least this long is sent from the template's one copy rather than copied into
/// every connection's batch buffer ([`Template::sparse_batch`]). Below it values are copied as
/// before: a plain write of one buffer is cheaper than gathering pieces, and the copies are small.
pub const SHARED_VALUE_MIN: usize = 64 * 1024;

/// Where a batch buffer leaves out a large value: before byte `at` of the buffer, the bytes
/// `value` of source `src` are sent (the test's template is source 0; a memtier mix numbers its
/// commands' templates and its random pool: `Mix::value_sources`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    pub at: usize,
    pub value: std::ops::Range<usize>,
    pub src: u16,
}

/// A batch buffer with its large values left out ([`Template::sparse_batch`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseBatch {
    pub buf: Vec<u8>,
    /// Placeholder offsets into `buf`.
    pub placeholders: Vec<Placeholder>,
    /// Ascending by `at`.
    pub gaps: Vec<Gap>,
    /// Bytes of one unit in `buf`.
    pub unit_len: usize,
}

/// One encoded unit and where its placeholders are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub unit: Vec<u8>,
    /// Placeholder offsets within `unit`, ascending.
    pub placeholders: Vec<Placeholder>,
    /// Commands (and so replies) per unit.
    pub commands_per_unit: u32,
    /// Where each command of the unit and each of its arguments lies in `unit` (one entry per
    /// command, repeats included). Cluster mode reads keys and re-sends redirected commands
    /// from these ranges.
    pub layout: Vec<CommandLayout>,
    /// Arguments holding value data (`__data__`, the suite's values), ascending: what
    /// `--data-size-range`/`--data-size-list` resize per request (`sizes::fill_sized`).
    pub values: Vec<ValueArg>,
}

/// One argument of a unit that holds value data, as encoded at the largest size (what
/// `sizes::fill_sized` rewrites at a drawn size; the template records it, sizes reads it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueArg {
    /// Where its `$<len>\r\n` header starts in the unit.
    pub header: usize,
    /// Its body (without the header and the trailing `\r\n`).
    pub body: std::ops::Range<usize>,
    /// Where each data chunk starts, relative to the body, ascending; each is `max` bytes long.
    pub data_at: Vec<usize>,
}

/// Byte ranges of one command within a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLayout {
    /// The whole encoded command.
    pub bytes: std::ops::Range<usize>,
    /// Each argument's payload (without its `$len` header); empty for an inline command.
    pub args: Vec<std::ops::Range<usize>>,
    /// Index of the `-x` argument (never scanned for placeholders).
    pub verbatim_arg: Option<usize>,
}

/// One command of a sequence with its repeat count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceItem {
    pub repeat: u32,
    pub args: Vec<Vec<u8>>,
    /// Index of an argument exempt from placeholder scanning (the `-x` stdin argument).
    pub verbatim_arg: Option<usize>,
    /// Value data in the arguments: (argument index, byte offset), each chunk the data size long,
    /// ascending. Variable value sizes shorten these chunks per request.
    pub data: Vec<(usize, usize)>,
}

impl Template {
    /// A unit sent as raw bytes (the inline `PING\r\n`), one command, no placeholders.
    pub fn raw(bytes: &[u8]) -> Self {
        Self {
            unit: bytes.to_vec(),
            placeholders: Vec::new(),
            commands_per_unit: 1,
            layout: vec![CommandLayout {
                bytes: 0..bytes.len(),
                args: Vec::new(),
                verbatim_arg: None,
            }],
            values: Vec::new(),
        }
    }

    /// Encodes a sequence; with `-r` given (`keyspace_given`) `__rand_*__` tokens become
    /// placeholders, otherwise they stay literal, as in the reference.
    pub fn encode(items: &[SequenceItem], keyspace_given: bool) -> Self {
        let mut unit = Vec::new();
        let mut placeholders = Vec::new();
        let mut commands = 0u32;
        let mut layout = Vec::new();
        let mut values = Vec::new();
        for item in items {
            for _ in 0..item.repeat {
                let base = unit.len();
                resp::encode_command(&mut unit, &item.args);
                commands += 1;
                // Offsets follow the encoding: "*<n>\r\n" then "$<len>\r\n<arg>\r\n" per arg.
                let mut pos = base + 1 + decimal_digits(item.args.len()) + 2;
                let mut args = Vec::with_capacity(item.args.len());
                for (i, arg) in item.args.iter().enumerate() {
                    let header = pos;
                    pos += 1 + decimal_digits(arg.len()) + 2;
                    let data_at: Vec<usize> =
                        item.data.iter().filter(|d| d.0 == i).map(|d| d.1).collect();
                    if !data_at.is_empty() {
                        values.push(ValueArg {
                            header,
                            body: pos..pos + arg.len(),
                            data_at,
                        });
                    }
                    if keyspace_given && item.verbatim_arg != Some(i) {
                        find_placeholders(arg, pos, &mut placeholders);
                    }
                    args.push(pos..pos + arg.len());
                    pos += arg.len() + 2;
                }
                layout.push(CommandLayout {
                    bytes: base..unit.len(),
                    args,
                    verbatim_arg: item.verbatim_arg,
                });
            }
        }
        Self {
            unit,
            placeholders,
            commands_per_unit: commands,
            layout,
            values,
        }
    }

    /// Offsets of every `{tag}` (cluster mode's hash-tag placeholder) in the unit's arguments,
    /// the `-x` argument excepted.
    pub fn tag_offsets(&self) -> Vec<usize> {
        const TAG: &[u8] = b"{tag}";
        let mut out = Vec::new();
        for cmd in &self.layout {
            for (i, arg) in cmd.args.iter().enumerate() {
                if cmd.verbatim_arg == Some(i) {
                    continue;
                }
                let bytes = &self.unit[arg.clone()];
                let mut at = 0;
                while at + TAG.len() <= bytes.len() {
                    if &bytes[at..at + TAG.len()] == TAG {
                        out.push(arg.start + at);
                        at += TAG.len();
                    } else {
                        at += 1;
                    }
                }
            }
        }
        out
    }

    /// Builds a batch buffer of `pipeline` (`-P`) units back to back and returns it with the
    /// placeholders of all of them (offsets into the batch).
    pub fn batch(&self, pipeline: usize) -> (Vec<u8>, Vec<Placeholder>) {
        let mut buf = Vec::with_capacity(self.unit.len() * pipeline);
        let mut placeholders = Vec::with_capacity(self.placeholders.len() * pipeline);
        for _ in 0..pipeline {
            let base = buf.len();
            buf.extend_from_slice(&self.unit);
            placeholders.extend(self.placeholders.iter().map(|s| Placeholder {
                offset: base + s.offset,
                which: s.which,
            }));
        }
        (buf, placeholders)
    }

    /// Like [`Template::batch`], but each value body of at least [`SHARED_VALUE_MIN`] bytes is
    /// left out of the buffer and noted as a [`Gap`]: the engine writes the template's own bytes
    /// there (a gathered write), so a large value is held once per test rather than once per
    /// connection (`-d 100000000 -c 50` held 5 GB). Also returns the buffer's unit length.
    /// `None` when no value is that large, or a placeholder lies inside one (its bytes change
    /// per request, so it needs its own copy).
    pub fn sparse_batch(&self, pipeline: usize) -> Option<SparseBatch> {
        let big: Vec<std::ops::Range<usize>> = (self.values.iter())
            .map(|v| v.body.clone())
            .filter(|b| b.len() >= SHARED_VALUE_MIN)
            .collect();
        let inside = |p: &Placeholder| big.iter().any(|b| b.contains(&p.offset));
        if big.is_empty() || self.placeholders.iter().any(inside) {
            return None;
        }
        let mut unit = Vec::new();
        let mut unit_gaps = Vec::new();
        let mut from = 0;
        for b in &big {
            unit.extend_from_slice(&self.unit[from..b.start]);
            unit_gaps.push(Gap {
                at: unit.len(),
                value: b.clone(),
                src: 0,
            });
            from = b.end;
        }
        unit.extend_from_slice(&self.unit[from..]);
        let left_out = |offset: usize| -> usize {
            big.iter()
                .filter(|b| b.end <= offset)
                .map(|b| b.len())
                .sum()
        };
        let mut out = SparseBatch {
            buf: Vec::with_capacity(unit.len() * pipeline),
            placeholders: Vec::with_capacity(self.placeholders.len() * pipeline),
            gaps: Vec::with_capacity(unit_gaps.len() * pipeline),
            unit_len: unit.len(),
        };
        for _ in 0..pipeline {
            let base = out.buf.len();
            out.buf.extend_from_slice(&unit);
            (out.placeholders).extend(self.placeholders.iter().map(|p| Placeholder {
                offset: base + p.offset - left_out(p.offset),
                which: p.which,
            }));
            (out.gaps).extend(unit_gaps.iter().map(|g| Gap {
                at: base + g.at,
                ..g.clone()
            }));
        }
        Some(out)
    }

    /// Whether filling is needed at all.
    pub fn has_placeholders(&self) -> bool {
        !self.placeholders.is_empty()
    }
}

/// Overwrites the placeholders of a batch built by [`Template::batch`]: `__rand_int__` gets a fresh
/// value per occurrence, each `__rand_Nth__` one value per unit. `placeholders_per_unit` is the template's
/// placeholder count, so unit boundaries are known without storing them.
#[inline]
pub fn fill(
    buf: &mut [u8],
    placeholders: &[Placeholder],
    placeholders_per_unit: usize,
    keys: &mut KeyGen,
) {
    if placeholders_per_unit == 0 {
        return;
    }
    for unit_placeholders in placeholders.chunks(placeholders_per_unit) {
        fill_unit(buf, unit_placeholders, keys);
    }
}

/// Overwrites the placeholders of one unit (offsets into `buf`).
#[inline]
pub fn fill_unit(buf: &mut [u8], unit_placeholders: &[Placeholder], keys: &mut KeyGen) {
    let mut nth = [u64::MAX; 10];
    for placeholder in unit_placeholders {
        let which = placeholder.which as usize;
        let value = if which == 0 {
            keys.next(0)
        } else {
            if nth[which] == u64::MAX {
                nth[which] = keys.next(which);
            }
            nth[which]
        };
        write_12_digits(
            &mut buf[placeholder.offset..placeholder.offset + PLACEHOLDER_LEN],
            value,
        );
    }
}

pub(crate) fn find_placeholders(
    arg: &[u8],
    arg_offset: usize,
    placeholders: &mut Vec<Placeholder>,
) {
    let mut i = 0;
    while i + PLACEHOLDER_LEN <= arg.len() {
        let window = &arg[i..i + PLACEHOLDER_LEN];
        if let Some(which) = RAND_TOKENS.iter().position(|t| window == &t[..]) {
            placeholders.push(Placeholder {
                offset: arg_offset + i,
                which: which as u8,
            });
            i += PLACEHOLDER_LEN;
        } else {
            i += 1;
        }
    }
}

fn decimal_digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Splits a custom command line into a sequence: `[N] cmd args [; [N] cmd args]...`.
///
/// `;` (an argument exactly equal to it) separates commands; an argument starting with a digit
/// 1-9 at the start of a command is a repeat count. Every `__data__` inside an argument becomes a
/// fresh `data_size`-byte chunk. `stdin_arg` (from `-x`) is appended as the last argument of the
/// last command, byte-exact: no placeholder of any kind is replaced inside it.
pub fn parse_custom_command(
    args: &[Vec<u8>],
    stdin_arg: Option<Vec<u8>>,
    data_size: usize,
    payload: &mut PayloadGenerator,
) -> Result<Vec<SequenceItem>, String> {
    let mut items = Vec::new();
    let mut segments: Vec<&[Vec<u8>]> = args.split(|a| a.as_slice() == b";").collect();
    if segments.last().is_some_and(|s| s.is_empty()) && segments.len() > 1 {
        // A trailing ';' ("set a b ;") is harmless; drop the empty tail.
        segments.pop();
    }
    for segment in segments {
        let (repeat, cmd) = match segment.first() {
            Some(first) if first.first().is_some_and(|c| (b'1'..=b'9').contains(c)) => {
                let text = String::from_utf8_lossy(first);
                let n: u32 = text.parse().map_err(|_| {
                    format!("invalid repeat count \"{text}\" in command sequence: expected a whole number from 1 to 4294967295")
                })?;
                (n, &segment[1..])
            }
            _ => (1, segment),
        };
        if cmd.is_empty() {
            return Err("empty command in ';'-separated sequence".to_string());
        }
        let mut data = Vec::new();
        let args = cmd
            .iter()
            .enumerate()
            .map(|(i, a)| replace_data(a, data_size, payload, i, &mut data))
            .collect();
        items.push(SequenceItem {
            repeat,
            args,
            verbatim_arg: None,
            data,
        });
    }
    if let Some(stdin) = stdin_arg {
        let last = items
            .last_mut()
            .ok_or_else(|| "-x needs a command to append stdin to".to_string())?;
        last.verbatim_arg = Some(last.args.len());
        last.args.push(stdin);
    }
    if items.is_empty() {
        return Err("empty custom command".to_string());
    }
    Ok(items)
}

/// `arg` with each `__data__` replaced by a fresh chunk, whose (argument `index`, offset) is
/// noted in `spans`.
fn replace_data(
    arg: &[u8],
    data_size: usize,
    payload: &mut PayloadGenerator,
    index: usize,
    spans: &mut Vec<(usize, usize)>,
) -> Vec<u8> {
    const TOKEN: &[u8] = b"__data__";
    let mut out = Vec::with_capacity(arg.len());
    let mut i = 0;
    while i < arg.len() {
        if arg[i..].starts_with(TOKEN) {
            spans.push((index, out.len()));
            out.extend_from_slice(&payload.chunk(data_size));
            i += TOKEN.len();
        } else {
            out.push(arg[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::keys::SequentialCounters;
    use std::sync::Arc;

    fn v(s: &str) -> Vec<Vec<u8>> {
        s.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    fn seq(s: &str) -> Vec<SequenceItem> {
        parse_custom_command(&v(s), None, 3, &mut PayloadGenerator::default()).unwrap()
    }

    #[test]
    fn encodes_resp_and_records_slot_offsets() {
        let t = Template::encode(&seq("SET key:__rand_int__ x"), true);
        assert_eq!(
            t.unit,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$1\r\nx\r\n"
        );
        assert_eq!(t.placeholders.len(), 1);
        let o = t.placeholders[0].offset;
        assert_eq!(&t.unit[o..o + 12], b"__rand_int__");
        assert_eq!(t.commands_per_unit, 1);
    }

    #[test]
    fn layout_locates_commands_arguments_and_tags() {
        let t = Template::encode(&seq("2 set k:{tag}:__rand_int__ v ; get k:{tag}"), true);
        assert_eq!(t.layout.len(), 3);
        for cmd in &t.layout {
            assert_eq!(t.unit[cmd.bytes.start], b'*');
        }
        assert_eq!(t.layout[2].bytes.end, t.unit.len());
        let arg = |c: usize, a: usize| &t.unit[t.layout[c].args[a].clone()];
        assert_eq!(arg(1, 1), b"k:{tag}:__rand_int__");
        assert_eq!(arg(2, 0), b"get");
        let tags = t.tag_offsets();
        assert_eq!(tags.len(), 3);
        for o in tags {
            assert_eq!(&t.unit[o..o + 5], b"{tag}");
        }
    }

    #[test]
    fn without_r_placeholders_stay_literal() {
        let t = Template::encode(&seq("SET key:__rand_int__ x"), false);
        assert!(t.placeholders.is_empty());
    }

    #[test]
    fn sequences_repeat_and_count_commands() {
        let items = seq("3 set a b ; get a");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].repeat, 3);
        let t = Template::encode(&items, true);
        assert_eq!(t.commands_per_unit, 4);
        assert_eq!(t.unit.windows(3).filter(|w| w == b"set").count(), 3);
    }

    #[test]
    fn bad_sequences_are_rejected() {
        let mut g = PayloadGenerator::default();
        assert!(parse_custom_command(&v("set a b ; ; get a"), None, 3, &mut g).is_err());
        assert!(parse_custom_command(&v("3x set a b"), None, 3, &mut g).is_err());
        assert!(parse_custom_command(&v("5"), None, 3, &mut g).is_err());
        assert_eq!(
            parse_custom_command(&v("set a b ;"), None, 3, &mut g)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn data_placeholder_gets_fresh_chunks() {
        let items = parse_custom_command(
            &v("mset a __data__ b x__data__"),
            None,
            5,
            &mut PayloadGenerator::default(),
        )
        .unwrap();
        let args = &items[0].args;
        assert_eq!(args[2].len(), 5);
        assert_eq!(args[4].len(), 6);
        assert_ne!(args[2], args[4][1..], "each occurrence is a new chunk");
    }

    #[test]
    fn stdin_argument_is_last_and_verbatim() {
        let items = parse_custom_command(
            &v("set k"),
            Some(b"__rand_int__ __data__\r\n".to_vec()),
            3,
            &mut PayloadGenerator::default(),
        )
        .unwrap();
        assert_eq!(items[0].args[2], b"__rand_int__ __data__\r\n");
        let t = Template::encode(&items, true);
        assert!(
            t.placeholders.is_empty(),
            "no placeholder inside the stdin argument"
        );
    }

    #[test]
    fn sparse_batch_leaves_large_values_out_and_puts_them_back_in_place() {
        let big = vec![b'v'; SHARED_VALUE_MIN];
        let items = vec![SequenceItem {
            repeat: 1,
            args: vec![
                b"SET".to_vec(),
                b"k:__rand_int__".to_vec(),
                big.clone(),
                b"x:__rand_1st__".to_vec(),
            ],
            verbatim_arg: None,
            data: vec![(2, 0)],
        }];
        let t = Template::encode(&items, true);
        let (full, full_ph) = t.batch(3);
        let s = t
            .sparse_batch(3)
            .expect("a value of SHARED_VALUE_MIN bytes is shared");
        assert_eq!(s.buf.len(), full.len() - 3 * big.len());
        assert_eq!((s.gaps.len(), s.unit_len * 3), (3, s.buf.len()));
        // Putting each gap's bytes back gives the full batch byte for byte.
        let mut rebuilt = Vec::new();
        let mut from = 0;
        for g in &s.gaps {
            rebuilt.extend_from_slice(&s.buf[from..g.at]);
            rebuilt.extend_from_slice(&t.unit[g.value.clone()]);
            from = g.at;
        }
        rebuilt.extend_from_slice(&s.buf[from..]);
        assert_eq!(rebuilt, full);
        // Placeholders before and after the value point at the same bytes.
        assert_eq!(s.placeholders.len(), 6);
        for (a, b) in s.placeholders.iter().zip(&full_ph) {
            assert_eq!(
                &s.buf[a.offset..a.offset + 12],
                &full[b.offset..b.offset + 12]
            );
        }
        // A smaller value is copied as before.
        let mut small = items;
        small[0].args[2].truncate(SHARED_VALUE_MIN - 1);
        assert_eq!(Template::encode(&small, true).sparse_batch(1), None);
    }

    #[test]
    fn fill_draws_per_occurrence_and_per_unit() {
        let t = Template::encode(
            &seq("set k__rand_1st__ v__rand_int__ ; get k__rand_1st__ __rand_int__"),
            true,
        );
        assert_eq!(t.placeholders.len(), 4);
        let (mut buf, placeholders) = t.batch(2);
        let shared = Arc::new(SequentialCounters::default());
        let mut keys = KeyGen::new(1000, 1, 0, Some(shared));
        fill(&mut buf, &placeholders, t.placeholders.len(), &mut keys);
        let vals: Vec<&[u8]> = placeholders
            .iter()
            .map(|s| &buf[s.offset..s.offset + 12])
            .collect();
        // unit 0: 1st=0 (shared by both), int=0 then 1; unit 1: 1st=1, int=2 then 3.
        assert_eq!(vals[0], b"000000000000");
        assert_eq!(vals[1], b"000000000000");
        assert_eq!(vals[2], b"000000000000");
        assert_eq!(vals[3], b"000000000001");
        assert_eq!(vals[4], b"000000000001");
        assert_eq!(vals[5], b"000000000002");
        assert_eq!(vals[6], b"000000000001");
        assert_eq!(vals[7], b"000000000003");
    }
}
