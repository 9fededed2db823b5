//! What a failed connection was: its kind, and whether the server refused it or the client ran
//! out of something. A storm from one machine meets the client's limits first (ephemeral ports
//! held in `TIME_WAIT`, the open-file limit); those say nothing about the server, so they are
//! reported apart, with the figure that ran out.

use std::collections::BTreeMap;
use std::io;

use crate::engine::tls::tls_error;
use crate::engine::{EngineError, is_maxclients};

use super::FailureKey;

/// Who a failure kind is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The client ran out of something (ports, file descriptors).
    Client,
    /// The server refused or dropped the connection, or answered with an error.
    Server,
}

impl Side {
    /// The side of a failure kind.
    pub fn of(kind: &str) -> Side {
        match super::block::side_of(kind) {
            "client" => Side::Client,
            _ => Side::Server,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// A client-side limit the storm met, with the figure that ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientLimit {
    /// `local_ports` or `open_files`.
    pub kind: &'static str,
    /// Connections that failed on it.
    pub failures: u64,
    /// The limit, read after the storm: e.g. "ephemeral ports 32768-60999 (28232), 28001
    /// sockets in TIME_WAIT" or "open-file limit 1024".
    pub figure: String,
}

/// The kind of a socket error during the connect or the handshake.
pub(super) fn kind_of_io(e: &io::Error) -> &'static str {
    if tls_error(e).is_some() {
        return "tls";
    }
    match e.raw_os_error() {
        Some(libc::EADDRNOTAVAIL) => return "local_ports",
        Some(libc::EMFILE | libc::ENFILE) => return "open_files",
        Some(libc::ECONNREFUSED) => return "refused",
        _ => {}
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "refused",
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => "reset",
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "timeout",
        io::ErrorKind::UnexpectedEof => "closed",
        _ => "io",
    }
}

/// The kind of a failure on an open connection (a command's round trip), from the control
/// connection's error.
pub(super) fn kind_of_engine_error(e: &EngineError) -> &'static str {
    match e {
        EngineError::Tls { .. } => "tls",
        EngineError::Protocol(_) => "protocol",
        EngineError::Io(m) | EngineError::Other(m) => {
            if m.contains("closed the connection") {
                "closed"
            } else if m.contains("no reply within") {
                "timeout"
            } else if m.contains("reset") || m.contains("Broken pipe") {
                "reset"
            } else {
                "io"
            }
        }
        _ => "io",
    }
}

/// The kind of an error reply: the server's client limit, a refused password, or its first word.
pub(super) fn kind_of_error_reply(text: &str) -> &'static str {
    if is_maxclients(text.as_bytes()) {
        return "maxclients";
    }
    match text.split_whitespace().next().unwrap_or("") {
        "NOAUTH" | "WRONGPASS" | "NOPERM" => "auth",
        "LOADING" => "loading",
        "ERR" => "err",
        _ => "error",
    }
}

/// The client-side limits among `failures`, with their figures.
pub(super) fn client_limits(failures: &BTreeMap<FailureKey, u64>) -> Vec<ClientLimit> {
    let count = |kind: &str| -> u64 {
        failures
            .iter()
            .filter(|((_, k), _)| *k == kind)
            .map(|(_, n)| n)
            .sum()
    };
    let mut out = Vec::new();
    let ports = count("local_ports");
    if ports > 0 {
        out.push(ClientLimit {
            kind: "local_ports",
            failures: ports,
            figure: ports_figure(),
        });
    }
    let files = count("open_files");
    if files > 0 {
        out.push(ClientLimit {
            kind: "open_files",
            failures: files,
            figure: files_figure(),
        });
    }
    out
}

/// The ephemeral port range and how many sockets wait in `TIME_WAIT` (Linux `/proc`).
fn ports_figure() -> String {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| {
            let mut it = t.split_whitespace().map(|w| w.parse::<u64>().ok());
            Some((it.next()??, it.next()??))
        });
    let time_wait: u64 = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| time_wait_count(&t))
        .sum();
    match range {
        Some((lo, hi)) => format!(
            "ephemeral ports {lo}-{hi} ({} ports), {time_wait} sockets in TIME_WAIT",
            hi.saturating_sub(lo) + 1
        ),
        None => format!("{time_wait} sockets in TIME_WAIT"),
    }
}

/// Sockets in `TIME_WAIT` (state `06`) in a `/proc/net/tcp` table.
fn time_wait_count(table: &str) -> u64 {
    table
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(3) == Some("06"))
        .count() as u64
}

/// The process's open-file limit (soft and hard).
fn files_figure() -> String {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return "open-file limit unknown".into();
    }
    format!("open-file limit {} (hard {})", lim.rlim_cur, lim.rlim_max)
}

#[cfg(test)]
mod tests {
    use super::super::Stage;
    use super::*;

    #[test]
    fn client_side_errors_are_told_from_server_refusals() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(kind_of_io(&e(libc::EADDRNOTAVAIL)), "local_ports");
        assert_eq!(kind_of_io(&e(libc::EMFILE)), "open_files");
        assert_eq!(kind_of_io(&e(libc::ECONNREFUSED)), "refused");
        assert_eq!(kind_of_io(&e(libc::ECONNRESET)), "reset");
        assert_eq!(Side::of("local_ports"), Side::Client);
        assert_eq!(Side::of("open_files"), Side::Client);
        assert_eq!(Side::of("refused"), Side::Server);
        assert_eq!(
            kind_of_error_reply("ERR max number of clients reached"),
            "maxclients"
        );
        assert_eq!(
            kind_of_error_reply("WRONGPASS invalid username-password"),
            "auth"
        );
    }

    #[test]
    fn time_wait_sockets_are_counted_by_state() {
        let table = "  sl  local_address rem_address   st tx_queue\n\
                     0: 0100007F:1F90 0100007F:C350 06 00000000:00000000\n\
                     1: 0100007F:1F90 0100007F:C351 01 00000000:00000000\n\
                     2: 0100007F:1F90 0100007F:C352 06 00000000:00000000\n";
        assert_eq!(time_wait_count(table), 2);
    }

    #[test]
    fn limits_name_the_figure_that_ran_out() {
        let mut f = BTreeMap::new();
        f.insert((Stage::Connect, "local_ports"), 3);
        f.insert((Stage::Connect, "refused"), 5);
        let limits = client_limits(&f);
        assert_eq!(limits.len(), 1);
        assert_eq!(limits[0].kind, "local_ports");
        assert_eq!(limits[0].failures, 3);
        assert!(
            limits[0].figure.contains("TIME_WAIT"),
            "{}",
            limits[0].figure
        );
    }
}
