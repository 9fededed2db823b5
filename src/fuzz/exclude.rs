//! What the fuzzer never sends unless asked (`--fuzz-include`): commands that end the test rather
//! than find a bug (stopping the server, crashing it on purpose, replication and failover, wiping
//! or moving the user's data, connection modes the client would never leave), and the server
//! parameters `CONFIG SET` must not touch because they would lock the watch out or end the test.
//! One list, printed by `docs/fuzz.md` and checked by the tests.
//!
//! The fuzzer keeps what it did not make: beyond the list, a command is left out when the
//! server's own `COMMAND` facts say it replaces or deletes what the user loaded ([`derived`]:
//! functions, whole databases, the server's statistics), so a server's new command of that kind
//! is left out without a release of respbench. The list names the known ones too, as a floor for
//! a server whose flags say less (`SCRIPT FLUSH` has no `write` flag).

use super::table::CommandSpec;

/// Commands (and subcommands, `container|sub`) never sent by default, with why.
pub const EXCLUDED: &[(&str, &str)] = &[
    ("shutdown", "stops the server"),
    (
        "debug",
        "crashes, sleeps and corrupts the server on purpose",
    ),
    (
        "pfselftest",
        "a self-test that blocks the server for most of a second",
    ),
    ("pfdebug", "HyperLogLog debugging"),
    (
        "monitor",
        "turns the connection into a stream of every command",
    ),
    (
        "subscribe",
        "subscriber mode: the connection stops taking commands",
    ),
    ("psubscribe", "subscriber mode"),
    ("ssubscribe", "subscriber mode"),
    ("sync", "a replication stream"),
    ("psync", "a replication stream"),
    ("replconf", "the replication handshake"),
    ("replicaof", "turns the server into a replica"),
    ("slaveof", "turns the server into a replica"),
    ("failover", "hands the primary role away"),
    ("cluster|reset", "resets the cluster node"),
    ("cluster|failover", "a cluster failover"),
    ("cluster|forget", "drops cluster nodes"),
    ("cluster|meet", "joins other hosts"),
    ("cluster|replicate", "turns the node into a replica"),
    ("cluster|addslots", "changes slot ownership"),
    ("cluster|addslotsrange", "changes slot ownership"),
    ("cluster|delslots", "changes slot ownership"),
    ("cluster|delslotsrange", "changes slot ownership"),
    ("cluster|flushslots", "changes slot ownership"),
    ("cluster|setslot", "changes slot ownership"),
    (
        "flushall",
        "wipes the user's data (and FLUSHALL ASYNC storms)",
    ),
    ("flushdb", "wipes the user's data"),
    ("swapdb", "swaps the user's databases"),
    ("function|flush", "deletes the user's functions"),
    ("function|delete", "deletes the user's functions"),
    ("function|restore", "replaces the user's functions"),
    ("script|flush", "deletes the user's cached scripts"),
    (
        "config|resetstat",
        "resets the server's statistics (the summary's errorstats among them)",
    ),
    ("latency|reset", "resets the server's latency history"),
    ("slowlog|reset", "resets the server's slow log"),
    ("commandlog|reset", "resets the server's command log"),
    ("migrate", "connects to other hosts"),
    ("client|kill", "may kill the watch connection"),
    ("client|pause", "looks like a hang"),
    ("client|reply", "OFF leaves the client waiting for replies"),
    ("wait", "blocks until replicas acknowledge"),
    ("waitaof", "blocks until replicas acknowledge"),
    ("quit", "closes the connection"),
    (
        "script|debug",
        "SYNC blocks the whole server during a debugging session: a hang by design",
    ),
    (
        "config|set",
        "only through --fuzz-mode config-commands, with its own never-touch list",
    ),
    ("config|rewrite", "rewrites the user's configuration file"),
    ("acl|setuser", "may lock the default user out"),
    ("acl|deluser", "may lock the default user out"),
    ("acl|load", "may lock the default user out"),
    ("module|load", "loads code from a path"),
    ("module|loadex", "loads code from a path"),
    ("module|unload", "removes commands under the test"),
];

