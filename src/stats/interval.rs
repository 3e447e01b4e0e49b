//! Confidence intervals over rounds: how sure a figure, or a paired ratio of two
//! figures, is.
//!
//! Every round measures every transport once, one after the other, so each round
//! gives a ratio (other ÷ reference) in which slow drift of the machine mostly
//! cancels. Timings are multiplicative and skewed, so the interval is computed on
//! the logarithms: a Student t interval of the mean log ratio, turned back into a
//! ratio. Its centre is the geometric mean of the per-round ratios.

use serde::{Deserialize, Serialize};

/// How intervals are computed, as the result file and `--help` say it.
pub const METHOD: &str = "95% Student t interval of the mean log ratio over paired rounds \
     (geometric mean), its standard error widened by 1% for what differs between runs";

/// The standard error, in log space, that a paired ratio has from one run to the
/// next beyond what its rounds show: a new server process, cluster and
/// connections, the host's state. Rounds within one run cannot sample it, so
/// [`Interval::of_paired`] adds it in quadrature. (Where the client's stack lies,
/// drawn once per process, they do sample: each round runs at its own depth,
/// `harness::layout`.) Measured by `bench/cross-run.sh`
/// over six back-to-back `sockbench run`s on 2 shared cores (630 pairs of runs ×
/// ratios, recomputed from their rounds): with none, 16.0% of headline ratios
/// differed between two runs beyond their intervals (|z| > 1.96; honest 95%
/// intervals give about 5%), with 1% 14.1% (52% settled), with 1.5% 10.3% but
/// only 33% settled: ±5% then leaves the rounds almost no room (t × 1.5% is
/// already ±3.5%). 1% is what this widening buys without costing the settling;
/// the rest of the run-to-run difference (TLS ratios moving by 10-20% between
/// runs on this machine) is larger than any interval narrow enough to settle.
pub const BETWEEN_RUNS: f64 = 0.01;

/// An interval is settled when it is narrower than this on either side (±5%).
pub const SETTLED: f64 = 0.05;

/// Rounds beyond which more of them is not the way to settle a comparison: it
/// varies too much from round to round.
pub const MOST_ROUNDS: u32 = 200;

/// An interval whose upper bound is more than this many times its lower bound
/// says nothing a reader can use (`+3.0% [−100%, +24600%]` from 2 rounds): it is
/// never printed, and the comparison is not settled whatever it excludes. The rule
/// for every interval of a ratio sockbench prints ([`Interval::informative`]).
pub const WIDEST: f64 = 4.0;

/// A positive figure (or ratio) and its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The geometric mean.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// How many values (rounds) it rests on.
    pub n: u32,
}

impl Interval {
    /// The interval of the geometric mean of positive `values`; `None` with fewer
    /// than two, or with a value that is not positive and finite.
    pub fn of(values: &[f64]) -> Option<Interval> {
        let (mean, variance, n) = log_moments(values)?;
        let half = t_975(n as usize - 1) * (variance / n).sqrt();
        Some(Interval {
            estimate: mean.exp(),
            low: (mean - half).exp(),
            high: (mean + half).exp(),
            n: n as u32,
        })
    }

    /// The interval of `other[i] / reference[i]`, round by round
    /// ([`Interval::of_paired`]).
    pub fn of_ratios(reference: &[f64], other: &[f64]) -> Option<Interval> {
        if reference.len() != other.len() {
            return None;
        }
        let ratios: Vec<f64> = reference.iter().zip(other).map(|(r, o)| o / r).collect();
        Interval::of_paired(&ratios)
    }

    /// The interval of the geometric mean of per-round paired ratios, its standard
    /// error widened by [`BETWEEN_RUNS`] (in quadrature) so that it holds from one
    /// run to the next, not only over the rounds of this one.
    pub fn of_paired(ratios: &[f64]) -> Option<Interval> {
        Interval::widened(ratios, BETWEEN_RUNS)
    }

