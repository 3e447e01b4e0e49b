//! The transaction the concurrent clients run, in pgbench's script format: SQL
//! commands, each ending with `;`, sent one after the other, and pgbench's
//! `\set name expression` (integer arithmetic and `random(a, b)`, see `expr.rs`)
//! whose values replace `:name` in the SQL. As pgbench does, a `:name` is sent as text
//! in the simple protocol and as a parameter (`$1`, …) in the extended and prepared
//! ones. Its other meta-commands (`\sleep`, `\if`, `\gset`, `\shell`, …) are refused
//! with a line naming them rather than sent to the server.
//!
//! Variables `scale` (1 unless `--define scale=N`, as pgbench with `-f`) and
//! `client_id` (the client's number from 0) are predefined; `--define NAME=VALUE`
//! sets others. Each variable is a slot in a client's array of values, and each SQL
//! command keeps its text in pieces around its variables, so a client fills
//! preallocated buffers per transaction and allocates nothing.

mod bindings;
mod expr;
mod rng;

use crate::error::usage;
use anyhow::Result;
pub use bindings::Bindings;
pub use expr::Expr;
pub use rng::Rng;
use std::ffi::CString;
use std::path::Path;

/// Far larger than any transaction script a benchmark runs.
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// The default transaction, the `select1.sql` of pgbench comparisons.
pub const DEFAULT: &str = "SELECT 1";

/// The predefined variables, by slot, with their values before `--define`.
const PREDEFINED: [(&str, i64); 2] = [("scale", 1), ("client_id", 0)];
/// The slot of `client_id`, which each client sets to its number.
pub const CLIENT_ID: usize = 1;

/// A `\set`: the slot it sets and the expression, with its line for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    pub slot: usize,
    pub expr: Expr,
    pub line: usize,
}

/// One SQL command and the `\set`s evaluated before it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sets: Vec<Set>,
    /// The text as written: sent as it is when it has no variables.
    pub text: CString,
    /// The text with each variable as `$1`, `$2`, … for the extended protocol.
    pub numbered: CString,
    /// The text around the variables (one more piece than variables).
    pub pieces: Vec<Vec<u8>>,
    /// The slot of each variable, in order of appearance.
    pub vars: Vec<usize>,
}

/// A parsed script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Variable names by slot.
    pub names: Vec<String>,
    /// Each slot's value before the first `\set` (0 until set).
    pub initial: Vec<i64>,
    pub commands: Vec<Statement>,
    /// `\set`s after the last command, evaluated when a transaction ends.
    pub tail: Vec<Set>,
}

impl Script {
    /// The script of plain `SELECT 1`.
    pub fn default_select() -> Script {
        parse(DEFAULT, &[]).expect("the default script parses")
    }

    /// True when it is the default transaction (which creates nothing on the server).
    pub fn is_default(&self) -> bool {
        *self == Script::default_select()
    }

    /// The most bytes a command's text takes once its variables are written as
    /// numbers (20 digits and a sign at most), with its NUL.
    pub fn longest_text(&self) -> usize {
        self.commands
            .iter()
            .map(|c| c.pieces.iter().map(Vec::len).sum::<usize>() + 21 * c.vars.len() + 1)
            .max()
            .unwrap_or(1)
    }

    /// The most variables one command uses.
    pub fn most_vars(&self) -> usize {
        self.commands
            .iter()
            .map(|c| c.vars.len())
            .max()
            .unwrap_or(0)
    }
}

/// The script of a file, with `--define`d variables.
pub fn load(path: &Path, defines: &[(String, i64)]) -> Result<Script> {
    let text = crate::input::read_text(path, MAX_SCRIPT_BYTES).map_err(|e| {
        usage(format!(
            "--script {}: {e}; give a readable file of SQL commands",
            path.display()
        ))
    })?;
    parse(&text, defines).map_err(|e| usage(format!("--script {}: {e}", path.display())))
}

/// Parses `NAME=VALUE` of `--define` (pgbench's `-D`), integers only.
pub fn define(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("--define '{text}' needs NAME=VALUE, e.g. scale=10"))?;
    if !is_name(name) {
        return Err(format!(
            "--define '{text}': a name is letters, digits and '_'"
        ));
    }
    let value = value.trim().parse().map_err(|_| {
        format!("--define '{text}': only integer values are supported, e.g. {name}=10")
    })?;
    Ok((name.to_string(), value))
}

