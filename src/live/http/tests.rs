//! Hostile clients against the endpoint (issue 35): each is answered or dropped within its
//! bounds, and a normal scrape is answered meanwhile.

use super::*;
use std::net::TcpStream as StdStream;
use std::sync::Arc;

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    fn start() -> Running {
        let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            server.serve(&s, &|r: &Request| match r.path {
                "/metrics" => plain(200, "figures\n"),
                _ => plain(404, "no\n"),
            })
        });
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the loop and returns how long that took.
    fn stop(mut self) -> Duration {
        let t = Instant::now();
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        t.elapsed()
    }
}

fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = StdStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status(response: &str) -> &str {
    response.split(' ').nth(1).unwrap_or("")
}

#[test]
fn read_only_paths_and_methods() {
    let r = Running::start();
    let ok = exchange(r.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status(&ok), "200", "{ok}");
    assert!(
        ok.ends_with("figures\n") && ok.contains("Connection: close"),
        "{ok}"
    );
    let head = exchange(r.addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(status(&head), "200");
    assert!(head.ends_with("\r\n\r\n"), "no body for HEAD: {head}");
    let post = exchange(
        r.addr,
        b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(status(&post), "405", "{post}");
    assert!(post.contains("Allow: GET, HEAD"));
    assert_eq!(
        status(&exchange(r.addr, b"DELETE /x HTTP/1.1\r\n\r\n")),
        "404"
    );
    assert_eq!(
        status(&exchange(r.addr, b"GET /other HTTP/1.1\r\n\r\n")),
        "404"
    );
    assert_eq!(
        status(&exchange(r.addr, b"\x00\x01 garbage\r\n\r\n")),
        "400"
    );
    r.stop();
}

#[test]
fn a_huge_announced_body_is_refused_unread() {
    let r = Running::start();
    let res = exchange(
        r.addr,
        b"GET /metrics HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
    );
    assert_eq!(status(&res), "413", "{res}");
    let chunked = exchange(
        r.addr,
        b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    assert_eq!(status(&chunked), "413", "{chunked}");
    let ok = exchange(r.addr, b"GET /metrics HTTP/1.0\r\n\r\n");
    assert_eq!(status(&ok), "200", "still serving: {ok}");
    r.stop();
}

#[test]
fn an_endless_header_line_is_cut_at_the_cap() {
    let r = Running::start();
    let mut s = StdStream::connect(r.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nX-Long: ").unwrap();
    // 8 MB offered: the endpoint answers once past its cap and closes, so the writes stop
    // being accepted long before the end.
    let chunk = vec![b'a'; 64 * 1024];
    for _ in 0..128 {
        if s.write_all(&chunk).is_err() {
            break;
        }
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert_eq!(status(&out), "431", "{out}");
    r.stop();
}

#[test]
fn idle_connections_neither_starve_a_scrape_nor_hold_the_stop() {
    let r = Running::start();
    let idle: Vec<StdStream> = (0..300)
        .map(|_| StdStream::connect(r.addr).unwrap())
        .collect();
    // One that sends half a request and stops.
    let mut half = StdStream::connect(r.addr).unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost:").unwrap();
    let ok = exchange(r.addr, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(status(&ok), "200", "{ok}");
    // A client that pipelines requests and never reads.
    let mut greedy = StdStream::connect(r.addr).unwrap();
    for _ in 0..100 {
        let _ = greedy.write_all(b"GET /metrics HTTP/1.1\r\n\r\n");
    }
    let took = r.stop();
    assert!(
        took < Duration::from_secs(5),
        "the stop waited {took:?} for clients"
    );
    drop(idle);
}
