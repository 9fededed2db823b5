//! A fault proxy: a TCP relay on loopback, between respbench and a server, that adds a delay to
//! each direction and can hold everything it carries (a stall: bytes neither delivered nor
//! refused, no RST, as in a partition the client's kernel cannot see) and let it through later.
//!
//! Why a relay of the test's own and not `netem`: the CI kernels have no `netem` module, and a
//! relay works without root. What it cannot do is lose packets below TCP (TCP retransmits them,
//! which `netns.rs`'s `pfifo limit 0` partition shows); what it does do is exact: a chunk read at `t`
//! is written no earlier than `t + delay`, so a round trip takes at least twice the delay.
//!
//! Every thread it starts polls a stop flag at least every 50 ms and is joined on drop, so a
//! test that panics leaves nothing running.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How often every blocked thread looks at the stop flag.
const TICK: Duration = Duration::from_millis(50);

/// What the proxy's threads share.
#[derive(Default)]
struct Control {
    /// Added to each direction, in microseconds.
    delay_us: AtomicU64,
    /// While set, nothing is forwarded (bytes are read and kept, in order).
    held: AtomicBool,
    stop: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// The relay; stops and joins its threads on drop.
pub struct FaultProxy {
    port: u16,
    ctl: Arc<Control>,
    accept: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// Relays every connection to `127.0.0.1:<port>` to `upstream`, each direction `delay` late.
    pub fn start(upstream: SocketAddr, delay: Duration) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let port = listener.local_addr().expect("proxy address").port();
        let ctl = Arc::new(Control::default());
        ctl.delay_us
            .store(delay.as_micros() as u64, Ordering::Relaxed);
        let c = ctl.clone();
        let accept = thread::spawn(move || accept_loop(listener, upstream, c));
        FaultProxy {
            port,
            ctl,
            accept: Some(accept),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// From now on nothing goes through, either way, until [`FaultProxy::release`].
    pub fn hold(&self) {
        self.ctl.held.store(true, Ordering::Relaxed);
    }

    /// Lets what was held go through, in order, and everything after it.
    pub fn release(&self) {
        self.ctl.held.store(false, Ordering::Relaxed);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.ctl.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        let threads = std::mem::take(&mut *self.ctl.threads.lock().unwrap());
        for h in threads {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, ctl: Arc<Control>) {
    while !ctl.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((client, _)) => {
                let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))
                else {
                    continue; // dropping the client closes it: as if the server were gone
                };
                let _ = client.set_nonblocking(false);
                let mut threads = ctl.threads.lock().unwrap();
                threads.extend(relay(&client, &server, &ctl));
                threads.extend(relay(&server, &client, &ctl));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5))
            }
            Err(_) => thread::sleep(TICK),
        }
    }
}

/// One direction: a reader that timestamps what it reads, and a writer that sends each chunk
/// once its delay has passed and nothing is held. The end of the input is passed on as a
/// half-close, after what came before it.
fn relay(from: &TcpStream, to: &TcpStream, ctl: &Arc<Control>) -> [JoinHandle<()>; 2] {
    let (tx, rx) = mpsc::channel::<(Instant, Option<Vec<u8>>)>();
    let mut from = from.try_clone().expect("clone socket");
    let mut to = to.try_clone().expect("clone socket");
    from.set_read_timeout(Some(TICK)).expect("read timeout");
    let (c_read, c_write) = (ctl.clone(), ctl.clone());
    let reader = thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        while !c_read.stop.load(Ordering::Relaxed) {
            match from.read(&mut buf) {
                Ok(0) => {
                    let _ = tx.send((Instant::now(), None));
                    return;
                }
                Ok(n) => {
                    if tx.send((Instant::now(), Some(buf[..n].to_vec()))).is_err() {
                        return;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => {
                    // A reset: passed on as a close, after what came before it.
                    let _ = tx.send((Instant::now(), None));
                    return;
                }
            }
        }
    });
    let writer = thread::spawn(move || {
        let ctl = c_write;
        loop {
            let (at, chunk) = match rx.recv_timeout(TICK) {
                Ok(item) => item,
                Err(RecvTimeoutError::Timeout) if !ctl.stop.load(Ordering::Relaxed) => continue,
                Err(_) => return,
            };
            let due = at + Duration::from_micros(ctl.delay_us.load(Ordering::Relaxed));
            loop {
                if ctl.stop.load(Ordering::Relaxed) {
                    return;
                }
                let now = Instant::now();
                if now >= due && !ctl.held.load(Ordering::Relaxed) {
                    break;
                }
                thread::sleep(
                    due.saturating_duration_since(now)
                        .clamp(Duration::from_micros(200), Duration::from_millis(5)),
                );
            }
            match chunk {
                Some(bytes) => {
                    if to.write_all(&bytes).is_err() {
                        return;
                    }
                }
                None => {
                    let _ = to.shutdown(Shutdown::Write);
                    return;
                }
            }
        }
    });
    [reader, writer]
}
