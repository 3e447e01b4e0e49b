//! CPU per operation by layer: each counting trial's samples say how a side's CPU
//! time divides between layers, the measured rounds say how much CPU time there
//! is, and the trials' spread says how sure each layer's figure is.

use super::{KernelAccount, LayerTime, Why};
use crate::cpu::Cost;
use crate::stats::Mean;

impl Why {
    /// Fills each side's `layers` from its `layer_samples`: in each counting trial,
    /// a layer's share of that trial's samples times the side's CPU time per
    /// operation in `measured` (the median of the measured rounds), or in
    /// `counted` (the counting trials, which pay for counting) when the rounds have
    /// none; then the mean over the trials and its interval.
    pub fn scale_layers(&mut self, measured: Option<&Cost>, counted: &Cost) {
        let client = measured.map_or(counted.client.cpu_ns, |m| m.client.cpu_ns);
        scale(&mut self.client, client);
        if let Some(server) = &mut self.server {
            let cpu = measured
                .and_then(|m| m.server)
                .or(counted.server)
                .map(|s| s.cpu_ns);
            match cpu {
                Some(cpu) => scale(server, cpu),
                None => server.layers.clear(),
            }
        }
    }
}

/// `account.layers`: for each layer, the mean over the trials that have samples
/// of its share × `cpu_ns`, with the 95% interval of that mean (its low end at
/// least zero, a CPU time never being below).
fn scale(account: &mut KernelAccount, cpu_ns: f64) {
    account.layers = Default::default();
    if !cpu_ns.is_finite() || cpu_ns <= 0.0 {
        return;
    }
    let trials = account.sampled_trials();
    let totals: Vec<u64> = (0..trials)
        .map(|k| {
            let at = |n: &Vec<u64>| n.get(k).copied().unwrap_or(0);
            account.layer_samples.values().map(at).sum()
        })
        .collect();
    account.layers = account
        .layer_samples
        .iter()
        .map(|(layer, counts)| {
            let per_trial: Vec<f64> = totals
                .iter()
                .enumerate()
                .filter(|(_, &total)| total > 0)
                .map(|(k, &total)| {
                    cpu_ns * counts.get(k).copied().unwrap_or(0) as f64 / total as f64
                })
                .collect();
            (layer.clone(), time(&per_trial))
        })
        .filter(|(_, t)| t.is_some())
        .map(|(layer, t)| (layer, t.unwrap_or(LayerTime::plain(0.0))))
        .collect();
}

