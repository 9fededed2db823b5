use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::metrics::thread_cpu::ThreadCpuUsage;
use crate::metrics::{ClusterStats, NodeSecond, NodeStats, Outcome, Role, Signal, TestResult};
use crate::record::build::{self, TestExtras};
use crate::watch::Watched;

/// A fresh directory for one test's journal.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("respbench-journal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn head() -> Document {
    Document {
        schema: crate::record::document::SCHEMA.into(),
        outcome: "completed".into(),
        command_line: vec!["respbench".into(), "-a".into(), "hunter2".into()],
        ..Document::default()
    }
}

/// Second `i` with `n` requests of latencies around `base_ns`, one of them failed.
fn second(n: u64, base_ns: u64) -> Second {
    let mut s = Second::default();
    for k in 0..n {
        s.latency.record(base_ns + k * 37);
        s.slots[(k % 10) as usize].completed += 1;
    }
    s.completed = n;
    s.failed = 1;
    s.lost[0] = 1;
    s.slots[3].failed = 1;
    s.slots[3].lost = 1;
    s
}

fn start(name: &str) -> TestStart<'_> {
    TestStart {
        name,
        started_at: Some("2026-01-02T03:04:05.000006Z".into()),
        repetition: Some(2),
        commands: vec!["set".into()],
        target_rps: None,
        mix: Vec::new(),
        nodes: Vec::new(),
        heads: Default::default(),
        delivery: None,
    }
}

fn finished(name: &str, completed: u64) -> TestRecord {
    let mut r = TestResult::empty(name, None, Outcome::Completed);
    for k in 0..completed {
        r.latency.record(10_000 + k);
        r.latency_uncorrected.record(9_000 + k);
    }
    r.completed = completed;
    build::test_record(&r, vec!["get".into()], &[], TestExtras::default())
}

/// A journal in a fresh directory `name`, its head written; the directory to remove and the
/// journal's path beside it.
fn journal(name: &str) -> (PathBuf, PathBuf, Journal) {
    let d = dir(name);
    let path = d.join("run.json.partial");
    let mut j = Journal::create(&path).unwrap();
    j.head(&head()).unwrap();
    (d, path, j)
}

/// The journal at `path` read back as `respbench recover` reads it, beside its text.
fn recovered(path: &Path) -> (String, Document) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = Document::read(recognise(&text, Some(path)).unwrap().unwrap()).unwrap();
    (text, doc)
}

/// A test of a two-command mix (SET and GET) that Ctrl-C stopped: the result the seconds of
/// `exact_second` add to.
fn interrupted_mix() -> TestResult {
    let mut r = TestResult::empty("SET", None, Outcome::Interrupted(Signal::Interrupt));
    r.commands = ["SET", "GET"]
        .map(crate::metrics::CommandResult::new)
        .into();
    r
}

/// `r` as Ctrl-C at the last of `seconds` leaves it: a timeout for each second's lost
/// request, the whole seconds as its time, what was written and not settled unanswered, the
/// journal's start time, and the seconds as its timeline (without their exact parts and each
/// worker's CPU, which the record holds elsewhere).
fn held_at_last_second(r: &mut TestResult, seconds: &[Second]) {
    r.errors.record_kind("timeout", seconds.len() as u64);
    r.elapsed = Duration::from_secs(seconds.len() as u64);
    r.unanswered = r.issued - r.completed - r.errors.total();
    r.started_at = (start("SET").started_at.as_deref()).and_then(crate::timestamp::parse_time);
    for (i, s) in seconds.iter().enumerate() {
        *r.timeline.second_mut(i) = Second {
            exact: None,
            client_threads: Vec::new(),
            ..s.clone()
        };
    }
}

