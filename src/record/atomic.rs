//! The one writer of every output file of every mode (`--json`, `--html`, `compare -o`, `report
//! -o`, `merge -o`, `recover -o`, memtier's `--json-out-file`/`--out-file`/`--hdr-file-prefix`,
//! replay's outputs, the fuzz reproducer): either the earlier file or the whole new one, never
//! empty or half written, and never harm to what the path names when it is not a file.
//!
//! Why: a run used to open its output with truncation when it started and write it when it ended,
//! so a run killed in between (SIGKILL, the OOM killer, a power cut) left an empty file and the
//! previous record at that path was gone. Now the text goes to a temporary file in the same
//! directory (a rename across file systems is not atomic), which is synced and then renamed over
//! the path; the directory is synced after the rename so the new name survives a power cut too.
//!
//! What the path names decides how it is written (a rename replaces whatever the name was: as
//! root, `--json /dev/null` once replaced the system's `/dev/null` with a regular file):
//! - nothing yet, or a regular file: replaced whole, as above;
//! - a symbolic link: followed, and its target written by these rules (the link stays);
//! - a character device or a FIFO: written in place (opened for appending, never truncated nor
//!   replaced); a FIFO with no reader is waited for a few seconds, then refused;
//! - `/proc/self/fd/N` (what `/dev/stdout` links to): written in place, as the open file it is;
//! - a directory, a socket or a block device: refused with one line.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a FIFO without a reader is waited for before it is refused.
const FIFO_WAIT: Duration = Duration::from_secs(5);

/// Replaces `path` with `bytes` (see the module comment for what that means for each kind of
/// path). Warns when a regular file changed since [`check_writable`] looked at it (another run
/// writing the same output): the new text replaces it, but not silently.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match target(path)? {
        Target::Replace(p) => {
            if changed_since_check(&p) {
                eprintln!(
                    "respbench: warning: {} changed since this run started (another run writing \
                     it?); it is replaced",
                    path.display()
                );
            }
            replace(&p, bytes)
        }
        Target::InPlace(p) => write_in_place(&p, bytes),
    }
}

/// `e` with `path` in its text, for a caller whose message does not name the file (a disk-full
/// error said "No space left on device" without saying where).
pub fn naming(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Checks, before a run starts, that `path` can be written later by [`write`], without touching
/// an earlier file there (nor a FIFO's reader): its directory takes a new file, and it is not a
/// directory, a socket or a block device. Remembers a regular file's state, for [`write`]'s
/// warning.
pub fn check_writable(path: &Path) -> io::Result<()> {
    match target(path)? {
        Target::Replace(p) => {
            let probe = temp_path(&p);
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)?;
            fs::remove_file(&probe)?;
            let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
            let stamp = stamp(&p);
            seen.retain(|(q, _)| q != &p);
            seen.push((p, stamp));
            Ok(())
        }
        Target::InPlace(p) => writable_in_place(&p),
    }
}

/// What a path resolves to, and how it is written.
#[derive(Debug, PartialEq)]
enum Target {
    /// Nothing there yet, or a regular file: temporary file and rename.
    Replace(PathBuf),
    /// A character device, a FIFO, an open file under `/proc`: opened and appended to.
    InPlace(PathBuf),
}

/// Follows `path`'s symbolic links (at most 40, as the kernel) to what is to be written.
fn target(path: &Path) -> io::Result<Target> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        // `/proc/self/fd/N` links to an open file, not to a name: renaming over its target would
        // leave the open file (a shell's `>` redirection) without the text.
        if p.starts_with("/proc") {
            return Ok(Target::InPlace(p));
        }
        let meta = match fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(p)),
            other => other?,
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = fs::read_link(&p)?;
            p = parent(&p).join(link);
        } else if kind.is_file() {
            return Ok(Target::Replace(p));
        } else if kind.is_char_device() || kind.is_fifo() {
            return Ok(Target::InPlace(p));
        } else {
            let what = if kind.is_dir() {
                "a directory"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_block_device() {
                "a block device"
            } else {
                "neither a file, a device nor a FIFO"
            };
            return Err(io::Error::other(format!(
                "it is {what}; an output is a file, a character device or a FIFO"
            )));
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Temporary file, sync, rename, directory sync (the module comment).
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
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

/// Writes `bytes` into a device, a FIFO or an open file in place: appended, never truncated.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = if is_fifo(path) {
        open_fifo(path)?
    } else {
        OpenOptions::new().append(true).open(path)?
    };
    f.write_all(bytes)?;
    f.flush()
}

/// Opens a FIFO for writing once it has a reader, waiting at most [`FIFO_WAIT`]: opening it
/// blocking would hang the run forever when nobody reads.
fn open_fifo(path: &Path) -> io::Result<File> {
    let start = Instant::now();
    loop {
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(f) => {
                blocking(&f)?;
                return Ok(f);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) && start.elapsed() < FIFO_WAIT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(io::Error::other(format!(
                    "it is a FIFO and nothing read it for {} s",
                    FIFO_WAIT.as_secs()
                )));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Clears `O_NONBLOCK` on `f`, so a full FIFO waits for its reader rather than failing.
fn blocking(f: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns and keeps open; no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether `path` is a FIFO (after links).
fn is_fifo(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Whether this process may write `path` in place, without opening it (opening a FIFO and
/// closing it would give its reader an end of file).
fn writable_in_place(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("a NUL byte in the path"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What [`check_writable`] saw of each regular file (`None`: nothing there yet).
static SEEN: Mutex<Vec<(PathBuf, Option<Stamp>)>> = Mutex::new(Vec::new());

/// A regular file's identity and last change: another writer's rename changes the inode, an
/// in-place write the modification time or the length.
type Stamp = (u64, u64, i64, i64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.len()))
}

/// Whether `path` was checked by [`check_writable`] and has changed since.
fn changed_since_check(path: &Path) -> bool {
    let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.iter()
        .find(|(p, _)| p == path)
        .is_some_and(|(_, before)| *before != stamp(path))
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
mod tests;
