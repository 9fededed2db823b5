//! A small streaming CSV/TSV reader for `--dataset`.
//!
//! Owns: splitting a byte stream into records of fields. Must not: open files or know what the
//! fields are for (see `dataset`). Records are read one at a time into reused buffers, so a file
//! is never held in memory whole and `--maxdocs` stops reading early.
//!
//! Rules (RFC 4180, with the delimiter chosen by the caller: `,` or tab):
//! - a record ends at LF or CRLF (a lone CR is an ordinary byte); the last line needs no line end;
//! - a field that *starts* with `"` is quoted: it runs to the next `"` that is not doubled, may
//!   contain the delimiter and line breaks, and `""` inside it stands for one `"`; after its
//!   closing quote only the delimiter or the end of the line may follow;
//! - a `"` anywhere else is an ordinary byte (`5" screen` reads as is);
//! - blank lines are skipped; a UTF-8 byte-order mark at the very start is dropped;
//! - bytes are bytes: no encoding is assumed or checked.
//!
//! valkey-benchmark instead toggles quoting at every `"`, keeps `""` doubled in the value and reads
//! exactly one record per line; for well-formed files the results are the same.

use std::fmt;
use std::io::{self, BufRead};

/// Why a table could not be read.
#[derive(Debug)]
pub enum TableError {
    /// Reading the input failed.
    Io(io::Error),
    /// The bytes are not a well-formed table; `line` is 1-based.
    Invalid { line: u64, message: String },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::Invalid { line, message } => write!(f, "line {line}: {message}"),
        }
    }
}

/// Where a record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Number of fields (the first `fields` entries of the caller's buffer).
    pub fields: usize,
    /// Line (1-based) on which the record starts.
    pub line: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of a field.
    FieldStart,
    /// Inside a field that did not start with a quote.
    Unquoted,
    /// Inside a quoted field.
    Quoted,
    /// Just after a `"` inside a quoted field: a doubled quote or the closing one.
    QuotedQuote,
}

/// Reads records from `input`, one [`next_record`](Self::next_record) call at a time.
#[derive(Debug)]
pub struct TableReader<R> {
    input: R,
    delimiter: u8,
    /// The line the reader is on (1-based).
    line: u64,
    /// Bytes of a UTF-8 byte-order mark matched at the start of the input; `None` once past it.
    bom: Option<usize>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What one byte did to the record being read.
enum Step {
    More,
    /// The record ended (its line end was consumed).
    End,
}

/// The state of the record being read.
struct Machine {
    delimiter: u8,
    state: State,
    /// Completed fields of this record; field `n` is the one being filled.
    n: usize,
    /// A CR seen outside a quoted field: a line end if LF follows, else an ordinary byte.
    cr: bool,
    /// Whether this record has any byte yet (an empty line is skipped, `""` is not).
    any: bool,
    start_line: u64,
}

impl Machine {
    fn step(
        &mut self,
        b: u8,
        line: &mut u64,
        fields: &mut Vec<Vec<u8>>,
    ) -> Result<Step, TableError> {
        if self.cr {
            self.cr = false;
            if b == b'\n' {
                return Ok(self.line_end(line));
            }
            // The CR was data.
            if self.state == State::QuotedQuote {
                return Err(after_quote(*line, b'\r', self.n));
            }
            fields[self.n].push(b'\r');
            self.state = State::Unquoted;
            self.any = true;
        }
        match (self.state, b) {
            (State::Quoted, b'"') => self.state = State::QuotedQuote,
            (State::Quoted, _) => {
                if b == b'\n' {
                    *line += 1;
                }
                fields[self.n].push(b);
            }
            (State::QuotedQuote, b'"') => {
                fields[self.n].push(b'"');
                self.state = State::Quoted;
            }
            (_, b'\r') => self.cr = true,
            (_, b'\n') => return Ok(self.line_end(line)),
            (_, _) if b == self.delimiter => {
                self.any = true;
                self.n += 1;
                start_field(fields, self.n);
                self.state = State::FieldStart;
            }
            (State::QuotedQuote, _) => return Err(after_quote(*line, b, self.n)),
            (State::FieldStart, b'"') => {
                self.any = true;
                self.state = State::Quoted;
            }
            (State::FieldStart | State::Unquoted, _) => {
                self.any = true;
                fields[self.n].push(b);
                self.state = State::Unquoted;
            }
        }
        Ok(Step::More)
    }

    /// A line end outside a quoted field: the record ends, or a blank line is skipped.
    fn line_end(&mut self, line: &mut u64) -> Step {
        *line += 1;
        if self.any {
            Step::End
        } else {
            self.start_line = *line;
            Step::More
        }
    }
}

impl<R: BufRead> TableReader<R> {
    pub fn new(input: R, delimiter: u8) -> Self {
        Self {
            input,
            delimiter,
            line: 1,
            bom: Some(0),
        }
    }

