//! Writing an output file so that it is either the earlier file or the whole new one, never empty
//! or half written: the `--json` record and the `--html` report of a run, and the `-o` output of
//! `compare`, `report` and `recover` (`emit`, which also writes to stdout).
//!
//! Why: a run used to open its output with truncation when it started and write it when it ended,
//! so a run killed in between (SIGKILL, the OOM killer, a power cut) left an empty file and the
//! previous record at that path was gone. Now the text goes to a temporary file in the same
//! directory (a rename across file systems is not atomic), which is synced and then renamed over
//! the path; the directory is synced after the rename so the new name survives a power cut too.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` atomically (see the module comment).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_path(path);
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written?;
    sync_dir(path);
    Ok(())
}

/// Checks, before a run starts, that `path` can be written later by [`write`], without touching
/// an earlier file there: its directory takes a new file, and it is not a directory itself.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::other("it is a directory"));
    }
    let probe = temp_path(path);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    fs::remove_file(&probe)
}

/// Syncs the directory holding `path` (its entries: a rename, a new or removed file). Best
/// effort: some file systems refuse to sync a directory, and the data itself is synced already.
pub fn sync_dir(path: &Path) {
    if let Ok(d) = File::open(parent(path)) {
        let _ = d.sync_all();
    }
}

/// The directory holding `path` (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A hidden temporary name beside `path`, unique to this process.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent(path).join(format!(".{name}.{}.tmp", std::process::id()))
}

/// Writes `text` to `-o FILE` or stdout (no `-o`, or `-o -`). A closed stdout is not an error
/// (`| head`).
pub fn emit(output: Option<&str>, text: &str) -> Result<(), String> {
    match output.filter(|o| !crate::cli::is_stdout(Path::new(o))) {
        Some(path) => {
            write(Path::new(path), text.as_bytes()).map_err(|e| format!("cannot write {path}: {e}"))
        }
        None => {
            let mut out = io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write to stdout: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("respbench-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        fs::write(&path, "earlier").unwrap();
        check_writable(&path).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "earlier",
            "the check keeps it"
        );
        write(&path, b"new record").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new record");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.json"], "no temporary file left");
        assert!(check_writable(&dir).is_err(), "a directory is refused");
        fs::remove_dir_all(&dir).unwrap();
    }
}
