//! The options of issue 26's message-delivery modes (`--pubsub`, `--stream` and what shapes them),
//! with their values' parsers and their checks against the rest of the line: the delivery's part
//! of the main option table, installed by the registry (`cli::ModeArgs`).

use std::ffi::OsStr;

use crate::cli::flag::{Flag, Value};
use crate::cli::value::{invalid_value, text, whole};
use crate::cli::{ModeArgs, Place, State, UsageError};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// The bytes a delivery message carries before any padding: its send time and its number
/// (`stamp.rs`, 16 hex digits each). A smaller `-d` is refused rather than grown.
use super::stamp::BYTES as STAMP_BYTES;

/// Most subscriber or consumer connections (and channels): as many as `-c` takes. They share a
/// few threads' event loops (`delivery::subscribers`, `delivery::consumers`); the plan bounds
/// subscribers x messages.
const MAX_SUBSCRIBERS: u64 = 1_000_000;

/// The delivery modes' options as given (all absent by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeliveryArgs {
    /// `--pubsub N`: N subscriber connections.
    pub pubsub: Option<u32>,
    /// `--stream K`: a consumer group of K consumers.
    pub stream: Option<u32>,
    /// `--publishers P` (default 1): publishing (or `XADD`ing) connections.
    pub publishers: Option<u32>,
    /// `--channels C` (default 1): channels the messages go round.
    pub channels: Option<u32>,
    /// `--psubscribe`: subscribers use patterns (`PSUBSCRIBE`).
    pub patterns: bool,
    /// `--sharded`: `SSUBSCRIBE`/`SPUBLISH`.
    pub sharded: bool,
    /// `--slow-subscribers N:MS`: N subscribers pause MS milliseconds between reads.
    pub slow: Option<(u32, u64)>,
}

impl ModeArgs for DeliveryArgs {
    const FLAGS: &'static [Flag<State>] = FLAGS;
    const PLACE: Place = Place::Own;

    fn check(st: &mut State) -> Result<(), UsageError> {
        check(st)
    }

    fn asks(&self, name: &str) -> bool {
        match name {
            "--pubsub" => self.pubsub.is_some(),
            "--stream" => self.stream.is_some(),
            _ => false,
        }
    }
}

/// The entries, in the help's order.
const FLAGS: &[Flag<State>] = &[
    F::value(
        &["--pubsub"],
        Value::Text,
        "--pubsub <n>",
        "Delivery mode: n subscriber connections; publishers send\n\
         -n messages (at --rps), each carrying its send time, and\n\
         the latency is publish -> receive per subscriber; lost\n\
         and duplicate messages, backlog and buffer-limit\n\
         disconnections are reported",
        |st, name, v| {
            st.args.mode_mut::<DeliveryArgs>().pubsub = Some(whole(name, v, 1, MAX_SUBSCRIBERS)?);
            Ok(())
        },
    )
    .example(&["--pubsub", "10"]),
    F::value(
        &["--stream"],
        Value::Text,
        "--stream <k>",
        "Delivery mode: producers XADD -n entries to one stream, a\n\
         consumer group of k consumers reads them (XREADGROUP\n\
         BLOCK) and acks them; latency is add -> delivery, with\n\
         the group's lag and pending entries per second",
        |st, name, v| {
            st.args.mode_mut::<DeliveryArgs>().stream = Some(whole(name, v, 1, MAX_SUBSCRIBERS)?);
            Ok(())
        },
    )
    .example(&["--stream", "4"]),
    F::value(
        &["--publishers"],
        Value::Text,
        "--publishers <p>",
        "--pubsub/--stream: publishing connections (default 1)",
        |st, name, v| {
            st.args.mode_mut::<DeliveryArgs>().publishers = Some(whole(name, v, 1, 1000)?);
            Ok(())
        },
    )
    .example(&["--pubsub", "10", "--publishers", "2"]),
    F::value(
        &["--channels"],
        Value::Text,
        "--channels <c>",
        "--pubsub: channels the messages go round (default 1);\n\
         subscriber i listens to channel i mod c",
        |st, name, v| {
            st.args.mode_mut::<DeliveryArgs>().channels = Some(whole(name, v, 1, MAX_SUBSCRIBERS)?);
            Ok(())
        },
    )
    .example(&["--pubsub", "10", "--channels", "2"]),
    F::switch(
        &["--psubscribe"],
        "--psubscribe",
        "--pubsub: subscribe by pattern (PSUBSCRIBE)",
        |st, _, _| {
            st.args.mode_mut::<DeliveryArgs>().patterns = true;
            Ok(())
        },
    )
    .example(&["--pubsub", "4", "--psubscribe"]),
    F::switch(
        &["--sharded"],
        "--sharded",
        "--pubsub: sharded pub/sub (SSUBSCRIBE and SPUBLISH); with\n\
         --cluster (where it is needed) each channel goes to the\n\
         node owning its slot",
        |st, _, _| {
            st.args.mode_mut::<DeliveryArgs>().sharded = true;
            Ok(())
        },
    )
    .example(&["--pubsub", "4", "--sharded"]),
    F::value(
        &["--slow-subscribers"],
        Value::Text,
        "--slow-subscribers <n:ms>",
        "--pubsub: n of the subscribers pause ms milliseconds\n\
         between reads (to see backlog and the server's\n\
         client-output-buffer-limit at work)",
        |st, name, v| {
            st.args.mode_mut::<DeliveryArgs>().slow = Some(slow(name, v)?);
            Ok(())
        },
    )
    .example(&["--pubsub", "10", "--slow-subscribers", "1:50"]),
];

