//! The open-files limit: `-c 10000` needs more descriptors than the usual soft limit of 1024.

/// Descriptors needed beyond the connections: stdio, epoll, wakers, timers, control connection.
const SPARE_FDS: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to fit `connections` sockets if the hard limit allows;
/// otherwise says how to raise it.
pub fn ensure_open_files(connections: u64) -> Result<(), String> {
    let needed = connections + SPARE_FDS;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(()); // cannot tell; let connect fail with its own message if it must
    }
    let (current, hard): (u64, u64) = (lim.rlim_cur, lim.rlim_max);
    if current >= needed {
        return Ok(());
    }
    if hard >= needed || lim.rlim_max == libc::RLIM_INFINITY {
        let raised = libc::rlimit {
            rlim_cur: needed as libc::rlim_t,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we pass.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Ok(());
        }
    }
    Err(format!(
        "-c {connections} needs about {needed} open files but the limit is {} (hard limit {}); \
         raise it first, e.g. `ulimit -n {needed}` (as root, or in /etc/security/limits.conf)",
        lim.rlim_cur, lim.rlim_max
    ))
}
