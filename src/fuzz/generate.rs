//! The command generator: one per client, seeded from the run's seed and the client's number, so
//! `--seed N` gives every client the same stream again. Nothing it draws depends on the server's
//! replies or the clock (unix times are drawn around a fixed instant), which is what makes a
//! stream replayable and the same-seed test byte-exact.
//!
//! Arguments follow each command's `COMMAND DOCS` spec ([`super::table`]); keys come from the
//! `-r` keyspace and, in cluster mode, share one hash tag per command so a multi-key command stays
//! in one slot. `malformed-commands` adds broken commands ([`super::malformed`]) and
//! `config-commands` `CONFIG SET` of the server's parameters ([`super::config`]).

use std::sync::Arc;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Payload;
use super::config::ConfigParam;
use super::table::{Arg, ArgKind, CommandSpec, Table};

/// One in this many commands is malformed (`malformed-commands`), as the reference's 5%.
const MALFORMED_ONE_IN: u64 = 20;
/// One in this many commands is a `CONFIG SET` (`config-commands`).
const CONFIG_ONE_IN: u64 = 20;
/// Keys when `-r` is not given.
pub const DEFAULT_KEYS: u64 = 1000;
/// Unix times are drawn around this instant (2030-01-01), never the clock.
const TIME_BASE: i64 = 1_893_456_000;
/// A `multiple` argument repeats at most this many times.
const MAX_REPEAT: u64 = 4;

/// What every client's generator shares: the commands it may send and the modes.
#[derive(Debug)]
pub struct Shared {
    pub table: Table,
    /// Indexes into `table.commands` of the commands that may be sent.
    pub allowed: Vec<usize>,
    /// `CONFIG SET` candidates (empty unless `config-commands`).
    pub config: Vec<ConfigParam>,
    pub keys: u64,
    pub cluster: bool,
    pub malformed: bool,
}

/// A client's generator.
pub struct Generator {
    pub(super) rng: Xoshiro256PlusPlus,
    shared: Arc<Shared>,
    /// Cluster mode: the hash tag of the command being built.
    tag: u64,
    /// A `numkeys` argument was drawn: the next key list has this many keys.
    numkeys: Option<u64>,
    /// The command being built is `blocking`: its timeouts stay short.
    blocking: bool,
}

