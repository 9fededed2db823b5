//! Cluster mode's part of the run: discovering the cluster through the entry node, listing the
//! benchmark nodes, running setup commands on every primary, and learning per test how its
//! template routes and which nodes its connections bind to.

use std::io::{self, Write};
use std::sync::Arc;

use super::{Failure, fetch_config};
use crate::cli::{Endpoint, ReadFromReplicas};
use crate::cluster::route::{Call, Commands, UnitKeys, UnitRoutes};
use crate::cluster::slot::{TagTable, hashed_part};
use crate::cluster::topology::Topology;
use crate::engine::control::{ControlConn, error_text};
use crate::engine::{self, ClusterRun, ClusterShared, ConnSetup, LoadSpec};
use crate::metrics::Role;
use crate::plan::RunPlan;
use crate::report::{self, ClusterHeader};
use crate::workload::Template;
use crate::workload::mix::Mix;

/// Cluster mode's run-wide state: the shared topology, the benchmark nodes, what the report
/// header says, and what the server told us about commands.
pub(super) struct ClusterCtx {
    pub(super) shared: Arc<ClusterShared>,
    pub(super) tags: Arc<TagTable>,
    pub(super) commands: Commands,
    /// Nodes listed and configured: primaries, replicas or both (`--rfr`).
    pub(super) bench_nodes: Vec<usize>,
    pub(super) kind: &'static str,
    pub(super) header: ClusterHeader,
    pub(super) auth: Option<Vec<Vec<u8>>>,
}

impl ClusterCtx {
    pub(super) fn discover(plan: &RunPlan, setup: &ConnSetup) -> Result<Self, Failure> {
        let entry_host = match &plan.endpoint {
            Endpoint::Tcp { host, .. } => host.clone(),
            Endpoint::Unix(_) => String::new(),
        };
        let topology = engine::cluster::discover(&setup.target, &entry_host, plan.auth.as_deref())?;
        let (bench_nodes, kind) = match plan.rfr {
            ReadFromReplicas::No => (topology.primaries(), "primary"),
            ReadFromReplicas::Yes => (topology.replicas(), "replica"),
            ReadFromReplicas::All => {
                let mut all = topology.primaries();
                all.extend(topology.replicas());
                (all, "cluster")
            }
        };
        if bench_nodes.is_empty() {
            return Err(Failure::Fatal(format!(
                "--rfr {}: the cluster at {} has no replicas",
                if plan.rfr == ReadFromReplicas::Yes {
                    "yes"
                } else {
                    "all"
                },
                setup.target.display()
            )));
        }
        let shared = Arc::new(ClusterShared::new(
            topology.clone(),
            &setup.target,
            &entry_host,
            plan.auth.clone(),
        )?);
        let mut node_configs = Vec::with_capacity(bench_nodes.len());
        for &n in &bench_nodes {
            let target = shared.target(n);
            let config = ControlConn::connect_auth(&target, plan.auth.as_deref())
                .ok()
                .and_then(|mut c| fetch_config(&mut c, &target).ok())
                .unwrap_or((None, None));
            if config.0.is_none() {
                eprintln!(
                    "WARNING: Could not fetch node CONFIG {}",
                    topology.nodes[n].display()
                );
            }
            node_configs.push(config);
        }
        Ok(Self {
            shared,
            tags: Arc::new(TagTable::new()),
            commands: Commands::default(),
            header: ClusterHeader {
                count: bench_nodes.len(),
                kind,
                node_configs,
            },
            bench_nodes,
            kind,
            auth: plan.auth.clone(),
        })
    }

    pub(super) fn write_listing(&self, out: &mut impl Write) -> io::Result<()> {
        let topo = self.shared.topology();
        let primaries = topo.primaries();
        let nodes: Vec<(Role, String, String)> = self
            .bench_nodes
            .iter()
            .map(|&n| {
                let role = if primaries.contains(&n) {
                    Role::Primary
                } else {
                    Role::Replica
                };
                (role, topo.nodes[n].id.clone(), topo.nodes[n].display())
            })
            .collect();
        report::write_cluster_listing(out, self.kind, &nodes)
    }

    /// Runs a setup command on every primary.
    pub(super) fn on_primaries(&self, cmd: &[Vec<u8>]) -> Result<(), String> {
        let topo = self.shared.topology();
        for n in topo.primaries() {
            let target = self.shared.target(n);
            let mut c = ControlConn::connect_auth(&target, self.auth.as_deref())
                .map_err(|e| e.to_string())?;
            if let Some(e) = error_text(&c.call(cmd).map_err(|e| e.to_string())?) {
                return Err(format!("{}: {e}", topo.nodes[n].display()));
            }
        }
        Ok(())
    }

    /// A control connection to every primary (memory per key adds up their figures).
    pub(super) fn primary_connections(&self) -> Result<Vec<ControlConn>, String> {
        let topo = self.shared.topology();
        topo.primaries()
            .into_iter()
            .map(|n| {
                ControlConn::connect_auth(&self.shared.target(n), self.auth.as_deref())
                    .map_err(|e| e.to_string())
            })
            .collect()
    }

