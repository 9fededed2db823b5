//! RESP2/RESP3 codec for respbench: command encoding and reply framing, no I/O.
//!
//! Owns:
//! - [`encode_command`] / [`encoded_command_len`]: commands as arrays of bulk strings;
//! - [`Scanner`]: the hot-path reply framer. It finds where each top-level reply ends and reports
//!   its [`Kind`] (and, for errors, where the error text is) without allocating or copying;
//! - [`Value`]: an owned reply tree with a parser and encoder, for tests and control connections.
//!
//! Must not: do I/O, allocate in [`Scanner::scan`], interpret payloads (no UTF-8 checks, no
//! number parsing beyond what framing needs), or depend on anything in the rest of the workspace.
//!
//! Invariants and limits:
//! - The scanner and [`Value::parse`] share one header parser, so they frame every byte stream the
//!   same way and reject malformed input with the same [`ProtocolError`].
//! - Aggregates (attributes included) nest at most [`MAX_DEPTH`] levels; a deeper one is
//!   [`ProtocolError::TooDeep`].
//! - Lengths and counts in headers are at most [`MAX_LEN`] (2^40: 1 TiB of payload, or 2^40
//!   elements or map pairs); larger ones are [`ProtocolError::LengthTooLarge`]. Real servers cap
//!   bulk strings far lower (512 MiB by default), so this only rejects garbage while keeping all
//!   arithmetic on lengths far from overflow.
//! - Only `-1` is accepted as a negative length, and only for `$` and `*` (RESP2 nulls). RESP3
//!   streamed strings and aggregates (`$?`, `*?`, ...) are [`ProtocolError::StreamedNotSupported`].
//! - Header lines must end in CRLF; there is no limit on their length (a simple string can be
//!   arbitrarily long), so a caller that must bound its buffer has to impose its own limit.

mod encode;
mod error;
mod scanner;
mod value;
mod wire;

pub use encode::{decimal_len, encode_command, encoded_command_len, push_header};
pub use error::ProtocolError;
pub use scanner::{Kind, ReplyInfo, Scan, Scanner};
pub use value::Value;

/// Maximum nesting of aggregates (arrays, maps, sets, pushes, attributes). A reply that opens an
/// aggregate inside `MAX_DEPTH` open ones is a [`ProtocolError::TooDeep`].
pub const MAX_DEPTH: usize = 32;

/// Largest length or count accepted in a header (2^40). For maps and attributes this bounds the
/// number of pairs.
pub const MAX_LEN: u64 = 1 << 40;