    /// Reads the next record into `fields` (entries are reused: the first [`Record::fields`] of
    /// them hold the record afterwards, the rest are stale). `None` at the end of the input.
    pub fn next_record(&mut self, fields: &mut Vec<Vec<u8>>) -> Result<Option<Record>, TableError> {
        let mut m = Machine {
            delimiter: self.delimiter,
            state: State::FieldStart,
            n: 0,
            cr: false,
            any: false,
            start_line: self.line,
        };
        start_field(fields, 0);
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TableError::Io(e)),
            };
            if buf.is_empty() {
                // A partial byte-order mark at the end of the input was data.
                if let Some(matched) = self.bom.take() {
                    for &x in &BOM[..matched] {
                        m.step(x, &mut self.line, fields)?;
                    }
                }
                return match m.state {
                    State::Quoted => Err(TableError::Invalid {
                        line: m.start_line,
                        message: "a quoted field is not closed before the end of the file"
                            .to_string(),
                    }),
                    // A trailing CR at the end of the file ends the line.
                    _ if !m.any => Ok(None),
                    _ => Ok(Some(Record {
                        fields: m.n + 1,
                        line: m.start_line,
                    })),
                };
            }
            let mut used = 0;
            let mut end = false;
            for &b in buf {
                used += 1;
                if let Some(matched) = self.bom {
                    if b == BOM[matched] {
                        self.bom = (matched + 1 < BOM.len()).then_some(matched + 1);
                        continue;
                    }
                    // Not a byte-order mark after all: what matched so far is data.
                    self.bom = None;
                    for &x in &BOM[..matched] {
                        m.step(x, &mut self.line, fields)?;
                    }
                }
                if let Step::End = m.step(b, &mut self.line, fields)? {
                    end = true;
                    break;
                }
            }
            self.input.consume(used);
            if end {
                return Ok(Some(Record {
                    fields: m.n + 1,
                    line: m.start_line,
                }));
            }
        }
    }
}

/// Makes `fields[n]` an empty field, reusing its buffer.
fn start_field(fields: &mut Vec<Vec<u8>>, n: usize) {
    match fields.get_mut(n) {
        Some(f) => f.clear(),
        None => fields.push(Vec::new()),
    }
}

fn after_quote(line: u64, b: u8, field: usize) -> TableError {
    TableError::Invalid {
        line,
        message: format!(
            "unexpected {} after the closing quote of field {} (a quoted field must end at a \
             delimiter or the end of the line; write a quote inside it as \"\")",
            std::ascii::escape_default(b),
            field + 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All records of `text`, as strings, read through a reader whose buffer is `chunk` bytes (so
    /// every split point is exercised with chunk = 1).
    fn read(text: &str, delimiter: u8, chunk: usize) -> Result<Vec<Vec<String>>, String> {
        let input = io::BufReader::with_capacity(chunk, text.as_bytes());
        let mut r = TableReader::new(input, delimiter);
        let mut fields = Vec::new();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record(&mut fields).map_err(|e| e.to_string())? {
            out.push(
                fields[..rec.fields]
                    .iter()
                    .map(|f| String::from_utf8(f.clone()).unwrap())
                    .collect(),
            );
        }
        Ok(out)
    }

    fn csv(text: &str) -> Vec<Vec<String>> {
        let whole = read(text, b',', 8192).unwrap();
        for chunk in [1, 2, 3, 7] {
            assert_eq!(read(text, b',', chunk).unwrap(), whole, "chunk {chunk}");
        }
        whole
    }

    fn rows(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn plain_lines_lf_crlf_and_no_final_newline() {
        assert_eq!(
            csv("id,name\n1,ann\r\n2,bob"),
            rows(&[&["id", "name"], &["1", "ann"], &["2", "bob"]])
        );
        assert_eq!(csv("a\n"), rows(&[&["a"]]));
    }

    #[test]
    fn quoted_fields_hold_delimiters_quotes_and_newlines() {
        assert_eq!(
            csv("a,b,c\n\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n"),
            rows(&[&["a", "b", "c"], &["x,y", "say \"hi\"", "two\nlines"]])
        );
        // Empty quoted field, and an empty quoted record is not a blank line.
        assert_eq!(
            csv("a,b\n\"\",x\n\"\"\n"),
            rows(&[&["a", "b"], &["", "x"], &[""]])
        );
    }

    #[test]
    fn quotes_inside_unquoted_fields_are_data() {
        assert_eq!(
            csv("d,n\na 5\" screen,ab\"c\n"),
            rows(&[&["d", "n"], &["a 5\" screen", "ab\"c"]])
        );
    }

    #[test]
    fn empty_fields_blank_lines_and_bom() {
        assert_eq!(
            csv("\u{feff}a,b,c\n\n,,\r\n\r\nx,,z\n\n"),
            rows(&[&["a", "b", "c"], &["", "", ""], &["x", "", "z"]])
        );
        assert_eq!(csv(""), rows(&[]));
        assert_eq!(csv("\n\r\n"), rows(&[]));
    }

    #[test]
    fn lone_cr_is_data() {
        assert_eq!(csv("a\rb,c\n"), rows(&[&["a\rb", "c"]]));
    }

    #[test]
    fn tsv_uses_tabs_and_keeps_commas() {
        assert_eq!(
            read("id\ttext\n1\ta, b\n2\t\"t\tab\"\n", b'\t', 3).unwrap(),
            rows(&[&["id", "text"], &["1", "a, b"], &["2", "t\tab"]])
        );
    }

    #[test]
    fn malformed_quotes_are_errors_with_line_numbers() {
        let e = read("a\n\"open\nstill open", b',', 8192).unwrap_err();
        assert_eq!(
            e,
            "line 2: a quoted field is not closed before the end of the file"
        );
        let e = read("a,b\n1,2\n\"x\"y,3\n", b',', 8192).unwrap_err();
        assert!(
            e.starts_with("line 3: unexpected y after the closing quote of field 1"),
            "{e}"
        );
    }

    #[test]
    fn record_line_numbers_count_physical_lines() {
        let input = io::BufReader::new("h\n\n\"a\nb\"\nc\n".as_bytes());
        let mut r = TableReader::new(input, b',');
        let mut f = Vec::new();
        let lines: Vec<u64> = std::iter::from_fn(|| r.next_record(&mut f).unwrap())
            .map(|rec| rec.line)
            .collect();
        assert_eq!(lines, [1, 3, 5]);
    }
}
