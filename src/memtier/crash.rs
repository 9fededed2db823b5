//! memtier's crash report, in memtier mode: on SIGSEGV or SIGBUS respbench writes to stderr a
//! report in the shape memtier's crash handler writes (its markers and sections, which memtier's
//! own suite and users' scripts look for): the signal, how it came (a fault, or sent by a
//! process), each worker thread, respbench's version and the command line — passwords
//! redacted (`redact::command_line`) —, and each connection's state from
//! `engine::crash_board`. Then the signal does what it would have done: sent by a process, it
//! is raised again with the default action (the process ends by that signal, core dump and
//! all); a real fault returns to the previous handler (std's, which tells a stack overflow
//! apart), so nothing respbench did before this handler is lost.
//!
//! What the handler does is limited to what a signal handler may do: it formats into a buffer
//! on its stack (no allocation, no lock) and writes with `write(2)`; everything else (the
//! command line, the OS) was made when it was installed. respbench takes no stack trace there
//! (walking the stack allocates) and says so in the STACK TRACE section.

use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::engine::crash_board;

/// What the report says that is known before any crash.
struct Info {
    /// `os:…`, `respbench_version:…`, `arch_bits:…`, `command_line:…` lines' values.
    os: String,
    command_line: String,
    /// The server as given, for each connection's `addr=`.
    addr: String,
}

static INFO: OnceLock<Info> = OnceLock::new();

/// The signals handled, with memtier's names for them.
const SIGNALS: [(libc::c_int, &str); 2] = [(libc::SIGSEGV, "SIGSEGV"), (libc::SIGBUS, "SIGBUS")];

/// The handlers that were there before (std's), by `SIGNALS` index.
static PREVIOUS: OnceLock<[libc::sigaction; 2]> = OnceLock::new();

/// Installs the handler for a run of `workers` workers of `conns` connections each, against
/// `addr`.
pub fn install(workers: usize, conns: usize, addr: String) {
    crash_board::install(workers, conns);
    let argv: Vec<_> = std::env::args_os().collect();
    let info = Info {
        os: os_line(),
        command_line: crate::redact::command_line(&argv).join(" "),
        addr,
    };
    if INFO.set(info).is_err() {
        return; // installed already
    }
    // SAFETY: sigaction is plain data; all zeroes is a valid (empty) value.
    let mut previous: [libc::sigaction; 2] = unsafe { std::mem::zeroed() };
    for (i, (sig, _)) in SIGNALS.iter().enumerate() {
        // SAFETY: a zeroed sigaction is valid; the handler has the SA_SIGINFO signature; the
        // old action is written into memory we own.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler as *const () as usize;
            // Not SA_ONSTACK: std's alternate signal stacks are too small for the report's
            // formatting (tried: the handler overflowed them and the process died silently),
            // so the handler runs on the thread's own stack; a stack overflow therefore ends
            // the process by SIGSEGV without the report (and without std's one-line note).
            act.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(*sig, &act, &mut previous[i]);
        }
    }
    let _ = PREVIOUS.set(previous);
}

fn os_line() -> String {
    // SAFETY: uname fills the struct we pass; its fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return "unknown".into();
        }
        let f = |s: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(s.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        format!("{} {} {}", f(&u.sysname), f(&u.release), f(&u.machine))
    }
}

/// A line built on the stack and written to stderr whole.
struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            buf: [0; 1024],
            len: 0,
        }
    }

    fn flush(&mut self) {
        let mut at = 0;
        while at < self.len {
            // SAFETY: writes initialised bytes of our buffer to fd 2.
            let n = unsafe { libc::write(2, self.buf[at..].as_ptr().cast(), self.len - at) };
            if n <= 0 {
                break;
            }
            at += n as usize;
        }
        self.len = 0;
    }
}

