//! memtier_benchmark's own requests in a `respbench memtier` mix (issue 23): keys as memtier
//! writes them (`memtier-123`: the prefix and the number, no zero padding), `-R` random values,
//! `--data-size-pattern S` (the size follows the key), `--expiry-range` (`SETEX`),
//! `--data-offset` (`SETRANGE`/`GETRANGE`), `--multi-key-get` (`MGET`) and `--data-import`
//! (keys, values and expiries from memtier's import file, `import.rs`).
//!
//! Named for what it is, not for its one user: the engine writes these shapes (`Mix::with_memtier`,
//! the worker's fill), so they live below the engine, not in `memtier/` (issue 32); memtier's
//! command line is the one that asks for them.
//!
//! Why a writer of its own: these change an argument's length or the number of arguments per
//! request (a key's digits, `SETEX`'s extra argument, `MGET`'s keys), so a unit cannot be patched
//! in place as the fixed-width `__rand_*__` placeholders are. Each unit is written argument by
//! argument into the connection's buffer, which is reserved for the longest unit on the first
//! batch and reused after it: no allocation per request. Random values are slices, at a drawn
//! offset, of one pool of random bytes made when the test is set up, never generated per request.

use std::sync::Arc;

use rand_core::{RngCore, SeedableRng};

use super::import::{ImportFile, Item};

use super::distribution::uniform_below;
use super::keys::KeyGen;
use super::sizes::SizeDist;
use super::template::{Gap, PLACEHOLDER_LEN, SHARED_VALUE_MIN, Template};

/// What a mix command is to memtier: its `--ratio` SET or GET, or a `--command` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Set,
    Get,
    Line,
}

/// `--data-size-pattern S`: memtier spreads `--data-size-range MIN-MAX` over the key range, so
/// key `k` gets `MIN + (MAX - MIN) × (k - key_min) / (key_max - key_min)` bytes (rounded down).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeByKey {
    pub min: usize,
    pub max: usize,
    pub key_min: u64,
    pub key_max: u64,
}

impl SizeByKey {
    /// Key `k`'s value size.
    #[inline]
    pub fn size(&self, k: u64) -> usize {
        if self.key_max <= self.key_min {
            return self.min;
        }
        let a = k.saturating_sub(self.key_min) as f64 / (self.key_max - self.key_min) as f64;
        (self.min + ((self.max - self.min) as f64 * a) as usize).min(self.max)
    }
}

/// memtier's data and key options as a mix writes them (`plan` builds it from the options).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemtierShape {
    /// `--key-prefix` (memtier's default `memtier-`).
    pub key_prefix: Vec<u8>,
    /// `--expiry-range MIN-MAX`: each SET is `SETEX key SECONDS value`, the seconds drawn
    /// uniformly in the range (0 drawn: a plain SET, as memtier).
    pub expiry: Option<(u64, u64)>,
    /// `--data-offset N`: `SETRANGE key N value` and `GETRANGE key N -1` (memtier's meaning:
    /// the value is `N` bytes longer).
    pub data_offset: u64,
    /// `-R`: values are slices of this pool at a drawn offset (so keys get different bytes);
    /// empty: the run's fixed payload bytes.
    pub random_pool: Vec<u8>,
    /// `--data-size-pattern S`.
    pub size_by_key: Option<SizeByKey>,
    /// `--multi-key-get N` (above 1): a GET of the ratio is an `MGET` of up to N keys; the
    /// ratio's GET count is made of them as memtier's (`1:10` with N = 4: 4, 4 and 2 keys).
    pub multi_key_get: u32,
    /// The `--ratio`'s GET weight as given (the keys one cycle's MGETs ask for, in all).
    pub gets_per_cycle: u64,
    /// The length of each `__data__` chunk in the templates (the largest value size).
    pub data_size: usize,
    /// `--data-import`: SETs write the file's items.
    pub import: Option<Imported>,
}

/// `--data-import` as the requests use it: slot `k` of the key range is item `k` of the file
/// (its key, value and expiry), or with `--generate-keys` key `k` (the prefix and the number)
/// takes item `k - key_min`'s value, so a SET walk in order writes the file in order, as
/// memtier's, and a key's value is known for `--data-verify`.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub file: Arc<ImportFile>,
    /// `--generate-keys`: the key range's minimum (keys are generated); `None`: the keys are
    /// the file's and the range is `0..items`.
    pub generated_from: Option<u64>,
    /// `--no-expiry`: the items' expiry is not sent.
    pub no_expiry: bool,
}

impl Imported {
    /// The item slot `k` writes.
    #[inline]
    pub fn item(&self, k: u64) -> Item<'_> {
        self.file
            .item(k.saturating_sub(self.generated_from.unwrap_or(0)))
    }
}

