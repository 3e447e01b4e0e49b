//! The accounts of several counting trials of one case and target, made one:
//! events per operation averaged (exact counts, the same kernel work each time),
//! samples kept trial by trial so that each layer's figure can carry its spread.

use super::{KernelAccount, Why};
use std::collections::BTreeMap;

impl Why {
    /// The account of `trials` (in the order they ran); none when there are none.
    /// The server's is kept when every trial has one.
    pub fn of_trials(trials: &[Why]) -> Option<Why> {
        let first = trials.first()?;
        let clients: Vec<&KernelAccount> = trials.iter().map(|w| &w.client).collect();
        let servers: Option<Vec<&KernelAccount>> =
            trials.iter().map(|w| w.server.as_ref()).collect();
        Some(Why {
            client: merged(&clients),
            server: servers.map(|s| merged(&s)),
            tracepoints: first.tracepoints.clone(),
            clock: first.clock,
        })
    }
}

/// One side over the trials: each event's mean over the trials that counted it,
/// each layer's samples per trial (zero where a trial had none in it; a trial with
/// no samples at all is left out), samples left out and lost summed.
fn merged(all: &[&KernelAccount]) -> KernelAccount {
    let mut events: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for a in all {
        for (event, n) in &a.events {
            events.entry(event.clone()).or_default().push(*n);
        }
    }
    let sampled: Vec<&&KernelAccount> =
        all.iter().filter(|a| !a.layer_samples.is_empty()).collect();
    let mut layer_samples: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut k = 0;
    for a in &sampled {
        let trials = a.sampled_trials();
        for (layer, counts) in &a.layer_samples {
            let row = layer_samples.entry(layer.clone()).or_default();
            row.resize(k, 0);
            row.extend(counts);
        }
        k += trials;
    }
    for row in layer_samples.values_mut() {
        row.resize(k, 0);
    }
    KernelAccount {
        events: events
            .into_iter()
            .map(|(e, v)| (e, v.iter().sum::<f64>() / v.len() as f64))
            .collect(),
        layer_samples,
        layers: BTreeMap::new(),
        samples_left_out: all.iter().map(|a| a.samples_left_out).sum(),
        samples_lost: all.iter().map(|a| a.samples_lost).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(syscalls: f64, samples: &[(&str, u64)]) -> Why {
        Why {
            client: KernelAccount {
                events: BTreeMap::from([("syscalls".to_string(), syscalls)]),
                layer_samples: samples
                    .iter()
                    .map(|(l, n)| (l.to_string(), vec![*n]))
                    .collect(),
                samples_lost: 1,
                ..KernelAccount::default()
            },
            ..Why::default()
        }
    }

    #[test]
    fn trials_keep_their_samples_apart_and_average_their_events() {
        let why = Why::of_trials(&[
            one(4.0, &[("tcp", 30), ("user", 10)]),
            one(4.2, &[("user", 12)]),
            one(4.4, &[]),
            one(3.8, &[("tcp", 5), ("ip", 2)]),
        ])
        .unwrap();
        let c = &why.client;
        assert!((c.events["syscalls"] - 4.1).abs() < 1e-12);
        assert_eq!(c.layer_samples["tcp"], [30, 0, 5]);
        assert_eq!(c.layer_samples["user"], [10, 12, 0]);
        assert_eq!(c.layer_samples["ip"], [0, 0, 2]);
        assert_eq!(c.samples_lost, 4);
        assert_eq!(why.server, None);
        assert_eq!(Why::of_trials(&[]), None);
    }
}