/// A meta-command after SQL on its line, such as `\\gset`.
fn is_meta(word: &str) -> bool {
    word.strip_prefix('\\')
        .is_some_and(|w| !w.is_empty() && w.bytes().all(|c| c.is_ascii_alphabetic()))
}

fn is_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Splits script text into commands: lines are joined until one ends with `;`;
/// blank lines and `--` comment lines are skipped; `\set` lines are parsed.
pub fn parse(text: &str, defines: &[(String, i64)]) -> Result<Script, String> {
    let (mut names, mut initial): (Vec<String>, Vec<i64>) = PREDEFINED
        .iter()
        .map(|&(name, value)| (name.to_string(), value))
        .unzip();
    for (name, value) in defines {
        match names.iter().position(|n| n == name) {
            Some(slot) => initial[slot] = *value,
            None => {
                names.push(name.clone());
                initial.push(*value);
            }
        }
    }
    let mut commands = Vec::new();
    let mut sets = Vec::new();
    let mut current = String::new();
    for (number, line) in text.lines().enumerate() {
        let (number, line) = (number + 1, line.trim());
        if line.is_empty() || line.starts_with("--") {
            continue;
        }
        if let Some(meta) = line.strip_prefix('\\') {
            if !current.is_empty() {
                return Err(format!(
                    "line {number}: a meta-command in the middle of an SQL command; end the \
                     command with ';' first"
                ));
            }
            let (word, rest) = meta.split_once(char::is_whitespace).unwrap_or((meta, ""));
            if word != "set" {
                return Err(format!(
                    "line {number}: pgbench's \\{word} is not supported; only \\set with \
                     integer arithmetic and random(a, b) is"
                ));
            }
            sets.push(set(number, rest, &mut names, &mut initial)?);
            continue;
        }
        if let Some(word) = line.split_whitespace().find(|w| is_meta(w)) {
            return Err(format!(
                "line {number}: pgbench's {word} is not supported; only \\set with integer \
                 arithmetic and random(a, b) is"
            ));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
        if line.ends_with(';') {
            sendable(number, &current)?;
            commands.push(command(&std::mem::take(&mut current), sets, &names)?);
            sets = Vec::new();
        }
    }
    if !current.trim().is_empty() {
        sendable(text.lines().count(), &current)?;
        commands.push(command(&current, std::mem::take(&mut sets), &names)?);
    }
    if commands.is_empty() {
        return Err("no SQL commands in it".into());
    }
    Ok(Script {
        names,
        initial,
        commands,
        tail: sets,
    })
}

/// A command, ending on `line`, that sockbench can send: some SQL, and no COPY,
/// whose data sockbench neither sends nor reads (the connection would wait in its
/// COPY state for ever). Statements are told apart by `;`, as a reader would.
fn sendable(line: usize, text: &str) -> Result<(), String> {
    let statements: Vec<&str> = text
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if statements.is_empty() {
        return Err(format!(
            "line {line}: a command with no SQL in it (only ';'); take it out"
        ));
    }
    let copy = |s: &&str| {
        s.split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("copy"))
    };
    if statements.iter().any(copy) {
        return Err(format!(
            "line {line}: COPY is not supported, as sockbench neither sends COPY data nor \
             reads it; take it out of the script"
        ));
    }
    Ok(())
}

/// One `\set name expression`.
fn set(
    line: usize,
    rest: &str,
    names: &mut Vec<String>,
    initial: &mut Vec<i64>,
) -> Result<Set, String> {
    let rest = rest.trim().trim_end_matches(';');
    let (name, text) = rest
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("line {line}: \\set needs a name and an expression"))?;
    if !is_name(name) {
        return Err(format!(
            "line {line}: \\set {name}: a name is letters, digits and '_'"
        ));
    }
    let slot_of = |n: &str| names.iter().position(|m| m == n);
    let expr =
        expr::parse(text, &slot_of).map_err(|e| format!("line {line}: \\set {name}: {e}"))?;
    let slot = slot_of(name).unwrap_or_else(|| {
        names.push(name.to_string());
        initial.push(0);
        names.len() - 1
    });
    Ok(Set { slot, expr, line })
}

