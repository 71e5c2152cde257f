//! Support for `ensemble`: the differential fuzzer's generator.

pub mod fuzz;
