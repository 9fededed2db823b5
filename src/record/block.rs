//! A mode's record block, seen from below the modes: the record holds each mode's block (the
//! `storm` block of a `--connect-storm`, …) without naming the mode. A block's type lives in its
//! mode's folder and implements [`Block`]: its key in the record, and what every reader of
//! records does with it without knowing it — `merge` adds it up across shards, `compare` and the
//! HTML report draw its tables, `recover` rebuilds it from a killed run's journal.
//!
//! Why not a field per mode: `record` is below the modes (they write their blocks into the
//! record through `run`), so a field of a mode's type would be an import circle. The record
//! holds a block as its JSON tree, in the order its type writes its fields ([`Tree`]), and the
//! kinds of block ([`BlockKind`], one per mode, listed by the registry `crate::modes`) are
//! installed once when the program starts ([`install`]); a record read back decodes each block
//! it knows through its kind, so a malformed block is refused when the record is read, as a
//! malformed field is, and written back it is byte for byte what its type writes.

use std::fmt::Debug;
use std::sync::OnceLock;

use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::summary::ServerTestRecord;
use crate::metrics::LatencyHistogram;

/// Where a block sits: beside the tests (a run-wide block), in a test, or in a test's journal
/// `begin` line (what a killed run's block is rebuilt from).
pub const RUN: u8 = 0;
pub const TEST: u8 = 1;
pub const HEAD: u8 = 2;

/// A mode's block in the record. Implemented in the mode's folder; the record and its readers
/// use it through the block's [`BlockKind`].
pub trait Block: Serialize + DeserializeOwned + Clone + Debug + 'static {
    /// The block's key in the record (a field of the document, or of a test, by [`Block::AT`]).
    const KEY: &'static str;
    /// [`RUN`] or [`TEST`].
    const AT: u8;
    /// What the journal's `begin` line holds for a killed run's block ([`Block::recover`]);
    /// `()` for a block that is not rebuilt from the journal.
    type Head: Serialize + DeserializeOwned + Clone + Debug + 'static;

    /// The block of a merged record, from every shard's in shard order (`None`: that shard has
    /// none): `Ok(None)` when no shard has one, an error when shards cannot be added up.
    fn merge(parts: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String>;

    /// Its tables in `compare` and the HTML report, from every side (and, for a test's block,
    /// every test) that has one.
    fn tables(sides: &[(Side, &Self)]) -> Vec<Table>;

    /// A killed run's block from its journal: the `begin` line's head and the seconds' sums.
    /// `None` for a block that is not rebuilt from the journal.
    fn recover(head: Self::Head, sums: &Recovered) -> Option<Self>;

    /// Its part of the HTML report, from every side that has one (`Side::index` is the side's
    /// place, for its colour): a test's block inside the test's section, a run's block as a
    /// section of the page after the cost tables. Nothing by default (its `tables` are drawn).
    fn html(_sides: &[(Side, &Self)], _page: &mut String) {}

    /// A test's block whose test is limited by the mode's own figures (a delivery test's
    /// publishers and rate), not by the request/response verdict: the report's "limited by"
    /// words. `None` by default.
    fn own_limit(&self) -> Option<String> {
        None
    }

    /// What the test lost beyond its timeline's failed requests (a delivery test's messages
    /// owed and never delivered): the HTML report's errors panel is not "none" then.
    fn lost(&self) -> u64 {
        0
    }

    /// A killed test's requests as its block counts them, `(issued, unanswered)` (a delivery
    /// test's deliveries owed, and those not delivered), in place of the seconds' own; `None`
    /// by default.
    fn requests(&self) -> Option<(u64, u64)> {
        None
    }

    /// The mode refuses `--repeat`: a side's repetitions are separate runs (a storm's, a
    /// delivery test's), which `compare`'s advice names.
    const SEPARATE_RUNS: bool = false;
}

/// Whose block a comparison's row shows: the side's label (with `#k` after it for the k-th of a
/// side given as several runs), and the test's name for a test's block (empty for a run's).
#[derive(Clone, Debug, Default)]
pub struct Side {
    pub label: String,
    pub test: String,
    /// The side's place among the inputs (the HTML report's colour of its series).
    pub index: usize,
}

