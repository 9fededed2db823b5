//! `--dataset`: every command unit filled from one record of a CSV/TSV file (`table`) or of an
//! XML file (`xml`).
//!
//! Owns: finding `__field:<name>__` placeholders in the custom command, pre-encoding the unit of
//! every record once (one contiguous buffer plus offsets), and handing out records to batches.
//! Must not: open files (the caller passes a reader) or touch sockets.
//!
//! Field values are variable-length, so unlike `__rand_*__` placeholders they cannot be patched into a
//! fixed batch buffer. Instead each record's unit is encoded up front, with the offsets of its
//! `__rand_*__` placeholders; a batch copies P units into the connection's buffer (whose capacity only
//! ever grows to P times the longest unit, so steady state allocates nothing) and then fills the
//! placeholders as usual.
//!
//! Rules:
//! - one record per unit: every command of a `;` sequence (and every repeat) takes its fields from
//!   the same record, as `__rand_1st__` is one draw per unit;
//! - records are taken in file order from one counter shared by all connections and threads,
//!   wrapping around, so `-n` equal to the number of records sends each record exactly once;
//! - field values are sent byte-exact: `__rand_*__`, `__data__` or `__field:…__` inside a value
//!   are not replaced (like the `-x` argument); `__rand_*__` in the command's own text are;
//! - only the fields the command uses are kept; the size in the `Dataset:` line is the total of
//!   their values, as in the reference.

use std::fmt;
use std::io::{self, BufRead, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};

use super::keys::KeyGen;
use super::table::{Record, TableError, TableReader};
use super::template::{Placeholder, SequenceItem, fill, find_placeholders};
use super::xml::XmlReader;

const FIELD_PREFIX: &[u8] = b"__field:";
const FIELD_SUFFIX: &[u8] = b"__";

/// A piece of a template argument.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    /// Index into [`FieldTemplate::names`].
    Field(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Arg {
    parts: Vec<Part>,
    /// Look for `__rand_*__` in the literal parts (`-r` given, not the `-x` argument).
    scan: bool,
}

/// The custom command with its `__field:<name>__` placeholders located; built before the file is
/// read, so command-line mistakes are reported without touching it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldTemplate {
    /// One entry per command of the unit (repeats expanded).
    commands: Vec<Vec<Arg>>,
    /// Field names used, in order of first use.
    names: Vec<Vec<u8>>,
}

impl FieldTemplate {
    /// Splits every argument at its `__field:<name>__` placeholders (a `__field:` without a
    /// closing `__` is literal text). `placeholders`: `-r` was given, so `__rand_*__` in the
    /// command's text become placeholders. The `-x` argument is taken verbatim.
    ///
    /// Fails if no argument has a field placeholder: the dataset would not be used.
    pub fn compile(items: &[SequenceItem], placeholders: bool) -> Result<Self, String> {
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut commands = Vec::new();
        for item in items {
            let args: Vec<Arg> = item
                .args
                .iter()
                .enumerate()
                .map(|(i, arg)| {
                    let verbatim = item.verbatim_arg == Some(i);
                    Arg {
                        parts: if verbatim {
                            vec![Part::Literal(arg.clone())]
                        } else {
                            split_fields(arg, &mut names)
                        },
                        scan: placeholders && !verbatim,
                    }
                })
                .collect();
            for _ in 0..item.repeat {
                commands.push(args.clone());
            }
        }
        if names.is_empty() {
            return Err(
                "--dataset needs a __field:<name>__ placeholder in the command, or the \
                        dataset would not be used (e.g. HSET doc:__field:id__ body __field:body__)"
                    .to_string(),
            );
        }
        Ok(Self { commands, names })
    }

    /// Commands (and so replies) per unit.
    pub fn commands_per_unit(&self) -> u32 {
        self.commands.len() as u32
    }
}

