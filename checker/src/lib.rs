//! zkcheck, the engine: explore schedules of a recipe's clients on the
//! simulated ensemble and judge them with property monitors. No binary, no
//! tokio, no reports: the `zkcheck` command and its products (reports, the
//! viewer, `compare`, shards and merge) are the front end, `zkcheck-cli`,
//! which imports from here and never the other way.
//!
//! - [`scenario`]: what to run (recipe, clients, ensemble, faults, checks);
//!   [`aim`]: faults aimed at a client or a role.
//! - [`model`]: the explored state, world + monitors.
//! - [`run`]: one run driven by an [`explore::Chooser`]; [`explore::random::run_random`].
//! - [`explore`]: the search strategies (random, PCT, BFS/DFS) behind one
//!   trait, and replay.
//! - [`monitor`]: the properties and their monitors.
//! - [`shrink`], [`trace`], [`token`], [`counterexample`]: from a failure
//!   to a short, readable, replayable counterexample.
//! - [`verdict`]: the one pipeline (explore → shrink → judge completeness
//!   → token) and its [`verdict::Verdict`], which every front door renders.
//! - [`check`]: the builder for `cargo test`.

pub mod aim;
pub mod check;
pub mod contract;
pub mod counterexample;
pub mod explore;
pub mod input;
pub mod invariant;
pub mod lasso;
pub mod limits;
pub mod model;
pub mod monitor;
mod panics;
pub mod progress;
pub mod run;
pub mod scenario;
pub mod schedule;
pub mod shrink;
pub mod stop;
pub mod token;
pub mod trace;
pub mod verdict;
mod words;
