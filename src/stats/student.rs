//! Student's t distribution: the quantile a confidence interval needs, for any (non-integer)
//! degrees of freedom, since Welch's interval has fractional ones.
//!
//! The CDF comes from the regularized incomplete beta function, evaluated by its continued
//! fraction (modified Lentz); the quantile by bisection on the CDF. Accuracy far beyond what an
//! interval of benchmark figures needs (the tests check 6 significant digits against published
//! tables), and no dependency for a few dozen lines.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (converges fast for
/// x < (a + 1) / (a + b + 2)).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        // Even step.
        let num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + num / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + num / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The density of Student's t with `df` degrees of freedom at `t`.
fn pdf(t: f64, df: f64) -> f64 {
    let ln_norm =
        ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * std::f64::consts::PI).ln();
    (ln_norm - (df + 1.0) / 2.0 * (1.0 + t * t / df).ln()).exp()
}

/// The `q` quantile (0.5 < q < 1) of Student's t with `df` degrees of freedom: Newton's method
/// on the CDF, kept inside a bracket that bisection shrinks whenever a step would leave it
/// (a handful of CDF evaluations, which the simulation's thousands of intervals need).
pub fn quantile(q: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // Widen until the upper end is past the quantile (df = 1, q = 0.999 is about 318).
    while cdf(hi, df) < q && hi < 1e7 {
        lo = hi;
        hi *= 2.0;
    }
    let mut t = 0.5 * (lo + hi);
    for _ in 0..100 {
        let f = cdf(t, df) - q;
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let step = f / pdf(t, df);
        let next = t - step;
        let next = if next > lo && next < hi {
            next
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-12 * t.abs().max(1.0) || hi - lo <= 1e-12 {
            return next;
        }
        t = next;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_tables() {
        // Two-sided 95% critical values from the standard t table.
        for (df, want) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (3.0, 3.182_446),
            (4.0, 2.776_445),
            (8.0, 2.306_004),
            (30.0, 2.042_272),
            (1000.0, 1.962_339),
        ] {
            let got = quantile(0.975, df);
            assert!((got - want).abs() < 1e-5, "df {df}: {got} vs {want}");
        }
        // Fractional df lies between its neighbours.
        let q = quantile(0.975, 4.5);
        assert!(q < quantile(0.975, 4.0) && q > quantile(0.975, 5.0));
    }

    #[test]
    fn the_cdf_is_symmetric() {
        assert!((cdf(0.0, 5.0) - 0.5).abs() < 1e-12);
        assert!((cdf(2.0, 3.0) + cdf(-2.0, 3.0) - 1.0).abs() < 1e-12);
        // t = 1 with df 1 is the Cauchy distribution: 3/4.
        assert!((cdf(1.0, 1.0) - 0.75).abs() < 1e-10);
    }
}