    /// Learns how `template` (and each command of `load`'s mix) routes and which nodes its
    /// connections bind to.
    pub(super) fn prepare(
        &mut self,
        control: &mut ControlConn,
        template: &Template,
        plan: &RunPlan,
        load: &LoadSpec,
    ) -> Result<ClusterRun, Failure> {
        let mut call = |args: &[&[u8]]| control.call(args).map_err(|e| e.to_string());
        let placeholders = load.keyspace.is_some();
        let mut routes = self
            .commands
            .analyze(&mut call, template, placeholders)
            .map_err(|e| Failure::Fatal(format!("cluster mode: {e}")))?;
        let mix_keys = match &load.mix {
            Some(mix) => mix_keys(
                &mut self.commands,
                &mut call,
                mix,
                placeholders,
                &mut routes,
            )?,
            None => Vec::new(),
        };
        let topo = self.shared.topology();
        let serving = serving_nodes(&topo, &routes, plan.rfr)?;
        let all_primaries = serving == topo.primaries();
        Ok(ClusterRun {
            shared: self.shared.clone(),
            routes,
            serving,
            tags: self.tags.clone(),
            all_primaries,
            mix_keys,
        })
    }
}

/// Where each command of a mix has its keys (each unit is routed by them as it is written:
/// `engine/worker/cluster_mix.rs`); `routes` learns whether any of them writes.
fn mix_keys(
    commands: &mut Commands,
    call: &mut Call,
    mix: &Mix,
    placeholders: bool,
    routes: &mut UnitRoutes,
) -> Result<Vec<UnitKeys>, Failure> {
    let mut all = Vec::with_capacity(mix.commands.len());
    for (k, c) in mix.commands.iter().enumerate() {
        let r = commands
            .analyze(call, &c.template, placeholders)
            .map_err(|e| Failure::Fatal(format!("cluster mode: {e}")))?;
        routes.write |= r.write;
        let args = match mix.keys_per_unit(k) {
            // memtier's MGET: up to N keys from the first argument on, in one slot only if the
            // prefix holds a hash tag (memtier refuses --multi-key-get in cluster mode).
            Some(n) => {
                let prefix = mix.memtier_key_prefix().unwrap_or_default();
                if hashed_part(prefix) == prefix {
                    return Err(Failure::Fatal(
                        "--multi-key-get with --cluster-mode: an MGET's keys must share a slot; \
                         give --key-prefix a hash tag, e.g. --key-prefix '{memtier}-'"
                            .into(),
                    ));
                }
                (1..=n).collect()
            }
            None => r.key_args.into_iter().next().unwrap_or_default(),
        };
        // memtier's SET and GET write keys of their own, never the template's `{tag}`.
        let tagged = !r.tags.is_empty() && !mix.memtier_keys(k);
        all.push(UnitKeys { args, tagged });
    }
    Ok(all)
}

/// The nodes load connections bind to: writes always go to primaries; reads follow `--rfr`; a
/// unit with fixed keys goes to the shard that owns them.
pub(super) fn serving_nodes(
    topo: &Topology,
    routes: &UnitRoutes,
    rfr: ReadFromReplicas,
) -> Result<Vec<usize>, Failure> {
    let owners = topo.slot_owners();
    let mut primaries = topo.primaries();
    if !routes.fixed_slots.is_empty() {
        let mut shard: Vec<usize> = Vec::new();
        for &slot in &routes.fixed_slots {
            let o = owners[usize::from(slot)];
            if o == crate::cluster::topology::NO_OWNER {
                return Err(Failure::Fatal(format!(
                    "cluster mode: slot {slot} has no owner (is the cluster complete?)"
                )));
            }
            if !shard.contains(&usize::from(o)) {
                shard.push(usize::from(o));
            }
        }
        if shard.len() > 1 {
            return Err(Failure::Fatal(format!(
                "cluster mode: the command's fixed keys live on different nodes ({}); give them \
                 one hash tag, e.g. {{user1}}",
                shard
                    .iter()
                    .map(|&n| topo.nodes[n].display())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        primaries = shard;
    }
    let replicas_of = |ps: &[usize]| -> Vec<usize> {
        topo.ranges
            .iter()
            .filter(|r| ps.contains(&r.primary))
            .flat_map(|r| r.replicas.iter().copied())
            .fold(Vec::new(), |mut acc, n| {
                if !acc.contains(&n) {
                    acc.push(n);
                }
                acc
            })
    };
    Ok(match (routes.write, rfr) {
        (true, _) | (false, ReadFromReplicas::No) => primaries,
        (false, ReadFromReplicas::Yes) => {
            let r = replicas_of(&primaries);
            if r.is_empty() { primaries } else { r }
        }
        (false, ReadFromReplicas::All) => {
            let mut all = primaries.clone();
            all.extend(replicas_of(&primaries));
            all
        }
    })
}
