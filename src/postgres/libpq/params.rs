//! Connection parameters: keyword/value C strings prepared once for libpq, and
//! libpq's own parsing of a connection string or URI.

use super::{one_line, PgError};
use pq_sys as pq;
use std::ffi::{c_char, CStr, CString};

/// Connection parameters as keyword/value C strings, ready to hand to libpq.
pub struct ConnParams {
    pairs: Vec<(CString, CString)>,
    pub(super) keywords: Vec<*const c_char>,
    pub(super) values: Vec<*const c_char>,
}

// SAFETY: the raw pointers point into C strings this value owns; they are never changed
// after construction and stay valid as long as the value, on any thread.
unsafe impl Send for ConnParams {}
// SAFETY: as for Send: the value is never mutated through a shared reference, and libpq
// only reads the strings.
unsafe impl Sync for ConnParams {}

impl Clone for ConnParams {
    fn clone(&self) -> ConnParams {
        self.with(&[])
    }
}

impl ConnParams {
    /// From keyword/value pairs; a later pair with the same keyword wins.
    pub fn new<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> ConnParams {
        let mut kept: Vec<(CString, CString)> = Vec::new();
        for (k, v) in pairs {
            let k = CString::new(k.into()).unwrap_or_default();
            let v = CString::new(v.into()).unwrap_or_default();
            kept.retain(|(old, _)| *old != k);
            kept.push((k, v));
        }
        let mut keywords: Vec<*const c_char> = kept.iter().map(|(k, _)| k.as_ptr()).collect();
        let mut values: Vec<*const c_char> = kept.iter().map(|(_, v)| v.as_ptr()).collect();
        keywords.push(std::ptr::null());
        values.push(std::ptr::null());
        ConnParams {
            pairs: kept,
            keywords,
            values,
        }
    }

    /// The same parameters with some keywords set (replacing any earlier value).
    pub fn with(&self, extra: &[(&str, &str)]) -> ConnParams {
        let old = self.pairs.iter().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        });
        let new = extra.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        ConnParams::new(old.chain(new))
    }

    /// The value set for `key`, if any.
    pub fn get(&self, key: &str) -> Option<String> {
        self.pairs
            .iter()
            .find(|(k, _)| k.as_bytes() == key.as_bytes())
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    /// Whether a server answers and accepts connections now (`PQpingParams`).
    pub fn ping(&self) -> bool {
        // SAFETY: both arrays hold pointers to NUL-terminated strings this value owns and
        // end with a null pointer, as PQpingParams requires.
        let answer = unsafe { pq::PQpingParams(self.keywords.as_ptr(), self.values.as_ptr(), 0) };
        answer == pq::PGPing::PQPING_OK
    }
}

/// Parses a connection string or URI exactly as psql would, into keyword/value
/// pairs (only those set).
pub fn parse_conninfo(text: &str) -> Result<Vec<(String, String)>, PgError> {
    let c_text = CString::new(text).map_err(|_| PgError::Conninfo("contains a NUL byte".into()))?;
    let mut error: *mut c_char = std::ptr::null_mut();
    // SAFETY: `c_text` is NUL-terminated and outlives the call; `error` is a valid place
    // for libpq to store a message pointer.
    let options = unsafe { pq::PQconninfoParse(c_text.as_ptr(), &mut error) };
    if options.is_null() {
        let message = one_line(error);
        if !error.is_null() {
            // SAFETY: `error` is a non-null message libpq allocated for this call and
            // nothing uses it after.
            unsafe { pq::PQfreemem(error.cast()) };
        }
        return Err(PgError::Conninfo(message));
    }
    let mut pairs = Vec::new();
    let mut option = options;
    // SAFETY: `options` is a non-null array from PQconninfoParse, ended by an entry whose
    // keyword is null; the strings are copied out before the array is freed once, after the
    // loop.
    unsafe {
        while !(*option).keyword.is_null() {
            if !(*option).val.is_null() {
                let key = CStr::from_ptr((*option).keyword)
                    .to_string_lossy()
                    .into_owned();
                let value = CStr::from_ptr((*option).val).to_string_lossy().into_owned();
                pairs.push((key, value));
            }
            option = option.add(1);
        }
        pq::PQconninfoFree(options);
    }
    Ok(pairs)
}

/// True when libpq knows `word` as a connection keyword (`host`, `sslmode`, …):
/// asked of libpq's parser, which refuses an unknown keyword.
pub fn is_keyword(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && parse_conninfo(&format!("{word}=''")).is_ok()
}

/// The keyword/value pairs libpq would take from environment variables, with the
/// variables looked up by `lookup` instead of in the process environment: each
/// keyword that has a variable (`PQconndefaults` names it) and a non-empty value.
pub fn environment_defaults(lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    // SAFETY: PQconndefaults takes no arguments; its result is checked for null.
    let options = unsafe { pq::PQconndefaults() };
    if options.is_null() {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    let mut option = options;
    // SAFETY: `options` is a non-null array from PQconndefaults, ended by an entry whose
    // keyword is null; the strings are copied out before the array is freed once, after
    // the loop.
    unsafe {
        while !(*option).keyword.is_null() {
            if !(*option).envvar.is_null() {
                let envvar = CStr::from_ptr((*option).envvar).to_string_lossy();
                if let Some(value) = lookup(&envvar).filter(|v| !v.is_empty()) {
                    let key = CStr::from_ptr((*option).keyword).to_string_lossy();
                    pairs.push((key.into_owned(), value));
                }
            }
            option = option.add(1);
        }
        pq::PQconninfoFree(options);
    }
    pairs
}
