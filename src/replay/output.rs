//! What a replay leaves: the usual text report (`report::write_full`, or `-q`), its replay lines,
//! and the one record (`record::Document` with its `replay` block) for `--json` and `--html`, so
//! `compare`, `report` and `merge` read a replay as any run.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::block::{ReplayCluster, ReplayRecord, ReplaySecond};
use crate::cli::{check_outputs, is_stdout};
use crate::metrics::{Outcome, TestResult};
use crate::record::block::Blocks;
use crate::record::build::{TestExtras, test_record};
use crate::record::document::{self, ClientHost, Document, Options, TargetRecord, Tool};
use crate::record::host;
use crate::record::shard::ShardRecord;
use crate::record::workload::{MixOptionRecord, WorkloadOptions};
use crate::report::{ReportContext, write_full, write_quiet};
use crate::timestamp::rfc3339;

use super::Fail;
use super::options::{OPTIONS, ReplayArgs, Speed};
use super::schedule::Scheduler;
use super::worker::SlipSecond;

/// What the report and the record say besides the figures.
pub struct Facts<'a> {
    pub args: &'a ReplayArgs,
    pub argv: &'a [OsString],
    pub sched: &'a Scheduler,
    pub slip: &'a [SlipSecond],
    pub connections: u64,
    /// Replay threads.
    pub threads: usize,
    pub wall_start: SystemTime,
    pub fatal: Option<&'a str>,
    /// `--cluster`: the routing's counts, and the commands it did not send (scheduled, so in
    /// the schedule's `sent`, but CROSSSLOT or in a MULTI block across slots).
    pub cluster: Option<&'a (ReplayCluster, u64)>,
}

impl Facts<'_> {
    /// Commands sent: the schedule's, less those the cluster routing skipped.
    fn sent(&self) -> u64 {
        self.sched.counts.sent - self.cluster.map_or(0, |c| c.1)
    }
}

/// The output files, created before the replay starts so a path that cannot be written stops it
/// at once.
pub struct Outputs {
    json: Option<PathBuf>,
    html: Option<PathBuf>,
    quiet: bool,
}

impl Outputs {
    pub fn open(a: &ReplayArgs) -> Result<Self, Fail> {
        let mut outs: Vec<(&str, &Path)> = Vec::new();
        if let Some(j) = &a.json {
            outs.push(("--json", j));
        }
        if let Some(h) = &a.html {
            outs.push(("--html", h));
        }
        if let Some(j) = &a.journal {
            if is_stdout(j) {
                return Err(Fail(
                    2,
                    "--journal needs a file (it is synced and read back after a kill)".into(),
                ));
            }
            outs.push(("--journal", j));
        }
        let inputs: Vec<(&str, &Path)> = a
            .traces
            .iter()
            .map(|t| ("the trace", t.as_path()))
            .collect();
        check_outputs(&outs, &inputs).map_err(|e| Fail(2, e.0))?;
        if a.html.as_deref().is_some_and(is_stdout) {
            return Err(Fail(
                2,
                "--html -: stdout is the replay's report; write --json FILE and run \
                 respbench report FILE -o -"
                    .into(),
            ));
        }
        // Checked now, written whole at the end (`record::atomic`): an earlier record at the
        // path survives a replay that is killed.
        for (option, p) in &outs {
            if !is_stdout(p) {
                crate::record::atomic::check_writable(p).map_err(|e| {
                    Fail(
                        1,
                        format!("cannot write the {option} file {}: {e}", p.display()),
                    )
                })?;
            }
        }
        let json = a.json.clone();
        Ok(Self {
            json,
            html: a.html.clone(),
            quiet: a.quiet,
        })
    }

