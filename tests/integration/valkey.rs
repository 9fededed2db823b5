//! The existing behaviour against Valkey 9.1 (`ServerKind::Valkey`), not only Debian's Redis 7.0:
//! the default suite and a custom command. The binary comes from `scripts/ensure-valkey.sh`; a
//! run without it fails with a message saying so.

use crate::harness::{SUITE_TITLES, Server};

#[test]
fn default_suite_runs_against_valkey() {
    let server = Server::start_valkey();
    let mut c = server.client();
    let info = c.info("server");
    assert!(
        info.contains("server_name:valkey") && info.contains("valkey_version:9.1."),
        "not Valkey 9.1:\n{info}"
    );
    let out = server.bench(&["-n", "500", "-c", "5", "-q"]);
    out.assert_success().assert_no_progress_line();
    let titles: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split_once(": ").map_or(l, |(t, _)| t))
        .collect();
    assert_eq!(titles, SUITE_TITLES, "{}", out.stdout);
    // The tests really ran on the server (spot checks across the suite, FCALL included: Valkey
    // loads the suite's Lua library as Redis does).
    for cmd in ["set", "get", "lrange", "mset", "xadd", "fcall"] {
        assert!(c.calls(cmd) >= 500, "{cmd}: {} calls", c.calls(cmd));
    }
}

#[test]
fn custom_command_runs_against_valkey() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "-n",
        "300",
        "-c",
        "3",
        "-r",
        "1000",
        "-q",
        "--",
        "hset",
        "h:__rand_int__",
        "f",
        "v",
    ]);
    out.assert_success();
    out.assert_stdout_contains("hset h:__rand_int__ f v: ");
    let mut c = server.client();
    assert_eq!(c.calls("hset"), 300);
    assert!(c.dbsize() > 0, "no hash was written");
}
