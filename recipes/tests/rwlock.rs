//! The read/write lock, fed by hand: who waits for whom.

use crate::common::*;
use zkrecipes::lock::rwlock::role_of;
use zkrecipes::lock::sequential::Role;
use zkrecipes::lock::RwLock;
use zkrecipes::testkit::{children, created, Harness};
use zkrecipes::AppEvent;
use zksim::EventType;

/// A client of the given index whose node `name` (czxid 5) was created;
/// its listing is op 2.
fn enqueued(client: usize, name: &str) -> Harness<RwLock> {
    let (mut h, out) = started::<RwLock>(client, 1);
    let shared = role_of(client) == Role::Reader;
    assert_eq!(out.events, [AppEvent::Requested { shared }]);
    let kind = if shared { "read" } else { "write" };
    assert_eq!(
        out.sent,
        [(1, create_seq(&format!("/lock/{kind}-c{client}s16a1-")))]
    );
    let out = h.reply(1, created(&format!("/lock/{name}"), 5, ME));
    assert_eq!(out.sent, [(2, children_of("/lock"))]);
    h
}

#[test]
fn roles_follow_the_client_index() {
    let roles: Vec<Role> = (0..7).map(role_of).collect();
    use Role::*;
    assert_eq!(
        roles,
        [Writer, Reader, Reader, Writer, Reader, Reader, Writer]
    );
}

#[test]
fn a_reader_shares_with_lower_readers() {
    let me = "read-c1s16a1-0000000002";
    let mut h = enqueued(1, me);
    let out = h.reply(2, children(&[me, "read-c2s32a1-0000000001"]));
    assert_eq!(
        out.events,
        [
            AppEvent::Acquired {
                fence: 5,
                shared: true
            },
            AppEvent::ResourceWrite { fence: 5 }
        ]
    );
}

#[test]
fn a_reader_waits_for_the_next_lower_writer_only() {
    let me = "read-c1s16a1-0000000004";
    let mut h = enqueued(1, me);
    let out = h.reply(
        2,
        children(&[
            "read-c2s32a1-0000000003",
            "write-c0s48a1-0000000002",
            me,
            "write-c3s64a1-0000000001",
            "write-c6s128a1-0000000005",
        ]),
    );
    assert_eq!(
        out.sent,
        [(3, exists_watch("/lock/write-c0s48a1-0000000002"))]
    );
    assert!(out.events.is_empty());
    let out = h.watch(EventType::NodeDeleted, "/lock/write-c0s48a1-0000000002");
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
}

#[test]
fn a_writer_waits_for_the_next_lower_node_of_any_kind() {
    let me = "write-c3s16a1-0000000003";
    let mut h = enqueued(3, me);
    let out = h.reply(
        2,
        children(&["write-c0s48a1-0000000001", me, "read-c2s32a1-0000000002"]),
    );
    assert_eq!(
        out.sent,
        [(3, exists_watch("/lock/read-c2s32a1-0000000002"))]
    );
    // Lowest: exclusive.
    let mut h = enqueued(0, "write-c0s16a1-0000000001");
    let out = h.reply(
        2,
        children(&["write-c0s16a1-0000000001", "read-c1s32a1-0000000002"]),
    );
    assert_eq!(out.events, acquired(5));
}
