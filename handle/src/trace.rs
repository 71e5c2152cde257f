//! A record of what the threads of a loom model did, in the order they did
//! it, so that a failing model can print the interleaving that broke it.
//!
//! loom runs all threads of a model as coroutines on the test's own OS
//! thread and stops at the first failing execution, so a thread-local list,
//! cleared when each execution starts ([`reset`]), holds exactly the failing
//! interleaving when the model panics ([`take`]) — and tests running in
//! parallel do not mix their records. It is deliberately not a loom
//! primitive: it observes the model and must add no interleavings.
//! (`LOOM_LOG=trace` additionally prints loom's own step log.)

use std::cell::RefCell;

thread_local! {
    static NOTES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Start a fresh execution's record.
pub fn reset() {
    NOTES.with(|n| n.borrow_mut().clear());
}

/// Record one step ("thread: what it did").
pub fn note(step: impl Into<String>) {
    let step = step.into();
    NOTES.with(|n| {
        if let Ok(mut n) = n.try_borrow_mut() {
            n.push(step);
        }
    });
}

/// The record of the last execution.
pub fn take() -> Vec<String> {
    NOTES.with(|n| {
        n.try_borrow_mut()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    })
}

/// The record as numbered lines, for a failure message.
pub fn render(steps: &[String]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("  {:>2}. {s}\n", i + 1))
        .collect()
}
