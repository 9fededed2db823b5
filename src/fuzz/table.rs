//! The server's own command table, read once before fuzzing: `COMMAND DOCS` for each command's
//! argument spec (types, tokens, `oneof`/`block`, optional and repeated arguments), `COMMAND` (the
//! info form) for its arity and flags. Module commands the server lists come in the same way, so
//! the fuzzer covers whatever the target really has rather than a list frozen at build time.
//!
//! Both replies are read in RESP2 (flat arrays of pairs) and RESP3 (maps) shape.

use resp::Value;

/// An argument's type, as `COMMAND DOCS` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    String,
    Integer,
    Double,
    Key,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

/// One argument of a command's spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// Its name (`numkeys`, `timeout`, …): a few names get values that keep the command valid.
    pub name: String,
    pub kind: ArgKind,
    /// The word written before its value (`EX`, `LIMIT`), or the whole argument (pure tokens).
    pub token: Option<String>,
    pub optional: bool,
    /// May repeat.
    pub multiple: bool,
    /// Every repetition repeats the token too.
    pub multiple_token: bool,
    /// The arguments of a `oneof` or `block`.
    pub sub: Vec<Arg>,
}

/// One command (or subcommand) the fuzzer may send.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandSpec {
    /// `get`, `config|set`: lower case, subcommands after `|`, as `COMMAND` names them.
    pub name: String,
    /// The words that start the command: `["GET"]`, `["CONFIG", "SET"]`.
    pub words: Vec<Vec<u8>>,
    /// `COMMAND`'s arity (negative: at least that many words); 0 when unknown.
    pub arity: i64,
    /// `COMMAND`'s flags (`write`, `blocking`, `admin`, …), lower case.
    pub flags: Vec<String>,
    /// `COMMAND`'s ACL categories (`@scripting`, `@dangerous`, …), lower case.
    pub categories: Vec<String>,
    /// `COMMAND`'s first key position (0: the command names no key).
    pub first_key: i64,
    pub args: Vec<Arg>,
}

impl CommandSpec {
    /// Whether `COMMAND` gave it the flag `flag`.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// Whether `COMMAND` put it in the ACL category `category` (`@scripting`).
    pub fn in_category(&self, category: &str) -> bool {
        self.categories.iter().any(|c| c == category)
    }
}

/// Every command of the server, subcommands as commands of their own (a container such as
/// `CONFIG` itself is left out: it only answers with a usage error).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub commands: Vec<CommandSpec>,
}

/// The text of a string-like value.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::SimpleString(b) | Value::BulkString(b) => Some(String::from_utf8_lossy(b).into()),
        Value::VerbatimString { text, .. } => Some(String::from_utf8_lossy(text).into()),
        _ => None,
    }
}

/// The elements of an array-like value.
fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        _ => &[],
    }
}

/// A map's pairs, from a RESP3 map or a RESP2 flat array of key, value, key, value.
fn pairs(v: &Value) -> Vec<(String, &Value)> {
    match v {
        Value::Map(m) => m
            .iter()
            .filter_map(|(k, v)| text(k).map(|k| (k, v)))
            .collect(),
        Value::Array(a) => a
            .chunks_exact(2)
            .filter_map(|kv| text(&kv[0]).map(|k| (k, &kv[1])))
            .collect(),
        _ => Vec::new(),
    }
}

impl Table {
    /// Builds the table from the replies to `COMMAND DOCS` and `COMMAND` (sorted by name, so the
    /// same server gives the same table and the same seed the same stream).
    pub fn from_replies(docs: &Value, info: &Value) -> Table {
        let mut commands = Vec::new();
        for (name, doc) in pairs(docs) {
            add_command(&mut commands, &name.to_ascii_lowercase(), doc);
        }
        let mut facts = Vec::new();
        for entry in items(info) {
            info_facts(entry, &mut facts);
        }
        for c in &mut commands {
            if let Some(f) = facts.iter().find(|f| f.name == c.name) {
                c.arity = f.arity;
                c.flags = f.flags.clone();
                c.categories = f.categories.clone();
                c.first_key = f.first_key;
            }
        }
        commands.sort_by(|a, b| a.name.cmp(&b.name));
        Table { commands }
    }
}

