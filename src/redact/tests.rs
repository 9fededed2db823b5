use super::*;

const PW: &str = "s3cret";

fn redacted(args: &[&str]) -> Vec<String> {
    let mut argv = vec!["respbench"];
    argv.extend(args);
    command_line(&argv)[1..].to_vec()
}

/// `words` shown as one line by [`command`] and, typed as one line, by [`command_text`]: both
/// must agree.
fn shown(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let joined = command(&words);
    assert_eq!(
        joined,
        command_text(line),
        "command and command_text disagree"
    );
    joined
}

fn r(s: &str) -> String {
    s.replace("PW", REDACTED)
}

#[test]
fn dash_a_in_every_spelling() {
    assert_eq!(redacted(&["-a", PW, "-q"]), ["-a", REDACTED, "-q"]);
    assert_eq!(redacted(&["-as3cret"]), [format!("-a{REDACTED}")]);
    assert_eq!(redacted(&["-a=s3cret"]), [format!("-a={REDACTED}")]);
    assert_eq!(redacted(&["-qa", PW]), ["-qa", REDACTED]);
    assert_eq!(redacted(&["-qas3cret"]), [format!("-qa{REDACTED}")]);
    // A password that looks like an option is still the password.
    assert_eq!(
        redacted(&["-a", "-q", "-n", "5"]),
        ["-a", REDACTED, "-n", "5"]
    );
}

#[test]
fn long_secret_options_in_both_spellings() {
    assert_eq!(
        redacted(&["--sentinel-password=x"]),
        [format!("--sentinel-password={REDACTED}")]
    );
    assert_eq!(
        redacted(&["--sentinel-password", "x"]),
        ["--sentinel-password", REDACTED]
    );
}

#[test]
fn uri_in_every_spelling() {
    let u = "redis://bob:s3cret@h:6380/2";
    let clean = format!("redis://bob:{REDACTED}@h:6380/2");
    assert_eq!(redacted(&["-u", u]), ["-u", clean.as_str()]);
    assert_eq!(redacted(&[&format!("-u{u}")]), [format!("-u{clean}")]);
    assert_eq!(redacted(&[&format!("-u={u}")]), [format!("-u={clean}")]);
    assert_eq!(redacted(&[&format!("-qu={u}")]), [format!("-qu={clean}")]);
    assert_eq!(redacted(&["-qu", u]), ["-qu", clean.as_str()]);
    // A value -u cannot read is hidden whole when it may hold a password.
    assert_eq!(redacted(&["-u", "redis:/bob:s3cret@h"]), ["-u", REDACTED]);
    assert_eq!(redacted(&["-u", "redis://h:1"]), ["-u", "redis://h:1"]);
    assert_eq!(
        redacted(&["-u", "redis://bob:@h"]),
        ["-u", "redis://bob:@h"]
    );
}

#[test]
fn uri_passwords() {
    let u = |s: &str| uri(s);
    assert_eq!(
        u("rediss://:s3cret@h").unwrap(),
        format!("rediss://:{REDACTED}@h")
    );
    assert_eq!(
        u("valkey://s3cret@h").unwrap(),
        format!("valkey://{REDACTED}@h")
    );
    assert_eq!(
        u("VALKEYS://u:p@ss@[::1]:1").unwrap(),
        format!("VALKEYS://u:{REDACTED}@[::1]:1"),
        "the last @ ends the userinfo"
    );
    assert_eq!(u("redis://h:6379"), None);
    assert_eq!(u("redis://bob:@h"), None);
    assert_eq!(u("http://u:p@h"), None);
}

#[test]
fn other_values_and_the_custom_command_stay() {
    assert_eq!(
        redacted(&["-n", "-a", "--user", "bob", "-c50", "set", "-a", "x"]),
        ["-n", "-a", "--user", "bob", "-c50", "set", "-a", "x"],
        "-n takes -a as its value; after `set` it is the command"
    );
    assert_eq!(redacted(&["--", "-a", "x"]), ["--", "-a", "x"]);
    assert_eq!(redacted(&["-a"]), ["-a"], "no value to hide");
    let argv = ["/usr/bin/respbench", "-q"];
    assert_eq!(command_line(&argv), ["/usr/bin/respbench", "-q"]);
}

