//! The layers of ARCHITECTURE.md, checked: a top-level module may use only modules
//! of its own layer or below, and the server families never use each other.
//!
//! Nothing here lists a module. The layers are read from ARCHITECTURE.md's table
//! (`| layer | modules | what it is |`, bottom to top, module names in backticks),
//! and the server families from `src/families.rs` (each `crate::NAME::FAMILY` it
//! registers is a module of the `families` layer), so a new family is checked as
//! soon as it is registered. A module in `src/` that is in neither fails with where
//! to add it. Files of unit tests (`*tests.rs`) may drive a whole command, and are
//! left out; the crate root (`lib.rs`, `main.rs`) wires everything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The name of the layer row whose modules are the server families.
const FAMILIES_LAYER: &str = "families";

/// Where each module sits, and which modules are peers that must not use each
/// other (the families).
#[derive(Debug)]
struct Layers {
    /// Module name → its layer, counted from the bottom.
    of: BTreeMap<String, usize>,
    peers: BTreeSet<String>,
}

/// The rows of the layer table in `markdown`, bottom first: each layer's name and
/// its modules (`transport/` and `plan.rs` read as `transport` and `plan`).
fn layer_table(markdown: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in markdown.lines() {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        // `| a | b | c |` splits into "", a, b, c, "".
        if !line.trim_start().starts_with('|') || cells.len() < 4 {
            if in_table {
                break;
            }
            continue;
        }
        if !in_table {
            in_table = cells[1] == "layer" && cells[2] == "modules";
            continue;
        }
        if cells[1].starts_with("---") {
            continue;
        }
        let modules: Vec<String> = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .collect();
        if modules.is_empty() {
            return Err(format!(
                "the layer {:?} names no module in backticks",
                cells[1]
            ));
        }
        rows.push((cells[1].to_string(), modules));
    }
    if rows.is_empty() {
        return Err("no `| layer | modules | … |` table".into());
    }
    Ok(rows)
}

/// The family modules `families.rs` registers (`crate::NAME::FAMILY`).
fn registered_families(families_rs: &str) -> BTreeSet<String> {
    families_rs
        .match_indices("::FAMILY")
        .filter_map(|(end, _)| {
            let before = &families_rs[..end];
            let start = before.rfind("crate::")? + "crate::".len();
            let name = &before[start..];
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then(|| name.to_string())
        })
        .collect()
}

