//! Reading a results file that `compare`, `report` or `merge` was given, with a size cap.
//!
//! Why a cap: these commands read whatever path they are handed, and a path such as `/dev/zero`,
//! a FIFO that never closes or a runaway log would otherwise grow the process without bound (the
//! whole file is held, then parsed). The cap is far above any real input — a 24-hour run's record
//! is tens of megabytes (a timeline row and a server interval per second) — so only something
//! that is not a results file reaches it. It is read through `Read::take(cap + 1)`: one byte over
//! the cap is enough to know, and the rest is never read. One home for the cap, so the three
//! commands refuse the same input in the same words, exit 2.

use std::io::Read;
use std::path::Path;

/// The environment variable that sets the cap, in bytes (`K`, `M`, `G` suffixes: powers of 1024).
pub const MAX_INPUT_ENV: &str = "RESPBENCH_MAX_INPUT_SIZE";

/// The default cap: 256 MiB, about ten times a 24-hour run's record.
pub const DEFAULT_MAX_INPUT: u64 = 256 << 20;

/// Why a file could not be read, in one line naming the path: the OS's reason, a size over the
/// cap, or a cap that does not parse. One kind only: every command refuses any of them the same
/// way (exit 2), so there is nothing for a caller to tell apart.
#[derive(Debug, PartialEq, Eq)]
pub struct ReadError(String);

impl ReadError {
    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// The cap in force: [`MAX_INPUT_ENV`] when set, else [`DEFAULT_MAX_INPUT`].
pub fn max_input() -> Result<u64, ReadError> {
    match std::env::var(MAX_INPUT_ENV) {
        Err(_) => Ok(DEFAULT_MAX_INPUT),
        Ok(v) => parse_size(&v).ok_or_else(|| {
            ReadError(format!(
                "{MAX_INPUT_ENV}={v:?}: expected a size in bytes (a number, optionally with K, M or G)"
            ))
        }),
    }
}

/// `1048576`, `64K`, `512M`, `2G` (powers of 1024); `None` for anything else or zero.
fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (digits, shift) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 10),
        (i, 'm' | 'M') => (&v[..i], 20),
        (i, 'g' | 'G') => (&v[..i], 30),
        _ => (v, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift).filter(|n| *n > 0)
}

/// The whole of `path`, if it is at most the cap in force.
pub fn read(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_capped(path, max_input()?)
}

/// The whole of `path`, if it is at most `cap` bytes; reads at most `cap + 1` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let shown = path.display();
    let io = |e: std::io::Error| ReadError(format!("cannot read {shown}: {e}"));
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError(format!(
            "{shown}: larger than {} (not a results file? set {MAX_INPUT_ENV} to read larger inputs)",
            size_text(cap)
        )));
    }
    Ok(bytes)
}

/// What a JSON document says it is, by its top-level keys: a respbench record (`schema`), a
/// journal's head line (`journal`), memtier_benchmark's output (`ALL STATS`, `AGGREGATED
/// AVERAGE RESULTS…`), or something else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonShape {
    Record,
    Journal,
    Memtier,
    Other,
}

/// [`JsonShape`] of `bytes`, found without building the document: the top level's keys are read
/// and each value skipped (`serde::de::IgnoredAny` keeps nothing), so 100 MB of JSON that is
/// not a results file (`{"x":[0,0,…]}`) is refused for the cost of its bytes, not of a tree 50
/// times their size (5 GB in `compare`, `report`, `merge` and `recover` before). `Err`: not
/// JSON, the parser's reason.
pub fn json_shape(bytes: &[u8]) -> Result<JsonShape, String> {
    struct Shape(JsonShape);
    impl<'de> serde::Deserialize<'de> for Shape {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
            d.deserialize_any(Keys)
        }
    }
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = Shape;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON document")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
            let mut shape = JsonShape::Other;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                let seen = match key.as_ref() {
                    "schema" => JsonShape::Record,
                    "journal" => JsonShape::Journal,
                    "ALL STATS" => JsonShape::Memtier,
                    k if k.starts_with("AGGREGATED AVERAGE RESULTS") => JsonShape::Memtier,
                    _ => JsonShape::Other,
                };
                if shape == JsonShape::Other {
                    shape = seen;
                }
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(Shape(shape))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(Shape(JsonShape::Other))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
        fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
        fn visit_unit<E>(self) -> Result<Shape, E> {
            Ok(Shape(JsonShape::Other))
        }
    }
    serde_json::from_slice::<Shape>(bytes)
        .map(|s| s.0)
        .map_err(|e| e.to_string())
}

/// `256 MiB`, `1.5 GiB`, `100 bytes`.
pub fn size_text(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{} GiB", trim(n as f64 / (1u64 << 30) as f64)),
        n if n >= 1 << 20 => format!("{} MiB", trim(n as f64 / (1u64 << 20) as f64)),
        n if n >= 1 << 10 => format!("{} KiB", trim(n as f64 / 1024.0)),
        n => format!("{n} bytes"),
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").unwrap_or(&s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_by_top_level_keys_without_building() {
        assert_eq!(
            json_shape(br#"{"schema":"respbench/1","tests":[]}"#),
            Ok(JsonShape::Record)
        );
        assert_eq!(
            json_shape(br#"{"journal":"respbench-journal/1","kind":"head"}"#),
            Ok(JsonShape::Journal)
        );
        assert_eq!(
            json_shape(br#"{"x":{"schema":1},"ALL STATS":{}}"#),
            Ok(JsonShape::Memtier)
        );
        let big = format!("{{\"x\":[{}0]}}", "0,".repeat(100_000));
        assert_eq!(json_shape(big.as_bytes()), Ok(JsonShape::Other));
        assert_eq!(json_shape(b"[1,2]"), Ok(JsonShape::Other));
        assert!(json_shape(b"{\"x\":").is_err());
    }

    #[test]
    fn an_endless_input_stops_at_the_cap() {
        // /dev/zero never ends: only cap + 1 bytes are read.
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e,
            ReadError(format!(
                "/dev/zero: larger than 1 MiB (not a results file? set {MAX_INPUT_ENV} to read larger inputs)"
            ))
        );
    }

    #[test]
    fn a_file_at_the_cap_reads() {
        let dir = std::env::temp_dir().join(format!("respbench-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.csv");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_capped(&p, 10).unwrap(), b"0123456789");
        assert!(
            read_capped(&p, 9)
                .unwrap_err()
                .message()
                .contains("larger than 9 bytes")
        );
        let e = read_capped(&dir.join("missing"), 10).unwrap_err();
        assert!(e.message().starts_with("cannot read "), "{e:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size(" 512M "), Some(512 << 20));
        for bad in ["", "0", "G", "-1", "1T", "1.5G", "99999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
        assert_eq!(size_text(DEFAULT_MAX_INPUT), "256 MiB");
        assert_eq!(size_text(3 << 29), "1.5 GiB");
    }
}
