//! Secrets never leave the process: the one place that decides what of a command line, a
//! benchmarked command or a server URI may be shown.
//!
//! Why one home: records are shared (CI artefacts, bug reports), reports are pasted into issues,
//! and every output — the report, `-q`, `--csv`, the progress line, the record, the HTML page,
//! `compare`, `report`, `merge` — shows the command line or a test's name, which is the custom
//! command itself. A test's name is redacted where the plan makes it, the record's command line
//! where it is built, and files read back (records written before this existed) again on
//! reading, all with these functions, so no output can miss a spelling another one covers.
//!
//! Which options carry secrets comes from the option table (`cli::secret_value`: the whole value
//! of `-a` and `--sentinel-password`, a `-u` URI's password, the arguments of a `--command`), so
//! every spelling the parser accepts is found the way the parser finds it; which arguments of a
//! command are secrets, from the command's syntax (`command.rs`). Only what is shown changes:
//! the bytes sent are the user's. Environment variables (`REDISCLI_AUTH`) are never shown or
//! recorded at all.

mod command;

use std::ffi::OsStr;

use serde_json::Value;

use std::sync::OnceLock;

use crate::cli::{SecretValue, secret_value, takes_value};

/// What replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// `argv` (program name first) as text with every secret replaced: secret option values in every
/// spelling (`-a PW`, `-aPW`, `-a=PW`, `-qaPW`, `--x PW`, `--x=PW`), a `-u` URI's password in
/// each of those spellings, the secret arguments of `--command` values and of the custom
/// command (after the options or `--`), and the password of any URI anywhere. Option values are
/// found with the option table, so `-n 5 -a -q` hides `-q` (the parser takes it for the
/// password) while `set -a x` (a custom command) stays.
pub fn command_line<S: AsRef<OsStr>>(argv: &[S]) -> Vec<String> {
    let mut out: Vec<String> = argv
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let table = line_table(&out);
    let len = out.len();
    let mut i = match table {
        Some(t) if out.get(1).is_some_and(|a| a == t.subcommand) => 2,
        _ => 1,
    };
    let takes_value = |name: &str| match table {
        Some(t) => (t.takes_value)(name),
        None => takes_value(name),
    };
    let secret_value = |name: &str| match table {
        Some(t) => (t.secret_value)(name),
        None => secret_value(name),
    };
    // Options end at `--` or the first argument that is not an option (as `cli::parse`).
    while i < out.len() {
        let arg = out[i].as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let (name, attached) = option_parts(arg);
        i += 1;
        let Some(name) = name else { continue };
        if takes_value(&name) != Some(true) {
            continue;
        }
        // Where the value is: attached to the option, or the next argument.
        let (k, from) = match attached {
            Some(from) => (i - 1, from),
            None if i < out.len() => {
                i += 1;
                (i - 1, 0)
            }
            None => continue,
        };
        if let Some(kind) = secret_value(&name) {
            let clean = option_value(kind, &out[k][from..]);
            out[k].replace_range(from.., &clean);
        }
    }
    // `i` is past the end of an empty command line (a record built without one).
    let custom = &mut out[i.min(len)..];
    let secrets = command::secrets(custom);
    hide(custom, &secrets);
    for a in &mut out {
        if let Some(clean) = uri(a) {
            *a = clean;
        }
    }
    out
}

/// A command line read by an option table other than the main one: a mode's own line (memtier's:
/// `respbench memtier …`, or respbench started as `memtier_benchmark`). The registry installs
/// them (`crate::modes::LINES`), so `redact` finds a value the way that mode's parser does
/// without naming the mode.
pub struct LineTable {
    /// The subcommand that starts the line (`respbench <subcommand> …`).
    pub subcommand: &'static str,
    /// The program name under which respbench reads the same line.
    pub program: &'static str,
    /// Whether an option of the table takes a value (`None`: not an option of it).
    pub takes_value: fn(&str) -> Option<bool>,
    /// Which kind of secret an option's value is, if any.
    pub secret_value: fn(&str) -> Option<SecretValue>,
}

static TABLES: OnceLock<&'static [LineTable]> = OnceLock::new();

/// Installs the modes' own command lines (the registry's list), once, before any command line
/// is shown.
pub fn install(tables: &'static [LineTable]) {
    let _ = TABLES.set(tables);
}

/// The installed table `argv` (program name first) is read with, if it is not the main line.
fn line_table(argv: &[String]) -> Option<&'static LineTable> {
    let tables = match TABLES.get() {
        Some(tables) => tables,
        None => not_installed(),
    };
    let program = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a));
    let word = argv.get(1).map(String::as_str);
    tables
        .iter()
        .find(|t| program == Some(t.program) || word == Some(t.subcommand))
}

/// Outside tests, a command line shown before the registry installed the modes' tables is a bug
/// of the program's start (a mode's secret spellings would go unseen).
#[cfg(not(test))]
fn not_installed() -> &'static [LineTable] {
    panic!("redact: the modes' command lines were not installed (crate::modes::install)")
}

