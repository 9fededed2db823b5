//! What a unit's keys need for routing: learned from the server once per test (`COMMAND INFO`
//! for the write flag and key positions, `COMMAND GETKEYS` for commands whose keys move), then
//! checked so that a unit that cannot go to one node is refused before the run starts.

use std::collections::HashMap;
use std::ops::Range;

use resp::Value;

use super::slot::{hashed_part, key_slot};
use crate::workload::Template;

/// How the slot of one key is decided.
#[derive(Clone, Debug, PartialEq, Eq)]
enum KeyClass {
    /// Its hash tag is the `{tag}` placeholder: the connection's node picks the slot.
    Tag,
    /// No placeholder in the hashed part: always this slot.
    Fixed(u16),
    /// A `__rand_*` placeholder in the hashed part: the slot changes with every fill.
    Random,
}

/// Routing facts of one unit (all ranges are offsets into the unit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitRoutes {
    /// Offsets of `{tag}` placeholders.
    pub tags: Vec<usize>,
    /// Keys whose slot depends on `__rand_*` values: a connection re-draws the unit until they
    /// all belong to its node.
    pub random_keys: Vec<Range<usize>>,
    /// Slots of keys without placeholders; the unit can only go to their owner.
    pub fixed_slots: Vec<u16>,
    /// Some command of the unit writes: the unit goes to primaries whatever `--rfr` says.
    pub write: bool,
    /// Per command, its first key (to find the slot of a redirected command); `None` if keyless.
    pub first_key: Vec<Option<Range<usize>>>,
    /// Per command, the argument indexes of its keys (0 is the command's name): where a unit
    /// written at a length of its own (a mix's, memtier's) has its keys.
    pub key_args: Vec<Vec<usize>>,
}

/// Where a written unit's keys are: one command's [`UnitRoutes::key_args`], read from the unit's
/// own bytes (a mix writes each unit at a length of its own, so offsets from its template do
/// not hold).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnitKeys {
    /// The command's key argument indexes (empty: keyless, it goes anywhere).
    pub args: Vec<usize>,
    /// Its keys hold `{tag}`: the connection fills in a tag of one of its node's slots.
    pub tagged: bool,
}

/// What [`UnitKeys::slot`] found in a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitSlot {
    /// No key: any node serves it.
    Keyless,
    /// All its keys hash to this slot.
    One(u16),
    /// Its keys hash to different slots (no node serves it whole).
    Cross,
}

impl UnitKeys {
    /// The slot of `unit`'s keys (`unit`: one command, `*N\r\n` then `$len\r\n` arguments).
    /// A malformed unit is keyless (it cannot be ours: the writers are).
    pub fn slot(&self, unit: &[u8]) -> UnitSlot {
        let Some(&last) = self.args.last() else {
            return UnitSlot::Keyless;
        };
        let mut found = None;
        let mut wanted = self.args.iter().peekable();
        let Some((count, mut at)) = header(unit, 0) else {
            return UnitSlot::Keyless;
        };
        // An `MGET` of fewer keys than the most (`args` lists them all) ends early.
        for i in 0..=last.min(count.saturating_sub(1)) {
            let Some((len, body)) = header(unit, at) else {
                return UnitSlot::Keyless;
            };
            let Some(arg) = unit.get(body..body + len) else {
                return UnitSlot::Keyless;
            };
            if wanted.next_if_eq(&&i).is_some() {
                let s = key_slot(arg);
                match found {
                    None => found = Some(s),
                    Some(f) if f != s => return UnitSlot::Cross,
                    Some(_) => {}
                }
            }
            at = body + len + 2;
        }
        found.map_or(UnitSlot::Keyless, UnitSlot::One)
    }
}

/// The number of a `*N`/`$N` header line starting at `from`, and where the line after it starts.
fn header(unit: &[u8], from: usize) -> Option<(usize, usize)> {
    let rest = unit.get(from + 1..)?;
    let end = rest.iter().position(|&b| b == b'\r')?;
    let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    Some((n, from + 1 + end + 2))
}