/// One table a block draws in a comparison: its title, column heads and rows of cells.
pub struct Table {
    pub title: &'static str,
    pub note: &'static str,
    pub head: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// A killed test's sums as its journal's seconds leave them (`record::journal`): what a mode's
/// block is rebuilt from beside its head.
#[derive(Default)]
pub struct Recovered {
    /// Its full `second` lines.
    pub seconds: usize,
    pub completed: u64,
    pub failed: u64,
    /// Commands written, when any second says.
    pub issued: Option<u64>,
    /// The error replies by their word, and the requests lost without a reply by kind
    /// (`metrics::FAILURE_KINDS`' names), as the seconds counted them.
    pub errors: Vec<(String, u64)>,
    pub lost: Vec<(&'static str, u64)>,
    /// The corrected histograms' sum: the seconds' full-precision parts when every second that
    /// measured something has one, else the coarse ones.
    pub total: LatencyHistogram,
    /// Each part's (a command's, a stage's) full-precision histogram summed, in the parts'
    /// order, and the parts' error words counted; both empty unless every second that measured
    /// something has its parts.
    pub parts: Vec<LatencyHistogram>,
    pub part_errors: Vec<(String, u64)>,
    /// The watched servers' blocks from the seconds' samples.
    pub server: Vec<ServerTestRecord>,
    /// A test's block's seconds, in order (empty for a run's block): what each full second
    /// counted of the mode's own beyond its requests.
    pub rows: Vec<RecoveredSecond>,
}

/// One full second of a killed test, as its journal line counts it (`Recovered::rows`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RecoveredSecond {
    pub second: u32,
    pub completed: u64,
    /// A delivery test's messages published in the second and the deliveries they owe.
    pub published: u64,
    pub owed: u64,
    /// The slowest request of the second (its slots' longest wait), ns.
    pub slowest_ns: u64,
}

/// Every shard's block (by file name, `None`: that shard has none), as [`Block::merge`] takes
/// them, without their type.
type Shards<'a> = [(&'a str, Option<&'a Tree>)];

/// A block's kind, as the record and its readers use it without its type.
pub struct BlockKind {
    pub key: &'static str,
    pub at: u8,
    decode: fn(serde_json::Value) -> Result<Tree, String>,
    decode_head: fn(serde_json::Value) -> Result<Tree, String>,
    merge: fn(&Shards) -> Result<Option<Tree>, String>,
    tables: fn(&[(Side, &Tree)]) -> Vec<Table>,
    recover: fn(&Tree, &Recovered) -> Option<Tree>,
    html: fn(&[(Side, &Tree)], &mut String),
    own_limit: fn(&Tree) -> Option<String>,
    lost: fn(&Tree) -> u64,
    requests: fn(&Tree) -> Option<(u64, u64)>,
    /// See [`Block::SEPARATE_RUNS`].
    pub separate_runs: bool,
}

impl BlockKind {
    /// The kind of `B`.
    pub const fn of<B: Block>() -> BlockKind {
        BlockKind {
            key: B::KEY,
            at: B::AT,
            decode: decode::<B>,
            decode_head: decode::<B::Head>,
            merge: merge::<B>,
            tables: tables::<B>,
            recover: recover::<B>,
            html: html::<B>,
            own_limit: |t| t.to::<B>().own_limit(),
            lost: |t| t.to::<B>().lost(),
            requests: |t| t.to::<B>().requests(),
            separate_runs: B::SEPARATE_RUNS,
        }
    }

    /// The merged block of the shards' (see [`Block::merge`]).
    pub fn merge(&self, parts: &Shards) -> Result<Option<Tree>, String> {
        (self.merge)(parts)
    }

    /// Its tables in a comparison (see [`Block::tables`]).
    pub fn tables(&self, sides: &[(Side, &Tree)]) -> Vec<Table> {
        (self.tables)(sides)
    }

    /// A killed run's block (see [`Block::recover`]).
    pub fn recover(&self, head: &Tree, sums: &Recovered) -> Option<Tree> {
        (self.recover)(head, sums)
    }

    /// Its part of the HTML report (see [`Block::html`]).
    pub fn html(&self, sides: &[(Side, &Tree)], page: &mut String) {
        (self.html)(sides, page)
    }

    /// See [`Block::own_limit`].
    pub fn own_limit(&self, block: &Tree) -> Option<String> {
        (self.own_limit)(block)
    }

