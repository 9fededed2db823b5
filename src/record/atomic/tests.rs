use super::*;
use std::os::unix::fs::symlink;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("respbench-atomic-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<_> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn replaces_the_file_whole_and_leaves_no_temporary_file() {
    let dir = dir("file");
    let path = dir.join("run.json");
    fs::write(&path, "earlier").unwrap();
    check_writable(&path).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "earlier",
        "the check keeps it"
    );
    assert!(!changed_since_check(&path));
    write(&path, b"new record").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "new record");
    assert_eq!(names(&dir), ["run.json"], "no temporary file left");
    assert!(check_writable(&dir).is_err(), "a directory is refused");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_changed_since_the_check_is_noticed() {
    let dir = dir("changed");
    let path = dir.join("report.html");
    check_writable(&path).unwrap();
    assert!(!changed_since_check(&path), "still absent");
    fs::write(&path, "another run's page").unwrap();
    assert!(
        changed_since_check(&path),
        "written by someone else meanwhile"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_symlink_is_followed_and_stays_a_link() {
    let dir = dir("link");
    fs::create_dir_all(dir.join("results")).unwrap();
    fs::write(dir.join("results/run.json"), "earlier").unwrap();
    symlink("results/run.json", dir.join("latest.json")).unwrap();
    // A dangling link to a file in another directory: written there.
    symlink(dir.join("results/new.json"), dir.join("next.json")).unwrap();
    for (link, target) in [
        ("latest.json", "results/run.json"),
        ("next.json", "results/new.json"),
    ] {
        let link = dir.join(link);
        check_writable(&link).unwrap();
        write(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(dir.join(target)).unwrap(), "new");
    }
    assert_eq!(names(&dir.join("results")), ["new.json", "run.json"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_character_device_is_written_in_place() {
    let null = Path::new("/dev/null");
    assert_eq!(target(null).unwrap(), Target::InPlace(null.into()));
    check_writable(null).unwrap();
    write(null, b"a record").unwrap();
    assert!(
        fs::symlink_metadata(null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn a_fifo_gets_the_bytes_and_a_socket_is_refused() {
    let dir = dir("fifo");
    let fifo = dir.join("pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    check_writable(&fifo).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(&fifo).unwrap())
    };
    write(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    let sock = dir.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let e = write(&sock, b"x").unwrap_err().to_string();
    assert!(e.contains("a socket"), "{e}");
    assert!(check_writable(&sock).is_err());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn proc_fd_links_are_written_in_place() {
    let p = Path::new("/dev/stdout");
    assert!(matches!(target(p).unwrap(), Target::InPlace(q) if q.starts_with("/proc")));
}
