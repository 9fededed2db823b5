//! End-to-end tests of the `respbench` binary against real `redis-server` processes.
//!
//! Every test that needs a server starts its own on a free loopback port (see [`harness`]), so
//! the tests run in parallel and never share state. They check the effect of a run on the
//! server (keys, command counts, connections), not only what respbench prints.

mod harness;

mod ab;
mod capture_backlog;
mod cli;
mod cluster;
mod compare;
mod dataset;
mod delivery;
mod deploy;
mod dropin;
mod effects;
mod errors;
mod failures;
mod fault_matrix;
mod faultproxy;
mod find_max;
mod find_max_paired;
mod formats;
mod fuzz;
mod fuzz_keeps;
mod hostile_inputs;
mod html;
mod journal;
mod journal_long;
mod lifecycle;
mod live_hostile;
mod live_metrics;
mod machine_busy;
mod memory;
mod memtier;
mod memtier_client_stats;
mod memtier_conn;
mod memtier_data;
mod memtier_import;
mod memtier_outputs;
mod memtier_scan;
mod memtier_semantics;
mod memtier_statsd;
mod memtier_suite;
mod memtier_totals;
mod mixes;
mod mode_wiring;
mod netfaults;
mod netns;
mod output_paths;
mod pushes;
mod record;
mod recovered;
mod replay;
mod replay_faults;
mod replay_max;
mod replay_report;
mod replay_tls;
mod secrets;
mod sentinel;
mod shards;
mod short_verdict;
mod storm;
mod synthetic;
mod tls;
mod valkey;
mod workloads;
