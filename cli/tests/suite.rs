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
/// every test file and helper folder of a crate whose tests are one binary
/// must be a module of its suite.
#[test]
fn every_test_file_is_a_module_of_its_suite() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // Each crate whose tests are one binary, and how many test modules it
    // holds at least (a reader that finds none is broken, not satisfied).
    for (krate, least) in [
        ("cli", 10),
        ("recipes", 10),
        ("real", 5),
        ("serve", 5),
        ("sim", 5),
        ("wire", 2),
    ] {
        let dir = root.join(krate).join("tests");
        let suite = std::fs::read_to_string(dir.join("suite.rs")).expect("suite.rs reads");
        let manifest =
            std::fs::read_to_string(root.join(krate).join("Cargo.toml")).expect("Cargo.toml reads");
        assert!(
            manifest.contains("autotests = false"),
            "{krate}/Cargo.toml builds every tests/ file as a binary of its own besides the suite"
        );
        // Test binaries of their own (`[[test]]` besides the suite, e.g.
        // `harness = false`) and the modules they declare.
        let standalone: Vec<String> = manifest
            .split("[[test]]")
            .skip(1)
            .filter_map(|t| t.lines().find_map(|l| l.trim().strip_prefix("name = ")))
            .map(|n| n.trim_matches('"').to_string())
            .filter(|n| n != "suite")
            .collect();
        let mut declared_elsewhere = String::new();
        for name in &standalone {
            declared_elsewhere += &std::fs::read_to_string(dir.join(format!("{name}.rs")))
                .unwrap_or_else(|e| panic!("{krate}/tests/{name}.rs: {e}"));
        }
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
            let declaration = format!("mod {module};");
            if module == "suite"
                || standalone.iter().any(|s| s == module)
                || declared_elsewhere.contains(&declaration)
            {
                continue;
            }
            seen += 1;
            assert!(
                suite.contains(&declaration),
                "{krate}/tests/{module} is not declared in {krate}/tests/suite.rs: it would never run"
            );
        }
        assert!(
            seen >= least,
            "{krate}/tests holds only {seen} test modules"
        );
    }
}
