//! memtier's `--client-stats=PREFIX`: a CSV file per run and connection,
//! `PREFIX-RUN-THREAD-CLIENT.csv` (run from 1, thread and client from 0, as memtier names them),
//! with memtier's `Per-Second Benchmark Data` header and one row per second the connection got
//! replies, from the record's `client_seconds` (counted by each connection as it ran).
//!
//! What respbench does not count per connection is left empty rather than made up: the bytes
//! sent in a record of an earlier build (the `Total Bytes` and `TX` columns); and memtier's
//! per-client `Full-Test … Latency` distributions are not written (respbench keeps histograms
//! per worker, not per connection).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::record::TestRecord;
use crate::record::atomic;
use crate::record::client_seconds::{ClientSecondRow, ClientSecondsRecord};

/// The file of run `run` (from 1) for one connection.
pub fn path(prefix: &Path, run: usize, c: &ClientSecondsRecord) -> PathBuf {
    PathBuf::from(format!(
        "{}-{run}-{}-{}.csv",
        prefix.display(),
        c.thread,
        c.client
    ))
}

/// Writes run `run`'s files (none for a test that kept no connection seconds); returns how many.
pub fn write(prefix: &Path, run: usize, t: &TestRecord) -> io::Result<usize> {
    let Some(conns) = &t.client_seconds else {
        return Ok(0);
    };
    let kinds = kind_names(t);
    for c in conns {
        let p = path(prefix, run, c);
        atomic::write(&p, csv(&kinds, c).as_bytes()).map_err(|e| atomic::naming(&p, e))?;
    }
    Ok(conns.len())
}

/// The command of each kind, upper case: the mix's commands, else the test's one command.
fn kind_names(t: &TestRecord) -> Vec<String> {
    if t.mix.is_empty() {
        let first = t.name.split_whitespace().next().unwrap_or("");
        return vec![first.to_ascii_uppercase()];
    }
    t.mix.iter().map(|m| m.name.to_ascii_uppercase()).collect()
}

/// Which kinds the columns show: memtier's SET and GET always, other commands (an arbitrary
/// `--command`) after them, and WAIT last.
fn columns(kinds: &[String]) -> (Vec<(String, Option<usize>)>, Option<usize>) {
    let find = |name: &str| kinds.iter().position(|k| k == name);
    let mut cols = vec![
        ("SET".to_string(), find("SET")),
        ("GET".to_string(), find("GET")),
    ];
    for (i, k) in kinds.iter().enumerate() {
        if !matches!(k.as_str(), "SET" | "GET" | "WAIT") {
            cols.push((k.clone(), Some(i)));
        }
    }
    (cols, find("WAIT"))
}

/// One connection's file.
fn csv(kinds: &[String], c: &ClientSecondsRecord) -> String {
    let (cols, wait) = columns(kinds);
    let mut out = String::from("Per-Second Benchmark Data\nSecond");
    for (name, _) in &cols {
        let _ = write!(
            out,
            ",{name} Requests,{name} Average Latency,{name} Total Bytes,{name} Total Bytes TX,\
             {name} Total Bytes RX"
        );
        if name == "GET" {
            out.push_str(",GET Misses,GET Hits");
        }
    }
    out.push_str(",WAIT Requests,WAIT Average Latency\n");
    for row in &c.seconds {
        let _ = write!(out, "{}", row.second);
        for (name, kind) in &cols {
            let f = figures(row, *kind);
            // A record of an earlier build counted no bytes sent: Total Bytes and TX empty.
            let (total, tx) = match f.tx {
                Some(tx) => ((tx + f.rx).to_string(), tx.to_string()),
                None => (String::new(), String::new()),
            };
            let _ = write!(out, ",{},{:.6},{total},{tx},{}", f.requests, f.avg_s, f.rx);
            if name == "GET" {
                let _ = write!(out, ",{},{}", f.nils, f.hits);
            }
        }
        let f = figures(row, wait);
        let _ = writeln!(out, ",{},{:.6}", f.requests, f.avg_s);
    }
    out.push('\n');
    out
}

/// One kind's figures in one second (zeros for a kind the test did not send).
struct Figures {
    requests: u64,
    avg_s: f64,
    rx: u64,
    tx: Option<u64>,
    nils: u64,
    hits: u64,
}

fn figures(row: &ClientSecondRow, kind: Option<usize>) -> Figures {
    let at = |v: &[u64]| kind.and_then(|k| v.get(k).copied()).unwrap_or(0);
    let requests = at(&row.requests);
    let latency_us = kind
        .and_then(|k| row.latency_us.get(k).copied())
        .unwrap_or(0.0);
    let (nils, errors) = (at(&row.nils), at(&row.errors));
    Figures {
        requests,
        avg_s: if requests == 0 {
            0.0
        } else {
            latency_us / requests as f64 / 1e6
        },
        rx: at(&row.rx_bytes),
        tx: (!row.tx_bytes.is_empty()).then(|| at(&row.tx_bytes)),
        nils,
        hits: match row.hits.is_empty() {
            false => at(&row.hits),
            // A record of an earlier build: every reply that was not nil nor an error.
            true => requests.saturating_sub(nils + errors),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_header_and_rows() {
        let c = ClientSecondsRecord {
            thread: 1,
            client: 2,
            seconds: vec![ClientSecondRow {
                second: 0,
                requests: vec![46, 454, 0, 0],
                latency_us: vec![46.0 * 58.0, 454.0 * 53.0, 0.0, 0.0],
                rx_bytes: vec![230, 2270, 0, 0],
                tx_bytes: Vec::new(),
                hits: Vec::new(),
                nils: vec![0, 454, 0, 0],
                errors: vec![0, 0, 0, 0],
            }],
        };
        let text = csv(&["SET".into(), "GET".into()], &c);
        let lines: Vec<&str> = text.lines().collect();
        // memtier's own header (shared/fixtures/memtier/cs-1-0-0.csv).
        assert_eq!(
            lines[1],
            "Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,SET Total \
             Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,GET \
             Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency"
        );
        // A record of an earlier build: no bytes sent, left empty.
        assert_eq!(
            lines[2],
            "0,46,0.000058,,,230,454,0.000053,,,2270,454,0,0,0.000000"
        );
        assert_eq!(path(Path::new("cs"), 1, &c), PathBuf::from("cs-1-1-2.csv"));
        // With them: memtier's Total Bytes = TX + RX (its fixture's 3622 = 3392 + 230).
        let mut c = c;
        c.seconds[0].tx_bytes = vec![3392, 15850, 0, 0];
        let text = csv(&["SET".into(), "GET".into()], &c);
        assert_eq!(
            text.lines().nth(2).unwrap(),
            "0,46,0.000058,3622,3392,230,454,0.000053,18120,15850,2270,454,0,0,0.000000"
        );
    }
}
