//! Every synchronisation primitive of this crate, from one place.
//!
//! Normally these are `std`'s. Built with `RUSTFLAGS="--cfg zkcheck_loom"`
//! they are `loom`'s, so that the same handoff code runs under loom's model
//! checker, which explores every interleaving of its threads (up to a
//! preemption bound) and reports deadlocks, lost wakeups and failed
//! assertions. The cfg has a name of its own because `--cfg loom` would also
//! switch tokio's internal loom paths; nothing built under this cfg uses
//! tokio (see `Cargo.toml`).
//!
//! Nothing else in the handoff core may use `std::sync` or `std::thread`
//! directly: a primitive loom cannot see is an interleaving it cannot explore.

#[cfg(not(zkcheck_loom))]
pub use std::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};
#[cfg(not(zkcheck_loom))]
pub use std::thread;

#[cfg(zkcheck_loom)]
pub use loom::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};
#[cfg(zkcheck_loom)]
pub use loom::thread;

/// A point in time a waiter gives up at. loom has no clock: under loom a
/// deadline never passes by itself, and models fire "the deadline passed"
/// as an explicit event (see [`crate::handoff::Handoff::deadline_passed`]).
pub type Deadline = std::time::Instant;

/// Lock `mutex`, ignoring poisoning: every critical section of this crate
/// leaves its state consistent before anything in it can panic.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Wait on `condvar` until notified or (outside loom) `deadline` passes.
/// Returns the guard and whether the deadline has passed. Spurious wakeups
/// are possible, as with any condition variable: callers loop.
pub fn wait_until<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    deadline: Option<Deadline>,
) -> (MutexGuard<'a, T>, bool) {
    #[cfg(not(zkcheck_loom))]
    if let Some(deadline) = deadline {
        let now = std::time::Instant::now();
        if now >= deadline {
            return (guard, true);
        }
        let (guard, _) = condvar
            .wait_timeout(guard, deadline - now)
            .unwrap_or_else(|e| e.into_inner());
        let passed = std::time::Instant::now() >= deadline;
        return (guard, passed);
    }
    #[cfg(zkcheck_loom)]
    let _ = deadline;
    let guard = condvar.wait(guard).unwrap_or_else(|e| e.into_inner());
    (guard, false)
}
