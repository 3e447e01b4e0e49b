//! What an experiment was asked to do, stored generically: a map of named values.
//! Each family declares its parameters as typed keys ([`Key`]) beside its
//! experiments, so nothing outside the family lists them; in the result file they
//! are one flat object (`{"size": 64, "clients": 10}`), as in every format before.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// One parameter's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Flag(bool),
    Number(u64),
    Numbers(Vec<u64>),
    Text(String),
}

/// The parameters of one case, by name. A flag that is off and a parameter that was
/// not given are both absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(BTreeMap<String, Value>);

/// A parameter's name and the type of its value, declared once by the family that
/// uses it (`pub const SIZE: Key<u64> = Key::new("size")`).
pub struct Key<T> {
    pub name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    pub const fn new(name: &'static str) -> Key<T> {
        Key {
            name,
            _type: PhantomData,
        }
    }
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Key<T> {}

impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The types a parameter can have, and how each is stored.
pub trait Kind: Sized {
    fn into_value(self) -> Option<Value>;
    fn from_value(value: &Value) -> Option<Self>;
}

impl Kind for u64 {
    fn into_value(self) -> Option<Value> {
        Some(Value::Number(self))
    }
    fn from_value(value: &Value) -> Option<u64> {
        match value {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
}

impl Kind for bool {
    /// Off is stored as absent, as formats before stored it.
    fn into_value(self) -> Option<Value> {
        self.then_some(Value::Flag(true))
    }
    fn from_value(value: &Value) -> Option<bool> {
        match value {
            Value::Flag(b) => Some(*b),
            _ => None,
        }
    }
}

impl Kind for String {
    fn into_value(self) -> Option<Value> {
        Some(Value::Text(self))
    }
    fn from_value(value: &Value) -> Option<String> {
        match value {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl Kind for Vec<u64> {
    fn into_value(self) -> Option<Value> {
        Some(Value::Numbers(self))
    }
    fn from_value(value: &Value) -> Option<Vec<u64>> {
        match value {
            Value::Numbers(n) => Some(n.clone()),
            _ => None,
        }
    }
}

/// Where client and server were placed, when `--placement` chose: `same`, `split`,
/// `free`. The harness sets it for every family.
pub const PLACEMENT: Key<String> = Key::new("placement");

impl Params {
    /// The value of `key`, if given (a flag that is off reads as `None`).
    pub fn get<T: Kind>(&self, key: Key<T>) -> Option<T> {
        self.0.get(key.name).and_then(T::from_value)
    }

    /// Sets `key` (`None`, or a flag that is off, removes it).
    pub fn set<T: Kind>(&mut self, key: Key<T>, value: impl Into<Option<T>>) {
        match value.into().and_then(T::into_value) {
            Some(v) => self.0.insert(key.name.to_string(), v),
            None => self.0.remove(key.name),
        };
    }

    /// These parameters with `key` set.
    pub fn with<T: Kind>(mut self, key: Key<T>, value: impl Into<Option<T>>) -> Params {
        self.set(key, value);
        self
    }

    /// The value named `name`, whatever its type: for the code that treats every
    /// family's parameters alike (labels, exports, comparison keys).
    pub fn value(&self, name: &str) -> Option<&Value> {
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
            .with(PLACEMENT, "same".to_string())
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
