//! What a replay does with each command of a trace before it is scheduled: skip it (destructive,
//! admin, AUTH), rewrite it (`--key-prefix`, HELLO's AUTH part), or send it as it is.
//!
//! Why a fixed list and not the server's `COMMAND INFO` flags: `--dry-run` answers without a
//! server, and "admin"/"dangerous" flags cover harmless reads (`CONFIG GET`, `CLIENT LIST`)
//! while missing what matters for a replay (a `CLIENT KILL` of the original connections).

/// Commands skipped unless `--allow` names them: `(command, subcommand)`, `None` = every form.
const SKIPPED: &[(&str, Option<&str>)] = &[
    ("FLUSHALL", None),
    ("FLUSHDB", None),
    ("SHUTDOWN", None),
    ("DEBUG", None),
    ("REPLICAOF", None),
    ("SLAVEOF", None),
    ("MONITOR", None),
    ("SYNC", None),
    ("PSYNC", None),
    ("SAVE", None),
    ("BGSAVE", None),
    ("BGREWRITEAOF", None),
    ("FAILOVER", None),
    ("SWAPDB", None),
    ("MIGRATE", None),
    ("MODULE", None),
    ("QUIT", None),
    ("CONFIG", Some("SET")),
    ("CONFIG", Some("RESETSTAT")),
    ("CONFIG", Some("REWRITE")),
    ("ACL", Some("SETUSER")),
    ("ACL", Some("DELUSER")),
    ("ACL", Some("LOAD")),
    ("ACL", Some("SAVE")),
    ("CLIENT", Some("KILL")),
    ("CLIENT", Some("PAUSE")),
    ("SCRIPT", Some("FLUSH")),
    ("SCRIPT", Some("KILL")),
    ("FUNCTION", Some("FLUSH")),
    ("FUNCTION", Some("DELETE")),
    ("FUNCTION", Some("KILL")),
    ("FUNCTION", Some("RESTORE")),
    ("CLUSTER", Some("RESET")),
    ("CLUSTER", Some("FAILOVER")),
    ("CLUSTER", Some("FORGET")),
    ("CLUSTER", Some("MEET")),
    ("CLUSTER", Some("ADDSLOTS")),
    ("CLUSTER", Some("DELSLOTS")),
    ("CLUSTER", Some("SETSLOT")),
    ("CLUSTER", Some("REPLICATE")),
    ("LATENCY", Some("RESET")),
    ("SLOWLOG", Some("RESET")),
];

/// The name a command is counted under: upper case, at most 32 bytes.
pub fn name_of(args: &[Vec<u8>]) -> String {
    let first = args.first().map(|a| a.as_slice()).unwrap_or(b"");
    let cut = &first[..first.len().min(32)];
    String::from_utf8_lossy(cut).to_ascii_uppercase()
}

/// Why a command is not sent, or `None` when it is. `allow` holds `--allow`'s upper-case
/// names (`FLUSHALL`, `CONFIG SET` or `CONFIG` for every form).
pub fn skip_reason(args: &[Vec<u8>], allow: &[String]) -> Option<String> {
    let name = name_of(args);
    if name.is_empty() {
        return Some("empty".into());
    }
    if name == "AUTH" {
        // The trace has no password (it is redacted); the target's own credentials are used.
        return Some("AUTH".into());
    }
    let sub = args
        .get(1)
        .map(|s| String::from_utf8_lossy(s).to_ascii_uppercase());
    let hit = SKIPPED.iter().find(|(c, s)| {
        *c == name
            && match s {
                None => true,
                Some(s) => sub.as_deref() == Some(*s),
            }
    })?;
    let full = match hit.1 {
        Some(s) => format!("{} {s}", hit.0),
        None => hit.0.to_string(),
    };
    let allowed = allow.iter().any(|a| *a == full || *a == hit.0);
    (!allowed).then_some(full)
}

/// `HELLO` without its `AUTH user pass` part (the trace's is redacted; the connection is
/// already authenticated with the target's credentials). Other commands unchanged.
pub fn strip_hello_auth(args: &mut Vec<Vec<u8>>) {
    if !args
        .first()
        .is_some_and(|a| a.eq_ignore_ascii_case(b"HELLO"))
    {
        return;
    }
    if let Some(i) = args.iter().position(|a| a.eq_ignore_ascii_case(b"AUTH"))
        && i > 0
    {
        let end = (i + 3).min(args.len());
        args.drain(i..end);
    }
}

/// The database a `SELECT` switches to.
pub fn selected_db(args: &[Vec<u8>]) -> Option<u32> {
    if args.len() == 2 && args[0].eq_ignore_ascii_case(b"SELECT") {
        std::str::from_utf8(&args[1]).ok()?.parse().ok()
    } else {
        None
    }
}

