//! `INFO` text → the server's identity and one sample of its counters.
//!
//! Owns: field names and their meaning across Redis and Valkey (Valkey adds `server_name:valkey`
//! and `valkey_version`, keeps `redis_version` at the Redis version it is compatible with), and
//! the per-second figures drawn from two samples. Must not: open connections.

use std::time::Duration;

/// `INFO`'s `field:value` lines, looked up by name. Section headers and blank lines are skipped.
#[derive(Clone, Copy, Debug)]
pub struct Info<'a> {
    text: &'a str,
}

impl<'a> Info<'a> {
    pub fn new(text: &'a str) -> Self {
        Self { text }
    }

    /// The value of `field`, trimmed (`None` if the server does not report it).
    pub fn get(&self, field: &str) -> Option<&'a str> {
        self.text.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name == field).then(|| value.trim())
        })
    }

    pub fn u64(&self, field: &str) -> Option<u64> {
        self.get(field)?.parse().ok()
    }

    pub fn f64(&self, field: &str) -> Option<f64> {
        self.get(field)?.parse().ok()
    }

    /// A `0`/`1` flag.
    pub fn flag(&self, field: &str) -> Option<bool> {
        self.u64(field).map(|v| v != 0)
    }
}

/// Who the server is and how it is configured, from `INFO server`, `memory`, `persistence` and
/// `stats` at the start of a run (and `CONFIG GET io-threads`/`save` where allowed).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ServerIdentity {
    /// `valkey` (from `server_name`), else `redis` (Redis reports no `server_name`).
    pub name: String,
    /// `valkey_version` for Valkey, `redis_version` otherwise.
    pub version: String,
    /// `redis_version` as reported (for Valkey, the Redis version it is compatible with).
    pub redis_version: Option<String>,
    /// `redis_mode`/`server_mode`: standalone, cluster or sentinel.
    pub mode: Option<String>,
    pub os: Option<String>,
    pub arch_bits: Option<u64>,
    /// `CONFIG GET io-threads` (`None` when CONFIG is refused).
    pub io_threads: Option<u64>,
    /// `io_threads_active` at the start.
    pub io_threads_active: Option<bool>,
    /// Bytes; 0 = no limit.
    pub maxmemory: Option<u64>,
    pub maxmemory_policy: Option<String>,
    pub aof_enabled: Option<bool>,
    /// `CONFIG GET save` (the RDB snapshot rules; empty = none).
    pub rdb_save: Option<String>,
    /// `mem_allocator` (`jemalloc-5.3.0`, `libc`): the allocator changes throughput and memory
    /// figures, so `compare` names it when two servers differ in it. Absent from older records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_allocator: Option<String>,
    /// `run_id`: new at every server start, so `respbench ab` can tell a server restarted
    /// between its blocks. Absent from older records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl ServerIdentity {
    /// Reads the identity from `INFO` text holding at least the `server` section.
    pub fn from_info(info: &Info) -> Self {
        let valkey = info.get("server_name").filter(|n| !n.is_empty());
        let redis_version = info.get("redis_version").map(str::to_string);
        let version = match valkey {
            Some(_) => info.get("valkey_version").map(str::to_string),
            None => redis_version.clone(),
        };
        Self {
            name: valkey.unwrap_or("redis").to_string(),
            version: version.unwrap_or_default(),
            redis_version,
            mode: info
                .get("server_mode")
                .or_else(|| info.get("redis_mode"))
                .map(str::to_string),
            os: info.get("os").map(str::to_string),
            arch_bits: info.u64("arch_bits"),
            io_threads: None,
            io_threads_active: info.flag("io_threads_active"),
            maxmemory: info.u64("maxmemory"),
            maxmemory_policy: info.get("maxmemory_policy").map(str::to_string),
            aof_enabled: info.flag("aof_enabled"),
            rdb_save: None,
            mem_allocator: info.get("mem_allocator").map(str::to_string),
            run_id: info.get("run_id").map(str::to_string),
        }
    }
}

/// The `INFO` sections one sample needs (several sections in one call: Redis 7.0+, Valkey).
pub const SAMPLE_SECTIONS: [&str; 5] = ["clients", "memory", "persistence", "stats", "cpu"];

