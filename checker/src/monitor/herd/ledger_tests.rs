//! The wakeup ledger's rules, on hand-written histories.

use super::history::*;
use super::ledger::*;
use zksim::{ClientId, EventType, Op};

fn ledger(log: &[H]) -> WakeupLedger {
    let mut l = WakeupLedger::new();
    for h in log {
        l.observe(h);
    }
    l
}
fn woken_by(writes: &[Write]) -> Vec<Vec<ClientId>> {
    writes
        .iter()
        .map(|r| r.woken.iter().map(|(c, _)| *c).collect())
        .collect()
}
fn per_release(l: &WakeupLedger) -> Vec<Vec<ClientId>> {
    woken_by(l.releases())
}
fn per_create(l: &WakeupLedger) -> Vec<Vec<ClientId>> {
    woken_by(l.creates())
}

/// Issue 15's trace (naive lock, 4 clients, seed 10): client 3 releases
/// and asks again at once; its wakeup one round later comes from client
/// 0's release of the reused `/lock/lock`, not from its own.
#[test]
fn a_wakeup_is_charged_to_the_release_of_the_node_it_watched() {
    const LOCK: &str = "/lock/lock";
    let mut log = vec![req(0), req(1), req(2), req(3)];
    log.extend(creates(3, 1, LOCK, 0x5));
    log.push(acq(3, 0x5));
    for c in 0..3 {
        log.extend(sees(c, 2, LOCK, 0x5));
    }
    log.extend([delete_sent(3, 2, LOCK), rel(3), req(3)]);
    log.extend([deleted(0, LOCK), deleted(1, LOCK), deleted(2, LOCK)]);
    log.extend(creates(0, 3, LOCK, 0xe));
    log.push(acq(0, 0xe));
    for c in 1..4 {
        log.extend(sees(c, 4, LOCK, 0xe));
    }
    log.extend([delete_sent(0, 4, LOCK), rel(0)]);
    log.extend([deleted(3, LOCK), deleted(1, LOCK), deleted(2, LOCK)]);
    let l = ledger(&log);
    assert_eq!(per_release(&l), vec![vec![0, 1, 2], vec![3, 1, 2]]);
    assert_eq!(l.wakeups(), 6);
}

/// A client reconnected to a lagging follower watches a node the leader
/// already deleted; the follower's catching up wakes it, and that wakeup
/// belongs to the old release, not to the newer one of the same path.
#[test]
fn a_lagging_servers_wakeup_is_charged_to_the_old_release() {
    const LOCK: &str = "/lock/lock";
    let mut log = vec![req(1), req(2)];
    log.extend(creates(0, 1, LOCK, 0x5));
    log.extend([acq(0, 0x5), delete_sent(0, 2, LOCK), rel(0)]);
    // Client 2 already woke for that and took the lock.
    log.extend(creates(2, 1, LOCK, 0x9));
    log.push(acq(2, 0x9));
    // Client 1, on the lagging follower, still sees 0's node.
    log.extend(sees(1, 1, LOCK, 0x5));
    log.extend([delete_sent(2, 2, LOCK), rel(2)]);
    log.push(deleted(1, LOCK));
    let l = ledger(&log);
    assert_eq!(per_release(&l), vec![vec![1], vec![]]);
}

/// Predecessor watches on unique sequential names; a child watch is
/// charged to the release of a child the client listed.
#[test]
fn sequential_and_child_watches() {
    let mut log = vec![req(1), req(2)];
    log.extend(creates(0, 1, "/l/n-0", 1));
    log.extend(creates(1, 1, "/l/n-1", 2));
    log.extend(sees(2, 1, "/l/n-1", 2));
    log.extend(lists(1, 2, "/l", &["n-0", "n-1"]));
    log.extend([delete_sent(0, 2, "/l/n-0"), rel(0)]);
    log.push(woken(1, EventType::NodeChildrenChanged, "/l"));
    log.extend([acq(1, 2), delete_sent(1, 3, "/l/n-1"), rel(1)]);
    log.push(deleted(2, "/l/n-1"));
    let l = ledger(&log);
    assert_eq!(per_release(&l), vec![vec![1], vec![2]]);
    assert_eq!((l.wakeups(), l.wasted()), (2, 0));
}

/// What no write caused belongs to none: a delete of a node whose owner
/// never released it (an expiry), a `NodeCreated` with no `exists` that
/// found the path empty, a watch the client never saw a node for; events to
/// a client not waiting are not wakeups at all.
#[test]
fn what_belongs_to_no_release() {
    let mut log = vec![req(1)];
    log.extend(creates(0, 1, "/l/n-0", 1));
    log.extend([acq(0, 1), delete_sent(0, 2, "/l/n-0"), rel(0)]);
    log.extend(sees(1, 1, "/l/n-7", 7));
    log.push(deleted(1, "/l/n-7"));
    log.push(woken(1, EventType::NodeCreated, "/l/n-0"));
    log.push(deleted(3, "/l/n-0"));
    let l = ledger(&log);
    assert_eq!(per_release(&l), vec![Vec::<ClientId>::new()]);
    assert_eq!(l.wakeups(), 2);
}