/// `N:MS`.
fn slow(name: &str, v: &OsStr) -> Result<(u32, u64), UsageError> {
    let s = text(name, v)?;
    let err = || invalid_value(name, v, "n:ms (ms from 1 to 1000), e.g. 1:50");
    let (n, ms) = s.split_once(':').ok_or_else(err)?;
    let n = whole(name, OsStr::new(n), 1, MAX_SUBSCRIBERS).map_err(|_| err())?;
    let ms = whole(name, OsStr::new(ms), 1, 1000).map_err(|_| err())?;
    Ok((n, ms))
}

/// The delivery options against the rest of the line: one mode at a time, the shaping options
/// only with their mode, and room in each message for its stamp. A `-d` not given becomes the
/// stamp's size (the smallest message that can carry it).
fn check(st: &mut State) -> Result<(), UsageError> {
    let d = st.args.mode::<DeliveryArgs>();
    let refuse = |m: &str| Err(UsageError(m.to_owned()));
    if d.pubsub.is_some() && d.stream.is_some() {
        return refuse("--pubsub and --stream are two modes; choose one");
    }
    let mode = d.pubsub.is_some() || d.stream.is_some();
    if !mode && d.publishers.is_some() {
        return refuse("--publishers needs --pubsub or --stream");
    }
    let pubsub_only = [
        (d.channels.is_some(), "--channels"),
        (d.patterns, "--psubscribe"),
        (d.sharded, "--sharded"),
        (d.slow.is_some(), "--slow-subscribers"),
    ];
    if let Some((_, name)) = pubsub_only.iter().find(|(given, _)| *given)
        && d.pubsub.is_none()
    {
        return Err(UsageError(format!("{name} needs --pubsub")));
    }
    if d.patterns && d.sharded {
        return refuse(
            "--psubscribe and --sharded do not combine (sharded pub/sub has no patterns)",
        );
    }
    if let (Some(n), Some((slow, _))) = (d.pubsub, d.slow)
        && slow > n
    {
        return Err(UsageError(format!(
            "--slow-subscribers {slow}: more than the {n} subscribers of --pubsub"
        )));
    }
    if mode {
        if st.was_given("-d") && st.args.data_size < STAMP_BYTES {
            return Err(UsageError(format!(
                "-d {}: a --pubsub/--stream message carries its send time and number in {} \
                 bytes; use -d {} or more",
                st.args.data_size, STAMP_BYTES, STAMP_BYTES
            )));
        }
        if !st.was_given("-d") {
            st.args.data_size = STAMP_BYTES;
        }
    }
    Ok(())
}
