//! Reading a trace as a stream: the format told from its first line, one entry at a time into
//! buffers that are reused, every line and entry bounded by [`MAX_ENTRY`].

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::native::{self, FORMAT_LINE};
use super::{Entry, MAX_ENTRY, Payload, TraceError, monitor};

/// Which kind of trace a reader found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// respbench's own (`#respbench-trace 1`).
    Respbench,
    /// `valkey-cli monitor` / `redis-cli monitor` text.
    Monitor,
}

/// A trace, read entry by entry.
pub struct Reader<R: BufRead> {
    input: R,
    format: Format,
    /// The number of the last line read (1-based), for messages.
    line: u64,
    /// A MONITOR trace's first line, read to tell the format, not yet returned.
    pending: Option<Vec<u8>>,
    /// MONITOR lines have no sequence number: the reader numbers the commands it returns.
    next_seq: u64,
    buf: Vec<u8>,
}

impl Reader<BufReader<File>> {
    /// Opens `path` (`-`: standard input) and tells its format. Reads only what telling the
    /// format needs, into the buffer the entries are then read from: a pipe or FIFO can be read
    /// once, so the reader that opened it is the one that reads it to the end.
    pub fn open(path: &Path) -> Result<Reader<BufReader<File>>, TraceError> {
        let real = if path == Path::new("-") {
            Path::new("/dev/stdin")
        } else {
            path
        };
        let file = File::open(real)
            .map_err(|e| TraceError::Io(format!("cannot open {}: {e}", path.display())))?;
        Reader::new(BufReader::with_capacity(1 << 16, file))
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the first line of `input` to tell its format.
    pub fn new(mut input: R) -> Result<Reader<R>, TraceError> {
        let mut first = Vec::new();
        if !read_line(&mut input, &mut first, 1)? {
            return Err(TraceError::Malformed {
                line: 1,
                reason: "an empty trace".into(),
            });
        }
        let text = first.strip_suffix(b"\r").unwrap_or(&first);
        let (format, pending) = if text == FORMAT_LINE.as_bytes() {
            (Format::Respbench, None)
        } else if text.starts_with(b"#respbench-trace") {
            return Err(TraceError::Malformed {
                line: 1,
                reason: format!(
                    "{:?}: a respbench trace of a version this build does not read (it reads `{FORMAT_LINE}`)",
                    String::from_utf8_lossy(text)
                ),
            });
        } else if monitor::parse_monitor_line(&first, &mut Entry::empty()).is_ok() {
            (Format::Monitor, Some(first))
        } else {
            return Err(TraceError::Malformed {
                line: 1,
                reason: format!(
                    "not a trace: the first line is neither `{FORMAT_LINE}` nor a MONITOR line \
                     (`1700000000.123456 [0 127.0.0.1:54321] \"GET\" \"k\"`)"
                ),
            });
        };
        Ok(Reader {
            input,
            format,
            line: 1,
            pending,
            next_seq: 1,
            buf: Vec::new(),
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of the last line read, for a caller's message.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next entry into `entry` (its buffers reused): `Ok(false)` at the end of the trace.
    /// A MONITOR trace's script lines (`[0 lua]`) are returned like any other, marked by
    /// [`Entry::from_script`]: the caller decides (replay skips them, a count may not).
    pub fn next_into(&mut self, entry: &mut Entry) -> Result<bool, TraceError> {
        match self.format {
            Format::Respbench => self.next_native(entry),
            Format::Monitor => self.next_monitor(entry),
        }
    }

    fn next_native(&mut self, entry: &mut Entry) -> Result<bool, TraceError> {
        loop {
            self.line += 1;
            let Some(ended) = read_line_ended(&mut self.input, &mut self.buf, self.line)? else {
                return Ok(false);
            };
            let text = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
            if text.is_empty() || text.starts_with(b"#") {
                continue;
            }
            let header = match native::parse_header(text, self.line, entry) {
                Ok(h) => h,
                // A header the file ends inside (no newline after it) is an entry cut short by
                // a writer that was killed, not a malformed line.
                Err(_) if !ended => return Err(TraceError::Truncated { line: self.line }),
                Err(e) => return Err(e),
            };
            self.buf.clear();
            self.buf.resize(header.len + 1, 0);
            let line = self.line;
            read_exact(&mut self.input, &mut self.buf, line)?;
            if self.buf[header.len] != b'\n' {
                return Err(TraceError::Malformed {
                    line,
                    reason: format!(
                        "the entry's {} bytes are not followed by a newline",
                        header.len
                    ),
                });
            }
            // The body may hold newlines: count them so later messages name the right line.
            self.line += self.buf[..header.len]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64
                + 1;
            let body = &self.buf[..header.len];
            if header.raw {
                match &mut entry.payload {
                    Payload::Raw(bytes) => {
                        bytes.clear();
                        bytes.extend_from_slice(body);
                    }
                    other => *other = Payload::Raw(body.to_vec()),
                }
            } else {
                if !matches!(entry.payload, Payload::Command(_)) {
                    entry.payload = Payload::Command(Vec::new());
                }
                let Payload::Command(args) = &mut entry.payload else {
                    unreachable!("set to a command above")
                };
                native::parse_command(body, args)
                    .map_err(|reason| TraceError::Malformed { line, reason })?;
            }
            return Ok(true);
        }
    }

    fn next_monitor(&mut self, entry: &mut Entry) -> Result<bool, TraceError> {
        loop {
            let ended = if let Some(first) = self.pending.take() {
                self.buf = first;
                true
            } else {
                self.line += 1;
                match read_line_ended(&mut self.input, &mut self.buf, self.line)? {
                    None => return Ok(false),
                    Some(ended) => ended,
                }
            };
            let line = self.line;
            // A last line the file ends inside (no newline) that does not parse is a capture cut
            // short (`valkey-cli monitor > f` killed mid-line), not a malformed line.
            let is_command = monitor::parse_monitor_line(&self.buf, entry).map_err(|reason| {
                if ended {
                    TraceError::Malformed { line, reason }
                } else {
                    TraceError::Truncated { line }
                }
            })?;
            if is_command {
                entry.seq = self.next_seq;
                self.next_seq += 1;
                return Ok(true);
            }
        }
    }
}

/// One line without its `\n` into `buf`; `Ok(false)` at the end of the input. A line longer
/// than [`MAX_ENTRY`] is refused before it is held whole.
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>, line: u64) -> Result<bool, TraceError> {
    read_line_ended(input, buf, line).map(|l| l.is_some())
}

/// As [`read_line`], saying also whether the line ended with its `\n` (`Some(false)`: the input
/// ended inside it).
fn read_line_ended<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    line: u64,
) -> Result<Option<bool>, TraceError> {
    buf.clear();
    loop {
        let available = input
            .fill_buf()
            .map_err(|e| TraceError::Io(format!("line {line}: {e}")))?;
        if available.is_empty() {
            return Ok((!buf.is_empty()).then_some(false));
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let keep = if done { take - 1 } else { take };
        if buf.len() + keep > MAX_ENTRY {
            return Err(TraceError::TooLarge {
                line,
                size: buf.len() + keep,
            });
        }
        buf.extend_from_slice(&available[..keep]);
        input.consume(take);
        if done {
            return Ok(Some(true));
        }
    }
}

/// Fills `buf` exactly; the input ending first is a truncated entry.
fn read_exact<R: BufRead>(input: &mut R, buf: &mut [u8], line: u64) -> Result<(), TraceError> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            TraceError::Truncated { line }
        } else {
            TraceError::Io(format!("line {line}: {e}"))
        }
    })
}