/// Where a memtier writer leaves out values of at least [`SHARED_VALUE_MIN`] bytes: noted as
/// gaps (the value's source and range) instead of copied into the connection's buffer, so a
/// large `-d` is held once per test rather than once per connection, as benchmark mode does.
pub struct Shared<'g> {
    pub gaps: &'g mut Vec<Gap>,
    /// The source number of the unit's template.
    pub template: u16,
    /// The source number of the random pool.
    pub pool: u16,
}

/// A pool of `len` random bytes from `seed` (made once per test, never per request).
pub fn random_pool(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5241_4e44);
    let mut pool = vec![0u8; len];
    rng.fill_bytes(&mut pool);
    pool
}

/// Extra bytes a random pool holds beyond the largest value, so values start at many offsets.
pub const POOL_SLACK: usize = 64 * 1024;

impl MemtierShape {
    /// The ratio's GET weight in the cycle: MGETs of up to N keys make up `gets_per_cycle`.
    pub fn get_weight(gets: u32, multi_key_get: u32) -> u32 {
        if multi_key_get > 1 {
            gets.div_ceil(multi_key_get)
        } else {
            gets
        }
    }

    /// Keys of the MGET that is the `nth` (0-based) GET of its cycle (`None`: not in order).
    fn mget_keys(&self, nth: Option<u64>) -> u64 {
        let n = u64::from(self.multi_key_get.max(1));
        match nth {
            Some(j) if self.gets_per_cycle > 0 => {
                n.min(self.gets_per_cycle.saturating_sub(j * n)).max(1)
            }
            _ => n,
        }
    }

    /// An upper bound of one unit's length for `t` (the batch buffer is reserved for it).
    pub fn bound(&self, t: &Template) -> usize {
        let (import_key, import_value) = self.import.as_ref().map_or((0, 0), |i| i.file.longest());
        let key = (self.key_prefix.len() + 20).max(import_key) + 32;
        let pool = if self.random_pool.is_empty() { 0 } else { 32 };
        let value = if import_value > 0 {
            import_value + 32
        } else {
            0
        };
        t.unit.len() + 96 + pool + value + key * self.multi_key_get.max(1) as usize
    }

    /// Appends one unit of `t` in its `role` (`nth`: which GET of the cycle, for `MGET`'s key
    /// count), keys drawn from `keys`, value sizes from `sizes` (the template was encoded at
    /// their largest) unless `--data-size-pattern S`.
    #[allow(clippy::too_many_arguments)]
    pub fn append_unit<R: RngCore>(
        &self,
        out: &mut Vec<u8>,
        t: &Template,
        role: Role,
        nth: Option<u64>,
        sizes: Option<&SizeDist>,
        rng: &mut R,
        keys: &mut KeyGen,
        shared: Option<Shared<'_>>,
    ) {
        match role {
            Role::Set => self.set(out, t, Draw { sizes, rng, keys }, shared),
            Role::Get => self.get(out, nth, keys),
            Role::Line => self.line(out, t, Draw { sizes, rng, keys }),
        }
    }

    fn set<R: RngCore>(
        &self,
        out: &mut Vec<u8>,
        t: &Template,
        draw: Draw<'_, R>,
        shared: Option<Shared<'_>>,
    ) {
        let Draw { sizes, rng, keys } = draw;
        if let Some(imp) = &self.import {
            let k = keys.next(0);
            let item = imp.item(k);
            let expiry = match self.expiry {
                Some(_) => self.drawn_expiry(rng),
                None if imp.no_expiry || self.data_offset > 0 => 0,
                None => item.exptime,
            };
            self.set_verb(out, expiry);
            match imp.generated_from {
                // The item just parsed gives its key (not parsed a second time).
                None => item.key.write_arg(out),
                Some(_) => self.key(out, k),
            }
            self.set_number(out, expiry);
            item.value.write_arg(out);
            return;
        }
        let Some(v) = t.values.first() else {
            // No value argument (`-d 0`): the command as a line, its key still filled in.
            return self.line(out, t, Draw { sizes, rng, keys });
        };
        let k = keys.next(0);
        let full = v.body.len();
        let n = match (&self.size_by_key, sizes) {
            (Some(s), _) => s.size(k).min(full),
            (None, Some(d)) => d.draw(rng).min(full),
            (None, None) => full,
        };
        let expiry = self.drawn_expiry(rng);
        self.set_head(out, k, expiry);
        let fixed = v.body.start..v.body.start + n;
        resp::push_header(out, b'$', n as u64);
        match shared {
            Some(s) if n >= SHARED_VALUE_MIN => {
                let (value, src) = match self.pool_at(n, rng) {
                    Some(at) => (at..at + n, s.pool),
                    None => (fixed, s.template),
                };
                s.gaps.push(Gap {
                    at: out.len(),
                    value,
                    src,
                });
            }
            _ => out.extend_from_slice(self.value_bytes(&t.unit[fixed], rng)),
        }
        out.extend_from_slice(b"\r\n");
    }

