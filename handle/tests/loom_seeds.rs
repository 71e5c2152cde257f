//! loom models of the seed articles' thread handoffs (`zkhandle::seeds`):
//! the article's form where it has a bug (loom must find it and print the
//! interleaving), and the corrected form (loom must pass it).
//!
//! Each model has the article's caller thread, the ZooKeeper event thread
//! delivering notifications in order ([`FakeZk::next_event`]), and the
//! threads that make the notification happen (another process releasing
//! its node, a session expiring, a timeout firing).

#![cfg(zkcheck_loom)]

mod loom_support;

use loom::sync::Arc;
use loom::thread;
use loom_support::{check, check_fails, steps_of};
use zkhandle::seeds::fakezk::{FakeZk, Owner};
use zkhandle::seeds::ouyang::DistributedLock;
use zkhandle::seeds::queue::DistributedQueue;
use zkhandle::seeds::writelock::{LockListener, WriteLock};
use zkhandle::seeds::zklock004::ZkLock004;
use zkhandle::seeds::{Form, Latch};
use zkhandle::trace::note;

const HOLDER: &str = "/lock/x-0000000000";
const MINE: &str = "/lock/x-0000000001";

/// Another process holds `HOLDER`; our node `MINE` is next in line.
fn two_in_line() -> Arc<FakeZk> {
    let zk = Arc::new(FakeZk::new());
    zk.seed_node(HOLDER, Owner::Other);
    zk.seed_node(MINE, Owner::Ours);
    zk
}

/// The holder releases — only after our watch is set, so that what loom
/// finds is the in-process race and not the on-the-wire one the simulator
/// already reports (a predecessor gone before `exists`).
fn holder_releases(zk: &Arc<FakeZk>) -> thread::JoinHandle<()> {
    let zk = zk.clone();
    thread::spawn(move || {
        zk.wait_watched(HOLDER);
        note(format!("holder: delete({HOLDER})"));
        zk.delete(HOLDER, Owner::Other).unwrap();
    })
}

// ---- seed 004: synchronized (this) { wait(); } once ----

fn seed004(form: Form) {
    let zk = two_in_line();
    let lock = Arc::new(ZkLock004::new(form));
    let events = thread::spawn({
        let (zk, lock) = (zk.clone(), lock.clone());
        move || {
            while let Some((_, event)) = zk.next_event() {
                lock.process(&event);
            }
        }
    });
    let holder = holder_releases(&zk);
    assert!(lock.watch_and_wait(&zk, HOLDER).unwrap());
    holder.join().unwrap();
    zk.close();
    events.join().unwrap();
}

#[test]
fn seed004_single_wait_loses_the_notify() {
    let report = check_fails(
        "seed004_single_wait_loses_the_notify",
        || seed004(Form::AsPrinted),
        &["deadlock"],
    );
    let steps = steps_of(&report);
    // The notify ran after exists() returned and before the caller waited.
    let exists = steps.iter().position(|s| s.starts_with("caller: exists"));
    let notify = steps.iter().position(|s| s.contains("notify()"));
    assert!(exists < notify, "{steps:?}");
    assert!(!steps.iter().any(|s| s.starts_with("caller: woke")));
}

#[test]
fn seed004_corrected_waits_for_a_flag() {
    check(|| seed004(Form::Corrected));
}

// ---- seeds 000/001: Semaphore(0) per watchAndWait ----

fn ouyang(form: Form, expire: bool) {
    let zk = two_in_line();
    let lock = Arc::new(DistributedLock::new(form));
    let events = thread::spawn({
        let (zk, lock) = (zk.clone(), lock.clone());
        move || {
            while let Some((id, event)) = zk.next_event() {
                lock.process(id, &event);
            }
        }
    });
    let other = if expire {
        let zk = zk.clone();
        thread::spawn(move || {
            zk.wait_watched(HOLDER);
            note("session: our session expires");
            zk.expire();
        })
    } else {
        holder_releases(&zk)
    };
    let result = lock.wait_until_locked(&zk, "/lock", MINE);
    if expire {
        assert!(result.is_err(), "an expired session cannot hold the lock");
    } else {
        assert!(result.is_ok());
    }
    other.join().unwrap();
    zk.close();
    events.join().unwrap();
}

#[test]
fn seed001_semaphore_keeps_an_early_notify() {
    check(|| ouyang(Form::AsPrinted, false));
}

