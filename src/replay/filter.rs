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

/// The most bytes of a command's name that count.
const NAME_BYTES: usize = 32;

/// A command's name as it is counted: upper case, at most [`NAME_BYTES`] bytes, on the stack.
/// Why not a `String`: every entry of a trace is named (and checked against [`SKIPPED`]) on
/// its way to a connection, and an allocation per entry was a large share of a replayed
/// command's cost (`docs/performance.md`, "Each mode beside the engine").
pub struct Name {
    bytes: [u8; NAME_BYTES],
    len: usize,
}

impl Name {
    pub fn of(args: &[Vec<u8>]) -> Name {
        let first = args.first().map_or(&[][..], |a| a.as_slice());
        let len = first.len().min(NAME_BYTES);
        let mut bytes = [0; NAME_BYTES];
        bytes[..len].copy_from_slice(&first[..len]);
        bytes[..len].make_ascii_uppercase();
        Name { bytes, len }
    }

    /// The name as text; `None` when its bytes are not UTF-8 ([`name_of`] says it lossily).
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes[..self.len]).ok()
    }
}

/// The name a command is counted under: upper case, at most 32 bytes.
pub fn name_of(args: &[Vec<u8>]) -> String {
    let name = Name::of(args);
    match name.as_str() {
        Some(text) => text.to_string(),
        None => String::from_utf8_lossy(&name.bytes[..name.len]).into_owned(),
    }
}

/// Why a command is not sent, or `None` when it is. `allow` holds `--allow`'s upper-case
/// names (`FLUSHALL`, `CONFIG SET` or `CONFIG` for every form).
pub fn skip_reason(args: &[Vec<u8>], allow: &[String]) -> Option<String> {
    let name = Name::of(args);
    let name = &name.bytes[..name.len];
    if name.is_empty() {
        return Some("empty".into());
    }
    if name == b"AUTH" {
        // The trace has no password (it is redacted); the target's own credentials are used.
        return Some("AUTH".into());
    }
    let sub = args.get(1).map(Vec::as_slice);
    let hit = SKIPPED.iter().find(|(c, s)| {
        c.as_bytes() == name
            && match s {
                None => true,
                Some(s) => sub.is_some_and(|sub| sub.eq_ignore_ascii_case(s.as_bytes())),
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
    let name = Name::of(args);
    let name = name.as_str().unwrap_or("");
    let all = |out: &mut Vec<usize>, from: usize, to: usize| out.extend(from..to);
    match name {
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
        assert_eq!(skip_reason(&cmd(&[""]), &[]).as_deref(), Some("empty"));
        assert_eq!(skip_reason(&cmd(&["CONFIG"]), &[]), None);
    }

    #[test]
    fn a_name_is_upper_case_and_cut_at_32_bytes() {
        assert_eq!(name_of(&cmd(&["get", "k"])), "GET");
        assert_eq!(name_of(&cmd(&[&"x".repeat(40)])), "X".repeat(32));
        assert_eq!(name_of(&[]), "");
        // Cut inside a character: said lossily, as before.
        let mut odd = vec![b'a'; 31];
        odd.extend("é".as_bytes());
        assert_eq!(name_of(&[odd]), format!("{}\u{fffd}", "A".repeat(31)));
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
