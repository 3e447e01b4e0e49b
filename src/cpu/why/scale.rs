//! CPU per operation by layer: the samples say how a side's CPU time divides
//! between layers, the measured rounds say how much CPU time there is.

use super::{Account, Why};
use crate::cpu::Cost;

impl Why {
    /// Fills each side's `layers` from its `layer_samples`: a layer's share of the
    /// samples times that side's CPU time per operation in `measured` (the median of
    /// the measured rounds), or in `counted` (the counting trial, which pays for
    /// counting) when the rounds have none.
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

/// `account.layers` = each layer's share of its samples × `cpu_ns`.
fn scale(account: &mut Account, cpu_ns: f64) {
    let total: u64 = account.layer_samples.values().sum();
    account.layers = if total == 0 || !cpu_ns.is_finite() || cpu_ns <= 0.0 {
        Default::default()
    } else {
        account
            .layer_samples
            .iter()
            .map(|(layer, &n)| (layer.clone(), cpu_ns * n as f64 / total as f64))
            .collect()
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::Counts;

    fn cost(client: f64, server: Option<f64>) -> Cost {
        let counts = |cpu_ns| Counts {
            cpu_ns,
            ..Counts::default()
        };
        Cost {
            source: "perf_event".into(),
            client: counts(client),
            server: server.map(counts),
            client_cpu: None,
            server_cpus: Vec::new(),
            why: None,
        }
    }

    fn sampled(pairs: &[(&str, u64)]) -> Account {
        Account {
            layer_samples: pairs.iter().map(|(l, n)| (l.to_string(), *n)).collect(),
            ..Account::default()
        }
    }

    #[test]
    fn layers_divide_the_measured_cpu_time_in_the_samples_proportion() {
        let mut why = Why {
            client: sampled(&[("tcp", 30), ("user", 10)]),
            server: Some(sampled(&[("unix", 5), ("copy", 15)])),
            tracepoints: Vec::new(),
        };
        why.scale_layers(
            Some(&cost(8000.0, Some(4000.0))),
            &cost(9000.0, Some(5000.0)),
        );
        assert_eq!(why.client.layers["tcp"], 6000.0);
        assert_eq!(why.client.layers["user"], 2000.0);
        let server = why.server.as_ref().unwrap();
        assert_eq!(server.layers["unix"], 1000.0);
        assert_eq!(server.layers["copy"], 3000.0);
    }

    #[test]
    fn without_measured_rounds_the_counting_trial_sets_the_scale_and_no_samples_no_layers() {
        let mut why = Why {
            client: sampled(&[("tcp", 1)]),
            server: Some(sampled(&[])),
            tracepoints: Vec::new(),
        };
        why.scale_layers(None, &cost(500.0, Some(100.0)));
        assert_eq!(why.client.layers["tcp"], 500.0);
        assert!(why.server.unwrap().layers.is_empty());
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

    #[test]
    fn the_schema_names_every_event_and_layer() {
        assert_eq!(allowed("events"), Event::ALL.map(|e| e.name().to_string()));
        for property in ["layers", "layer_samples"] {
            assert_eq!(allowed(property), Layer::ALL.map(|l| l.name().to_string()));
        }
    }
}
