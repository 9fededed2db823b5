//! memtier's WAIT options in the `--ratio` mix (issue 23): `--wait-ratio S:W` sends W `WAIT`
//! commands per S SETs, each for a replica count from `--num-slaves MIN-MAX` and the timeout
//! of `--wait-timeout MIN-MAX`.
//!
//! Why commands of the mix: the mix already sends its commands in memtier's weighted cycle and
//! times each into its own histogram, so the WAITs are counted (memtier's `Waits` row) and
//! nothing new runs on the hot path. A replica count drawn uniformly from the range is one
//! WAIT command per count, each with an equal share of the WAIT weight (the range is at most 16
//! counts, `memtier/cli/`). The timeout is the middle of its range: memtier draws it from a
//! normal distribution centred there; a drawn timeout would need a placeholder kind of its own.

use super::mix::{MixSource, MixSpec};
use crate::cli::WaitArgs;

/// The SET and GET weights scaled so that SET:GET stays `set:get` and SET:WAIT becomes
/// `sets:waits`, and the WAIT commands with their weights (none without `--wait-ratio`).
pub(super) fn with_waits(set: u32, get: u32, wait: Option<WaitArgs>) -> (u32, u32, Vec<MixSpec>) {
    let Some(w) = wait.filter(|w| w.waits > 0 && w.sets > 0 && set > 0) else {
        return (set, get, Vec::new());
    };
    let (lo, hi) = w.replicas;
    let counts = hi - lo + 1;
    // SET : GET : each WAIT = set·sets·k : get·sets·k : set·waits (k replica counts), so that
    // SET:GET = set:get and SET:(all WAITs) = sets:waits. Saturates rather than overflows
    // (weights are relative; the CLI bounds the numbers).
    let scale = u64::from(w.sets) * counts;
    let weight = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    let set_w = weight(u64::from(set) * scale);
    let get_w = weight(u64::from(get) * scale);
    let wait_w = weight(u64::from(set) * u64::from(w.waits));
    let timeout = w.timeout_ms.0 + (w.timeout_ms.1 - w.timeout_ms.0) / 2;
    let waits = (lo..=hi)
        .enumerate()
        .map(|(i, replicas)| MixSpec {
            name: if i == 0 {
                "WAIT".into()
            } else {
                format!("WAIT#{}", i + 1)
            },
            source: MixSource::Line(vec![
                b"WAIT".to_vec(),
                replicas.to_string().into_bytes(),
                timeout.to_string().into_bytes(),
            ]),
            weight: wait_w,
            keys: None,
        })
        .collect();
    (set_w, get_w, waits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(sets: u32, waits: u32, replicas: (u64, u64), timeout_ms: (u64, u64)) -> WaitArgs {
        WaitArgs {
            sets,
            waits,
            replicas,
            timeout_ms,
        }
    }

    #[test]
    fn the_ratios_hold_and_each_replica_count_is_a_command() {
        let (set, get, waits) = with_waits(1, 10, Some(wait(2, 1, (0, 2), (10, 20))));
        // SET:GET stays 1:10; SET:WAIT (all three together) is 2:1.
        assert_eq!(u64::from(set) * 10, u64::from(get));
        let all_waits: u32 = waits.iter().map(|w| w.weight).sum();
        assert_eq!(set, 2 * all_waits);
        let lines: Vec<String> = waits
            .iter()
            .map(|w| match &w.source {
                MixSource::Line(args) => args
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                MixSource::Suite(_) => panic!("a WAIT is a line"),
            })
            .collect();
        assert_eq!(lines, ["WAIT 0 15", "WAIT 1 15", "WAIT 2 15"]);
        assert_eq!(waits[1].name, "WAIT#2");
    }

    #[test]
    fn no_waits_without_the_option_or_with_zero() {
        assert_eq!(with_waits(1, 10, None).2.len(), 0);
        assert_eq!(
            with_waits(1, 10, Some(wait(1, 0, (0, 0), (0, 0)))).2.len(),
            0
        );
        let (set, get, waits) = with_waits(1, 1, Some(wait(1, 1, (0, 0), (0, 0))));
        assert_eq!((set, get, waits[0].weight), (1, 1, 1));
    }
}
