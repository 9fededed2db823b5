//! The connection-storm options (issue 26 item 1): `--connect-storm` turns the run into one that
//! opens and closes connections instead of sending requests, and `--tls-resume` lets TLS
//! connections resume a session, so the storm times resumed handshakes apart from full ones.
//!
//! The storm's part of the main option table (installed by the registry, `cli::ModeArgs`);
//! `plan::conflicts` checks `--connect-storm` against the rest of the line and `run.rs` runs it.
//! `--tls-resume` is a transport option (`cli::TlsArgs::resume`, any mode's TLS connections
//! resume with it); its entry is here because the storm is what times resumed handshakes.

use crate::cli::flag::Flag;
use crate::cli::{ModeArgs, Place, State};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// The storm's options as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StormArgs {
    /// `--connect-storm`: open, prepare and close connections; measure each stage.
    pub connect_storm: bool,
}

impl ModeArgs for StormArgs {
    const FLAGS: &'static [Flag<State>] = FLAGS;
    const PLACE: Place = Place::Own;

    fn asks(&self, name: &str) -> bool {
        name == "--connect-storm" && self.connect_storm
    }
}

/// The entries, in help order.
const FLAGS: &[Flag<State>] = &[
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
            st.args.mode_mut::<StormArgs>().connect_storm = true;
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
            st.args.tls.resume = true;
            Ok(())
        },
    )
    .example(&["--tls", "--insecure", "--tls-resume", "--connect-storm"]),
];
