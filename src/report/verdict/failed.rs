//! The share of operations that failed, per transport: for work past what a server
//! can take (the proxy's overload), where one transport may fail none, so no ratio
//! compares them and the generic line cannot.
//!
//! A share is of all the rounds' operations together, as the tables count them
//! (failed of answered), so the verdict and a table's note print one figure. Its
//! uncertainty is its range over the rounds: the lowest and highest share of one
//! round, between which the share of all lies. Two transports are told apart only
//! where their ranges do not overlap, so that every round failed more over one than
//! any round over the other; with fewer rounds than an interval needs, or shares
//! that swing, the line says which is not settled rather than guess.

use super::words::{listed, named};
use crate::results::paired::{against, reference};
use crate::results::{Key, ResultRecord};

/// What failed of one record's operations, over its rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Failures {
    pub transport: String,
    /// Operations that failed, and all those answered (failed too), summed over
    /// the rounds.
    pub failed: u64,
    pub all: u64,
    /// The lowest and the highest share of one round.
    pub low: f64,
    pub high: f64,
    /// The rounds that answered any operation.
    pub rounds: usize,
}

impl Failures {
    /// The failures of `record`, counted by its figure `failed` in each round
    /// beside the round's operations (`Trial::count`); `None` when no round
    /// answered any.
    pub fn of(record: &ResultRecord, failed: Key<u64>) -> Option<Failures> {
        let each: Vec<(u64, u64)> = record
            .trials
            .iter()
            .filter(|t| t.count > 0)
            .map(|t| {
                let n = t.metrics.get(failed).unwrap_or(0);
                (n, t.count.max(n))
            })
            .collect();
        let shares = || each.iter().map(|&(n, all)| n as f64 / all as f64);
        Some(Failures {
            transport: record.transport.clone(),
            failed: each.iter().map(|e| e.0).sum(),
            all: each.iter().map(|e| e.1).sum(),
            low: shares().reduce(f64::min)?,
            high: shares().reduce(f64::max)?,
            rounds: each.len(),
        })
    }

    /// The share of all the rounds' operations that failed.
    pub fn share(&self) -> f64 {
        self.failed as f64 / self.all.max(1) as f64
    }
}

/// A share as printed wherever it is: `21%`, `4.2%`, `0.35%`, `0%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p == 0.0 {
        "0%".into()
    } else if p >= 9.95 {
        format!("{p:.0}%")
    } else if p >= 0.995 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// The statement of a line on failures, the reference transport first:
