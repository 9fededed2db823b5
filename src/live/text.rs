//! The `/metrics` body: [`State`] in the Prometheus text format (0.0.4) or OpenMetrics 1.0.0,
//! whichever the scraper asks for. The two differ only in a counter family's name (OpenMetrics
//! names it without `_total`), the content type and the closing `# EOF`.

use std::fmt::Write;

use super::state::{BUCKETS, Counters, KINDS, PERCENTILES, Phase, State};

/// Which exposition format a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Prometheus,
    OpenMetrics,
}

impl Format {
    /// From the request's `Accept` header: OpenMetrics when it is named (Prometheus names it
    /// first), else the classic text format.
    pub fn negotiate(accept: Option<&str>) -> Self {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A label value escaped as both formats want it.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Writes families and samples, with the common labels added to each sample.
struct Out<'a> {
    buf: String,
    format: Format,
    common: &'a str,
}

impl Out<'_> {
    /// `# HELP` and `# TYPE` of a family; a counter's `name` is given without `_total`.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let total = if kind == "counter" && self.format == Format::Prometheus {
            "_total"
        } else {
            ""
        };
        let _ = writeln!(self.buf, "# HELP {name}{total} {help}");
        let _ = writeln!(self.buf, "# TYPE {name}{total} {kind}");
    }

    /// One sample; `labels` are `name="escaped value"` pairs already joined by commas.
    fn sample(&mut self, name: &str, labels: &str, value: f64) {
        let sep = if self.common.is_empty() || labels.is_empty() {
            ""
        } else {
            ","
        };
        let all = format!("{}{sep}{labels}", self.common);
        let _ = if all.is_empty() {
            writeln!(self.buf, "{name} {value}")
        } else {
            writeln!(self.buf, "{name}{{{all}}} {value}")
        };
    }
}

/// The whole body for `state`.
pub fn render(state: &State, format: Format) -> String {
    let mut o = Out {
        buf: String::with_capacity(8192),
        format,
        common: &state.common,
    };
    run_families(&mut o, state);
    test_families(&mut o, state);
    second_families(&mut o, state);
    server_families(&mut o, state);
    if format == Format::OpenMetrics {
        o.buf.push_str("# EOF\n");
    }
    o.buf
}

fn run_families(o: &mut Out, st: &State) {
    o.family(
        "respbench_build",
        "gauge",
        "respbench's version (always 1).",
    );
    let version = format!("version=\"{}\"", env!("CARGO_PKG_VERSION"));
    o.sample("respbench_build", &version, 1.0);
    o.family(
        "respbench_phase",
        "gauge",
        "1 for the phase the run is in, 0 for the others.",
    );
    for p in Phase::ALL {
        let v = if p == st.phase { 1.0 } else { 0.0 };
        o.sample("respbench_phase", &format!("phase=\"{}\"", p.name()), v);
    }
    o.family(
        "respbench_tests_started",
        "counter",
        "Tests begun (repetitions and -l passes included).",
    );
    o.sample("respbench_tests_started_total", "", st.tests_started as f64);
    if let Some(i) = st.current {
        o.family(
            "respbench_current_test",
            "gauge",
            "1, labelled with the test under way or the last one.",
        );
        let t = format!("test=\"{}\"", escape(&st.tests[i].name));
        o.sample("respbench_current_test", &t, 1.0);
    }
    o.family(
        "respbench_connections",
        "gauge",
        "Connections of the test under way.",
    );
    o.sample("respbench_connections", "", st.connections as f64);
    o.family(
        "respbench_connections_up",
        "gauge",
        "Of those, the ones not down or being reopened after a failure.",
    );
    o.sample("respbench_connections_up", "", st.connections_up as f64);
    o.family(
        "respbench_outage_active",
        "gauge",
        "1 while the test under way is in an outage (from the seconds handed over, about 1.2 s \
         late), else 0.",
    );
    let active = if st.outage_active() { 1.0 } else { 0.0 };
    o.sample("respbench_outage_active", "", active);
}

fn test_families(o: &mut Out, st: &State) {
    let totals: Vec<(String, _)> = st
        .tests
        .iter()
        .map(|t| (format!("test=\"{}\"", escape(&t.name)), t.total()))
        .collect();
    type Get = fn(&Counters) -> u64;
    let counters: [(&str, &str, Get); 4] = [
        (
            "respbench_requests_completed",
            "Requests answered with a reply that is not an error (measured phase); in a \
             --pubsub/--stream test its deliveries, in a replay its replayed commands.",
            |c| c.completed,
        ),
        (
            "respbench_reconnect_attempts",
            "Attempts to reopen a failed connection (-e).",
            |c| c.reconnect_attempts,
        ),
        (
            "respbench_reconnects",
            "Reopened connections the server answered on.",
            |c| c.reconnects,
        ),
        (
            "respbench_outages",
            "Outages in a test's timeline, as its record lists them: counted while it runs from \
             the seconds handed over (an outage under way included), the record's count once it \
             ends.",
            |c| c.outages,
        ),
    ];
    for (name, help, get) in counters {
        o.family(name, "counter", help);
        for (t, c) in &totals {
            o.sample(&format!("{name}_total"), t, get(c) as f64);
        }
    }
    // Only where a delivery test published something, so other runs' scrapes stay as they were.
    if totals.iter().any(|(_, c)| c.published > 0) {
        o.family(
            "respbench_messages_published",
            "counter",
            "Messages published (--pubsub/--stream), by their send time; the deliveries are \
             respbench_requests_completed_total.",
        );
        for (t, c) in &totals {
            o.sample("respbench_messages_published_total", t, c.published as f64);
        }
    }
    o.family(
        "respbench_requests_failed",
        "counter",
        "Requests failed, by kind: an error reply, or lost without one; in a \
         --pubsub/--stream test its publishes that failed.",
    );
    for (t, c) in &totals {
        for (kind, n) in KINDS.iter().zip(c.failed) {
            let labels = format!("{t},kind=\"{kind}\"");
            o.sample("respbench_requests_failed_total", &labels, n as f64);
        }
    }
    o.family(
        "respbench_request_latency_seconds",
        "histogram",
        "Latency from each request's intended send time to its reply (corrected); in a \
         --pubsub/--stream test from each message's publish to its delivery.",
    );
    for (t, c) in &totals {
        for (bound, n) in BUCKETS.iter().zip(c.buckets) {
            let labels = format!("{t},le=\"{bound}\"");
            o.sample(
                "respbench_request_latency_seconds_bucket",
                &labels,
                n as f64,
            );
        }
        let labels = format!("{t},le=\"+Inf\"");
        let count = c.completed as f64;
        o.sample("respbench_request_latency_seconds_bucket", &labels, count);
        o.sample("respbench_request_latency_seconds_sum", t, c.latency_sum);
        o.sample("respbench_request_latency_seconds_count", t, count);
    }
}

