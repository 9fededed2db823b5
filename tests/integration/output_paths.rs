//! Output paths that are not plain files (issue 35): a symbolic link is written through and
//! stays a link, a character device stays a device, and a FIFO with a reader gets the bytes.
//! Every mode writes its outputs by one writer (`record::atomic`); these drive it from the
//! command line.

use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;

use crate::harness::{Server, TempDir, run_respbench};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

#[test]
fn json_to_a_symlink_writes_through_it_and_the_link_stays() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("results")).unwrap();
    std::fs::write(dir.path().join("results/run.json"), "earlier").unwrap();
    let link = dir.path().join("latest.json");
    symlink("results/run.json", &link).unwrap();
    server
        .bench(&["--json", s(&link), "-t", "set", "-n", "300", "-q"])
        .assert_success();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(dir.path().join("results/run.json")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&text).expect("the record went through");
    assert_eq!(record["tests"].as_array().map(Vec::len), Some(1));
}

#[test]
fn json_to_a_character_device_leaves_the_device() {
    let server = Server::start();
    server
        .bench(&["--json", "/dev/null", "-t", "get", "-n", "300", "-q"])
        .assert_success();
    let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
    assert!(
        kind.is_char_device(),
        "/dev/null is still a character device"
    );
}

#[test]
fn compare_output_to_a_fifo_with_a_reader_goes_into_the_fifo() {
    let dir = TempDir::new();
    let fifo = dir.path().join("pipe");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(&fifo).unwrap())
    };
    let csv = format!(
        "{}/tests/fixtures/redis-benchmark-7.0.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run_respbench(
        &[
            "compare".into(),
            "-o".into(),
            s(&fifo).into(),
            "--format".into(),
            "csv".into(),
            csv.clone(),
            csv,
        ],
        None,
    );
    out.assert_success();
    let read = reader.join().unwrap();
    assert!(
        read.contains("SET"),
        "the comparison came through the FIFO: {read}"
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}
