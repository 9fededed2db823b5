//! A streaming XML reader for `--dataset FILE.xml --xml-root-element NAME`, as valkey-benchmark
//! reads XML datasets (Valkey's performance CI passes them for its search benchmarks).
//!
//! Owns: turning a byte stream into records in the shape `table::TableReader` gives — the field
//! names first, then one row a document, aligned to those names — so `dataset` encodes both
//! formats alike. Must not: open files or know what the fields are for.
//!
//! Rules, as valkey-benchmark's (differences noted):
//! - a *document* is each `NAME` element, wherever it stands (the file's own root may wrap them);
//! - the *fields* are the names of every element inside the first document, in the order they
//!   first appear, at any depth (the first occurrence of a repeated name wins);
//! - a field's value in a document is the content of the first element of that name in it: its
//!   text (entities and character references decoded — valkey-benchmark copies them as written)
//!   when it holds only text, its inner XML as written when it holds elements, comments or CDATA
//!   (as valkey-benchmark); empty when the document lacks it or it is empty (`<x/>`);
//! - names are compared as written (prefixes included; no namespace resolution), so `<id` never
//!   matches `<identity>` (valkey-benchmark's prefix search does).
//!
//! Memory: the reader holds one document at a time (its bytes, to cut values out of), at most
//! [`MAX_DOCUMENT`] bytes; a file of any length streams. Malformed XML is refused with the byte
//! offset and the document's number.

use std::io::{self, BufRead};

use quick_xml::Reader;
use quick_xml::events::Event;

use super::table::{Record, TableError};

/// The largest document read (valkey-benchmark's buffer grows without bound).
pub const MAX_DOCUMENT: usize = 64 << 20;

/// Reads documents from `input`, one [`next_record`](Self::next_record) call at a time: the first
/// call gives the field names, each later one a document's values.
pub struct XmlReader<R: BufRead> {
    reader: Reader<Tee<R>>,
    root: Vec<u8>,
    /// The field names (from the first document), once read.
    names: Option<Vec<Vec<u8>>>,
    /// The first document's values, read with the names and handed out on the next call.
    first: Option<Vec<Vec<u8>>>,
    /// Documents read so far.
    documents: u64,
    event: Vec<u8>,
}

impl<R: BufRead> std::fmt::Debug for XmlReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XmlReader")
            .field("root", &String::from_utf8_lossy(&self.root))
            .field("documents", &self.documents)
            .finish_non_exhaustive()
    }
}

/// A document as read: the names of its elements (in order of first appearance) and the values
/// asked for.
struct Document(Vec<Vec<u8>>, Vec<Vec<u8>>);

/// One element of a document while it is read: its name and where its content starts in the
/// document's bytes, and whether it holds anything but text.
struct Open {
    name: Vec<u8>,
    start: usize,
    mixed: bool,
}

impl<R: BufRead> XmlReader<R> {
    pub fn new(input: R, root: &str) -> Self {
        XmlReader {
            reader: Reader::from_reader(Tee {
                inner: input,
                kept: Vec::new(),
            }),
            root: root.as_bytes().to_vec(),
            names: None,
            first: None,
            documents: 0,
            event: Vec::new(),
        }
    }

    /// Fills `fields` with the next record (the names first, then each document's values) and
    /// says how many fields it has and where it began (`line` is the document's number here, as
    /// XML has no records per line). `None` at the end of the input.
    pub fn next_record(&mut self, fields: &mut Vec<Vec<u8>>) -> Result<Option<Record>, TableError> {
        if self.names.is_none() {
            let Some(Document(names, values)) = self.read_document(None)? else {
                return Ok(None);
            };
            *fields = names.clone();
            self.names = Some(names);
            self.first = Some(values);
            return Ok(Some(Record {
                fields: fields.len(),
                line: 0,
            }));
        }
        if let Some(values) = self.first.take() {
            *fields = values;
            return Ok(Some(self.record(fields)));
        }
        let names = self.names.take();
        let read = self.read_document(names.as_deref());
        self.names = names;
        match read? {
            Some(Document(_, values)) => {
                *fields = values;
                Ok(Some(self.record(fields)))
            }
            None => Ok(None),
        }
    }

    fn record(&self, fields: &[Vec<u8>]) -> Record {
        Record {
            fields: fields.len(),
            line: self.documents,
        }
    }

