//! The layers of ARCHITECTURE.md, checked: a top-level module may use only modules
//! of its own layer or below, and the server families never use each other. Files of
//! unit tests (`*tests.rs`) may drive a whole command, and are left out.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top; a module may use any module in an earlier entry or its own.
const LAYERS: &[&[&str]] = &[
    &[
        "units",
        "names",
        // the macro of `names`, exported at the crate root
        "named",
        "stats",
        "timestamp",
        "error",
        "interrupt",
        "input",
        "dir",
        "leftovers",
        "subprocess",
        "cpu",
        "system",
    ],
    &["transport"],
    &["results"],
    &["harness"],
    &["report"],
    &["plan"],
    &["sockets", "postgres"],
    &["families", "export"],
    &["cli", "command"],
];

/// Modules of one layer that must not use each other.
const PEERS: &[&str] = &["sockets", "postgres"];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("src/{module} is in no layer of tests/layers.rs"))
}

/// Every `crate::name` a file mentions.
fn uses(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `sockbench_crate::`
        }
        let name: String = text[i + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_its_own_layer_and_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut wrong = Vec::new();
    for path in all {
        let relative = path.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap();
        let module = first.as_os_str().to_str().unwrap().trim_end_matches(".rs");
        // The crate root wires everything; test files may drive a whole command.
        let test_file = path.to_str().unwrap().ends_with("tests.rs");
        if module == "lib" || module == "main" || test_file {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for used in uses(&text) {
            if used == module {
                continue;
            }
            let upward = layer_of(&used) > layer_of(module);
            let peer = PEERS.contains(&used.as_str()) && PEERS.contains(&module);
            if upward || peer {
                wrong.push(format!("{} uses crate::{used}", relative.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}
