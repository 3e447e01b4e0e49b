//! Statistics over timed samples and over repeated trials.
//!
//! Per trial, a timed loop leaves a vector of nanosecond samples; [`Percentiles`]
//! summarises it. Across trials, each figure is reported as its median with the
//! min–max range ([`Spread`]), and a spread wider than [`NOISY_SPREAD`] of the median
//! flags the result as noisy instead of hiding it.

mod difference;
mod fit;
mod interval;
mod percentiles;
mod spread;

pub use difference::Difference;
pub use fit::Fit;
pub use interval::{t_975, Interval, Mean, METHOD as INTERVAL_METHOD, MOST_ROUNDS, SETTLED};
pub use percentiles::Percentiles;
pub use spread::{median, Spread};
