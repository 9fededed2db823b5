//! Variable value sizes (`--data-size-range MIN-MAX`, `--data-size-list SIZE:WEIGHT,...`, in
//! memtier_benchmark's spellings and meaning) for `__data__` and the default tests' values.
//!
//! A template with values is encoded once with every value at the *largest* size; each
//! [`ValueArg`](super::template::ValueArg) (the template's record of such an argument) says where
//! its `$<len>\r\n` header and body lie and where its data bytes start. Filling a batch copies
//! the unit piece by piece into the connection's write buffer: fixed bytes as they are, each value
//! argument with a new header (its length prefix can change width, so bytes move: this is why the
//! batch is rewritten rather than patched) and the first `n` bytes of each data chunk. The buffer
//! was built at the largest size, so it never grows: no allocation per request. Placeholder
//! offsets move by the bytes saved before them.

use rand_core::RngCore;

use super::distribution::uniform_below;
use super::keys::KeyGen;
use super::template::{Placeholder, Template, fill_unit};

/// How value sizes are drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeDist {
    /// Uniform over `min..=max` bytes.
    Range { min: usize, max: usize },
    /// Each size with probability weight / total: `sizes[i]` while a draw below the total falls
    /// under `cumulative[i]`.
    List {
        sizes: Vec<usize>,
        cumulative: Vec<u64>,
        /// The largest of `sizes`, kept: every unit asks for it.
        max: usize,
    },
}

impl SizeDist {
    /// A weighted list; sizes with weight 0 are dropped. `None` if nothing is left.
    pub fn list(pairs: &[(usize, u32)]) -> Option<Self> {
        let mut sizes = Vec::new();
        let mut cumulative = Vec::new();
        let mut total = 0u64;
        for &(size, weight) in pairs.iter().filter(|p| p.1 > 0) {
            total += u64::from(weight);
            sizes.push(size);
            cumulative.push(total);
        }
        let max = sizes.iter().copied().max()?;
        Some(SizeDist::List {
            sizes,
            cumulative,
            max,
        })
    }

    /// The largest size a draw can give (templates are encoded at it).
    pub fn max(&self) -> usize {
        match self {
            SizeDist::Range { max, .. } | SizeDist::List { max, .. } => *max,
        }
    }

    /// The mean size a draw gives: what a value weighs on average (memory per key's payload).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Range { min, max } => (*min + *max) as f64 / 2.0,
            SizeDist::List {
                sizes, cumulative, ..
            } => {
                let mut prev = 0;
                let mut sum = 0.0;
                for (&size, &c) in sizes.iter().zip(cumulative) {
                    sum += size as f64 * (c - prev) as f64;
                    prev = c;
                }
                sum / prev.max(1) as f64
            }
        }
    }

    /// One size: O(1) for a range, a scan of the (short) list otherwise.
    #[inline]
    pub fn draw<R: RngCore>(&self, rng: &mut R) -> usize {
        match self {
            SizeDist::Range { min, max } => {
                min + uniform_below(rng, (max - min) as u64 + 1) as usize
            }
            SizeDist::List {
                sizes, cumulative, ..
            } => {
                let total = *cumulative.last().unwrap_or(&1);
                let x = uniform_below(rng, total);
                let i = cumulative.iter().position(|&c| x < c).unwrap_or(0);
                sizes[i]
            }
        }
    }
}

/// Writes `units` units of `t` into `out` with value sizes drawn from `dist` (one size per value
/// argument, shared by its data chunks), fills their placeholders, and returns the batch length.
/// `scratch` holds one drawn size per value argument of a unit (reused, never reallocated).
pub fn fill_sized<R: RngCore>(
    out: &mut Vec<u8>,
    t: &Template,
    units: usize,
    dist: &SizeDist,
    rng: &mut R,
    keys: &mut KeyGen,
    scratch: &mut Vec<usize>,
) -> usize {
    out.clear();
    for _ in 0..units {
        append_sized(out, t, dist, rng, keys, scratch);
    }
    out.len()
}

