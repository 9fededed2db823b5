//! The connection options a subcommand shares with the main command line (`replay`, `capture`):
//! where the server is (`-h`, `-p`, `-s`, `-u`), who we are to it (`-a`, `--user`) and TLS
//! (`--tls`, `--cacert`, `--cert`, `--key`, `--insecure`, ...).
//!
//! Why the main table's own entries rather than copies: each option is then spelled, checked
//! (an IPv6 `-h [::1]`, a `rediss://` URI, a port range), documented and redacted (`-a`, a `-u`
//! password) in one place, and a subcommand gains what the main line gains. The entries apply
//! to the main parser's [`State`], kept here whole; the subcommand reads the outcome through
//! [`ConnectionArgs`]' accessors.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::flag::{Action, Doc, Flag, SecretValue, ValueOf, help_block, parse_subcommand_sharing};
use super::state::State;
use super::{Args, TlsArgs};

/// The shared entries by their first spelling, in help order.
const SHARED: &[&str] = &[
    "-h",
    "-p",
    "-s",
    "-a",
    "--user",
    "-u",
    "--tls",
    "--sni",
    "--cacert",
    "--cacertdir",
    "--insecure",
    "--tls-verify-name",
    "--cert",
    "--key",
    "--tls-ciphers",
    "--tls-ciphersuites",
];

/// The main table's entry spelled `name`, if it is one of the shared ones.
fn find(name: &str) -> Option<(&'static str, &'static Flag<State>)> {
    super::flags::find(name).filter(|(_, f)| SHARED.contains(&f.doc.names[0]))
}

/// The shared entries' descriptions, in help order (a subcommand's help, completions, man page).
pub fn docs() -> impl Iterator<Item = &'static Doc> {
    SHARED.iter().filter_map(|n| find(n)).map(|(_, f)| &f.doc)
}

/// A subcommand whose options are the shared connection entries and a table of its own
/// (`replay`, `capture`): its help and its parser, one shape for both.
pub struct Subcommand<S: 'static> {
    /// How it is spelled after `respbench` (errors end with "see respbench NAME --help").
    pub name: &'static str,
    /// Its own options (after the shared ones in the help).
    pub own: &'static [Flag<S>],
    /// Where its arguments keep the shared options.
    pub conn: fn(&mut S) -> &mut ConnectionArgs,
}

impl<S: Default> Subcommand<S> {
    /// Its options in help order: the shared connection entries, then its own.
    pub fn docs(&self) -> Vec<&'static Doc> {
        docs().chain(self.own.iter().map(|f| &f.doc)).collect()
    }

    /// Its `--help`: `head`, the options, `tail`.
    pub fn help_text(&self, head: &str, tail: &str) -> String {
        format!("{head}{}{tail}", help_block(self.docs(), 1, 22))
    }

    /// What its usage errors end with.
    pub fn see(&self) -> String {
        format!("see respbench {} --help", self.name)
    }

    /// Its arguments from `argv` (those after its name), each that is not an option handed to
    /// `positional`; `Ok(None)` when the help was asked for.
    pub fn parse(
        &self,
        argv: Vec<OsString>,
        positional: impl FnMut(&mut S, OsString) -> Result<(), String>,
    ) -> Result<Option<S>, String> {
        let mut a = S::default();
        let conn = self.conn;
        let shared = |a: &mut S, name: &str, value: &mut ValueOf<'_>| conn(a).apply(name, value);
        let help =
            parse_subcommand_sharing(self.own, argv, &mut a, positional, shared, &self.see())?;
        Ok((!help).then_some(a))
    }
}

/// Whether the shared option spelled `name` takes a value (`None`: not a shared option).
pub fn takes_value(name: &str) -> Option<bool> {
    find(name).map(|(_, f)| f.doc.value.taken())
}

/// Where the shared option spelled `name` may carry a secret (`-a`, a `-u` URI's password).
pub fn secret_value(name: &str) -> Option<SecretValue> {
    find(name).and_then(|(_, f)| f.doc.secret)
}

/// The connection options as given (defaults: 127.0.0.1:6379, plain TCP, no password).
#[derive(Default)]
pub struct ConnectionArgs {
    st: State,
}

