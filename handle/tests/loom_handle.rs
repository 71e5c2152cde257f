//! loom models of the lock handle's handoff (`zkhandle::handoff`).
//!
//! Run with `RUSTFLAGS="--cfg zkcheck_loom" cargo test -p zkhandle --release
//! --target-dir target/loom --test loom_handle` (see the README).
//!
//! Each model runs caller threads and a fake event thread over one
//! [`Handoff`]. The fake recipe behind the event thread creates a "node"
//! for each attempt and deletes it on release or session loss, and checks
//! that at most one attempt runs at a time. Every model asserts:
//! * no lost wakeup and no deadlock — loom fails any execution in which all
//!   threads are blocked, and every caller must return;
//! * never two guards — a shared counter of live guards stays ≤ 1;
//! * nothing left behind — once the event thread has drained its commands,
//!   the fake recipe holds no node (a timed-out or cancelled acquire, or an
//!   ownerless retry after a session loss, was released).
//!
//! A deadline is an explicit event a "timer" thread fires
//! ([`Handoff::deadline_passed`]): loom has no clock.

#![cfg(zkcheck_loom)]

mod loom_support;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use loom_support::{check, check_fails, steps_of};
use zkhandle::handoff::{AcquireError, Command, Flaw, Handoff};
use zkhandle::trace::note;

/// What the fake recipe does besides obeying commands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    /// Grant every attempt at once.
    Grant,
    /// Grant, then lose the session while holding (`LostLock`): the node
    /// goes; then retry by itself and get an ownerless grant.
    GrantThenLose,
    /// Lose the session while waiting (`GaveUp`), then retry by itself
    /// (as the round loop does) and get an ownerless grant.
    GiveUpThenRetry,
    /// Never grant (the predecessor never goes).
    Never,
}

/// The fake event thread: obeys commands until the handoff is closed, then
/// closes its session (ephemeral nodes go). Returns the nodes left when the
/// commands ran out, before closing — what a leak would be.
fn event_thread(h: Arc<Handoff<u64>>, script: Script) -> Vec<u64> {
    let mut next = 1u64;
    let mut node: Option<u64> = None;
    let mut holding = false;
    while let Some(command) = h.wait_command() {
        match command {
            Command::Acquire if node.is_none() => {
                let n = next;
                next += 1;
                node = Some(n);
                note(format!("event: Acquire -> created node {n}"));
                match script {
                    Script::Grant | Script::GrantThenLose => {
                        holding = true;
                        note(format!("event: granted({n})"));
                        h.granted(n);
                    }
                    Script::GiveUpThenRetry => {
                        // The node goes with the expired session.
                        note(format!(
                            "event: session lost while waiting: node {n} gone, gave_up()"
                        ));
                        h.gave_up();
                        let r = next;
                        next += 1;
                        node = Some(r);
                        holding = true;
                        note(format!("event: the recipe retried by itself: granted({r})"));
                        h.granted(r);
                    }
                    Script::Never => {}
                }
                if script == Script::GrantThenLose {
                    note(format!(
                        "event: session lost while holding: node {n} gone, lost()"
                    ));
                    h.lost();
                    // The round loop retries by itself once reconnected.
                    let r = next;
                    next += 1;
                    node = Some(r);
                    note(format!("event: the recipe retried by itself: granted({r})"));
                    h.granted(r);
                }
            }
            Command::Acquire => {
                // One attempt at a time: the handoff must never ask twice.
                assert!(!holding, "Acquire while the recipe holds node {node:?}");
                note("event: Acquire while an attempt runs: no-op");
            }
            Command::Release => {
                if holding {
                    note(format!("event: Release -> deleted node {node:?}"));
                    node = None;
                    holding = false;
                } else {
                    note("event: Release with nothing held: no-op");
                }
            }
        }
    }
    node.into_iter().collect()
}

/// Take the lock through `h` (with a deadline `deadline` fires, if any),
/// hold it, drop it; returns what the acquire returned.
fn caller(
    name: &'static str,
    h: &Arc<Handoff<u64>>,
    live: &AtomicUsize,
) -> Result<u64, AcquireError> {
    let pending = Handoff::request(h)?;
    note(format!("{name}: requested (ticket {})", pending.ticket()));
    match pending.wait() {
        Ok(guard) => {
            let holders = live.fetch_add(1, Ordering::SeqCst) + 1;
            note(format!(
                "{name}: got guard {} (lost: {})",
                guard.grant(),
                guard.is_lost()
            ));
            assert!(holders == 1, "two guards at once");
            let grant = *guard.grant();
            live.fetch_sub(1, Ordering::SeqCst);
            drop(guard);
            note(format!("{name}: dropped guard {grant}"));
            Ok(grant)
        }
        Err(e) => {
            note(format!("{name}: acquire failed: {e:?}"));
            Err(e)
        }
    }
}

/// Close the handoff once the callers are done and check what is left.
fn finish(h: &Handoff<u64>, event: thread::JoinHandle<Vec<u64>>) {
    h.close();
    let left = event.join().unwrap();
    assert!(left.is_empty(), "nodes left behind: {left:?}");
}

#[test]
fn grant_vs_timeout() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let live = Arc::new(AtomicUsize::new(0));
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::Grant)
        });
        let timer = thread::spawn({
            let h = h.clone();
            move || {
                note("timer: deadline of ticket 0 passed");
                h.deadline_passed(0);
            }
        });
        let result = caller("caller", &h, &live);
        assert!(matches!(result, Ok(_) | Err(AcquireError::TimedOut)));
        timer.join().unwrap();
        finish(&h, event);
    });
}