/// `the Unix socket failed 21% of requests (18%–25% over 8 rounds), tcp 11%
/// (7.0%–14%); more failed over unix than over tcp in every round`. `None` with
/// fewer than two transports: a verdict compares them.
pub fn statement(each: &[Failures], op: &str, ops: &str) -> Option<String> {
    if each.len() < 2 {
        return None;
    }
    let labels: Vec<&str> = each.iter().map(|f| f.transport.as_str()).collect();
    let first = reference(&labels);
    let mut order: Vec<&Failures> = vec![&each[first]];
    order.extend(
        each.iter()
            .enumerate()
            .filter(|&(i, _)| i != first)
            .map(|(_, f)| f),
    );
    let rounds = order[0].rounds;
    if each.iter().all(|f| f.failed == 0) {
        let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        return Some(format!(
            "no {op} failed over {} in {rounds} rounds",
            listed(&names).replace(" and ", " or ")
        ));
    }
    // The rounds are said once, in the first range printed.
    let mut said_rounds = false;
    let shares: Vec<String> = order
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let share = if f.failed == 0 {
                "none".to_string()
            } else {
                let over = if !said_rounds || f.rounds != rounds {
                    said_rounds = true;
                    format!(" over {} rounds", f.rounds)
                } else {
                    String::new()
                };
                let range = format!("{}–{}{over}", percent(f.low), percent(f.high));
                match i {
                    0 => format!("{} of {ops} ({range})", percent(f.share())),
                    _ => format!("{} ({range})", percent(f.share())),
                }
            };
            match i {
                0 if f.failed == 0 => format!("{} failed none of the {ops}", named(&f.transport)),
                0 => format!("{} failed {share}", named(&f.transport)),
                _ => format!("{} {share}", f.transport),
            }
        })
        .collect();
    // Each transport against the one it is compared with everywhere: the
    // reference, or for TLS tcp.
    let with = against(&labels);
    let told: Vec<String> = (0..each.len())
        .filter_map(|i| {
            let (a, b) = (&each[with[i]?], &each[i]);
            Some(if a.low > b.high {
                format!(
                    "more failed over {} than over {} in every round",
                    a.transport, b.transport
                )
            } else if b.low > a.high {
                format!(
                    "more failed over {} than over {} in every round",
                    b.transport, a.transport
                )
            } else {
                format!(
                    "whether more fail over {} or {} is not settled: their rounds overlap",
                    a.transport, b.transport
                )
            })
        })
        .collect();
    Some(format!("{}; {}", shares.join(", "), told.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::record;
    use crate::results::metric::{Better, Metric, Unit};
    use crate::results::{Metrics, Params, Trial};

    const FAILED: Key<u64> = Key::new("failed");
    const HEADLINE: Metric = Metric::new("ok_per_s", Unit::Rate, Better::Higher);

    /// A record over `transport` whose rounds answered these many operations,
    /// (answered, failed) each.
    fn rounds(transport: &str, each: &[(u64, u64)]) -> ResultRecord {
        let trials = each
            .iter()
            .map(|&(count, failed)| Trial {
                metrics: Metrics::default().with(FAILED, failed),
                count,
                ..Trial::default()
            })
            .collect();
        record(
            "fake.overload",
            &HEADLINE,
            &Params::default(),
            transport,
            trials,
            None,
        )
    }

    fn said(records: &[ResultRecord]) -> String {
        let each: Vec<Failures> = records
            .iter()
            .filter_map(|r| Failures::of(r, FAILED))
            .collect();
        statement(&each, "request", "requests").unwrap()
    }

    #[test]
    fn a_share_is_of_all_rounds_together_with_its_range_over_rounds() {
        // 20% and 30% of 1,000, 10% of 500: 550 of 2,500 = 22%, between 10% and 30%.
        let r = rounds("unix", &[(1_000, 200), (1_000, 300), (500, 50)]);
        let f = Failures::of(&r, FAILED).unwrap();
        assert_eq!((f.failed, f.all, f.rounds), (550, 2_500, 3));
        assert!((f.share() - 0.22).abs() < 1e-12);
        assert_eq!((f.low, f.high), (0.1, 0.3));
        assert!(f.low <= f.share() && f.share() <= f.high);
        assert_eq!(Failures::of(&rounds("tcp", &[(0, 0)]), FAILED), None);
    }

    #[test]
    fn shares_are_printed_with_the_digits_they_need() {
        assert_eq!(percent(0.212), "21%");
        assert_eq!(percent(0.0996), "10%");
        assert_eq!(percent(0.042), "4.2%");
        assert_eq!(percent(0.0035), "0.35%");
        assert_eq!(percent(0.0), "0%");
    }

    #[test]
    fn ranges_apart_say_which_fails_more_and_overlapping_ones_do_not() {
        let unix = rounds("unix", &[(1_000, 200), (1_000, 250), (1_000, 180)]);
        let tcp = rounds("tcp", &[(500, 50), (500, 70), (500, 40)]);
        assert_eq!(
            said(&[tcp.clone(), unix.clone()]),
            "the Unix socket failed 21% of requests (18%–25% over 3 rounds), tcp 11% \
             (8.0%–14%); more failed over unix than over tcp in every round"
        );
        let close = rounds("tcp", &[(1_000, 190), (1_000, 150), (1_000, 260)]);
        assert!(said(&[unix.clone(), close]).ends_with(
            "; whether more fail over unix or tcp is not settled: their rounds overlap"
        ),);
        let none = rounds("tcp", &[(500, 0), (500, 0), (500, 0)]);
        assert_eq!(
            said(&[unix, none.clone()]),
            "the Unix socket failed 21% of requests (18%–25% over 3 rounds), tcp none; \
             more failed over unix than over tcp in every round"
        );
        let nothing = rounds("unix", &[(500, 0), (500, 0), (500, 0)]);
        assert_eq!(
            said(&[nothing.clone(), tcp]),
            "the Unix socket failed none of the requests, tcp 11% (8.0%–14% over 3 \
             rounds); more failed over tcp than over unix in every round"
        );
        assert_eq!(
            said(&[nothing, none.clone()]),
            "no request failed over unix or tcp in 3 rounds"
        );
        let each = [Failures::of(&none, FAILED).unwrap()];
        assert_eq!(
            statement(&each, "request", "requests"),
            None,
            "one transport"
        );
    }
}