/// Server parameters `CONFIG SET` never touches, with why (prefixes end with `*`).
pub const NEVER_SET: &[(&str, &str)] = &[
    ("requirepass", "locks the watch out"),
    ("masterauth", "replication credentials"),
    ("primaryauth", "replication credentials"),
    ("masteruser", "replication credentials"),
    ("primaryuser", "replication credentials"),
    ("maxclients", "locks the watch out"),
    ("maxmemory-clients", "evicts clients, the watch among them"),
    ("timeout", "closes idle connections"),
    ("bind", "moves the listener"),
    ("bind-source-addr", "moves the listener"),
    ("port", "moves the listener"),
    ("tls-*", "changes how clients connect"),
    ("protected-mode", "refuses clients"),
    ("rename-command", "hides commands"),
    ("unixsocket*", "moves the listener"),
    ("dir", "writes files elsewhere"),
    ("dbfilename", "writes files elsewhere"),
    ("logfile", "writes files elsewhere"),
    ("save", "snapshots the user's data"),
    ("appendonly", "rewrites files on disk"),
    ("replicaof", "turns the server into a replica"),
    ("min-replicas-to-write", "refuses every write"),
    ("min-slaves-to-write", "refuses every write"),
    ("shutdown-on-sigint", "changes how the server stops"),
    ("shutdown-on-sigterm", "changes how the server stops"),
    ("enable-*", "protected configuration"),
    ("aclfile", "loads users from a file"),
    ("cluster-*", "cluster membership and failover"),
];

/// Why the server's own facts about `c` (`COMMAND`'s flags, ACL categories and key positions)
/// exclude it by default, if they do: it writes the server's functions (`@scripting` and
/// `write`: `FUNCTION LOAD`/`DELETE`/`FLUSH`/`RESTORE`), writes whole databases rather than keys
/// (`@dangerous`, `write`, no key: `FLUSHALL`, `FLUSHDB`, `SWAPDB`), or resets an `@admin`
/// command's state (a `RESET…` subcommand: `CONFIG RESETSTAT`, `SLOWLOG RESET`).
pub fn derived(c: &CommandSpec) -> Option<&'static str> {
    let sub = c.name.rsplit('|').next().unwrap_or("");
    if c.in_category("@scripting") && c.has_flag("write") {
        Some("writes the server's functions (write, @scripting)")
    } else if c.in_category("@dangerous") && c.has_flag("write") && c.first_key == 0 {
        Some("writes whole databases, not keys (write, @dangerous, no key)")
    } else if c.in_category("@admin") && c.name.contains('|') && sub.starts_with("reset") {
        Some("resets the server's statistics or state (@admin, RESET)")
    } else {
        None
    }
}

/// Whether `name` is matched by `pattern` (a name, or a prefix ending with `*`).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The exclusion list in force: the default list plus `--fuzz-exclude`, minus `--fuzz-include`.
#[derive(Clone, Debug)]
pub struct Exclusions {
    extra: Vec<String>,
    include: Vec<String>,
}

impl Exclusions {
    pub fn new(exclude: &[String], include: &[String]) -> Exclusions {
        Exclusions {
            extra: exclude.to_vec(),
            include: include.to_vec(),
        }
    }

    /// Whether the command `name` (`get`, `config|set`) may be sent. A container name
    /// (`--fuzz-exclude cluster`) covers all of its subcommands.
    pub fn allows(&self, name: &str) -> bool {
        let container = name.split('|').next().unwrap_or(name);
        let listed = |list: &[String]| list.iter().any(|n| n == name || n == container);
        if listed(&self.include) {
            return true;
        }
        if listed(&self.extra) {
            return false;
        }
        !EXCLUDED.iter().any(|(n, _)| *n == name || *n == container)
    }

