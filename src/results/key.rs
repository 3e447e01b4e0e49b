//! A parameter's or a figure's name with the type of its value. Each family
//! declares its keys once (`pub const SIZE: Key<u64> = Key::new("size")`), beside
//! its experiments; [`super::Params`] and [`super::Metrics`] store values by them.

use std::marker::PhantomData;

/// A name in a record's `params` or `metrics`, and the type of the value there.
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