/// The record `RunRecord::end_test` builds of the mix test `r` (`interrupted_mix`): its
/// commands named by the mix, its timeline, what it issued, and the journal start's
/// repetition and start time. `extras` holds what the test measured beside (each worker's
/// CPU: an empty list when none was, as a run's record has).
fn mix_record<'a>(r: &'a TestResult, watched: &[Watched], extras: TestExtras<'a>) -> TestRecord {
    let b = start("SET");
    let extras = TestExtras {
        timeline: Some(&r.timeline),
        repetition: b.repetition,
        issued: Some(r.issued),
        ..extras
    };
    let commands = vec!["set".to_string(), "get".to_string()];
    let mut want = build::test_record(r, commands, watched, extras);
    want.started_at = b.started_at;
    want
}

/// What a mix test measured without the machine or a server watched: no worker's CPU either.
fn no_cpu() -> TestExtras<'static> {
    TestExtras {
        client_threads: Some(&[]),
        ..TestExtras::default()
    }
}

#[test]
fn a_killed_run_reads_as_its_finished_tests_and_the_full_seconds_of_the_last() {
    let (d, path, mut j) = journal("killed");
    let first = finished("GET", 500);
    j.test(&first).unwrap();
    j.discard(7).unwrap(); // out of range: nothing
    let seconds = [second(1_000, 50_000), second(2_000, 80_000), second(0, 1)];
    for (i, s) in seconds.iter().enumerate() {
        j.second(start("SET"), i, s).unwrap();
    }
    // A power cut in the middle of the next line: ignored.
    j.file
        .write_all(b"{\"kind\":\"second\",\"second\":3,\"compl")
        .unwrap();
    drop(j);
    let (text, doc) = recovered(&path);
    assert!(!text.contains("hunter2"), "the head is redacted: {text}");
    assert_eq!(doc.outcome, "killed");
    assert_eq!(doc.tests.len(), 2);
    assert_eq!(
        serde_json::to_value(&doc.tests[0]).unwrap(),
        serde_json::to_value(&first).unwrap(),
        "a finished test is kept exactly"
    );
    let t = &doc.tests[1];
    assert_eq!(
        (t.name.as_str(), t.outcome.as_str()),
        ("SET", "interrupted")
    );
    assert_eq!(t.repetition, Some(2));
    assert_eq!(t.commands, ["set"]);
    assert_eq!(t.timeline.len(), 3);
    assert_eq!(t.requests.completed, 3_000);
    assert_eq!(t.requests.failed, 3);
    assert_eq!(t.requests.errors.get("timeout"), Some(&3));
    assert_eq!(
        (t.requests.issued, t.requests.unanswered),
        (None, 0),
        "seconds without an issued count (an older journal's): unknown"
    );
    assert_eq!(t.duration_s, 3.0);
    assert_eq!(t.throughput_rps, 1_000.0);
    assert_eq!(t.started_at.as_deref(), Some("2026-01-02T03:04:05.000006Z"));
    assert_eq!(doc.ended_at, "2026-01-02T03:04:08.000Z");
    // The seconds' histograms, bucket for bucket.
    let mut all = crate::metrics::LatencyHistogram::new();
    for s in &seconds {
        s.latency.add_to(&mut all);
    }
    assert_eq!(
        t.latency_us.corrected.p99,
        all.value_at_percentile_ns(99.0) as f64 / 1000.0
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_journal_whose_run_holds_its_lock_reads_as_running() {
    let (d, path, j) = journal("running");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = |p: Option<&Path>| Document::read(recognise(&text, p).unwrap().unwrap()).unwrap();
    assert_eq!(doc(Some(&path)).outcome, "running");
    let e = Journal::create(&path).err().unwrap().to_string();
    assert!(e.contains("another run is writing it"), "{e}");
    drop(j);
    assert_eq!(doc(Some(&path)).outcome, "killed");
    let e = Journal::create(&path).err().unwrap().to_string();
    assert!(
        e.contains("respbench recover"),
        "a killed run's journal is kept: {e}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_test_name_with_a_password_is_redacted_in_the_journal() {
    let (d, path, mut j) = journal("redact");
    j.second(start("AUTH hunter2"), 0, &second(10, 1_000))
        .unwrap();
    j.test(&finished("AUTH hunter2", 10)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("AUTH"));
    j.remove().unwrap();
    assert!(!path.exists(), "removed when the run's record is written");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn what_is_not_a_journal_or_is_broken_is_told() {
    assert!(recognise("{\"schema\":\"respbench/1\",\"tests\":[]}", None).is_none());
    assert!(recognise("\"test\",\"rps\"\n", None).is_none());
    let later = "{\"kind\":\"head\",\"journal\":\"respbench-journal/9\",\"document\":{}}\n";
    let e = recognise(later, None).unwrap().unwrap_err();
    assert!(e.contains("respbench-journal/9"), "{e}");
    let head_line = serde_json::to_string(&Line::Head {
        journal: FORMAT.into(),
        document: serde_json::to_value(head()).unwrap(),
    })
    .unwrap();
    let broken = format!("{head_line}\nnot json\n{{\"kind\":\"discard\",\"index\":0}}\n");
    let e = recognise(&broken, None).unwrap().unwrap_err();
    assert!(e.contains("journal line 2"), "{e}");
}

/// Second with `n` requests around `base_ns`, its full-precision pair recorded as the workers
/// record it; the same samples go into `whole` (corrected, uncorrected) as the test's own
/// histograms record them.
fn exact_second(n: u64, base_ns: u64, whole: &mut TestResult) -> Second {
    let mut s = second(n, base_ns);
    let mut e = crate::metrics::ExactSecond {
        commands: vec![Default::default(), Default::default()],
        ..Default::default()
    };
    for k in 0..n {
        let (c, u) = (base_ns + k * 37, base_ns / 2 + k * 11);
        // A mix of two commands, every third reply of the second a nil.
        let (mine, all) = (
            &mut e.commands[(k % 2) as usize],
            &mut whole.commands[(k % 2) as usize],
        );
        mine.latency.record(c);
        all.latency.record(c);
        mine.uncorrected.record(u);
        all.uncorrected.record(u);
        // `SET key value` and `+OK`: 30 bytes out, 5 back.
        (mine.tx_bytes, mine.rx_bytes) = (mine.tx_bytes + 30, mine.rx_bytes + 5);
        all.bytes = all.bytes.map(|(tx, rx)| (tx + 30, rx + 5));
        mine.completed += 1;
        all.completed += 1;
        mine.nils += u64::from(k % 3 == 0);
        all.nils += u64::from(k % 3 == 0);
        mine.hits += u64::from(k % 3 != 0);
        all.hits = all.hits.map(|h| h + u64::from(k % 3 != 0));
        e.corrected.record(c);
        e.uncorrected.record(u);
        whole.latency.record(c);
        whole.latency_uncorrected.record(u);
    }
    whole.completed += n;
    // Written: its replies, its lost request, its error reply and 5 still in flight.
    s.issued = Some(n + 7);
    whole.issued += n + 7;
    // What the record takes beside the replies, handed over with the second: the pushes, the
    // refused reconnects, the invalidations by second, and each slot's client CPU, run-queue
    // wait and sampled delays.
    let pushes = crate::metrics::PushCounts {
        invalidations: n / 10,
        messages: 1,
        other: 2,
    };
    s.pushes = Some(pushes);
    whole.pushes.merge(&pushes);
    s.reconnect_refusals = Some(n % 3);
    whole.reconnect_refusals += n % 3;
    s.invalidations = n / 10;
    for (k, slot) in s.slots.iter_mut().enumerate() {
        let k = k as u32;
        (slot.cpu_max_permille, slot.cpu_workers) = (400 + k, 2);
        (slot.runqueue_max_permille, slot.runqueue_workers) = (10 * k, 2);
        (slot.delay_sum_ns, slot.delay_samples) = (30_000 * u64::from(k), u64::from(k));
    }
    // One error reply a second, by its first word.
    s.failed += 1;
    s.slots[5].failed += 1;
    let reply: &[u8] = if base_ns.is_multiple_of(2) {
        b"WRONGTYPE Operation against a key"
    } else {
        b"OOM command not allowed"
    };
    e.errors.record(reply);
    whole.errors.record(reply);
    s.exact = Some(Box::new(e));
    s
}

#[test]
fn a_recovered_test_is_the_record_ctrl_c_at_its_last_full_second_would_have_written() {
    let (d, path, mut j) = journal("exact");
    // What the test measured up to its last full second, as a Ctrl-C there would hold it.
    let mut r = interrupted_mix();
    let seconds = [
        exact_second(1_000, 50_000, &mut r),
        exact_second(2_000, 81_234, &mut r),
        exact_second(0, 1, &mut r),
        exact_second(777, 3_333_333, &mut r),
    ];
    for (i, s) in seconds.iter().enumerate() {
        j.second(mix_start(), i, s).unwrap();
    }
    drop(j);
    let (text, doc) = recovered(&path);
    let got = &doc.tests[0];

    held_at_last_second(&mut r, &seconds);
    let want = mix_record(&r, &[], no_cpu());
    assert_eq!(
        serde_json::to_value(got).unwrap(),
        serde_json::to_value(&want).unwrap(),
        "field for field, the histograms exact"
    );
    assert_eq!(
        (got.pushes.other, got.requests.reconnect_refusals),
        (8, Some(3)),
        "the pushes and refused reconnects, handed over with the seconds"
    );
    assert_eq!(got.timeline[0].invalidations, 100);
    assert_eq!(got.requests.completed, 3_777);
    let q = &got.requests;
    assert_eq!((q.issued, q.unanswered), (Some(3_805), 20));
    assert_eq!(q.issued, Some(q.completed + q.failed + q.unanswered));
    assert_eq!(got.requests.errors.get("WRONGTYPE"), Some(&2));
    assert_eq!(got.requests.errors.get("OOM"), Some(&2));
    assert_eq!(got.requests.errors.get("error replies"), None);
    assert_eq!(got.mix.len(), 2, "each command of the mix");
    assert_eq!(got.mix[1].completed + got.mix[0].completed, 3_777);
    assert!(got.mix[0].misses.unwrap() > 0);
    // Each command's latencies from the write and its bytes: the seconds' sums.
    let sent: u64 = (got.mix.iter())
        .map(|m| m.uncorrected.as_ref().unwrap().latency_us.count)
        .sum();
    assert_eq!(sent, 3_777);
    let bytes = got.mix[0].bytes.unwrap();
    assert_eq!(
        (bytes.tx, bytes.rx),
        (30 * got.mix[0].completed, 5 * got.mix[0].completed)
    );
    assert!(text.contains("\"exact\""), "the seconds carry their deltas");
    assert!(
        text.contains("\"corrected\":\"HISTEw"),
        "the deltas are uncompressed V2 (`hdr::encode_sparse`)"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_delivery_seconds_publishes_read_back_and_other_seconds_do_not_carry_them() {
    let mut s = second(10, 1_000);
    let plain = serde_json::to_string(&SecondLine::of(
        0,
        &s,
        &SecondContext::default(),
        &mut DenseCounts::default(),
    ))
    .unwrap();
    assert!(!plain.contains("published"), "{plain}");
    s.published = 7;
    let line = SecondLine::of(
        3,
        &s,
        &SecondContext::default(),
        &mut DenseCounts::default(),
    );
    let text = serde_json::to_string(&line).unwrap();
    assert!(text.contains("\"published\":7"), "{text}");
    let back: SecondLine = serde_json::from_str(&text).unwrap();
    assert_eq!(back.to_second().unwrap().published, 7);
    assert_eq!(back.to_second().unwrap().completed, 10);
}

/// The journal's start of the mix test (`interrupted_mix`).
fn mix_start() -> TestStart<'static> {
    TestStart {
        mix: vec!["SET".into(), "GET".into()],
        ..start("SET")
    }
}

/// A server sample at `at_s` seconds, its CPU and commands growing with it.
fn sample(at_s: u64) -> crate::watch::ServerSample {
    crate::watch::ServerSample {
        at: Duration::from_secs(at_s),
        cpu_user: 0.5 * at_s as f64,
        cpu_sys: 0.25 * at_s as f64,
        cpu_main: Some(0.6 * at_s as f64),
        used_memory: 1_000_000 + at_s * 10,
        connected_clients: 51,
        ..Default::default()
    }
}

/// The cluster test's nodes: a primary and its replica.
const NODES: [(&str, Role); 2] = [
    ("127.0.0.1:7000", Role::Primary),
    ("127.0.0.1:7001", Role::Replica),
];

/// Three seconds of a mix test on `NODES`, added to `r`, with their sampled client delays,
/// each worker's CPU so far and per-node figures: every completed request on node 0, one lost
/// on node 1, a MOVED and an ASK a second. Beside them, the cluster figures the test's own
/// result holds at the end of the last.
fn cluster_seconds(r: &mut TestResult) -> (Vec<Second>, ClusterStats) {
    let mut cluster = ClusterStats {
        nodes: (NODES.iter())
            .map(|(a, role)| NodeStats {
                address: a.to_string(),
                role: Some(*role),
                ..NodeStats::new()
            })
            .collect(),
        ..ClusterStats::default()
    };
    let mut seconds = Vec::new();
    for (i, (n, base)) in [(1_000, 50_000), (2_000, 81_234), (0, 1)]
        .into_iter()
        .enumerate()
    {
        let mut s = exact_second(n, base, r);
        // The sampled client delays (`rx_delay`) of the second.
        for k in 0..(i as u64 + 2) {
            s.client_delay.record(20_000 + 3_000 * k);
        }
        s.client_delay.add_to(&mut r.client_delay);
        let e = s.exact.as_mut().unwrap();
        e.nodes = vec![NodeSecond::default(), NodeSecond::default()];
        e.nodes[0].latency = e.corrected.clone();
        e.nodes[0].completed = n;
        e.nodes[1].lost = 1;
        cluster.nodes[0].latency.merge(&e.corrected.to_histogram());
        cluster.nodes[0].completed += n;
        cluster.nodes[1].lost += 1;
        e.redirects = [1, 1, 0, 0];
        for (a, b) in cluster.redirects.iter_mut().zip(&e.redirects) {
            *a += b;
        }
        cluster.timeline.push(e.redirects);
        // Each worker's CPU so far, as the main thread read it at the hand-over.
        let so_far = |ms: u64| Duration::from_millis(ms * (i as u64 + 1));
        s.client_threads = (0..2)
            .map(|w| ThreadCpuUsage {
                cpu: so_far(400) + Duration::from_millis(w),
                runqueue: Some(so_far(10)),
                wall: so_far(1_000),
            })
            .collect();
        seconds.push(s);
    }
    (seconds, cluster)
}

/// The machine's load `i` seconds into the cluster test (since its start).
fn machine(i: usize) -> crate::machine::Load {
    crate::machine::Load {
        seconds: i as f64 + 1.0,
        busy_pct: Some(150.0 + i as f64),
        cores: 2,
        ..Default::default()
    }
}

/// The watched server's SET count, `calls` so far.
fn set_calls(calls: u64) -> Vec<crate::watch::commandstats::CommandCounters> {
    vec![crate::watch::commandstats::CommandCounters {
        name: "set".into(),
        calls,
        usec: 3 * calls,
    }]
}

/// What the hand-over of the cluster test's second `i` adds beside it: the machine and the
/// watched server's `samples` since the last second, its commands and latency percentiles.
fn beside_second(i: usize, samples: &[crate::watch::ServerSample]) -> SecondContext {
    SecondContext {
        machine: Some(machine(i)),
        server: vec![ServerSeconds {
            address: NODES[0].0.into(),
            samples: samples.to_vec(),
            commandstats_before: Some(set_calls(100)),
            commandstats: Some(set_calls(100 + 1_000 * (i as u64 + 1))),
            latencystats: Some(format!("latency_percentiles_usec_set:p50={i}.5,p99=9\r\n")),
        }],
    }
}

#[test]
fn a_recovered_cluster_test_has_its_nodes_server_samples_and_client_cpu() {
    let (d, path, mut j) = journal("beside");
    let mut r = interrupted_mix();
    let (seconds, cluster) = cluster_seconds(&mut r);
    let server_seconds = [vec![sample(0), sample(1)], vec![sample(2)], vec![]];
    let test = || TestStart {
        nodes: (NODES.iter())
            .map(|(a, role)| (a.to_string(), role.name().to_string()))
            .collect(),
        ..mix_start()
    };
    for (i, s) in seconds.iter().enumerate() {
        j.second_with(test(), i, s, &beside_second(i, &server_seconds[i]))
            .unwrap();
    }
    drop(j);
    let (_, doc) = recovered(&path);
    let got = &doc.tests[0];

    // What the Ctrl-C at the last full second holds, from the same figures.
    held_at_last_second(&mut r, &seconds);
    r.cluster = Some(cluster);
    let watched = [Watched {
        address: NODES[0].0.into(),
        samples: server_seconds.concat(),
        commandstats_before: Some(set_calls(100)),
        commandstats_after: Some(set_calls(3_100)),
        latencystats: Some("latency_percentiles_usec_set:p50=2.5,p99=9\r\n".into()),
        ..Default::default()
    }];
    let extras = TestExtras {
        client_threads: Some(&seconds[2].client_threads),
        machine: Some(machine(2)),
        ..TestExtras::default()
    };
    let want = mix_record(&r, &watched, extras);
    assert_eq!(
        serde_json::to_value(got).unwrap(),
        serde_json::to_value(&want).unwrap(),
        "field for field: nodes, server block, client CPU, machine, verdict"
    );
    assert_eq!(got.nodes.len(), 2, "{:?}", got.nodes);
    assert_eq!(got.nodes[0].completed, got.requests.completed);
    assert_eq!(
        (got.nodes[1].role.as_str(), got.nodes[1].lost),
        ("replica", 3)
    );
    assert_eq!(
        got.requests.redirects.as_ref().and_then(|m| m.get("MOVED")),
        Some(&3)
    );
    assert_eq!(got.server.len(), 1, "the watched server's block");
    assert_eq!(
        got.server[0].seconds.len(),
        2,
        "three samples: two intervals"
    );
    let cpu = got.client_threads_cpu_pct.as_ref().unwrap();
    assert_eq!(cpu.len(), 2);
    assert!((cpu[1] - 40.0333).abs() < 0.01, "{cpu:?}");
    assert_eq!(got.machine.as_ref().map(|m| m.cores), Some(2));
    assert_eq!(got.client_delay_us.as_ref().map(|d| d.count), Some(9));
    let set = &got.server[0].commands;
    assert_eq!((set.len(), set[0].calls), (1, 3_000), "{set:?}");
    assert!(
        got.latency_split.is_some(),
        "the server's time per call splits the latency"
    );
    assert_eq!(
        got.server[0].latency_percentiles.len(),
        1,
        "the last second's"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every journal an earlier build left (`tests/fixtures/journals/`) recovers as that build's
/// `respbench recover` did, field for field.
#[test]
fn journals_of_earlier_builds_recover_as_they_did() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journals");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "partial") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let got = Document::read(recognise(&text, None).unwrap().unwrap()).unwrap();
        let want_text = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let mut want = Document::read(serde_json::from_str(&want_text).unwrap()).unwrap();
        // The refused reconnects are unknown in a journal of a build before they were handed
        // over with the pushes (1ae977e: no `pushes` in its seconds); that build's recover
        // wrote 0.
        if !text.contains("\"pushes\"") {
            for t in &mut want.tests {
                t.requests.reconnect_refusals = None;
            }
        }
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&want).unwrap(),
            "{}",
            path.display()
        );
        seen += 1;
    }
    assert!(seen >= 1, "no journal in {}", dir.display());
}

/// A long run's journal, scaled down: its lines written as the journal writes them (without a
/// sync each), and a second of its exact parts for every `k`.
fn long_journal(seconds: usize, r: &mut TestResult) -> (String, Vec<Second>) {
    let mut text = String::new();
    let mut line = |l: &Line| {
        text.push_str(&serde_json::to_string(l).unwrap());
        text.push('\n');
    };
    line(&Line::Head {
        journal: FORMAT.into(),
        document: serde_json::to_value(head()).unwrap(),
    });
    line(&Line::Begin(Box::new(BeginLine {
        name: "SET".into(),
        started_at: start("SET").started_at,
        repetition: Some(2),
        commands: vec!["set".into()],
        mix: vec!["SET".into(), "GET".into()],
        ..BeginLine::default()
    })));
    let mut kept = Vec::new();
    let mut dense = DenseCounts::default();
    for i in 0..seconds {
        // Latencies that move over the run, a second now and then with nothing completed.
        let n = if i % 97 == 13 { 0 } else { 20 + (i % 7) as u64 };
        let s = exact_second(n, 40_000 + (i as u64 % 50) * 3_001, r);
        line(&Line::Second(Box::new(SecondLine::of(
            i,
            &s,
            &SecondContext::default(),
            &mut dense,
        ))));
        kept.push(Second { exact: None, ..s });
    }
    (text, kept)
}

#[test]
fn a_journal_larger_than_the_cap_is_read_a_line_at_a_time_and_adds_up_exactly() {
    let mut r = interrupted_mix();
    let (text, seconds) = long_journal(3_000, &mut r);
    let longest = text.lines().map(str::len).max().unwrap() as u64;
    // A cap a line fits in, far below the journal: read line by line.
    let cap = longest + 1;
    assert!(cap * 100 < text.len() as u64, "{cap} vs {}", text.len());
    let got = read::read_from(text.as_bytes(), None, cap)
        .unwrap()
        .unwrap();
    let got = Document::read(got).unwrap();
    let got = &got.tests[0];

    // What Ctrl-C at the last full second holds, from the same figures, built as a finished
    // test's (`a_recovered_test_is_the_record_ctrl_c_...`).
    held_at_last_second(&mut r, &seconds);
    let want = mix_record(&r, &[], no_cpu());
    assert_eq!(
        serde_json::to_value(got).unwrap(),
        serde_json::to_value(&want).unwrap(),
        "field for field, 3,000 seconds"
    );
    // What recover's seconds hand over beside the replies adds up too.
    assert_eq!(got.requests.reconnect_refusals, Some(r.reconnect_refusals));
    assert_eq!(got.pushes.other, 2 * 3_000);
    assert!(got.timeline.iter().any(|t| t.invalidations > 0));
    assert_eq!(got.timeline.len(), 3_000);
    assert_eq!(got.requests.completed, r.completed);

    // A line longer than the cap is named, not read (nor held).
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let padded = format!(
        "{{\"kind\":\"discard\",\"index\":99}}{}",
        " ".repeat(2 * cap as usize)
    );
    lines.insert(7, padded);
    let e = read::read_from(lines.join("\n").as_bytes(), None, cap)
        .unwrap()
        .unwrap_err();
    assert!(e.starts_with("journal line 8: longer than"), "{e}");
}

#[test]
fn a_cut_short_last_line_is_ignored_and_a_bad_one_before_the_end_is_named() {
    let mut r = interrupted_mix();
    let (text, _) = long_journal(5, &mut r);
    let cut = &text[..text.len() - 40];
    let doc = Document::read(recognise(cut, None).unwrap().unwrap()).unwrap();
    assert_eq!(doc.tests[0].timeline.len(), 4, "the cut line is left out");
    let blank_after = format!("{cut}\n\n  \n");
    let doc = Document::read(recognise(&blank_after, None).unwrap().unwrap()).unwrap();
    assert_eq!(doc.tests[0].timeline.len(), 4, "blank lines after it too");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{\"kind\":\"second\",\"sec";
    let e = recognise(&lines.join("\n"), None).unwrap().unwrap_err();
    assert!(e.starts_with("journal line 5: "), "{e}");
}
