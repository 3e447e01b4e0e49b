//! The forms a kernel account takes in result files: what this sockbench writes,
//! and what files from before held (one counting trial's samples as a plain
//! count, a layer's CPU time as a plain number), read alike. (The clock, a
//! `named!` enum, is written by its name.)

use super::LayerTime;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// A layer's samples: one count per counting trial, or one plain count.
#[derive(Deserialize)]
#[serde(untagged)]
enum SampleCounts {
    PerTrial(Vec<u64>),
    One(u64),
}

/// `layer_samples` in either form.
pub fn per_trial<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Vec<u64>>, D::Error> {
    let all = BTreeMap::<String, SampleCounts>::deserialize(d)?;
    Ok(all
        .into_iter()
        .map(|(layer, counts)| {
            let counts = match counts {
                SampleCounts::PerTrial(v) => v,
                SampleCounts::One(n) => vec![n],
            };
            (layer, counts)
        })
        .collect())
}

/// A layer's CPU time: with its interval, or a plain number.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum LayerTimeForm {
    Bounded {
        ns: f64,
        #[serde(default)]
        low: Option<f64>,
        #[serde(default)]
        high: Option<f64>,
    },
    Plain(f64),
}

impl From<LayerTimeForm> for LayerTime {
    fn from(form: LayerTimeForm) -> LayerTime {
        match form {
            LayerTimeForm::Bounded { ns, low, high } => LayerTime { ns, low, high },
            LayerTimeForm::Plain(ns) => LayerTime::plain(ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Clock, KernelAccount};
    use super::*;

    #[test]
    fn accounts_from_before_load_as_one_trial_without_intervals() {
        let old: KernelAccount = serde_json::from_str(
            r#"{"layer_samples": {"tcp": 30, "user": 10}, "layers": {"tcp": 600.0}}"#,
        )
        .unwrap();
        assert_eq!(old.layer_samples["tcp"], vec![30]);
        assert_eq!(old.layers["tcp"], LayerTime::plain(600.0));
        assert_eq!(old.sampled_trials(), 1);
    }

    #[test]
    fn accounts_read_back_what_is_written() {
        let a = KernelAccount {
            layer_samples: BTreeMap::from([("tcp".to_string(), vec![30, 0, 12])]),
            layers: BTreeMap::from([(
                "tcp".to_string(),
                LayerTime {
                    ns: 600.0,
                    low: Some(410.5),
                    high: Some(789.5),
                },
            )]),
            ..KernelAccount::default()
        };
        let text = serde_json::to_string(&a).unwrap();
        assert!(
            text.contains(r#""tcp":{"ns":600.0,"low":410.5,"high":789.5}"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<KernelAccount>(&text).unwrap(), a);
        let clock = serde_json::to_string(&Clock::CpuClock).unwrap();
        assert_eq!(clock, r#""cpu-clock""#);
        assert_eq!(
            serde_json::from_str::<Clock>(&clock).unwrap(),
            Clock::CpuClock
        );
        assert!(serde_json::from_str::<Clock>(r#""ticks""#).is_err());
    }
}
