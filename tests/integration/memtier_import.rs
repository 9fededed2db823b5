//! memtier's imported data against Redis 7.0 and Valkey 9.1, the server as the judge:
//! `--data-import` (every item of memtier's dump CSV SET once with its value and TTL, across
//! connections; `--no-expiry`; `--generate-keys`), `--data-verify` and `--verify-only` (the keys
//! read back: none failed after a run, the changed and deleted ones after the test changes a
//! few), a malformed line (one line naming it, exit 2, nothing sent) and a file of a million
//! items read without a copy of it in memory.

use std::io::Write;
use std::path::Path;

use super::harness::{Server, TempDir, run_memtier as memtier};

fn both() -> [Server; 2] {
    [Server::start(), Server::start_valkey()]
}

/// One item of a dump: its key, value and expiry.
struct Item {
    key: Vec<u8>,
    value: Vec<u8>,
    exptime: u32,
}

/// `n` items whose values hold what the quoted form must carry (`"`, `,`, CR LF, NUL, 0xff),
/// every third without an expiry, the others with one of 1,000 s or more.
fn items(n: usize) -> Vec<Item> {
    (0..n)
        .map(|i| {
            let mut value = format!("value {i}, \"quoted\"").into_bytes();
            if i % 5 == 0 {
                value.extend_from_slice(b"\r\nline two\0\xff");
            }
            Item {
                key: format!("imp:{i}").into_bytes(),
                value,
                exptime: if i % 3 == 0 { 0 } else { 1000 + i as u32 },
            }
        })
        .collect()
}

