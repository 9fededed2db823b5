//! Proves the engine allocates nothing per request in steady state: the number of heap
//! allocations made while running a test must not grow with the number of requests.
//!
//! Its own test binary because it installs a counting global allocator.

#[allow(dead_code)]
#[path = "integration/harness.rs"]
mod harness;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use respbench::engine::tls::{TlsClient, TlsOptions, Verify};
use respbench::engine::{
    self, ConnSetup, ErrorPolicy, LoadSpec, Observer, Snapshot, Stop, Target, Transport,
};
use respbench::workload::PayloadGenerator;
use respbench::workload::Template;
use respbench::workload::dataset::{self, Dataset, FieldTemplate};
use respbench::workload::template::parse_custom_command;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct Quiet;

impl Observer for Quiet {
    fn interrupted(&self) -> bool {
        false
    }
    fn tick(&mut self, _: &Snapshot) {}
}

/// Allocations made by one `run_test` of `requests` commands.
fn allocations_for(setup: &ConnSetup, load: &LoadSpec, template: &Template, requests: u64) -> u64 {
    let load = LoadSpec {
        stop: Stop::Requests(requests),
        ..load.clone()
    };
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let (result, fatal) = engine::run_test(setup, &load, "alloc", template, None, &mut Quiet);
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(fatal.is_none(), "run failed: {fatal:?}");
    assert_eq!(result.completed + result.errors.total(), requests);
    after - before
}

fn template(command: &str) -> Template {
    let args: Vec<Vec<u8>> = command.split(' ').map(|a| a.as_bytes().to_vec()).collect();
    let items = parse_custom_command(&args, None, 16, &mut PayloadGenerator::default()).unwrap();
    Template::encode(&items, true)
}

/// The allocation counter is process-wide, so the tests must not overlap.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn check(name: &str, prefix_resp3: bool, load: LoadSpec, command: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let server = harness::Server::start();
    let target = Target::tcp("127.0.0.1", server.port()).unwrap();
    check_on(target, name, prefix_resp3, load, command, 0);
}

/// `per_batch`: allocations a library below respbench is known to make per batch (a batch is one
/// write and, here, one reply record); respbench's own code must add none.
fn check_on(
    target: Target,
    name: &str,
    prefix_resp3: bool,
    load: LoadSpec,
    command: &str,
    per_batch: u64,
) {
    let mut prefix = Vec::new();
    let mut prefix_commands = Vec::new();
    if prefix_resp3 {
        resp::encode_command(&mut prefix, &[b"HELLO".as_slice(), b"3"]);
        prefix_commands.push("HELLO 3");
    }
    let setup = ConnSetup {
        target,
        prefix,
        prefix_commands,
    };
    let t = template(command);
    // Warm the process (thread-locals, lazy statics) before comparing.
    allocations_for(&setup, &load, &t, 2_000);
    let small = allocations_for(&setup, &load, &t, 5_000);
    let large = allocations_for(&setup, &load, &t, 100_000);
    // Per-test setup (threads, buffers, histograms) is the same for both runs; 95,000 more
    // requests may add a few allocations from progress bookkeeping, never one per request.
    let per_unit = u64::from(t.commands_per_unit.max(1));
    let more_batches = 95_000 / (u64::from(load.pipeline) * per_unit);
    // (A library's share gets 5% slack: a reply split over two records now and then.)
    let allowed = per_batch * more_batches * 105 / 100 + 100;
    assert!(
        large <= small + allowed,
        "{name}: {small} allocations for 5,000 requests but {large} for 100,000 (at most \
         {allowed} more allowed): something allocates per request"
    );
}

fn base() -> LoadSpec {
    LoadSpec {
        clients: 20,
        workers: 1,
        pipeline: 1,
        stop: Stop::Requests(1),
        warmup: std::time::Duration::ZERO,
        rps: None,
        keepalive: true,
        reconnect_interval: None,
        conn_start_jitter_us: (0, 0),
        ramp: None,
        backoff_factor: None,
        max_reconnect_attempts: None,
        keyspace: Some(100_000),
        sequential: false,
        seed: 1,
        on_error: ErrorPolicy::Abort,
        dataset: None,
        reply_timeout: None,
        key_pattern: respbench::workload::distribution::KeyPattern::Uniform,
        key_min: 0,
        arrival: respbench::engine::Arrival::Uniform,
        value_sizes: None,
        mix: None,
        shard: respbench::workload::split::Share::WHOLE,
        key_drift: None,
        scan_walk: None,
        conn_seconds: false,
        quota_per_conn: false,
    }
}

#[test]
fn no_allocation_per_request_closed_loop() {
    check("SET -P 1", false, base(), "SET key:__rand_int__ __data__");
}

