//! The connection-storm options (issue 26 item 1): `--connect-storm` turns the run into one that
//! opens and closes connections instead of sending requests, and `--tls-resume` lets TLS
//! connections resume a session, so the storm times resumed handshakes apart from full ones.
//!
//! Kept apart from the main table (`flags/`) so the storm's entries and their plain values sit
//! together; `plan` checks them against the rest of the line and `crate::storm` runs them.

use super::flag::Flag;
use super::state::State;

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// The storm's options as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StormArgs {
    /// `--connect-storm`: open, prepare and close connections; measure each stage.
    pub connect_storm: bool,
    /// `--tls-resume`: keep TLS session tickets and resume with them.
    pub tls_resume: bool,
}

/// The entries, in help order.
pub(super) const FLAGS: &[Flag<State>] = &[
    F::switch(
        &["--connect-storm"],
        "--connect-storm",
        "Measure connecting instead of requests: -c openers each\n\
         open a connection, take it through every stage the other\n\
         options imply (TCP or unix connect, TLS handshake, HELLO/\n\
         AUTH, SELECT, CLUSTER SLOTS with --cluster, then the\n\
         command given, if any, once) and close it, -n times in all\n\
         (or for --duration), at --rps connections per second or as\n\
         fast as they can. Reports connects/s, a latency histogram\n\
         per stage and for the whole connection, failures by stage\n\
         and kind (client-side limits apart from server refusals)\n\
         and the server's connection counters",
        |st, _, _| {
            st.args.storm.connect_storm = true;
            Ok(())
        },
    )
    .example(&["--connect-storm", "-c", "20", "-n", "5000"]),
    F::switch(
        &["--tls-resume"],
        "--tls-resume",
        "With --tls: resume TLS sessions from the tickets the server\n\
         gave earlier connections (valkey-benchmark never resumes;\n\
         a storm reports full and resumed handshakes apart)",
        |st, _, _| {
            st.args.storm.tls_resume = true;
            Ok(())
        },
    )
    .example(&["--tls", "--insecure", "--tls-resume", "--connect-storm"]),
];
