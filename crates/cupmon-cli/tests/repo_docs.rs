//! The repository's own documents against what they describe: docs/ARCHITECTURE.md's crate
//! table against `cargo metadata`, results files only under bench/results (one folder per
//! run, each with its README.md), and relative links in README.md, docs/ and the bench
//! RESULTS files pointing at files that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Crate → (normal dependencies, dev-dependencies), workspace crates only.
type Graph = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

/// The workspace's crates and their dependencies on each other, from `cargo metadata`.
fn metadata_graph() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect();
    let mut graph = Graph::new();
    for p in packages {
        let entry = graph
            .entry(p["name"].as_str().expect("name").to_owned())
            .or_default();
        for d in p["dependencies"].as_array().expect("dependencies") {
            let name = d["name"].as_str().expect("dependency name");
            if !names.contains(name) {
                continue;
            }
            match d["kind"].as_str() {
                None => entry.0.insert(name.to_owned()),
                Some("dev") => entry.1.insert(name.to_owned()),
                Some(_) => false,
            };
        }
    }
    graph
}

/// The names in backticks of a table cell's part (`—` or empty: none).
fn crate_names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// docs/ARCHITECTURE.md's crate table: rows `| `crate` | job | depends on |`, where
/// "depends on" lists the normal dependencies, then `; dev:` and the dev-dependencies.
fn documented_graph(text: &str) -> Graph {
    let mut graph = Graph::new();
    let mut in_table = false;
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        if line.starts_with("| crate | job | depends on |") {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        if !line.starts_with('|') {
            if !graph.is_empty() {
                break;
            }
            continue;
        }
        assert_eq!(cells.len(), 3, "a crate table row of 3 cells: {line}");
        let name = crate_names(cells[0]);
        assert_eq!(name.len(), 1, "one crate name in the first cell: {line}");
        let (normal, dev) = match cells[2].split_once("; dev:") {
            Some((normal, dev)) => (crate_names(normal), crate_names(dev)),
            None => (crate_names(cells[2]), BTreeSet::new()),
        };
        let name = name.into_iter().next().expect("one name");
        // Rows go from the ground floor up: nothing depends on a crate below it.
        if let Some(d) = normal.iter().find(|d| !graph.contains_key(*d)) {
            panic!("the crate table lists {name} before its dependency {d}");
        }
        assert!(
            graph.insert(name.clone(), (normal, dev)).is_none(),
            "{name} twice in the table"
        );
    }
    graph
}

/// What differs between the table and `cargo metadata`, one line per difference.
fn graph_diff(documented: &Graph, actual: &Graph) -> Vec<String> {
    let mut diff = Vec::new();
    for name in actual.keys().filter(|n| !documented.contains_key(*n)) {
        diff.push(format!("{name}: a workspace crate missing from the table"));
    }
    for name in documented.keys().filter(|n| !actual.contains_key(*n)) {
        diff.push(format!("{name}: in the table but not a workspace crate"));
    }
    for (name, (doc_normal, doc_dev)) in documented {
        let Some((normal, dev)) = actual.get(name) else {
            continue;
        };
        for (kind, doc, real) in [("", doc_normal, normal), ("dev-", doc_dev, dev)] {
            for d in real.difference(doc) {
                diff.push(format!(
                    "{name}: {kind}depends on {d}, which the table leaves out"
                ));
            }
            for d in doc.difference(real) {
                diff.push(format!(
                    "{name}: the table says it {kind}depends on {d}; Cargo.toml does not"
                ));
            }
        }
    }
    diff
}

#[test]
fn architecture_crate_table_matches_cargo_metadata() {
    let path = repo().join("docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("read docs/ARCHITECTURE.md");
    let documented = documented_graph(&text);
    assert!(
        !documented.is_empty(),
        "no crate table in {}",
        path.display()
    );
    let diff = graph_diff(&documented, &metadata_graph());
    assert!(
        diff.is_empty(),
        "docs/ARCHITECTURE.md's crate table does not match `cargo metadata`:\n  {}",
        diff.join("\n  ")
    );
}

#[test]
fn crate_table_diff_names_each_difference() {
    let table = "| crate | job | depends on |\n|---|---|---|\n\
        | `b` | y | — |\n| `a` | x | `b`; dev: `c` |\n| `gone` | z | — |\n";
    let documented = documented_graph(table);
    let mut actual = Graph::new();
    actual.insert(
        "a".into(),
        (["b", "d"].map(String::from).into(), BTreeSet::new()),
    );
    actual.insert("b".into(), Default::default());
    actual.insert("new".into(), Default::default());
    assert_eq!(
        graph_diff(&documented, &actual),
        [
            "new: a workspace crate missing from the table",
            "gone: in the table but not a workspace crate",
            "a: depends on d, which the table leaves out",
            "a: the table says it dev-depends on c; Cargo.toml does not",
        ]
    );
}

/// The repository's files (tracked, and untracked but not ignored), or `None` without git.
fn repo_files() -> Option<Vec<String>> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).expect("UTF-8 paths");
    Some(
        text.split('\0')
            .filter(|p| !p.is_empty() && repo().join(p).exists())
            .map(str::to_owned)
            .collect(),
    )
}