impl std::fmt::Write for Line {
    /// Cuts what does not fit (a long command line) rather than failing.
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// `dd Mon yyyy hh:mm:ss` (memtier's form), UTC, from the clock alone.
struct Stamp {
    pid: i32,
    day: i64,
    month: usize,
    year: i64,
    secs_of_day: i64,
}

impl Stamp {
    fn now() -> Self {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec we own; it is async-signal-safe.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let secs = ts.tv_sec;
        let (year, month, day) = civil(secs.div_euclid(86_400));
        Stamp {
            // SAFETY: getpid has no preconditions.
            pid: unsafe { libc::getpid() },
            day,
            month,
            year,
            secs_of_day: secs.rem_euclid(86_400),
        }
    }
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let s = self.secs_of_day;
        write!(
            f,
            "[{}] {:02} {} {} {:02}:{:02}:{:02} UTC #",
            self.pid,
            self.day,
            MONTHS[self.month - 1],
            self.year,
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }
}

/// The civil date of a day counted from 1970-01-01 (Howard Hinnant's days-to-civil method).
fn civil(days: i64) -> (i64, usize, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as usize, day)
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let idx = SIGNALS.iter().position(|(s, _)| *s == sig).unwrap_or(0);
    // SAFETY: the kernel passes a valid siginfo with SA_SIGINFO.
    let (code, addr) = unsafe {
        match info.as_ref() {
            Some(i) => (i.si_code, i.si_addr() as usize),
            None => (0, 0),
        }
    };
    report(sig, SIGNALS[idx].1, code, addr);
    // SAFETY: sigaction/raise are async-signal-safe; PREVIOUS holds the actions we replaced.
    unsafe {
        if let Some(prev) = PREVIOUS.get() {
            libc::sigaction(sig, &prev[idx], std::ptr::null_mut());
        }
        if code <= 0 {
            // Sent by a process (kill, tgkill): nothing will fault again; end as the signal's
            // default action ends the process.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            libc::raise(sig);
        }
        // A real fault: returning runs the faulting instruction again, under the previous
        // handler.
    }
}

fn report(sig: libc::c_int, name: &str, code: libc::c_int, addr: usize) {
    let at = Stamp::now();
    let mut l = Line::new();
    let mut line = |args: std::fmt::Arguments<'_>| {
        let _ = l.write_fmt(args);
        let _ = l.write_str("\n");
        l.flush();
    };
    line(format_args!(
        "\n\n=== MEMTIER_BENCHMARK BUG REPORT START: Cut & paste starting from here ==="
    ));
    line(format_args!(
        "{at} memtier_benchmark crashed by signal: {sig}"
    ));
    line(format_args!("{at} Crashed running signal <{name}>"));
    line(format_args!("{at} Signal code: {code}"));
    if code <= 0 {
        line(format_args!(
            "{at} Sent by a process (kill), not a fault of respbench's"
        ));
    } else {
        line(format_args!("{at} Fault address: {addr:#x}"));
    }
    line(format_args!("\n{at} --- STACK TRACE (all threads)"));
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    line(format_args!("{at} Thread {me} (current/crashing thread):"));
    line(format_args!(
        "{at}   (respbench takes no stack trace in a signal handler: walking the stack allocates)"
    ));
    let board = crash_board::board();
    for (w, tid) in board.into_iter().flat_map(|b| b.worker_tids()) {
        if tid != 0 && tid != me {
            line(format_args!("{at} Thread {tid} (worker thread {w}):"));
        } else if tid == me {
            line(format_args!("{at}   (this is worker thread {w})"));
        }
    }
    line(format_args!("\n{at} --- INFO OUTPUT"));
    if let Some(i) = INFO.get() {
        line(format_args!("{at} os:{}", i.os));
    }
    line(format_args!(
        "{at} respbench_version:{}",
        env!("CARGO_PKG_VERSION")
    ));
    line(format_args!("{at} arch_bits:{}", usize::BITS));
    if let Some(i) = INFO.get() {
        line(format_args!("{at} command_line:{}", i.command_line));
    }
    line(format_args!("\n{at} --- CLIENT LIST OUTPUT"));
    let addr = INFO.get().map_or("unknown", |i| i.addr.as_str());
    for c in board.into_iter().flat_map(|b| b.conns()) {
        line(format_args!(
            "{at} thread={} client={} conn=0 addr={addr} state={} pending={}",
            c.worker,
            c.conn,
            c.state.name(),
            c.pending
        ));
    }
    line(format_args!(
        "\n=== MEMTIER_BENCHMARK BUG REPORT END. Make sure to include from START to END. ===\n"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(59), (1970, 3, 1));
        // 2026-12-08
        assert_eq!(civil(20_795), (2026, 12, 8));
        assert_eq!(civil(11_016), (2000, 2, 29));
    }

    #[test]
    fn a_line_cuts_what_does_not_fit() {
        let mut l = Line::new();
        let long = "x".repeat(5000);
        l.write_str(&long).unwrap();
        assert_eq!(l.len, l.buf.len());
    }
}
