//! zkhandle: the in-process half of a ZooKeeper lock recipe.
//!
//! * [`handoff`] — the thread handoff between callers and the event thread,
//!   a plain struct over [`sync`]'s primitives, model-checked with loom;
//! * [`seeds`] — the seed articles' own thread handoffs (`wait()`/`notify()`,
//!   semaphores, latches, `LockListener` callbacks) ported with the same
//!   primitives, so that loom can judge them too;
//! * `LockHandle` (not built under loom) — a thread-safe blocking lock over
//!   any registered lock recipe, driven by a background event thread on a
//!   real ZooKeeper ([`LockHandle::connect`]) or on the simulator
//!   ([`sim::simulated_handles`]).
//!
//! Build with `RUSTFLAGS="--cfg zkcheck_loom"` to run the loom models
//! (`tests/loom_*.rs`); see the README's "In-process checks (loom)".

#[cfg(not(zkcheck_loom))]
pub mod client;
#[cfg(not(zkcheck_loom))]
pub mod contend;
#[cfg(not(zkcheck_loom))]
pub mod handle;
pub mod handoff;
pub mod seeds;
#[cfg(not(zkcheck_loom))]
pub mod sim;
pub mod sync;
pub mod trace;

#[cfg(not(zkcheck_loom))]
pub use handle::{HandleError, LockGuard, LockHandle};
pub use handoff::{AcquireError, Guard, Handoff, Pending};
