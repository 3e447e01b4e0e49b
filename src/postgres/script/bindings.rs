//! A client's script variables and the buffers its commands are written into, sized
//! when the client is made so that a transaction allocates nothing: the text of a
//! command with its values (simple protocol), or each value as a text parameter
//! (extended and prepared).

use super::{Rng, Script, Set, Statement, CLIENT_ID};

/// A client's variables and the buffers its commands are written into, sized once.
#[derive(Debug, Clone)]
pub struct Bindings {
    pub values: Vec<i64>,
    /// The text of a command with its values, NUL-terminated (simple protocol).
    pub(super) text: Vec<u8>,
    /// Each parameter as text, NUL-terminated (extended and prepared protocols).
    params: Vec<[u8; 24]>,
}

impl Bindings {
    pub fn new(script: &Script, client_id: u32) -> Bindings {
        let mut values = script.initial.clone();
        values[CLIENT_ID] = i64::from(client_id);
        Bindings {
            values,
            text: Vec::with_capacity(script.longest_text()),
            params: vec![[0; 24]; script.most_vars()],
        }
    }

    /// Evaluates `sets` in order.
    pub fn run(&mut self, sets: &[Set], rng: &mut Rng) -> Result<(), String> {
        for s in sets {
            self.values[s.slot] = s
                .expr
                .eval(&self.values, rng)
                .map_err(|e| format!("\\set at line {}: {e}", s.line))?;
        }
        Ok(())
    }

    /// `command`'s text with the values written in; within the capacity reserved,
    /// so nothing is allocated.
    pub fn text(&mut self, command: &Statement) -> &std::ffi::CStr {
        self.text.clear();
        for (piece, &slot) in command.pieces.iter().zip(&command.vars) {
            self.text.extend_from_slice(piece);
            let mut digits = [0u8; 24];
            let n = write_int(&mut digits, self.values[slot]);
            self.text.extend_from_slice(&digits[..n]);
        }
        self.text
            .extend_from_slice(command.pieces.last().map_or(&[][..], Vec::as_slice));
        self.text.push(0);
        std::ffi::CStr::from_bytes_until_nul(&self.text).unwrap_or_default()
    }

    /// Writes `command`'s values as text parameters and their pointers into
    /// `pointers` (at least as long as the command's variables).
    pub fn params(&mut self, command: &Statement, pointers: &mut [*const std::ffi::c_char]) {
        for (i, &slot) in command.vars.iter().enumerate() {
            let n = write_int(&mut self.params[i], self.values[slot]);
            self.params[i][n] = 0;
            pointers[i] = self.params[i].as_ptr().cast();
        }
    }
}

/// Writes `v` in decimal at the start of `out`; returns the length.
fn write_int(out: &mut [u8; 24], v: i64) -> usize {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        n /= 10;
        len += 1;
        if n == 0 {
            break;
        }
    }
    let mut at = 0;
    if v < 0 {
        out[0] = b'-';
        at = 1;
    }
    for d in digits[..len].iter().rev() {
        out[at] = *d;
        at += 1;
    }
    at
}
