//! docs/DESIGN.md is the map: every file or folder it names must exist.
//!
//! A path is what DESIGN writes in backticks (`checker/src/verdict.rs`,
//! `scenarios/seeds/`) that holds a `/` and ends in `/` or a file
//! extension, and every relative link target (`[..](SCENARIOS.md)`,
//! resolved from `docs/`). Paths are written from the repository root in
//! full: a pattern (`*`, `{..}`, `<..>`, `…`) cannot be checked and is
//! refused like a missing path. Every missing path is reported at once.

use std::path::Path;

/// The repository root (this crate is `cli/`).
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// What a design page mentions as a path, and why each is suspect.
#[derive(Debug, Default)]
struct Mentioned {
    /// Repository paths from backticks, as written.
    paths: Vec<String>,
    /// Link targets, relative to the page's folder.
    links: Vec<String>,
}

/// The text outside fenced code blocks (a block shows commands and
/// sketches, not claims about where things are).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Whether a word from a code span reads as a path: it holds a `/`, is
/// not a znode (`/lock`) or a Rust path (`a::b`), and ends in `/` or in
/// a file extension.
fn looks_like_a_path(word: &str) -> bool {
    if !word.contains('/') || word.starts_with('/') || word.contains("::") || word.contains("://") {
        return false;
    }
    if word.ends_with('/') {
        return true;
    }
    let last = word.rsplit('/').next().unwrap_or("");
    last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphabetic())
    })
}

fn mentioned(text: &str) -> Mentioned {
    let prose = prose(text);
    let mut m = Mentioned::default();
    // Inline code: the odd pieces between backticks (a span may wrap).
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        for word in span.split(|c: char| c.is_whitespace() || c == ',') {
            let word = word
                .trim_start_matches('(')
                .trim_end_matches([')', '.', ';', ':']);
            let word = word.split('#').next().unwrap_or(word);
            if looks_like_a_path(word) {
                m.paths.push(word.to_string());
            }
        }
    }
    // Links: `](target)`.
    for piece in prose.split("](").skip(1) {
        let Some(target) = piece.split(')').next() else {
            continue;
        };
        let target = target.split('#').next().unwrap_or(target);
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        m.links.push(target.to_string());
    }
    m
}

/// Every path of `m` that does not exist, with the reason.
fn missing(m: &Mentioned, root: &Path, page_dir: &Path) -> Vec<String> {
    let pattern = |p: &str| p.contains(['*', '{', '}', '<', '>', '…']);
    let mut out = Vec::new();
    for p in &m.paths {
        if pattern(p) {
            out.push(format!("`{p}` is a pattern: write each path in full"));
        } else if !root.join(p).exists() {
            out.push(format!("`{p}` does not exist"));
        }
    }
    for l in &m.links {
        if pattern(l) {
            out.push(format!("link ({l}) is a pattern"));
        } else if !page_dir.join(l).exists() {
            out.push(format!("link ({l}) does not exist"));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_path_design_names_exists() {
    let root = root();
    let page = root.join("docs/DESIGN.md");
    let text = std::fs::read_to_string(&page).expect("docs/DESIGN.md reads");
    let m = mentioned(&text);
    // A map that names a handful of files proves little: DESIGN points at
    // every crate and at the files each section is about.
    assert!(
        m.paths.len() >= 60,
        "only {} paths found in DESIGN.md: {:?}",
        m.paths.len(),
        m.paths
    );
    let missing = missing(&m, root, &root.join("docs"));
    assert!(
        missing.is_empty(),
        "docs/DESIGN.md names {} path(s) that are not in the repository:\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

/// The reader itself, both ways: it finds paths in spans, wrapped spans
/// and links, skips znodes, Rust paths and fenced blocks, and reports a
/// missing path and a pattern.
#[test]
fn the_reader_finds_paths_and_reports_the_missing_ones() {
    let text = "The seeds are in `seeds/`; the verdict in `checker/src/verdict.rs`.\n\
                A wrapped span `zkcheck\ncheck docs/SCENARIOS.md` and `/lock`, \
                `zksim::world::footprint`, `Released/LostLock`, `cli/src/*.rs`.\n\
                See [scenarios](SCENARIOS.md#when) and [nothing](NOPE.md).\n\
                ```\nsim/not-checked.rs\n```\n";
    let m = mentioned(text);
    assert_eq!(
        m.paths,
        [
            "seeds/",
            "checker/src/verdict.rs",
            "docs/SCENARIOS.md",
            "cli/src/*.rs"
        ]
    );
    assert_eq!(m.links, ["SCENARIOS.md", "NOPE.md"]);
    let root = root();
    assert_eq!(
        missing(&m, root, &root.join("docs")),
        [
            "`cli/src/*.rs` is a pattern: write each path in full",
            "`seeds/` does not exist",
            "link (NOPE.md) does not exist",
        ]
    );
}
