//! What the main command line has said so far, as the option table's entries change it.
//!
//! Kept apart from the table (`flags/`) and the loop (`parse.rs`) so that both can name it without
//! importing each other. Public for the modes' entries (`ModeArgs`), which change their own
//! options (`args.mode_mut`) and read what else was given. The endpoint is resolved at the end because `-s` wins over `-h`, `-p`
//! and `-u` whatever the order.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{Args, DEFAULT_HOST, DEFAULT_PORT, UsageError};

/// Everything seen so far.
pub struct State {
    pub args: Args,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) socket: Option<PathBuf>,
    /// The password from [`super::PASSWORD_ENV`], if set and not empty.
    pub(crate) env_password: Option<OsString>,
    /// The first recognised-but-unsupported option, refused once the whole line has parsed.
    pub(crate) unsupported: Option<UsageError>,
    /// Every option given, by the spelling its table entry lists first, in order: the
    /// cross-option checks ask whether an option was given at all (a value equal to the
    /// default still contradicts another option).
    pub(crate) given: Vec<&'static str>,
}

impl State {
    /// Whether the option whose first spelling is `name` was given.
    pub fn was_given(&self, name: &str) -> bool {
        self.given.contains(&name)
    }
}

impl Default for State {
    fn default() -> Self {
        State {
            args: Args::default(),
            host: DEFAULT_HOST.to_owned(),
            port: DEFAULT_PORT,
            socket: None,
            env_password: None,
            unsupported: None,
            given: Vec::new(),
        }
    }
}