#[test]
fn seed001_expired_session_hangs_the_waiter() {
    let report = check_fails(
        "seed001_expired_session_hangs_the_waiter",
        || ouyang(Form::AsPrinted, true),
        &["deadlock"],
    );
    let steps = steps_of(&report);
    assert!(steps.iter().any(|s| s.contains("Expired) -> ignored")));
}

#[test]
fn seed001_corrected_learns_of_the_expiry() {
    check(|| ouyang(Form::Corrected, true));
}

// ---- seed 002: DistributedQueue.take() with a LatchChildWatcher ----

fn queue_take(expire: bool) {
    let zk = Arc::new(FakeZk::new());
    let queue = Arc::new(DistributedQueue::new());
    let events = thread::spawn({
        let (zk, queue) = (zk.clone(), queue.clone());
        move || {
            while let Some((id, event)) = zk.next_event() {
                queue.process(id, &event);
            }
        }
    });
    let producer = thread::spawn({
        let zk = zk.clone();
        move || {
            if expire {
                note("session: the consumer's session expires");
                zk.expire();
            } else {
                let item = zk.create_sequential("/queue/qn-", Owner::Other).unwrap();
                note(format!("producer: offered {item}"));
            }
        }
    });
    let taken = queue.take(&zk, "/queue");
    if expire {
        assert!(taken.is_err());
    } else {
        assert_eq!(taken.unwrap(), "/queue/qn-0000000000");
    }
    producer.join().unwrap();
    zk.close();
    events.join().unwrap();
}

#[test]
fn seed002_queue_latch_keeps_every_wakeup() {
    check(|| queue_take(false));
}

#[test]
fn seed002_queue_latch_wakes_on_session_loss() {
    check(|| queue_take(true));
}

// ---- seed 002: WriteLock + LockListener, a caller that times out ----

/// The usual listener: a latch the caller awaits with a timeout.
struct LatchListener(Arc<Latch>);

impl LockListener for LatchListener {
    fn lock_acquired(&self) {
        self.0.count_down();
    }
    fn lock_released(&self) {}
}

fn writelock(form: Form) {
    let zk = Arc::new(FakeZk::new());
    zk.seed_node(HOLDER, Owner::Other);
    let latch = Arc::new(Latch::new(1));
    let lock = Arc::new(WriteLock::new(form, "/lock", LatchListener(latch.clone())));
    let events = thread::spawn({
        let (zk, lock) = (zk.clone(), lock.clone());
        move || {
            while let Some((_, event)) = zk.next_event() {
                lock.process(&zk, &event);
            }
        }
    });
    let holder = {
        let zk = zk.clone();
        thread::spawn(move || {
            note(format!("holder: delete({HOLDER})"));
            zk.delete(HOLDER, Owner::Other).unwrap();
        })
    };
    let timer = {
        let latch = latch.clone();
        thread::spawn(move || {
            note("timer: the caller's await(timeout) deadline passes");
            latch.deadline_passed();
        })
    };
    // The caller: lock(); if not granted, await(timeout); on timeout, give up.
    let mut holds = lock.lock(&zk).unwrap();
    if !holds {
        holds = latch.wait_or_deadline();
        note(format!("caller: await(timeout) returned {holds}"));
    }
    // Release, or give up ("also removes your request in the queue").
    let calls_before_unlock = lock.unlock(&zk);
    note(format!("caller: unlock() done (held: {holds})"));
    holder.join().unwrap();
    timer.join().unwrap();
    zk.close();
    events.join().unwrap();
    let ours: Vec<_> = zk
        .nodes()
        .into_iter()
        .filter(|(_, o)| *o == Owner::Ours)
        .collect();
    assert!(ours.is_empty(), "node left behind after unlock(): {ours:?}");
    assert_eq!(
        lock.lock_acquired_calls(),
        calls_before_unlock,
        "lockAcquired() called after unlock(), for nobody"
    );
}

#[test]
fn seed002_writelock_stale_watcher_relocks_after_give_up() {
    let report = check_fails(
        "seed002_writelock_stale_watcher_relocks_after_give_up",
        || writelock(Form::AsPrinted),
        &["node left behind", "lockAcquired() called after unlock()"],
    );
    let steps = steps_of(&report);
    let gave_up = steps.iter().position(|s| s.starts_with("caller: unlock()"));
    let relock = steps
        .iter()
        .position(|s| s.starts_with("event thread: lock(): id == null"));
    assert!(gave_up.is_some() && gave_up < relock, "{steps:?}");
}

#[test]
fn seed002_writelock_corrected_ignores_a_stale_watcher() {
    check(|| writelock(Form::Corrected));
}
