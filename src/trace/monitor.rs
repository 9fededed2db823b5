//! `valkey-cli monitor` / `redis-cli monitor` text: the traces people already have.
//!
//! A line is `1700000000.123456 [0 127.0.0.1:54321] "SET" "k" "v"`: the time the server executed
//! the command (seconds and exactly six digits of µs), the database and the client (`ip:port`,
//! `[ipv6]:port`, `unix:/path`, or `lua` for a command run by a script), then every argument in
//! double quotes, escaped as the server's `sdscatrepr` escapes (`\\ \" \n \r \t \a \b` and `\xHH`
//! for any other unprintable byte). The MONITOR stream itself sends each line as a simple string
//! (`+…`); `valkey-cli` prints `OK` first. Both are accepted.

use super::{Entry, Payload};

/// Parses one MONITOR line into `entry` (all but `seq`). `Ok(false)`: a line that is not a
/// command (`OK`, an empty line); `Err`: why the line is not a MONITOR line.
pub fn parse_monitor_line(line: &[u8], entry: &mut Entry) -> Result<bool, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"+").unwrap_or(line);
    if line.is_empty() || line == b"OK" {
        return Ok(false);
    }
    let space = line
        .iter()
        .position(|&b| b == b' ')
        .ok_or("no space after the time")?;
    entry.time_us = parse_time(&line[..space])?;
    let rest = &line[space + 1..];
    let rest = rest
        .strip_prefix(b"[")
        .ok_or("no `[db client]` after the time")?;
    let db_end = rest
        .iter()
        .position(|&b| b == b' ')
        .ok_or("no client after the database")?;
    entry.db = std::str::from_utf8(&rest[..db_end])
        .ok()
        .and_then(|d| d.parse().ok())
        .ok_or("the database is not a number")?;
    let rest = &rest[db_end + 1..];
    // The client ends at the `] "` before the first argument (an IPv6 client has its own `]`).
    let close = find(rest, b"] \"").ok_or("no `] \"` before the first argument")?;
    let client = std::str::from_utf8(&rest[..close]).map_err(|_| "a client that is not UTF-8")?;
    entry.client.clear();
    // The common case (`ip:port`) copied whole; whitespace (a unix socket's path may have it)
    // char by char.
    if client.bytes().all(|b| b.is_ascii_graphic()) {
        entry.client.push_str(client);
    } else {
        entry.client.extend(
            client
                .chars()
                .map(|c| if c.is_whitespace() { '_' } else { c }),
        );
    }
    if !matches!(entry.payload, Payload::Command(_)) {
        entry.payload = Payload::Command(Vec::new());
    }
    let Payload::Command(args) = &mut entry.payload else {
        unreachable!("set to a command above")
    };
    parse_args(&rest[close + 2..], args)?;
    Ok(true)
}

/// `1700000000.123456` → µs since the epoch.
fn parse_time(text: &[u8]) -> Result<i64, String> {
    let text = std::str::from_utf8(text).map_err(|_| "a time that is not UTF-8")?;
    let (secs, micros) = text.split_once('.').ok_or("a time without `.µs`")?;
    if micros.len() != 6 || !micros.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "time {text:?}: expected six digits after the point"
        ));
    }
    let secs: i64 = secs
        .parse()
        .map_err(|_| format!("time {text:?}: not a number of seconds"))?;
    let micros: i64 = micros.parse().unwrap_or(0);
    secs.checked_mul(1_000_000)
        .and_then(|s| s.checked_add(micros))
        .ok_or_else(|| format!("time {text:?} out of range"))
}

/// The quoted arguments after the client, into `args` (buffers reused).
/// A MONITOR line's arguments (`"SET" "k" "v"`, from the first quote to the line's end) into
/// `args`; `Err`: why they do not parse (an argument not closed, no space between two).
pub(crate) fn parse_args(mut text: &[u8], args: &mut Vec<Vec<u8>>) -> Result<(), String> {
    let mut n = 0;
    loop {
        text = text
            .strip_prefix(b"\"")
            .ok_or_else(|| format!("argument {} does not start with `\"`", n + 1))?;
        if n == args.len() {
            args.push(Vec::new());
        }
        let arg = &mut args[n];
        arg.clear();
        let used = unquote(text, arg).ok_or_else(|| format!("argument {} is not closed", n + 1))?;
        n += 1;
        text = &text[used..];
        if text.is_empty() {
            break;
        }
        text = text
            .strip_prefix(b" ")
            .ok_or_else(|| format!("no space after argument {n}"))?;
    }
    args.truncate(n);
    Ok(())
}

/// One argument's text after its opening quote, unescaped into `out`: how many bytes it used
/// (closing quote included), or `None` when it is not closed.
fn unquote(text: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let mut i = 0;
    loop {
        // What comes before the next quote or escape is copied as one run.
        let run = text[i..].iter().position(|&b| b == b'"' || b == b'\\')?;
        out.extend_from_slice(&text[i..i + run]);
        i += run;
        if text[i] == b'"' {
            return Some(i + 1);
        }
        let (byte, used) = escape(&text[i + 1..])?;
        out.push(byte);
        i += 1 + used;
    }
}

/// The byte an escape after `\` stands for, and how many bytes it took.
fn escape(text: &[u8]) -> Option<(u8, usize)> {
    let byte = match *text.first()? {
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'a' => 0x07,
        b'b' => 0x08,
        b'x' => {
            let hex = std::str::from_utf8(text.get(1..3)?).ok()?;
            return Some((u8::from_str_radix(hex, 16).ok()?, 3));
        }
        other => other, // `\\`, `\"`
    };
    Some((byte, 1))
}

/// Where `needle` first starts in `haystack`: each place its first byte is, checked for the
/// rest (not a comparison at every offset).
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    loop {
        let at = from + haystack[from..].iter().position(|&b| b == first)?;
        if haystack[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
}