impl Clone for ConnectionArgs {
    fn clone(&self) -> Self {
        let mut st = State {
            args: self.st.args.clone(),
            host: self.st.host.clone(),
            port: self.st.port,
            socket: self.st.socket.clone(),
            ..State::default()
        };
        st.given = self.st.given.clone();
        Self { st }
    }
}

/// Never shows the password: only where the server is and whether TLS is on.
impl std::fmt::Debug for ConnectionArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionArgs")
            .field("host", &self.st.host)
            .field("port", &self.st.port)
            .field("socket", &self.st.socket)
            .field("tls", &self.st.args.tls.enabled)
            .finish_non_exhaustive()
    }
}

impl ConnectionArgs {
    /// Applies the shared option spelled `name`, taking its value from `value` when it has one.
    /// `None`: `name` is not a shared option (the caller's own table, or unknown).
    pub fn apply(
        &mut self,
        name: &str,
        value: &mut dyn FnMut() -> Result<OsString, String>,
    ) -> Option<Result<(), String>> {
        let (spelling, flag) = find(name)?;
        let Action::Set(set) = flag.action else {
            return None;
        };
        Some((|| {
            let v = if flag.doc.value.taken() {
                value()?
            } else {
                OsString::new()
            };
            set(&mut self.st, spelling, &v).map_err(|e| e.0)?;
            self.st.given.push(flag.doc.names[0]);
            Ok(())
        })())
    }

    pub fn host(&self) -> &str {
        &self.st.host
    }

    pub fn port(&self) -> u16 {
        self.st.port
    }

    /// `-s`: wins over `-h`, `-p` and `-u` whatever the order (as on the main line).
    pub fn socket(&self) -> Option<&Path> {
        self.st.socket.as_deref()
    }

    pub fn password(&self) -> Option<&[u8]> {
        self.st.args.password.as_deref()
    }

    pub fn user(&self) -> Option<&[u8]> {
        self.st.args.user.as_deref()
    }

    pub fn tls(&self) -> &TlsArgs {
        &self.st.args.tls
    }

    /// A `-u` URI's `/db` (0 when none was given).
    pub fn db(&self) -> u32 {
        self.st.args.dbnum
    }

    /// The main line's arguments these options filled (endpoint, credentials, TLS), for the
    /// one translation of TLS options into the engine's (`plan::tls_options`).
    pub fn args(&self) -> Args {
        let mut a = self.st.args.clone();
        a.endpoint = match &self.st.socket {
            Some(p) => super::Endpoint::Unix(PathBuf::from(p)),
            None => super::Endpoint::Tcp {
                host: self.st.host.clone(),
                port: self.st.port,
            },
        };
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(c: &mut ConnectionArgs, name: &str, v: &str) -> Option<Result<(), String>> {
        let v = OsString::from(v);
        c.apply(name, &mut || Ok(v.clone()))
    }

    #[test]
    fn shared_entries_apply_as_on_the_main_line() {
        let mut c = ConnectionArgs::default();
        assert!(apply(&mut c, "-h", "[::1]").unwrap().is_ok());
        assert_eq!(c.host(), "::1");
        assert!(
            apply(&mut c, "-u", "rediss://bob:pw@h:7000")
                .unwrap()
                .is_ok()
        );
        assert_eq!((c.host(), c.port(), c.tls().enabled), ("h", 7000, true));
        assert_eq!(c.password(), Some(b"pw".as_slice()));
        assert_eq!(c.user(), Some(b"bob".as_slice()));
        assert!(apply(&mut c, "--cacert", "ca.crt").unwrap().is_ok());
        assert_eq!(c.tls().cacert.as_deref(), Some(Path::new("ca.crt")));
        assert!(apply(&mut c, "-p", "70000").unwrap().is_err());
        // Not shared: the subcommand's own table or unknown.
        assert!(apply(&mut c, "-c", "5").is_none());
        assert!(apply(&mut c, "--nope", "").is_none());
        assert!(!format!("{c:?}").contains("pw"));
        assert_eq!(secret_value("-a"), Some(SecretValue::Password));
        assert_eq!(docs().count(), SHARED.len());
    }
}