    /// Prints the report (to stderr when the record owns stdout) and writes the record.
    pub fn finish(self, r: &TestResult, f: &Facts) -> Result<(), Fail> {
        let to_stderr = self.json.as_deref().is_some_and(is_stdout);
        let mut text = Vec::new();
        let ctx = ReportContext {
            clients: f.connections as u32,
            keepalive: 1,
            precision: 3,
            operations: crate::report::Operations::ReplayedCommands,
            ..Default::default()
        };
        let written = if self.quiet {
            write_quiet(&mut text, &ctx, r)
        } else {
            write_full(&mut text, &ctx, r)
        };
        written.map_err(|e| Fail(1, e.to_string()))?;
        text.extend_from_slice(summary(f).as_bytes());
        let _ = if to_stderr {
            std::io::stderr().write_all(&text)
        } else {
            std::io::stdout().write_all(&text)
        };
        if self.json.is_none() && self.html.is_none() {
            return Ok(());
        }
        let doc = document(r, f);
        if let Some(path) = self.json {
            let mut bytes = serde_json::to_vec_pretty(&doc).map_err(|e| Fail(1, e.to_string()))?;
            bytes.push(b'\n');
            let res = if is_stdout(&path) {
                std::io::stdout().write_all(&bytes)
            } else {
                crate::record::atomic::write(&path, &bytes)
            };
            res.map_err(|e| Fail(1, format!("cannot write {}: {e}", path.display())))?;
        }
        if let Some(path) = self.html {
            crate::compare::html::write_html(&[&doc], &path).map_err(|e| Fail(1, e))?;
        }
        Ok(())
    }
}

/// The replay's lines after the usual report.
/// The summary's lines of commands not sent. AUTH is never sent (the trace's password is
/// redacted; the target's own credentials are used), so it is listed apart from what `--allow`
/// would send.
fn skipped_lines(skipped: &std::collections::BTreeMap<String, u64>) -> String {
    let mut s = String::new();
    let allowable: Vec<String> = skipped
        .iter()
        .filter(|(k, _)| k.as_str() != "AUTH")
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !allowable.is_empty() {
        s.push_str(&format!(
            "  skipped (--allow sends them): {}\n",
            allowable.join(", ")
        ));
    }
    if let Some(auth) = skipped.get("AUTH") {
        s.push_str(&format!(
            "  not sent: AUTH {auth} (the target's -a/--user/-u are used instead)\n"
        ));
    }
    s
}

fn summary(f: &Facts) -> String {
    let c = &f.sched.counts;
    let rec = replay_record(f);
    let of = match f.args.traces.len() {
        1 => String::new(),
        n => format!(" of {n} traces merged by time"),
    };
    let mut s = format!(
        "Replay: {} entries{of} over {:.3} s, {} sent on {} connections ({} clients), speed {}\n",
        c.entries,
        rec.span_s,
        rec.sent,
        f.connections,
        f.sched.clients(),
        rec.speed.map_or("max".to_string(), |x| format!("{x}x")),
    );
    s.push_str(&skipped_lines(&c.filtered.skipped));
    if c.filtered.from_scripts > 0 {
        s.push_str(&format!(
            "  not sent, run by scripts: {} (their EVAL/FCALL was)\n",
            c.filtered.from_scripts
        ));
    }
    if let Some(c) = &rec.cluster {
        s.push_str(&cluster_line(c));
    }
    if rec.speed.is_some() {
        s.push_str(&format!("  schedule slip: max {:.3} ms\n", rec.max_slip_ms));
    }
    s
}

/// `--cluster`'s line: where the commands went, what a cluster would refuse, redirects.
fn cluster_line(c: &ReplayCluster) -> String {
    let crossslot: Vec<String> = c
        .crossslot
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "  cluster: {} commands to {} primaries; not sent: CROSSSLOT {}, MULTI/EXEC across \
         slots {} ({} commands); followed: MOVED {}, ASK {}\n",
        c.routed.values().sum::<u64>(),
        c.routed.len(),
        if crossslot.is_empty() {
            "0".to_string()
        } else {
            crossslot.join(", ")
        },
        c.multi_across_slots,
        c.multi_commands_skipped,
        c.moved,
        c.ask
    )
}

