//! respbench: a load generator and benchmark for servers that speak RESP.
//!
//! Dependency direction (no loops; `docs/architecture.md` says why `plan → engine`):
//! `main → cli, plan, run, compare, htmlreport`; `run → cli, plan, engine, cluster, workload,
//! report, metrics, record, watch`; `plan → cli, engine, workload`; `engine → cluster, workload,
//! metrics`; `cluster → workload`; `record → cli, plan, engine, workload, metrics, watch,
//! verdict`; `watch → engine`; `report → metrics, record, watch, verdict`; `htmlreport →
//! compare` (the `compare` and `report` subcommands read results files, never the engine); `cli`,
//! `metrics` and `verdict` import nothing of the crate. `main` alone decides messages and exit
//! codes.

pub mod cli;
pub mod cluster;
pub mod compare;
pub mod engine;
pub mod htmlreport;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod run;
pub mod verdict;
pub mod watch;
pub mod workload;
