//! Issue 26's modes resolved: `--pubsub`/`--stream` into a [`DeliverySpec`], checked against
//! the rest of the plan before anything connects (one line, exit 2). Made by the registry
//! (`modes`) from the run's plan: `plan` is below the modes (`record` reads it), so the plan of
//! the run does not hold a mode's.
//!
//! A delivery run is bounded: its message count is `-n`, or `--rps` × `--duration` (so
//! `--duration` needs `--rps`), and every receiver keeps one bit per message, so receivers ×
//! messages is capped. In a sharded run each shard publishes and subscribes on its own names
//! (`{prefix}{shard}:…`), so shards never see each other's messages and their records add up.
//! With `--cluster`, `--pubsub` is sharded pub/sub (`--sharded`): each channel lives on the
//! node owning its slot (`delivery::route`), as the stream's key does for `--stream`.

use super::{DeliverySpec, Mode};
use crate::cli::Args;
use crate::engine::Stop;
use crate::plan::RunPlan;

/// Most receiver-message pairs one run tracks: one bit each, 512 MiB.
const MAX_TRACKED_BITS: u64 = 1 << 32;

/// The default start of the delivery modes' names (channels, the stream key).
const PREFIX: &[u8] = b"respbench:";

/// `--pubsub`/`--stream` as a spec (`None` without either), from the load as this shard runs it
/// (the run's `plan`).
pub fn plan(args: &Args, plan: &RunPlan) -> Result<Option<DeliverySpec>, String> {
    let (load, shard) = (&plan.load, plan.shard.as_ref());
    let d = args.mode::<super::cli::DeliveryArgs>();
    let mode = match (d.pubsub, d.stream) {
        (Some(subscribers), _) => Mode::PubSub {
            subscribers,
            channels: d.channels.unwrap_or(1),
            patterns: d.patterns,
            sharded: d.sharded,
            slow: d
                .slow
                .map(|(n, ms)| (n, std::time::Duration::from_millis(ms))),
        },
        (None, Some(consumers)) => Mode::Stream { consumers },
        (None, None) => return Ok(None),
    };
    let flag = if d.pubsub.is_some() {
        "--pubsub"
    } else {
        "--stream"
    };
    if args.cluster && d.pubsub.is_some() && !d.sharded {
        return Err(
            "--pubsub with --cluster is sharded pub/sub (each channel on the node \
                    owning its slot): add --sharded"
                .into(),
        );
    }
    // What delivery refuses of the other modes and options: `conflicts.rs`.
    let publishers = d.publishers.unwrap_or(1);
    let messages = match load.stop {
        Stop::Requests(n) => n,
        Stop::After(t) => match load.rps {
            Some(rate) => (rate as f64 * t.as_secs_f64()).ceil() as u64,
            None => {
                return Err(format!(
                    "{flag} with --duration needs --rps (the message count is rate x duration)"
                ));
            }
        },
    };
    if let Some(rate) = load.rps
        && rate < u64::from(publishers)
    {
        return Err(format!(
            "--rps {rate}: below one message per second for each of the {publishers} publishers"
        ));
    }
    let tracked = match mode {
        Mode::PubSub { subscribers, .. } => messages.saturating_mul(u64::from(subscribers)),
        Mode::Stream { .. } => messages,
    };
    if tracked > MAX_TRACKED_BITS {
        return Err(format!(
            "{flag}: {messages} messages for every receiver are more than respbench tracks \
             (receivers x messages at most {MAX_TRACKED_BITS}); lower -n"
        ));
    }
    let mut prefix = args.workload.key_prefix.clone().unwrap_or(PREFIX.to_vec());
    if let Some(s) = shard {
        prefix.extend_from_slice(format!("{}:", s.shard.index).as_bytes());
    }
    Ok(Some(DeliverySpec {
        mode,
        publishers,
        messages,
        rate: load.rps,
        payload: args.data_size,
        prefix,
        threads: subscriber_threads(args.threads),
        keep_going: load.on_error == crate::engine::ErrorPolicy::Count,
        timeout: args.timeout,
    }))
}

/// The threads `--pubsub`'s subscribers are spread over: `--threads`, or by default one per
/// core up to four (a thread reads thousands of subscribers; more would only contend with
/// the publishers and the server on the same machine).
fn subscriber_threads(flag: Option<u32>) -> usize {
    match flag {
        Some(n) => n.max(1) as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
    }
}

#[cfg(test)]
mod tests {
    use crate::modes::{Planned, RunMode};

    fn plan(argv: &[&str]) -> Result<Planned, String> {
        let args = match crate::cli::parse(argv.iter().map(Into::into)) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            Ok(other) => panic!("{other:?}"),
            Err(e) => return Err(e.0),
        };
        crate::modes::plan(&args, None).map_err(|e| match e {
            crate::plan::PlanError::Usage(m) | crate::plan::PlanError::Io(m) => m,
        })
    }

    #[test]
    fn pubsub_and_stream_plans_carry_their_shape() {
        let p = plan(&[
            "--pubsub",
            "10",
            "--channels",
            "2",
            "-n",
            "500",
            "--rps",
            "100",
        ])
        .unwrap();
        let RunMode::Delivery(d) = p.mode else {
            panic!("{:?}", p.mode)
        };
        assert_eq!((d.messages, d.rate, d.payload), (500, Some(100), 32));
        assert_eq!(d.receivers(), 10);
        assert_eq!(d.channel(1), b"respbench:1:ch");
        let s = plan(&[
            "--stream",
            "3",
            "--duration",
            "2",
            "--rps",
            "50",
            "-d",
            "64",
        ])
        .unwrap();
        let RunMode::Delivery(d) = s.mode else {
            panic!("{:?}", s.mode)
        };
        assert_eq!((d.messages, d.payload), (100, 64));
        assert_eq!(d.stream_key(), b"respbench:stream");
        let sharded = plan(&["--pubsub", "2", "--shard", "1/2", "-n", "10"]).unwrap();
        let RunMode::Delivery(d) = sharded.mode else {
            panic!("{:?}", sharded.mode)
        };
        assert_eq!(d.messages, 5);
    }

    #[test]
    fn impossible_delivery_runs_are_one_line() {
        for (argv, start) in [
            (
                &["--pubsub", "2", "-d", "8"][..],
                "-d 8: a --pubsub/--stream message",
            ),
            (&["--pubsub", "2", "--stream", "2"], "--pubsub and --stream"),
            (&["--channels", "2"], "--channels needs --pubsub"),
            (
                &["--stream", "2", "--duration", "3"],
                "--stream with --duration needs --rps",
            ),
            (
                &["--pubsub", "2", "--cluster"],
                "--pubsub with --cluster is sharded pub/sub",
            ),
            (
                &["--pubsub", "2", "-t", "set"],
                "--pubsub runs its own test",
            ),
            (
                &["--pubsub", "1000", "-n", "10000000"],
                "--pubsub: 10000000 messages",
            ),
            (
                &["--pubsub", "2", "--slow-subscribers", "3:10"],
                "--slow-subscribers 3",
            ),
            (
                &["--stream", "2", "--publishers", "4", "--rps", "2"],
                "--rps 2: below",
            ),
        ] {
            let Err(e) = plan(argv) else {
                panic!("{argv:?}: planned")
            };
            assert!(e.starts_with(start) && !e.contains('\n'), "{argv:?}: {e}");
        }
    }
}
