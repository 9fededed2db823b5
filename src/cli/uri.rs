//! `-u` server URIs: `redis://` / `valkey://` `[[user]:password@]host[:port][/db]`.
//!
//! Owns: splitting and percent-decoding the URI, validating port and db. Must not: resolve the
//! host or connect. Follows valkey-cli's `cli_common.c` reading of the userinfo (text before the
//! first `:` is the user, the rest the password; without `:` it is all password), but rejects what
//! that code silently mis-reads (bad port or db digits, unbracketed IPv6, broken `%` escapes).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::UsageError;
use super::value::{MAX_DBNUM, whole};

/// What a `-u` URI says. Every part is only `Some` when present, so a missing one leaves earlier
/// `-h`/`-p`/`-a`/`--user`/`--dbnum` values alone, as the reference's URI parser does
/// (`-p 6380 -u redis://host` connects to port 6380).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uri {
    /// The percent-decoded user, if the userinfo had a non-empty part before `:`.
    pub user: Option<Vec<u8>>,
    /// The percent-decoded password, if the URI had a non-empty one.
    pub password: Option<Vec<u8>>,
    /// Host name or address, IPv6 without its brackets; `None` when the URI has no host.
    pub host: Option<String>,
    /// `None` when the URI has no port.
    pub port: Option<u16>,
    /// The `/db` path, if present and non-empty.
    pub db: Option<u32>,
    /// `rediss://` or `valkeys://`: connect with TLS.
    pub tls: bool,
}

const FORM: &str =
    "expected redis://[[user]:password@]host[:port][/db] (or valkey://, rediss://, valkeys://)";

fn bad(what: impl std::fmt::Display) -> UsageError {
    UsageError(format!("invalid URI for -u: {what}"))
}

