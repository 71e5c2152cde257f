//! zkcheck, the engine: explore schedules of a recipe's clients on the
//! simulated ensemble and judge them with property monitors. No binary, no
//! tokio, no reports: the `zkcheck` command and its products (reports, the
//! viewer, `compare`, shards and merge) are the front end, `zkcheck-cli`,
//! which imports from here and never the other way.
//!
//! # The curated surface
//!
//! Most users need only the names at the crate root: build a [`Check`] in
//! a `cargo test` (or a [`Scenario`] from a file), run it, read its
//! [`Verdict`], keep the [`Token`] to replay a failure.
//!
//! - [`Check`], [`Verdict`], [`VerdictKind`]: check a recipe from
//!   `cargo test` and read what the one pipeline concluded.
//! - [`Scenario`], [`ClientGroup`]: what to run (recipe, clients, ensemble,
//!   faults, checks), from a TOML file or built in code.
//! - [`Property`], [`Monitor`], [`View`], [`Violation`], [`StepLog`],
//!   [`Invariant`]: what is judged, and the two ways to add a judge of
//!   one's own.
//! - [`Token`]: a counterexample as one line that replays it.
//! - [`Counterexample`], [`Schedule`], [`shrink()`]: from a failure to a
//!   short, readable, replayable counterexample.
//! - [`SystemState`]: the explored state (world + monitors), for choosers and
//!   explorers of one's own.
//!
//! The public modules, each one concept:
//!
//! - [`scenario`]: the scenario data and its parsing (faults aimed at a
//!   client or role: [`scenario::Target`]).
//! - [`check`]: the builder for `cargo test`, its environment overrides
//!   and proptest strategies.
//! - [`verdict`]: the one pipeline (explore → shrink → judge completeness
//!   → token) and its [`verdict::Verdict`], which every front door renders.
//! - [`explore`]: the explorers (random, PCT, BFS/DFS) behind one
//!   trait, their [`explore::Options`], and replay.
//! - [`run`]: one run driven by a [`explore::Chooser`].
//! - [`state`]: the explored state.
//! - [`monitor`]: the properties, their monitors and the figures they
//!   measure ([`monitor::Tally`]).
//! - [`token`], [`trace`], [`lasso`]: a counterexample replayable, readable,
//!   and judged when it is a cycle.
//! - [`limits`], [`input`], [`stop`], [`progress`]: what a front end needs
//!   around a search: bounds on every user-given number, bounded reading of
//!   input files, stopping (signals, time, memory) and a progress line.
//!
//! Everything else (the monitors' insides, the exhaustive search's
//! frontier, the shrinker's passes, ...) is private. [`testkit`] is a
//! hidden door for this workspace's own tests of a few internals; it is
//! not part of the API.

#![deny(missing_docs)]

// ---- public modules (the curated list above) ----
pub mod check;
pub mod explore;
pub mod input;
pub mod lasso;
pub mod limits;
pub mod monitor;
pub mod progress;
pub mod scenario;
pub mod state;
pub mod stop;
pub mod token;
pub mod trace;
pub mod verdict;

/// One run of a scenario driven by a [`explore::Chooser`]: it lives with
/// the choosers under [`explore`], named here for its users.
pub use explore::run;

// ---- private modules ----
mod aim;
mod contract;
mod counterexample;
mod invariant;
mod panics;
mod schedule;
mod shrink;
mod words;

// ---- the crate root's re-exports ----
pub use check::Check;
pub use counterexample::Counterexample;
pub use invariant::Invariant;
pub use monitor::{Monitor, Property, StepLog, View, Violation};
pub use scenario::{ClientGroup, Scenario};
pub use schedule::Schedule;
pub use shrink::{shrink, shrink_with, Budget, Phases, Shrunk};
pub use state::SystemState;
pub use token::Token;
pub use verdict::{Verdict, VerdictKind};

/// A door for this workspace's own tests of a few internals (the
/// reductions' soundness decisions, the scenario's judged cast, one
/// built-in monitor run both ways). Not part of the API: it may change
/// or go at any time.
#[doc(hidden)]
pub mod testkit {
    pub use crate::monitor::owner::OwnerMonitor;

    /// Whether sleep sets apply to a search, and why not.
    pub mod por {
        pub use crate::explore::exhaustive::por::decide;
    }
    /// Whether symmetry reduction applies to a search, and why not.
    pub mod symmetry {
        pub use crate::explore::exhaustive::symmetry::decide;
    }
    /// What a shrunk counterexample must keep: its story.
    pub mod story {
        pub use crate::shrink::story::{shape, Marks, Story};
    }
    /// Which checks a scenario's cast of clients can fail at all.
    pub mod judged {
        pub use crate::scenario::judged::{cannot_fail, Cast};
    }
}