#[test]
fn the_custom_command_and_command_option_on_the_command_line() {
    assert_eq!(
        redacted(&["-q", "--", "auth", PW]),
        ["-q", "--", "auth", REDACTED]
    );
    assert_eq!(
        redacted(&["-n", "5", "AUTH", "alice", PW]),
        ["-n", "5", "AUTH", "alice", REDACTED]
    );
    assert_eq!(
        redacted(&["--command", "AUTH alice s3cret"]),
        ["--command", &r("AUTH alice PW")]
    );
    assert_eq!(
        redacted(&["--command=AUTH  alice s3cret"]),
        [r("--command=AUTH  alice PW")]
    );
}

#[test]
fn auth_with_and_without_user() {
    assert_eq!(shown("auth PW"), r("auth PW"));
    assert_eq!(shown("AUTH alice PW"), r("AUTH alice PW"));
    assert_eq!(shown("auth"), "auth");
    assert_eq!(
        shown("get auth"),
        "get auth",
        "only the command name counts"
    );
}

#[test]
fn hello_auth_anywhere_in_its_options() {
    assert_eq!(shown("hello 3 auth alice PW"), r("hello 3 auth alice PW"));
    assert_eq!(
        shown("HELLO 3 SETNAME x AUTH auth PW"),
        r("HELLO 3 SETNAME x AUTH auth PW"),
        "a user named auth"
    );
    assert_eq!(shown("hello 3"), "hello 3");
}

/// A shape the syntax does not have: every argument after the command is hidden, since which
/// one is the password cannot be told (issue 35: `AUTH PW x y` showed PW).
#[test]
fn malformed_auth_and_hello_auth_hide_every_argument() {
    assert_eq!(
        shown("auth PW x y"),
        "auth <redacted> <redacted> <redacted>"
    );
    assert_eq!(
        shown("hello 3 auth PW"),
        "hello <redacted> <redacted> <redacted>"
    );
    assert_eq!(
        shown("HELLO 3 AUTH PW x y"),
        "HELLO <redacted> <redacted> <redacted> <redacted> <redacted>"
    );
    assert_eq!(
        redacted(&["--", "auth", PW, "x", "y"]),
        ["--", "auth", REDACTED, REDACTED, REDACTED]
    );
}

#[test]
fn fuzz_restart_shell_command() {
    assert_eq!(
        redacted(&[
            "--fuzz",
            "--fuzz-restart",
            "valkey-server --port 1 --requirepass s3cret"
        ]),
        [
            "--fuzz",
            "--fuzz-restart",
            "valkey-server --port 1 --requirepass <redacted>"
        ]
    );
    assert_eq!(
        shell_text("REDISCLI_AUTH=s3cret redis-server --masterauth=s3cret  -a s3cret --port 1"),
        "REDISCLI_AUTH=<redacted> redis-server --masterauth=<redacted>  -a <redacted> --port 1"
    );
    assert_eq!(shell_text("redis-server --port 1"), "redis-server --port 1");
}

#[test]
fn config_set_password_parameters_among_pairs() {
    for param in ["requirepass", "masterauth", "primaryauth", "MasterAuth"] {
        let line = format!("config set {param} PW");
        assert_eq!(shown(&line), r(&line));
    }
    assert_eq!(
        shown("CONFIG SET maxmemory 1gb requirepass PW appendonly no"),
        r("CONFIG SET maxmemory 1gb requirepass PW appendonly no")
    );
    assert_eq!(shown("config get requirepass"), "config get requirepass");
    assert_eq!(
        shown("config set maxmemory requirepass"),
        "config set maxmemory requirepass",
        "a value, not a parameter"
    );
}

#[test]
fn acl_setuser_passwords_and_hashes() {
    assert_eq!(
        shown("acl setuser u on >PW <PW #PW !PW ~* +@all"),
        r("acl setuser u on >PW <PW #PW !PW ~* +@all")
    );
    assert_eq!(
        shown("acl setuser >u on"),
        "acl setuser >u on",
        "the user name"
    );
}

#[test]
fn migrate_auth_and_auth2() {
    assert_eq!(
        shown("MIGRATE h 6379 k 0 5000 COPY AUTH PW"),
        r("MIGRATE h 6379 k 0 5000 COPY AUTH PW")
    );
    assert_eq!(
        shown("migrate h 6379 \"\" 0 5000 auth2 u PW keys auth b"),
        r("migrate h 6379 \"\" 0 5000 auth2 u PW keys auth b")
    );
    assert_eq!(
        shown("migrate h 6379 auth 0 5000"),
        "migrate h 6379 auth 0 5000",
        "a key named auth"
    );
}

#[test]
fn sentinel_passwords() {
    assert_eq!(
        shown("sentinel set mymaster auth-pass PW"),
        r("sentinel set mymaster auth-pass PW")
    );
    assert_eq!(
        shown("SENTINEL CONFIG SET sentinel-pass PW"),
        r("SENTINEL CONFIG SET sentinel-pass PW")
    );
}

