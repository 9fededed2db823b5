//! How `replay` and `capture` reach their server: the target (TCP with or without TLS, or a unix
//! socket) and the credentials, from the main command line's connection entries
//! (`cli::connection`). TLS options are translated by the one function the benchmark uses
//! (`plan::tls_options`), and the TLS files are read once here, so a missing certificate stops
//! the subcommand before any connection (exit 1) and every connection after shares one client
//! configuration.

use std::sync::Arc;

use crate::cli::connection::ConnectionArgs;
use crate::engine::tls::TlsClient;
use crate::engine::{Target, Transport};

/// What the connection options cannot mean for a subcommand, as a usage error.
pub fn check(c: &ConnectionArgs) -> Result<(), String> {
    if c.password().is_none() && c.user().is_some() {
        return Err("--user needs -a (the user's password)".into());
    }
    if c.db() != 0 {
        return Err(
            "-u: a /db is not taken here (a trace's own SELECTs choose databases, \
             and MONITOR sees every database)"
                .into(),
        );
    }
    // The cipher lists are checked without I/O: a list respbench has no suite of is a usage
    // error, as on the main line.
    let mut warnings = Vec::new();
    crate::plan::tls_options(&c.args(), &mut warnings)?;
    Ok(())
}

/// The target, with TLS when `--tls` or a `rediss://` URI asked for it. TLS options without TLS
/// are warned about on stderr (as on the main line). `Err`: a message for exit 1.
pub fn target(c: &ConnectionArgs, who: &str) -> Result<Target, String> {
    if let Some(socket) = c.socket() {
        return Ok(Target::Unix(socket.to_path_buf()));
    }
    let mut warnings = Vec::new();
    let tls = crate::plan::tls_options(&c.args(), &mut warnings)?;
    for w in warnings {
        eprintln!("respbench {who}: {w}");
    }
    let tls = match tls {
        Some(options) => Some(Arc::new(TlsClient::new(&options)?)),
        None => None,
    };
    let transport = Transport { tls, mptcp: false };
    Target::tcp_with(c.host(), c.port(), transport).map_err(|e| e.to_string())
}

/// `AUTH`'s arguments (`[user,] password`), when a password was given.
pub fn auth(c: &ConnectionArgs) -> Option<Vec<Vec<u8>>> {
    let pw = c.password()?.to_vec();
    Some(match c.user() {
        Some(u) => vec![u.to_vec(), pw],
        None => vec![pw],
    })
}