    /// See [`Block::lost`].
    pub fn lost(&self, block: &Tree) -> u64 {
        (self.lost)(block)
    }

    /// See [`Block::requests`].
    pub fn requests(&self, block: &Tree) -> Option<(u64, u64)> {
        (self.requests)(block)
    }
}

fn decode<T: Serialize + DeserializeOwned>(value: serde_json::Value) -> Result<Tree, String> {
    let typed: T = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok(Tree::of(&typed))
}

fn merge<B: Block>(parts: &Shards) -> Result<Option<Tree>, String> {
    let typed: Vec<(&str, Option<B>)> = parts.iter().map(|(n, t)| (*n, t.map(Tree::to))).collect();
    let refs: Vec<(&str, Option<&B>)> = typed.iter().map(|(n, b)| (*n, b.as_ref())).collect();
    Ok(B::merge(&refs)?.map(|b| Tree::of(&b)))
}

fn tables<B: Block>(sides: &[(Side, &Tree)]) -> Vec<Table> {
    let typed: Vec<(Side, B)> = sides.iter().map(|(s, t)| (s.clone(), t.to())).collect();
    let refs: Vec<(Side, &B)> = typed.iter().map(|(s, b)| (s.clone(), b)).collect();
    B::tables(&refs)
}

fn html<B: Block>(sides: &[(Side, &Tree)], page: &mut String) {
    let typed: Vec<(Side, B)> = sides.iter().map(|(s, t)| (s.clone(), t.to())).collect();
    let refs: Vec<(Side, &B)> = typed.iter().map(|(s, b)| (s.clone(), b)).collect();
    B::html(&refs, page)
}

fn recover<B: Block>(head: &Tree, sums: &Recovered) -> Option<Tree> {
    B::recover(head.to(), sums).map(|b| Tree::of(&b))
}

static KINDS: OnceLock<&'static [BlockKind]> = OnceLock::new();

/// Installs the kinds of block (the registry's list, `crate::modes::BLOCKS`), once, before any
/// record is read or written; their order is the order blocks are written in.
pub fn install(kinds: &'static [BlockKind]) {
    let _ = KINDS.set(kinds);
}

/// The installed kinds.
pub fn kinds() -> &'static [BlockKind] {
    match KINDS.get() {
        Some(kinds) => kinds,
        None => not_installed(),
    }
}

/// Outside tests, a record used before the registry installed its kinds is a bug of the
/// program's start (it would drop every block it reads).
#[cfg(not(test))]
fn not_installed() -> &'static [BlockKind] {
    panic!("record::block: the block kinds were not installed (crate::modes::install)")
}

/// Tests get the registry's kinds without installing them.
#[cfg(test)]
fn not_installed() -> &'static [BlockKind] {
    KINDS.get_or_init(|| crate::modes::BLOCKS)
}

fn kind(key: &str, at: u8) -> Option<(usize, &'static BlockKind)> {
    let wanted = |k: &BlockKind| k.key == key && (k.at == at || at == HEAD);
    kinds().iter().enumerate().find(|(_, k)| wanted(k))
}

/// The blocks of a document ([`RUN`]), a test ([`TEST`]) or a journal `begin` line ([`HEAD`]):
/// each as its JSON tree, in the installed kinds' order. Written in place of fields (`flatten`):
/// a block is a field of its document, test or line, keyed by its kind's key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blocks<const AT: u8> {
    slots: Vec<(usize, &'static str, Tree)>,
}

impl<const AT: u8> Blocks<AT> {
    /// `B`'s block (its head for [`HEAD`]), if there is one.
    pub fn get<B: DeserializeOwned>(&self, key: &str) -> Option<B> {
        self.tree(key).map(Tree::to)
    }

    /// Sets `key`'s block (an installed kind's key).
    pub fn set<B: Serialize>(&mut self, key: &str, block: &B) {
        self.set_tree(key, Tree::of(block));
    }

    /// Removes `key`'s block.
    pub fn remove(&mut self, key: &str) {
        self.slots.retain(|(_, k, _)| *k != key);
    }

