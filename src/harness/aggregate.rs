//! Turns the trials of one experiment into result records: medians, spread, noise
//! flag, and the counting trials' counts; `results::paired::pair` then adds the
//! intervals and the comparison with the reference transport.

use crate::results::metric::Metric;
use crate::results::{Headline, Metrics, Params, ResultRecord, Trial};
use crate::stats::Spread;
use crate::transport::TlsInfo;

/// The record for one (experiment, parameters, transport) over its trials.
pub fn record(
    experiment: &str,
    headline: &Metric,
    params: &Params,
    transport: &str,
    trials: Vec<Trial>,
    tls: Option<TlsInfo>,
) -> ResultRecord {
    let (counting, trials): (Vec<Trial>, Vec<Trial>) = trials.into_iter().partition(|t| t.counting);
    let per_trial: Vec<Metrics> = trials.iter().map(|t| t.metrics.clone()).collect();
    let values: Vec<f64> = per_trial.iter().filter_map(|m| headline.read(m)).collect();
    let spread = if values.is_empty() {
        Spread {
            median: 0.0,
            min: 0.0,
            max: 0.0,
        }
    } else {
        Spread::of(&values)
    };
    let metrics = Metrics::median_of(&per_trial);
    let counters = counted(&counting, metrics.cpu.as_ref());
    ResultRecord {
        experiment: experiment.to_string(),
        transport: transport.to_string(),
        params: params.clone(),
        metrics,
        headline: Headline {
            metric: headline.name.to_string(),
            higher_is_better: headline.higher_is_better(),
            noisy: spread.is_noisy(),
            spread,
            // Filled in with the comparisons, by `paired::pair`.
            interval: None,
            vs_reference: None,
            settled: false,
        },
        counters,
        tls,
        server: None,
        trials,
    }
}

/// What the counting trials counted: each figure's median over them (the first
/// one's CPUs), and their kernel accounts made one, its layers scaled to the
/// `measured` CPU time.
fn counted(counting: &[Trial], measured: Option<&crate::cpu::Cost>) -> Option<crate::cpu::Cost> {
    let first = counting.iter().find_map(|t| t.metrics.cpu.as_ref())?;
    let all: Vec<Metrics> = counting.iter().map(|t| t.metrics.clone()).collect();
    let mut cost = Metrics::median_of(&all).cpu?;
    cost.client_cpu = first.client_cpu;
    cost.server_cpus = first.server_cpus.clone();
    let whys: Vec<crate::cpu::why::Why> = counting
        .iter()
        .filter_map(|t| t.metrics.cpu.as_ref()?.why.clone())
        .collect();
    cost.why = crate::cpu::why::Why::of_trials(&whys).map(|mut why| {
        why.scale_layers(measured, &cost);
        why
    });
    Some(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::metric::{Better, Unit};

    const CONN_PER_S: Metric = Metric::new("conn_per_s", Unit::Rate, Better::Higher);
    const RATE: crate::results::Key<f64> = crate::results::Key::new("conn_per_s");

    fn trial(conn_per_s: f64) -> Trial {
        Trial {
            metrics: Metrics::default().with(RATE, conn_per_s),
            ..Trial::default()
        }
    }

    /// Records as `record` and `pair` make them from two or three rounds spread up
    /// to a hundredfold, of every magnitude a figure has (times from 100 ns to 10 s,
    /// rates up to 10 GB/s), in a result file: the loader takes every one, so
    /// `report` never calls a file sockbench just wrote damaged or edited.
    #[test]
    fn the_loader_takes_every_record_made_from_few_spread_rounds() {
        use crate::results::metric::Declared;
        use crate::results::Key;
        const HEADLINES: [Metric; 2] = [
            Metric::new("bytes_per_s", Unit::ByteRate, Better::Higher),
            Metric::new("per_query_ns", Unit::Time, Better::Lower),
        ];
        // A fixed pseudo-random sequence (a 64-bit LCG), so a failure repeats.
        let mut state: u64 = 0x5eed;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut written = Vec::new();
        for case in 0..2000 {
            let headline = HEADLINES[case % 2];
            let key = Key::<f64>::new(headline.name);
            // The magnitude, then each round up to 100 times above or below it.
            let base = 10f64.powf(2.0 + 8.0 * uniform());
            let mut records: Vec<ResultRecord> = ["unix", "tcp"]
                .iter()
                .map(|transport| {
                    let trials = (0..2 + case % 2)
                        .map(|_| Trial {
                            metrics: Metrics::default()
                                .with(key, base * 100f64.powf(2.0 * uniform() - 1.0)),
                            ..Trial::default()
                        })
                        .collect();
                    // One record per case and transport, as a run writes them.
                    let params = Params::default().with(Key::<u64>::new("size"), case as u64);
                    record(
                        "sockets.stream",
                        &headline,
                        &params,
                        transport,
                        trials,
                        None,
                    )
                })
                .collect();
            crate::results::paired::pair(&mut records, &headline);
            assert!(records[1].headline.vs_reference.is_some());
            written.extend(records);
        }
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
        let mut file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        file["schema_version"] = crate::results::SCHEMA_VERSION.into();
        file["results"] = serde_json::to_value(&written).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("written.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let loaded = crate::results::load(&path, |_| {
            Some(Declared {
                headline: HEADLINES[0],
                figures: &HEADLINES,
                budgets: &[],
            })
        });
        if let Err(e) = loaded {
            panic!("{e}");
        }
    }

    #[test]
    fn noisy_trials_are_flagged() {
        let params = Params::default();
        let steady = [trial(100.0), trial(101.0), trial(99.0)].to_vec();
        let noisy = [trial(100.0), trial(150.0), trial(80.0)].to_vec();
        let r = record(
            "sockets.connect",
            &CONN_PER_S,
            &params,
            "unix",
            steady,
            None,
        );
        assert!(!r.headline.noisy);
        let r = record("sockets.connect", &CONN_PER_S, &params, "unix", noisy, None);
        assert!(r.headline.noisy);
        assert_eq!(r.headline.spread.median, 100.0);
    }
}