/// Parses one `-u` value. The whole URI is never echoed in errors: it may hold a password.
pub fn parse_uri(value: &OsStr) -> Result<Uri, UsageError> {
    let bytes = value.as_bytes();
    let Some(sep) = bytes.windows(3).position(|w| w == b"://") else {
        return Err(bad(FORM));
    };
    let tls = match bytes[..sep].to_ascii_lowercase().as_slice() {
        b"redis" | b"valkey" => false,
        b"rediss" | b"valkeys" => true,
        other => {
            return Err(bad(format_args!(
                "unknown scheme {:?} (expected redis://, valkey://, rediss:// or valkeys://)",
                String::from_utf8_lossy(other)
            )));
        }
    };
    let rest = &bytes[sep + 3..];

    // The last '@' ends the userinfo: a host and a digits-only db cannot contain one, while a
    // password may (valkey-cli takes the first '@' and so mis-reads such passwords).
    let (userinfo, rest) = match rest.iter().rposition(|&b| b == b'@') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (&rest[..0], rest),
    };
    let (user, password) = match userinfo.iter().position(|&b| b == b':') {
        Some(colon) => (&userinfo[..colon], &userinfo[colon + 1..]),
        None => (&userinfo[..0], userinfo),
    };
    let non_empty = |part: &[u8]| -> Result<Option<Vec<u8>>, UsageError> {
        if part.is_empty() {
            Ok(None)
        } else {
            percent_decode(part).map(Some)
        }
    };
    let user = non_empty(user)?;
    let password = non_empty(password)?;

    let (hostport, path) = match rest.iter().position(|&b| b == b'/') {
        Some(slash) => (&rest[..slash], &rest[slash + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    let hostport = std::str::from_utf8(hostport).map_err(|_| bad("the host is not valid UTF-8"))?;
    let (host, port) = split_host_port(hostport)?;
    let port = match port {
        None => None,
        Some(p) => Some(whole("the -u port", OsStr::new(p), 0, u64::from(u16::MAX))?),
    };
    let host = (!host.is_empty()).then(|| host.to_owned());
    let db = if path.is_empty() {
        None
    } else {
        Some(whole("the -u db", OsStr::from_bytes(path), 0, MAX_DBNUM)?)
    };
    Ok(Uri {
        user,
        password,
        host,
        port,
        db,
        tls,
    })
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` → host and the port text if any.
fn split_host_port(s: &str) -> Result<(&str, Option<&str>), UsageError> {
    if let Some(bracketed) = s.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(bad("missing \"]\" after the IPv6 address"));
        };
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(bad(format_args!(
                    "unexpected {after:?} after the IPv6 address (expected :port)"
                ))),
            },
        };
    }
    match s.split_once(':') {
        None => Ok((s, None)),
        Some((_, port)) if port.contains(':') => Err(bad(
            "an IPv6 address must be in brackets, e.g. redis://[::1]:6379",
        )),
        Some((host, port)) => Ok((host, Some(port))),
    }
}

/// `%XX` → the byte; everything else as is. Broken escapes are errors, as in valkey-cli.
fn percent_decode(s: &[u8]) -> Result<Vec<u8>, UsageError> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = |b: Option<&u8>| b.and_then(|&b| (b as char).to_digit(16));
            match (hex(s.get(i + 1)), hex(s.get(i + 2))) {
                (Some(hi), Some(lo)) => {
                    // Two hex digits are at most 0xff.
                    out.push((hi * 16 + lo) as u8);
                    i += 3;
                }
                _ => {
                    return Err(bad(
                        "bad percent-encoding in the user name or password (expected %XX)",
                    ));
                }
            }
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Uri {
        parse_uri(OsStr::new(s)).unwrap()
    }

    fn err(s: &str) -> String {
        parse_uri(OsStr::new(s)).unwrap_err().0
    }

    fn uri(
        user: Option<&str>,
        password: Option<&str>,
        host: Option<&str>,
        port: Option<u16>,
        db: Option<u32>,
    ) -> Uri {
        Uri {
            user: user.map(|u| u.as_bytes().to_vec()),
            password: password.map(|p| p.as_bytes().to_vec()),
            host: host.map(str::to_owned),
            port,
            db,
            tls: false,
        }
    }

    #[test]
    fn full_form() {
        assert_eq!(
            ok("redis://alice:s3cret@example.com:6380/4"),
            uri(
                Some("alice"),
                Some("s3cret"),
                Some("example.com"),
                Some(6380),
                Some(4)
            )
        );
    }

    #[test]
    fn valkey_scheme_and_case_insensitive_scheme() {
        assert_eq!(ok("valkey://h"), uri(None, None, Some("h"), None, None));
        assert_eq!(
            ok("VALKEY://h:1"),
            uri(None, None, Some("h"), Some(1), None)
        );
        assert_eq!(ok("Redis://h"), uri(None, None, Some("h"), None, None));
    }

    #[test]
    fn host_only_leaves_the_port_alone() {
        assert_eq!(
            ok("redis://10.0.0.1"),
            uri(None, None, Some("10.0.0.1"), None, None)
        );
    }

    #[test]
    fn empty_authority_leaves_host_and_port_alone() {
        assert_eq!(ok("redis://"), uri(None, None, None, None, None));
        assert_eq!(ok("redis:///7"), uri(None, None, None, None, Some(7)));
        assert_eq!(ok("redis://:6390"), uri(None, None, None, Some(6390), None));
    }

    #[test]
    fn trailing_slash_means_no_db() {
        assert_eq!(ok("redis://h/"), uri(None, None, Some("h"), None, None));
    }

    #[test]
    fn userinfo_without_colon_is_the_password() {
        assert_eq!(
            ok("redis://pw@h"),
            uri(None, Some("pw"), Some("h"), None, None)
        );
    }

    #[test]
    fn empty_user_before_colon_is_no_user() {
        assert_eq!(
            ok("redis://:pw@h"),
            uri(None, Some("pw"), Some("h"), None, None)
        );
    }

    #[test]
    fn password_keeps_later_colons() {
        assert_eq!(
            ok("redis://u:a:b@h"),
            uri(Some("u"), Some("a:b"), Some("h"), None, None)
        );
    }

    #[test]
    fn at_sign_in_password_uses_last_at() {
        assert_eq!(
            ok("redis://u:p@ss@h"),
            uri(Some("u"), Some("p@ss"), Some("h"), None, None)
        );
    }

    #[test]
    fn empty_password_is_none() {
        assert_eq!(
            ok("redis://u:@h"),
            uri(Some("u"), None, Some("h"), None, None)
        );
        assert_eq!(ok("redis://@h"), uri(None, None, Some("h"), None, None));
    }

    #[test]
    fn percent_decoding_of_user_and_password() {
        assert_eq!(
            ok("redis://us%65r%3a1:p%40ss%2Fw%3Ard@h"),
            uri(Some("user:1"), Some("p@ss/w:rd"), Some("h"), None, None)
        );
        let u = ok("redis://:%ff%00@h");
        assert_eq!(u.password, Some(vec![0xff, 0x00]));
    }

    #[test]
    fn bad_percent_encoding() {
        let want =
            "invalid URI for -u: bad percent-encoding in the user name or password (expected %XX)";
        assert_eq!(err("redis://:p%4@h"), want);
        assert_eq!(err("redis://:p%@h"), want);
        assert_eq!(err("redis://:p%zz@h"), want);
        assert_eq!(err("redis://u%g1:p@h"), want);
    }

    #[test]
    fn ipv6_in_brackets() {
        assert_eq!(
            ok("redis://[::1]:6380"),
            uri(None, None, Some("::1"), Some(6380), None)
        );
        assert_eq!(
            ok("redis://[fe80::1]/2"),
            uri(None, None, Some("fe80::1"), None, Some(2))
        );
        assert_eq!(
            ok("redis://u:p@[::1]:7000/3"),
            uri(Some("u"), Some("p"), Some("::1"), Some(7000), Some(3))
        );
    }

    #[test]
    fn ipv6_errors() {
        assert_eq!(
            err("redis://[::1:6380"),
            "invalid URI for -u: missing \"]\" after the IPv6 address"
        );
        assert_eq!(
            err("redis://[::1]6380"),
            "invalid URI for -u: unexpected \"6380\" after the IPv6 address (expected :port)"
        );
        assert_eq!(
            err("redis://::1"),
            "invalid URI for -u: an IPv6 address must be in brackets, e.g. redis://[::1]:6379"
        );
    }

    #[test]
    fn db_is_parsed() {
        assert_eq!(ok("redis://h:1/15").db, Some(15));
        assert_eq!(ok("redis://h/2147483647").db, Some(2_147_483_647));
    }

    #[test]
    fn bad_db() {
        assert_eq!(
            err("redis://h/x1"),
            "invalid value \"x1\" for the -u db: expected a whole number from 0 to 2147483647"
        );
        assert_eq!(
            err("redis://h/2147483648"),
            "invalid value \"2147483648\" for the -u db: expected a whole number from 0 to 2147483647"
        );
        assert_eq!(
            err("redis://h/1/2"),
            "invalid value \"1/2\" for the -u db: expected a whole number from 0 to 2147483647"
        );
    }

    #[test]
    fn bad_port() {
        assert_eq!(
            err("redis://h:65536"),
            "invalid value \"65536\" for the -u port: expected a whole number from 0 to 65535"
        );
        assert_eq!(
            err("redis://h:"),
            "invalid value \"\" for the -u port: expected a whole number from 0 to 65535"
        );
        assert_eq!(
            err("redis://h:x"),
            "invalid value \"x\" for the -u port: expected a whole number from 0 to 65535"
        );
    }

    #[test]
    fn tls_schemes_turn_tls_on() {
        let tls = |u: Uri| Uri { tls: true, ..u };
        assert_eq!(
            ok("rediss://h"),
            tls(uri(None, None, Some("h"), None, None))
        );
        assert_eq!(
            ok("valkeys://:p%40ss@[::1]:6380/2"),
            tls(uri(None, Some("p@ss"), Some("::1"), Some(6380), Some(2)))
        );
        assert_eq!(
            ok("REDISS://h"),
            tls(uri(None, None, Some("h"), None, None))
        );
        assert!(!ok("redis://h").tls);
    }

    #[test]
    fn unknown_scheme_rejected() {
        assert_eq!(
            err("http://h"),
            "invalid URI for -u: unknown scheme \"http\" (expected redis://, valkey://, rediss:// or valkeys://)"
        );
    }

    #[test]
    fn missing_scheme_rejected() {
        assert_eq!(
            err("h:6379"),
            "invalid URI for -u: expected redis://[[user]:password@]host[:port][/db] (or valkey://, rediss://, valkeys://)"
        );
    }

    #[test]
    fn non_utf8_host_rejected() {
        let raw = OsStr::from_bytes(b"redis://h\xff");
        assert_eq!(
            parse_uri(raw).unwrap_err().0,
            "invalid URI for -u: the host is not valid UTF-8"
        );
    }

    #[test]
    fn errors_never_echo_the_password() {
        for s in [
            "redis://u:hunter2@h:x",
            "redis://u:hunter2@h/x",
            "redis://u:hunter2@[::1",
        ] {
            assert!(!err(s).contains("hunter2"), "{s}");
        }
    }
}
