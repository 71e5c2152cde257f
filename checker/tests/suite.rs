//! Every integration test of `zkcheck`, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own,
//! so the generic checker code is monomorphized and linked once, not once
//! per file (`autotests = false` in `Cargo.toml`). A test's name starts with
//! its file's: run one file with
//! `cargo test --release -p zkcheck --test suite asked::`.
//!
//! The modules share one process and run on parallel threads: a test must
//! not set environment variables, change the current directory or count
//! anything process-wide, and writes its files under its own folder of
//! `CARGO_TARGET_TMPDIR`. A new test file is declared below; the helper
//! modules are declared once and used as `crate::cli_kit` and so on.

// Helpers shared by several test files.
mod cli_kit;
mod shard_kit;
mod verdicts;

mod asked;
mod bad_input;
mod check;
mod cli;
mod exit_codes;
mod explore;
mod fault_windows;
mod generic;
mod herd;
mod lasso;
mod liveness;
mod liveness_clock;
mod monitors;
mod por;
mod properties;
mod replay;
mod seed_verdicts;
mod session_flaws;
mod shards;
mod shards_cli;
mod symmetry;
mod token;
mod viewer;