    pub fn contains(&self, key: &str) -> bool {
        self.tree(key).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether some block draws a table in `compare` and the HTML report (a storm's and memory
    /// per key's do, a fuzz run's none): what a record without tests still shows.
    pub fn drawn(&self) -> bool {
        self.iter()
            .any(|(kind, tree)| !kind.tables(&[(Side::default(), tree)]).is_empty())
    }

    pub fn tree(&self, key: &str) -> Option<&Tree> {
        self.slots.iter().find(|(_, k, _)| *k == key).map(|s| &s.2)
    }

    /// Every block with its kind.
    pub fn iter(&self) -> impl Iterator<Item = (&'static BlockKind, &Tree)> {
        self.slots.iter().map(|(i, _, t)| (&kinds()[*i], t))
    }

    pub fn set_tree(&mut self, key: &str, tree: Tree) {
        let Some((index, kind)) = kind(key, AT) else {
            panic!("record::block: no installed kind of block `{key}`")
        };
        self.remove(key);
        let at = self.slots.partition_point(|(i, _, _)| *i < index);
        self.slots.insert(at, (index, kind.key, tree));
    }
}

/// A run-wide block (`B::AT` is [`RUN`]) or a test's: typed access by the block's type.
impl<const AT: u8> Blocks<AT> {
    pub fn block<B: Block>(&self) -> Option<B> {
        self.get(B::KEY)
    }

    pub fn put<B: Block>(&mut self, block: &B) {
        self.set(B::KEY, block);
    }
}

impl<const AT: u8> Serialize for Blocks<AT> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.slots.len()))?;
        for (_, key, tree) in &self.slots {
            map.serialize_entry(key, tree)?;
        }
        map.end()
    }
}

/// Reads the fields its document, test or line did not take: the installed kinds' are decoded
/// through their type (a malformed one is an error), the rest ignored (as unknown fields are).
impl<'de, const AT: u8> Deserialize<'de> for Blocks<AT> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<const AT: u8>;
        impl<'de, const AT: u8> Visitor<'de> for Fields<AT> {
            type Value = Blocks<AT>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a record's fields")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Blocks<AT>, A::Error> {
                let mut blocks = Blocks::<AT>::default();
                while let Some(key) = map.next_key::<String>()? {
                    let value: serde_json::Value = map.next_value()?;
                    let Some((_, kind)) = kind(&key, AT) else {
                        continue;
                    };
                    let decode = if AT == HEAD {
                        kind.decode_head
                    } else {
                        kind.decode
                    };
                    let tree = decode(value)
                        .map_err(|e| serde::de::Error::custom(format!("{key}: {e}")))?;
                    blocks.set_tree(&key, tree);
                }
                Ok(blocks)
            }
        }
        d.deserialize_map(Fields::<AT>)
    }
}

/// A JSON value that keeps its objects' fields in the order they were written (the record's
/// order is its types'; `serde_json::Value` sorts them).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Tree {
    #[default]
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl Tree {
    /// `value` as its type writes it.
    pub fn of<T: Serialize>(value: &T) -> Tree {
        let text = serde_json::to_vec(value).expect("a record type serializes");
        serde_json::from_slice(&text).expect("JSON reads back")
    }

    /// The tree as `T` (a tree made by [`Tree::of`] of a `T`, or decoded through its kind).
    pub fn to<T: DeserializeOwned>(&self) -> T {
        let text = serde_json::to_vec(self).expect("a tree serializes");
        serde_json::from_slice(&text).expect("a block's tree reads as its type")
    }
}

impl Serialize for Tree {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Null => s.serialize_unit(),
            Tree::Bool(b) => s.serialize_bool(*b),
            Tree::Number(n) => n.serialize(s),
            Tree::String(t) => s.serialize_str(t),
            Tree::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Tree::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        Tree::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(b))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Tree, E> {
        Ok(Tree::Number(n.into()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Tree, E> {
        Ok(Tree::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Tree, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Tree::Null, Tree::Number))
    }
    fn visit_str<E>(self, t: &str) -> Result<Tree, E> {
        Ok(Tree::String(t.to_string()))
    }
    fn visit_string<E>(self, t: String) -> Result<Tree, E> {
        Ok(Tree::String(t))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry()? {
            fields.push((k, v));
        }
        Ok(Tree::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_keeps_its_fields_order_and_numbers() {
        let text =
            r#"{"z":1,"a":[true,null,-3,0.1,1e+300],"m":{"y":"s","b":18446744073709551615}}"#;
        let tree: Tree = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&tree).unwrap(), text);
    }
}