/// Tests get the registry's tables without installing them.
#[cfg(test)]
fn not_installed() -> &'static [LineTable] {
    TABLES.get_or_init(|| crate::modes::LINES)
}

/// A benchmarked command (or `;` sequence) as shown: its arguments joined by spaces, secrets
/// replaced. The test's name of a custom command, a `--command` line in the record.
pub fn command<A: AsRef<[u8]>>(args: &[A]) -> String {
    let mut words: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
        .collect();
    let secrets = command::secrets(&words);
    hide(&mut words, &secrets);
    words.join(" ")
}

/// `args` with each secret argument replaced (from where its secret starts, as [`command`]
/// does), for files that keep a command's words rather than its text: a trace. `None` when the
/// command holds no secret, so the common case copies nothing.
pub fn command_words<A: AsRef<[u8]>>(args: &[A]) -> Option<Vec<Vec<u8>>> {
    let secrets = command::secrets(args);
    if secrets.is_empty() {
        return None;
    }
    let mut words: Vec<Vec<u8>> = args.iter().map(|a| a.as_ref().to_vec()).collect();
    for s in &secrets {
        words[s.word].truncate(s.from);
        words[s.word].extend_from_slice(REDACTED.as_bytes());
    }
    Some(words)
}

/// The secret values `args` (a command or `;` sequence) carries, as sent: what [`scrub`] hides
/// in a server's reply.
pub fn secret_values<A: AsRef<[u8]>>(args: &[A]) -> Vec<Vec<u8>> {
    command::secrets(args)
        .into_iter()
        .map(|s| args[s.word].as_ref()[s.from..].to_vec())
        .filter(|v| !v.is_empty())
        .collect()
}

/// `text` with every occurrence of each of `secrets` replaced, longest first. For text the
/// process did not write itself, a server's error reply: it may echo an argument (Redis lists an
/// unknown command's arguments; `ACL SETUSER` quotes a malformed `#hash`).
pub fn scrub(text: &str, secrets: &[Vec<u8>]) -> String {
    let mut by_length: Vec<String> = secrets
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    by_length.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for s in &by_length {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    out
}

/// A command given as one line of whitespace-separated words (a `--command` value, a test's name
/// read from a file) with its secrets replaced; the spacing is kept.
pub fn command_text(line: &str) -> String {
    // Quoted as `--command` reads it (`cli::split_words`), so a quoted password is found whole;
    // a line that does not split that way (a test's name read from a file) by whitespace.
    let (spans, words): (Vec<(usize, usize)>, Vec<String>) =
        match crate::cli::split_words(line.as_bytes()) {
            Ok(words) => words
                .into_iter()
                .map(|w| {
                    let text = String::from_utf8_lossy(&w.bytes).into_owned();
                    ((w.span.start, w.span.end), text)
                })
                .unzip(),
            Err(_) => whitespace_words(line)
                .into_iter()
                .map(|(s, e)| ((s, e), line[s..e].to_string()))
                .unzip(),
        };
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let secrets = command::secrets(&refs);
    if secrets.is_empty() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut done = 0;
    for s in secrets {
        let (ws, we) = spans[s.word];
        if line[ws..we] == words[s.word] {
            out.push_str(&line[done..ws + s.from]);
        } else {
            // Quoted: the typed word's quotes and escapes go with the secret.
            out.push_str(&line[done..ws]);
            out.push_str(&words[s.word][..s.from]);
        }
        out.push_str(REDACTED);
        done = we;
    }
    out.push_str(&line[done..]);
    out
}

/// The byte ranges of `line`'s whitespace-separated words.
fn whitespace_words(line: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (pos, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(pos),
            (Some(s), true) => {
                spans.push((s, pos));
                start = None;
            }
            _ => {}
        }
    }
    spans
}

/// A server URI with its password replaced (the userinfo ends at the last `@`, as `-u` reads it;
/// text before its first `:` is the user, the rest the password, or all of it without `:`);
/// `None` when `s` is not such a URI or has no password.
pub fn uri(s: &str) -> Option<String> {
    if !server_uri(s) {
        return None;
    }
    let (scheme, rest) = s.split_once("://")?;
    let at = rest.rfind('@')?;
    let (userinfo, host) = (&rest[..at], &rest[at..]);
    let user = match userinfo.split_once(':') {
        Some((user, pw)) if !pw.is_empty() => format!("{user}:"),
        Some(_) => return None,
        None if userinfo.is_empty() => return None,
        None => String::new(),
    };
    Some(format!("{scheme}://{user}{REDACTED}{host}"))
}

/// Whether `s` starts with a scheme `-u` reads (`redis://`, `rediss://`, `valkey://`,
/// `valkeys://`, any case).
fn server_uri(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        ["redis", "rediss", "valkey", "valkeys"]
            .iter()
            .any(|k| scheme.eq_ignore_ascii_case(k))
    })
}

