//! respbench: a load generator and benchmark for servers that speak RESP.
//!
//! What each module owns and which modules it may import: `docs/architecture.md` (the one
//! place for both; `tests/architecture.rs` checks its dependency line against the imports).

pub mod ab;
pub mod cli;
pub mod cluster;
pub mod compare;
pub mod delivery;
pub mod engine;
pub mod fuzz;
pub mod html;
pub mod live;
pub mod machine;
pub mod manual;
pub mod memory;
pub mod memtier;
pub mod merge;
pub mod metrics;
pub mod modes;
pub mod plan;
pub mod record;
pub mod recover_cli;
pub mod redact;
pub mod replay;
pub mod report;
pub mod report_cli;
pub mod run;
pub mod sentinel;
pub mod slo;
pub mod stats;
pub mod storm;
pub mod timestamp;
pub mod trace;
pub mod verdict;
pub mod watch;
pub mod workload;
