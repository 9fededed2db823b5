//! The `--metrics-listen` HTTP endpoint: one thread, one `mio` poll loop, bounded in everything
//! a client controls, and read-only.
//!
//! Why not an HTTP server crate: tiny_http 0.12 aborted the process on a request with
//! `Content-Length: 99999999999` (one request ended the run, no record), spent a thread per
//! connection (1,000 idle sockets made 1,005 threads), grew without bound on one endless header
//! line (2.1 GB in 40 s) and let a client that never sent its announced body hold its only
//! serving thread, so a finished run waited for that client to leave. Here `httparse` parses a
//! request (no I/O, no allocation) and this file does the I/O, with a bound on each thing:
//! - the request line and headers: [`HEAD_MAX`] bytes, then `431` and close;
//! - a body: refused, never read (`413` when one is announced);
//! - connections: [`CONNS_MAX`] at a time; a new one beyond evicts the oldest;
//! - time: each connection has [`DEADLINE`] from its accept to its last byte written;
//! - one request per connection (`Connection: close`), so a client that pipelines requests and
//!   never reads costs one response buffer at most.
//!
//! The loop wakes every [`POLL`] to look at its stop flag, so the endpoint never delays the
//! run's exit by more than that.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

/// How often the loop looks at its stop flag.
pub const POLL: Duration = Duration::from_millis(100);
/// The most a request's line and headers may take.
const HEAD_MAX: usize = 16 * 1024;
/// The most connections held at once (a scraper needs one).
const CONNS_MAX: usize = 32;
/// The longest a connection lives, from its accept to its response's last byte.
const DEADLINE: Duration = Duration::from_secs(2);
/// The most headers a request may have.
const HEADERS_MAX: usize = 32;

const LISTENER: Token = Token(0);

/// What the endpoint answers for a request that was read whole.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

/// The request as the handler sees it: read-only `GET`/`HEAD` of a path.
pub struct Request<'a> {
    pub path: &'a str,
    pub accept: Option<&'a str>,
}

/// One client's connection: what it sent so far, then the response being written.
struct Conn {
    stream: TcpStream,
    since: Instant,
    read: Vec<u8>,
    out: Option<(Vec<u8>, usize)>,
}

/// The bound listener, ready to serve.
pub struct Server {
    listener: TcpListener,
    poll: Poll,
}

impl Server {
    pub fn bind(addr: SocketAddr) -> io::Result<Server> {
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(std_listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok(Server { listener, poll })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop`, answering each request with `handle`.
    pub fn serve(mut self, stop: &AtomicBool, handle: &dyn Fn(&Request) -> Reply) {
        let mut events = Events::with_capacity(64);
        let mut conns: HashMap<Token, Conn> = HashMap::new();
        let mut next = 1usize;
        while !stop.load(Ordering::Relaxed) {
            if self.poll.poll(&mut events, Some(POLL)).is_err() {
                continue; // EINTR: look at the flag and poll again
            }
            for ev in &events {
                if ev.token() == LISTENER {
                    self.accept(&mut conns, &mut next);
                } else if let Some(c) = conns.get_mut(&ev.token())
                    && !step(c, handle)
                {
                    self.close(&mut conns, ev.token());
                }
            }
            let now = Instant::now();
            let late: Vec<Token> = conns
                .iter()
                .filter(|(_, c)| now.duration_since(c.since) > DEADLINE)
                .map(|(t, _)| *t)
                .collect();
            for t in late {
                self.close(&mut conns, t);
            }
        }
    }

    /// Takes every waiting connection; past [`CONNS_MAX`], the oldest goes.
    fn accept(&mut self, conns: &mut HashMap<Token, Conn>, next: &mut usize) {
        while let Ok((mut stream, _)) = self.listener.accept() {
            if conns.len() >= CONNS_MAX
                && let Some(oldest) = conns.iter().min_by_key(|(_, c)| c.since).map(|(t, _)| *t)
            {
                self.close(conns, oldest);
            }
            let token = Token(*next);
            *next = next.wrapping_add(1).max(1);
            let interest = Interest::READABLE | Interest::WRITABLE;
            if self
                .poll
                .registry()
                .register(&mut stream, token, interest)
                .is_ok()
            {
                let conn = Conn {
                    stream,
                    since: Instant::now(),
                    read: Vec::new(),
                    out: None,
                };
                conns.insert(token, conn);
            }
        }
    }

    fn close(&mut self, conns: &mut HashMap<Token, Conn>, token: Token) {
        if let Some(mut c) = conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
    }
}

/// Moves `c` on as far as its socket lets it; `false` when it is done (or broken).
fn step(c: &mut Conn, handle: &dyn Fn(&Request) -> Reply) -> bool {
    if c.out.is_none() {
        let mut buf = [0u8; 4096];
        loop {
            match c.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => {
                    let room = HEAD_MAX + 1 - c.read.len().min(HEAD_MAX + 1);
                    c.read.extend_from_slice(&buf[..n.min(room)]);
                    if let Some(reply) = respond(&c.read, handle) {
                        c.out = Some((reply, 0));
                        c.read = Vec::new();
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
    let Some((out, sent)) = &mut c.out else {
        return true;
    };
    while *sent < out.len() {
        match c.stream.write(&out[*sent..]) {
            Ok(0) => return false,
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    false
}

/// The response to what a client sent so far, or `None` while its headers are not all there.
fn respond(read: &[u8], handle: &dyn Fn(&Request) -> Reply) -> Option<Vec<u8>> {
    let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
    let mut req = httparse::Request::new(&mut headers);
    let reply = match req.parse(read) {
        Ok(httparse::Status::Partial) if read.len() <= HEAD_MAX => return None,
        Ok(httparse::Status::Partial) | Err(httparse::Error::TooManyHeaders) => {
            plain(431, "request headers too large\n")
        }
        Err(_) => plain(400, "bad request\n"),
        Ok(httparse::Status::Complete(_)) => answer(&req, handle),
    };
    let head_only = req.method == Some("HEAD");
    Some(encode(&reply, head_only))
}

/// Routes a whole request: read-only paths, no body.
fn answer(req: &httparse::Request, handle: &dyn Fn(&Request) -> Reply) -> Reply {
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
    };
    let body_announced = header("Transfer-Encoding").is_some()
        || header("Content-Length").is_some_and(|v| v.trim() != "0");
    if body_announced {
        return plain(413, "respbench's endpoint takes no request body\n");
    }
    let path = req.path.unwrap_or("").split('?').next().unwrap_or("");
    if !matches!(req.method, Some("GET" | "HEAD")) {
        return if matches!(path, "/metrics" | "/-/healthy") {
            plain(405, "read-only: GET or HEAD\n")
        } else {
            plain(404, "respbench serves /metrics and /-/healthy only\n")
        };
    }
    handle(&Request {
        path,
        accept: header("Accept"),
    })
}

/// A short text reply.
pub fn plain(status: u16, body: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        body: body.to_string(),
    }
}

fn encode(reply: &Reply, head_only: bool) -> Vec<u8> {
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         {}\r\n",
        reply.status,
        reply.content_type,
        reply.body.len(),
        if reply.status == 405 {
            "Allow: GET, HEAD\r\n"
        } else {
            ""
        }
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(reply.body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests;
