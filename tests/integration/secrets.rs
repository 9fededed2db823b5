//! Secrets never leave the process (README "Passwords"): a marker password in every spelling
//! of every secret option and inside every command form that carries one, through every output
//! kind — stdout (full, `-q`, `--csv`), stderr (with the live progress line on a terminal),
//! `--json`, `--html`, `compare` (text, HTML, JSON), `report`, `merge` (its file and stderr),
//! server errors that echo an argument — and every file and stream those leave is searched for
//! the marker. Records written before
//! redaction covered a spelling (the marker put back in a record's text) must not leak through
//! `compare`, `report` or `merge` either.

use std::fs;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use crate::harness::{
    Output, Server, ServerKind, ServerOptions, StdinSetup, TempDir, free_port, run_respbench,
    run_respbench_with,
};

/// The password: distinctive, so finding it anywhere means it leaked.
const MARK: &str = "Mk7pw-zq91x";

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Panics naming the place when the marker is in a stream of `out` or in a file under `dir`.
#[track_caller]
fn assert_no_marker(what: &str, out: &Output, dir: &Path) {
    for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !text.contains(MARK),
            "{what}: the password in {name}\n{out:?}"
        );
    }
    assert_no_marker_in_files(what, dir);
}

#[track_caller]
fn assert_no_marker_in_files(what: &str, dir: &Path) {
    for entry in fs::read_dir(dir).expect("read the output directory") {
        let path = entry.expect("a directory entry").path();
        let bytes = fs::read(&path).expect("read an output file");
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(MARK),
            "{what}: the password in {}:\n{text}",
            path.display()
        );
    }
}

/// Every command form that carries a password, as one `;` sequence the server accepts
/// (its `requirepass` is the marker): `AUTH`, `AUTH user`, `HELLO … AUTH`, `CONFIG SET` with
/// several password parameters, `ACL SETUSER >pw`, `MIGRATE … AUTH` and `AUTH2` (of a missing
/// key: `NOKEY`, nothing connects).
fn sequence(server: &Server, kind: ServerKind) -> Vec<String> {
    let port = server.port().to_string();
    let pw_rule = format!(">{MARK}");
    let replica_auth = match kind {
        ServerKind::Valkey => "primaryauth",
        ServerKind::Redis => "masterauth",
    };
    strings(&[
        "auth",
        MARK,
        ";",
        "AUTH",
        "default",
        MARK,
        ";",
        "hello",
        "2",
        "auth",
        "default",
        MARK,
        ";",
        "config",
        "set",
        "requirepass",
        MARK,
        replica_auth,
        MARK,
        ";",
        "acl",
        "setuser",
        "bench-user",
        "on",
        &pw_rule,
        ";",
        "migrate",
        "127.0.0.1",
        &port,
        "no-such-key",
        "0",
        "1000",
        "auth",
        MARK,
        ";",
        "MIGRATE",
        "127.0.0.1",
        &port,
        "no-such-key",
        "0",
        "1000",
        "AUTH2",
        "default",
        MARK,
    ])
}

/// A spelling of the connection password: its arguments and its environment.
type Spelling = (Vec<String>, Vec<(&'static str, &'static str)>);

/// The connection password in each spelling.
fn spellings(server: &Server) -> Vec<Spelling> {
    let hp = |mut v: Vec<String>| {
        v.extend(strings(&[
            "-h",
            "127.0.0.1",
            "-p",
            &server.port().to_string(),
        ]));
        v
    };
    let uri = format!("redis://default:{MARK}@127.0.0.1:{}", server.port());
    vec![
        (hp(strings(&["-a", MARK])), vec![]),
        (hp(vec![format!("-a{MARK}")]), vec![]),
        (hp(vec![format!("-a={MARK}")]), vec![]),
        (hp(strings(&["--user", "default", "-qa", MARK])), vec![]),
        (strings(&["-u", &uri]), vec![]),
        (vec![format!("-u{uri}")], vec![]),
        (vec![format!("-u={uri}")], vec![]),
        (hp(vec![]), vec![("REDISCLI_AUTH", MARK)]),
    ]
}

/// A record's (or CSV's) text as an older respbench wrote it: the marker where `<redacted>` is.
fn unredacted_copy(from: &Path, to: &Path) {
    let text = fs::read_to_string(from).expect("read the output");
    assert!(text.contains("<redacted>"), "{}: {text}", from.display());
    fs::write(to, text.replace("<redacted>", MARK)).expect("write the old copy");
}

