//! What an experiment was asked to do, stored generically: a map of named values.
//! Each family declares its parameters as typed keys ([`Key`]) beside its
//! experiments, so nothing outside the family lists them; in the result file they
//! are one flat object (`{"size": 64, "clients": 10}`), as in every format before.

use super::Key;
use crate::cpu::affinity::Placement;
use crate::names::Named;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One parameter's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Param {
    Flag(bool),
    Number(u64),
    Numbers(Vec<u64>),
    Text(String),
}

/// The parameters of one case, by name. A flag that is off and a parameter that was
/// not given are both absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(BTreeMap<String, Param>);

/// The types a parameter can have, and how each is stored.
pub trait AsParam: Sized {
    fn into_value(self) -> Option<Param>;
    fn from_value(value: &Param) -> Option<Self>;
}

impl AsParam for u64 {
    fn into_value(self) -> Option<Param> {
        Some(Param::Number(self))
    }
    fn from_value(value: &Param) -> Option<u64> {
        match value {
            Param::Number(n) => Some(*n),
            _ => None,
        }
    }
}

impl AsParam for bool {
    /// Off is stored as absent, as formats before stored it.
    fn into_value(self) -> Option<Param> {
        self.then_some(Param::Flag(true))
    }
    fn from_value(value: &Param) -> Option<bool> {
        match value {
            Param::Flag(b) => Some(*b),
            _ => None,
        }
    }
}

impl AsParam for String {
    fn into_value(self) -> Option<Param> {
        Some(Param::Text(self))
    }
    fn from_value(value: &Param) -> Option<String> {
        match value {
            Param::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl AsParam for Vec<u64> {
    fn into_value(self) -> Option<Param> {
        Some(Param::Numbers(self))
    }
    fn from_value(value: &Param) -> Option<Vec<u64>> {
        match value {
            Param::Numbers(n) => Some(n.clone()),
            _ => None,
        }
    }
}

/// A `named!` enum is stored by its name; a name this sockbench does not know
/// reads as absent.
impl<T: Named + std::fmt::Display> AsParam for T {
    fn into_value(self) -> Option<Param> {
        Some(Param::Text(self.to_string()))
    }
    fn from_value(value: &Param) -> Option<T> {
        match value {
            Param::Text(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// Where client and server were placed, when `--placement` chose: `same`, `split`,
/// `free`. The harness sets it for every family.
pub const PLACEMENT: Key<Placement> = Key::new("placement");

impl Params {
    /// The value of `key`, if given (a flag that is off reads as `None`).
    pub fn get<T: AsParam>(&self, key: Key<T>) -> Option<T> {
        self.0.get(key.name).and_then(T::from_value)
    }

    /// Sets `key` (`None`, or a flag that is off, removes it).
    pub fn set<T: AsParam>(&mut self, key: Key<T>, value: impl Into<Option<T>>) {
        match value.into().and_then(T::into_value) {
            Some(v) => self.0.insert(key.name.to_string(), v),
            None => self.0.remove(key.name),
        };
    }

    /// These parameters with `key` set.
    pub fn with<T: AsParam>(mut self, key: Key<T>, value: impl Into<Option<T>>) -> Params {
        self.set(key, value);
        self
    }

    /// The value named `name`, whatever its type: for the code that treats every
    /// family's parameters alike (labels, exports, comparison keys).
    pub fn value(&self, name: &str) -> Option<&Param> {
        self.0.get(name)
    }

    /// These parameters without the ones named in `names`.
    pub fn without(&self, names: &[&str]) -> Params {
        Params(
            self.0
                .iter()
                .filter(|(k, _)| !names.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Key<u64> = Key::new("size");
    const PER_TX: Key<bool> = Key::new("connect_per_transaction");
    const COUNTS: Key<Vec<u64>> = Key::new("counts");

    #[test]
    fn typed_keys_read_what_was_set_and_a_flag_off_is_absent() {
        let p = Params::default()
            .with(SIZE, 64)
            .with(PER_TX, false)
            .with(PLACEMENT, Placement::Same)
            .with(COUNTS, vec![1, 2]);
        assert_eq!(p.get(SIZE), Some(64));
        assert_eq!(p.get(PER_TX), None, "off is absent");
        assert_eq!(p.get(COUNTS), Some(vec![1, 2]));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"counts":[1,2],"placement":"same","size":64}"#);
        let back: Params = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        let on: Params = serde_json::from_str(r#"{"connect_per_transaction":true}"#).unwrap();
        assert_eq!(on.get(PER_TX), Some(true));
        assert_eq!(
            p.without(&["counts", "placement"]),
            Params::default().with(SIZE, 64)
        );
    }
}