#[test]
fn no_allocation_per_request_pipelined_sequence_threads_resp3() {
    let load = LoadSpec {
        pipeline: 16,
        workers: 2,
        sequential: true,
        ..base()
    };
    check(
        "sequence -P 16 --threads 2 -3",
        true,
        load,
        "SET k:__rand_1st__ __data__ ; GET k:__rand_1st__ ; LRANGE mylist 0 9 ; LPUSH mylist __rand_int__",
    );
}

#[test]
fn no_allocation_per_request_sized_values_skewed_keys() {
    use respbench::workload::distribution::KeyPattern;
    use respbench::workload::sizes::SizeDist;
    // The template is encoded with 16-byte values: the sizes' largest.
    let load = LoadSpec {
        pipeline: 8,
        key_pattern: KeyPattern::Zipf { exponent: 1.1 },
        value_sizes: Some(SizeDist::Range { min: 1, max: 16 }),
        ..base()
    };
    check(
        "sized values -P 8, Zipf keys",
        false,
        load,
        "SET k:__rand_int__ __data__ ; HSET h:__rand_1st__ f x__data__",
    );
    let load = LoadSpec {
        key_pattern: KeyPattern::Gaussian {
            median: None,
            stddev: None,
        },
        value_sizes: SizeDist::list(&[(2, 5), (16, 1), (9, 3)]),
        ..base()
    };
    check(
        "weighted sizes, Gaussian keys",
        false,
        load,
        "SET k:__rand_int__ __data__",
    );
}

#[test]
fn no_allocation_per_request_command_mix_pipelined() {
    use respbench::workload::mix::{Mix, MixCommand};
    use respbench::workload::sizes::SizeDist;
    let command = |name: &str, line: &str, weight| MixCommand {
        name: name.to_string(),
        template: template(line),
        weight,
        keys: None,
    };
    let mix = Mix::new(vec![
        command("SET", "SET k:__rand_int__ __data__", 1),
        command("GET", "GET k:__rand_int__", 10),
    ])
    .unwrap();
    let load = LoadSpec {
        pipeline: 16,
        workers: 2,
        value_sizes: Some(SizeDist::Range { min: 4, max: 16 }),
        mix: Some(Arc::new(mix)),
        ..base()
    };
    // The template argument only gives the unit's command count (1); the mix decides the bytes.
    check("SET:GET 1:10 mix -P 16", false, load, "GET k:__rand_int__");
}

#[test]
fn no_allocation_per_request_memtier_shapes() {
    use respbench::workload::mix::{Mix, MixCommand};
    use respbench::workload::shape::{MemtierShape, POOL_SLACK, random_pool};
    use respbench::workload::sizes::SizeDist;
    let command = |name: &str, line: &str, weight| MixCommand {
        name: name.to_string(),
        template: template(line),
        weight,
        keys: None,
    };
    // memtier's writer: unpadded keys, random values, SETEX, MGETs of up to 4 keys, and a
    // --command line with a key and a sized value.
    let shape = MemtierShape {
        key_prefix: b"memtier-".to_vec(),
        expiry: Some((100, 200)),
        random_pool: random_pool(16 + POOL_SLACK, 1),
        multi_key_get: 4,
        gets_per_cycle: 10,
        data_size: 16,
        ..MemtierShape::default()
    };
    let mix = Mix::new(vec![
        command("SET", "SET memtier-__rand_int__ __data__", 1),
        command("GET", "GET memtier-__rand_int__", 3),
    ])
    .unwrap()
    .in_order()
    .with_memtier(Arc::new(shape.clone()), true);
    let load = LoadSpec {
        pipeline: 16,
        workers: 2,
        value_sizes: Some(SizeDist::Range { min: 4, max: 16 }),
        mix: Some(Arc::new(mix)),
        ..base()
    };
    check(
        "memtier SET:GET -R --expiry-range --multi-key-get",
        false,
        load,
        "GET k:__rand_int__",
    );
    let lines = Mix::new(vec![command("HSET", "HSET h:__rand_int__ f __data__", 1)])
        .unwrap()
        .with_memtier(Arc::new(shape), false);
    let load = LoadSpec {
        pipeline: 16,
        value_sizes: Some(SizeDist::Range { min: 4, max: 16 }),
        mix: Some(Arc::new(lines)),
        ..base()
    };
    check("memtier --command line", false, load, "GET k:__rand_int__");
}

