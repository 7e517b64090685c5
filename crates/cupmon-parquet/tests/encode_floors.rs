//! The encoder's layering (`src/encode/mod.rs`): its doc comment lists the files floor
//! by floor, and no file imports one on a higher floor or takes part in an import loop.

use std::collections::BTreeMap;
use std::path::Path;

fn encode_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/encode")
}

/// File → floor, from the numbered list in `mod.rs`'s doc comment ("1. values:
/// [`types`] ..., 2. pages: ...").
fn floors(module_doc: &str) -> BTreeMap<String, usize> {
    let mut floors = BTreeMap::new();
    let mut floor = 0;
    for line in module_doc.lines().filter_map(|l| l.strip_prefix("//!")) {
        let line = line.trim_start();
        if let Some((n, _)) = line.split_once(". ") {
            if let Ok(n) = n.parse() {
                floor = n;
            }
        }
        if floor == 0 {
            continue;
        }
        for part in line.split("[`").skip(1) {
            let name = part.split('`').next().unwrap_or("");
            if !name.contains(':') {
                floors.entry(name.to_owned()).or_insert(floor);
            }
        }
    }
    floors
}

/// The sibling files `source` imports (`use super::x`, `super::{x, y}`), outside
/// comments and its test module.
fn imports(source: &str, files: &BTreeMap<String, usize>) -> Vec<String> {
    let code = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or(source);
    let mut found = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for part in line.split("super::").skip(1) {
            let names: Vec<&str> = match part.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![part],
            };
            for name in names {
                let name: String = name
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if files.contains_key(&name) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

#[test]
fn encoder_files_import_only_their_floor_or_below_without_loops() {
    let dir = encode_dir();
    let doc = std::fs::read_to_string(dir.join("mod.rs")).expect("read encode/mod.rs");
    let floors = floors(&doc);
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("read src/encode") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        if name == "mod" || name.ends_with("tests") {
            continue;
        }
        let floor = *floors
            .get(&name)
            .unwrap_or_else(|| panic!("encode/{name}.rs is on no floor of encode/mod.rs's list"));
        let source = std::fs::read_to_string(&path).expect("read an encoder file");
        let deps = imports(&source, &floors);
        for d in &deps {
            assert!(
                floors[d] <= floor,
                "encode/{name}.rs (floor {floor}) imports {d} (floor {}), a floor above",
                floors[d]
            );
        }
        graph.insert(name, deps);
    }
    // Within a floor, no loop: take away files with no import left, repeatedly.
    while !graph.is_empty() {
        let free: Vec<String> = graph
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| !graph.contains_key(d)))
            .map(|(n, _)| n.clone())
            .collect();
        assert!(
            !free.is_empty(),
            "encoder files importing each other in a loop: {graph:?}"
        );
        for n in free {
            graph.remove(&n);
        }
    }
}

#[test]
fn floors_and_imports_are_read_as_written() {
    let doc = "//! 1. values: [`a`], [`b`] (see [`b::X`]);\n//! 2. pages: [`c`]\n";
    let floors = floors(doc);
    assert_eq!(floors.len(), 3, "{floors:?}");
    assert_eq!((floors["a"], floors["c"]), (1, 2));
    let source = "use super::a::X;\nuse super::{b, c::Y};\n// super::c\n";
    assert_eq!(imports(source, &floors), ["a", "b", "c"]);
}