/// The layers from the table and the registered families.
fn layers(table: &[(String, Vec<String>)], families: &BTreeSet<String>) -> Result<Layers, String> {
    let families_layer = table
        .iter()
        .position(|(name, _)| name == FAMILIES_LAYER)
        .ok_or_else(|| format!("the layer table has no {FAMILIES_LAYER:?} row"))?;
    let mut of = BTreeMap::new();
    for (layer, (name, modules)) in table.iter().enumerate() {
        for module in modules {
            if let Some(first) = of.insert(module.clone(), layer) {
                return Err(format!(
                    "`{module}` is in two layers: {:?} and {name:?}",
                    table[first].0
                ));
            }
        }
    }
    for family in families {
        match of.insert(family.clone(), families_layer) {
            Some(layer) if layer != families_layer => {
                return Err(format!(
                    "`{family}` is registered in src/families.rs but the layer table puts it \
                     in {:?}",
                    table[layer].0
                ))
            }
            _ => {}
        }
    }
    let peers = of
        .iter()
        .filter(|(_, &layer)| layer == families_layer)
        .map(|(m, _)| m.clone())
        .collect();
    Ok(Layers { of, peers })
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

/// The macros a file exports at the crate root (`#[macro_export] macro_rules! NAME`):
/// `crate::NAME!` uses the module that defines it.
fn exported_macros(text: &str) -> Vec<String> {
    text.split("#[macro_export]")
        .skip(1)
        .filter_map(|after| {
            let rest = after.trim_start().strip_prefix("macro_rules!")?;
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The top-level module a file of `src/` belongs to (`transport/tcp.rs` →
/// `transport`); `None` for the crate root and for files of tests.
fn module_of(relative: &str) -> Option<&str> {
    let first = relative.split('/').next()?;
    let module = first.trim_end_matches(".rs");
    let root = module == "lib" || module == "main";
    (!root && !relative.ends_with("tests.rs")).then_some(module)
}

/// What is wrong with `files` (path relative to `src/`, text) under `layers`.
fn problems(files: &[(String, String)], layers: &Layers) -> Vec<String> {
    let mut macros = BTreeMap::new();
    for (path, text) in files {
        if let Some(module) = module_of(path) {
            for name in exported_macros(text) {
                macros.insert(name, module.to_string());
            }
        }
    }
    let mut wrong = BTreeSet::new();
    for (path, text) in files {
        let Some(module) = module_of(path) else {
            continue;
        };
        let Some(&layer) = layers.of.get(module) else {
            wrong.insert(format!(
                "src/{module} is in no layer: add `{module}` to the layer table in \
                 ARCHITECTURE.md (the `| layer | modules | what it is |` table under \
                 \"Layers\"), or, for a server family, register its FAMILY in \
                 src/families.rs"
            ));
            continue;
        };
        for used in uses(text) {
            let used = macros.get(&used).cloned().unwrap_or(used);
            if used == module {
                continue;
            }
            let Some(&used_layer) = layers.of.get(&used) else {
                let is_module = files
                    .iter()
                    .any(|(p, _)| module_of(p) == Some(used.as_str()));
                if !is_module {
                    wrong.insert(format!(
                        "{path} uses crate::{used}, which is no module of src/ (or an item of \
                         the crate root this test does not know)"
                    ));
                }
                continue; // a module in no layer, reported above
            };
            let peer = layers.peers.contains(&used) && layers.peers.contains(module);
            if used_layer > layer || peer {
                wrong.insert(format!("{path} uses crate::{used}"));
            }
        }
    }
    wrong.into_iter().collect()
}

fn files(src: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path
                .strip_prefix(src)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            out.push((relative, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_module_uses_only_its_own_layer_and_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = layer_table(&read(&root.join("ARCHITECTURE.md")))
        .unwrap_or_else(|e| panic!("ARCHITECTURE.md: {e}"));
    let families = registered_families(&read(&root.join("src/families.rs")));
    assert!(
        families.len() >= 2,
        "src/families.rs registers {families:?}"
    );
    let layers = layers(&table, &families).unwrap_or_else(|e| panic!("{e}"));
    let src = root.join("src");
    let mut all = Vec::new();
    files(&src, &src, &mut all);
    let wrong = problems(&all, &layers);
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

/// A small tree with a table like ARCHITECTURE.md's, to show the checker catches
/// what it should.
const TABLE: &str = "\
# Architecture

| layer | modules | what it is |
| --- | --- | --- |
| base | `units` `names` | numbers, named enums (`named!`) |
| sockets | `transport/` | sockets |
| families | `sockets/` | one folder per family |
| registry | `families.rs` | the list |
| commands | `command/` | commands |

After the table.
";

fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn small_layers() -> Layers {
    let table = layer_table(TABLE).unwrap();
    let families = registered_families(
        "pub static FAMILIES: [&Family; 2] = [&crate::sockets::FAMILY, &crate::redis::FAMILY];",
    );
    layers(&table, &families).unwrap()
}

#[test]
fn the_table_and_the_registry_are_read() {
    let table = layer_table(TABLE).unwrap();
    let names: Vec<&str> = table.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["base", "sockets", "families", "registry", "commands"]
    );
    assert_eq!(table[0].1, ["units", "names"]);
    assert_eq!(table[1].1, ["transport"]);
    assert_eq!(table[3].1, ["families"]);
    let layers = small_layers();
    assert_eq!(layers.of["redis"], layers.of["sockets"]);
    assert_eq!(
        layers.peers,
        BTreeSet::from(["redis".to_string(), "sockets".to_string()])
    );
    assert!(layer_table("no table here").is_err());
}

#[test]
fn the_checker_catches_a_layer_violation() {
    let layers = small_layers();
    let fine = tree(&[
        ("lib.rs", "pub mod units; crate::command::x();"),
        ("units.rs", "crate::named! { }"),
        (
            "names.rs",
            "#[macro_export]\nmacro_rules! named { () => {} }",
        ),
        ("transport/mod.rs", "use crate::units; crate::named! {}"),
        ("sockets/mod.rs", "use crate::transport::Conn;"),
        ("sockets/x_tests.rs", "use crate::command::dispatch;"),
        ("redis/mod.rs", "use crate::units;"),
        (
            "families.rs",
            "crate::sockets::FAMILY; crate::redis::FAMILY",
        ),
        ("command/mod.rs", "use crate::families;"),
    ]);
    assert_eq!(problems(&fine, &layers), Vec::<String>::new());

    let broken = tree(&[
        ("units.rs", "use crate::transport::Conn;"),
        (
            "names.rs",
            "#[macro_export]\nmacro_rules! named { () => {} }",
        ),
        ("transport/tcp.rs", "use crate::command::dispatch;"),
        ("redis/client.rs", "use crate::sockets::FAMILY;"),
        ("sockets/mod.rs", "use crate::units;"),
        ("command/mod.rs", "use crate::units;"),
        ("newthing.rs", "use crate::units;"),
    ]);
    let wrong = problems(&broken, &layers);
    assert_eq!(wrong.len(), 4, "{wrong:#?}");
    assert!(wrong.contains(&"units.rs uses crate::transport".to_string()));
    assert!(wrong.contains(&"transport/tcp.rs uses crate::command".to_string()));
    // Families are peers, even one only registered, not in the table.
    assert!(wrong.contains(&"redis/client.rs uses crate::sockets".to_string()));
    assert!(
        wrong
            .iter()
            .any(|w| w.starts_with("src/newthing is in no layer")
                && w.contains("ARCHITECTURE.md")
                && w.contains("src/families.rs")),
        "{wrong:#?}"
    );
    // A macro of a higher layer counts as a use of its module.
    let upward_macro = tree(&[
        ("units.rs", "crate::command_macro!();"),
        (
            "command/mod.rs",
            "#[macro_export]\nmacro_rules! command_macro { () => {} }",
        ),
    ]);
    assert_eq!(
        problems(&upward_macro, &layers),
        ["units.rs uses crate::command"]
    );
}