/// Key positions and flags of a command, cached by name.
#[derive(Clone, Debug)]
struct Info {
    write: bool,
    /// `(first, last, step)` key positions as `COMMAND INFO` gives them (0 = no keys).
    range: (i64, i64, i64),
    movable: bool,
    has_subcommands: bool,
}

/// Asks the server; errors come back as `Value::Error`.
pub type Call<'a> = dyn FnMut(&[&[u8]]) -> Result<Value, String> + 'a;

/// Learns commands from the server, asking once per command name.
#[derive(Default)]
pub struct Commands {
    cache: HashMap<Vec<u8>, Option<Info>>,
}

impl Commands {
    fn info(&mut self, call: &mut Call, name: &[u8]) -> Result<Option<Info>, String> {
        let key = name.to_ascii_lowercase();
        if let Some(i) = self.cache.get(&key) {
            return Ok(i.clone());
        }
        let reply = call(&[b"COMMAND", b"INFO", &key])?;
        let info = match &reply {
            Value::Array(entries) => match entries.first() {
                Some(Value::Array(f)) if f.len() >= 6 => {
                    let int = |v: &Value| match v {
                        Value::Integer(n) => *n,
                        _ => 0,
                    };
                    let flags: Vec<Vec<u8>> = match &f[2] {
                        Value::Array(xs) | Value::Set(xs) => xs
                            .iter()
                            .filter_map(|x| match x {
                                Value::SimpleString(s) | Value::BulkString(s) => {
                                    Some(s.to_ascii_lowercase())
                                }
                                _ => None,
                            })
                            .collect(),
                        _ => Vec::new(),
                    };
                    let has = |flag: &[u8]| flags.iter().any(|f| f == flag);
                    Some(Info {
                        write: has(b"write"),
                        range: (int(&f[3]), int(&f[4]), int(&f[5])),
                        movable: has(b"movablekeys"),
                        has_subcommands: matches!(f.get(9), Some(Value::Array(s)) if !s.is_empty()),
                    })
                }
                _ => None,
            },
            Value::Error(e) => {
                return Err(format!(
                    "COMMAND INFO failed: {}",
                    String::from_utf8_lossy(e)
                ));
            }
            _ => None,
        };
        self.cache.insert(key, info.clone());
        Ok(info)
    }

    /// Whether the command writes, and the indexes of its key arguments (also `replay --cluster`:
    /// the slot of each replayed command).
    pub fn keys_of(
        &mut self,
        call: &mut Call,
        args: &[&[u8]],
    ) -> Result<(bool, Vec<usize>), String> {
        let Some(name) = args.first() else {
            return Ok((false, Vec::new()));
        };
        let Some(mut info) = self.info(call, name)? else {
            // Unknown to the server: it will answer with an error wherever it goes.
            return Ok((false, Vec::new()));
        };
        if info.has_subcommands && args.len() >= 2 {
            let full = [*name, b"|".as_slice(), args[1]].concat();
            if let Some(sub) = self.info(call, &full)? {
                info = sub;
            }
        }
        let (first, last, step) = info.range;
        if !info.movable && first > 0 && step > 0 {
            let n = args.len() as i64;
            let last = if last < 0 { n + last } else { last.min(n - 1) };
            let keys = (first..=last)
                .step_by(step as usize)
                .map(|i| i as usize)
                .collect();
            return Ok((info.write, keys));
        }
        if !info.movable {
            return Ok((info.write, Vec::new()));
        }
        // Keys found by parsing the arguments (EVAL, FCALL, ZUNIONSTORE, XREAD ...).
        let mut getkeys: Vec<&[u8]> = vec![b"COMMAND", b"GETKEYS"];
        getkeys.extend_from_slice(args);
        let reply = call(&getkeys)?;
        let names: Vec<Vec<u8>> = match reply {
            Value::Array(xs) => xs
                .into_iter()
                .filter_map(|x| match x {
                    Value::BulkString(b) | Value::SimpleString(b) => Some(b),
                    _ => None,
                })
                .collect(),
            Value::Error(e) if e.windows(6).any(|w| w == b"no key") => Vec::new(),
            Value::Error(e) => {
                return Err(format!(
                    "cannot find the keys of {}: {}",
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(&e)
                ));
            }
            _ => Vec::new(),
        };
        // Map key names back to argument positions, left to right.
        let mut keys = Vec::with_capacity(names.len());
        let mut from = 1;
        for k in names {
            if let Some(i) = (from..args.len()).find(|&i| args[i] == k.as_slice()) {
                keys.push(i);
                from = i + 1;
            }
        }
        Ok((info.write, keys))
    }