    /// [`Interval::of`] with `between` added in quadrature to the standard error of
    /// the mean log: t · sqrt(s²/n + between²).
    fn widened(values: &[f64], between: f64) -> Option<Interval> {
        let (mean, variance, n) = log_moments(values)?;
        let half = t_975(n as usize - 1) * (variance / n + between * between).sqrt();
        Some(Interval {
            estimate: mean.exp(),
            low: (mean - half).exp(),
            high: (mean + half).exp(),
            n: n as u32,
        })
    }

    /// The interval of the ratio of two unpaired sets of figures (two runs),
    /// mean(b) ÷ mean(a) in geometric means: Welch's t on the logarithms, its
    /// degrees of freedom rounded down (slightly wider, never narrower).
    pub fn of_two(a: &[f64], b: &[f64]) -> Option<Interval> {
        let (ma, va, na) = log_moments(a)?;
        let (mb, vb, nb) = log_moments(b)?;
        let (sa, sb) = (va / na, vb / nb);
        let se = (sa + sb).sqrt();
        let df = if se == 0.0 {
            na + nb - 2.0
        } else {
            (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
        };
        let d = mb - ma;
        let half = t_975(df.floor() as usize) * se;
        Some(Interval {
            estimate: d.exp(),
            low: (d - half).exp(),
            high: (d + half).exp(),
            n: (na + nb) as u32,
        })
    }

    /// True when the interval, read as a ratio, excludes 1: the two differ.
    #[cfg(test)]
    pub fn differs(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }

    /// The wider side of the interval, relative to the estimate (0.05 is ±5%).
    pub fn half_width(&self) -> f64 {
        (self.high / self.estimate - 1.0).max(1.0 - self.low / self.estimate)
    }

    /// Whether the interval is narrow enough to print ([`WIDEST`]).
    pub fn informative(&self) -> bool {
        self.high / self.low <= WIDEST
    }

    /// Narrower than ±[`SETTLED`].
    pub fn settled(&self) -> bool {
        self.half_width() < SETTLED
    }

    /// About how many rounds would make a paired interval ([`Interval::of_paired`])
    /// settled, when it is not: the spread of one round's log ratio is read back
    /// from the interval (its t quantile and the [`BETWEEN_RUNS`] widening taken
    /// out), then the first count of rounds whose interval would be narrower than
    /// ±[`SETTLED`]. `None` when it is settled already, or when no count up to
    /// 100,000 would do (the widening alone is too wide).
    pub fn rounds_to_settle(&self) -> Option<u32> {
        if self.settled() || self.n < 2 {
            return None;
        }
        let n = f64::from(self.n);
        let half = (self.high.ln() - self.low.ln()) / 2.0;
        let se = half / t_975(self.n as usize - 1);
        let variance = ((se * se - BETWEEN_RUNS * BETWEEN_RUNS) * n).max(0.0);
        let target = (1.0 + SETTLED).ln();
        (self.n + 1..=100_000).find(|&m| {
            let m = f64::from(m);
            t_975(m as usize - 1) * (variance / m + BETWEEN_RUNS * BETWEEN_RUNS).sqrt() < target
        })
    }
}

/// The arithmetic mean of figures that may be zero or below (a difference of two
/// CPU times, a layer's share of the samples) and its 95% Student t interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mean {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// How many values (trials) it rests on.
    pub n: u32,
}

impl Mean {
    /// The mean of `values` with mean ± t(n−1) · s/√n; `None` with fewer than two
    /// values or one that is not finite.
    pub fn of(values: &[f64]) -> Option<Mean> {
        if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = t_975(values.len() - 1) * (variance / n).sqrt();
        Some(Mean {
            estimate: mean,
            low: mean - half,
            high: mean + half,
            n: values.len() as u32,
        })
    }

    /// True when the interval lies wholly above zero.
    pub fn above_zero(&self) -> bool {
        self.low > 0.0
    }

    /// The wider side of the interval, in the figure's own unit.
    pub fn half_width(&self) -> f64 {
        (self.high - self.estimate).max(self.estimate - self.low)
    }
}

