//! What to send: the default suite, custom command sequences, placeholders and payload data.
//!
//! Owns: turning tests and command lines into pre-encoded byte templates with the offsets of their
//! fixed-width placeholders, and filling those placeholders. Must not: open sockets or measure.
//! Invariant: a template's length never changes after it is built; placeholders are patched in
//! place, so a batch buffer is encoded once per connection and rewritten only where needed.

pub mod data;
pub mod dataset;
pub mod distribution;
pub mod drift;
pub mod import;
pub mod keys;
pub mod mix;
pub mod shape;
pub mod sizes;
pub mod split;
pub mod suite;
pub mod table;
pub mod template;
pub mod xml;

pub use data::PayloadGenerator;
pub use keys::KeyGen;
pub use suite::{SuiteTest, select_tests};
pub use template::{Placeholder, Template, parse_custom_command};