/// The server's event counters (`INFO stats`): cumulative since the server started in a
/// [`ServerSample`], counted over a span in a [`ServerInterval`] (their difference, [`since`]) and
/// over a test in the record (the spans' [`Sum`]). One type, so a counter added is read, differenced,
/// summed and written in one place. Flattened into the record: its fields sit beside the others.
///
/// [`since`]: ServerCounters::since
/// [`Sum`]: std::iter::Sum
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ServerCounters {
    pub rejected_connections: u64,
    pub evicted_keys: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
}

impl ServerCounters {
    /// The counters in `INFO` text (0 for one the server does not report).
    pub fn from_info(info: &Info) -> Self {
        let n = |k| info.u64(k).unwrap_or(0);
        Self {
            rejected_connections: n("rejected_connections"),
            evicted_keys: n("evicted_keys"),
            net_input_bytes: n("total_net_input_bytes"),
            net_output_bytes: n("total_net_output_bytes"),
        }
    }

    /// What was counted from `earlier` to `self`; a counter that went down (a server restart)
    /// counts as 0.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            rejected_connections: self
                .rejected_connections
                .saturating_sub(earlier.rejected_connections),
            evicted_keys: self.evicted_keys.saturating_sub(earlier.evicted_keys),
            net_input_bytes: self.net_input_bytes.saturating_sub(earlier.net_input_bytes),
            net_output_bytes: self
                .net_output_bytes
                .saturating_sub(earlier.net_output_bytes),
        }
    }
}

impl std::ops::Add for ServerCounters {
    type Output = Self;

    fn add(self, o: Self) -> Self {
        Self {
            rejected_connections: self.rejected_connections + o.rejected_connections,
            evicted_keys: self.evicted_keys + o.evicted_keys,
            net_input_bytes: self.net_input_bytes + o.net_input_bytes,
            net_output_bytes: self.net_output_bytes + o.net_output_bytes,
        }
    }
}

impl std::iter::Sum for ServerCounters {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), |a, b| a + b)
    }
}

/// The server's counters at one moment. Serialisable for the journal (`record::journal`), which
/// keeps a killed test's samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ServerSample {
    /// When it was taken, from the start of the sampling (the test's start).
    pub at: Duration,
    /// Which watch connection took it: 0, then one more after each reconnect. Counters are
    /// only compared within one (a reconnect may follow a restart, or reach another server
    /// under `--sentinel`, whose counters start again).
    pub segment: u32,
    /// Process CPU seconds (`used_cpu_user`, `used_cpu_sys`).
    pub cpu_user: f64,
    pub cpu_sys: f64,
    /// The main thread's CPU seconds, where the server reports them (Redis 6.2+, Valkey).
    pub cpu_main: Option<f64>,
    pub used_memory: u64,
    pub used_memory_rss: u64,
    pub connected_clients: u64,
    /// Since the server started.
    pub counters: ServerCounters,
    /// `rdb_bgsave_in_progress` or `aof_rewrite_in_progress`: a fork child competes for CPU and
    /// memory and its copy-on-write shows in latency.
    pub fork_in_progress: bool,
}

impl ServerSample {
    /// Reads a sample from `INFO` text holding [`SAMPLE_SECTIONS`]; `None` if the CPU fields are
    /// missing (not an answer to that request).
    pub fn from_info(info: &Info, at: Duration) -> Option<Self> {
        let main = match (
            info.f64("used_cpu_user_main_thread"),
            info.f64("used_cpu_sys_main_thread"),
        ) {
            (Some(u), Some(s)) => Some(u + s),
            _ => None,
        };
        Some(Self {
            at,
            segment: 0,
            cpu_user: info.f64("used_cpu_user")?,
            cpu_sys: info.f64("used_cpu_sys")?,
            cpu_main: main,
            used_memory: info.u64("used_memory").unwrap_or(0),
            used_memory_rss: info.u64("used_memory_rss").unwrap_or(0),
            connected_clients: info.u64("connected_clients").unwrap_or(0),
            counters: ServerCounters::from_info(info),
            fork_in_progress: info.flag("rdb_bgsave_in_progress") == Some(true)
                || info.flag("aof_rewrite_in_progress") == Some(true),
        })
    }
}

