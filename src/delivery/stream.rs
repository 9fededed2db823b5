//! `--stream`: producers `XADD` stamped entries to one stream (the run's own key, deleted and
//! created afresh with its consumer group), K consumers of one group read them with
//! `XREADGROUP … BLOCK` and `XACK` each batch, on a few threads' poll loops (`consumers.rs`). The group owes every entry to exactly one
//! consumer, so one tally is shared by all consumers (a lock per read batch): an entry delivered
//! twice, to any consumer, is a duplicate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::conn::{self, Args, Command};
use super::consumers::{self, FIELD, GROUP};
use super::monitor::{self, Probe};
use super::route::{Nodes, Router};
use super::seconds;
use super::tally::Tally;
use super::{DeliveryResult, DeliverySpec, Live, Mode};
use crate::engine::control::{ControlConn, error_text};
use crate::engine::{ConnSetup, EngineError, Observer};

struct Add {
    key: Vec<u8>,
}

impl Command for Add {
    fn args<'a>(&'a self, _: u64, payload: &'a [u8]) -> (usize, Args<'a>) {
        (0, ([b"XADD", &self.key, b"*", FIELD, payload], 5))
    }
}

pub(super) fn run(
    spec: &DeliverySpec,
    nodes: &Nodes,
    interrupted: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<DeliveryResult, EngineError> {
    let Mode::Stream { consumers } = spec.mode else {
        unreachable!("stream::run is for --stream")
    };
    let add = Add {
        key: spec.stream_key(),
    };
    // The stream's node (in a cluster, the primary owning its key's slot): the group, the
    // consumers and the producers all go there.
    let setup = &nodes.setups[nodes.of_name[0]];
    let mut control = super::connect::open(setup)?;
    prepare(&mut control, &add.key, setup)?;
    let readers = (0..consumers)
        .map(|_| super::connect::open(setup))
        .collect::<Result<Vec<_>, _>>()?;
    let mut producers = (0..spec.publishers)
        .map(|_| Router::open(nodes))
        .collect::<Result<Vec<_>, _>>()?;
    // Each entry is owed to one consumer of the group.
    let exact = observer.exact_seconds();
    let live = Live::new(
        vec![1],
        (spec.publishers, consumers as usize),
        interrupted,
        exact,
    );
    let tally = Tally::new(spec.messages).keeping_exact(live.exact());
    let shared = Mutex::new(tally);
    let behind = || consumers::behind(&live);
    let probe = Probe::Stream {
        key: add.key.clone(),
        group: GROUP.to_vec(),
    };
    let threads = spec.threads.clamp(1, consumers as usize);
    let mut shares: Vec<Vec<(u32, ControlConn)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in readers.into_iter().enumerate() {
        shares[i % threads].push((i as u32, c));
    }
    let group = consumers::Group {
        live: &live,
        tally: &shared,
        key: &add.key,
    };
    let (published, ends, (rows, _)) = std::thread::scope(|s| {
        let monitor =
            s.spawn(|| monitor::watch(std::slice::from_ref(setup), &live, &probe, &behind));
        let loops: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let group = &group;
                s.spawn(move || consumers::run(group, share))
            })
            .collect();
        let publishers: Vec<_> = producers
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                let (live, add) = (&live, &add);
                s.spawn(move || conn::publish(spec, live, c, i as u32, add))
            })
            .collect();
        let waiting = seconds::Waiting::new(&live, spec.publishers);
        let (published, ends) = waiting.join(publishers, loops, observer);
        (published, ends, monitor.join().unwrap_or_default())
    });
    let mut tally = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    tally.hand_rest(&live.timeline);
    let acked = ends.iter().map(|e| e.acked).sum();
    let disconnects = ends.into_iter().flat_map(|e| e.disconnects);
    let mut received = vec![Some((tally, None))];
    received.extend(disconnects.map(|d| Some((Tally::new(0), Some(d)))));
    let expected = live.published[0].load(Ordering::Relaxed);
    let home = &nodes.names[nodes.of_name[0]];
    let parts: Vec<Vec<(String, u64)>> = (0..consumers as usize)
        .map(|i| vec![(home.clone(), live.received[i].load(Ordering::Relaxed))])
        .collect();
    let per_node = super::result::per_node(nodes, &published, &parts);
    let mut result = super::result::finish(spec, &live, &published, received, rows, expected);
    result.block.acked = Some(acked);
    result.block.nodes = per_node;
    Ok(result)
}

/// The stream afresh: the run's own key deleted, then created with the group at its end.
fn prepare(c: &mut ControlConn, key: &[u8], setup: &ConnSetup) -> Result<(), EngineError> {
    let fail = |what: &str, e: String| {
        EngineError::Other(format!("{}: {what} failed: {e}", setup.target.display()))
    };
    if let Some(e) = error_text(&c.call(&[b"DEL".as_slice(), key])?) {
        return Err(fail("DEL of the stream", e));
    }
    let create = [
        b"XGROUP".as_slice(),
        b"CREATE",
        key,
        GROUP,
        b"$",
        b"MKSTREAM",
    ];
    if let Some(e) = error_text(&c.call(&create)?) {
        return Err(fail("XGROUP CREATE", e));
    }
    Ok(())
}
