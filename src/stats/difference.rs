//! A difference of two figures that may be negative, where a ratio cannot go: the
//! mean of paired differences over rounds, with its 95% interval; or, where the
//! two were not measured in the same rounds, the difference of their means.

use super::t_975;
use serde::{Deserialize, Serialize};

/// The mean of paired differences `b[i] − a[i]`, round by round, with its 95%
/// interval (Student's t).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Difference {
    /// `b[i] − a[i]` over the rounds both have; `None` with fewer than two.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Difference> {
        let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| b - a).collect();
        if d.len() < 2 || d.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let variance = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = t_975(d.len() - 1) * (variance / n).sqrt();
        Some(Difference {
            estimate: mean,
            low: mean - half,
            high: mean + half,
        })
    }

    /// `mean(b) − mean(a)` of two sets not measured round by round together (two
    /// experiments of one run): Welch's t interval, its degrees of freedom rounded
    /// down as [`Interval::of_two`](super::Interval::of_two) rounds them (slightly
    /// wider, never narrower); `None` with fewer than two values on either side.
    pub fn unpaired(a: &[f64], b: &[f64]) -> Option<Difference> {
        let (ma, va, na) = moments(a)?;
        let (mb, vb, nb) = moments(b)?;
        let (sa, sb) = (va / na, vb / nb);
        let se = (sa + sb).sqrt();
        let df = if se == 0.0 {
            na + nb - 2.0
        } else {
            (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
        };
        let half = t_975(df.floor() as usize) * se;
        let d = mb - ma;
        Some(Difference {
            estimate: d,
            low: d - half,
            high: d + half,
        })
    }

    /// The difference the other way round, `a[i] − b[i]`.
    pub fn negated(self) -> Difference {
        Difference {
            estimate: -self.estimate,
            low: -self.high,
            high: -self.low,
        }
    }

    /// Whether the rounds can tell it from zero, and it is positive.
    pub fn resolved(&self) -> bool {
        self.low > 0.0
    }
}

/// Mean and sample variance of `values`, and the count; `None` with fewer than two
/// or one that is not finite.
fn moments(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, variance, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_difference_with_students_t() {
        // d = 2, 4, 6: mean 4, s = 2, t(2) = 4.302653, half = 4.302653·2/√3.
        let d = Difference::paired(&[1.0, 1.0, 1.0], &[3.0, 5.0, 7.0]).unwrap();
        assert!((d.estimate - 4.0).abs() < 1e-12);
        let half = 4.302653 * 2.0 / 3f64.sqrt();
        assert!((d.low - (4.0 - half)).abs() < 1e-5, "{d:?}");
        assert!((d.high - (4.0 + half)).abs() < 1e-5, "{d:?}");
        assert!(!d.resolved(), "[−0.97, 8.97] holds zero");
        let tight = Difference::paired(&[1.0, 1.0, 1.0], &[3.0, 3.1, 2.9]).unwrap();
        assert!(tight.resolved());
        assert_eq!(Difference::paired(&[1.0], &[2.0]), None);
    }

    // Welch's interval (SciPy's `ttest_ind(b, a, equal_var=False)`), its df rounded
    // down as `Interval::of_two` rounds it; computed with Python's statistics module,
    // t from the table `t_975` holds (SciPy's to six decimals):
    //   sa, sb = st.variance(a) / len(a), st.variance(b) / len(b)
    //   df = (sa + sb)**2 / (sa**2 / (len(a) - 1) + sb**2 / (len(b) - 1))   # 2.20 → 2
    //   d = st.mean(b) - st.mean(a); h = stats.t.ppf(0.975, 2) * math.sqrt(sa + sb)
    #[test]
    fn unpaired_difference_with_welchs_t() {
        let a = [10.0, 12.0, 11.0, 13.0];
        let b = [30.0, 25.0, 35.0];
        let d = Difference::unpaired(&a, &b).unwrap();
        assert!((d.estimate - 18.5).abs() < 1e-12, "{d:?}");
        // sa = 1.666…/4, sb = 25/3: se = √(0.416… + 8.333…) = 2.95804; t(2) = 4.302653.
        let half = 4.302653 * (5.0f64 / 12.0 + 25.0 / 3.0).sqrt();
        assert!((d.low - (18.5 - half)).abs() < 1e-5, "{d:?}");
        assert!((d.high - (18.5 + half)).abs() < 1e-5, "{d:?}");
        assert!(d.resolved());
        assert_eq!(Difference::unpaired(&a, &[1.0]), None);
        let none = Difference::unpaired(&[1.0, 2.0, 3.0], &[3.0, 1.0, 2.0]).unwrap();
        assert!(!none.resolved(), "{none:?}");
    }
}
