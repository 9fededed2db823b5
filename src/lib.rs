//! respbench: a load generator and benchmark for servers that speak RESP.
//!
//! Dependency direction (no loops; `docs/architecture.md` says why `plan → engine`):
//! `main → cli, plan, run, compare, merge`; `run → cli, plan, engine, cluster, workload,
//! report, metrics, record, watch, sentinel, slo`; `sentinel → cli, engine, record`;
//! `plan → cli, engine, workload, slo`; `engine → cluster, workload, metrics`; `cluster →
//! workload`; `record → cli, plan, engine, workload, metrics, watch, verdict, clock`; `watch →
//! engine`; `report → metrics, record, watch`;
//! `compare → metrics, record` (the `compare` and `report` subcommands read results files, never
//! the engine); `merge → cli, plan, metrics, record, workload`; `cli`, `metrics`, `verdict`,
//! `clock`, `slo` and `workload` import nothing of the crate. `main` alone decides messages and
//! exit codes.

pub mod cli;
pub mod clock;
pub mod cluster;
pub mod compare;
pub mod engine;
pub mod manual;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod run;
pub mod sentinel;
pub mod slo;
pub mod verdict;
pub mod watch;
pub mod workload;
