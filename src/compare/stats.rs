//! Is a difference between two sets of repetitions a finding or noise? The Mann-Whitney U test
//! (Wilcoxon rank-sum), two-sided, at α = 0.05 — what benchstat uses, for the same reasons:
//! benchmark repetitions are few and not normally distributed (one slow run is common), and a
//! rank test assumes neither normality nor equal spread.
//!
//! The p-value is exact (the U distribution counted by dynamic programming) when there are no
//! ties and both sides have at most [`EXACT_MAX`] samples; otherwise the normal approximation
//! with the tie correction of the variance and a continuity correction. With too few samples no
//! difference can reach α at all (3 against 3: the smallest two-sided p is 2/20 = 0.1), and the
//! verdict says so instead of calling the difference noise.

/// The significance level: p below it is a difference.
pub const ALPHA: f64 = 0.05;

/// Largest side for the exact distribution (its table has n1·n2 + 1 entries per step).
const EXACT_MAX: usize = 50;

/// What the test says about two sets of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Noise {
    /// p < α: the difference is a finding.
    Significant { p: f64 },
    /// p ≥ α: within the noise (shown as `~`).
    Noise { p: f64 },
    /// So few samples that even complete separation would not reach α.
    TooFew,
}

/// The test of `x` against `y` (each at least one sample).
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Noise {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 || smallest_p(n1, n2) >= ALPHA {
        return Noise::TooFew;
    }
    let p = p_value(x, y);
    if p < ALPHA {
        Noise::Significant { p }
    } else {
        Noise::Noise { p }
    }
}

/// The smallest two-sided p any data could give: 2 / C(n1+n2, n1).
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    let mut c = 1.0f64;
    for i in 0..n1.min(n2) {
        c = c * (n1 + n2 - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// The two-sided p-value.
pub fn p_value(x: &[f64], y: &[f64]) -> f64 {
    let (u, tie_sum) = u_statistic(x, y);
    let (n1, n2) = (x.len(), y.len());
    if tie_sum == 0.0 && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        exact_p(n1, n2, u)
    } else {
        normal_p(n1, n2, u, tie_sum)
    }
}

/// `U` of `x` (pairs where x is larger, ties counting ½) and Σ(t³ − t) over tied groups.
fn u_statistic(x: &[f64], y: &[f64]) -> (f64, f64) {
    let mut all: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum, mut tie_sum) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        // Ranks i+1 ..= j+1, shared equally.
        let rank = (i + j + 2) as f64 / 2.0;
        rank_sum += rank * all[i..=j].iter().filter(|e| e.1).count() as f64;
        tie_sum += t * t * t - t;
        i = j + 1;
    }
    let n1 = x.len() as f64;
    (rank_sum - n1 * (n1 + 1.0) / 2.0, tie_sum)
}

/// Exact two-sided p: 2·min(P(U ≤ u), P(U ≥ u)) under the null, capped at 1.
fn exact_p(n1: usize, n2: usize, u: f64) -> f64 {
    let max_u = n1 * n2;
    // counts[m][k]: orderings of m x's among the values so far with U = k, built one y at a time;
    // here as a rolling table over n2: f(a, b, k) = f(a-1, b, k-b) + f(a, b-1, k).
    let mut f = vec![vec![0f64; max_u + 1]; n1 + 1];
    for row in f.iter_mut() {
        row[0] = 1.0; // b = 0: only U = 0.
    }
    for b in 1..=n2 {
        let mut next = vec![vec![0f64; max_u + 1]; n1 + 1];
        next[0][0] = 1.0;
        for a in 1..=n1 {
            for k in 0..=a * b {
                let with_x_last = if k >= b { next[a - 1][k - b] } else { 0.0 };
                next[a][k] = with_x_last + f[a][k];
            }
        }
        f = next;
    }
    let dist = &f[n1];
    let total: f64 = dist.iter().sum();
    let u = u.round() as usize;
    let lower: f64 = dist[..=u.min(max_u)].iter().sum();
    let upper: f64 = dist[u.min(max_u)..].iter().sum();
    (2.0 * lower.min(upper) / total).min(1.0)
}

/// Normal approximation with tie and continuity corrections.
fn normal_p(n1: usize, n2: usize, u: f64, tie_sum: f64) -> f64 {
    let (a, b) = (n1 as f64, n2 as f64);
    let n = a + b;
    let var = a * b / 12.0 * ((n + 1.0) - tie_sum / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0; // every value equal: no difference at all.
    }
    let z = ((u - a * b / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function (Chebyshev fit, relative error below 1.2e-7: plenty for a
/// p-value compared against 0.05).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    // Expected values: exact ones by enumerating every split of the pooled samples (C(9,4) = 126,
    // C(10,5) = 252); normal ones from the textbook formula evaluated separately.

    #[test]
    fn exact_complete_separation() {
        assert!(close(
            p_value(&[1., 2., 3., 4.], &[5., 6., 7., 8.]),
            2.0 / 70.0
        ));
        assert_eq!(
            mann_whitney(&[1., 2., 3., 4.], &[5., 6., 7., 8.]),
            Noise::Significant {
                p: p_value(&[1., 2., 3., 4.], &[5., 6., 7., 8.])
            }
        );
    }

    #[test]
    fn exact_known_answers() {
        // U = 4 of 20, P = 24/126.
        assert!(close(
            p_value(&[1., 2., 4., 7.], &[3., 5., 6., 8., 9.]),
            0.190_476_190
        ));
        // U = 2 of 25, P = 8/252.
        let p = p_value(&[10., 11., 12., 13., 14.], &[12.5, 15., 16., 17., 18.]);
        assert!(close(p, 0.031_746_032), "{p}");
        // Symmetric in the order of the sides.
        assert!(close(
            p_value(&[12.5, 15., 16., 17., 18.], &[10., 11., 12., 13., 14.]),
            p
        ));
    }

    #[test]
    fn normal_approximation_with_ties() {
        let p = p_value(&[1., 2., 2., 3., 4.], &[3., 3., 4., 5., 6., 7.]);
        assert!((p - 0.041_722_710).abs() < 1e-5, "{p}");
        let x: Vec<f64> = (1..=20).map(f64::from).collect();
        let y: Vec<f64> = (5..25).map(|v| f64::from(v) + 0.5).collect();
        // 20 + 20 without ties: exact; the normal figure is 0.0315, the exact one close to it.
        let p = p_value(&x, &y);
        assert!((p - 0.0315).abs() < 0.003, "{p}");
        assert!((normal_p(20, 20, 120.0, 0.0) - 0.031_517_102).abs() < 1e-5);
        assert_eq!(p_value(&[5., 5., 5.], &[5., 5., 5.]), 1.0);
    }

    #[test]
    fn too_few_samples_is_said() {
        assert!(close(smallest_p(3, 3), 0.1));
        assert!(close(smallest_p(4, 4), 2.0 / 70.0));
        assert_eq!(mann_whitney(&[1., 2., 3.], &[4., 5., 6.]), Noise::TooFew);
        assert_eq!(mann_whitney(&[1.], &[2.]), Noise::TooFew);
        assert!(smallest_p(3, 4) > ALPHA && smallest_p(3, 5) < ALPHA);
    }

    #[test]
    fn overlapping_samples_are_noise() {
        match mann_whitney(
            &[100., 103., 98., 101., 99.],
            &[102., 97., 100.5, 104., 98.5],
        ) {
            Noise::Noise { p } => assert!(p > 0.5, "{p}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        assert!((erfc(1.959_963_985 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-7);
    }
}