    /// Skips to the next document and reads it: the names of its elements in order of first
    /// appearance and, for `known` names (or its own, for the first document), their values.
    fn read_document(&mut self, known: Option<&[Vec<u8>]>) -> Result<Option<Document>, TableError> {
        let empty_root = loop {
            self.event.clear();
            self.reader.get_mut().kept.clear();
            match self.reader.read_event_into(&mut self.event) {
                Ok(Event::Start(e)) if e.name().as_ref() == self.root => break false,
                Ok(Event::Empty(e)) if e.name().as_ref() == self.root => break true,
                Ok(Event::Eof) => return Ok(None),
                Ok(_) => {}
                Err(e) => return Err(self.malformed(&e.to_string())),
            }
        };
        self.documents += 1;
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut spans: Vec<Option<(usize, usize, bool)>> = Vec::new();
        if !empty_root {
            self.reader.get_mut().kept.clear();
            self.read_elements(&mut names, &mut spans)?;
        }
        let doc = &self.reader.get_ref().kept;
        let value = |span: Option<(usize, usize, bool)>| match span {
            None => Ok(Vec::new()),
            Some((from, to, mixed)) => text_of(&doc[from..to], mixed),
        };
        let wanted = known.unwrap_or(&names);
        let mut values = Vec::with_capacity(wanted.len());
        for name in wanted {
            let span = names.iter().position(|n| n == name).and_then(|i| spans[i]);
            values.push(value(span).map_err(|e| self.malformed(&e))?);
        }
        Ok(Some(Document(names, values)))
    }

    /// Reads a document's elements up to its end tag: each name's first span in the document's
    /// bytes (content start, content end, whether it holds more than text).
    fn read_elements(
        &mut self,
        names: &mut Vec<Vec<u8>>,
        spans: &mut Vec<Option<(usize, usize, bool)>>,
    ) -> Result<(), TableError> {
        let base = self.reader.buffer_position();
        let mut open: Vec<Open> = Vec::new();
        loop {
            let before = (self.reader.buffer_position() - base) as usize;
            if before > MAX_DOCUMENT {
                return Err(self.malformed(&format!(
                    "the document is larger than {} MiB",
                    MAX_DOCUMENT >> 20
                )));
            }
            self.event.clear();
            let event = self.reader.read_event_into(&mut self.event);
            let after = (self.reader.buffer_position() - base) as usize;
            match event {
                Ok(Event::Start(e)) => {
                    if let Some(parent) = open.last_mut() {
                        parent.mixed = true;
                    }
                    let name = e.name().as_ref().to_vec();
                    first_seen(names, spans, &name);
                    open.push(Open {
                        name,
                        start: after,
                        mixed: false,
                    });
                }
                Ok(Event::Empty(e)) => {
                    if let Some(parent) = open.last_mut() {
                        parent.mixed = true;
                    }
                    first_seen(names, spans, e.name().as_ref());
                }
                Ok(Event::End(_)) => match open.pop() {
                    Some(el) => {
                        let i = names.iter().position(|n| *n == el.name).unwrap_or(0);
                        if spans[i].is_none() {
                            spans[i] = Some((el.start, before, el.mixed));
                        }
                    }
                    // The document's own end tag (quick-xml checks that the names match).
                    None => return Ok(()),
                },
                Ok(Event::CData(_) | Event::Comment(_) | Event::PI(_)) => {
                    if let Some(el) = open.last_mut() {
                        el.mixed = true;
                    }
                }
                Ok(Event::Eof) => {
                    return Err(self.malformed("the file ends inside the document"));
                }
                Ok(_) => {}
                Err(e) => return Err(self.malformed(&e.to_string())),
            }
        }
    }

    fn malformed(&self, what: &str) -> TableError {
        let at = match self.reader.error_position() {
            0 => self.reader.buffer_position(),
            p => p,
        };
        TableError::Invalid {
            line: self.documents,
            message: format!(
                "malformed XML at byte {at} (document {} of <{}>): {what}",
                self.documents.max(1),
                String::from_utf8_lossy(&self.root)
            ),
        }
    }
}

/// Notes `name` as a field if it is new (its span is filled when its element ends).
fn first_seen(
    names: &mut Vec<Vec<u8>>,
    spans: &mut Vec<Option<(usize, usize, bool)>>,
    name: &[u8],
) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_vec());
        spans.push(None);
    }
}

/// A value: the bytes as written when the element holds more than text, else the text with its
/// entity and character references decoded.
fn text_of(raw: &[u8], mixed: bool) -> Result<Vec<u8>, String> {
    if mixed || !raw.contains(&b'&') {
        return Ok(raw.to_vec());
    }
    let text = std::str::from_utf8(raw).map_err(|e| format!("a value is not UTF-8: {e}"))?;
    quick_xml::escape::unescape(text)
        .map(|t| t.into_owned().into_bytes())
        .map_err(|e| e.to_string())
}