/// `arg` as literal and field parts; new field names are appended to `names`.
fn split_fields(arg: &[u8], names: &mut Vec<Vec<u8>>) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = Vec::new();
    let mut i = 0;
    while i < arg.len() {
        if arg[i..].starts_with(FIELD_PREFIX) {
            let name_start = i + FIELD_PREFIX.len();
            if let Some(len) = find(&arg[name_start..], FIELD_SUFFIX) {
                let name = &arg[name_start..name_start + len];
                let index = match names.iter().position(|n| n == name) {
                    Some(k) => k,
                    None => {
                        names.push(name.to_vec());
                        names.len() - 1
                    }
                };
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(Part::Field(index));
                i = name_start + len + FIELD_SUFFIX.len();
                continue;
            }
        }
        literal.push(arg[i]);
        i += 1;
    }
    if !literal.is_empty() || parts.is_empty() {
        parts.push(Part::Literal(literal));
    }
    parts
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Why a dataset could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// Reading failed (the caller reports it as a runtime failure).
    Io(io::Error),
    /// The file's content does not fit the command (a usage problem), as one line.
    Invalid(String),
}

/// The pre-encoded units of all records, and the shared counter that hands them out.
pub struct Dataset {
    /// All units back to back.
    units: Vec<u8>,
    /// Unit `r` is `units[starts[r]..starts[r + 1]]`.
    starts: Vec<usize>,
    /// `__rand_*__` placeholders of every unit, offsets relative to the unit's start.
    placeholders: Vec<Placeholder>,
    /// Unit `r`'s placeholders are `placeholders[placeholder_starts[r]..placeholder_starts[r + 1]]`.
    placeholder_starts: Vec<usize>,
    /// The next record to send, over all connections and threads (taken modulo the count).
    next: AtomicU64,
    longest_unit: usize,
    /// Total bytes of the field values used (the reference's "documents" size).
    field_bytes: u64,
    commands_per_unit: u32,
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dataset")
            .field("records", &self.records())
            .field("unit_bytes", &self.units.len())
            .field("field_bytes", &self.field_bytes)
            .finish_non_exhaustive()
    }
}

/// How a dataset file lays out its records.
#[derive(Clone, Copy, Debug)]
pub enum Layout<'a> {
    /// A CSV or TSV table (`delimiter`), the first line naming the fields.
    Table { delimiter: u8 },
    /// XML whose `root` elements are the records (`--xml-root-element`; the fields are the
    /// first record's elements: `xml`).
    Xml { root: &'a str },
}

/// The reader of a dataset's layout, each giving the same records.
enum Rows<R: BufRead> {
    Table(TableReader<R>),
    Xml(XmlReader<R>),
}

impl Dataset {
    /// Reads the records of `input` laid out as `layout` (the first: the field names) and
    /// encodes `template` for each of them, at most `maxdocs`. `source` names the input in
    /// messages.
    pub fn load(
        template: &FieldTemplate,
        input: impl BufRead,
        layout: Layout<'_>,
        source: &str,
        maxdocs: Option<u64>,
    ) -> Result<Self, LoadError> {
        let (mut reader, empty) = match layout {
            Layout::Table { delimiter } => (
                Rows::Table(TableReader::new(input, delimiter)),
                format!("dataset {source} is empty: its first line must name the fields"),
            ),
            Layout::Xml { root } => (
                Rows::Xml(XmlReader::new(input, root)),
                format!("dataset {source} has no <{root}> element (--xml-root-element)"),
            ),
        };
        let next = |row: &mut Vec<Vec<u8>>| match &mut reader {
            Rows::Table(r) => r.next_record(row),
            Rows::Xml(r) => r.next_record(row),
        };
        Self::from_rows(template, next, source, maxdocs, empty)
    }