/// A releaser that never learnt its node's czxid (lost create reply) is
/// matched by path, but only when that is unambiguous.
#[test]
fn releases_of_unknown_nodes_match_by_path_only_when_unambiguous() {
    let mut log = vec![req(1)];
    log.extend([
        delete_sent(0, 1, "/l/n-0"),
        rel(0),
        delete_sent(2, 1, "/l/n-0"),
    ]);
    log.extend(sees(1, 1, "/l/n-0", 4));
    log.push(deleted(1, "/l/n-0"));
    assert_eq!(per_release(&ledger(&log)), vec![vec![1]]);
    log.insert(4, rel(2));
    let l = ledger(&log);
    assert_eq!(per_release(&l), vec![Vec::<ClientId>::new(), vec![]]);
    assert_eq!(l.wakeups(), 1);
}

#[test]
fn the_tally_is_not_part_of_identity() {
    let a = ledger(&[req(0), delete_sent(5, 1, "/x")]);
    let mut b = a.clone();
    b.observe(&sent(5, 2, Op::Sync { path: "/".into() }));
    assert_eq!(a, b);
    assert_ne!(a.requests(), b.requests());
}

const LOCK: &str = "/lock/lock";

/// Issue 35: back to back, the naive lock's waiters find no lock node (its
/// holder already released it), watch for its creation and are woken by the
/// next holder's create. That create fired them all: it is charged with
/// every one, whether its reply comes before the events or after.
#[test]
fn a_create_is_charged_with_the_creation_watches_it_fired() {
    for reply_first in [true, false] {
        let mut log = vec![req(0), req(1), req(2), req(3)];
        log.extend(creates(0, 1, LOCK, 5));
        log.extend([acq(0, 5), delete_sent(0, 2, LOCK), rel(0)]);
        for c in 1..4 {
            log.extend(finds_none(c, 1, LOCK));
        }
        log.push(create_sent(1, 2, LOCK));
        if reply_first {
            log.push(create_replied(1, 2, LOCK, 9));
        }
        log.extend([created(2, LOCK), created(3, LOCK)]);
        if !reply_first {
            log.push(create_replied(1, 2, LOCK, 9));
        }
        let l = ledger(&log);
        assert_eq!(per_create(&l), vec![vec![], vec![2, 3]], "{reply_first}");
        assert_eq!(per_release(&l), vec![Vec::<ClientId>::new()]);
        assert_eq!(l.creates()[1].others_woken(), 2);
        let mut l = l;
        l.finish();
        assert_eq!((l.wakeups(), l.wasted()), (2, 2));
        assert_eq!(l.creates()[1].wasted, 2, "{reply_first}");
    }
}

/// A node whose release the ledger saw before the `exists` answered "no
/// node" was gone before that read: the watch fires at a later create, not
/// at that node's, though its create is the newest one known.
#[test]
fn a_creation_watch_is_charged_to_a_create_after_the_releases_it_followed() {
    let mut log = vec![req(1), req(2)];
    log.extend(creates(0, 1, LOCK, 5));
    log.push(create_sent(1, 1, LOCK));
    log.extend([delete_sent(0, 2, LOCK), rel(0)]);
    log.extend(finds_none(2, 1, LOCK));
    log.push(created(2, LOCK));
    let l = ledger(&log);
    assert_eq!(per_create(&l), vec![Vec::<ClientId>::new()], "not node 5");
    log.push(create_replied(1, 1, LOCK, 8));
    assert_eq!(per_create(&ledger(&log)), vec![vec![], vec![2]]);
}

/// A client woken by its own create (its `exists` found nothing, then its
/// create won) is charged to that create, and the wakeup was useful; it
/// is not one of the others the create woke.
#[test]
fn a_client_woken_by_its_own_create() {
    let mut log = vec![req(1)];
    log.extend(finds_none(1, 1, LOCK));
    log.push(create_sent(1, 2, LOCK));
    log.push(created(1, LOCK));
    log.extend([create_replied(1, 2, LOCK, 4), acq(1, 4)]);
    let mut l = ledger(&log);
    l.finish();
    assert_eq!(per_create(&l), vec![vec![1]]);
    assert_eq!(l.creates()[0].others_woken(), 0);
    assert_eq!((l.wakeups(), l.wasted()), (1, 0));
}

/// An `exists` without a watch leaves no creation watch to charge; one that
/// found the node leaves a data watch, not a creation watch.
#[test]
fn only_an_exists_that_found_nothing_with_a_watch_waits_for_a_create() {
    let mut log = vec![req(1), req(2)];
    log.push(sent(
        1,
        1,
        Op::Exists {
            path: LOCK.into(),
            watch: false,
        },
    ));
    log.push(replied(1, 1, Ok(zksim::Response::Exists(None))));
    log.extend(finds_none(2, 1, LOCK));
    log.extend(sees(2, 2, LOCK, 3));
    log.extend(creates(0, 1, LOCK, 3));
    log.extend([created(1, LOCK), created(2, LOCK)]);
    let l = ledger(&log);
    assert_eq!(per_create(&l), vec![Vec::<ClientId>::new()]);
    assert_eq!(l.wakeups(), 2);
}
