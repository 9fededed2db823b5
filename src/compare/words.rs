//! A change's figures in words, as every output writes them (the text and Markdown table, the
//! headline, the HTML page): percent with its sign (never `-0.0%`), an interval, why a change
//! cannot be put down to the servers. Apart from `render` because the headline, which `render`
//! prints, needs them too.

use crate::stats::Estimate;
use crate::verdict::Verdict;

use super::table::Limits;

/// A change in percent with its sign and one decimal: `+16.5%`, `-8.0%`.
pub fn signed_pct(v: f64) -> String {
    pct_text(v, 1)
}

/// `v` percent with its sign and `decimals` decimals, or as many more as it takes for a value
/// that is not zero not to print as zero: an interval's end at -0.04% reads `-0.04%`, never
/// `-0.0%` (which says neither "zero" nor "below zero"). Zero itself is `+0.0%`.
pub fn pct_text(v: f64, decimals: usize) -> String {
    if v == 0.0 {
        return format!("{:+.decimals$}%", 0.0); // Never "-0.0%" for a negative zero.
    }
    let mut d = decimals;
    while d < 9
        && format!("{:.d$}", v.abs())
            .trim_matches(['0', '.'])
            .is_empty()
    {
        d += 1;
    }
    format!("{v:+.d$}%")
}

/// Why a change cannot be put down to the servers: `the machine was busy for a and b`, `b was
/// client-bound`, `the machine was busy for a; b was client-bound`.
pub fn limits_text(l: Limits, labels: (&str, &str)) -> String {
    let who = |want: Verdict| -> Vec<&str> {
        [(l.base, labels.0), (l.other, labels.1)]
            .into_iter()
            .filter(|(x, _)| *x == Some(want))
            .map(|(_, name)| name)
            .collect()
    };
    let mut parts = Vec::new();
    let busy = who(Verdict::MachineBusy);
    if !busy.is_empty() {
        parts.push(format!("the machine was busy for {}", busy.join(" and ")));
    }
    match who(Verdict::ClientBound)[..] {
        [one] => parts.push(format!("{one} was client-bound")),
        [a, b] => parts.push(format!("{a} and {b} were client-bound")),
        _ => {}
    }
    parts.join("; ")
}

/// An interval: `[+12.0%, +21.1%]`.
pub fn interval_text(e: &Estimate) -> String {
    format!("[{}, {}]", signed_pct(e.lo), signed_pct(e.hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_near_zero_is_printed_honestly() {
        assert_eq!(signed_pct(-0.04), "-0.04%");
        assert_eq!(signed_pct(0.004), "+0.004%");
        assert_eq!(signed_pct(-15.81), "-15.8%");
        assert_eq!(signed_pct(0.0), "+0.0%");
        assert_eq!(signed_pct(-0.0), "+0.0%", "no negative zero");
        assert_eq!(pct_text(-0.004, 2), "-0.004%");
        assert_eq!(pct_text(3.456, 2), "+3.46%");
        // The trial's GET p50 (Redis 7.0 against Valkey 9.1, ms): once `[-29.1%, -0.0%]`.
        let e = crate::stats::from_repetitions(
            &[0.538111, 0.557055, 0.598527],
            &[0.520447, 0.441087, 0.466431],
        )
        .unwrap();
        let t = interval_text(&e);
        assert!(e.hi < 0.0 && e.hi > -0.05, "{e:?}");
        assert!(
            t.starts_with("[-29.1%, -0.0") && !t.ends_with(", -0.0%]"),
            "{t}"
        );
    }
}
