//! zkcheck: explore schedules of a recipe's clients on the simulated
//! ensemble and judge them with property monitors.
//!
//! - [`scenario`]: what to run (recipe, clients, ensemble, faults, checks);
//!   [`aim`]: faults aimed at a client or a role.
//! - [`model`]: the explored state, world + monitors.
//! - [`run`]: one run driven by a [`run::Chooser`]; [`explore::random::run_random`].
//! - [`explore`]: strategies (random, PCT, BFS/DFS) behind one trait, and replay.
//! - [`shrink`], [`trace`], [`token`]: from a failure to a short, readable,
//!   replayable counterexample.
//! - [`shard`], [`summary`], [`merge`]: a sweep split over machines, each
//!   shard's machine-readable result, and the shards merged into one verdict.
//! - [`cli`]: the `zkcheck` command.

pub mod aim;
pub mod allocator;
pub mod check;
pub mod cli;
pub mod compare;
pub mod counterexample;
pub mod explore;
pub mod invariant;
pub mod lasso;
pub mod limits;
pub mod merge;
pub mod model;
pub mod monitor;
pub mod panics;
pub mod progress;
pub mod report;
pub mod run;
pub mod scenario;
pub mod schedule;
pub mod shard;
pub mod shrink;
pub mod stop;
pub mod summary;
pub mod timing;
pub mod token;
pub mod trace;
pub mod verdict;
pub mod viewer;
pub mod words;
