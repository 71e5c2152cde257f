//! Every integration test of `zkcheck`, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own,
//! so the generic checker code is monomorphized and linked once, not once
//! per file (`autotests = false` in `Cargo.toml`). A test's name starts with
//! its file's: run one file with
//! `cargo test --release -p zkcheck-cli --test suite asked::`.
//!
//! The modules share one process and run on parallel threads: a test must
//! not set environment variables, change the current directory or count
//! anything process-wide, and writes its files under its own folder of
//! `CARGO_TARGET_TMPDIR`. A new test file is declared below (a test at the
//! end fails while one is not); the helper modules are declared once and
//! used as `crate::cli_kit` and so on.

// Helpers shared by several test files.
mod cli_kit;
mod shard_kit;
mod shipped;
mod verdicts;

mod add_a_recipe;
mod asked;
mod bad_input;
mod check;
mod cli;
mod docs_paths;
mod doors;
mod exit_codes;
mod explore;
mod fault_windows;
mod fuzz_doors;
mod generic;
mod herd;
mod judge;
mod lasso;
mod layers;
mod liveness;
mod liveness_clock;
mod monitors;
mod no_false_greens;
mod owner_shortcut;
mod por;
mod properties;
mod replay;
mod seed_verdicts;
mod serve;
mod session_flaws;
mod shards;
mod shards_cli;
mod shrink_scenario;
mod shrink_story;
mod symmetry;
mod token;
mod two_doors;
mod viewer;

/// With `autotests = false`, a file in a `tests/` folder that its
/// `suite.rs` does not declare would never be built or run, silently:
/// every test file and helper folder of the two merged crates must be a
/// module of its suite.
#[test]
fn every_test_file_is_a_module_of_its_suite() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for krate in ["cli", "recipes"] {
        let dir = root.join(krate).join("tests");
        let suite = std::fs::read_to_string(dir.join("suite.rs")).expect("suite.rs reads");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("tests/ lists") {
            let path = entry.expect("an entry").path();
            let module = if path.is_dir() && path.join("mod.rs").exists() {
                path.file_name()
            } else if path.extension().is_some_and(|e| e == "rs") {
                path.file_stem()
            } else {
                continue;
            };
            let module = module.and_then(|m| m.to_str()).expect("a UTF-8 name");
            if module == "suite" {
                continue;
            }
            seen += 1;
            assert!(
                suite.contains(&format!("mod {module};")),
                "{krate}/tests/{module} is not declared in {krate}/tests/suite.rs: it would never run"
            );
        }
        assert!(seen > 10, "{krate}/tests holds only {seen} test modules");
    }
}