/// Appends one unit of `t` to `out` with drawn value sizes and filled placeholders.
pub fn append_sized<R: RngCore>(
    out: &mut Vec<u8>,
    t: &Template,
    dist: &SizeDist,
    rng: &mut R,
    keys: &mut KeyGen,
    scratch: &mut Vec<usize>,
) {
    let max = dist.max();
    let base = out.len();
    scratch.clear();
    let mut pos = 0;
    for v in &t.values {
        let n = dist.draw(rng);
        scratch.push(n);
        out.extend_from_slice(&t.unit[pos..v.header]);
        let len = v.body.len() - v.data_at.len() * (max - n);
        resp::push_header(out, b'$', len as u64);
        let mut at = v.body.start;
        for &d in &v.data_at {
            let chunk = v.body.start + d;
            out.extend_from_slice(&t.unit[at..chunk + n]);
            at = chunk + max;
        }
        out.extend_from_slice(&t.unit[at..v.body.end]);
        pos = v.body.end;
    }
    out.extend_from_slice(&t.unit[pos..]);
    if !t.placeholders.is_empty() {
        fill_moved(&mut out[base..], t, max, scratch, keys);
    }
}

/// Fills one written unit's placeholders, each moved by the bytes saved before it. A small
/// fixed array holds the moved placeholders, in chunks, so nothing is allocated.
fn fill_moved(unit: &mut [u8], t: &Template, max: usize, sizes: &[usize], keys: &mut KeyGen) {
    // `__rand_Nth__` shares one draw per unit, so all of a unit's placeholders go to one
    // fill_unit call: units with more than CHUNK placeholders (rare) share draws per chunk only.
    const CHUNK: usize = 64;
    let mut moved = [Placeholder {
        offset: 0,
        which: 0,
    }; CHUNK];
    for group in t.placeholders.chunks(CHUNK) {
        for (slot, p) in moved.iter_mut().zip(group) {
            *slot = Placeholder {
                offset: moved_offset(p.offset, t, max, sizes),
                which: p.which,
            };
        }
        fill_unit(unit, &moved[..group.len()], keys);
    }
}