fn second_families(o: &mut Out, st: &State) {
    let (Some(i), Some(last)) = (st.current, &st.last_second) else {
        return;
    };
    let t = format!("test=\"{}\"", escape(&st.tests[i].name));
    o.family(
        "respbench_requests_per_second",
        "gauge",
        "Requests (a delivery test's deliveries, a replay's commands) completed in the last \
         complete second of the test under way.",
    );
    o.sample("respbench_requests_per_second", &t, last.completed as f64);
    o.family(
        "respbench_failures_per_second",
        "gauge",
        "Requests (a delivery test's publishes) failed in that second.",
    );
    o.sample("respbench_failures_per_second", &t, last.failed as f64);
    o.family(
        "respbench_second_latency_seconds",
        "gauge",
        "HDR percentiles of that second's corrected latency (percentile 100: its maximum).",
    );
    for ((_, p), v) in PERCENTILES.iter().zip(last.percentiles) {
        let labels = format!("{t},percentile=\"{p}\"");
        o.sample("respbench_second_latency_seconds", &labels, v);
    }
}

fn server_families(o: &mut Out, st: &State) {
    if st.servers.is_empty() {
        return;
    }
    type Get = fn(&crate::watch::ServerInterval) -> Option<f64>;
    let gauges: [(&str, &str, Get); 5] = [
        (
            "respbench_server_cpu_percent",
            "The server process's CPU over its last sampled second, percent of one core.",
            |i| Some(i.cpu_pct),
        ),
        (
            "respbench_server_main_thread_cpu_percent",
            "Its main thread's CPU, where the server reports it.",
            |i| i.main_thread_cpu_pct,
        ),
        (
            "respbench_server_used_memory_bytes",
            "The server's used_memory.",
            |i| Some(i.used_memory as f64),
        ),
        (
            "respbench_server_rss_bytes",
            "The server's used_memory_rss.",
            |i| Some(i.used_memory_rss as f64),
        ),
        (
            "respbench_server_connected_clients",
            "The server's connected_clients.",
            |i| Some(i.connected_clients as f64),
        ),
    ];
    for (name, help, get) in gauges {
        o.family(name, "gauge", help);
        for s in &st.servers {
            if let Some(v) = get(&s.interval) {
                let labels = format!("server=\"{}\"", escape(&s.address));
                o.sample(name, &labels, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Second;

    fn state() -> State {
        let mut st = State::new("shard=\"1\",shards=\"4\"".to_string());
        st.test_started("SET \"x\"\\", Vec::new());
        st.progress(&super::super::Tick {
            connections: 2,
            ..Default::default()
        });
        let mut s = Second::default();
        s.latency.record(150_000);
        s.completed = 1;
        st.second(&s);
        st
    }

    #[test]
    fn counters_are_named_per_format_and_openmetrics_ends_with_eof() {
        let st = state();
        let prom = render(&st, Format::Prometheus);
        assert!(prom.contains("# TYPE respbench_requests_completed_total counter\n"));
        assert!(prom.contains(
            "respbench_requests_completed_total{shard=\"1\",shards=\"4\",test=\"SET \\\"x\\\"\\\\\"} 1\n"
        ));
        assert!(!prom.contains("# EOF"));
        let om = render(&st, Format::OpenMetrics);
        assert!(om.contains("# TYPE respbench_requests_completed counter\n"));
        assert!(om.ends_with("# EOF\n"));
        assert!(om.contains("respbench_phase{shard=\"1\",shards=\"4\",phase=\"measuring\"} 1\n"));
    }

    #[test]
    fn the_histogram_is_cumulative_and_ends_with_its_count() {
        let body = render(&state(), Format::Prometheus);
        let bucket = |le: &str| {
            let key = format!("le=\"{le}\"}} ");
            let line = body
                .lines()
                .find(|l| {
                    l.starts_with("respbench_request_latency_seconds_bucket") && l.contains(&key)
                })
                .unwrap_or_else(|| panic!("no bucket {le} in {body}"));
            line.rsplit(' ').next().unwrap().to_string()
        };
        assert_eq!(bucket("0.0001"), "0");
        assert_eq!(bucket("0.00025"), "1");
        assert_eq!(bucket("+Inf"), "1");
        assert!(body.contains("percentile=\"99\"} 0.00015"), "{body}");
    }

    #[test]
    fn accept_headers_choose_the_format() {
        let prometheus =
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Prometheus);
        assert_eq!(Format::negotiate(None), Format::Prometheus);
    }
}
