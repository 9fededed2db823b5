//! Cluster mode: slot math, topology and per-unit routing facts. The engine uses these to bind
//! connections to nodes, fill `{tag}` and keys for a connection's node, and follow redirects.

pub mod route;
pub mod slot;
pub mod topology;
