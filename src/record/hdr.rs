//! Histograms as text: HdrHistogram's V2 compressed encoding, base64 — the form every
//! HdrHistogram implementation (Java, C, Go, Python, Rust) decodes, so a record's histograms can
//! be merged with others or re-analysed at any percentile without respbench.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use crate::metrics::{DenseCounts, LatencyHistogram, MAX_LATENCY_NS, SparseHistogram};

/// The histogram's V2 compressed bytes in standard base64 (with padding). Values are in
/// nanoseconds, as recorded.
pub fn encode(h: &LatencyHistogram) -> String {
    let mut bytes = Vec::new();
    // Writing into a Vec cannot fail, and a histogram with respbench's bounds always fits the
    // V2 format; an empty string would only mean "no histogram".
    if V2DeflateSerializer::new()
        .serialize(h.raw(), &mut bytes)
        .is_err()
    {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A second's part of a histogram (`metrics::ExactSecond`) as HdrHistogram V2 *uncompressed*
/// bytes in base64, written straight from its `(bucket, count)` pairs: what [`encode`] of the
/// histogram they make would hold, without deflate. [`add_encoded`] (and every HdrHistogram
/// decoder) reads both forms.
///
/// Why not [`encode`]: the journal writes two or more of these every second of a run, and
/// building a 33,792-count histogram, then deflating it with a new compressor each time, cost
/// the main thread about 0.8 M instructions per histogram (callgrind, `docs/performance.md`);
/// this costs a few instructions per non-empty bucket. The bytes are about twice deflate's, a
/// few kB per second of journal, and the journal is removed when the run ends.
pub fn encode_sparse(h: &SparseHistogram) -> String {
    encode_counts(&h.by_index())
}

/// [`encode_sparse`], the part added up in `dense` (`SparseHistogram::by_index_with`): the
/// journal's writer keeps one for the run.
pub fn encode_sparse_with(h: &SparseHistogram, dense: &mut DenseCounts) -> String {
    encode_counts(&h.by_index_with(dense))
}

/// Counts by bucket index, in index order, as uncompressed V2 in base64.
fn encode_counts(counts: &[(usize, u64)]) -> String {
    /// The V2 format's cookie (uncompressed), as HdrHistogram's `V2EncodingCookieBase | 0x10`.
    const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
    let mut payload = Vec::with_capacity(counts.len() * 3);
    let mut next = 0;
    for &(i, n) in counts {
        // A run of empty buckets is one negative number; a single one is a count of 0.
        match i - next {
            0 => {}
            1 => leb128(0, &mut payload),
            zeros => leb128(zig_zag(-(zeros as i64)), &mut payload),
        }
        leb128(zig_zag(n.min(i64::MAX as u64) as i64), &mut payload);
        next = i + 1;
    }
    let mut bytes = Vec::with_capacity(40 + payload.len());
    bytes.extend_from_slice(&V2_COOKIE.to_be_bytes());
    bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    // Normalizing index offset, significant figures, lowest and highest value, and the
    // integer-to-double ratio: `LatencyHistogram::new`'s.
    bytes.extend_from_slice(&0u32.to_be_bytes());
    bytes.extend_from_slice(&3u32.to_be_bytes());
    bytes.extend_from_slice(&1u64.to_be_bytes());
    bytes.extend_from_slice(&MAX_LATENCY_NS.to_be_bytes());
    bytes.extend_from_slice(&1f64.to_be_bytes());
    bytes.extend_from_slice(&payload);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A whole histogram's HdrHistogram V2 *uncompressed* bytes (`LatencyHistogram::plain_v2`) in
/// base64: the journal's coarse histogram of a second (2 significant figures), a few
/// instructions per bucket up to its highest value, where [`encode`]'s deflate costs hundreds of
/// thousands of instructions. Every HdrHistogram decoder reads it ([`add_encoded`] too).
pub fn encode_plain(v2: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(v2)
}

fn zig_zag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// LEB128, as HdrHistogram's varint for every value below 2^56 (counts and runs are).
fn leb128(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes one record histogram (`hdrhistogram-v2-compressed-base64`, nanoseconds) and adds it to
/// `into`. `what` names it in the error (`a.json: tests[0].histograms.corrected`).
pub fn add_encoded(into: &mut LatencyHistogram, text: &str, what: &str) -> Result<(), String> {
    let bytes = base64_bytes(text).map_err(|e| format!("{what}: not base64 ({e})"))?;
    if into.add_plain_v2(&bytes) {
        return Ok(());
    }
    let h =
        from_v2(&bytes).map_err(|e| format!("{what}: not an HdrHistogram V2 histogram ({e:?})"))?;
    add(into, &h);
    Ok(())
}

/// Decodes HdrHistogram text (V2, compressed or not, base64) of any bounds: a record's, or
/// memtier_benchmark's. `None` for text that is not one (the caller then shows no spectrum). The
/// one decoder of the crate: `add_encoded` reads through the same two steps.
pub fn decode(text: &str) -> Option<Histogram<u64>> {
    from_v2(&base64_bytes(text).ok()?).ok()
}

fn base64_bytes(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    base64::engine::general_purpose::STANDARD.decode(text.trim())
}

fn from_v2(bytes: &[u8]) -> Result<Histogram<u64>, hdrhistogram::serialization::DeserializeError> {
    Deserializer::new().deserialize(&mut &bytes[..])
}

/// Adds `h`'s counts to `into`. Each bucket's count is recorded at the bucket's highest
/// equivalent value, which lands in the same bucket of a histogram with respbench's bounds
/// (1 ns .. 1 h, 3 significant figures, the bounds every record is written with), so min, max,
/// mean and every percentile come out as if the samples had been recorded into `into` directly.
pub fn add(into: &mut LatencyHistogram, h: &Histogram<u64>) {
    for v in h.iter_recorded() {
        into.record_n(v.value_iterated_to(), v.count_at_value());
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;
    use hdrhistogram::serialization::Deserializer;

    use super::*;

    #[test]
    fn round_trips_to_the_same_counts_and_percentiles() {
        let mut h = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            h.record(i * 997 % 3_000_000 + 50_000);
        }
        h.record_n(42_000_000, 3);
        let text = encode(&h);
        assert!(text.starts_with("HISTF"), "V2 compressed cookie: {text}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&text)
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.max(), h.max_ns());
        for p in [50.0, 90.0, 99.0, 99.99, 100.0] {
            assert_eq!(back.value_at_percentile(p), h.value_at_percentile_ns(p));
        }
    }

    #[test]
    fn a_sparse_part_decodes_to_the_histogram_its_pairs_make() {
        let mut parts = [SparseHistogram::default(), SparseHistogram::default()];
        // Dense, sparse, the first buckets, the highest value, a count needing 3 bytes, in no
        // order, a value twice. (Past the one-hour clamp the reader's `add` and recording
        // differ: that is `add`'s, not this encoding's.)
        for k in 0..5_000u64 {
            parts[0].record(40_000 + (k * 7919) % 700_000);
        }
        for (v, n) in [
            (1, 2),
            (2, 1),
            (4, 1),
            (9_000_000_000, 1),
            (MAX_LATENCY_NS, 3),
            (77, 70_000),
        ] {
            parts[1].record_n(v, n);
        }
        parts[1].record_n(1, 5);
        parts[0].add(&parts[1].clone());
        for (p, empty) in [
            (&parts[0], false),
            (&parts[1], false),
            (&Default::default(), true),
        ] {
            let want = p.to_histogram();
            let mut got = LatencyHistogram::new();
            add_encoded(&mut got, &encode_sparse(p), "part").unwrap();
            assert_eq!(got.len(), want.len());
            assert_eq!(got.is_empty(), empty);
            let pairs = |h: &LatencyHistogram| -> Vec<(u64, u64)> {
                h.raw()
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect()
            };
            assert_eq!(pairs(&got), pairs(&want));
            assert_eq!((got.min_ns(), got.max_ns()), (want.min_ns(), want.max_ns()));
        }
    }

    /// The journal's uncompressed parts, read without building a histogram, add what
    /// hdrhistogram's decoder and [`add`] add: every bucket of both layouts (2 and 3 significant
    /// figures), a count over a byte, and the last bucket.
    #[test]
    fn an_uncompressed_part_adds_as_the_decoder_would() {
        for h in [LatencyHistogram::new(), LatencyHistogram::coarse()] {
            let mut h = h;
            // One value in every bucket up to an hour, and a few counts needing more bytes.
            let mut v = 1u64;
            while v <= MAX_LATENCY_NS {
                h.record_n(v, 1 + v % 3);
                v = h.raw().next_non_equivalent(v);
            }
            h.record_n(77, 70_000);
            h.record_n(MAX_LATENCY_NS, 1 << 40);
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encode_plain(&h.plain_v2()))
                .unwrap();
            let mut fast = LatencyHistogram::new();
            assert!(fast.add_plain_v2(&bytes), "an uncompressed part");
            let decoded: Histogram<u64> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
            let mut slow = LatencyHistogram::new();
            add(&mut slow, &decoded);
            let pairs = |h: &LatencyHistogram| -> Vec<(u64, u64)> {
                h.raw()
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect()
            };
            assert_eq!(pairs(&fast), pairs(&slow));
            assert_eq!(
                (fast.min_ns(), fast.max_ns()),
                (slow.min_ns(), slow.max_ns())
            );
            assert_eq!(fast.len(), slow.len());
        }
        let compressed = base64::engine::general_purpose::STANDARD
            .decode(encode(&LatencyHistogram::new()))
            .unwrap();
        assert!(!LatencyHistogram::new().add_plain_v2(&compressed));
        assert!(!LatencyHistogram::new().add_plain_v2(&[0x1c, 0x84]));
    }

    #[test]
    fn an_empty_histogram_encodes_too() {
        let text = encode(&LatencyHistogram::new());
        assert!(!text.is_empty());
    }
}