    /// Works out how `template` routes. `placeholders`: `-r` was given, so `__rand_*` tokens
    /// change per fill.
    pub fn analyze(
        &mut self,
        call: &mut Call,
        template: &Template,
        placeholders: bool,
    ) -> Result<UnitRoutes, String> {
        let mut routes = UnitRoutes {
            tags: template.tag_offsets(),
            ..UnitRoutes::default()
        };
        for cmd in &template.layout {
            let args: Vec<&[u8]> = cmd.args.iter().map(|r| &template.unit[r.clone()]).collect();
            let (write, keys) = self.keys_of(call, &args)?;
            routes.write |= write;
            routes
                .first_key
                .push(keys.first().map(|&i| cmd.args[i].clone()));
            routes.key_args.push(keys.clone());
            let classes: Vec<KeyClass> = keys
                .iter()
                .map(|&i| classify(args[i], placeholders && cmd.verbatim_arg != Some(i)))
                .collect();
            if classes.len() > 1 && !same_slot(&classes) {
                let names: Vec<String> = keys
                    .iter()
                    .take(4)
                    .map(|&i| String::from_utf8_lossy(args[i]).into_owned())
                    .collect();
                return Err(format!(
                    "{}'s keys ({}{}) would fall in different cluster slots; give them one hash \
                     tag, e.g. {{tag}} or {{user1}}",
                    String::from_utf8_lossy(args[0]),
                    names.join(", "),
                    if keys.len() > 4 { ", ..." } else { "" }
                ));
            }
            for (&i, class) in keys.iter().zip(&classes) {
                match class {
                    KeyClass::Tag => {}
                    KeyClass::Fixed(slot) => {
                        if !routes.fixed_slots.contains(slot) {
                            routes.fixed_slots.push(*slot);
                        }
                    }
                    KeyClass::Random => routes.random_keys.push(cmd.args[i].clone()),
                }
            }
        }
        Ok(routes)
    }
}

fn classify(key: &[u8], placeholders: bool) -> KeyClass {
    let hashed = hashed_part(key);
    if hashed == b"tag" && key.windows(5).any(|w| w == b"{tag}") {
        return KeyClass::Tag;
    }
    if placeholders && hashed.windows(7).any(|w| w == b"__rand_") {
        return KeyClass::Random;
    }
    KeyClass::Fixed(key_slot(key))
}