    /// `--expiry-range`'s seconds for a SET (0: none, and always with `--data-offset`).
    fn drawn_expiry<R: RngCore>(&self, rng: &mut R) -> u64 {
        match self.expiry {
            Some((lo, hi)) if self.data_offset == 0 => lo + uniform_below(rng, hi - lo + 1),
            _ => 0,
        }
    }

    /// A SET up to its value: `SETRANGE key OFFSET` (`--data-offset`), `SETEX key SECONDS`
    /// (an expiry) or `SET key`.
    fn set_head(&self, out: &mut Vec<u8>, k: u64, expiry: u64) {
        self.set_verb(out, expiry);
        self.key(out, k);
        self.set_number(out, expiry);
    }

    /// The SET's command: `SETRANGE`, `SETEX` or `SET`, with its argument count.
    fn set_verb(&self, out: &mut Vec<u8>, expiry: u64) {
        if self.data_offset > 0 {
            out.extend_from_slice(b"*4\r\n$8\r\nSETRANGE\r\n");
        } else if expiry > 0 {
            out.extend_from_slice(b"*4\r\n$5\r\nSETEX\r\n");
        } else {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
        }
    }

    /// The SET's number after the key: the offset or the seconds (none for a plain `SET`).
    fn set_number(&self, out: &mut Vec<u8>, expiry: u64) {
        if self.data_offset > 0 {
            number(out, self.data_offset);
        } else if expiry > 0 {
            number(out, expiry);
        }
    }

    fn get(&self, out: &mut Vec<u8>, nth: Option<u64>, keys: &mut KeyGen) {
        let count = if self.multi_key_get > 1 {
            self.mget_keys(nth)
        } else {
            1
        };
        if count > 1 {
            resp::push_header(out, b'*', count + 1);
            out.extend_from_slice(b"$4\r\nMGET\r\n");
            for _ in 0..count {
                self.key(out, keys.next(0));
            }
        } else {
            self.read(out, keys.next(0));
        }
    }

    /// The read of key `k`: `GETRANGE key OFFSET -1` (`--data-offset`) or `GET key`. Also
    /// `--data-verify`'s read of each key written.
    pub fn read(&self, out: &mut Vec<u8>, k: u64) {
        if self.data_offset > 0 {
            out.extend_from_slice(b"*4\r\n$8\r\nGETRANGE\r\n");
            self.key(out, k);
            number(out, self.data_offset);
            out.extend_from_slice(b"$2\r\n-1\r\n");
        } else {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
            self.key(out, k);
        }
    }

    /// Key `k`'s bytes (the prefix and the number, or an imported item's key).
    pub fn key_bytes(&self, out: &mut Vec<u8>, k: u64) {
        if let Some(imp) = self.import.as_ref().filter(|i| i.generated_from.is_none()) {
            return imp.item(k).key.write_to(out);
        }
        let mut digits = [0u8; 20];
        out.extend_from_slice(&self.key_prefix);
        out.extend_from_slice(decimal(&mut digits, k));
    }

    /// `-R`: a slice of the pool as long as `fixed`, else `fixed` itself.
    #[inline]
    fn value_bytes<'a, R: RngCore>(&'a self, fixed: &'a [u8], rng: &mut R) -> &'a [u8] {
        match self.pool_at(fixed.len(), rng) {
            Some(at) => &self.random_pool[at..at + fixed.len()],
            None => fixed,
        }
    }

    /// `-R`: where a value of `n` bytes starts in the pool (drawn); `None` without a pool.
    #[inline]
    fn pool_at<R: RngCore>(&self, n: usize, rng: &mut R) -> Option<usize> {
        if self.random_pool.len() < n || self.random_pool.is_empty() {
            return None;
        }
        Some(uniform_below(rng, (self.random_pool.len() - n + 1) as u64) as usize)
    }

    /// A key argument: the prefix and `k` in decimal, or an imported item's key.
    #[inline]
    fn key(&self, out: &mut Vec<u8>, k: u64) {
        if let Some(imp) = self.import.as_ref().filter(|i| i.generated_from.is_none()) {
            return imp.item(k).key.write_arg(out);
        }
        let mut digits = [0u8; 20];
        let d = decimal(&mut digits, k);
        resp::push_header(out, b'$', (self.key_prefix.len() + d.len()) as u64);
        out.extend_from_slice(&self.key_prefix);
        out.extend_from_slice(d);
        out.extend_from_slice(b"\r\n");
    }