/// A file name that looks like a run's raw output.
fn results_like(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.contains("results-") || name.ends_with(".log")
}

#[test]
fn results_files_live_under_bench_results() {
    let Some(files) = repo_files() else {
        cupmon_test_skip::skipped!(
            "no git work tree (git ls-files failed) to list the repository's files"
        );
        return;
    };
    let stray: Vec<&String> = files
        .iter()
        .filter(|p| results_like(p) && !p.starts_with("bench/results/"))
        .collect();
    assert!(
        stray.is_empty(),
        "results files outside bench/results/<date>-<machine>-<what>/: {stray:?}"
    );
    let mut folders = BTreeSet::new();
    for p in files
        .iter()
        .filter_map(|p| p.strip_prefix("bench/results/"))
    {
        match p.split_once('/') {
            Some((folder, _)) => folders.insert(folder.to_owned()),
            None => {
                assert_eq!(
                    p, "README.md",
                    "bench/results/{p}: a run's file outside a run folder"
                );
                false
            }
        };
    }
    assert!(!folders.is_empty(), "no run folders under bench/results");
    for folder in &folders {
        let readme = format!("bench/results/{folder}/README.md");
        assert!(
            files.contains(&readme),
            "{readme} missing: say the machine, load, command and commit"
        );
    }
}

#[test]
fn results_like_names() {
    assert!(results_like("tests/gpu/results-2026-12-01.txt"));
    assert!(results_like("bench/slice/memory-results-2026-12-01.txt"));
    assert!(results_like("x/run.log"));
    assert!(!results_like("bench/parquet/RESULTS.md"));
    assert!(!results_like("crates/cupmon-cli/src/results.rs"));
}

/// The markdown files whose relative links are checked.
fn linked_documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs"), root.join("bench")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a docs directory") {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".md")
                && (path.starts_with(root.join("docs"))
                    || name.starts_with("RESULTS")
                    || path.starts_with(root.join("bench/results")))
            {
                docs.push(path);
            }
        }
    }
    docs
}

/// The relative link targets of a markdown text (outside fenced code), with their lines.
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].trim_matches(|c| c == '<' || c == '>');
            let external =
                target.starts_with('#') || target.contains("://") || target.starts_with("mailto:");
            if !external && !target.is_empty() {
                let path = target.split('#').next().unwrap_or(target);
                links.push((i + 1, path.replace("%20", " ")));
            }
            rest = &rest[end..];
        }
    }
    links
}

#[test]
fn relative_markdown_links_point_at_files() {
    let mut broken = Vec::new();
    let docs = linked_documents();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).expect("read a markdown file");
        let dir = doc.parent().expect("a file's directory");
        for (line, target) in relative_links(&text) {
            if !dir.join(&target).exists() {
                broken.push(format!("{}:{line}: {target}", doc.display()));
            }
        }
    }
    assert!(docs.len() > 3, "found only {docs:?}");
    assert!(
        broken.is_empty(),
        "links to missing files:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
#[should_panic(expected = "lists a before its dependency b")]
fn crate_table_rows_go_from_the_ground_floor_up() {
    documented_graph(
        "| crate | job | depends on |\n|---|---|---|\n| `a` | x | `b` |\n| `b` | y | — |\n",
    );
}

#[test]
fn relative_links_skip_code_and_urls() {
    let text = "see [a](x/a.md#part) and [b](https://e.org/b)\n```\n[c](no.md)\n```\n[d](#top) [e](<y.txt>)\n";
    assert_eq!(
        relative_links(text),
        [(1, "x/a.md".to_owned()), (5, "y.txt".to_owned())]
    );
}

/// Each crate builds one test binary (`autotests = false`, `tests/tests.rs`), so a
/// test file that `tests.rs` does not name as a module is never compiled or run: a
/// test that cannot fail because it never runs.
#[test]
fn every_integration_test_file_is_a_module_of_its_crates_one_binary() {
    let mut strays = Vec::new();
    for dir in ["crates", "bench", "tools"] {
        let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let tests = entry.path().join("tests");
            let Ok(main) = std::fs::read_to_string(tests.join("tests.rs")) else {
                continue;
            };
            let declared: BTreeSet<String> = main
                .lines()
                .filter_map(|l| {
                    let l = l.trim().trim_start_matches("pub ");
                    Some(l.strip_prefix("mod ")?.strip_suffix(';')?.to_owned())
                })
                .collect();
            for file in std::fs::read_dir(&tests).into_iter().flatten().flatten() {
                let path = file.path();
                let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                if path.extension().is_some_and(|e| e == "rs")
                    && stem != "tests"
                    && !declared.contains(stem)
                {
                    strays.push(
                        path.strip_prefix(repo())
                            .unwrap_or(&path)
                            .display()
                            .to_string(),
                    );
                }
            }
        }
    }
    assert!(
        strays.is_empty(),
        "test files no tests.rs names (they never run): {strays:?}"
    );
}