/// The items as memtier's own writer writes them (`file_io.cpp`).
fn dump(path: &Path, items: &[Item]) {
    let quote = |s: &[u8]| -> Vec<u8> {
        s.iter()
            .flat_map(|&c| if c == b'"' { vec![c, c] } else { vec![c] })
            .collect()
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n")
        .unwrap();
    for it in items {
        write!(
            f,
            "0, 0, {}, {}, 0, 0, 1, {}, \"",
            it.exptime,
            it.value.len() + 2,
            it.key.len()
        )
        .unwrap();
        f.write_all(&quote(&it.key)).unwrap();
        f.write_all(b"\", \"").unwrap();
        f.write_all(&quote(&it.value)).unwrap();
        f.write_all(b"\"\n").unwrap();
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn data_import_sets_every_item_once_with_its_value_and_ttl() {
    for server in both() {
        let dir = TempDir::new();
        let file = dir.path().join("dump.csv");
        let all = items(1500);
        dump(&file, &all);
        let record = dir.path().join("run.json");
        let started = std::time::Instant::now();
        let import = format!("--data-import={}", file.display());
        #[rustfmt::skip]
        let out = memtier(&server, &[&import, "-n", "allkeys", "--ratio=1:0", "-c", "2", "-t", "2",
            "--json", record.to_str().unwrap()]);
        out.assert_success();
        let mut c = server.client();
        let expiring = all.iter().filter(|i| i.exptime > 0).count() as u64;
        assert_eq!(
            c.calls("setex"),
            expiring,
            "an item with an expiry is SETEX"
        );
        assert_eq!(c.calls("set"), all.len() as u64 - expiring);
        assert_eq!(
            c.dbsize(),
            all.len() as i64,
            "every item once, over 4 connections"
        );
        for it in &all {
            assert_eq!(
                c.bulk(&[&b"GET"[..], &it.key]).as_deref(),
                Some(&it.value[..])
            );
            let ttl = c.int(&[&b"TTL"[..], &it.key]);
            let since = started.elapsed().as_secs() as i64 + 1;
            match it.exptime {
                0 => assert_eq!(ttl, -1),
                e => assert!(
                    (i64::from(e) - since..=i64::from(e)).contains(&ttl),
                    "{ttl}"
                ),
            }
        }
        let r = json(&record);
        assert_eq!(r["tests"][0]["requests"]["completed"], 1500);
        let m = &r["options"]["memtier"]["data_import"];
        assert_eq!(
            (m["items"].as_u64(), m["generate_keys"].as_bool()),
            (Some(1500), Some(false))
        );
        super::record::check_with_python(&record);

        // --no-expiry: plain SETs, no TTL.
        c.ok(&["FLUSHALL"]);
        let setex = c.calls("setex");
        #[rustfmt::skip]
        memtier(&server, &[&import, "-n", "allkeys", "--ratio=1:0", "--no-expiry", "-c", "1",
            "-t", "1"]).assert_success();
        assert_eq!(c.calls("setex"), setex, "no SETEX with --no-expiry");
        assert_eq!(c.dbsize(), 1500);
        assert_eq!(c.int(&[&b"TTL"[..], &all[1].key]), -1);
    }
}

#[test]
fn generate_keys_takes_keys_from_the_range_and_values_from_the_file() {
    for server in both() {
        let dir = TempDir::new();
        let file = dir.path().join("dump.csv");
        let all = items(100);
        dump(&file, &all);
        let import = format!("--data-import={}", file.display());
        #[rustfmt::skip]
        memtier(&server, &[&import, "--generate-keys", "--key-minimum=1", "--key-maximum=250",
            "--key-pattern=P:P", "-n", "allkeys", "--ratio=1:0", "-c", "2", "-t", "1"])
        .assert_success();
        let mut c = server.client();
        assert_eq!(c.dbsize(), 250);
        for k in 1..=250usize {
            let key = format!("memtier-{k}");
            let want = &all[(k - 1) % 100].value;
            assert_eq!(c.bulk(&["GET", &key]).as_deref(), Some(&want[..]), "{key}");
        }
    }
}

#[test]
fn data_verify_after_a_run_and_verify_only_after_the_test_changes_keys() {
    for server in both() {
        let dir = TempDir::new();
        let file = dir.path().join("dump.csv");
        let all = items(800);
        dump(&file, &all);
        let import = format!("--data-import={}", file.display());
        let (mt, record) = (dir.path().join("mt.json"), dir.path().join("run.json"));
        #[rustfmt::skip]
        let out = memtier(&server, &[&import, "-n", "allkeys", "--ratio=1:0", "--data-verify",
            "-c", "2", "-t", "2", "--json-out-file", mt.to_str().unwrap(),
            "--json", record.to_str().unwrap()]);
        out.assert_success();
        assert!(
            out.stdout.contains(
                "\n\nPerforming data verification...\nData verification completed:\n\
                 800        keys verified successfuly.\n0          keys failed.\n"
            ),
            "{}",
            out.stdout
        );
        let mut c = server.client();
        assert_eq!(c.calls("get"), 800, "every key read back once");
        assert_eq!(
            json(&mt)["client verifications results"],
            serde_json::json!({"keys verified successfuly": 800, "keys failed": 0})
        );
        assert_eq!(
            json(&record)["verify"],
            serde_json::json!({"keys": 800, "verified": 800, "missing": 0, "mismatched": 0})
        );
        super::record::check_with_python(&record);

        // The test changes three keys and deletes two: --verify-only finds those five.
        for i in [3usize, 400, 799] {
            c.ok(&[&b"SET"[..], &all[i].key, b"changed"]);
        }
        c.int(&[&b"DEL"[..], &all[10].key, &all[11].key]);
        let (sets, gets) = (c.calls("set") + c.calls("setex"), c.calls("get"));
        let html = dir.path().join("verify.html");
        #[rustfmt::skip]
        let out = memtier(&server, &[&import, "--verify-only", "--json-out-file",
            mt.to_str().unwrap(), "--json", record.to_str().unwrap(),
            "--html", html.to_str().unwrap()]);
        out.assert_success(); // memtier's exit status: 0 whatever the keys.
        assert!(
            out.stdout
                .contains("795        keys verified successfuly.\n5          keys failed.\n"),
            "{}",
            out.stdout
        );
        assert!(!out.stdout.contains("ALL STATS"), "no test: {}", out.stdout);
        let named = out
            .stderr
            .lines()
            .filter(|l| l.contains("--data-verify: key "))
            .count();
        assert_eq!(named, 5, "{}", out.stderr);
        assert!(
            out.stderr.contains("\"imp:10\" is missing"),
            "{}",
            out.stderr
        );
        assert_eq!(
            c.calls("set") + c.calls("setex"),
            sets,
            "--verify-only writes nothing"
        );
        assert_eq!(c.calls("get"), gets + 800);
        let r = json(&record);
        assert_eq!(
            r["verify"],
            serde_json::json!({"keys": 800, "verified": 795, "missing": 2, "mismatched": 3})
        );
        assert_eq!(r["tests"], serde_json::json!([]));
        assert_eq!(json(&mt)["client verifications results"]["keys failed"], 5);
        super::record::check_with_python(&record);
        // --html shows what the verification found (the run has nothing else to show).
        let page = std::fs::read_to_string(&html).expect("--verify-only writes its --html page");
        let table = &page[page.find("id=\"data-verification\"").expect("the section")..];
        let table = &table[..table.find("</section>").unwrap()];
        for cell in [
            "<td>800</td>",
            "<td>795</td>",
            "<td>2</td>",
            "<td>3</td>",
            "<td>5</td>",
        ] {
            assert!(table.contains(cell), "{cell}: {table}");
        }
        assert!(
            !page.contains("no test in the record"),
            "not a problem: {table}"
        );

        // A run that wrote the first 100 items reads back those 100.
        c.ok(&["FLUSHALL"]);
        #[rustfmt::skip]
        let out = memtier(&server, &[&import, "-n", "100", "--ratio=1:0", "--data-verify",
            "-c", "1", "-t", "1"]);
        out.assert_success();
        assert!(
            out.stdout
                .contains("100        keys verified successfuly.\n0          keys failed.")
        );
    }
}

#[test]
fn a_malformed_line_is_one_line_naming_it_and_nothing_is_sent() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let file = dir.path().join("bad.csv");
    dump(&file, &items(3));
    // A fourth item whose value is shorter than its nbytes says.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(b"0, 0, 0, 12, 0, 0, 1, 1, \"k\", \"short\"\n")
        .unwrap();
    let mut c = server.client();
    let before = c.info_u64("stats", "total_connections_received");
    let out = memtier(&server, &[&format!("--data-import={}", file.display())]);
    out.assert_code(2);
    let line = out.single_stderr_line();
    assert_eq!(
        line,
        format!(
            "respbench memtier: error: {}:6: the value is 5 bytes, the line says 10",
            file.display()
        )
    );
    assert_eq!(
        c.info_u64("stats", "total_connections_received"),
        before,
        "nothing connected"
    );
    let out = memtier(&server, &["--data-import=/nonexistent/respbench/dump.csv"]);
    out.assert_code(1);
    assert!(
        out.single_stderr_line()
            .contains("cannot read /nonexistent"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_million_items_are_read_without_a_copy_of_the_file_in_memory() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let file = dir.path().join("big.csv");
    let value = "v".repeat(48);
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        writeln!(
            f,
            "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data"
        )
        .unwrap();
        for i in 0..1_000_000u32 {
            let key = format!("big:{i}");
            writeln!(
                f,
                "0, 0, 0, 50, 0, 0, 1, {}, \"{key}\", \"{value}\"",
                key.len()
            )
            .unwrap();
        }
    }
    let size_kb = std::fs::metadata(&file).unwrap().len() / 1024;
    let port = server.port().to_string();
    let import = format!("--data-import={}", file.display());
    #[rustfmt::skip]
    let args = ["memtier", "-s", "127.0.0.1", "-p", &port, "--hide-histogram", &import,
        "--test-time=1", "--ratio=1:0", "-c", "1", "-t", "1"];
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_respbench"));
    cmd.args(args);
    let (status, anon_kb) = run_watching_anon(cmd);
    assert!(status.success());
    // The file (~70 MB) is mapped, not read into the process's own memory: what it holds of
    // its own is the index (8 bytes an item) and the run's buffers.
    assert!(size_kb > 60_000, "{size_kb} kB");
    assert!(
        anon_kb < size_kb / 2,
        "{anon_kb} kB of anonymous memory for {size_kb} kB"
    );
    let mut c = server.client();
    assert!(c.dbsize() > 0);
    assert_eq!(c.bulk(&["GET", "big:0"]).as_deref(), Some(value.as_bytes()));
}

/// The most anonymous memory (`RssAnon`, kB) a process held while it ran, read from /proc.
fn run_watching_anon(mut cmd: std::process::Command) -> (std::process::ExitStatus, u64) {
    super::harness::die_with_parent(&mut cmd);
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut peak = 0;
    loop {
        if let Some(kb) = std::fs::read_to_string(&status_path).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("RssAnon:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not end within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
