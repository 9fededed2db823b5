//! respbench: a load generator and benchmark for servers that speak RESP.
//!
//! The modules and which may import which (no loops) are listed once, in `docs/architecture.md`
//! ("Modules", "Dependency direction"). `main` alone decides messages and exit codes.

pub mod cli;
pub mod cluster;
pub mod compare;
pub mod engine;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod run;
pub mod sentinel;
pub mod slo;
pub mod timestamp;
pub mod verdict;
pub mod watch;
pub mod workload;
