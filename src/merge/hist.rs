//! Histograms back from the record's text, and added: what makes a merge exact.
//!
//! Each shard's record carries its full HdrHistogram (V2 compressed, base64). Adding histograms
//! bucket by bucket gives exactly the histogram one process would have recorded from all the
//! shards' samples (same buckets, same counts), so every percentile, the min, max and mean of the
//! merge are those of the whole run — unlike averaging the shards' percentiles, which has no
//! meaning. The property test below checks that claim on random samples.

/// Decoding and adding live in `record::hdr`, beside the encoding (the journal reads them too).
pub use crate::record::hdr::add_encoded;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::metrics::LatencyHistogram;
    use crate::record::document::LatencySummary;
    use crate::record::hdr;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random samples split over k histograms, each encoded as a record would hold it, then
        /// decoded and added: identical to recording every sample in one histogram.
        #[test]
        fn merged_equals_recorded_together(
            samples in prop::collection::vec(
                (prop_oneof![1u64..2_000, 1_000u64..5_000_000, 1_000_000u64..3_600_000_000_000],
                 0usize..8),
                1..600),
            k in 1usize..8,
        ) {
            let mut together = LatencyHistogram::new();
            let mut parts: Vec<LatencyHistogram> = (0..k).map(|_| LatencyHistogram::new()).collect();
            for &(v, which) in &samples {
                together.record(v);
                parts[which % k].record(v);
            }
            let mut merged = LatencyHistogram::new();
            for (i, p) in parts.iter().enumerate() {
                add_encoded(&mut merged, &hdr::encode(p), &format!("part {i}")).unwrap();
            }
            prop_assert_eq!(merged.len(), together.len());
            prop_assert_eq!(LatencySummary::of(&merged), LatencySummary::of(&together));
            for p in [0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0] {
                prop_assert_eq!(merged.value_at_percentile_ns(p), together.value_at_percentile_ns(p));
            }
            prop_assert_eq!(hdr::encode(&merged), hdr::encode(&together));
        }
    }

    #[test]
    fn garbage_is_named() {
        let mut h = LatencyHistogram::new();
        let e = add_encoded(&mut h, "!!", "x.json: tests[0]").unwrap_err();
        assert!(e.starts_with("x.json: tests[0]: not base64"), "{e}");
        let e = add_encoded(&mut h, "AAAA", "y").unwrap_err();
        assert!(e.contains("not an HdrHistogram"), "{e}");
    }
}
