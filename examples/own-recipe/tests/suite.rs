//! Every test of this crate, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own
//! (`autotests = false` in `Cargo.toml`): every test binary compiles
//! zkcheck's generic checker for this crate's recipes again, so one binary
//! builds the checker once instead of once per file. A test's name starts
//! with its file's: run one file with `cargo test --release --test suite
//! check::`. The modules run on parallel threads of one process: a test
//! writes its files under a folder of its own.

mod check;
mod cli;
mod contract;
mod monitor;
mod roles;
mod search;
mod timeout;

/// With `autotests = false` a file in `tests/` that is not declared above
/// would never be built or run, silently.
#[test]
fn every_test_file_is_a_module_of_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
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
            "tests/{module} is not declared in tests/suite.rs: it would never run"
        );
    }
    assert!(seen >= 6, "tests/ holds only {seen} test modules");
}
