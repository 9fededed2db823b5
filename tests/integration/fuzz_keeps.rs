//! The fuzzer keeps what it did not make (issue 35): a function library, a cached script and a
//! key in db 9, loaded before 30,000 fuzzed commands in the default modes, are all there
//! afterwards, on Valkey 9.1 and Redis 7.0 (`FUNCTION FLUSH`/`DELETE`/`RESTORE`, `SCRIPT FLUSH`
//! and `SWAPDB` used to remove them; `fuzz::exclude` now leaves them out, by its list and by the
//! server's own command facts). And `CONFIG RESETSTAT` no longer reaches the server, so the
//! summary's errorstats are the run's.

use std::time::Duration;

use resp::Value;

use crate::harness::Server;

const LIBRARY: &str =
    "#!lua name=userlib\nredis.register_function('userfn', function() return 1 end)";

fn keeps(server: Server) {
    let mut c = server.client();
    c.ok(&["FUNCTION", "LOAD", LIBRARY]);
    let sha = match c.ok(&["SCRIPT", "LOAD", "return 'user script'"]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        other => panic!("SCRIPT LOAD: {other:?}"),
    };
    c.ok(&["SELECT", "9"]);
    c.ok(&["SET", "user:precious", "kept"]);
    let run = server.spawn_bench(&[
        "--fuzz",
        "--fuzz-loglevel",
        "error",
        "-c",
        "4",
        "-n",
        "30000",
        "--seed",
        "35",
    ]);
    // Blocking commands with random timeouts make 30,000 take a while (about 60 s on Redis 7.0
    // in a debug build); the bound is for a loaded machine.
    let out = run.finish(Duration::from_secs(400));
    out.assert_success()
        .assert_stdout_contains("Server: survived");
    let mut c = server.client();
    assert_eq!(
        c.cmd(&["FCALL", "userfn", "0"]),
        Value::Integer(1),
        "the function library is gone"
    );
    assert_eq!(
        c.ok(&["SCRIPT", "EXISTS", &sha]),
        Value::Array(vec![Value::Integer(1)]),
        "the cached script is gone"
    );
    c.ok(&["SELECT", "9"]);
    assert_eq!(c.bulk(&["GET", "user:precious"]), Some(b"kept".to_vec()));
    let stats = c.info("commandstats");
    for never in [
        "cmdstat_function|flush",
        "cmdstat_swapdb",
        "cmdstat_config|resetstat",
    ] {
        assert!(!stats.contains(never), "{never} was sent");
    }
}

#[test]
fn fuzz_keeps_the_users_functions_scripts_and_databases_valkey() {
    keeps(Server::start_valkey());
}

#[test]
fn fuzz_keeps_the_users_functions_scripts_and_databases_redis() {
    keeps(Server::start());
}