#[test]
fn every_spelling_through_every_output_against_redis_and_valkey() {
    for kind in [ServerKind::Redis, ServerKind::Valkey] {
        let server = Server::start_with(ServerOptions {
            password: Some(MARK.into()),
            kind,
            ..ServerOptions::default()
        });
        let seq = sequence(&server, kind);
        let formats: [&[&str]; 3] = [&[], &["-q"], &["--csv"]];
        let dir = TempDir::new();
        for (k, (spelling, env)) in spellings(&server).into_iter().enumerate() {
            let json = dir.path().join(format!("run{k}.json"));
            let html = dir.path().join(format!("run{k}.html"));
            let mut args = spelling;
            args.extend(strings(&["-e", "-n", "40", "-c", "2", "--json"]));
            args.push(json.display().to_string());
            args.push("--html".into());
            args.push(html.display().to_string());
            args.extend(strings(formats[k % 3]));
            args.push("--".into());
            args.extend(seq.iter().cloned());
            let out = run_respbench_with(&args, StdinSetup::Null, &env);
            out.assert_success();
            let r: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
            assert!(
                r["tests"][0]["requests"]["completed"].as_u64() > Some(0),
                "the connection's AUTH succeeded: {r}"
            );
            let name = r["tests"][0]["name"].as_str().unwrap();
            assert!(
                name.starts_with("auth <redacted> ; AUTH default <redacted> ; hello 2 auth"),
                "{name}"
            );
            assert_no_marker(&format!("{kind:?} run {k} {args:?}"), &out, dir.path());
        }
        // The whole sequence ran, up to its MIGRATEs, and the bytes sent are the user's: the
        // password CONFIG SET sent is the marker, not what the outputs show.
        let mut c = server.client();
        assert!(c.calls("migrate") > 0, "{kind:?}");
        assert_eq!(
            c.strings(&["CONFIG", "GET", "requirepass"]),
            [b"requirepass".to_vec(), MARK.as_bytes().to_vec()],
            "{kind:?}"
        );
        c.ok(&["AUTH", "bench-user", MARK]);
        compare_report_and_merge(&server, dir.path(), kind);
    }
}

/// `compare` (text, HTML, JSON), `report` and `merge` on the runs' records and CSV, and on
/// copies as an older respbench wrote them (the password in clear).
fn compare_report_and_merge(server: &Server, runs: &Path, kind: ServerKind) {
    let old = TempDir::new();
    let out = TempDir::new();
    let old_json = old.path().join("old.json");
    unredacted_copy(&runs.join("run0.json"), &old_json);
    let csv = old.path().join("old.csv");
    let csv_run = server.bench(&[
        "-a",
        MARK,
        "-n",
        "20",
        "--csv",
        "--",
        "config",
        "set",
        "requirepass",
        MARK,
    ]);
    csv_run.assert_success();
    let csv_new = old.path().join("new.csv");
    fs::write(&csv_new, &csv_run.stdout).unwrap();
    unredacted_copy(&csv_new, &csv);
    let p = |p: &Path| p.display().to_string();
    let (new_json, old_json, csv) = (p(&runs.join("run1.json")), p(&old_json), p(&csv));
    let o = |name: &str| p(&out.path().join(name));
    for args in [
        vec!["compare", &new_json, &old_json],
        vec!["compare", &old_json, &old_json, "--format", "json"],
        vec!["compare", &old_json, &new_json, "--format", "markdown"],
        vec!["compare", &csv, &csv],
        vec![
            "compare",
            &old_json,
            &csv,
            "--format",
            "html",
            "-o",
            &o("c.html"),
        ],
        vec!["report", &old_json, "-o", &o("report.html")],
        vec!["report", &old_json, "-o", "-"],
    ] {
        let ran = run_respbench(&strings(&args), None);
        ran.assert_success();
        assert!(
            ran.stdout.contains("redacted") || args.contains(&"-o") && !args.contains(&"-"),
            "{kind:?} {args:?}: the redacted name is shown\n{ran:?}"
        );
        assert_no_marker(&format!("{kind:?} {args:?}"), &ran, out.path());
    }
    merge_shards(server, kind);
}