/// Adds `name` and its subcommands (from their `subcommands` field).
fn add_command(out: &mut Vec<CommandSpec>, name: &str, doc: &Value) {
    let fields = pairs(doc);
    let subs = fields.iter().find(|(k, _)| k == "subcommands");
    if let Some((_, subs)) = subs {
        for (sub, sub_doc) in pairs(subs) {
            add_command(out, &sub.to_ascii_lowercase(), sub_doc);
        }
        return;
    }
    let args = fields
        .iter()
        .find(|(k, _)| k == "arguments")
        .map(|(_, a)| items(a).iter().filter_map(arg).collect())
        .unwrap_or_default();
    let words = name
        .split('|')
        .map(|w| w.to_ascii_uppercase().into_bytes())
        .collect();
    out.push(CommandSpec {
        name: name.to_owned(),
        words,
        arity: 0,
        flags: Vec::new(),
        categories: Vec::new(),
        first_key: 0,
        args,
    });
}

/// One argument from its `COMMAND DOCS` map; `None` when it has no name or type.
fn arg(v: &Value) -> Option<Arg> {
    let fields = pairs(v);
    let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    let kind = match field("type").and_then(text)?.as_str() {
        "string" => ArgKind::String,
        "integer" => ArgKind::Integer,
        "double" => ArgKind::Double,
        "key" => ArgKind::Key,
        "pattern" => ArgKind::Pattern,
        "unix-time" => ArgKind::UnixTime,
        "pure-token" => ArgKind::PureToken,
        "oneof" => ArgKind::OneOf,
        "block" => ArgKind::Block,
        _ => ArgKind::String,
    };
    let flags: Vec<String> = field("flags")
        .map(|f| items(f).iter().filter_map(text).collect())
        .unwrap_or_default();
    let has = |f: &str| flags.iter().any(|x| x == f);
    Some(Arg {
        name: field("name").and_then(text)?,
        kind,
        token: field("token").and_then(text),
        optional: has("optional"),
        multiple: has("multiple"),
        multiple_token: has("multiple_token"),
        sub: field("arguments")
            .map(|a| items(a).iter().filter_map(arg).collect())
            .unwrap_or_default(),
    })
}

/// What `COMMAND` (the info form) says of one command.
struct Facts {
    name: String,
    arity: i64,
    flags: Vec<String>,
    first_key: i64,
    categories: Vec<String>,
}

/// A `COMMAND` entry's facts, then its subcommands'.
fn info_facts(entry: &Value, out: &mut Vec<Facts>) {
    let e = items(entry);
    let (Some(name), Some(Value::Integer(arity))) = (e.first().and_then(text), e.get(1)) else {
        return;
    };
    let words = |i: usize| -> Vec<String> {
        e.get(i)
            .map(|f| {
                items(f)
                    .iter()
                    .filter_map(text)
                    .map(|s| s.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default()
    };
    let first_key = match e.get(3) {
        Some(Value::Integer(k)) => *k,
        _ => 0,
    };
    out.push(Facts {
        name: name.to_ascii_lowercase(),
        arity: *arity,
        flags: words(2),
        first_key,
        categories: words(6),
    });
    if let Some(subs) = e.get(9) {
        for sub in items(subs) {
            info_facts(sub, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    fn flat(kv: &[(&str, Value)]) -> Value {
        Value::Array(kv.iter().flat_map(|(k, v)| [bulk(k), v.clone()]).collect())
    }

    #[test]
    fn docs_and_info_in_resp2_shape() {
        let set_args = Value::Array(vec![
            flat(&[("name", bulk("key")), ("type", bulk("key"))]),
            flat(&[
                ("name", bulk("expiration")),
                ("type", bulk("oneof")),
                ("flags", Value::Array(vec![bulk("optional")])),
                (
                    "arguments",
                    Value::Array(vec![flat(&[
                        ("name", bulk("seconds")),
                        ("type", bulk("integer")),
                        ("token", bulk("EX")),
                    ])]),
                ),
            ]),
        ]);
        let docs = flat(&[
            ("set", flat(&[("arguments", set_args)])),
            (
                "config",
                flat(&[(
                    "subcommands",
                    flat(&[("config|get", flat(&[("arguments", Value::Array(vec![]))]))]),
                )]),
            ),
        ]);
        let info = Value::Array(vec![Value::Array(vec![
            bulk("set"),
            Value::Integer(-3),
            Value::Array(vec![Value::SimpleString(b"write".to_vec())]),
        ])]);
        let t = Table::from_replies(&docs, &info);
        let names: Vec<&str> = t.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["config|get", "set"]);
        assert_eq!(t.commands[0].words, [b"CONFIG".to_vec(), b"GET".to_vec()]);
        let set = &t.commands[1];
        assert_eq!(set.arity, -3);
        assert!(set.has_flag("write"));
        assert_eq!(set.args[0].kind, ArgKind::Key);
        assert!(set.args[1].optional);
        assert_eq!(set.args[1].sub[0].token.as_deref(), Some("EX"));
    }
}
