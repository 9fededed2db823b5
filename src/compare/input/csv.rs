//! `--csv` output of valkey-benchmark, redis-benchmark (6.2 and later) and respbench: a header
//! `"test","rps","avg_latency_ms",...` and one quoted row per test, latencies in milliseconds.
//! Columns are found by the header's names, so older files with fewer columns still read (the
//! missing figures are absent, not 0).

use super::{FileRun, Format, Sample};

/// Splits one CSV line into fields: `"..."` quoted with `""` for a quote, or bare.
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("an unterminated quoted field".into()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
        }
        out.push(field);
        match chars.next() {
            Some(',') => continue,
            None => return Ok(out),
            Some(c) => return Err(format!("'{c}' after a quoted field")),
        }
    }
}

/// Reads a file with a header line.
pub fn read(text: &str) -> Result<FileRun, String> {
    let mut lines = text.lines().enumerate().filter(|l| !l.1.trim().is_empty());
    let header = fields(lines.next().unwrap_or_default().1.trim_end())
        .map_err(|e| format!("CSV header: {e}"))?;
    rows(&header, lines)
}

/// redis-benchmark before 6.2 wrote no header and only `"TEST","rps"` per line.
pub fn looks_headerless(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default().trim_end();
    first.starts_with('"')
        && fields(first).is_ok_and(|f| f.len() == 2 && f[1].trim().parse::<f64>().is_ok())
}

/// Reads a headerless file (see [`looks_headerless`]).
pub fn read_headerless(text: &str) -> Result<FileRun, String> {
    let header = ["test".to_string(), "rps".to_string()];
    rows(
        &header,
        text.lines().enumerate().filter(|l| !l.1.trim().is_empty()),
    )
}

/// The rows after the header: `(index from 0, line)`.
fn rows<'a>(
    header: &[String],
    lines: impl Iterator<Item = (usize, &'a str)>,
) -> Result<FileRun, String> {
    let col = |name: &str| header.iter().position(|h| h == name);
    let rps_col = col("rps").ok_or("CSV header without \"rps\"")?;
    let ms_cols = [
        "avg_latency_ms",
        "min_latency_ms",
        "p50_latency_ms",
        "p95_latency_ms",
        "p99_latency_ms",
        "max_latency_ms",
    ]
    .map(col);
    let mut tests = Vec::new();
    for (i, line) in lines {
        let row = i + 1;
        let f = fields(line.trim_end()).map_err(|e| format!("CSV line {row}: {e}"))?;
        if f.len() != header.len() {
            return Err(format!(
                "CSV line {row}: {} fields where the header has {}",
                f.len(),
                header.len()
            ));
        }
        let num = |c: usize| -> Result<f64, String> {
            f[c].trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("CSV line {row}: \"{}\" is not a number", f[c]))
        };
        let us = |c: Option<usize>| -> Result<Option<f64>, String> {
            c.map(|c| num(c).map(|ms| ms * 1000.0)).transpose()
        };
        let sample = Sample {
            rps: num(rps_col)?,
            avg: us(ms_cols[0])?,
            min: us(ms_cols[1])?,
            p50: us(ms_cols[2])?,
            p95: us(ms_cols[3])?,
            p99: us(ms_cols[4])?,
            max: us(ms_cols[5])?,
            detail: None,
            mix: Vec::new(),
            limited_by: None,
            sent: None,
        };
        // A custom command's name is the command: an older file may hold its password.
        tests.push((crate::redact::command_text(&f[0]), sample));
    }
    if tests.is_empty() {
        return Err("a CSV header without any test rows".into());
    }
    Ok(FileRun::of_tests(Format::BenchmarkCsv, tests))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../tests/fixtures/valkey-benchmark-suite.csv");

    #[test]
    fn reads_the_valkey_benchmark_suite_in_microseconds() {
        let run = read(FIXTURE).unwrap();
        assert_eq!(run.tests.len(), 21);
        let (name, set) = &run.tests[2];
        assert_eq!(name, "SET");
        assert_eq!(set.rps, 38910.51);
        assert_eq!(set.avg, Some(767.0));
        assert_eq!(set.p95, Some(1839.0));
        assert_eq!(set.max, Some(21535.0));
        assert_eq!(run.tests[14].0, "LPUSH (needed to benchmark LRANGE)");
    }

    #[test]
    fn quotes_commas_and_short_headers() {
        assert_eq!(
            fields(r#""a ""b"", c",1.5"#).unwrap(),
            ["a \"b\", c", "1.5"]
        );
        let run = read("\"test\",\"rps\"\n\"PING\",\"10.5\"\n").unwrap();
        assert_eq!(run.tests[0].1.rps, 10.5);
        assert_eq!(run.tests[0].1.p99, None);
    }

    #[test]
    fn old_redis_benchmark_without_header() {
        let text = "\"PING_INLINE\",\"87719.30\"\n\"SET\",\"90909.09\"\n";
        assert!(looks_headerless(text));
        assert!(!looks_headerless(FIXTURE));
        let run = read_headerless(text).unwrap();
        assert_eq!(run.tests[1].0, "SET");
        assert_eq!(run.tests[1].1.rps, 90909.09);
        let e = read_headerless("\"SET\",\"1\"\n\"GET\",\"x\"\n").unwrap_err();
        assert_eq!(e, "CSV line 2: \"x\" is not a number");
    }

    #[test]
    fn bad_rows_name_the_line() {
        let e = read("\"test\",\"rps\"\n\"PING\",\"fast\"\n").unwrap_err();
        assert_eq!(e, "CSV line 2: \"fast\" is not a number");
        let e = read("\"test\",\"rps\"\n\"PING\"\n").unwrap_err();
        assert!(e.contains("1 fields where the header has 2"), "{e}");
        assert!(read("\"test\",\"rps\"\n").is_err());
    }
}
