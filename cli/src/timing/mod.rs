//! A timing model for the simulator: how long messages travel, how long a
//! server takes to serve a request or send a watch notification, so that a
//! herd costs *time* (everyone waits in the server's queue) and not only
//! wakeups and requests.
//!
//! The simulator stays untimed and sans-IO: a run is still a list of the
//! world's enabled events. Timing lives entirely in a scheduler,
//! [`TimedChooser`], that gives each enabled event a ready time in model
//! microseconds and fires the earliest (ties broken by event order; a
//! seeded RNG only for jitter and fault arrivals). Same seed, same trace.
//!
//! - [`Timing`](zkcheck::scenario::Timing): the parameters (`[timing]` in
//!   a scenario file, so the engine's), with defaults measured on a real
//!   server by `zkreal`'s `calibrate` example
//!   ([`Timing::calibrated`](zkcheck::scenario::Timing::calibrated) turns
//!   its measurements into parameters);
//! - [`scheduler`]: the timed chooser (servers are FIFO queues);
//! - [`drive`]: a timed run that keeps the enabled events in ready-time
//!   order from step to step instead of listing them all at every step
//!   (the same run as the chooser's, O(log clients) a step);
//! - [`figures`]: what a timed run measures in model time
//!   ([`figures::run_timed`]); its [`figures::TimeLedger`] also measures a
//!   real server's run (`zkreal`'s `compare` example), from the same log.

pub mod drive;
pub mod figures;
mod ready_index;
pub mod scheduler;

pub use drive::{drive_timed, drive_timed_until};
pub use figures::{run_timed, run_timed_until, TimeFigures};
pub use scheduler::TimedChooser;

/// One simulated tick in model microseconds: the tick the recipes' hold and
/// think timers count ([`zksim::TICK_MS`]), which is also the real driver's
/// tick and the test server's `tickTime`.
pub const TICK_US: u64 = zksim::TICK_MS as u64 * 1000;
