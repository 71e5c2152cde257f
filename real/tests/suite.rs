//! Every integration test of this crate, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own
//! (`autotests = false` in `Cargo.toml`): one binary to compile and link
//! instead of one per file, and the files' tests share the test threads, so
//! a test that waits on a server overlaps with one that computes. A test's
//! name starts with its file's: run one file with
//! `cargo test --release -p zkreal --test suite <file>::`.
//! A new test file is declared below; helper modules are declared once and
//! used as `crate::<helper>`.

// Helpers shared by several test files.
mod common;
mod ensemble_support;
mod raw;
#[path = "../examples/support/real_cells.rs"]
mod real_cells;
mod verdicts_support;

mod driver;
mod ensemble;
mod ensemble_verdicts;
mod faults;
mod herd;
mod raw_watches;
mod recipes;
mod timing_real;

/// One real three-server ensemble at a time, across the files: three JVMs
/// each, on a machine of two cores, are timing enough.
static ONE_ENSEMBLE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
