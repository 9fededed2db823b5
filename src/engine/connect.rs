//! Blocking connects that a signal can cut short.
//!
//! std's `connect_timeout` polls for the whole timeout and retries after `EINTR`, so a Ctrl-C
//! or SIGTERM during a connect that hangs (a full accept queue, a host that drops SYNs) waited
//! out the whole [`super::conn::CONNECT_TIMEOUT`]. Here the connect is started non-blocking and
//! its completion polled in slices of at most [`SLICE`]; between slices the process's interrupt
//! flag (set by the signal handlers `main` installs, handed over through
//! [`set_interrupt_flag`]) ends the wait with an `Interrupted` error, which the run reports as
//! "interrupted while starting".
//!
//! The flag is process-wide because signals are: every blocking connect (the control connection,
//! Sentinels, cluster nodes, worker connections opened at set-up, the server watch) sees it
//! without each caller carrying it.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use socket2::Socket;

/// The longest a connect waits before looking at the interrupt flag again.
pub const SLICE: Duration = Duration::from_millis(100);

/// The flag the signal handlers set (`None` until the run hands it over: library tests).
static INTERRUPT: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);

/// Makes every later blocking connect give up once `flag` is set (Ctrl-C, SIGTERM).
pub fn set_interrupt_flag(flag: Arc<AtomicBool>) {
    *INTERRUPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(flag);
}

/// Whether the run was interrupted (the flag handed to [`set_interrupt_flag`] is set).
pub fn interrupt_requested() -> bool {
    INTERRUPT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .is_some_and(|f| f.load(Ordering::Relaxed))
}

/// The error a connect cut short by a signal returns.
pub fn interrupted_error() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted")
}

/// Connects `sock` (a fresh, blocking socket) to `addr` within `timeout`, giving up as soon as
/// `interrupted()` says so (checked at least every [`SLICE`]). The socket is blocking again
/// when this returns `Ok`.
pub fn connect_within(
    sock: &Socket,
    addr: &SocketAddr,
    timeout: Duration,
    interrupted: &dyn Fn() -> bool,
) -> io::Result<()> {
    sock.set_nonblocking(true)?;
    match sock.connect(&(*addr).into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
            wait_connected(sock, Instant::now() + timeout, interrupted)?;
        }
        Err(e) => return Err(e),
    }
    sock.set_nonblocking(false)
}

/// Polls a connect under way until it completes, fails, `deadline` passes or `interrupted()`.
fn wait_connected(
    sock: &Socket,
    deadline: Instant,
    interrupted: &dyn Fn() -> bool,
) -> io::Result<()> {
    loop {
        if interrupted() {
            return Err(interrupted_error());
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection timed out",
            ));
        }
        let slice = (deadline - now).min(SLICE);
        let mut pfd = libc::pollfd {
            fd: sock.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let ms = slice.as_millis().clamp(1, SLICE.as_millis()) as libc::c_int;
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue; // the flag is looked at on the next turn
            }
            return Err(e);
        }
        if n > 0 {
            // Writable, or an error/hang-up: SO_ERROR says which.
            if let Some(e) = sock.take_error()? {
                return Err(e);
            }
            if pfd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "connection refused",
                ));
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::net::{SocketAddr, TcpListener};

    use socket2::{Domain, Protocol, Socket, Type};

    use super::*;

    fn socket() -> Socket {
        Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap()
    }

    /// A listener whose accept queue is full (backlog 0, never accepts), so that a further
    /// connect stays in SYN_SENT: the kernel drops SYNs to a listener with a full queue. Returns
    /// the listener, the connections filling it and its address.
    fn full_listener() -> (Socket, Vec<Socket>, SocketAddr) {
        let l = socket();
        l.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        l.listen(0).unwrap();
        let addr = l.local_addr().unwrap().as_socket().unwrap();
        // Fill the queue: connects that complete at once (bounded; Linux queues backlog + 1).
        let mut fill = Vec::new();
        for _ in 0..4 {
            let s = socket();
            s.set_nonblocking(true).unwrap();
            let _ = s.connect(&addr.into());
            fill.push(s);
        }
        (l, fill, addr)
    }

    #[test]
    fn an_interrupt_ends_a_hanging_connect() {
        let (_l, _fill, addr) = full_listener();
        // Interrupted on the third look: the connect must stop there, whatever the network does.
        let looks = Cell::new(0);
        let interrupted = || {
            looks.set(looks.get() + 1);
            looks.get() >= 3
        };
        let e = connect_within(&socket(), &addr, Duration::from_secs(600), &interrupted)
            .expect_err("the connect hangs, then is interrupted");
        assert_eq!(e.kind(), io::ErrorKind::Interrupted, "{e}");
        assert_eq!(looks.get(), 3);
    }

    #[test]
    fn a_hanging_connect_times_out() {
        let (_l, _fill, addr) = full_listener();
        let e = connect_within(&socket(), &addr, Duration::from_millis(250), &|| false)
            .expect_err("no connection can complete");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
    }

    #[test]
    fn connects_and_refusals_are_told_apart() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let s = socket();
        connect_within(&s, &addr, Duration::from_secs(10), &|| false).unwrap();
        drop(l);
        let e = connect_within(&socket(), &addr, Duration::from_secs(10), &|| false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{e}");
    }
}