    /// Whether the command `c` may be sent: [`Exclusions::allows`] its name, and the server's
    /// facts about it do not exclude it ([`derived`]) unless `--fuzz-include` names it.
    pub fn allows_command(&self, c: &CommandSpec) -> bool {
        let container = c.name.split('|').next().unwrap_or(&c.name);
        let included = self.include.iter().any(|n| *n == c.name || n == container);
        included || (self.allows(&c.name) && derived(c).is_none())
    }

    /// Whether `CONFIG SET` may change the parameter `name` (`--fuzz-include NAME` allows one of
    /// the never-touch list).
    pub fn allows_config(&self, name: &str) -> bool {
        self.include.iter().any(|n| n == name) || !NEVER_SET.iter().any(|(p, _)| matches(p, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, flags: &[&str], categories: &[&str], first_key: i64) -> CommandSpec {
        CommandSpec {
            name: name.into(),
            words: Vec::new(),
            arity: 0,
            flags: flags.iter().map(|s| s.to_string()).collect(),
            categories: categories.iter().map(|s| s.to_string()).collect(),
            first_key,
            args: Vec::new(),
        }
    }

    /// As Valkey 9.1 and Redis 7.0 describe these commands.
    #[test]
    fn the_servers_facts_exclude_what_replaces_the_users_state() {
        let d = Exclusions::new(&[], &[]);
        let load = spec(
            "function|load",
            &["write", "noscript"],
            &["@write", "@scripting"],
            0,
        );
        let newcmd = spec(
            "dropalldbs",
            &["write"],
            &["@keyspace", "@write", "@dangerous"],
            0,
        );
        let reset = spec("newlog|reset", &["admin"], &["@admin", "@dangerous"], 0);
        for c in [&load, &newcmd, &reset] {
            assert!(derived(c).is_some() && !d.allows_command(c), "{}", c.name);
        }
        let kept = [
            spec(
                "restore",
                &["write"],
                &["@keyspace", "@write", "@dangerous"],
                1,
            ),
            spec("sort", &["write"], &["@write", "@dangerous"], 1),
            spec("eval", &["noscript"], &["@slow", "@scripting"], 0),
            spec("slowlog|get", &["admin"], &["@admin", "@dangerous"], 0),
            spec("get", &["readonly"], &["@read", "@string"], 1),
        ];
        for c in &kept {
            assert!(d.allows_command(c), "{}", c.name);
        }
        let listed = spec("script|flush", &["noscript"], &["@scripting"], 0);
        assert!(!d.allows_command(&listed), "the list is the floor");
        let opened = Exclusions::new(&[], &["function".into(), "script|flush".into()]);
        assert!(opened.allows_command(&load) && opened.allows_command(&listed));
    }

    #[test]
    fn defaults_and_changes() {
        let d = Exclusions::new(&[], &[]);
        assert!(d.allows("get") && d.allows("config|get") && d.allows("cluster|info"));
        assert!(!d.allows("shutdown") && !d.allows("cluster|reset") && !d.allows("debug"));
        assert!(!d.allows("flushall") && !d.allows("config|set"));
        let c = Exclusions::new(&["keys".into(), "cluster".into()], &["flushall".into()]);
        assert!(!c.allows("keys") && !c.allows("cluster|info"));
        assert!(c.allows("flushall"));
    }

    /// The user's page lists every entry of both lists (one list, shown where users look).
    #[test]
    fn docs_name_every_exclusion() {
        let page = include_str!("../../docs/fuzz.md");
        for (name, _) in EXCLUDED.iter().chain(NEVER_SET) {
            let shown = format!("`{}`", name.replace('|', "\\|"));
            assert!(page.contains(&shown), "docs/fuzz.md lacks {shown}");
        }
    }

    #[test]
    fn never_set_list() {
        let d = Exclusions::new(&[], &[]);
        for p in [
            "requirepass",
            "maxclients",
            "bind",
            "port",
            "protected-mode",
            "tls-port",
        ] {
            assert!(!d.allows_config(p), "{p}");
        }
        assert!(d.allows_config("hz") && d.allows_config("list-max-listpack-size"));
        assert!(Exclusions::new(&[], &["maxclients".into()]).allows_config("maxclients"));
    }
}
