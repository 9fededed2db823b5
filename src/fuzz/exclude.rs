//! What the fuzzer never sends unless asked (`--fuzz-include`): commands that end the test rather
//! than find a bug (stopping the server, crashing it on purpose, replication and failover, wiping
//! or moving the user's data, connection modes the client would never leave), and the server
//! parameters `CONFIG SET` must not touch because they would lock the watch out or end the test.
//! One list, printed by `docs/fuzz.md` and checked by the tests.

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

    /// Whether `CONFIG SET` may change the parameter `name` (`--fuzz-include NAME` allows one of
    /// the never-touch list).
    pub fn allows_config(&self, name: &str) -> bool {
        self.include.iter().any(|n| n == name) || !NEVER_SET.iter().any(|(p, _)| matches(p, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
