//! One connection's walk through its stages: the socket, TLS, each setup command, `CLUSTER
//! SLOTS`, the command; then the close. Every stage is timed from the end of the one before, and
//! the total from before the socket is made, on its own clock reading.

use std::time::Instant;

use crate::engine::control::{ControlConn, error_text};

use super::failure::{kind_of_engine_error, kind_of_error_reply, kind_of_io};
use super::{FailureKey, Stage, StormResult, StormSpec};

/// `CLUSTER SLOTS`, encoded once.
const CLUSTER_SLOTS: &[u8] = b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n";

/// What one connection did: its time per stage (a stage that sends two commands, `AUTH` and
/// `HELLO`, takes the sum of both), recorded only when every stage finished.
struct Laps {
    times: [Option<u64>; 8],
    mark: Instant,
}

impl Laps {
    fn lap(&mut self, stage: Stage, now: Instant) {
        let ns = now.saturating_duration_since(self.mark).as_nanos() as u64;
        let t = &mut self.times[stage.index()];
        *t = Some(t.unwrap_or(0) + ns);
        self.mark = now;
    }
}

/// How one connection ended, for the opener's seconds (`metrics::SecondTally`).
pub(super) enum Ended {
    /// Every stage finished: the total, and each stage's time (by `Stage` order).
    Completed { total: u64, laps: [Option<u64>; 8] },
    /// It failed in this stage, this way.
    Failed(FailureKey),
}

/// Opens, prepares and closes one connection, adding what happened to `out`.
pub(super) fn connect_once(spec: &StormSpec, out: &mut StormResult) -> Ended {
    out.attempted += 1;
    let start = Instant::now();
    let mut laps = Laps {
        times: [None; 8],
        mark: start,
    };
    let mut socket_at = None;
    let stream = spec
        .target
        .connect_blocking_staged(spec.stage_timeout, &mut || socket_at = Some(Instant::now()));
    let stream = match stream {
        Ok(s) => s,
        Err((after_socket, e)) => {
            let stage = if after_socket {
                Stage::TlsFull
            } else {
                Stage::Connect
            };
            let kind = kind_of_io(&e);
            out.fail(stage, kind, || spec.target.connect_error(&e).to_string());
            return Ended::Failed((stage, kind));
        }
    };
    let handshake_done = Instant::now();
    laps.lap(Stage::Connect, socket_at.unwrap_or(handshake_done));
    match stream.tls_resumed() {
        Some(true) => laps.lap(Stage::TlsResumed, handshake_done),
        Some(false) => laps.lap(Stage::TlsFull, handshake_done),
        None => {}
    }
    let mut conn = match ControlConn::over(stream, &spec.target)
        .and_then(|mut c| c.set_timeout(spec.stage_timeout).map(|()| c))
    {
        Ok(c) => c,
        Err(e) => {
            let kind = kind_of_engine_error(&e);
            out.fail(Stage::Connect, kind, || e.to_string());
            return Ended::Failed((Stage::Connect, kind));
        }
    };
    let commands = spec
        .setup
        .iter()
        .map(|(stage, bytes)| (*stage, bytes.as_slice()))
        .chain(
            spec.cluster_slots
                .then_some((Stage::ClusterSlots, CLUSTER_SLOTS)),
        )
        .chain(spec.command.as_deref().map(|c| (Stage::Command, c)));
    for (stage, bytes) in commands {
        let (kind, message) = match conn.call_raw(bytes, 1) {
            Ok(replies) => match replies.first().and_then(error_text) {
                None => {
                    laps.lap(stage, Instant::now());
                    continue;
                }
                Some(text) => (kind_of_error_reply(&text), text),
            },
            Err(e) => (kind_of_engine_error(&e), e.to_string()),
        };
        out.fail(stage, kind, || message);
        return Ended::Failed((stage, kind));
    }
    // The total is read from its own start, not added up from the laps.
    let total = laps.mark.saturating_duration_since(start).as_nanos() as u64;
    drop(conn);
    out.completed += 1;
    for (figures, ns) in out.stages.iter_mut().zip(laps.times) {
        if let Some(ns) = ns {
            figures.add(ns);
        }
    }
    out.total.add(total);
    Ended::Completed {
        total,
        laps: laps.times,
    }
}

/// Splits pre-encoded RESP commands (`*N` arrays of bulk strings, as `plan::Prefix` holds them)
/// into one slice per command; `None` if the bytes are not such commands.
pub fn split_commands(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let (n, next) = header(bytes, at, b'*')?;
        at = next;
        for _ in 0..n {
            let (len, next) = header(bytes, at, b'$')?;
            at = next.checked_add(len)?.checked_add(2)?;
            if at > bytes.len() {
                return None;
            }
        }
        out.push(&bytes[start..at]);
    }
    Some(out)
}

/// Reads `<mark><digits>\r\n` at `at`: the number and where the next part starts.
fn header(bytes: &[u8], at: usize, mark: u8) -> Option<(usize, usize)> {
    if bytes.get(at) != Some(&mark) {
        return None;
    }
    let end = at + 1 + bytes.get(at + 1..)?.windows(2).position(|w| w == b"\r\n")?;
    let n = std::str::from_utf8(&bytes[at + 1..end])
        .ok()?
        .parse()
        .ok()?;
    Some((n, end + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_commands_gives_one_slice_per_encoded_command() {
        let mut bytes = Vec::new();
        resp::encode_command(&mut bytes, &["AUTH", "pw"]);
        let first = bytes.len();
        resp::encode_command(&mut bytes, &["SELECT", "3"]);
        let parts = split_commands(&bytes).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], &bytes[..first]);
        assert_eq!(parts[1], &bytes[first..]);
        assert!(split_commands(b"*1\r\n$4\r\nPIN").is_none());
        assert!(split_commands(b"PING\r\n").is_none());
    }

    #[test]
    fn setup_commands_fall_in_their_stages() {
        assert_eq!(Stage::of_setup("HELLO"), Stage::HelloAuth);
        assert_eq!(Stage::of_setup("AUTH"), Stage::HelloAuth);
        assert_eq!(Stage::of_setup("SELECT"), Stage::Select);
        assert_eq!(Stage::of_setup("CLIENT TRACKING"), Stage::Setup);
    }
}