/// The mean of one layer's per-trial CPU times with its interval; a plain
/// figure from one trial; none from none.
fn time(per_trial: &[f64]) -> Option<LayerTime> {
    match per_trial {
        [] => None,
        [one] => Some(LayerTime::plain(*one)),
        all => {
            let m = Mean::of(all)?;
            Some(LayerTime {
                ns: m.estimate,
                low: Some(m.low.max(0.0)),
                high: Some(m.high),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::why::Layer;
    use crate::cpu::Counts;

    fn cost(client: f64, server: Option<f64>) -> Cost {
        let counts = |cpu_ns| Counts {
            cpu_ns,
            ..Counts::default()
        };
        Cost {
            server: server.map(counts),
            ..Cost::of_client(client)
        }
    }

    fn sampled(pairs: &[(&str, &[u64])]) -> KernelAccount {
        KernelAccount {
            layer_samples: pairs
                .iter()
                .map(|(l, n)| (l.to_string(), n.to_vec()))
                .collect(),
            ..KernelAccount::default()
        }
    }

    #[test]
    fn layers_divide_the_measured_cpu_time_in_the_samples_proportion() {
        let mut why = Why {
            client: sampled(&[("tcp", &[30]), ("user", &[10])]),
            server: Some(sampled(&[("unix", &[5]), ("copy", &[15])])),
            ..Why::default()
        };
        why.scale_layers(
            Some(&cost(8000.0, Some(4000.0))),
            &cost(9000.0, Some(5000.0)),
        );
        assert_eq!(why.client.layer(Layer::Tcp), Some(6000.0));
        assert_eq!(why.client.layer(Layer::User), Some(2000.0));
        let server = why.server.as_ref().unwrap();
        assert_eq!(server.layer(Layer::Unix), Some(1000.0));
        assert_eq!(server.layer(Layer::Copy), Some(3000.0));
        // One trial: no interval.
        assert_eq!(why.client.layers["tcp"].low, None);
    }

    #[test]
    fn without_measured_rounds_the_counting_trial_sets_the_scale_and_no_samples_no_layers() {
        let mut why = Why {
            client: sampled(&[("tcp", &[1])]),
            server: Some(sampled(&[])),
            ..Why::default()
        };
        why.scale_layers(None, &cost(500.0, Some(100.0)));
        assert_eq!(why.client.layer(Layer::Tcp), Some(500.0));
        assert!(why.server.unwrap().layers.is_empty());
    }

    // The per-trial times of tcp are 1000 × (0.6, 0.5, 0.7, 0.4): their mean, and
    //   scipy.stats.t.interval(0.95, 3, loc=550, scale=stats.sem([600, 500, 700, 400]))
    const TCP_OF_FOUR: (f64, f64) = (344.573974324, 755.426025676);

    #[test]
    fn several_trials_give_each_layer_the_interval_of_its_mean() {
        let mut why = Why {
            client: sampled(&[("tcp", &[60, 50, 70, 40]), ("user", &[40, 50, 30, 60])]),
            ..Why::default()
        };
        why.scale_layers(None, &cost(1000.0, None));
        let tcp = why.client.layers["tcp"];
        assert!((tcp.ns - 550.0).abs() < 1e-9, "{tcp:?}");
        assert!((tcp.low.unwrap() - TCP_OF_FOUR.0).abs() < 1e-4, "{tcp:?}");
        assert!((tcp.high.unwrap() - TCP_OF_FOUR.1).abs() < 1e-4, "{tcp:?}");
        // The trials' own figures, back from the account.
        let trials = why.client.trial_layers();
        assert_eq!(trials.len(), 4);
        assert!((trials[2][&Layer::Tcp] - 700.0).abs() < 1e-9);
        // A layer's interval never goes below zero.
        let mut rare = Why {
            client: sampled(&[("ip", &[0, 0, 9]), ("user", &[100, 100, 91])]),
            ..Why::default()
        };
        rare.scale_layers(None, &cost(1000.0, None));
        assert_eq!(rare.client.layers["ip"].low, Some(0.0));
    }
}

#[cfg(test)]
mod schema {
    use crate::cpu::why::{Event, Layer};

    /// The names a `$defs/account` property of the result schema allows.
    fn allowed(property: &str) -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        schema["$defs"]["account"]["properties"][property]["propertyNames"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    /// Errors of `instance` against the schema's `$defs/why`.
    fn why_errors(instance: &serde_json::Value) -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.schema.json");
        let full: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let schema = serde_json::json!({ "$defs": full["$defs"], "$ref": "#/$defs/why" });
        let validator = jsonschema::validator_for(&schema).unwrap();
        validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn the_schema_holds_what_is_written_and_what_was_written_before() {
        use crate::cpu::why::{Clock, KernelAccount, LayerTime, Why};
        let mut why = Why {
            client: KernelAccount {
                layer_samples: [("tcp".to_string(), vec![30, 0, 12])].into(),
                layers: [(
                    "tcp".to_string(),
                    LayerTime {
                        ns: 600.0,
                        low: Some(0.0),
                        high: Some(900.0),
                    },
                )]
                .into(),
                ..KernelAccount::default()
            },
            clock: Some(Clock::CpuClock),
            ..Why::default()
        };
        let written = serde_json::to_value(&why).unwrap();
        assert_eq!(why_errors(&written), Vec::<String>::new());
        let before = serde_json::json!({
            "client": {"layer_samples": {"tcp": 30}, "layers": {"tcp": 600.0}},
            "tracepoints": []
        });
        assert_eq!(why_errors(&before), Vec::<String>::new());
        why.client.layers.get_mut("tcp").unwrap().low = Some(-1.0);
        let negative = serde_json::to_value(&why).unwrap();
        assert!(!why_errors(&negative).is_empty());
        let unknown = serde_json::json!({"client": {}, "clock": "ticks"});
        assert!(!why_errors(&unknown).is_empty());
    }

    #[test]
    fn the_schema_names_every_event_and_layer() {
        assert_eq!(allowed("events"), Event::ALL.map(|e| e.name().to_string()));
        for property in ["layers", "layer_samples"] {
            assert_eq!(allowed(property), Layer::ALL.map(|l| l.name().to_string()));
        }
    }
}