#[test]
fn no_allocation_per_request_memtier_import() {
    use respbench::workload::distribution::KeyPattern;
    use respbench::workload::import::ImportFile;
    use respbench::workload::mix::{Mix, MixCommand};
    use respbench::workload::shape::{Imported, MemtierShape};
    // memtier's --data-import: SETs walk the file's items (quoted values with "" inside, some
    // SETEX), GETs read its keys; each item is parsed from the file's bytes as it is written.
    let mut dump =
        b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n".to_vec();
    for i in 0..1_000 {
        let (key, value) = (
            format!("imp:{i}"),
            format!("v{i} \"\"quoted\"\" {}", "x".repeat(i % 40)),
        );
        let len = value.len() - value.matches("\"\"").count();
        let line = format!(
            "0, 0, {}, {}, 0, 0, 1, {}, \"{key}\", \"{value}\"\n",
            if i % 2 == 0 { 0 } else { 500 },
            len + 2,
            key.len()
        );
        dump.extend_from_slice(line.as_bytes());
    }
    let file = Arc::new(ImportFile::index("dump.csv", Box::new(dump)).unwrap());
    let shape = MemtierShape {
        key_prefix: b"memtier-".to_vec(),
        data_size: 16,
        import: Some(Imported {
            file,
            generated_from: None,
            no_expiry: false,
        }),
        ..MemtierShape::default()
    };
    let command = |name: &str, line: &str, weight, keys| MixCommand {
        name: name.to_string(),
        template: template(line),
        weight,
        keys,
    };
    let mix = Mix::new(vec![
        command("SET", "SET memtier-__rand_int__ __data__", 1, None),
        command(
            "GET",
            "GET memtier-__rand_int__",
            3,
            Some(KeyPattern::Uniform),
        ),
    ])
    .unwrap()
    .in_order()
    .with_memtier(Arc::new(shape), true);
    let load = LoadSpec {
        pipeline: 16,
        workers: 2,
        keyspace: Some(1_000),
        sequential: true,
        key_pattern: KeyPattern::Sequential,
        mix: Some(Arc::new(mix)),
        ..base()
    };
    check("memtier --data-import", false, load, "GET k:__rand_int__");
}

#[test]
fn no_allocation_per_request_scan_cursor_walk() {
    // memtier's --scan-incremental-iteration: every SCAN is rewritten with the cursor its
    // connection's last reply returned; 2,000 keys make walks of many cursors.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let server = harness::Server::start();
    let mut mset = vec!["MSET".to_string()];
    for i in 0..2_000 {
        mset.extend([format!("k:{i}"), "v".to_string()]);
    }
    server.client().ok(&mset);
    let load = LoadSpec {
        scan_walk: Some(respbench::engine::ScanWalk::default()),
        ..base()
    };
    let target = Target::tcp("127.0.0.1", server.port()).unwrap();
    check_on(
        target,
        "SCAN cursor walk -P 1",
        false,
        load,
        "SCAN 0 COUNT 10",
        0,
    );
}

#[test]
fn no_allocation_per_request_counting_errors() {
    let load = LoadSpec {
        on_error: ErrorPolicy::Count,
        ..base()
    };
    // INCR on a hash: every other reply is a WRONGTYPE error, counted by its first word.
    check("errors -e", false, load, "HSET h f v ; INCR h");
}

#[test]
fn no_allocation_per_request_dataset_pipelined() {
    // 500 records of different lengths, each unit with a __rand_*__ slot: batches are rebuilt
    // from the pre-encoded units into each connection's reused buffer.
    let mut csv = String::from("id,name\n");
    for i in 0..500 {
        csv.push_str(&format!("{i},\"name, {}\"\n", "x".repeat(i % 37)));
    }
    let command = "HSET doc:__field:id__ name __field:name__ seen __rand_int__";
    let args: Vec<Vec<u8>> = command.split(' ').map(|a| a.as_bytes().to_vec()).collect();
    let items = parse_custom_command(&args, None, 16, &mut PayloadGenerator::default()).unwrap();
    let fields = FieldTemplate::compile(&items, true).unwrap();
    let table = dataset::Layout::Table { delimiter: b',' };
    let dataset = Dataset::load(&fields, csv.as_bytes(), table, "test", None).unwrap();
    let load = LoadSpec {
        pipeline: 8,
        workers: 2,
        dataset: Some(std::sync::Arc::new(dataset)),
        ..base()
    };
    check("dataset -P 8 --threads 2", false, load, command);
}

/// Over TLS: respbench's stream adds nothing per request; rustls 0.23 allocates one buffer per
/// record it encrypts and one per record it decrypts, so 2 per batch here (16 SETs go out as one
/// record, their 16 replies come back as one), and that is all that is allowed. One allocation
/// more per request would be 16 per batch.
#[test]
fn no_allocation_per_request_over_tls() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let certs = harness::TestCerts::new();
    let server = harness::Server::start_with(harness::ServerOptions {
        tls: Some(harness::ServerTls::new(&certs)),
        ..Default::default()
    });
    let client = TlsClient::new(&TlsOptions {
        verify: Verify::Chain {
            cacert: Some(certs.ca.clone()),
            cacertdir: None,
            name: false,
        },
        ..Default::default()
    })
    .unwrap();
    let transport = Transport {
        tls: Some(Arc::new(client)),
        ..Transport::default()
    };
    let target = Target::tcp_with("127.0.0.1", server.tls_port(), transport).unwrap();
    let load = LoadSpec {
        pipeline: 16,
        workers: 2,
        ..base()
    };
    check_on(
        target,
        "TLS -P 16 --threads 2 -3",
        true,
        load,
        "SET key:__rand_int__ __data__",
        2,
    );
}

