//! zkcheck's front end: the `zkcheck` command and the products built on
//! the engine (the `zkcheck` crate) — reports and the counterexample
//! viewer, `compare` and its timed tables, sweeps split over machines
//! (shards, their JSON results, merge), and the allocator the binary uses.
//!
//! The engine never imports from here. Everything here renders the
//! engine's one [`zkcheck::verdict::Verdict`]; nothing here judges.
//!
//! - [`command`]: the `zkcheck` command line (check, replay, merge,
//!   compare, list), as a function of its arguments and two writers.
//! - [`timing`]: timed runs, the model `compare` uses (its parameters,
//!   [`zkcheck::scenario::Timing`], are a scenario's, so the engine's).
//! - [`compare`]: the naive lock against the predecessor-watch lock over
//!   timed runs; [`report`] writes its Markdown and charts.
//! - [`files`]: the checked directory and file writes every report and
//!   viewer page goes through, and their one error type.
//! - [`viewer`]: a counterexample as one HTML page and SVG pictures.
//! - [`shard`], [`summary`], [`merge`]: a sweep split over machines, each
//!   shard's machine-readable result, and the shards merged.
//! - [`allocator`]: mimalloc for the binary and the benches.

pub mod allocator;
pub mod command;
pub mod compare;
pub mod files;
pub mod merge;
pub mod report;
pub mod shard;
pub mod summary;
pub mod timing;
pub mod viewer;

#[cfg(test)]
mod timing_tests;
