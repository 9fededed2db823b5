//! memtier's `--data-import` line through the plan (`plan/import.rs`): the file opened and
//! checked, its items as the key range, `--data-verify`'s plan.

use super::cli::{MemtierInvocation, parse};
use crate::plan::{PlanError, RunPlan};

fn plan(argv: &[&str]) -> Result<RunPlan, PlanError> {
    let args = match parse(argv.iter().map(Into::into), None) {
        Ok(MemtierInvocation::Run(a, _)) => a,
        _ => panic!("{argv:?}"),
    };
    RunPlan::new(&args, None)
}

fn dump(lines: &str) -> (tempfile_dir::Dir, String) {
    let d = tempfile_dir::Dir::new();
    let p = d.0.join("dump.csv");
    let head = "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n";
    std::fs::write(&p, format!("{head}{lines}")).unwrap();
    (d, p.display().to_string())
}

/// A directory of the test's own, removed after it.
mod tempfile_dir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("respbench-import-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn a_fifo_or_a_directory_is_refused_without_waiting() {
    let d = tempfile_dir::Dir::new();
    let fifo = d.0.join("dump.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (path, what) in [(&fifo, "a FIFO"), (&d.0, "a directory")] {
        let import = format!("--data-import={}", path.display());
        match plan(&[&import, "-n", "10"]) {
            Err(PlanError::Usage(m)) => {
                assert!(m.contains(what) && m.contains("not a regular file"), "{m}")
            }
            other => panic!("{what}: {:?}", other.err()),
        }
    }
}

#[test]
fn the_files_items_are_the_key_range_and_allkeys_is_every_item() {
    let (_d, path) = dump("0, 0, 0, 3, 0, 0, 1, 1, a, x\n0, 0, 5, 3, 0, 0, 1, 1, b, y\n");
    let import = format!("--data-import={path}");
    let p = plan(&[
        &import,
        "-n",
        "allkeys",
        "--data-verify",
        "-c",
        "1",
        "-t",
        "1",
    ])
    .unwrap();
    assert_eq!((p.load.key_min, p.load.keyspace), (0, Some(2)));
    assert_eq!(p.load.stop, crate::engine::Stop::Requests(2));
    let shape = p.memtier.as_ref().unwrap();
    assert_eq!(shape.import.as_ref().unwrap().file.len(), 2);
    let v = p.verify.unwrap();
    assert_eq!((v.only, v.first, v.keys, v.in_order), (false, 0, 2, true));
    // --generate-keys: memtier's key range, the file's values.
    let p = plan(&[
        &import,
        "--generate-keys",
        "--key-minimum=5",
        "--key-maximum=9",
    ])
    .unwrap();
    assert_eq!((p.load.key_min, p.load.keyspace), (5, Some(10)));
    assert_eq!(
        p.memtier
            .as_ref()
            .unwrap()
            .import
            .as_ref()
            .unwrap()
            .generated_from,
        Some(5)
    );
    assert!(p.verify.is_none());
}

#[test]
fn a_bad_line_is_a_usage_error_naming_it_and_a_missing_file_an_io_error() {
    let (_d, path) = dump("0, 0, 0, 3, 0, 0, 1, 1, a, x\n0, 0, 0, 9, 0, 0, 1, 1, b, y\n");
    let import = format!("--data-import={path}");
    match plan(&[&import]) {
        Err(PlanError::Usage(m)) => {
            assert!(m.starts_with(&format!("{path}:3: ")), "{m}");
        }
        other => panic!("{other:?}"),
    }
    match plan(&["--data-import=/nonexistent/respbench/dump.csv"]) {
        Err(PlanError::Io(m)) => assert!(m.starts_with("cannot read /nonexistent"), "{m}"),
        other => panic!("{other:?}"),
    }
}