/// One SQL command, its `:name`s found. A `:name` not set before (or a `::` cast)
/// stays as written, as in pgbench.
fn command(text: &str, sets: Vec<Set>, names: &[String]) -> Result<Statement, String> {
    let bytes = text.as_bytes();
    let (mut pieces, mut vars, mut numbered) = (Vec::new(), Vec::new(), Vec::new());
    let mut piece = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' && bytes.get(i + 1) == Some(&b':') {
            piece.extend_from_slice(b"::");
            numbered.extend_from_slice(b"::");
            i += 2;
            continue;
        }
        if bytes[i] == b':' {
            let end = bytes[i + 1..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(bytes.len(), |p| i + 1 + p);
            let name = &text[i + 1..end];
            if let Some(slot) = names.iter().position(|n| n == name) {
                pieces.push(std::mem::take(&mut piece));
                vars.push(slot);
                numbered.extend_from_slice(format!("${}", vars.len()).as_bytes());
                i = end;
                continue;
            }
        }
        piece.push(bytes[i]);
        numbered.push(bytes[i]);
        i += 1;
    }
    pieces.push(piece);
    let c = |b: Vec<u8>| CString::new(b).map_err(|_| "it contains a NUL byte".to_string());
    Ok(Statement {
        sets,
        text: c(text.as_bytes().to_vec())?,
        numbered: c(numbered)?,
        pieces,
        vars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &Script) -> Vec<&str> {
        script
            .commands
            .iter()
            .map(|c| c.text.to_str().unwrap())
            .collect()
    }

    #[test]
    fn commands_end_with_semicolons() {
        let got = parse("-- warm\nSELECT 1;\n\nSELECT\n  2;\nSELECT 3", &[]).unwrap();
        assert_eq!(texts(&got), ["SELECT 1;", "SELECT 2;", "SELECT 3"]);
        assert!(Script::default_select().is_default());
        assert!(!got.is_default());
    }

    #[test]
    fn set_values_replace_names_as_text_or_as_parameters() {
        let script = parse(
            "\\set aid random(1, 100000 * :scale)\n\\set two :aid * 2\n\
             SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND :two > 0 AND :x::int = 1;",
            &[("scale".into(), 10)],
        )
        .unwrap();
        let c = &script.commands[0];
        assert_eq!(c.sets.len(), 2);
        assert_eq!(
            c.numbered.to_str().unwrap(),
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1 AND $2 > 0 AND :x::int = 1;"
        );
        let mut b = Bindings::new(&script, 3);
        let mut rng = Rng::new(1);
        let capacity = b.text.capacity();
        b.run(&c.sets, &mut rng).unwrap();
        let aid = b.values[2];
        assert!((1..=1_000_000).contains(&aid), "{aid}");
        let text = b.text(c).to_str().unwrap().to_string();
        assert_eq!(
            text,
            format!(
                "SELECT abalance FROM pgbench_accounts WHERE aid = {aid} AND {} > 0 AND :x::int = 1;",
                aid * 2
            )
        );
        assert_eq!(b.text.capacity(), capacity, "no allocation");
        let mut pointers = [std::ptr::null(); 2];
        b.params(c, &mut pointers);
        // SAFETY: `params` just wrote NUL-terminated text at both pointers.
        let first = unsafe { std::ffi::CStr::from_ptr(pointers[0]) };
        assert_eq!(first.to_str().unwrap(), aid.to_string());
    }

    #[test]
    fn predefined_and_negative_values() {
        let script = parse("\\set v -5 * :client_id\nSELECT :v, :scale;", &[]).unwrap();
        let mut b = Bindings::new(&script, 7);
        b.run(&script.commands[0].sets, &mut Rng::new(1)).unwrap();
        assert_eq!(
            b.text(&script.commands[0]).to_str().unwrap(),
            "SELECT -35, 1;"
        );
    }

    #[test]
    fn other_meta_commands_are_refused_by_name_and_line() {
        for (script, word) in [
            ("SELECT 1;\n\\sleep 10 ms\n", "\\sleep"),
            ("\\if :x\nSELECT 1;\n\\endif", "\\if"),
            ("SELECT 1 \\gset\n", "\\gset"),
            ("\\shell rm x\n", "\\shell"),
        ] {
            let e = parse(script, &[]).unwrap_err();
            assert!(e.contains(word) && e.contains("line"), "{e}");
        }
        let e = parse("\\set aid sqrt(2)\nSELECT 1;", &[]).unwrap_err();
        assert!(e.contains("line 1") && e.contains("'sqrt'"), "{e}");
        assert!(parse("-- nothing\n", &[]).is_err());
    }

    #[test]
    fn defines_are_integers() {
        assert_eq!(define("scale=10").unwrap(), ("scale".into(), 10));
        assert!(define("scale").is_err());
        assert!(define("name=abc").unwrap_err().contains("integer"));
    }
}
