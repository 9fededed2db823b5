//! A server in a network namespace of the test's own, reached over a veth pair, so a test can
//! cut the network under a live connection: packets vanish (no RST, no FIN), which neither a
//! killed nor a frozen server shows.
//!
//! The namespace, the veth pair and the /30 between its ends exist only for the test (names
//! carry the test process's PID and a counter, the /30 is checked free first); the server runs
//! inside it (`ip netns exec`, which execs the server, so the child's PID is the server's) and
//! respbench, in the root namespace, talks to the peer address. A partition is a `pfifo limit 0`
//! queue (every packet dropped) on both ends — a queue drops only what leaves through its own
//! interface — and healing deletes both. The CI kernels have no `netem` and no packet filter
//! modules; this needs neither. Without root, or where `ip netns add` fails, `start` prints why
//! and returns `None`, and the test skips. Everything is undone in `Drop`: the server (by its
//! PID), the veth pair, the namespace.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::harness::{ServerKind, TempDir, die_with_parent};

/// The port the server listens on inside its namespace (nothing else is there).
const PORT: u16 = 6379;

/// Namespaces made by this test process so far (names and subnets stay unique).
static MADE: AtomicU32 = AtomicU32::new(0);

/// A server alone in a network namespace, reached at [`NetnsServer::addr`].
pub struct NetnsServer {
    ns: String,
    /// The root namespace's end of the veth pair (deleting it deletes both ends).
    host_if: String,
    /// The namespace's end.
    peer_if: String,
    peer_ip: String,
    child: Option<Child>,
    _dir: TempDir,
}

impl NetnsServer {
    /// Starts a `kind` server in a new namespace, or says why it cannot and returns `None`.
    pub fn start(kind: ServerKind) -> Option<NetnsServer> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED: network namespaces need root (tests run as root in CI)");
            return None;
        }
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let ns = format!("respbench-{pid}-{n}");
        if let Err(e) = ip(&["netns", "add", &ns]) {
            eprintln!("SKIPPED: cannot create a network namespace ({e})");
            return None;
        }
        let tag = format!("{:x}", (pid << 4) ^ n);
        let mut me = NetnsServer {
            host_if: format!("rbh{tag}"),
            peer_if: format!("rbp{tag}"),
            ns,
            peer_ip: String::new(),
            child: None,
            _dir: TempDir::new(),
        };
        let (host_ip, peer_ip) = free_slash30(pid, n);
        me.peer_ip = peer_ip.clone();
        let steps: [&[&str]; 7] = [
            &[
                "link",
                "add",
                &me.host_if,
                "type",
                "veth",
                "peer",
                "name",
                &me.peer_if,
            ],
            &["link", "set", &me.peer_if, "netns", &me.ns],
            &["addr", "add", &format!("{host_ip}/30"), "dev", &me.host_if],
            &["link", "set", &me.host_if, "up"],
            &[
                "-n",
                &me.ns,
                "addr",
                "add",
                &format!("{peer_ip}/30"),
                "dev",
                &me.peer_if,
            ],
            &["-n", &me.ns, "link", "set", &me.peer_if, "up"],
            &["-n", &me.ns, "link", "set", "lo", "up"],
        ];
        for step in steps {
            if let Err(e) = ip(step) {
                eprintln!("SKIPPED: cannot set up a veth pair ({e})");
                return None; // Drop removes what was made
            }
        }
        me.child = Some(me.spawn_server(kind));
        me.wait_ready();
        Some(me)
    }

    fn spawn_server(&self, kind: ServerKind) -> Child {
        let log = std::fs::File::create(self._dir.path().join("server.log")).expect("log file");
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns, &kind.binary()])
            .args(["--port", &PORT.to_string(), "--bind", &self.peer_ip])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--protected-mode", "no"])
            .arg("--dir")
            .arg(self._dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log);
        die_with_parent(&mut cmd);
        cmd.spawn().expect("start the server in its namespace")
    }

    /// Waits (at most 10 s) until the server answers PING across the veth pair.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let addr = self.socket_addr();
        while Instant::now() < deadline {
            if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) {
                let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 7];
                if s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() {
                    return;
                }
            }
            thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(self._dir.path().join("server.log")).unwrap_or_default();
        panic!(
            "the server in {} did not answer PING; its log:\n{log}",
            self.ns
        );
    }

    /// The server's address as respbench's `-h` takes it.
    pub fn addr(&self) -> &str {
        &self.peer_ip
    }

    pub fn port(&self) -> u16 {
        PORT
    }

    fn socket_addr(&self) -> SocketAddr {
        format!("{}:{PORT}", self.peer_ip).parse().expect("address")
    }

    /// Every packet either way is dropped from now on (no RST, no FIN: they vanish).
    pub fn partition(&self) {
        self.tc(&[
            "qdisc",
            "replace",
            "dev",
            &self.host_if,
            "root",
            "pfifo",
            "limit",
            "0",
        ]);
        self.tc_ns(&[
            "qdisc",
            "replace",
            "dev",
            &self.peer_if,
            "root",
            "pfifo",
            "limit",
            "0",
        ]);
    }

    /// Packets flow again (TCP retransmits what was dropped).
    pub fn heal(&self) {
        self.tc(&["qdisc", "del", "dev", &self.host_if, "root"]);
        self.tc_ns(&["qdisc", "del", "dev", &self.peer_if, "root"]);
    }

    /// `netem` adds `delay` to every packet leaving either end; `Err` where the kernel has no
    /// `netem` (then nothing changed).
    pub fn delay_each_way(&self, delay: Duration) -> Result<(), String> {
        let ms = format!("{}ms", delay.as_millis());
        let root = [
            "qdisc",
            "replace",
            "dev",
            &self.host_if,
            "root",
            "netem",
            "delay",
            &ms,
        ];
        run("tc", &root)?;
        let mut peer = vec!["netns", "exec", &self.ns, "tc", "qdisc", "replace", "dev"];
        peer.extend([self.peer_if.as_str(), "root", "netem", "delay", &ms]);
        run("ip", &peer)
    }

    fn tc(&self, args: &[&str]) {
        run("tc", args).unwrap_or_else(|e| panic!("{e}"));
    }

    fn tc_ns(&self, args: &[&str]) {
        let mut all = vec!["netns", "exec", &self.ns, "tc"];
        all.extend_from_slice(args);
        run("ip", &all).unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Drop for NetnsServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Our own child, by its PID (ip netns exec became the server).
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = ip(&["link", "del", &self.host_if]);
        let _ = ip(&["netns", "del", &self.ns]);
    }
}

/// A /30 in 10.213.0.0/16 no interface of this host has yet: (root end, namespace end).
fn free_slash30(pid: u32, n: u32) -> (String, String) {
    let used = Command::new("ip")
        .args(["-4", "-o", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let start = (pid.wrapping_mul(64).wrapping_add(n)) % 16384;
    for k in 0..16384 {
        let block = (start + k) % 16384;
        let base = block * 4;
        let host = format!("10.213.{}.{}", base / 256, base % 256 + 1);
        let peer = format!("10.213.{}.{}", base / 256, base % 256 + 2);
        if !used.contains(&format!("{host}/")) && !used.contains(&format!("{peer}/")) {
            return (host, peer);
        }
    }
    panic!("no free /30 in 10.213.0.0/16");
}

fn ip(args: &[&str]) -> Result<(), String> {
    run("ip", args)
}

/// Runs a short administrative command; its stderr in the error.
fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
