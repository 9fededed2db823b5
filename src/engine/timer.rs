//! A sub-millisecond timer for `--rps` pacing: a `timerfd` in the worker's epoll set. (`epoll_wait`
//! timeouts are whole milliseconds, and a slot released up to 1 ms late would be charged to the
//! request as latency.) Elsewhere than Linux the poll timeout is used instead.

use std::io;
use std::time::Instant;

use mio::{Registry, Token};

#[cfg(target_os = "linux")]
pub(crate) struct Timer {
    fd: std::os::fd::OwnedFd,
    armed_for: Option<Instant>,
}

#[cfg(target_os = "linux")]
impl Timer {
    pub(crate) fn new() -> io::Result<Self> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain syscall with constant flags; the result is checked before use.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(Self {
            fd,
            armed_for: None,
        })
    }

    pub(crate) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        registry.register(
            &mut mio::unix::SourceFd(&self.fd.as_raw_fd()),
            token,
            mio::Interest::READABLE,
        )
    }

    /// Fires at `at` (or at once if it has passed); re-arming for the same instant is free.
    pub(crate) fn arm(&mut self, at: Instant, now: Instant) {
        use std::os::fd::AsRawFd;
        if self.armed_for == Some(at) {
            return;
        }
        let wait = at.saturating_duration_since(now);
        // A zero it_value would disarm the timer: wait at least 1 ns.
        let nanos = wait.as_nanos().max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (nanos / 1_000_000_000) as libc::time_t,
                tv_nsec: (nanos % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and a fully initialised itimerspec; old value not requested.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc == 0 {
            self.armed_for = Some(at);
        }
    }

    /// Consumes the expiry so the next one is reported.
    pub(crate) fn clear(&mut self) {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte stack buffer from our own descriptor.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        self.armed_for = None;
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) struct Timer;

#[cfg(not(target_os = "linux"))]
impl Timer {
    pub(crate) fn new() -> io::Result<Self> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "no timerfd"))
    }
    pub(crate) fn register(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        Ok(())
    }
    pub(crate) fn arm(&mut self, _: Instant, _: Instant) {}
    pub(crate) fn clear(&mut self) {}
}
