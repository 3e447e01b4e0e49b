//! The figures of one trial, stored generically: a map of named values, each a
//! number, a count, percentiles, named parts or a list. Each family declares its
//! figures as typed keys ([`Key`]) and says what they are ([`super::metric`]), so
//! nothing outside the family lists them; in the result file they are one flat
//! object (`{"rtt_ns": {"p50": …}, "ops_per_s": …}`), as in every format before.

use super::{Key, Point};
use crate::cpu::{Cost, Counts};
use crate::stats::{median, Percentiles};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One figure's value. Read as the first kind that takes it, so a list comes
/// before the maps: serde would read a list of four numbers as percentiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Figure {
    /// Events over all trials (summed, not a median): failed transactions.
    Count(u64),
    Number(f64),
    /// One number per item, in order: the time of each command of a script.
    List(Vec<f64>),
    Percentiles(Percentiles),
    /// Named parts of one whole: the phases of a connection.
    Parts(BTreeMap<String, f64>),
    /// The timed batches of one trial, the points its fit is made from. Only a
    /// trial has them: a record's figures leave them out (their medians would
    /// be no batch that ran).
    Points(Vec<Point>),
}

impl Figure {
    /// True when every number in it is finite (JSON has no NaN or infinity).
    fn finite(&self) -> bool {
        match self {
            Figure::Count(_) => true,
            Figure::Number(x) => x.is_finite(),
            Figure::Percentiles(p) => [p.mean, p.p50, p.p99, p.p999].iter().all(|x| x.is_finite()),
            Figure::Parts(parts) => parts.values().all(|x| x.is_finite()),
            Figure::List(list) => list.iter().all(|x| x.is_finite()),
            Figure::Points(_) => true,
        }
    }
}

/// Figures of one trial, or their medians over trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// CPU cost per operation of the timed loop, client and server apart (the
    /// harness measures it for every family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cost>,
    #[serde(flatten)]
    figures: BTreeMap<String, Figure>,
}

/// The types a figure can have, and how each is stored.
pub trait AsFigure: Sized {
    fn into_figure(self) -> Figure;
    fn from_figure(figure: &Figure) -> Option<Self>;
}

impl AsFigure for f64 {
    fn into_figure(self) -> Figure {
        Figure::Number(self)
    }
    fn from_figure(figure: &Figure) -> Option<f64> {
        match figure {
            Figure::Number(x) => Some(*x),
            // A rate that happened to be whole was written without a fraction.
            Figure::Count(n) => Some(*n as f64),
            _ => None,
        }
    }
}

impl AsFigure for u64 {
    fn into_figure(self) -> Figure {
        Figure::Count(self)
    }
    fn from_figure(figure: &Figure) -> Option<u64> {
        match figure {
            Figure::Count(n) => Some(*n),
            _ => None,
        }
    }
}

impl AsFigure for Percentiles {
    fn into_figure(self) -> Figure {
        Figure::Percentiles(self)
    }
    fn from_figure(figure: &Figure) -> Option<Percentiles> {
        match figure {
            Figure::Percentiles(p) => Some(*p),
            _ => None,
        }
    }
}

impl AsFigure for Vec<f64> {
    fn into_figure(self) -> Figure {
        Figure::List(self)
    }
    fn from_figure(figure: &Figure) -> Option<Vec<f64>> {
        match figure {
            Figure::List(l) => Some(l.clone()),
            _ => None,
        }
    }
}

impl AsFigure for Vec<Point> {
    fn into_figure(self) -> Figure {
        Figure::Points(self)
    }
    fn from_figure(figure: &Figure) -> Option<Vec<Point>> {
        match figure {
            Figure::Points(p) => Some(p.clone()),
            // No batch at all reads as an empty list of numbers.
            Figure::List(l) if l.is_empty() => Some(Vec::new()),
            _ => None,
        }
    }
}

impl AsFigure for BTreeMap<String, f64> {
    fn into_figure(self) -> Figure {
        Figure::Parts(self)
    }
    fn from_figure(figure: &Figure) -> Option<BTreeMap<String, f64>> {
        match figure {
            Figure::Parts(p) => Some(p.clone()),
            _ => None,
        }
    }
}

impl Metrics {
    /// The figure `key`, if measured.
    pub fn get<T: AsFigure>(&self, key: Key<T>) -> Option<T> {
        self.figures.get(key.name).and_then(T::from_figure)
    }

    /// Sets `key` (`None`, or a value that is not a finite number, removes it: the
    /// file could not hold it).
    pub fn set<T: AsFigure>(&mut self, key: Key<T>, value: impl Into<Option<T>>) {
        match value.into().map(T::into_figure).filter(Figure::finite) {
            Some(f) => self.figures.insert(key.name.to_string(), f),
            None => self.figures.remove(key.name),
        };
    }

    /// These figures with `key` set.
    pub fn with<T: AsFigure>(mut self, key: Key<T>, value: impl Into<Option<T>>) -> Metrics {
        self.set(key, value);
        self
    }

    /// The number at `path`: a figure's name, then for percentiles or parts the
    /// part (`rtt_ns.p50`, `phases_ns.auth`). For the code that reads every family's
    /// figures alike ([`super::metric::Metric::read`]).
    pub fn number(&self, path: &str) -> Option<f64> {
        let (name, part) = match path.split_once('.') {
            Some((name, part)) => (name, Some(part)),
            None => (path, None),
        };
        match (self.figures.get(name)?, part) {
            (Figure::Number(x), None) => Some(*x),
            (Figure::Count(n), None) => Some(*n as f64),
            (Figure::Percentiles(p), Some(part)) => match part {
                "mean" => Some(p.mean),
                "p50" => Some(p.p50),
                "p99" => Some(p.p99),
                "p999" => Some(p.p999),
                _ => None,
            },
            (Figure::Parts(parts), Some(part)) => parts.get(part).copied(),
            _ => None,
        }
    }

