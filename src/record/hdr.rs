//! Histograms as text: HdrHistogram's V2 compressed encoding, base64 — the form every
//! HdrHistogram implementation (Java, C, Go, Python, Rust) decodes, so a record's histograms can
//! be merged with others or re-analysed at any percentile without respbench.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use crate::metrics::LatencyHistogram;

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

/// Decodes one record histogram (`hdrhistogram-v2-compressed-base64`, nanoseconds) and adds it to
/// `into`. `what` names it in the error (`a.json: tests[0].histograms.corrected`).
pub fn add_encoded(into: &mut LatencyHistogram, text: &str, what: &str) -> Result<(), String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("{what}: not base64 ({e})"))?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("{what}: not an HdrHistogram V2 histogram ({e:?})"))?;
    add(into, &h);
    Ok(())
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
    fn an_empty_histogram_encodes_too() {
        let text = encode(&LatencyHistogram::new());
        assert!(!text.is_empty());
    }
}