#[test]
fn release_vs_lost_lock() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::GrantThenLose)
        });
        // The guard is granted (lost or not by the time it is seen) and
        // dropped while the session loss is being reported.
        let guard = Handoff::request(&h).unwrap().wait().unwrap();
        note(format!(
            "caller: got guard {} (lost: {})",
            guard.grant(),
            guard.is_lost()
        ));
        if guard.is_lost() {
            // The recipe's own retry must not be kept while this lost guard
            // lives: nobody here may use it and other sessions would wait.
            assert!(
                !h.recipe_holds(&2),
                "an ownerless grant kept behind a lost guard"
            );
        }
        drop(guard);
        note("caller: dropped the guard");
        // The lost hold is not the handoff's any more, and a new caller
        // is not blocked by it.
        assert!(!h.recipe_holds(&1));
        finish(&h, event);
    });
}

#[test]
fn two_callers_on_one_handle() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let live = Arc::new(AtomicUsize::new(0));
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::Grant)
        });
        let other = thread::spawn({
            let (h, live) = (h.clone(), live.clone());
            move || caller("B", &h, &live)
        });
        let a = caller("A", &h, &live);
        let b = other.join().unwrap();
        assert!(a.is_ok() && b.is_ok(), "A: {a:?}, B: {b:?}");
        assert_ne!(a, b, "each acquisition goes back to the recipe");
        finish(&h, event);
    });
}

#[test]
fn pending_acquire_dropped() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let live = Arc::new(AtomicUsize::new(0));
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::Grant)
        });
        // Ask and walk away, racing the grant.
        let pending = Handoff::request(&h).unwrap();
        note("caller: requested ticket 0, dropping it");
        drop(pending);
        // The handle still works afterwards.
        assert!(caller("caller", &h, &live).is_ok());
        finish(&h, event);
    });
}

#[test]
fn session_loss_while_waiting() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let live = Arc::new(AtomicUsize::new(0));
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::GiveUpThenRetry)
        });
        // Woken with the news, not left waiting; the recipe's own retry is
        // released since nobody waits for it any more.
        assert_eq!(caller("caller", &h, &live), Err(AcquireError::Interrupted));
        finish(&h, event);
    });
}

#[test]
fn timed_out_grant_goes_to_the_next_waiter() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let live = Arc::new(AtomicUsize::new(0));
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::Grant)
        });
        let a = Handoff::request(&h).unwrap(); // ticket 0, with a deadline
        let b = thread::spawn({
            let (h, live) = (h.clone(), live.clone());
            move || caller("B", &h, &live)
        });
        // A's deadline passes just before it waits (a timer thread would
        // add nothing here but states: the grant races it either way).
        note("A: deadline of ticket 0 passed");
        h.deadline_passed(0);
        match a.wait() {
            Ok(guard) => {
                assert_eq!(live.fetch_add(1, Ordering::SeqCst), 0, "two guards at once");
                note("A: got the guard before its deadline");
                live.fetch_sub(1, Ordering::SeqCst);
                drop(guard);
            }
            Err(e) => {
                note(format!("A: {e:?}"));
                assert_eq!(e, AcquireError::TimedOut);
            }
        }
        assert!(b.join().unwrap().is_ok());
        finish(&h, event);
    });
}

#[test]
fn closing_wakes_a_waiter() {
    check(|| {
        let h = Arc::new(Handoff::<u64>::new());
        let event = thread::spawn({
            let h = h.clone();
            move || event_thread(h, Script::Never)
        });
        let waiter = thread::spawn({
            let h = h.clone();
            move || Handoff::request(&h).and_then(|p| p.wait().map(|g| *g.grant()))
        });
        note("owner: closing the handle");
        h.close();
        assert_eq!(waiter.join().unwrap(), Err(AcquireError::Closed));
        // The attempt's node goes with the session when the event thread ends.
        let _ = event.join().unwrap();
    });
}

// ---- the broken twins: loom must catch them ----

#[test]
fn broken_notify_before_register_is_a_lost_wakeup() {
    let report = check_fails(
        "broken_notify_before_register_is_a_lost_wakeup",
        || {
            let h = Arc::new(Handoff::<u64>::with_flaw(Flaw::NotifyBeforeRegister));
            let live = Arc::new(AtomicUsize::new(0));
            let event = thread::spawn({
                let h = h.clone();
                move || event_thread(h, Script::Grant)
            });
            let _ = caller("caller", &h, &live);
            finish(&h, event);
        },
        &["deadlock"],
    );
    let steps = steps_of(&report);
    // The grant came while the caller was between its check and its sleep.
    assert!(steps.iter().any(|s| s.starts_with("event: granted")));
    assert!(!steps.iter().any(|s| s.starts_with("caller: got guard")));
}

#[test]
fn broken_if_instead_of_while_hands_out_two_guards() {
    let report = check_fails(
        "broken_if_instead_of_while_hands_out_two_guards",
        || {
            let h = Arc::new(Handoff::<u64>::with_flaw(Flaw::IfNotWhile));
            let live = Arc::new(AtomicUsize::new(0));
            let event = thread::spawn({
                let h = h.clone();
                move || event_thread(h, Script::Grant)
            });
            let other = thread::spawn({
                let (h, live) = (h.clone(), live.clone());
                move || caller("B", &h, &live)
            });
            let _ = caller("A", &h, &live);
            let _ = other.join();
            finish(&h, event);
        },
        // Woken by the other caller's grant, it takes the lock as its own:
        // two guards, or a grant nobody will ever release.
        &["two guards", "nodes left behind"],
    );
    let steps = steps_of(&report);
    assert!(steps.iter().filter(|s| s.contains("got guard")).count() >= 2);
}
