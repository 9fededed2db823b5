//! What limited a test: the server, respbench itself, or neither.
//!
//! Owns: the decision from CPU figures to a [`Verdict`] and its thresholds (the workers' own CPU
//! time is read by `metrics::thread_cpu`, where the engine's measuring lives).
//! Must not: measure the server or format output.
//!
//! Why CPU: a Redis-protocol server executes commands on one main thread, so a server that keeps
//! that thread near a full core cannot go faster whatever the client does; likewise a respbench
//! worker thread near a full core cannot send faster, and then the figures describe respbench, not
//! the server. When neither is near a full core, throughput is set by latency: more connections
//! (`-c`) or deeper pipelines (`-P`) would raise it.

/// A thread counts as "near a full core" from this share of one core (percent). CPU readings
/// over a second wobble by a few percent (scheduler ticks, the sampling instant), and a saturated
/// event loop still spends a little time blocked in `epoll_wait` between bursts, so a saturated
/// thread reads 92–100%; 90% leaves room for that without calling a thread at 80% saturated.
pub const NEAR_FULL_CORE_PCT: f64 = 90.0;

/// A test shorter than this (its measured phase, seconds) gets no verdict: over a fraction of a
/// second, CPU figures are dominated by starting threads and opening connections, and a harness's
/// ten-request test would otherwise be told it was client-bound.
pub const MIN_SECONDS: f64 = 1.0;

/// With `--rps`, the rate counts as met from this share of the target (percent): the schedule's
/// last slots and the final replies make the achieved rate read slightly under the target.
pub const RATE_MET_PCT: f64 = 95.0;

/// What limited a test's throughput. Its serde names are the record's `verdict.kind` (the same
/// as [`Verdict::name`]; a test checks they agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The server was saturated (its main thread near a full core, or executing the test's
    /// commands nearly all the time) while respbench's threads had headroom.
    ServerBound,
    /// A respbench worker thread was near a full core: more `--threads` would help, and the
    /// figures describe respbench rather than the server.
    ClientBound,
    /// Neither side near a full core: latency bound; more `-c` or `-P` would raise throughput.
    Neither,
    /// `--rps` was reached: the user set the throughput, nothing else limited it.
    RateLimited,
    /// Not enough figures to tell (no server figures and no client figures); also what a
    /// record without a verdict, or with a kind this build does not know, reads as.
    #[default]
    #[serde(other)]
    Unknown,
}

impl Verdict {
    /// The name used in the JSON record and the report.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::ServerBound => "server-bound",
            Verdict::ClientBound => "client-bound",
            Verdict::Neither => "neither",
            Verdict::RateLimited => "rate-limited",
            Verdict::Unknown => "unknown",
        }
    }

    /// One sentence for the report: what it means for the user.
    pub fn advice(self) -> &'static str {
        match self {
            Verdict::ServerBound => {
                "the server was saturated: its main thread near a full core, or executing \
                 commands nearly all the time"
            }
            Verdict::ClientBound => {
                "a respbench thread was near a full core: the figures describe respbench, not \
                 the server; try more --threads"
            }
            Verdict::Neither => {
                "neither side was near a full core: latency bound; more -c or -P would raise \
                 throughput"
            }
            Verdict::RateLimited => "the --rps target was reached",
            Verdict::Unknown => {
                "not enough figures to tell (no server or client figures, or a test under 1 s)"
            }
        }
    }
}

/// The figures a verdict is drawn from. Percentages are of one core.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VerdictInput<'a> {
    /// The server's busiest single-thread figure: its main thread's CPU when the server reports
    /// it (with io-threads the process figure adds the I/O threads and would overstate how close
    /// the command thread is to its limit), else the whole process. `None`: no server figures
    /// (e.g. `INFO` refused or `--no-server-stats`). In cluster mode, the busiest node.
    pub server_cpu_pct: Option<f64>,
    /// The share of wall time the server spent executing the test's commands (`INFO
    /// commandstats` Δusec over the test's wall time), percent; busiest node. Where other
    /// processes take CPU from the server, its CPU reads low while it still never idles: this
    /// figure still shows the saturation. It leaves out reading, parsing and writing, so it can
    /// only understate the server's load (no false "server-bound").
    pub server_busy_pct: Option<f64>,
    /// Each respbench worker thread's CPU over the test; `None` when not measured.
    pub client_threads_pct: Option<&'a [f64]>,
    /// `--rps` target and achieved throughput, if a target was set.
    pub rate: Option<(f64, f64)>,
    /// How long the measured phase lasted (seconds); under [`MIN_SECONDS`] nothing is decided.
    pub seconds: f64,
}

