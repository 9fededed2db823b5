//! Which words of a benchmarked command are secrets, by command name and position.
//!
//! The bytes sent are never changed: this only says what a report, a record or a message must
//! not show. The rules follow the commands' syntax (Redis 7 / Valkey 9):
//! `AUTH [user] PW`, `HELLO [proto] … AUTH user PW`, `CONFIG SET param value …` for the
//! password parameters, `ACL SETUSER user … >PW <PW #hash !hash`,
//! `MIGRATE host port key db timeout … AUTH PW | AUTH2 user PW … [KEYS …]`, and Sentinel's
//! `SENTINEL SET name auth-pass PW` / `SENTINEL CONFIG SET sentinel-pass PW`. A `;` sequence
//! (with its repeat counts) is read command by command, as `workload::template` reads it.

/// `CONFIG SET` parameters whose value is a password (compared without case).
const PASSWORD_PARAMS: &[&str] = &[
    "requirepass",
    "masterauth",
    "primaryauth",
    "tls-key-file-pass",
    "tls-client-key-file-pass",
];

/// Sentinel's password options (`SENTINEL SET`'s `auth-pass`, `SENTINEL CONFIG SET`'s
/// `sentinel-pass`).
const SENTINEL_PASSWORD_PARAMS: &[&str] = &["auth-pass", "sentinel-pass"];

/// A secret inside a command line: the word that holds it and the byte where it starts (ACL's
/// `>PW` keeps its `>`, which says what the rule does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Secret {
    pub word: usize,
    pub from: usize,
}

/// The secrets of `words`: one command or a `;`-separated sequence of them, each optionally
/// starting with a repeat count.
pub(super) fn secrets<W: AsRef<[u8]>>(words: &[W]) -> Vec<Secret> {
    let mut out = Vec::new();
    let mut start = 0;
    for end in 0..=words.len() {
        if end < words.len() && words[end].as_ref() != b";" {
            continue;
        }
        let mut first = start;
        // A repeat count (`3 auth PW`), as the sequence grammar reads one.
        if words[first..end].first().is_some_and(|w| {
            w.as_ref()
                .first()
                .is_some_and(|c| (b'1'..=b'9').contains(c))
        }) {
            first += 1;
        }
        one_command(&words[first..end], first, &mut out);
        start = end + 1;
    }
    out
}

/// The secrets of one command (`cmd[0]` its name); word indexes are offset by `base`.
fn one_command<W: AsRef<[u8]>>(cmd: &[W], base: usize, out: &mut Vec<Secret>) {
    let is = |i: usize, name: &str| {
        cmd.get(i)
            .is_some_and(|w| w.as_ref().eq_ignore_ascii_case(name.as_bytes()))
    };
    let mut whole = |i: usize| {
        if i < cmd.len() {
            out.push(Secret {
                word: base + i,
                from: 0,
            });
        }
    };
    let n = cmd.len();
    if is(0, "auth") {
        // `AUTH PW` or `AUTH user PW`; any other shape is unknown: every argument is hidden (in
        // `AUTH PW x y` the password is the first).
        for i in (if n == 3 { 2 } else { 1 })..n {
            whole(i);
        }
    } else if is(0, "hello") {
        match hello_passwords(cmd) {
            Some(passwords) => passwords.into_iter().for_each(&mut whole),
            // `HELLO … AUTH` in a shape the syntax does not have: all of it after the name.
            None => (1..n).for_each(&mut whole),
        }
    } else if is(0, "config") && is(1, "set") {
        pairs(cmd, 2, PASSWORD_PARAMS, &mut whole);
    } else if is(0, "sentinel") && (is(1, "set") || is(1, "config") && is(2, "set")) {
        // `SENTINEL SET name param value …`, `SENTINEL CONFIG SET param value …`: pairs from 3.
        pairs(cmd, 3, SENTINEL_PASSWORD_PARAMS, &mut whole);
    } else if is(0, "acl") && is(1, "setuser") {
        for (i, w) in cmd.iter().enumerate().skip(3) {
            if w.as_ref().len() > 1 && matches!(w.as_ref()[0], b'>' | b'<' | b'#' | b'!') {
                out.push(Secret {
                    word: base + i,
                    from: 1,
                });
            }
        }
    } else if is(0, "migrate") {
        // Options start after `host port key db timeout`; KEYS ends them (keys may be named
        // anything, `auth` too).
        let mut i = 6;
        while i < n && !is(i, "keys") {
            if is(i, "auth") {
                whole(i + 1);
                i += 2;
            } else if is(i, "auth2") {
                whole(i + 2);
                i += 3;
            } else {
                i += 1;
            }
        }
    }
}

/// Where `HELLO [protover [AUTH user PW] [SETNAME name]]` has its passwords; `None` when it has
/// an `AUTH` in another shape (a lone word after it, or words the syntax does not have).
fn hello_passwords<W: AsRef<[u8]>>(cmd: &[W]) -> Option<Vec<usize>> {
    let is = |i: usize, name: &str| {
        cmd.get(i)
            .is_some_and(|w| w.as_ref().eq_ignore_ascii_case(name.as_bytes()))
    };
    let n = cmd.len();
    if !(1..n).any(|i| is(i, "auth")) {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut i = 2; // after the protocol version
    while i < n {
        if is(i, "auth") && i + 2 < n {
            out.push(i + 2);
            i += 3;
        } else if is(i, "setname") && i + 1 < n {
            i += 2;
        } else {
            return None;
        }
    }
    Some(out)
}

/// `name value` pairs from word `from`: the value of a name in `params` is a secret.
fn pairs<W: AsRef<[u8]>>(cmd: &[W], from: usize, params: &[&str], whole: &mut impl FnMut(usize)) {
    let mut i = from;
    while i + 1 < cmd.len() {
        let name = cmd[i].as_ref();
        if params
            .iter()
            .any(|p| name.eq_ignore_ascii_case(p.as_bytes()))
        {
            whole(i + 1);
        }
        i += 2;
    }
}