/// What the server did between two samples (usually one second apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ServerInterval {
    /// Start of the interval, seconds from the test's start.
    pub t: f64,
    /// Interval length in seconds.
    pub secs: f64,
    /// Process CPU (user + sys) per wall second, percent of one core.
    pub cpu_pct: f64,
    /// Main thread CPU per wall second, where reported.
    pub main_thread_cpu_pct: Option<f64>,
    /// At the end of the interval.
    pub used_memory: u64,
    pub used_memory_rss: u64,
    pub connected_clients: u64,
    /// Counted during the interval.
    #[serde(flatten)]
    pub counters: ServerCounters,
    /// A fork (RDB save or AOF rewrite) was running at either end.
    pub fork_in_progress: bool,
}

/// CPU percent of one core from CPU seconds used over wall seconds.
fn pct(cpu_secs: f64, wall_secs: f64) -> f64 {
    if wall_secs > 0.0 {
        (cpu_secs / wall_secs * 100.0).max(0.0)
    } else {
        0.0
    }
}

impl ServerInterval {
    /// The interval from `a` to `b` (`b` taken after `a`). Counters that went down (a server
    /// restart) count as 0.
    pub fn between(a: &ServerSample, b: &ServerSample) -> Self {
        let secs = b.at.saturating_sub(a.at).as_secs_f64();
        let cpu = (b.cpu_user + b.cpu_sys) - (a.cpu_user + a.cpu_sys);
        Self {
            t: a.at.as_secs_f64(),
            secs,
            cpu_pct: pct(cpu, secs),
            main_thread_cpu_pct: match (a.cpu_main, b.cpu_main) {
                (Some(x), Some(y)) => Some(pct(y - x, secs)),
                _ => None,
            },
            used_memory: b.used_memory,
            used_memory_rss: b.used_memory_rss,
            connected_clients: b.connected_clients,
            counters: b.counters.since(&a.counters),
            fork_in_progress: a.fork_in_progress || b.fork_in_progress,
        }
    }

    /// Consecutive intervals of a sample series, within each watch connection only: the time
    /// between the last sample before a reconnect and the first after it has no interval (the
    /// record shows those seconds as missing rather than a made-up figure).
    pub fn series(samples: &[ServerSample]) -> Vec<Self> {
        samples
            .windows(2)
            .filter(|w| w[0].segment == w[1].segment)
            .map(|w| Self::between(&w[0], &w[1]))
            .collect()
    }

    /// The whole series as one interval: each watch connection's span (first to last sample),
    /// added up. CPU is per second of those spans (the gaps are left out, not counted as idle);
    /// counters are the sum of each span's; memory and clients are the last sample's. `None`
    /// with no span of two samples.
    pub fn whole(samples: &[ServerSample]) -> Option<Self> {
        let spans: Vec<Self> = samples
            .chunk_by(|a, b| a.segment == b.segment)
            .filter(|c| c.len() > 1)
            .map(|c| Self::between(&c[0], &c[c.len() - 1]))
            .collect();
        if let [only] = spans.as_slice() {
            return Some(*only);
        }
        let first = spans.first()?;
        let secs: f64 = spans.iter().map(|i| i.secs).sum();
        let per_sec = |f: fn(&Self) -> Option<f64>| -> Option<f64> {
            let cpu: Option<f64> = spans.iter().map(|i| f(i).map(|p| p * i.secs)).sum();
            cpu.map(|c| if secs > 0.0 { c / secs } else { 0.0 })
        };
        let last = samples.last()?;
        Some(Self {
            t: first.t,
            secs,
            cpu_pct: per_sec(|i| Some(i.cpu_pct)).unwrap_or(0.0),
            main_thread_cpu_pct: per_sec(|i| i.main_thread_cpu_pct),
            used_memory: last.used_memory,
            used_memory_rss: last.used_memory_rss,
            connected_clients: last.connected_clients,
            counters: spans.iter().map(|i| i.counters).sum(),
            fork_in_progress: spans.iter().any(|i| i.fork_in_progress),
        })
    }