/// The generator's seed for client `client`: SplitMix64 of the run's seed and the number, so
/// neighbouring clients get unrelated streams.
pub fn client_seed(seed: u64, client: u32) -> u64 {
    let mut z = seed
        .wrapping_add(u64::from(client).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    pub fn new(shared: Arc<Shared>, seed: u64, client: u32) -> Generator {
        Generator {
            rng: Xoshiro256PlusPlus::seed_from_u64(client_seed(seed, client)),
            shared,
            tag: 0,
            numkeys: None,
            blocking: false,
        }
    }

    /// A number in `0..n` (`n` > 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    /// True once in `n` draws.
    pub(super) fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// The next thing to send.
    pub fn next_payload(&mut self) -> Payload {
        if self.shared.malformed && self.one_in(MALFORMED_ONE_IN) {
            return self.malformed();
        }
        if !self.shared.config.is_empty() && self.one_in(CONFIG_ONE_IN) {
            let i = self.below(self.shared.config.len() as u64) as usize;
            let shared = self.shared.clone();
            return Payload::Command(set_command(&shared.config[i], self));
        }
        Payload::Command(self.valid_command())
    }

    /// A command built from the spec of one the server lists.
    pub(super) fn valid_command(&mut self) -> Vec<Vec<u8>> {
        let shared = self.shared.clone();
        if shared.allowed.is_empty() {
            return vec![b"PING".to_vec()];
        }
        let i = self.below(shared.allowed.len() as u64) as usize;
        let spec: &CommandSpec = &shared.table.commands[shared.allowed[i]];
        self.tag = self.below(shared.keys.min(64));
        self.numkeys = None;
        self.blocking = spec.has_flag("blocking");
        let mut out = spec.words.clone();
        self.args(&spec.args, &mut out);
        out
    }

    fn args(&mut self, args: &[Arg], out: &mut Vec<Vec<u8>>) {
        for a in args {
            // The keys a drawn `numkeys` announced are never left out (the server would take
            // the next arguments for keys: `EVAL script 2` with no keys).
            let announced = a.kind == ArgKind::Key && self.numkeys.is_some();
            if a.optional && !announced && self.one_in(2) {
                continue;
            }
            self.arg(a, out);
        }
    }

    /// One argument with its repetitions and tokens.
    fn arg(&mut self, a: &Arg, out: &mut Vec<Vec<u8>>) {
        let reps = match (a.multiple, a.kind, self.numkeys) {
            (true, ArgKind::Key, Some(n)) => {
                self.numkeys = None;
                n
            }
            (true, _, _) => 1 + self.below(MAX_REPEAT),
            _ => 1,
        };
        for r in 0..reps {
            if let Some(t) = &a.token
                && (r == 0 || a.multiple_token)
            {
                out.push(t.as_bytes().to_vec());
            }
            self.value(a, out);
        }
    }

    /// An argument's value(s), by its type.
    fn value(&mut self, a: &Arg, out: &mut Vec<Vec<u8>>) {
        let v = match a.kind {
            ArgKind::PureToken => return,
            ArgKind::Block => return self.args(&a.sub, out),
            ArgKind::OneOf => {
                if a.sub.is_empty() {
                    return;
                }
                let pick = &a.sub[self.below(a.sub.len() as u64) as usize];
                // The chosen branch is sent even when it is marked optional on its own.
                return self.arg(pick, out);
            }
            ArgKind::Key => self.key(),
            ArgKind::Pattern => match self.below(3) {
                0 => b"*".to_vec(),
                1 => b"key:*".to_vec(),
                _ => format!("key:{}*", self.below(10)).into_bytes(),
            },
            ArgKind::UnixTime => {
                let t = TIME_BASE - 60 + self.below(120) as i64;
                t.to_string().into_bytes()
            }
            ArgKind::Double => self.double(&a.name),
            ArgKind::Integer => self.integer(&a.name),
            // A shard channel hashes like a key: in a cluster it names the node too.
            ArgKind::String if a.name == "shardchannel" => self.key(),
            ArgKind::String => self.string(),
        };
        out.push(v);
    }

    /// A key of the `-r` keyspace; in cluster mode with the command's hash tag.
    pub(super) fn key(&mut self) -> Vec<u8> {
        let n = self.below(self.shared.keys);
        match self.shared.cluster {
            true => format!("{{t{}}}key:{n}", self.tag).into_bytes(),
            false => format!("key:{n}").into_bytes(),
        }
    }

    fn integer(&mut self, name: &str) -> Vec<u8> {
        if name == "numkeys" {
            let n = 1 + self.below(3);
            self.numkeys = Some(n);
            return n.to_string().into_bytes();
        }
        if self.blocking && (name == "timeout" || name == "milliseconds") {
            return (1 + self.below(10)).to_string().into_bytes();
        }
        let v: i64 = match self.below(10) {
            0 => -(self.below(50) as i64),
            1 => 1_000_000 + self.below(1 << 31) as i64,
            _ => self.below(51) as i64,
        };
        v.to_string().into_bytes()
    }

    fn double(&mut self, name: &str) -> Vec<u8> {
        if self.blocking && name == "timeout" {
            return format!("0.00{}", 1 + self.below(9)).into_bytes();
        }
        match self.below(20) {
            0 => b"inf".to_vec(),
            1 => b"-inf".to_vec(),
            _ => format!("{}.{}", 1 + self.below(50), self.below(100)).into_bytes(),
        }
    }

    fn string(&mut self) -> Vec<u8> {
        match self.below(8) {
            0 | 1 => self.below(51).to_string().into_bytes(),
            2 => format!("field:{}", self.below(20)).into_bytes(),
            3 => self.key(),
            4 => {
                let len = 64 + self.below(960) as usize;
                vec![b'x'; len]
            }
            _ => {
                let len = 1 + self.below(12) as usize;
                (0..len).map(|_| b'a' + self.below(26) as u8).collect()
            }
        }
    }
}

/// `CONFIG SET name value` with a value drawn from the current one's shape.
fn set_command(p: &ConfigParam, g: &mut Generator) -> Vec<Vec<u8>> {
    let value = match p.value.as_str() {
        "yes" | "no" => ["yes", "no"][g.below(2) as usize].to_owned(),
        v => match v.parse::<i64>() {
            Ok(n) => match g.below(7) {
                0 => "0".to_owned(),
                1 => "1".to_owned(),
                2 => n.saturating_mul(2).to_string(),
                3 => (n / 2).to_string(),
                4 => "-1".to_owned(),
                5 => g.below(1000).to_string(),
                _ => n.to_string(),
            },
            Err(_) if g.one_in(4) => ["foo", "", "-1", "yes"][g.below(4) as usize].to_owned(),
            Err(_) => v.to_owned(),
        },
    };
    vec![
        b"CONFIG".to_vec(),
        b"SET".to_vec(),
        p.name.as_bytes().to_vec(),
        value.into_bytes(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::table::Arg;

    fn shared() -> Arc<Shared> {
        let key = Arg {
            name: "key".into(),
            kind: ArgKind::Key,
            token: None,
            optional: false,
            multiple: true,
            multiple_token: false,
            sub: vec![],
        };
        let numkeys = Arg {
            name: "numkeys".into(),
            kind: ArgKind::Integer,
            multiple: false,
            ..key.clone()
        };
        let spec = CommandSpec {
            name: "sintercard".into(),
            words: vec![b"SINTERCARD".to_vec()],
            arity: -3,
            flags: vec![],
            categories: vec![],
            first_key: 0,
            args: vec![numkeys, key],
        };
        Arc::new(Shared {
            table: Table {
                commands: vec![spec],
            },
            allowed: vec![0],
            config: vec![],
            keys: 10,
            cluster: true,
            malformed: false,
        })
    }

    #[test]
    fn same_seed_same_stream_and_numkeys_agree() {
        let mut a = Generator::new(shared(), 7, 3);
        let mut b = Generator::new(shared(), 7, 3);
        let mut c = Generator::new(shared(), 7, 4);
        let mut differs = false;
        for _ in 0..200 {
            let (x, y, z) = (a.next_payload(), b.next_payload(), c.next_payload());
            assert_eq!(x, y);
            differs |= x != z;
            let Payload::Command(args) = x else {
                panic!("a raw payload in valid mode")
            };
            let n: usize = String::from_utf8_lossy(&args[1]).parse().unwrap();
            assert_eq!(args.len(), 2 + n, "{args:?}");
            // One hash tag per command in cluster mode.
            let tag = |k: &[u8]| k.split(|&b| b == b'}').next().unwrap().to_vec();
            assert!(
                args[2..]
                    .iter()
                    .all(|k| k.starts_with(b"{t") && tag(k) == tag(&args[2])),
                "{args:?}"
            );
        }
        assert!(differs, "another client draws another stream");
    }
}