/// Where a command's keys are, for `--key-prefix`: which argument indexes are keys.
/// Covers the common forms (one key first, every argument a key, key-value pairs, `numkeys`
/// commands); a command not listed is taken to have its key first when it has arguments,
/// which is true of most data commands. Commands without keys are listed as such.
fn key_positions(args: &[Vec<u8>], out: &mut Vec<usize>) {
    out.clear();
    let n = args.len();
    let name = name_of(args);
    let all = |out: &mut Vec<usize>, from: usize, to: usize| out.extend(from..to);
    match name.as_str() {
        "PING" | "ECHO" | "SELECT" | "MULTI" | "EXEC" | "DISCARD" | "UNWATCH" | "INFO"
        | "CONFIG" | "CLIENT" | "HELLO" | "DBSIZE" | "TIME" | "COMMAND" | "SCRIPT" | "FUNCTION"
        | "CLUSTER" | "PUBLISH" | "SUBSCRIBE" | "PSUBSCRIBE" | "UNSUBSCRIBE" | "PUNSUBSCRIBE"
        | "SPUBLISH" | "ACL" | "SLOWLOG" | "LATENCY" | "MEMORY" | "SCAN" | "RANDOMKEY" | "KEYS"
        | "LASTSAVE" | "ROLE" | "WAIT" | "READONLY" | "READWRITE" | "RESET" => {}
        "DEL" | "UNLINK" | "EXISTS" | "MGET" | "TOUCH" | "WATCH" | "SINTER" | "SUNION"
        | "SDIFF" | "PFCOUNT" | "PFMERGE" | "SINTERSTORE" | "SUNIONSTORE" | "SDIFFSTORE" => {
            all(out, 1, n)
        }
        "MSET" | "MSETNX" => out.extend((1..n).step_by(2)),
        "RENAME"
        | "RENAMENX"
        | "SMOVE"
        | "RPOPLPUSH"
        | "LMOVE"
        | "BLMOVE"
        | "BRPOPLPUSH"
        | "COPY"
        | "GEORADIUSBYMEMBER_STORE" => out.extend([1, 2].into_iter().filter(|&i| i < n)),
        "BLPOP" | "BRPOP" | "BZPOPMIN" | "BZPOPMAX" => all(out, 1, n.saturating_sub(1)),
        "EVAL" | "EVALSHA" | "EVAL_RO" | "EVALSHA_RO" | "FCALL" | "FCALL_RO" | "ZUNIONSTORE"
        | "ZINTERSTORE" | "ZDIFFSTORE" => {
            // `numkeys` is argument 2 and the keys follow it; the Z…STORE forms also have a
            // destination first.
            let (first, count_at) = (3, 2);
            if name.starts_with('Z') && n > 1 {
                out.push(1);
            }
            let keys = args
                .get(count_at)
                .and_then(|k| std::str::from_utf8(k).ok()?.parse::<usize>().ok())
                .unwrap_or(0);
            all(out, first, (first + keys).min(n));
        }
        _ if n > 1 => out.push(1),
        _ => {}
    }
}

/// Puts `prefix` before every key of the command (see `key_positions`); `scratch` is reused.
pub fn prefix_keys(args: &mut [Vec<u8>], prefix: &[u8], scratch: &mut Vec<usize>) {
    key_positions(args, scratch);
    for &i in scratch.iter() {
        if let Some(k) = args.get_mut(i) {
            k.splice(0..0, prefix.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn destructive_commands_are_skipped_unless_allowed() {
        assert_eq!(
            skip_reason(&cmd(&["flushall"]), &[]).as_deref(),
            Some("FLUSHALL")
        );
        assert_eq!(
            skip_reason(&cmd(&["config", "set", "x", "y"]), &[]).as_deref(),
            Some("CONFIG SET")
        );
        assert_eq!(skip_reason(&cmd(&["config", "get", "x"]), &[]), None);
        assert_eq!(skip_reason(&cmd(&["SET", "k", "v"]), &[]), None);
        assert_eq!(
            skip_reason(&cmd(&["AUTH", "x"]), &[]).as_deref(),
            Some("AUTH")
        );
        let allow = vec!["FLUSHALL".to_string(), "CONFIG".to_string()];
        assert_eq!(skip_reason(&cmd(&["FLUSHALL"]), &allow), None);
        assert_eq!(
            skip_reason(&cmd(&["CONFIG", "SET", "a", "b"]), &allow),
            None
        );
        assert!(skip_reason(&cmd(&["FLUSHDB"]), &allow).is_some());
    }

    #[test]
    fn keys_get_the_prefix_and_nothing_else_does() {
        let mut s = Vec::new();
        let mut c = cmd(&["MSET", "a", "1", "b", "2"]);
        prefix_keys(&mut c, b"p:", &mut s);
        assert_eq!(c, cmd(&["MSET", "p:a", "1", "p:b", "2"]));
        let mut c = cmd(&["EVAL", "return 1", "2", "k1", "k2", "arg"]);
        prefix_keys(&mut c, b"p:", &mut s);
        assert_eq!(c, cmd(&["EVAL", "return 1", "2", "p:k1", "p:k2", "arg"]));
        let mut c = cmd(&["BLPOP", "a", "b", "0"]);
        prefix_keys(&mut c, b"p:", &mut s);
        assert_eq!(c, cmd(&["BLPOP", "p:a", "p:b", "0"]));
        let mut c = cmd(&["SELECT", "1"]);
        prefix_keys(&mut c, b"p:", &mut s);
        assert_eq!(c, cmd(&["SELECT", "1"]));
        let mut c = cmd(&["HSET", "h", "f", "v"]);
        prefix_keys(&mut c, b"p:", &mut s);
        assert_eq!(c, cmd(&["HSET", "p:h", "f", "v"]));
    }

    #[test]
    fn hello_loses_its_auth_and_select_is_read() {
        let mut c = cmd(&["HELLO", "3", "AUTH", "u", "(redacted)", "SETNAME", "x"]);
        strip_hello_auth(&mut c);
        assert_eq!(c, cmd(&["HELLO", "3", "SETNAME", "x"]));
        assert_eq!(selected_db(&cmd(&["select", "3"])), Some(3));
        assert_eq!(selected_db(&cmd(&["GET", "3"])), None);
    }
}
