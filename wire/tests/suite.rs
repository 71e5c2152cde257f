//! Every integration test of this crate, in one test binary.
//!
//! Each file in `tests/` is a module here rather than a binary of its own
//! (`autotests = false` in `Cargo.toml`): one binary to compile and link
//! instead of one per file, and the files' tests share the test threads, so
//! a test that waits on a server overlaps with one that computes. A test's
//! name starts with its file's: run one file with
//! `cargo test --release -p zkwire --test suite <file>::`.
//! A new test file is declared below; helper modules are declared once and
//! used as `crate::<helper>`.

// Helpers shared by several test files.
mod strategies;

mod golden;
mod hostile;
mod roundtrip;