    /// The records `next` reads (the field names first), each encoded for `template`.
    fn from_rows(
        template: &FieldTemplate,
        mut next: impl FnMut(&mut Vec<Vec<u8>>) -> Result<Option<Record>, TableError>,
        source: &str,
        maxdocs: Option<u64>,
        empty: String,
    ) -> Result<Self, LoadError> {
        let invalid = |e: TableError| match e {
            TableError::Io(e) => LoadError::Io(e),
            other => LoadError::Invalid(format!("dataset {source}: {other}")),
        };
        let mut row: Vec<Vec<u8>> = Vec::new();
        let Some(header) = next(&mut row).map_err(invalid)? else {
            return Err(LoadError::Invalid(empty));
        };
        let header_names = &row[..header.fields];
        if header_names.iter().any(|h| h.contains(&0)) {
            return Err(LoadError::Invalid(format!(
                "dataset {source} is not a CSV or TSV text file (its first line has NUL bytes: \
                 {})",
                excerpt(&header_names.concat(), 16)
            )));
        }
        // Column of each field name the command uses (the first column of that name).
        let columns: Vec<usize> = template
            .names
            .iter()
            .map(|name| {
                header_names.iter().position(|h| h == name).ok_or_else(|| {
                    const SHOWN: usize = 20;
                    let mut all: Vec<String> = header_names
                        .iter()
                        .take(SHOWN)
                        .map(|h| excerpt(h, 40))
                        .collect();
                    if header_names.len() > SHOWN {
                        all.push(format!("… {} more", header_names.len() - SHOWN));
                    }
                    LoadError::Invalid(format!(
                        "field placeholder '__field:{}__' not found in dataset fields \
                         (fields: {})",
                        String::from_utf8_lossy(name),
                        all.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let width = header.fields;

        let mut ds = Dataset {
            units: Vec::new(),
            starts: vec![0],
            placeholders: Vec::new(),
            placeholder_starts: vec![0],
            next: AtomicU64::new(0),
            longest_unit: 0,
            field_bytes: 0,
            commands_per_unit: template.commands_per_unit(),
        };
        let limit = maxdocs.unwrap_or(u64::MAX);
        while (ds.records() as u64) < limit {
            let Some(rec) = next(&mut row).map_err(invalid)? else {
                break;
            };
            if rec.fields != width {
                return Err(LoadError::Invalid(format!(
                    "dataset {source}: line {}: {} field{} where the header has {width}",
                    rec.line,
                    rec.fields,
                    if rec.fields == 1 { "" } else { "s" }
                )));
            }
            let values: Vec<&[u8]> = columns.iter().map(|&c| row[c].as_slice()).collect();
            ds.field_bytes += values.iter().map(|v| v.len() as u64).sum::<u64>();
            ds.push_unit(template, &values);
        }
        if ds.records() == 0 {
            return Err(LoadError::Invalid(format!(
                "dataset {source} has no records after its header line"
            )));
        }
        ds.units.shrink_to_fit();
        ds.placeholders.shrink_to_fit();
        Ok(ds)
    }

    /// Encodes one record's unit (RESP arrays of bulk strings) and records its placeholders.
    fn push_unit(&mut self, template: &FieldTemplate, values: &[&[u8]]) {
        let start = self.units.len();
        let out = &mut self.units;
        for command in &template.commands {
            let _ = write!(out, "*{}\r\n", command.len());
            for arg in command {
                let len: usize = arg
                    .parts
                    .iter()
                    .map(|p| match p {
                        Part::Literal(l) => l.len(),
                        Part::Field(k) => values[*k].len(),
                    })
                    .sum();
                let _ = write!(out, "${len}\r\n");
                for part in &arg.parts {
                    match part {
                        Part::Literal(l) => {
                            if arg.scan {
                                find_placeholders(l, out.len() - start, &mut self.placeholders);
                            }
                            out.extend_from_slice(l);
                        }
                        Part::Field(k) => out.extend_from_slice(values[*k]),
                    }
                }
                out.extend_from_slice(b"\r\n");
            }
        }
        self.longest_unit = self.longest_unit.max(out.len() - start);
        self.starts.push(out.len());
        self.placeholder_starts.push(self.placeholders.len());
    }

    /// Number of records loaded.
    pub fn records(&self) -> usize {
        self.starts.len() - 1
    }

    /// Commands per unit.
    pub fn commands_per_unit(&self) -> u32 {
        self.commands_per_unit
    }

    /// Mean encoded length of a unit, rounded (the report's "bytes payload").
    pub fn mean_unit_len(&self) -> usize {
        (self.units.len() as f64 / self.records() as f64).round() as usize
    }

    /// `Dataset: <n> documents (<size>)`, the reference's line (size of the field values used).
    pub fn summary(&self) -> String {
        format!(
            "Dataset: {} documents ({})",
            self.records(),
            format_size(self.field_bytes)
        )
    }

    /// Replaces `out` with the next `units` records' units, their `__rand_*__` placeholders filled;
    /// returns the batch's length. Allocates only while `out` grows to `units` times the longest
    /// unit (once per connection).
    #[inline]
    pub fn fill_batch(&self, out: &mut Vec<u8>, units: usize, keys: &mut KeyGen) -> usize {
        out.clear();
        out.reserve(units * self.longest_unit);
        let n = self.records() as u64;
        let first = self.next.fetch_add(units as u64, Ordering::Relaxed);
        for k in 0..units as u64 {
            let r = (first.wrapping_add(k) % n) as usize;
            let base = out.len();
            out.extend_from_slice(&self.units[self.starts[r]..self.starts[r + 1]]);
            let placeholders =
                &self.placeholders[self.placeholder_starts[r]..self.placeholder_starts[r + 1]];
            if !placeholders.is_empty() {
                fill(&mut out[base..], placeholders, placeholders.len(), keys);
            }
        }
        out.len()
    }
}

/// The reference's size format: bytes below 1 KiB, then KB/MB/GB (powers of 1024) with two
/// decimals.
fn format_size(bytes: u64) -> String {
    const K: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < K * K {
        format!("{:.2} KB", b / K)
    } else if b < K * K * K {
        format!("{:.2} MB", b / (K * K))
    } else {
        format!("{:.2} GB", b / (K * K * K))
    }
}

/// At most `max` characters of `bytes` for a message: printable text as it is, anything else
/// escaped (`\x00`, `\n`), and `…` where it was cut, so that a binary file named as a dataset
/// gives one readable line instead of kilobytes of raw bytes.
fn excerpt(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for chunk in bytes.utf8_chunks() {
        let invalid = chunk.invalid().iter().map(|&b| format!("\\x{b:02x}"));
        let valid = chunk.valid().chars().map(|c| {
            if c.is_ascii_control() {
                format!("\\x{:02x}", u32::from(c))
            } else if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        });
        for piece in valid.chain(invalid) {
            if shown == max {
                out.push('…');
                return out;
            }
            out.push_str(&piece);
            shown += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PayloadGenerator;
    use crate::workload::keys::SequentialCounters;
    use crate::workload::template::parse_custom_command;
    use std::sync::Arc;

    fn items(cmd: &[&str]) -> Vec<SequenceItem> {
        let args: Vec<Vec<u8>> = cmd.iter().map(|a| a.as_bytes().to_vec()).collect();
        parse_custom_command(&args, None, 3, &mut PayloadGenerator::default()).unwrap()
    }

    fn load(cmd: &[&str], csv: &str, r: bool, maxdocs: Option<u64>) -> Result<Dataset, String> {
        let t = FieldTemplate::compile(&items(cmd), r)?;
        Dataset::load(
            &t,
            csv.as_bytes(),
            Layout::Table { delimiter: b',' },
            "t.csv",
            maxdocs,
        )
        .map_err(|e| match e {
            LoadError::Io(e) => format!("io: {e}"),
            LoadError::Invalid(m) => m,
        })
    }

    fn keys(sequential: bool) -> KeyGen {
        KeyGen::new(
            1000,
            1,
            0,
            sequential.then(|| Arc::new(SequentialCounters::default())),
        )
    }

    fn batch(ds: &Dataset, units: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let len = ds.fill_batch(&mut out, units, &mut keys(true));
        assert_eq!(len, out.len());
        out
    }

    fn encoded(args: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        out
    }

    #[test]
    fn units_are_resp_with_the_record_fields_in_file_order_wrapping() {
        let ds = load(
            &["HSET", "doc:__field:id__", "name", "__field:name__"],
            "id,name,score\n1,ann,5\n2,\"b, o\"\"b\",7\n",
            false,
            None,
        )
        .unwrap();
        assert_eq!(ds.records(), 2);
        let mut want = encoded(&["HSET", "doc:1", "name", "ann"]);
        want.extend(encoded(&["HSET", "doc:2", "name", "b, o\"b"]));
        want.extend(encoded(&["HSET", "doc:1", "name", "ann"]));
        assert_eq!(batch(&ds, 3), want);
        // The counter carried on: the next batch starts with record 2.
        assert_eq!(
            batch(&ds, 1),
            encoded(&["HSET", "doc:2", "name", "b, o\"b"])
        );
        // Only the used fields count: "1ann" + "2b, o\"b".
        assert_eq!(ds.summary(), "Dataset: 2 documents (11 bytes)");
    }

    #[test]
    fn sequences_take_one_record_per_unit() {
        let ds = load(
            &[
                "2",
                "SET",
                "k:__field:id__",
                "__field:v__",
                ";",
                "GET",
                "k:__field:id__",
            ],
            "id,v\na,1\nb,2\n",
            false,
            None,
        )
        .unwrap();
        assert_eq!(ds.commands_per_unit(), 3);
        let mut want = encoded(&["SET", "k:a", "1"]);
        want.extend(encoded(&["SET", "k:a", "1"]));
        want.extend(encoded(&["GET", "k:a"]));
        assert_eq!(batch(&ds, 1), want);
    }

    #[test]
    fn rand_placeholders_fill_in_the_command_but_not_in_values() {
        let ds = load(
            &[
                "SET",
                "k:__rand_1st__:__field:id__",
                "__field:v__:__rand_1st__",
            ],
            "id,v\n__rand_int__,__rand_1st__\n",
            true,
            None,
        )
        .unwrap();
        let out = batch(&ds, 2);
        let text = String::from_utf8(out).unwrap();
        // Sequential counter for __rand_1st__: one draw per unit (0, then 1).
        assert_eq!(
            text,
            "*3\r\n$3\r\nSET\r\n$27\r\nk:000000000000:__rand_int__\r\n$25\r\n__rand_1st__:000000000000\r\n\
             *3\r\n$3\r\nSET\r\n$27\r\nk:000000000001:__rand_int__\r\n$25\r\n__rand_1st__:000000000001\r\n"
        );
    }

    #[test]
    fn maxdocs_limits_the_records_read() {
        let csv = "id\n1\n2\n3\n4\n5\n";
        assert_eq!(
            load(&["GET", "__field:id__"], csv, false, Some(3))
                .unwrap()
                .records(),
            3
        );
        assert_eq!(
            load(&["GET", "__field:id__"], csv, false, None)
                .unwrap()
                .records(),
            5
        );
        // A malformed row past the limit is never read.
        let ragged = "id,x\n1,a\n2\n";
        assert!(load(&["GET", "__field:id__"], ragged, false, Some(1)).is_ok());
    }

    #[test]
    fn field_placeholder_edge_cases() {
        // Two fields in one argument, a field name used twice, an unterminated one stays literal.
        let ds = load(
            &["SET", "__field:a__-__field:b__", "__field:a____field:x"],
            "b,a\n2,1\n",
            false,
            None,
        )
        .unwrap();
        assert_eq!(batch(&ds, 1), encoded(&["SET", "1-2", "1__field:x"]));
        // Empty values make empty arguments.
        let ds = load(
            &["SET", "k__field:a__", "__field:a__"],
            "a\n\"\"\n",
            false,
            None,
        )
        .unwrap();
        assert_eq!(batch(&ds, 1), encoded(&["SET", "k", ""]));
    }

    #[test]
    fn mistakes_are_one_line_messages() {
        let no_field = load(&["SET", "a", "b"], "a\n1\n", false, None).unwrap_err();
        assert!(no_field.starts_with("--dataset needs a __field:<name>__ placeholder"));
        assert_eq!(
            load(
                &["GET", "__field:nme__"],
                "id,name,score\n1,a,2\n",
                false,
                None
            )
            .unwrap_err(),
            "field placeholder '__field:nme__' not found in dataset fields (fields: id, name, score)"
        );
        assert_eq!(
            load(&["GET", "__field:id__"], "", false, None).unwrap_err(),
            "dataset t.csv is empty: its first line must name the fields"
        );
        assert_eq!(
            load(&["GET", "__field:id__"], "id,name\n", false, None).unwrap_err(),
            "dataset t.csv has no records after its header line"
        );
        assert_eq!(
            load(&["GET", "__field:id__"], "id,name\n1,a\n\n2\n", false, None).unwrap_err(),
            "dataset t.csv: line 4: 1 field where the header has 2"
        );
        assert_eq!(
            load(&["GET", "__field:id__"], "id,name\n1,a,b\n", false, None).unwrap_err(),
            "dataset t.csv: line 2: 3 fields where the header has 2"
        );
        assert!(!no_field.contains('\n'));
    }

    #[test]
    fn stdin_argument_is_verbatim() {
        let args: Vec<Vec<u8>> = vec![b"SET".to_vec(), b"k:__field:id__".to_vec()];
        let items = parse_custom_command(
            &args,
            Some(b"__field:id__ __rand_int__".to_vec()),
            3,
            &mut PayloadGenerator::default(),
        )
        .unwrap();
        let t = FieldTemplate::compile(&items, true).unwrap();
        let ds = Dataset::load(
            &t,
            "id\n7\n".as_bytes(),
            Layout::Table { delimiter: b',' },
            "x",
            None,
        )
        .unwrap();
        assert_eq!(
            batch(&ds, 1),
            encoded(&["SET", "k:7", "__field:id__ __rand_int__"])
        );
    }

    #[test]
    fn batches_reuse_the_buffer() {
        let ds = load(&["GET", "__field:id__"], "id\n1\n22\n333\n", false, None).unwrap();
        let mut out = Vec::new();
        let mut k = keys(false);
        ds.fill_batch(&mut out, 4, &mut k);
        let cap = out.capacity();
        let ptr = out.as_ptr();
        for units in [4, 1, 3, 4] {
            ds.fill_batch(&mut out, units, &mut k);
            assert_eq!((out.capacity(), out.as_ptr()), (cap, ptr));
        }
        // 20, 21 and 22 bytes.
        assert_eq!(ds.mean_unit_len(), 21);
    }

    #[test]
    fn excerpts_escape_what_is_not_text_and_stop_at_the_limit() {
        assert_eq!(excerpt(b"name", 40), "name");
        assert_eq!(
            excerpt(b"\x7fELF\x02\x01\x00\xff", 40),
            "\\x7fELF\\x02\\x01\\x00\\xff"
        );
        assert_eq!(excerpt("é".repeat(50).as_bytes(), 3), "ééé…");
    }

    #[test]
    fn sizes_use_the_reference_units() {
        assert_eq!(format_size(1023), "1023 bytes");
        assert_eq!(format_size(1024), "1.00 KB");
        assert_eq!(format_size(1536 * 1024), "1.50 MB");
        assert_eq!(format_size(3 << 30), "3.00 GB");
    }
}
