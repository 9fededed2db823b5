//! A histogram (decoded by `record::hdr::decode`) → the percentile spectrum the HTML report draws.
//!
//! The spectrum is sampled at evenly spaced points of `log10(1/(1-q))` (10 per decade), the axis
//! it is drawn on, up to where the histogram has data (`1/(1-q)` ≤ the count), then its maximum:
//! a few dozen points per histogram whatever the run's length, which keeps the page small.

use hdrhistogram::Histogram;

/// Points `(q, value × scale)` of the spectrum, q ascending, ending at `(1, max)`. Empty for an
/// empty histogram.
pub fn points(h: &Histogram<u64>, scale: f64) -> Vec<(f64, f64)> {
    let n = h.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut k = 0u32;
    loop {
        let x = 10f64.powf(f64::from(k) / 10.0);
        if x > n as f64 {
            break;
        }
        let q = 1.0 - 1.0 / x;
        out.push((q, h.value_at_quantile(q) as f64 * scale));
        k += 1;
    }
    out.push((1.0, h.max() as f64 * scale));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencyHistogram;
    use crate::record::hdr::{self, decode};

    #[test]
    fn decodes_respbench_histograms_and_samples_the_log_axis() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 1000);
        }
        let back = decode(&hdr::encode(&h)).unwrap();
        let p = points(&back, 0.001);
        // x = 10^(k/10) for k = 0..=30 (x ≤ 1000), then the maximum.
        assert_eq!(p.len(), 32);
        assert_eq!(p[0].0, 0.0);
        assert!((p[10].0 - 0.9).abs() < 1e-12);
        assert!((p[10].1 - 900.0).abs() < 1.0, "{:?}", p[10]);
        assert_eq!(p.last().unwrap().0, 1.0);
        assert!((p.last().unwrap().1 - 1000.0).abs() < 1.0);
        assert!(p.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn garbage_is_no_histogram() {
        assert!(decode("not base64!").is_none());
        assert!(decode("aGVsbG8=").is_none());
    }
}