    /// A `--command` line: each argument copied with its `__rand_*__` numbers written without
    /// padding (memtier's `__key__`) and its `__data__` at a drawn size (random with `-R`).
    fn line<R: RngCore>(&self, out: &mut Vec<u8>, t: &Template, draw: Draw<'_, R>) {
        let Draw { sizes, rng, keys } = draw;
        let Some(cmd) = t.layout.first().filter(|c| !c.args.is_empty()) else {
            out.extend_from_slice(&t.unit);
            return;
        };
        let max = self.data_size;
        resp::push_header(out, b'*', cmd.args.len() as u64);
        let mut nth = [u64::MAX; 10];
        let mut p = 0;
        for arg in &cmd.args {
            let first = p;
            while p < t.placeholders.len() && t.placeholders[p].offset < arg.end {
                p += 1;
            }
            let value = t.values.iter().find(|v| v.body == *arg);
            let n = match (value, sizes) {
                (Some(_), Some(d)) => d.draw(rng).min(max),
                _ => max,
            };
            let header_at = out.len();
            if first == p {
                let shorten = value.map_or(0, |v| v.data_at.len() * (max - n));
                resp::push_header(out, b'$', (arg.len() - shorten) as u64);
            } else {
                out.extend_from_slice(&[0; HEADER_GAP]);
            }
            let body_at = out.len();
            let mut at = arg.start;
            let mut ph = t.placeholders[first..p].iter().peekable();
            let mut chunks = value
                .into_iter()
                .flat_map(|v| v.data_at.iter().map(move |d| v.body.start + d))
                .peekable();
            loop {
                let next_ph = ph.peek().map(|x| x.offset);
                let next_chunk = chunks.peek().copied();
                match (next_ph, next_chunk) {
                    (Some(o), c) if c.is_none_or(|c| o < c) => {
                        out.extend_from_slice(&t.unit[at..o]);
                        let which = ph.next().map_or(0, |x| x.which as usize);
                        let k = if which == 0 {
                            keys.next(0)
                        } else {
                            if nth[which] == u64::MAX {
                                nth[which] = keys.next(which);
                            }
                            nth[which]
                        };
                        let mut digits = [0u8; 20];
                        out.extend_from_slice(decimal(&mut digits, k));
                        at = o + PLACEHOLDER_LEN;
                    }
                    (_, Some(c)) => {
                        chunks.next();
                        out.extend_from_slice(&t.unit[at..c]);
                        out.extend_from_slice(self.value_bytes(&t.unit[c..c + n], rng));
                        at = c + max;
                    }
                    (None, None) => break,
                    (Some(_), None) => unreachable!("matched by the first arm"),
                }
            }
            out.extend_from_slice(&t.unit[at..arg.end]);
            if first != p {
                close_gap(out, header_at, body_at);
            }
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// What a unit with a value draws from: the value sizes (unless `--data-size-pattern S`), the
/// connection's RNG and its keys. One bundle, so a SET and a `--command` line take the same.
struct Draw<'a, R> {
    sizes: Option<&'a SizeDist>,
    rng: &'a mut R,
    keys: &'a mut KeyGen,
}

/// Room left for a `$<len>\r\n` header whose length is known only once the body is written.
const HEADER_GAP: usize = 24;

/// Writes the header of the body that starts at `body_at` into the gap at `header_at` and
/// moves the body back to close the rest of the gap.
fn close_gap(out: &mut Vec<u8>, header_at: usize, body_at: usize) {
    let len = out.len() - body_at;
    let mut head = [0u8; HEADER_GAP];
    head[0] = b'$';
    let mut digits = [0u8; 20];
    let d = decimal(&mut digits, len as u64);
    head[1..1 + d.len()].copy_from_slice(d);
    head[1 + d.len()..3 + d.len()].copy_from_slice(b"\r\n");
    let h = 3 + d.len();
    out[header_at..header_at + h].copy_from_slice(&head[..h]);
    out.copy_within(body_at.., header_at + h);
    out.truncate(out.len() - (HEADER_GAP - h));
}

/// A number argument (`SETEX`'s seconds, `SETRANGE`'s offset).
fn number(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let d = decimal(&mut digits, n);
    resp::push_header(out, b'$', d.len() as u64);
    out.extend_from_slice(d);
    out.extend_from_slice(b"\r\n");
}

/// `n` in decimal, without padding, in the tail of `buf`.
#[inline]
fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests;
