//! `respbench memtier --data-import FILE`: the file opened, mapped and indexed before anything
//! connects (`workload::import` reads the format), the key range its items make, and
//! what `--data-verify` will read back.
//!
//! Part of the plan because the key range, `-n allkeys` and the verification come from the
//! file before anything connects; memtier's line (`--data-import`) is its one user.
//!
//! Why mapped: a file of millions of items is read where it lies. The mapping is read-only and
//! private; its pages are the kernel's page cache (evictable, shared with other readers), and
//! the plan keeps only an 8-byte offset per item. The file must not shrink while the run reads
//! it (a mapping's vanished pages are a bus error; docs/memtier.md says so).
//!
//! Owns: opening and mapping the file, the range and `-n allkeys` with the file's keys, the
//! verification's plan. Must not: know the file's format.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::Arc;

use super::PlanError;
use crate::cli::{Args, ImportArgs};
use crate::engine::LoadSpec;
use crate::workload::distribution::KeyPattern;
use crate::workload::import::ImportFile;
use crate::workload::shape::Imported;

/// The file, and the line's options with the key range it makes.
pub(super) struct Import {
    pub file: Arc<ImportFile>,
    pub options: ImportArgs,
    /// `args` with the file's items as the key range (`0..items`) when the keys are the file's,
    /// and `-n allkeys` as every item once.
    pub args: Args,
}

/// `--data-verify`: which keys are read back after the test (or instead of one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyPlan {
    /// `--verify-only`: no test runs.
    pub only: bool,
    /// The first key of the range (its slot 0).
    pub first: u64,
    /// The range's length: every item, or every generated key.
    pub keys: u64,
    /// SETs walk the range in order from `first` (a sequential SET pattern): a test that sent
    /// `n` SETs wrote the first `n` keys, and only those are read back.
    pub in_order: bool,
}

/// What a path that is not a regular file is, for a message.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// Reads `--data-import`'s file (`None` without it). A file that cannot be opened is
/// `PlanError::Io` (exit 1); one that does not parse is one line naming the file and the line
/// (`PlanError::Usage`, exit 2).
pub(super) fn import(args: &Args) -> Result<Option<Import>, PlanError> {
    let Some(options) = (args.workload.memtier.as_ref()).and_then(|m| m.import.clone()) else {
        return Ok(None);
    };
    let shown = options.path.display().to_string();
    let io = |e: std::io::Error| PlanError::Io(format!("cannot read {shown}: {}", reason(&e)));
    // Looked at before it is opened: opening a FIFO waits for a writer (forever, when there is
    // none), and a device or a FIFO cannot be mapped into memory anyway.
    let meta = std::fs::metadata(&options.path).map_err(io)?;
    if !meta.is_file() {
        return Err(PlanError::Usage(format!(
            "--data-import {shown}: not a regular file ({}); the import is mapped into memory: \
             save it to a file first",
            kind(&meta)
        )));
    }
    let file = File::open(&options.path).map_err(io)?;
    let mapped = Mapped::of(&file).map_err(io)?;
    let file = Arc::new(ImportFile::index(&shown, Box::new(mapped)).map_err(PlanError::Usage)?);
    let mut args = args.clone();
    if !options.generate_keys {
        let w = &mut args.workload;
        w.key_minimum = Some(0);
        w.key_maximum = Some(file.len() - 1);
        if options.all_items {
            args.requests = file.len();
        }
    }
    Ok(Some(Import {
        file,
        options,
        args,
    }))
}

/// The import as the requests use it.
pub(super) fn imported(import: &Import, load: &LoadSpec) -> Imported {
    Imported {
        file: import.file.clone(),
        generated_from: import.options.generate_keys.then_some(load.key_min),
        no_expiry: import.options.no_expiry,
    }
}

/// `--data-verify`'s plan (`None` without it).
pub(super) fn verify(import: Option<&Import>, load: &LoadSpec) -> Option<VerifyPlan> {
    let import = import.filter(|i| i.options.verify)?;
    let first = load.key_min;
    Some(VerifyPlan {
        only: import.options.verify_only,
        first,
        keys: load.keyspace.unwrap_or(first + 1).saturating_sub(first),
        in_order: load.key_pattern == KeyPattern::Sequential,
    })
}

/// An I/O error without the "(os error N)" suffix.
fn reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A file mapped read-only for as long as this lives.
struct Mapped {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is read-only (PROT_READ) and private; nothing writes through `ptr`, and
// it stays mapped until `drop`, so sharing the bytes between threads is sharing a `&[u8]`.
unsafe impl Send for Mapped {}
// SAFETY: as above.
unsafe impl Sync for Mapped {}

impl Mapped {
    fn of(file: &File) -> std::io::Result<Mapped> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| std::io::Error::other("the file is larger than memory can map"))?;
        if len == 0 {
            // mmap refuses an empty length; an empty file has no header (the index says so).
            return Ok(Mapped {
                ptr: NonNull::dangling(),
                len: 0,
            });
        }
        // SAFETY: a new read-only private mapping of an open file descriptor; the kernel
        // chooses the address, and the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| std::io::Error::other("mmap"))?;
        Ok(Mapped { ptr, len })
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` is the start of a live mapping of `len` readable bytes (see `of`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping `of` made; no slice of it outlives `self`.
            unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), self.len);
            }
        }
    }
}