/// A record read back (`compare`, `report`, `merge`), redacted again where it shows a command
/// line or a test's name: records written before a spelling was covered must not print it
/// either. Redacting an already redacted record changes nothing.
pub fn record(doc: &mut Value) {
    if let Some(Value::Array(words)) = doc.get_mut("command_line") {
        let text: Vec<String> = words
            .iter()
            .map(|w| w.as_str().unwrap_or_default().to_string())
            .collect();
        *words = command_line(&text).into_iter().map(Value::from).collect();
    }
    let text_at = |v: Option<&mut Value>| {
        if let Some(Value::String(s)) = v {
            *s = command_text(s);
        }
    };
    for t in each(doc, "tests") {
        text_at(t.get_mut("name"));
    }
    for m in doc
        .get_mut("options")
        .map(|o| each(o, "mix"))
        .into_iter()
        .flatten()
    {
        text_at(m.get_mut("command"));
    }
    for s in each(doc, "shards") {
        for t in each(s, "tests") {
            text_at(t.get_mut("name"));
        }
    }
    let sentinel = doc.get_mut("sentinel");
    for s in sentinel.map(|s| each(s, "switches")).into_iter().flatten() {
        text_at(s.get_mut("test"));
    }
}

/// The elements of the array `v[key]` (none when it is missing or not an array).
fn each<'a>(v: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    v.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// An option value with its secret replaced, by where the option table says it hides.
fn option_value(kind: SecretValue, v: &str) -> String {
    match kind {
        SecretValue::Password => REDACTED.to_string(),
        // A value that is not a server URI (a mistyped scheme) may still hold a password:
        // hidden whole when it has a `@`.
        SecretValue::Uri => uri(v).unwrap_or_else(|| {
            if v.contains('@') && !server_uri(v) {
                REDACTED.to_string()
            } else {
                v.to_string()
            }
        }),
        SecretValue::Command => command_text(v),
        SecretValue::Shell => shell_text(v),
    }
}

/// Options of a server or client program whose value is a password (`valkey-server
/// --requirepass PW`, `valkey-cli -a PW`); `--name=PW` too.
const SHELL_PASSWORD_OPTIONS: &[&str] = &[
    "--requirepass",
    "--masterauth",
    "--primaryauth",
    "--tls-key-file-pass",
    "--tls-client-key-file-pass",
    "--pass",
    "--password",
    "--auth",
    "-a",
];

/// A shell command (`--fuzz-restart`) with its secrets replaced, spacing kept: the value of
/// each password option ([`SHELL_PASSWORD_OPTIONS`], either spelling), a `…PASS…=PW` or
/// `…AUTH…=PW` variable (`REDISCLI_AUTH=PW`), and a server URI's password. The word after a
/// password option is hidden whole, quotes and all, up to the next space.
pub fn shell_text(line: &str) -> String {
    let spans = whitespace_words(line);
    let mut out = String::with_capacity(line.len());
    let mut done = 0;
    let mut hide_next = false;
    for (s, e) in spans {
        let word = &line[s..e];
        let clean = if hide_next {
            hide_next = false;
            Some(REDACTED.to_string())
        } else if SHELL_PASSWORD_OPTIONS
            .iter()
            .any(|o| word.eq_ignore_ascii_case(o))
        {
            hide_next = true;
            None
        } else if let Some((name, _)) = word.split_once('=')
            && (SHELL_PASSWORD_OPTIONS
                .iter()
                .any(|o| name.eq_ignore_ascii_case(o))
                || ["PASS", "AUTH"]
                    .iter()
                    .any(|k| name.to_ascii_uppercase().contains(k)))
        {
            Some(format!("{name}={REDACTED}"))
        } else {
            uri(word)
        };
        if let Some(clean) = clean {
            out.push_str(&line[done..s]);
            out.push_str(&clean);
            done = e;
        }
    }
    out.push_str(&line[done..]);
    out
}

/// Replaces each secret's part of its word.
fn hide(words: &mut [String], secrets: &[command::Secret]) {
    for s in secrets {
        words[s.word].replace_range(s.from.., REDACTED);
    }
}

/// The value-taking option an argument names and where its attached value starts: `--rps=10`
/// → (`--rps`, after `=`); `-n100` → (`-n`, 2); `-a=PW` → (`-a`, 3); `-qa` → (`-a`, none: the
/// value is the next argument); a bundle of flags only → (`None`).
fn option_parts(arg: &str) -> (Option<String>, Option<usize>) {
    if let Some(long) = arg.strip_prefix("--") {
        return match long.split_once('=') {
            Some((n, _)) => (Some(format!("--{n}")), Some(n.len() + 3)),
            None => (Some(arg.to_string()), None),
        };
    }
    // Short options: flags may be bundled; the first one that takes a value takes the rest of
    // the argument (after an optional `=`), or the next argument when nothing is left.
    for (pos, c) in arg.char_indices().skip(1) {
        let name = format!("-{c}");
        if takes_value(&name) == Some(true) {
            let rest = pos + c.len_utf8();
            let rest = if arg[rest..].starts_with('=') {
                rest + 1
            } else {
                rest
            };
            return (Some(name), (rest < arg.len()).then_some(rest));
        }
    }
    (None, None)
}

#[cfg(test)]
mod tests;