fn same_slot(classes: &[KeyClass]) -> bool {
    match &classes[0] {
        KeyClass::Tag => classes.iter().all(|c| *c == KeyClass::Tag),
        KeyClass::Fixed(s) => classes.iter().all(|c| *c == KeyClass::Fixed(*s)),
        KeyClass::Random => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PayloadGenerator;
    use crate::workload::template::{SequenceItem, parse_custom_command};

    fn template(cmd: &str) -> Template {
        let args: Vec<Vec<u8>> = cmd.split(' ').map(|a| a.as_bytes().to_vec()).collect();
        let items: Vec<SequenceItem> =
            parse_custom_command(&args, None, 3, &mut PayloadGenerator::default()).unwrap();
        Template::encode(&items, true)
    }

    fn info(flags: &[&str], first: i64, last: i64, step: i64) -> Value {
        Value::Array(vec![Value::Array(vec![
            Value::BulkString(b"x".to_vec()),
            Value::Integer(-2),
            Value::Array(
                flags
                    .iter()
                    .map(|f| Value::SimpleString(f.as_bytes().to_vec()))
                    .collect(),
            ),
            Value::Integer(first),
            Value::Integer(last),
            Value::Integer(step),
        ])])
    }

    /// A stand-in for a Redis 7 server's COMMAND INFO / GETKEYS for a few commands.
    fn server(args: &[&[u8]]) -> Result<Value, String> {
        let text: Vec<String> = args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        Ok(match (text[1].as_str(), text[2].as_str()) {
            ("INFO", "set") => info(&["write"], 1, 1, 1),
            ("INFO", "get") => info(&["readonly"], 1, 1, 1),
            ("INFO", "mset") => info(&["write"], 1, -1, 2),
            ("INFO", "ping") => info(&[], 0, 0, 0),
            ("INFO", "eval") => info(&["movablekeys"], 0, 0, 0),
            ("GETKEYS", "eval") => {
                let n: usize = text[4].parse().unwrap();
                Value::Array(
                    text[5..5 + n]
                        .iter()
                        .map(|k| Value::BulkString(k.as_bytes().to_vec()))
                        .collect(),
                )
            }
            _ => Value::Array(vec![Value::Null]),
        })
    }

    fn analyze(cmd: &str) -> Result<UnitRoutes, String> {
        Commands::default().analyze(&mut server, &template(cmd), true)
    }

    #[test]
    fn tagged_suite_style_keys_need_nothing_else() {
        let r = analyze("mset k:{tag}:__rand_int__ v k:{tag}:__rand_int__ v").unwrap();
        assert_eq!(r.tags.len(), 2);
        assert!(r.random_keys.is_empty() && r.fixed_slots.is_empty());
        assert!(r.write);
    }

    #[test]
    fn random_and_fixed_keys() {
        let r = analyze("get key:__rand_int__ ; set foo bar").unwrap();
        assert_eq!(r.random_keys.len(), 1);
        assert_eq!(r.fixed_slots, [key_slot(b"foo")]);
        assert!(r.write);
        assert_eq!(r.first_key.len(), 2);
        let t = template("get key:__rand_int__ ; set foo bar");
        assert_eq!(&t.unit[r.first_key[1].clone().unwrap()], b"foo");
    }

    #[test]
    fn multi_key_commands_must_share_a_slot() {
        let e = analyze("mset a:__rand_int__ 1 b:__rand_int__ 2").unwrap_err();
        assert!(e.contains("different cluster slots"), "{e}");
        assert!(analyze("mset {u}a 1 {u}b 2").is_ok());
        assert!(
            analyze("mset a 1 b 2").is_err(),
            "a and b are in different slots"
        );
    }

    #[test]
    fn a_written_units_keys_are_read_from_its_own_bytes() {
        let set = UnitKeys {
            args: vec![1],
            tagged: false,
        };
        let unit = b"*3\r\n$5\r\nSETEX\r\n$9\r\nmemtier-7\r\n$2\r\nxy\r\n";
        assert_eq!(set.slot(unit), UnitSlot::One(key_slot(b"memtier-7")));
        assert_eq!(UnitKeys::default().slot(unit), UnitSlot::Keyless);
        let mget = UnitKeys {
            args: vec![1, 2],
            tagged: false,
        };
        let tagged = b"*3\r\n$4\r\nMGET\r\n$4\r\n{u}1\r\n$4\r\n{u}2\r\n";
        assert_eq!(mget.slot(tagged), UnitSlot::One(key_slot(b"{u}")));
        let apart = b"*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n";
        assert_eq!(mget.slot(apart), UnitSlot::Cross);
        let most = UnitKeys {
            args: vec![1, 2, 3, 4],
            tagged: false,
        };
        assert_eq!(
            most.slot(tagged),
            UnitSlot::One(key_slot(b"{u}")),
            "fewer keys"
        );
        assert_eq!(set.slot(b"*3\r\n$3\r\nSET"), UnitSlot::Keyless, "cut short");
    }

    #[test]
    fn read_only_and_keyless() {
        let r = analyze("ping").unwrap();
        assert!(!r.write && r.first_key == [None]);
        assert!(!analyze("get x").unwrap().write);
    }

    #[test]
    fn movable_keys_come_from_getkeys() {
        let r = analyze("eval return 2 k:{tag}:1 k:{tag}:2 arg").unwrap();
        assert_eq!(r.tags.len(), 2);
        let e = analyze("eval return 2 a b").unwrap_err();
        assert!(e.contains("eval"), "{e}");
    }
}
