//! respbench: a load generator and benchmark for servers that speak RESP.
//!
//! Dependency direction: `cli → plan → workload`; `run → plan, engine, report`;
//! `engine → workload, metrics, resp`; `report → metrics`. `main` alone decides messages and exit
//! codes.

pub mod cli;
pub mod cluster;
pub mod engine;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod record;
pub mod report;
pub mod run;
pub mod verdict;
pub mod watch;
pub mod workload;
