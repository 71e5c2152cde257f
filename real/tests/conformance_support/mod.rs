//! Scripts and extra comparisons for the `conformance` test binary.

pub mod bench;
pub mod checks;
pub mod generated;
pub mod herd;
pub mod inflight;
pub mod newer_ops;
pub mod ops;
pub mod ordering;
pub mod refusals;
pub mod scripts;