/// The input, keeping every byte the XML reader consumes (cleared between documents), so a
/// value can be cut out of its document as written.
struct Tee<R> {
    inner: R,
    kept: Vec<u8>,
}

impl<R: BufRead> io::Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Tee<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            self.kept.extend_from_slice(&buf[..amt.min(buf.len())]);
        }
        self.inner.consume(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(xml: &str, root: &str) -> Result<Vec<Vec<String>>, String> {
        let mut r = XmlReader::new(xml.as_bytes(), root);
        let mut out = Vec::new();
        let mut row = Vec::new();
        while let Some(rec) = r.next_record(&mut row).map_err(|e| e.to_string())? {
            out.push(
                row[..rec.fields]
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect(),
            );
        }
        Ok(out)
    }

    #[test]
    fn fields_come_from_the_first_document_and_values_from_each() {
        let xml = "<?xml version=\"1.0\"?>\n<feed>\n\
            <doc><title>One &amp; only</title><abstract>A1</abstract><url>http://e1</url>\
            <links><sublink><anchor>t1</anchor></sublink></links></doc>\n\
            <doc><abstract>A2</abstract><title>Two</title><extra>x</extra><url/></doc>\n\
            <doc/>\n</feed>\n";
        let rows = read_all(xml, "doc").unwrap();
        assert_eq!(
            rows[0],
            ["title", "abstract", "url", "links", "sublink", "anchor"]
        );
        assert_eq!(
            rows[1],
            [
                "One & only",
                "A1",
                "http://e1",
                "<sublink><anchor>t1</anchor></sublink>",
                "<anchor>t1</anchor>",
                "t1"
            ]
        );
        // In the first document's order; a name it lacks is empty, one it adds is ignored.
        assert_eq!(rows[2], ["Two", "A2", "", "", "", ""]);
        assert_eq!(rows[3], ["", "", "", "", "", ""]);
        assert_eq!(rows.len(), 4);
    }

    #[test]
    fn the_first_of_a_repeated_name_wins_and_names_are_exact() {
        let xml = "<page><title>T</title><id>12</id><identity>no</identity>\
            <revision><id>99</id><text bytes=\"3\">abc</text></revision></page>";
        let rows = read_all(xml, "page").unwrap();
        assert_eq!(rows[0], ["title", "id", "identity", "revision", "text"]);
        assert_eq!(rows[1][1], "12");
        assert_eq!(rows[1][2], "no");
        assert_eq!(rows[1][4], "abc");
    }

    #[test]
    fn cdata_and_character_references() {
        let xml = "<d><a>&#65;&#x42;</a><b><![CDATA[<raw>]]></b></d>";
        let rows = read_all(xml, "d").unwrap();
        assert_eq!(rows[1], ["AB", "<![CDATA[<raw>]]>"]);
    }

    #[test]
    fn malformed_documents_are_named_by_their_position() {
        let e = read_all("<r><d><a>1</a></d><d><a>2</b></d></r>", "d").unwrap_err();
        assert!(e.contains("malformed XML at byte"), "{e}");
        assert!(e.contains("document 2 of <d>"), "{e}");
        let e = read_all("<d><a>1</a>", "d").unwrap_err();
        assert!(e.contains("the file ends inside the document"), "{e}");
    }

    #[test]
    fn no_document_is_no_record() {
        assert!(read_all("<r><x/></r>", "d").unwrap().is_empty());
    }

    #[test]
    fn a_long_file_streams_one_document_at_a_time() {
        // A reader that makes documents as it is read: the XML reader never holds more than one.
        struct Endless {
            doc: Vec<u8>,
            at: usize,
            left: u64,
        }
        impl io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.at == self.doc.len() {
                    if self.left == 0 {
                        return Ok(0);
                    }
                    self.left -= 1;
                    self.at = 0;
                }
                let n = (self.doc.len() - self.at).min(buf.len());
                buf[..n].copy_from_slice(&self.doc[self.at..self.at + n]);
                self.at += n;
                Ok(n)
            }
        }
        let doc = b"<d><k>key</k><v>value</v></d>\n".to_vec();
        let at = doc.len();
        let input = io::BufReader::new(Endless {
            doc,
            at,
            left: 200_000,
        });
        let mut r = XmlReader::new(input, "d");
        let mut row = Vec::new();
        let mut n = 0u64;
        while r.next_record(&mut row).unwrap().is_some() {
            n += 1;
            assert!(r.reader.get_ref().kept.capacity() < 4096);
        }
        assert_eq!(n, 200_001);
    }
}