/// One watched server's CPU figures over a test (percent of one core), as the record keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerCpu {
    /// The limiting CPU (main thread where reported) over the full one-second intervals only,
    /// without the cut-short last one; `None` for a test shorter than a second.
    pub steady_pct: Option<f64>,
    /// The main thread over the whole test, where the server reports it.
    pub main_thread_pct: Option<f64>,
    /// The whole process over the whole test.
    pub process_pct: Option<f64>,
    /// The share of wall time spent executing the test's commands (see
    /// [`VerdictInput::server_busy_pct`]).
    pub busy_pct: Option<f64>,
}

impl ServerCpu {
    /// The figure a server is judged by: its steady state where the test lasted a full second
    /// (the winding-down last interval would understate a saturated server), else its main
    /// thread over the whole test (see [`VerdictInput::server_cpu_pct`]), else the process.
    pub fn judged_pct(&self) -> Option<f64> {
        self.steady_pct
            .or(self.main_thread_pct)
            .or(self.process_pct)
    }
}

/// A verdict and the figures it was drawn from, for the record and the report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    /// The busiest server's [`ServerCpu::judged_pct`].
    pub server_cpu_pct: Option<f64>,
    /// The busiest server's `busy_pct`.
    pub server_busy_pct: Option<f64>,
    /// The busiest respbench thread.
    pub client_max_thread_cpu_pct: Option<f64>,
}

/// Judges a test from every watched server's figures (cluster mode: the busiest node decides),
/// each respbench thread's CPU, the `--rps` target and achieved rate, and the measured seconds.
pub fn judge(
    servers: &[ServerCpu],
    client_threads_pct: Option<&[f64]>,
    rate: Option<(f64, f64)>,
    seconds: f64,
) -> Judged {
    let busiest = |f: fn(&ServerCpu) -> Option<f64>| servers.iter().filter_map(f).reduce(f64::max);
    let input = VerdictInput {
        server_cpu_pct: busiest(ServerCpu::judged_pct),
        server_busy_pct: busiest(|s| s.busy_pct),
        client_threads_pct,
        rate,
        seconds,
    };
    Judged {
        verdict: decide(&input),
        server_cpu_pct: input.server_cpu_pct,
        server_busy_pct: input.server_busy_pct,
        client_max_thread_cpu_pct: client_threads_pct
            .and_then(|t| t.iter().copied().reduce(f64::max)),
    }
}

