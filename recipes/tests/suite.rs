//! Every integration test of `zkrecipes`, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own,
//! so the recipes are compiled and linked into one test binary, not one per
//! file (`autotests = false` in `Cargo.toml`). A test's name starts with its
//! file's: run one file with
//! `cargo test --release -p zkrecipes --test suite seeds_world::`.
//!
//! The modules share one process and run on parallel threads: a test must
//! not set environment variables, change the current directory or count
//! anything process-wide. A new test file is declared below; the helper
//! modules are declared once and used as `crate::common` and
//! `crate::seeds_support`. A file left undeclared would never run: the
//! checker's suite (`every_test_file_is_a_module_of_its_suite`) fails then.

// Helpers shared by several test files.
mod common;
mod seeds_support;

mod flaws;
mod grammar;
mod naive;
mod registry;
mod rwlock;
mod seeds_curator;
mod seeds_grammar;
mod seeds_ouyang;
mod seeds_queue;
mod seeds_world;
mod seeds_writelock;
mod seeds_zklock004;
mod sequential;