/// memtier's `--client-stats`: each connection counts its replies per second in its own state
/// (a row added once a second, never per request).
#[test]
fn no_allocation_per_request_client_stats() {
    let load = LoadSpec {
        conn_seconds: true,
        quota_per_conn: false,
        workers: 2,
        ..base()
    };
    check(
        "--client-stats",
        false,
        load,
        "SET key:__rand_int__ __data__",
    );
}

/// A MONITOR trace of `n` SETs from 20 clients, 10 µs apart.
fn set_trace(n: usize) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for i in 0..n {
        let us = i * 10;
        let _ = writeln!(
            text,
            "{}.{:06} [0 127.0.0.1:{}] \"SET\" \"key:{}\" \"xxx\"",
            1_700_000_000 + us / 1_000_000,
            us % 1_000_000,
            40_000 + i % 20,
            i % 1_000
        );
    }
    text
}

/// Allocations made by one `respbench replay --speed max` of `n` SETs, in this process.
fn replay_allocations(port: u16, dir: &std::path::Path, n: usize) -> u64 {
    // The registry's tables, as `main` installs them before any command line is read.
    respbench::modes::install();
    let path = dir.join(format!("t{n}.trace"));
    std::fs::write(&path, set_trace(n)).unwrap();
    let args = ["-p", &port.to_string(), "--speed", "max", "-q"]
        .iter()
        .map(std::ffi::OsString::from)
        .chain([path.into_os_string()])
        .collect();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let code = respbench::replay::main(args);
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(
        code,
        std::process::ExitCode::SUCCESS,
        "replay of {n} failed"
    );
    after - before
}

/// A replayed command is read, scheduled, handed to its thread, sent and timed without an
/// allocation of its own: the commands reach their threads in chunks of up to 256, two
/// allocations each (their buffers), and nothing else grows with the trace's length.
#[test]
fn no_allocation_per_replayed_command() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let server = harness::Server::start();
    let dir = harness::TempDir::new();
    replay_allocations(server.port(), dir.path(), 1_000);
    let small = replay_allocations(server.port(), dir.path(), 5_000);
    let large = replay_allocations(server.port(), dir.path(), 100_000);
    // Per chunk of 256 commands: its two buffers. Per connection: its buffers and queue
    // growing to their high-water mark, which a longer replay may set higher.
    let allowed = 95_000 / 256 * 2 + 20 * 30 + 100;
    assert!(
        large <= small + allowed,
        "replay: {small} allocations for 5,000 commands but {large} for 100,000 (at most \
         {allowed} more allowed): something allocates per command"
    );
}

/// Allocations made by one `--pubsub 4` test of `messages` messages, and its time.
fn pubsub_allocations(setup: &ConnSetup, messages: u64) -> (u64, std::time::Duration) {
    use respbench::delivery::{self, DeliverySpec, Mode};
    let spec = DeliverySpec {
        mode: Mode::PubSub {
            subscribers: 4,
            channels: 1,
            patterns: false,
            sharded: false,
            slow: None,
        },
        publishers: 1,
        messages,
        rate: None,
        payload: 32,
        prefix: b"alloc:".to_vec(),
        threads: 1,
        keep_going: false,
        timeout: None,
    };
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let result = delivery::run(&spec, (setup, None), interrupted, &mut Quiet).unwrap();
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(
        result.block.delivered,
        messages * 4,
        "every message to every subscriber"
    );
    (after - before, result.elapsed)
}

/// A delivered message (its publish, and each subscriber's read of it) allocates nothing:
/// what grows with a longer test is per second (its timeline, the server watch's samples).
#[test]
fn no_allocation_per_delivered_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let server = harness::Server::start();
    let setup = ConnSetup {
        target: Target::tcp("127.0.0.1", server.port()).unwrap(),
        prefix: Vec::new(),
        prefix_commands: Vec::new(),
    };
    pubsub_allocations(&setup, 200);
    let (small, _) = pubsub_allocations(&setup, 1_000);
    let (large, elapsed) = pubsub_allocations(&setup, 20_000);
    // Per second of the longer test: its seconds handed over and the server watch's samples.
    let allowed = 2_000 * (elapsed.as_secs() + 1) + 100;
    assert!(
        large <= small + allowed,
        "--pubsub 4: {small} allocations for 1,000 messages but {large} for 20,000 in {elapsed:?} \
         (at most {allowed} more allowed): something allocates per message"
    );
}