/// `merge`: shard records of a run whose command carries the password, as written and as an
/// older respbench wrote them; the merged file and merge's stderr.
fn merge_shards(server: &Server, kind: ServerKind) {
    let runs = TempDir::new();
    let old = TempDir::new();
    let out = TempDir::new();
    let json = runs.path().join("s-{shard}.json");
    for i in 0..2 {
        let shard = format!("{i}/2");
        let ran = server.bench(&[
            "-a",
            MARK,
            "--shard",
            &shard,
            "-n",
            "20",
            "-q",
            "--json",
            json.to_str().unwrap(),
            "--",
            "auth",
            "default",
            MARK,
        ]);
        ran.assert_success();
        assert_no_marker(&format!("{kind:?} shard {i}"), &ran, runs.path());
        let name = format!("s-{i}.json");
        unredacted_copy(&runs.path().join(&name), &old.path().join(&name));
    }
    for (dir, label) in [(runs.path(), "new"), (old.path(), "old")] {
        let merged = out.path().join(format!("{label}-merged.json"));
        let args = vec![
            "merge".to_string(),
            "-o".into(),
            merged.display().to_string(),
            dir.join("s-0.json").display().to_string(),
            dir.join("s-1.json").display().to_string(),
        ];
        let ran = run_respbench(&args, None);
        ran.assert_success();
        assert!(ran.stderr.contains("auth default <redacted>: "), "{ran:?}");
        assert_no_marker(
            &format!("{kind:?} merge of {label} shards"),
            &ran,
            out.path(),
        );
    }
}

