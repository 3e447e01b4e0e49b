//! Ordinary least-squares fit of a straight line, y = slope·x + intercept.
//!
//! Used where an experiment repeats a fixed amount of work N times for several N
//! (queries, rows): the slope is the cost of one more unit, the intercept the fixed
//! cost paid once, and R² (the coefficient of determination, 1 − SS_res / SS_tot)
//! says how well a straight line explains the totals. The formulas are the textbook
//! closed form, e.g. Montgomery, Peck & Vining, *Introduction to Linear Regression
//! Analysis*, §2.2.

use serde::{Deserialize, Serialize};

/// A fitted line and how well it fits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub slope: f64,
    pub intercept: f64,
    pub r2: f64,
}

impl Fit {
    /// The least-squares line through `(x, y)` points; `None` with fewer than two
    /// distinct x.
    pub fn of(points: &[(f64, f64)]) -> Option<Fit> {
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        if points.len() < 2 || sxx == 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        let intercept = mean_y - slope * mean_x;
        let ss_tot: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
        let ss_res: f64 = points
            .iter()
            .map(|p| (p.1 - (slope * p.0 + intercept)).powi(2))
            .sum();
        let r2 = if ss_tot == 0.0 {
            1.0
        } else {
            1.0 - ss_res / ss_tot
        };
        Some(Fit {
            slope,
            intercept,
            r2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line_fits_perfectly() {
        let fit = Fit::of(&[(1.0, 5.0), (2.0, 7.0), (4.0, 11.0)]).unwrap();
        assert!((fit.slope - 2.0).abs() < 1e-12);
        assert!((fit.intercept - 3.0).abs() < 1e-12);
        assert!((fit.r2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn known_regression() {
        // x = 1..5, y = 2, 4, 5, 4, 5: slope 0.6, intercept 2.2, R² 0.6.
        let points: Vec<(f64, f64)> = [2.0, 4.0, 5.0, 4.0, 5.0]
            .iter()
            .enumerate()
            .map(|(i, &y)| ((i + 1) as f64, y))
            .collect();
        let fit = Fit::of(&points).unwrap();
        assert!((fit.slope - 0.6).abs() < 1e-12);
        assert!((fit.intercept - 2.2).abs() < 1e-12);
        assert!((fit.r2 - 0.6).abs() < 1e-12);
    }

    #[test]
    fn one_distinct_x_has_no_line() {
        assert!(Fit::of(&[(3.0, 1.0), (3.0, 2.0)]).is_none());
        assert!(Fit::of(&[(3.0, 1.0)]).is_none());
    }
}
