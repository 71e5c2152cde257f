//! Every scenario the repository ships (`scenarios/` and `scenarios/seeds/`),
//! for tests that go over all of them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Each shipped scenario file's name and text, in name order per folder.
pub fn scenario_files() -> &'static [(String, String)] {
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut files = Vec::new();
        for dir in [root.clone(), root.join("seeds")] {
            let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            names.sort();
            for p in names {
                let text = std::fs::read_to_string(&p).unwrap();
                files.push((p.file_name().unwrap().to_string_lossy().into_owned(), text));
            }
        }
        assert!(files.len() >= 30, "every shipped scenario: {}", files.len());
        files
    })
}