/// Mean and sample variance of the logarithms, and the count; `None` with fewer
/// than two values or one that is not positive and finite.
fn log_moments(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.len() < 2 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, variance, n))
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom:
/// exact to six decimals from a table up to 30, then the Cornish–Fisher expansion
/// around the normal quantile (error below 1e-5 from 31 on).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z: f64 = 1.959_963_984_540_054;
            let v = df as f64;
            let z3 = z.powi(3);
            let z5 = z.powi(5);
            let z7 = z.powi(7);
            z + (z3 + z) / (4.0 * v)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    // Reference values computed independently with Python 3.11.7 and SciPy 1.17.1:
    //   from scipy import stats; import math, statistics as st
    //   logs = [math.log(x) for x in xs]; m = st.mean(logs); se = st.stdev(logs) / math.sqrt(len(xs))
    //   t = stats.t.ppf(0.975, len(xs) - 1)
    //   print(math.exp(m), math.exp(m - t * se), math.exp(m + t * se))
    #[test]
    fn interval_of_five_ratios_matches_scipy() {
        let i = Interval::of(&[1.28, 1.35, 1.19, 1.31, 1.24]).unwrap();
        assert!(close(i.estimate, 1.2727899), "{i:?}");
        assert!(close(i.low, 1.1979204), "{i:?}");
        assert!(close(i.high, 1.3523388), "{i:?}");
        assert_eq!(i.n, 5);
        assert!(i.differs());
    }

    #[test]
    fn interval_of_three_values_matches_scipy() {
        let i = Interval::of(&[34.0, 67.0, 51.0]).unwrap();
        assert!(close(i.estimate, 48.7949224), "{i:?}");
        assert!(close(i.low, 20.8998580), "{i:?}");
        assert!(close(i.high, 113.9215616), "{i:?}");
    }

    #[test]
    fn paired_ratios_are_taken_round_by_round() {
        // Both transports swing together by 2x from round to round; the paired
        // ratio stays at 1.5, and its interval is only what differs between runs:
        // t(3) × 1% either side of it in log space.
        let unix = [10.0, 20.0, 10.0, 20.0];
        let tcp = [15.0, 30.0, 15.0, 30.0];
        let i = Interval::of_ratios(&unix, &tcp).unwrap();
        let half = 3.182446 * BETWEEN_RUNS;
        assert!(close(i.estimate, 1.5), "{i:?}");
        assert!(
            close(i.low, 1.5 * (-half).exp()) && close(i.high, 1.5 * half.exp()),
            "{i:?}"
        );
        assert!(i.settled());
    }

    // The between-run error adds to the rounds' own in quadrature:
    //   logs = [math.log(x) for x in (1.28, 1.35, 1.19, 1.31, 1.24)]
    //   se = math.sqrt(st.variance(logs) / 5 + 0.01 ** 2); h = stats.t.ppf(0.975, 4) * se
    //   print(math.exp(st.mean(logs) - h), math.exp(st.mean(logs) + h))
    #[test]
    fn paired_intervals_are_widened_by_what_differs_between_runs() {
        let ratios = [1.28, 1.35, 1.19, 1.31, 1.24];
        let within = Interval::of(&ratios).unwrap();
        let paired = Interval::of_paired(&ratios).unwrap();
        assert!(close(paired.estimate, within.estimate));
        let (mean, var, n) = log_moments(&ratios).unwrap();
        let h = 2.776445 * (var / n + 0.0001).sqrt();
        assert!(close(paired.low, (mean - h).exp()), "{paired:?}");
        assert!(close(paired.high, (mean + h).exp()), "{paired:?}");
        assert!(paired.low < within.low && paired.high > within.high);
        // Never narrower than ±t·1%, however alike the rounds.
        let steady = Interval::of_paired(&[1.0; 8]).unwrap();
        assert!(steady.half_width() > 0.02 && steady.settled(), "{steady:?}");
    }

    #[test]
    fn no_clear_difference_when_the_interval_holds_one() {
        let i = Interval::of(&[0.94, 2.03, 1.1]).unwrap();
        assert!(i.low < 1.0 && i.high > 1.0, "{i:?}");
        assert!(!i.differs());
        assert!(!i.settled());
        let faster = Interval::of(&[0.80, 0.82, 0.79, 0.81]).unwrap();
        assert!(faster.differs());
    }

    // Welch on logs, df rounded down, as SciPy computes it:
    //   la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    //   sa, sb = st.variance(la) / len(a), st.variance(lb) / len(b)
    //   df = (sa + sb)**2 / (sa**2 / (len(a) - 1) + sb**2 / (len(b) - 1))
    //   d = st.mean(lb) - st.mean(la); h = stats.t.ppf(0.975, math.floor(df)) * math.sqrt(sa + sb)
    //   print(math.exp(d), math.exp(d - h), math.exp(d + h))
    const B_OVER_A: (f64, f64, f64) = (1.2240570, 1.0576313, 1.4166711);

    #[test]
    fn two_runs_compare_with_welch_on_logs_as_scipy_does() {
        let a = [100.0, 104.0, 98.0, 101.0, 99.0];
        let b = [120.0, 131.0, 118.0];
        let i = Interval::of_two(&a, &b).unwrap();
        assert!(close(i.estimate, B_OVER_A.0), "{i:?}");
        assert!(close(i.low, B_OVER_A.1), "{i:?}");
        assert!(close(i.high, B_OVER_A.2), "{i:?}");
        assert!(i.differs());
        let same = Interval::of_two(&a, &[97.0, 103.0, 100.0]).unwrap();
        assert!(!same.differs(), "{same:?}");
    }

    #[test]
    fn too_few_or_bad_values_give_no_interval() {
        assert_eq!(Interval::of(&[1.0]), None);
        assert_eq!(Interval::of(&[1.0, 0.0]), None);
        assert_eq!(Interval::of(&[1.0, f64::NAN]), None);
        assert_eq!(Interval::of_ratios(&[1.0, 2.0], &[1.0]), None);
    }

    // With Python 3.11 and SciPy 1.17.1:
    //   stats.t.interval(0.95, len(xs) - 1, loc=st.mean(xs), scale=stats.sem(xs))
    const MEAN_OF_FIVE: (f64, f64) = (-41.311003483, 381.311003483);
    const MEAN_OF_THREE: (f64, f64) = (0.195158623, 0.244841377);

    #[test]
    fn interval_of_a_mean_matches_scipy() {
        let m = Mean::of(&[120.0, -35.0, 410.0, 260.0, 95.0]).unwrap();
        assert!(close(m.estimate, 170.0), "{m:?}");
        assert!(close(m.low, MEAN_OF_FIVE.0), "{m:?}");
        assert!(close(m.high, MEAN_OF_FIVE.1), "{m:?}");
        assert_eq!(m.n, 5);
        assert!(!m.above_zero(), "a growth of 170 that may be none");
        let shares = Mean::of(&[0.21, 0.23, 0.22]).unwrap();
        assert!(close(shares.low, MEAN_OF_THREE.0), "{shares:?}");
        assert!(close(shares.high, MEAN_OF_THREE.1), "{shares:?}");
        assert!(shares.above_zero());
        assert_eq!(Mean::of(&[1.0]), None);
        assert_eq!(Mean::of(&[1.0, f64::INFINITY]), None);
    }

    // scipy.stats.t.ppf(0.975, df) for df = 1, 4, 30, 31, 40, 100.
    #[test]
    fn t_quantiles_match_scipy() {
        for (df, want) in [
            (1, 12.7062047),
            (4, 2.7764451),
            (30, 2.0422725),
            (31, 2.0395134),
            (40, 2.0210754),
            (100, 1.9839715),
        ] {
            assert!((t_975(df) - want).abs() < 2e-5, "df {df}: {}", t_975(df));
        }
    }
}