#[test]
fn mixes_failures_and_sentinel_passwords_stay_hidden() {
    let server = Server::start_with(ServerOptions {
        password: Some(MARK.into()),
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = |name: &str| dir.path().join(name).display().to_string();
    // A --command mix, in both of its spellings.
    let auth_cmd = format!("--command=AUTH default {MARK}");
    let set_cmd = format!("config set requirepass {MARK}");
    let out = server.bench(&[
        "-a",
        MARK,
        "-n",
        "40",
        "--json",
        &json("mix.json"),
        "--html",
        &json("mix.html"),
        &auth_cmd,
        "--command",
        &set_cmd,
    ]);
    out.assert_success();
    let r: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(json("mix.json")).unwrap()).unwrap();
    assert_eq!(r["options"]["mix"][0]["command"], "AUTH default <redacted>");
    assert_eq!(
        r["options"]["mix"][1]["command"],
        "config set requirepass <redacted>"
    );
    assert_no_marker("--command mix", &out, dir.path());

    // A run whose connection fails still writes its record and messages: nothing in clear.
    let closed = free_port();
    let uri = format!("redis://default:{MARK}@127.0.0.1:{closed}");
    let failed = json("failed.json");
    let (u_attached, u_equals) = (format!("-u{uri}"), format!("-u={uri}"));
    for spelling in [vec!["-u", uri.as_str()], vec![&u_attached], vec![&u_equals]] {
        let mut args: Vec<&str> = vec!["--json", &failed, "-n", "10"];
        args.extend(spelling);
        args.extend(["--", "auth", MARK]);
        let out = run_respbench(&strings(&args), None);
        out.assert_code(1);
        assert_no_marker(&format!("failed run {args:?}"), &out, dir.path());
    }

    // Server errors that echo an argument (ACL SETUSER quotes a bad `#hash`; Redis lists an
    // unknown command's arguments, and a plain server does not know SENTINEL): the run fails
    // with the reply, the password hidden in it.
    let hash = format!("#{MARK}");
    let errors = json("errors.json");
    for cmd in [
        vec!["acl", "setuser", "bench-user", hash.as_str()],
        vec!["sentinel", "set", "m", "auth-pass", MARK],
    ] {
        let mut args = vec!["-a", MARK, "-n", "10", "--json", &errors, "--"];
        args.extend(cmd);
        let out = server.bench(&args);
        out.assert_code(1)
            .assert_stderr_contains("Error from server: ")
            .assert_stderr_contains("<redacted>");
        assert_no_marker(&format!("server error {args:?}"), &out, dir.path());
    }

    // --sentinel-password in both spellings (no Sentinel answers: the run fails, exit 1).
    let sentinel = format!("127.0.0.1:{}", free_port());
    let attached = format!("--sentinel-password={MARK}");
    let sentinel_json = json("sentinel.json");
    for spelling in [vec!["--sentinel-password", MARK], vec![attached.as_str()]] {
        let mut args: Vec<&str> = vec![
            "--json",
            &sentinel_json,
            "--sentinel",
            &sentinel,
            "--primary-name",
            "m",
            "-n",
            "10",
        ];
        args.extend(spelling);
        let out = run_respbench(&strings(&args), None);
        out.assert_code(1);
        assert_no_marker(&format!("sentinel run {args:?}"), &out, dir.path());
    }
}

#[test]
fn the_progress_line_on_a_terminal_shows_the_redacted_name() {
    let server = Server::start_with(ServerOptions {
        password: Some(MARK.into()),
        ..ServerOptions::default()
    });
    let port = server.port().to_string();
    let (text, code) = with_stderr_on_a_terminal(&[
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        &format!("-a{MARK}"),
        "--duration",
        "1",
        "-c",
        "2",
        "--",
        "auth",
        "default",
        MARK,
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("auth default <redacted>: rps="),
        "no progress line with the redacted name on the terminal:\n{text}"
    );
    assert!(
        !text.contains(MARK),
        "the password on the terminal:\n{text}"
    );
}

/// Runs respbench with stderr on a pseudo-terminal (so it draws the progress line) and stdout
/// on a pipe; returns everything both showed and the exit code.
fn with_stderr_on_a_terminal(args: &[&str]) -> (String, Option<i32>) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the integers given; the name, termios and
    // window size pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_respbench"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave));
    crate::harness::die_with_parent(&mut cmd);
    let mut child = cmd.spawn().expect("start respbench");
    // The parent's copy of the slave end goes with `cmd`: reads on the master end with EIO once
    // the child (the only holder left) exits.
    drop(cmd);
    let reader = thread::spawn(move || {
        let mut file = fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut file, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
        all
    });
    let mut status = None;
    for _ in 0..300 {
        if let Some(s) = child.try_wait().expect("wait for respbench") {
            status = Some(s);
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("respbench did not finish within 30 s");
    };
    let stdout = std::io::read_to_string(child.stdout.take().unwrap()).unwrap_or_default();
    let stderr = reader.join().unwrap_or_default();
    let text = format!("{stdout}\n{}", String::from_utf8_lossy(&stderr));
    (text, status.code())
}

/// An `AUTH` in a shape the syntax does not have (`AUTH PW x y`: which word is the password
/// cannot be told) and a `HELLO … AUTH` with a lone word: every argument is hidden, in every
/// output (issue 35: the password was printed and recorded in clear).
#[test]
fn malformed_auth_and_hello_hide_every_argument_in_every_output() {
    for server in [Server::start_valkey(), Server::start()] {
        for command in [
            vec!["auth", MARK, "x", "y"],
            vec!["HELLO", "3", "AUTH", MARK],
        ] {
            let dir = TempDir::new();
            let p = |name: &str| dir.path().join(name).display().to_string();
            let mut args = strings(&["-n", "200", "-c", "2"]);
            for (option, file) in [
                ("--json", "run.json"),
                ("--html", "run.html"),
                ("--journal", "run.partial"),
            ] {
                args.push(option.into());
                args.push(p(file));
            }
            args.push("--".into());
            args.extend(strings(&command));
            let out = server.bench(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(out.code.is_some(), "{out:?}");
            assert!(dir.path().join("run.json").exists(), "{out:?}");
            assert_no_marker(&command.join(" "), &out, dir.path());
        }
    }
}

/// A `--fuzz-restart` shell command's `--requirepass PW` (issue 35: written verbatim into the
/// record's command line and the journal) is hidden in every output.
#[test]
fn fuzz_restart_passwords_stay_hidden() {
    for server in [Server::start_valkey(), Server::start()] {
        let dir = TempDir::new();
        let p = |name: &str| dir.path().join(name).display().to_string();
        let restart = format!(
            "valkey-server --port {} --requirepass {MARK} --daemonize yes",
            server.port()
        );
        let out = server.bench(&[
            "--fuzz",
            "--fuzz-loglevel",
            "error",
            "-n",
            "300",
            "--fuzz-restart",
            &restart,
            "--json",
            &p("run.json"),
            "--journal",
            &p("run.partial"),
        ]);
        out.assert_success();
        let record = fs::read_to_string(dir.path().join("run.json")).unwrap();
        assert!(record.contains("--requirepass <redacted>"), "{record}");
        assert_no_marker("--fuzz-restart", &out, dir.path());
    }
}