    /// Each figure over the trials that have it: counts summed, everything else its
    /// median (percentiles, parts and lists part by part), points left out.
    pub fn median_of(trials: &[Metrics]) -> Metrics {
        let mut names: Vec<&String> = trials.iter().flat_map(|m| m.figures.keys()).collect();
        names.sort();
        names.dedup();
        let figures = names
            .into_iter()
            .filter_map(|name| {
                let all: Vec<&Figure> = trials.iter().filter_map(|m| m.figures.get(name)).collect();
                Some((name.clone(), combine(&all)?))
            })
            .collect();
        Metrics {
            cpu: median_cost(trials),
            figures,
        }
    }
}

/// One figure over trials, when they agree on its type and it has a meaning over
/// trials (points do not).
fn combine(all: &[&Figure]) -> Option<Figure> {
    let mid = |values: Vec<f64>| median(&values);
    Some(match all.first()? {
        Figure::Points(_) => return None,
        Figure::Count(_) => Figure::Count(all.iter().filter_map(|f| u64::from_figure(f)).sum()),
        Figure::Number(_) => Figure::Number(mid(all
            .iter()
            .filter_map(|f| f64::from_figure(f))
            .collect())),
        Figure::Percentiles(_) => {
            let ps: Vec<Percentiles> = all
                .iter()
                .filter_map(|f| Percentiles::from_figure(f))
                .collect();
            let of = |f: fn(&Percentiles) -> f64| mid(ps.iter().map(f).collect());
            Figure::Percentiles(Percentiles {
                mean: of(|p| p.mean),
                p50: of(|p| p.p50),
                p99: of(|p| p.p99),
                p999: of(|p| p.p999),
            })
        }
        Figure::Parts(first) => Figure::Parts(
            first
                .keys()
                .map(|k| {
                    let values = all.iter().filter_map(|f| match f {
                        Figure::Parts(p) => p.get(k).copied(),
                        _ => None,
                    });
                    (k.clone(), mid(values.collect()))
                })
                .collect(),
        ),
        Figure::List(first) => Figure::List(
            (0..first.len())
                .map(|i| {
                    let values = all.iter().filter_map(|f| match f {
                        Figure::List(l) => l.get(i).copied(),
                        _ => None,
                    });
                    mid(values.collect())
                })
                .collect(),
        ),
    })
}

/// The median CPU cost over the trials that have one; where each side ran stays
/// with the trials.
fn median_cost(trials: &[Metrics]) -> Option<Cost> {
    let all: Vec<&Cost> = trials.iter().filter_map(|m| m.cpu.as_ref()).collect();
    let first = all.first()?;
    let clients: Vec<Counts> = all.iter().map(|c| c.client).collect();
    let servers: Vec<Counts> = all.iter().filter_map(|c| c.server).collect();
    let names: std::collections::BTreeSet<&String> =
        all.iter().flat_map(|c| c.roles.keys()).collect();
    let roles = names
        .into_iter()
        .map(|name| {
            let each: Vec<Counts> = all
                .iter()
                .filter_map(|c| c.roles.get(name))
                .copied()
                .collect();
            (name.clone(), Counts::median_of(&each))
        })
        .collect();
    Some(Cost {
        source: first.source,
        client: Counts::median_of(&clients),
        server: (!servers.is_empty()).then(|| Counts::median_of(&servers)),
        roles,
        client_cpu: None,
        server_cpus: Vec::new(),
        why: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Key<f64> = Key::new("conn_per_s");
    const LATENCY: Key<Percentiles> = Key::new("latency_ns");
    const FAILED: Key<u64> = Key::new("failed");
    const PHASES: Key<BTreeMap<String, f64>> = Key::new("phases_ns");

    fn p(x: f64) -> Percentiles {
        Percentiles {
            mean: x,
            p50: x,
            p99: 2.0 * x,
            p999: 3.0 * x,
        }
    }

    #[test]
    fn median_of_trials_takes_each_figure_apart_and_sums_counts() {
        let trials = [1.0, 5.0, 3.0].map(|x| {
            Metrics::default()
                .with(RATE, x * 10.0)
                .with(LATENCY, p(x))
                .with(FAILED, 2)
                .with(PHASES, BTreeMap::from([("auth".to_string(), x)]))
        });
        let m = Metrics::median_of(&trials);
        assert_eq!(m.get(RATE), Some(30.0));
        assert_eq!(m.get(LATENCY), Some(p(3.0)));
        assert_eq!(m.get(FAILED), Some(6));
        assert_eq!(m.number("phases_ns.auth"), Some(3.0));
        assert_eq!(m.number("latency_ns.p99"), Some(6.0));
        assert_eq!(m.number("bytes_per_s"), None);
        let nan = Metrics::default()
            .with(RATE, f64::NAN)
            .with(LATENCY, p(f64::INFINITY));
        assert_eq!(nan, Metrics::default(), "a file cannot hold NaN: left out");
    }

    #[test]
    fn figures_keep_their_shape_through_the_file() {
        let m = Metrics::default()
            .with(RATE, 1234.0)
            .with(FAILED, 3)
            .with(LATENCY, p(2.5))
            .with(Key::<Vec<f64>>::new("per_command_ns"), vec![1.5, 2.0])
            .with(
                Key::<Vec<f64>>::new("four_commands_ns"),
                vec![1.0, 2.0, 3.0, 4.0],
            );
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains(r#""failed":3"#), "{json}");
        assert!(json.contains(r#""conn_per_s":1234.0"#), "{json}");
        let back: Metrics = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
    }
}
