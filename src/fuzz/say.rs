//! The fuzzer's log lines at `--fuzz-loglevel`, in the reference's shape: `[HH:MM:SS] [LEVEL] text`,
//! errors on stderr, the rest on stdout (or stderr too when `--json -` owns stdout). The clock is
//! UTC: respbench has no time-zone database, and a log compared across machines reads better so.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use super::cli::FuzzLogLevel;

/// Where and how much the fuzzer says.
#[derive(Clone, Copy, Debug)]
pub struct Say {
    pub level: FuzzLogLevel,
    /// Everything goes to stderr (stdout carries the record).
    pub stderr_only: bool,
}

impl Say {
    fn line(&self, level: FuzzLogLevel, tag: &str, text: &str) {
        if level > self.level {
            return;
        }
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let line = format!("[{h:02}:{m:02}:{s:02}] [{tag}] {text}\n");
        // A closed stdout or stderr must not end the fuzzing: the log lines are a courtesy.
        let _ = match level == FuzzLogLevel::Error || self.stderr_only {
            true => std::io::stderr().lock().write_all(line.as_bytes()),
            false => std::io::stdout().lock().write_all(line.as_bytes()),
        };
    }

    pub fn error(&self, text: &str) {
        self.line(FuzzLogLevel::Error, "ERROR", text);
    }

    pub fn info(&self, text: &str) {
        self.line(FuzzLogLevel::Info, "INFO ", text);
    }

    pub fn debug(&self, text: &str) {
        self.line(FuzzLogLevel::Debug, "DEBUG", text);
    }
}