/// Decides what limited a test, in this order (a test shorter than [`MIN_SECONDS`] is unknown):
/// 1. a client thread at or above [`NEAR_FULL_CORE_PCT`] → client-bound (whatever the server
///    did, the figures are then respbench's);
/// 2. the server's CPU, or the share of wall time it spent in the test's commands, at or above
///    [`NEAR_FULL_CORE_PCT`] → server-bound;
/// 3. an `--rps` target reached to [`RATE_MET_PCT`] → rate-limited;
/// 4. both sides known and below the threshold → neither;
/// 5. otherwise unknown.
pub fn decide(input: &VerdictInput) -> Verdict {
    if input.seconds < MIN_SECONDS {
        return Verdict::Unknown;
    }
    let client_full = input
        .client_threads_pct
        .is_some_and(|t| t.iter().any(|&p| p >= NEAR_FULL_CORE_PCT));
    if client_full {
        return Verdict::ClientBound;
    }
    let near_full = |p: Option<f64>| p.is_some_and(|p| p >= NEAR_FULL_CORE_PCT);
    if near_full(input.server_cpu_pct) || near_full(input.server_busy_pct) {
        return Verdict::ServerBound;
    }
    if let Some((target, achieved)) = input.rate
        && target > 0.0
        && achieved * 100.0 >= target * RATE_MET_PCT
    {
        return Verdict::RateLimited;
    }
    match (input.server_cpu_pct, input.client_threads_pct) {
        (Some(_), Some(t)) if !t.is_empty() => Verdict::Neither,
        _ => Verdict::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(server: Option<f64>, client: Option<&[f64]>) -> Verdict {
        decide(&VerdictInput {
            server_cpu_pct: server,
            client_threads_pct: client,
            seconds: 2.0,
            ..VerdictInput::default()
        })
    }

    #[test]
    fn a_test_under_a_second_gets_no_verdict() {
        let input = |seconds| VerdictInput {
            server_cpu_pct: Some(99.0),
            client_threads_pct: Some(&[99.0]),
            seconds,
            ..VerdictInput::default()
        };
        assert_eq!(decide(&input(0.99)), Verdict::Unknown);
        assert_eq!(decide(&input(1.0)), Verdict::ClientBound);
    }

    #[test]
    fn the_threshold_itself_counts_as_near_full() {
        assert_eq!(v(Some(90.0), Some(&[10.0])), Verdict::ServerBound);
        assert_eq!(v(Some(89.99), Some(&[10.0])), Verdict::Neither);
        assert_eq!(v(Some(10.0), Some(&[5.0, 90.0])), Verdict::ClientBound);
        assert_eq!(v(Some(10.0), Some(&[5.0, 89.99])), Verdict::Neither);
    }

    #[test]
    fn a_saturated_client_wins_over_a_saturated_server() {
        // Both near full: the figures describe respbench, so the user must hear about it.
        assert_eq!(v(Some(99.0), Some(&[95.0])), Verdict::ClientBound);
    }

    #[test]
    fn a_server_starved_of_cpu_but_always_executing_is_server_bound() {
        let busy = |cpu: f64, busy: f64| {
            decide(&VerdictInput {
                server_cpu_pct: Some(cpu),
                server_busy_pct: Some(busy),
                client_threads_pct: Some(&[10.0]),
                rate: None,
                seconds: 2.0,
            })
        };
        assert_eq!(busy(25.0, 90.0), Verdict::ServerBound);
        assert_eq!(busy(25.0, 89.9), Verdict::Neither);
        assert_eq!(busy(95.0, 1.0), Verdict::ServerBound);
    }

    #[test]
    fn missing_figures() {
        assert_eq!(v(None, None), Verdict::Unknown);
        assert_eq!(v(Some(40.0), None), Verdict::Unknown, "client unknown");
        assert_eq!(v(None, Some(&[40.0])), Verdict::Unknown, "server unknown");
        assert_eq!(
            v(Some(40.0), Some(&[])),
            Verdict::Unknown,
            "no threads measured"
        );
        // A saturated side is enough on its own.
        assert_eq!(v(Some(97.0), None), Verdict::ServerBound);
        assert_eq!(v(None, Some(&[97.0])), Verdict::ClientBound);
    }

    #[test]
    fn a_reached_rate_target_is_rate_limited_unless_a_side_is_saturated() {
        let rate = |target: f64, achieved: f64, server: f64| {
            decide(&VerdictInput {
                server_cpu_pct: Some(server),
                client_threads_pct: Some(&[10.0]),
                rate: Some((target, achieved)),
                seconds: 2.0,
                ..VerdictInput::default()
            })
        };
        assert_eq!(rate(1000.0, 950.0, 10.0), Verdict::RateLimited);
        assert_eq!(rate(1000.0, 949.0, 10.0), Verdict::Neither);
        assert_eq!(rate(1000.0, 1000.0, 95.0), Verdict::ServerBound);
    }

    #[test]
    fn a_server_is_judged_by_its_steady_state_then_main_thread_then_process() {
        let full = ServerCpu {
            steady_pct: Some(95.0),
            main_thread_pct: Some(70.0),
            process_pct: Some(120.0),
            busy_pct: Some(10.0),
        };
        assert_eq!(full.judged_pct(), Some(95.0));
        let short = ServerCpu {
            steady_pct: None,
            ..full
        };
        assert_eq!(
            short.judged_pct(),
            Some(70.0),
            "main thread, not the process"
        );
        let old = ServerCpu {
            main_thread_pct: None,
            ..short
        };
        assert_eq!(old.judged_pct(), Some(120.0));
        // The busiest node decides; each figure is its own maximum.
        let idle = ServerCpu {
            steady_pct: Some(5.0),
            busy_pct: Some(40.0),
            ..ServerCpu::default()
        };
        let j = judge(&[idle, short], Some(&[10.0, 30.0]), None, 2.0);
        assert_eq!(j.verdict, Verdict::Neither);
        assert_eq!(j.server_cpu_pct, Some(70.0));
        assert_eq!(j.server_busy_pct, Some(40.0));
        assert_eq!(j.client_max_thread_cpu_pct, Some(30.0));
        let j = judge(&[], None, None, 2.0);
        assert_eq!(j, Judged::default(), "nothing known");
    }

    #[test]
    fn names_are_the_documented_ones() {
        let names: Vec<&str> = [
            Verdict::ServerBound,
            Verdict::ClientBound,
            Verdict::Neither,
            Verdict::RateLimited,
            Verdict::Unknown,
        ]
        .map(Verdict::name)
        .to_vec();
        assert_eq!(
            names,
            [
                "server-bound",
                "client-bound",
                "neither",
                "rate-limited",
                "unknown"
            ]
        );
        for v in [
            Verdict::ServerBound,
            Verdict::ClientBound,
            Verdict::Neither,
            Verdict::RateLimited,
            Verdict::Unknown,
        ] {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json, v.name(), "the record's kind is the report's name");
            assert_eq!(serde_json::from_value::<Verdict>(json).unwrap(), v);
        }
        // A newer record's kind still reads.
        let later: Verdict = serde_json::from_str("\"memory-bound\"").unwrap();
        assert_eq!(later, Verdict::Unknown);
    }
}