/// The traces' file names (without their directories), joined by `, ` when there are several.
fn trace_names(traces: &[PathBuf]) -> String {
    let names: Vec<String> = traces
        .iter()
        .map(|t| {
            t.file_name().map_or_else(
                || t.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    names.join(", ")
}

/// The record's `replay` block.
pub fn replay_record(f: &Facts) -> ReplayRecord {
    let a = f.args;
    let c = &f.sched.counts;
    let seconds: Vec<ReplaySecond> = f
        .slip
        .iter()
        .map(|s| ReplaySecond {
            due: s.due,
            sent: s.sent,
            sent_slots: s.sent_slots.to_vec(),
            slip_max_ms: s.slip_max_us as f64 / 1e3,
            slip_mean_ms: if s.sent > 0 {
                s.slip_sum_us as f64 / 1e3 / s.sent as f64
            } else {
                0.0
            },
        })
        .collect();
    ReplayRecord {
        trace: trace_names(&a.traces),
        span_s: f.sched.span_us as f64 / 1e6,
        speed: match a.speed {
            Speed::Factor(x) => Some(x),
            Speed::Max => None,
        },
        loops: a.loops,
        start_s: (a.start_us > 0).then(|| a.start_us as f64 / 1e6),
        end_s: a.end_us.map(|e| e as f64 / 1e6),
        warmup_s: a.warmup_us as f64 / 1e6,
        shard: a.shard.map(|(i, n)| format!("{i}/{n}")),
        entries: c.entries,
        sent: f.sent(),
        connections: f.connections,
        clients: f.sched.clients() as u64,
        filtered: c.filtered.clone(),
        max_slip_ms: seconds.iter().map(|s| s.slip_max_ms).fold(0.0, f64::max),
        seconds,
        cluster: f.cluster.map(|c| c.0.clone()),
    }
}

/// `argv` with every secret value of `replay`'s table replaced, through the one redaction
/// function (each secret option is redacted as the main command line's same spelling is).
fn redacted(argv: &[OsString]) -> Vec<String> {
    let mut out: Vec<String> = vec!["respbench".into()];
    let mut i = 0;
    while i < argv.len() {
        let arg = argv[i].to_string_lossy().into_owned();
        // `--x=V`, or a short option with its value attached (`-aPW`, `-a=PW`).
        let (name, attached) = match arg.strip_prefix("--") {
            Some(_) => (arg.split('=').next().unwrap_or(""), arg.contains('=')),
            None if arg.starts_with('-') && arg.len() > 2 => (arg.get(..2).unwrap_or(""), true),
            None => (arg.as_str(), false),
        };
        let secret = crate::cli::flag::find(&[OPTIONS], name)
            .is_some_and(|(_, f)| f.doc.secret.is_some())
            || crate::cli::connection::secret_value(name).is_some();
        if secret && !attached && i + 1 < argv.len() {
            let pair = [
                OsString::from("respbench"),
                argv[i].clone(),
                argv[i + 1].clone(),
            ];
            out.extend(crate::redact::command_line(&pair).into_iter().skip(1));
            i += 2;
            continue;
        }
        if secret {
            let pair = [OsString::from("respbench"), argv[i].clone()];
            out.extend(crate::redact::command_line(&pair).into_iter().skip(1));
        } else {
            out.push(arg);
        }
        i += 1;
    }
    out
}

/// The record's head before the replay starts, for its journal (`journal`): the command line,
/// the target, the replay threads, the start; no figures yet.
pub fn head(
    args: &ReplayArgs,
    argv: &[OsString],
    sched: &Scheduler,
    (wall_start, threads): (SystemTime, usize),
) -> Document {
    let r = TestResult::empty("REPLAY", None, Outcome::Completed);
    let f = Facts {
        args,
        argv,
        sched,
        slip: &[],
        connections: 0,
        threads,
        wall_start,
        fatal: None,
        cluster: None,
    };
    document(&r, &f)
}

/// The trace's commands as the options' mix, weighted by their counts in the trace so far (the
/// test's `mix` figures are by the same names, in the same order).
pub fn mix_options(sched: &Scheduler) -> Vec<MixOptionRecord> {
    sched
        .names
        .iter()
        .zip(&sched.name_counts)
        .map(|(name, &n)| MixOptionRecord {
            name: name.clone(),
            command: None,
            weight: n.min(u64::from(u32::MAX)) as u32,
            key_pattern: None,
        })
        .collect()
}

/// The run's record: one test, `REPLAY`, with the replay block.
fn document(r: &TestResult, f: &Facts) -> Document {
    let a = f.args;
    let socket = a.conn.socket();
    let names: Vec<String> = r
        .commands
        .iter()
        .map(|c| c.name.to_ascii_lowercase())
        .collect();
    let mut test = test_record(r, names, &[], TestExtras::of(r));
    test.started_at = r.started_at.map(crate::timestamp::rfc3339_micros);
    Document {
        schema: document::SCHEMA.into(),
        tool: Tool {
            name: "respbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: redacted(f.argv),
        started_at: rfc3339(f.wall_start),
        ended_at: rfc3339(SystemTime::now()),
        outcome: match r.outcome {
            Outcome::Completed => "completed",
            Outcome::Interrupted(_) => "interrupted",
            Outcome::Aborted => "failed",
        }
        .into(),
        error: f.fatal.map(str::to_string),
        client: ClientHost {
            hostname: host::hostname(),
            cores: host::cores(),
        },
        target: TargetRecord {
            transport: if socket.is_some() { "unix" } else { "tcp" }.into(),
            host: socket.is_none().then(|| a.conn.host().to_string()),
            port: socket.is_none().then_some(a.conn.port()),
            socket: socket.map(|p| p.display().to_string()),
            tls: socket.is_none() && a.conn.tls().enabled,
            cluster: a.cluster,
            ..Default::default()
        },
        // The shard's place, so `respbench merge` takes the shards' records as one replay.
        shard: a.shard.map(|(index, count)| ShardRecord {
            index,
            count,
            source: "flag".into(),
            started_at: r.started_at.map(crate::timestamp::rfc3339_micros),
            ..Default::default()
        }),
        options: Options {
            // The same in every shard, so `merge` sees one benchmark.
            clients: f.sched.whole_connections(),
            threads: f.threads,
            pipeline: 1,
            precision: 3,
            continue_on_error: f.args.keep_going,
            workload: WorkloadOptions {
                mix: mix_options(f.sched),
                ..Default::default()
            },
            ..Default::default()
        },
        tests: vec![test],
        blocks: {
            let mut blocks = Blocks::default();
            blocks.put(&replay_record(f));
            blocks
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_is_listed_as_never_sent_not_as_allowable() {
        let skipped = [("AUTH".to_string(), 20), ("FLUSHDB".to_string(), 1)]
            .into_iter()
            .collect();
        assert_eq!(
            skipped_lines(&skipped),
            "  skipped (--allow sends them): FLUSHDB 1\n  \
             not sent: AUTH 20 (the target's -a/--user/-u are used instead)\n"
        );
        let only_auth = [("AUTH".to_string(), 2)].into_iter().collect();
        assert!(!skipped_lines(&only_auth).contains("--allow"));
    }

    #[test]
    fn the_cluster_line_names_skips_and_redirects() {
        let c = ReplayCluster {
            routed: [("a:1".to_string(), 5), ("b:2".to_string(), 3)]
                .into_iter()
                .collect(),
            crossslot: [("MSET".to_string(), 2)].into_iter().collect(),
            multi_across_slots: 1,
            multi_commands_skipped: 4,
            moved: 0,
            ask: 7,
        };
        assert_eq!(
            cluster_line(&c),
            "  cluster: 8 commands to 2 primaries; not sent: CROSSSLOT MSET 2, MULTI/EXEC \
             across slots 1 (4 commands); followed: MOVED 0, ASK 7\n"
        );
    }

    #[test]
    fn the_password_never_reaches_the_recorded_command_line() {
        let argv: Vec<OsString> = ["replay", "-a", "hunter2", "--speed", "2", "t.trace"]
            .iter()
            .map(OsString::from)
            .collect();
        let line = redacted(&argv).join(" ");
        assert!(!line.contains("hunter2"), "{line}");
        assert!(line.contains("--speed 2 t.trace"), "{line}");
        assert!(line.starts_with("respbench replay -a "), "{line}");
        let argv: Vec<OsString> = ["replay", "-u", "redis://u:hunter2@h:1", "t.trace"]
            .iter()
            .map(OsString::from)
            .collect();
        let line = redacted(&argv).join(" ");
        assert!(
            !line.contains("hunter2") && line.contains("t.trace"),
            "{line}"
        );
        // Options after the trace, and a value attached to its option.
        let argv: Vec<OsString> = [
            "replay",
            "t.trace",
            "--tls",
            "-ahunter2",
            "-u=rediss://:hunter2@h",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let line = redacted(&argv).join(" ");
        assert!(
            !line.contains("hunter2") && line.contains("--tls"),
            "{line}"
        );
    }
}
