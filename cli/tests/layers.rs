//! The layering DESIGN promises ("no two modules import each other", "the
//! engine never imports the front end"), read from the sources: a module
//! is a top-level file or folder of a crate's `src/`, and it imports
//! another when its non-test code names `crate::other`. Both ways: the
//! reader finds a planted pair and a planted upward import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The repository root (this crate is `cli/`).
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Every `.rs` file under `dir`, as (path relative to `dir`, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).expect("a source file")));
            }
        }
    }
    out.sort();
    out
}

/// The code a module ships: comments dropped, a trailing `#[cfg(test)]
/// mod tests` cut off; files that are test modules themselves skipped.
fn shipped_code(rel: &str, text: &str) -> Option<String> {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    if file.contains("tests") || file == "testkit.rs" || file == "refusals.rs" {
        return None;
    }
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let code = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    Some(code)
}

/// Module -> the modules of the same crate its shipped code names.
fn imports(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in files {
        let module = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(code) = shipped_code(rel, text) else {
            continue;
        };
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                edges.entry(module.clone()).or_default().insert(name);
            }
        }
    }
    edges
}

/// Every pair of modules that import each other.
fn mutual(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for (a, targets) in edges {
        for b in targets {
            if a < b && edges.get(b).is_some_and(|t| t.contains(a)) {
                pairs.push((a.clone(), b.clone()));
            }
        }
    }
    pairs
}

#[test]
fn no_two_modules_of_the_engine_or_the_front_end_import_each_other() {
    for krate in ["checker/src", "cli/src"] {
        let files = sources(&root().join(krate));
        assert!(files.len() > 10, "{krate}: read its sources");
        let pairs = mutual(&imports(&files));
        assert!(
            pairs.is_empty(),
            "{krate}: modules importing each other: {pairs:?}"
        );
    }
}

#[test]
fn the_engine_never_imports_the_front_end() {
    let files = sources(&root().join("checker/src"));
    let upward: Vec<&str> = files
        .iter()
        .filter(|(rel, text)| shipped_code(rel, text).is_some_and(|c| c.contains("zkcheck_cli")))
        .map(|(rel, _)| rel.as_str())
        .collect();
    assert!(
        upward.is_empty(),
        "engine files naming the front end: {upward:?}"
    );
    let manifest = std::fs::read_to_string(root().join("checker/Cargo.toml")).unwrap();
    let depends = manifest
        .lines()
        .any(|l| l.trim_start().starts_with("zkcheck-cli"));
    assert!(!depends, "checker/Cargo.toml depends on the front end");
}

#[test]
fn the_reader_finds_a_planted_pair_and_skips_test_code() {
    let files = vec![
        ("a.rs".to_string(), "use crate::b::X;\n".to_string()),
        (
            "b/mod.rs".to_string(),
            "use crate::a::Y; // crate::c\n".to_string(),
        ),
        (
            "c.rs".to_string(),
            "use crate::d::Z;\n#[cfg(test)]\nmod tests { use crate::a; }\n".to_string(),
        ),
        ("d.rs".to_string(), "fn f() {}\n".to_string()),
        ("d/tests.rs".to_string(), "use crate::c;\n".to_string()),
    ];
    assert_eq!(
        mutual(&imports(&files)),
        vec![("a".to_string(), "b".to_string())]
    );
}