    /// The CPU figure that says how close the server is to its limit: the main thread where
    /// reported (with io-threads the process figure adds the I/O threads), else the process.
    pub fn limiting_cpu_pct(&self) -> f64 {
        self.main_thread_cpu_pct.unwrap_or(self.cpu_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Excerpts of real INFO replies (Debian's Redis 7.0.15 and Valkey 9.1.2).
    const REDIS: &str = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n\
        os:Linux 6.1.0 x86_64\r\narch_bits:64\r\nio_threads_active:0\r\n\r\n# Memory\r\n\
        used_memory:941024\r\nused_memory_rss:12238848\r\nmaxmemory:0\r\n\
        maxmemory_policy:noeviction\r\nmem_allocator:jemalloc-5.2.1\r\n# Persistence\r\nrdb_bgsave_in_progress:0\r\n\
        aof_enabled:0\r\naof_rewrite_in_progress:1\r\n# Stats\r\ntotal_net_input_bytes:57\r\n\
        total_net_output_bytes:581\r\nrejected_connections:2\r\nevicted_keys:0\r\n\
        # Clients\r\nconnected_clients:3\r\n# CPU\r\nused_cpu_sys:0.011031\r\n\
        used_cpu_user:0.007354\r\nused_cpu_sys_children:0.000000\r\n\
        used_cpu_sys_main_thread:0.010948\r\nused_cpu_user_main_thread:0.007299\r\n";
    const VALKEY: &str = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
        valkey_version:9.1.2\r\nserver_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\n\
        arch_bits:64\r\nio_threads_active:1\r\n# Memory\r\nmaxmemory:1048576\r\n\
        maxmemory_policy:allkeys-lru\r\n# Persistence\r\naof_enabled:1\r\n";

    #[test]
    fn identity_of_redis_and_of_valkey() {
        let r = ServerIdentity::from_info(&Info::new(REDIS));
        assert_eq!(r.name, "redis");
        assert_eq!(r.version, "7.0.15");
        assert_eq!(r.redis_version.as_deref(), Some("7.0.15"));
        assert_eq!(r.mode.as_deref(), Some("standalone"));
        assert_eq!(r.os.as_deref(), Some("Linux 6.1.0 x86_64"));
        assert_eq!(r.arch_bits, Some(64));
        assert_eq!(r.io_threads_active, Some(false));
        assert_eq!(r.maxmemory, Some(0));
        assert_eq!(r.maxmemory_policy.as_deref(), Some("noeviction"));
        assert_eq!(r.aof_enabled, Some(false));
        assert_eq!(r.mem_allocator.as_deref(), Some("jemalloc-5.2.1"));

        let v = ServerIdentity::from_info(&Info::new(VALKEY));
        assert_eq!(v.name, "valkey");
        assert_eq!(v.version, "9.1.2", "valkey_version, not redis_version");
        assert_eq!(v.redis_version.as_deref(), Some("7.2.4"));
        assert_eq!(v.io_threads_active, Some(true));
        assert_eq!(v.maxmemory, Some(1_048_576));
        assert_eq!(v.maxmemory_policy.as_deref(), Some("allkeys-lru"));
        assert_eq!(v.aof_enabled, Some(true));
        assert_eq!(v.mem_allocator, None, "not in that INFO");
    }

    #[test]
    fn field_lookup_is_by_whole_name() {
        let info = Info::new(REDIS);
        // `used_cpu_sys` must not match `used_cpu_sys_children` or the main-thread field.
        assert_eq!(info.f64("used_cpu_sys"), Some(0.011031));
        assert_eq!(info.get("used_cpu"), None);
        assert_eq!(info.get("# Server"), None);
    }

    #[test]
    fn a_sample_reads_every_counter() {
        let s = ServerSample::from_info(&Info::new(REDIS), Duration::from_secs(1)).unwrap();
        assert_eq!(s.at, Duration::from_secs(1));
        assert_eq!(s.cpu_user, 0.007354);
        assert_eq!(s.cpu_sys, 0.011031);
        assert!((s.cpu_main.unwrap() - 0.018247).abs() < 1e-12);
        assert_eq!(s.used_memory, 941_024);
        assert_eq!(s.used_memory_rss, 12_238_848);
        assert_eq!(s.connected_clients, 3);
        assert_eq!(s.counters.rejected_connections, 2);
        assert_eq!(s.counters.net_input_bytes, 57);
        assert_eq!(s.counters.net_output_bytes, 581);
        assert!(s.fork_in_progress, "aof_rewrite_in_progress:1");
        assert_eq!(
            ServerSample::from_info(&Info::new(VALKEY), Duration::ZERO),
            None,
            "no CPU section"
        );
    }

    #[test]
    fn interval_cpu_is_per_wall_second() {
        let a = ServerSample {
            at: Duration::from_secs(1),
            cpu_user: 1.0,
            cpu_sys: 0.5,
            cpu_main: Some(1.2),
            counters: ServerCounters {
                rejected_connections: 4,
                net_input_bytes: 100,
                ..ServerCounters::default()
            },
            ..ServerSample::default()
        };
        let b = ServerSample {
            at: Duration::from_secs(3),
            cpu_user: 2.2,
            cpu_sys: 0.8,
            cpu_main: Some(2.4),
            used_memory: 77,
            counters: ServerCounters {
                rejected_connections: 5,
                net_input_bytes: 350,
                ..ServerCounters::default()
            },
            ..ServerSample::default()
        };
        let i = ServerInterval::between(&a, &b);
        assert_eq!(i.t, 1.0);
        assert_eq!(i.secs, 2.0);
        assert!((i.cpu_pct - 75.0).abs() < 1e-9, "{}", i.cpu_pct);
        assert!((i.main_thread_cpu_pct.unwrap() - 60.0).abs() < 1e-9);
        assert!((i.limiting_cpu_pct() - 60.0).abs() < 1e-9);
        assert_eq!(i.used_memory, 77);
        assert_eq!(i.counters.rejected_connections, 1);
        assert_eq!(i.counters.net_input_bytes, 250);
        // A restarted server's counters go down: no negative figures.
        let back = ServerInterval::between(&b, &ServerSample { at: b.at * 2, ..a });
        assert_eq!(back.counters.rejected_connections, 0);
        assert_eq!(back.cpu_pct, 0.0);
        assert_eq!(ServerInterval::series(&[a, b, b]).len(), 2);
    }

    #[test]
    fn a_reconnect_leaves_a_gap_and_the_whole_adds_the_spans() {
        let at = |secs, segment, cpu: f64, rejected| ServerSample {
            at: Duration::from_secs(secs),
            segment,
            cpu_user: cpu,
            counters: ServerCounters {
                rejected_connections: rejected,
                ..ServerCounters::default()
            },
            ..ServerSample::default()
        };
        // Seconds 0-2 on the first connection; the server restarts (counters from 0) and the
        // watch is back at second 5.
        let s = [
            at(0, 0, 10.0, 3),
            at(1, 0, 10.5, 4),
            at(2, 0, 11.0, 6),
            at(5, 1, 0.1, 0),
            at(6, 1, 0.6, 1),
        ];
        let series = ServerInterval::series(&s);
        let starts: Vec<f64> = series.iter().map(|i| i.t).collect();
        assert_eq!(starts, [0.0, 1.0, 5.0], "no interval from 2 to 5");
        let whole = ServerInterval::whole(&s).unwrap();
        assert_eq!(whole.t, 0.0);
        assert_eq!(
            whole.secs, 3.0,
            "2 s + 1 s of spans, not the 6 s of the test"
        );
        // (1.0 + 0.5) CPU seconds over 3 s.
        assert!((whole.cpu_pct - 50.0).abs() < 1e-9, "{}", whole.cpu_pct);
        assert_eq!(whole.counters.rejected_connections, 3 + 1);
        assert_eq!(whole.main_thread_cpu_pct, None);
        assert_eq!(
            ServerInterval::whole(&s[2..4]),
            None,
            "no span of two samples"
        );
    }

    #[test]
    fn counters_difference_and_sum() {
        let c = |r, e, i, o| ServerCounters {
            rejected_connections: r,
            evicted_keys: e,
            net_input_bytes: i,
            net_output_bytes: o,
        };
        assert_eq!(c(5, 9, 100, 40).since(&c(2, 9, 60, 50)), c(3, 0, 40, 0));
        let total: ServerCounters = [c(1, 2, 3, 4), c(10, 20, 30, 40)].into_iter().sum();
        assert_eq!(total, c(11, 22, 33, 44));
        // Flattened into the record: the fields beside the interval's others, in order.
        let json = serde_json::to_string(&ServerInterval::default()).unwrap();
        assert!(
            json.contains(
                r#""connected_clients":0,"rejected_connections":0,"evicted_keys":0,"net_input_bytes":0,"net_output_bytes":0,"fork_in_progress":false"#
            ),
            "{json}"
        );
    }
}