#[test]
fn sequences_and_repeat_counts() {
    assert_eq!(
        shown("multi ; auth PW ; 3 auth alice PW ; exec"),
        r("multi ; auth PW ; 3 auth alice PW ; exec")
    );
    assert_eq!(shown("set a b ;"), "set a b ;");
    assert_eq!(
        shown("0 auth x"),
        "0 auth x",
        "0 is no repeat count: the command is 0"
    );
}

#[test]
fn command_text_keeps_spacing_and_is_idempotent() {
    assert_eq!(
        command_text("  AUTH\talice   s3cret "),
        format!("  AUTH\talice   {REDACTED} ")
    );
    let once = command_text("auth s3cret");
    assert_eq!(command_text(&once), once);
}

#[test]
fn command_text_hides_a_quoted_secret_whole() {
    // `--command` reads quotes as memtier does: the password is one argument, quotes and all.
    assert_eq!(
        command_text(r#"AUTH alice "my s3cret""#),
        format!("AUTH alice {REDACTED}")
    );
    assert_eq!(
        command_text(r#"ACL SETUSER bob on '>p w' ~*"#),
        format!("ACL SETUSER bob on >{REDACTED} ~*")
    );
    let once = command_text(r#"auth "a b" ; get k"#);
    assert_eq!(once, format!("auth {REDACTED} ; get k"));
    assert_eq!(command_text(&once), once);
    // Not quoting as --command reads it (a test's name from a file): by whitespace.
    assert_eq!(command_text(r#"AUTH "pw"x"#), format!("AUTH {REDACTED}"));
}

#[test]
fn a_record_read_back_is_redacted_everywhere_it_shows_a_command() {
    let mut doc = serde_json::json!({
        "command_line": ["respbench", "-u=redis://u:s3cret@h", "--", "auth", "s3cret"],
        "tests": [{"name": "auth s3cret"}, {"name": "SET"}],
        "options": {"mix": [{"name": "AUTH", "command": "AUTH alice s3cret"}]},
        "shards": [{"tests": [{"name": "auth s3cret"}]}],
        "sentinel": {"switches": [{"test": "auth s3cret"}, {"test": null}]},
    });
    record(&mut doc);
    let text = doc.to_string();
    assert!(!text.contains(PW), "{text}");
    assert_eq!(doc["tests"][1]["name"], "SET");
    assert_eq!(doc["command_line"][3], "auth");
    assert_eq!(doc["command_line"][4], REDACTED);
    let again = {
        let mut d = doc.clone();
        record(&mut d);
        d
    };
    assert_eq!(again, doc, "redacting twice changes nothing");
}

#[test]
fn secret_values_and_scrubbing_a_reply_that_echoes_them() {
    let args = [
        "acl",
        "setuser",
        "u",
        ">pw1",
        "#abc",
        ";",
        "auth",
        "longer-pw1",
    ];
    let values = secret_values(&args);
    assert_eq!(
        values,
        [b"pw1".to_vec(), b"abc".to_vec(), b"longer-pw1".to_vec()]
    );
    assert_eq!(
        scrub(
            "ERR unknown command 'x', with args beginning with: 'longer-pw1' 'pw1'",
            &values
        ),
        format!("ERR unknown command 'x', with args beginning with: '{REDACTED}' '{REDACTED}'"),
        "the longest first: no half-hidden secret"
    );
    assert_eq!(
        scrub("OK", &[Vec::new()]),
        "OK",
        "an empty secret hides nothing"
    );
}

#[test]
fn memtier_command_lines_hide_authenticate_and_uri_passwords() {
    let line = command_line(&[
        "respbench",
        "memtier",
        "--authenticate=alice:s3cret",
        "-a",
        "pw2",
        "--uri",
        "redis://u:pw3@h:6379/0",
        "-c",
        "5",
    ]);
    let text = line.join(" ");
    for secret in ["s3cret", "pw2", "pw3"] {
        assert!(!text.contains(secret), "{text}");
    }
    assert!(text.contains("-c 5"), "{text}");
    let line = command_line(&["/usr/local/bin/memtier_benchmark", "--authenticate", "pw4"]);
    assert_eq!(line[2], REDACTED);
}

#[test]
fn an_empty_command_line_stays_empty() {
    // A record built without one (a journal written by a test): nothing to hide, no panic.
    assert!(command_line::<&str>(&[]).is_empty());
}