/// Where the byte at `offset` of the largest-size unit lands once each value argument `i` has
/// `sizes[i]`-byte data: earlier arguments shrink whole (header width included), and within an
/// argument only its data chunks before the offset count.
fn moved_offset(offset: usize, t: &Template, max: usize, sizes: &[usize]) -> usize {
    let mut saved = 0isize;
    for (v, &n) in t.values.iter().zip(sizes) {
        if v.header > offset {
            break;
        }
        let full = v.body.len();
        let len = full - v.data_at.len() * (max - n);
        saved += resp::decimal_len(full as u64) as isize - resp::decimal_len(len as u64) as isize;
        let rel = offset.saturating_sub(v.body.start);
        let chunks_before = if offset >= v.body.end {
            v.data_at.len()
        } else {
            v.data_at.iter().filter(|&&d| d + max <= rel).count()
        };
        saved += (chunks_before * (max - n)) as isize;
    }
    (offset as isize - saved) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PayloadGenerator;
    use crate::workload::template::parse_custom_command;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed)
    }

    #[test]
    fn range_is_uniform_by_chi_square() {
        let d = SizeDist::Range { min: 10, max: 19 };
        let mut r = rng(11);
        let mut counts = [0u64; 10];
        let n = 100_000;
        for _ in 0..n {
            let s = d.draw(&mut r);
            assert!((10..=19).contains(&s));
            counts[s - 10] += 1;
        }
        let e = n as f64 / 10.0;
        let chi: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        // 9 degrees of freedom: the 0.999 quantile is 27.9.
        assert!(chi < 27.9, "chi-square {chi}, {counts:?}");
    }

    #[test]
    fn list_follows_its_weights_and_repeats_with_the_seed() {
        let d = SizeDist::list(&[(100, 80), (1000, 15), (5, 0), (4000, 5)]).unwrap();
        assert_eq!(d.max(), 4000);
        let draws = |seed| -> Vec<usize> {
            let mut r = rng(seed);
            (0..100_000).map(|_| d.draw(&mut r)).collect()
        };
        let v = draws(3);
        assert_eq!(v, draws(3));
        assert_ne!(v, draws(4));
        let share = |s| v.iter().filter(|&&x| x == s).count() as f64 / v.len() as f64;
        // Standard error of an 80% share over 100k draws: 0.13%.
        assert!((share(100) - 0.80).abs() < 0.006, "{}", share(100));
        assert!((share(1000) - 0.15).abs() < 0.005, "{}", share(1000));
        assert!((share(4000) - 0.05).abs() < 0.004, "{}", share(4000));
        assert_eq!(share(5), 0.0, "weight 0 is never drawn");
        assert!(SizeDist::list(&[(1, 0)]).is_none());
    }

    /// Parses each RESP command of `buf` into its arguments.
    fn commands(mut buf: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let line = |b: &[u8]| -> (usize, usize) {
            let end = b.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = std::str::from_utf8(&b[1..end]).unwrap().parse().unwrap();
            (n, end + 2)
        };
        while !buf.is_empty() {
            let (argc, used) = line(buf);
            buf = &buf[used..];
            let mut args = Vec::new();
            for _ in 0..argc {
                let (len, used) = line(buf);
                args.push(buf[used..used + len].to_vec());
                assert_eq!(&buf[used + len..used + len + 2], b"\r\n");
                buf = &buf[used + len + 2..];
            }
            out.push(args);
        }
        out
    }

    #[test]
    fn batches_are_valid_resp_with_drawn_sizes_and_filled_placeholders() {
        let line: Vec<Vec<u8>> =
            "SET k:__rand_int__ __data__ ; HSET h:__rand_1st__ f:__rand_1st__ x__data__y__data__"
                .split(' ')
                .map(|s| s.as_bytes().to_vec())
                .collect();
        let dist = SizeDist::Range { min: 1, max: 120 };
        let items = parse_custom_command(&line, None, dist.max(), &mut PayloadGenerator::default())
            .unwrap();
        let t = Template::encode(&items, true);
        assert_eq!(t.values.len(), 2);
        let (mut out, _) = t.batch(8);
        let cap = out.capacity();
        let mut keys = KeyGen::new(1000, 1, 0, None);
        let mut scratch = Vec::with_capacity(t.values.len());
        let mut r = rng(5);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            let len = fill_sized(&mut out, &t, 8, &dist, &mut r, &mut keys, &mut scratch);
            assert_eq!(len, out.len());
            assert_eq!(out.capacity(), cap, "never grows");
            let cmds = commands(&out);
            assert_eq!(cmds.len(), 16);
            for pair in cmds.chunks(2) {
                let (set, hset) = (&pair[0], &pair[1]);
                assert_eq!(set[0], b"SET");
                assert!(set[1].starts_with(b"k:") && set[1][2..].iter().all(u8::is_ascii_digit));
                let n = set[2].len();
                assert!((1..=120).contains(&n));
                seen.insert(n);
                assert_eq!(
                    &hset[1][2..],
                    &hset[2][2..],
                    "__rand_1st__ shared in the unit"
                );
                assert!(hset[1][2..].iter().all(u8::is_ascii_digit));
                let v = &hset[3];
                assert_eq!(
                    (v.len() - 2) % 2,
                    0,
                    "both chunks of one argument share a size"
                );
                let m = (v.len() - 2) / 2;
                assert_eq!(
                    (v[0], v[1 + m]),
                    (b'x', b'y'),
                    "{}",
                    String::from_utf8_lossy(v)
                );
            }
        }
        assert!(
            seen.len() > 60,
            "sizes spread over the range: {}",
            seen.len()
        );
    }
}
