//! The command line as the record shows it: every password replaced by `<redacted>`.
//!
//! Records are shared (CI artefacts, bug reports), so a password must never reach one: the value
//! of `-a` (also attached, `-asecret`, or at the end of a bundle, `-qasecret`), of `--pass` and
//! `--sentinel-password` should they ever exist, and the password part of any
//! `redis://`/`rediss://`/`valkey://`/`valkeys://` URI anywhere on the line. Option values are
//! found with the option table, so `-n 5 -a -q` redacts `-q` (it *is* the password, as the parser
//! reads it) and a custom command's own arguments are left alone. Environment variables (such as
//! `REDISCLI_AUTH`) are never recorded at all.

use std::ffi::OsString;

use crate::cli::{is_secret, takes_value};

/// What replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// `argv` (program name first) as text with secrets replaced.
pub fn command_line(argv: &[OsString]) -> Vec<String> {
    let mut out: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut i = 1;
    // Options end at `--` or the first argument that is not an option (as `cli::parse`).
    while i < out.len() {
        let arg = out[i].clone();
        if arg == "--" || !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += 1;
        let (name, attached) = option_parts(&arg);
        let Some(name) = name else { continue };
        if takes_value(&name) != Some(true) {
            continue;
        }
        let secret = is_secret(&name);
        match attached {
            Some(at) => {
                if secret {
                    out[i - 1] = format!("{}{REDACTED}", &arg[..at]);
                }
            }
            None => {
                if secret && i < out.len() {
                    out[i] = REDACTED.to_string();
                }
                i += 1;
            }
        }
    }
    for a in &mut out {
        if let Some(clean) = redact_uri(a) {
            *a = clean;
        }
    }
    out
}

/// The value-taking option an argument names and where its attached value starts: `--rps=10`
/// → (`--rps`, after `=`); `-n100` → (`-n`, 2); `-qa` → (`-a`, none: the value is the next
/// argument); a bundle of flags only → (`None`).
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

/// A server URI with its password replaced (the userinfo ends at the last `@`, as `-u` reads
/// it; text before its first `:` is the user, the rest the password, or all of it without `:`);
/// `None` when `s` is not such a URI or has no password.
fn redact_uri(s: &str) -> Option<String> {
    let (scheme, rest) = s.split_once("://")?;
    let known = ["redis", "rediss", "valkey", "valkeys"];
    if !known.contains(&scheme.to_ascii_lowercase().as_str()) {
        return None;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(args: &[&str]) -> Vec<String> {
        let mut argv = vec![OsString::from("respbench")];
        argv.extend(args.iter().map(OsString::from));
        command_line(&argv)[1..].to_vec()
    }

    #[test]
    fn dash_a_in_every_spelling() {
        assert_eq!(redacted(&["-a", "s3cret", "-q"]), ["-a", REDACTED, "-q"]);
        assert_eq!(redacted(&["-as3cret"]), [format!("-a{REDACTED}")]);
        assert_eq!(redacted(&["-a=s3cret"]), [format!("-a={REDACTED}")]);
        assert_eq!(redacted(&["-qa", "s3cret"]), ["-qa", REDACTED]);
        assert_eq!(redacted(&["-qas3cret"]), [format!("-qa{REDACTED}")]);
        // A password that looks like an option is still the password.
        assert_eq!(
            redacted(&["-a", "-q", "-n", "5"]),
            ["-a", REDACTED, "-n", "5"]
        );
        assert_eq!(
            redacted(&["--sentinel-password=x"]),
            [format!("--sentinel-password={REDACTED}")]
        );
        assert_eq!(
            redacted(&["--sentinel-password", "x"]),
            ["--sentinel-password", REDACTED]
        );
    }

    #[test]
    fn other_values_and_the_custom_command_stay() {
        assert_eq!(
            redacted(&["-n", "-a", "--user", "bob", "-c50", "set", "-a", "x"]),
            ["-n", "-a", "--user", "bob", "-c50", "set", "-a", "x"],
            "-n takes -a as its value; after `set` it is the command"
        );
        assert_eq!(redacted(&["--", "-a", "x"]), ["--", "-a", "x"]);
        assert_eq!(redacted(&["-a"]), ["-a"], "no value to hide");
    }

    #[test]
    fn uri_passwords() {
        let r = |u: &str| redacted(&["-u", u])[1].clone();
        assert_eq!(
            r("redis://bob:s3cret@h:6380/2"),
            format!("redis://bob:{REDACTED}@h:6380/2")
        );
        assert_eq!(r("rediss://:s3cret@h"), format!("rediss://:{REDACTED}@h"));
        assert_eq!(r("valkey://s3cret@h"), format!("valkey://{REDACTED}@h"));
        assert_eq!(
            r("VALKEYS://u:p@ss@[::1]:1"),
            format!("VALKEYS://u:{REDACTED}@[::1]:1"),
            "the last @ ends the userinfo"
        );
        assert_eq!(r("redis://h:6379"), "redis://h:6379");
        assert_eq!(r("redis://bob:@h"), "redis://bob:@h");
        assert_eq!(r("http://u:p@h"), "http://u:p@h");
    }

    #[test]
    fn the_program_name_stays() {
        let argv = [OsString::from("/usr/bin/respbench"), OsString::from("-q")];
        assert_eq!(command_line(&argv), ["/usr/bin/respbench", "-q"]);
    }
}
