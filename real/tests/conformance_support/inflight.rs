//! Ops that are not answered at once: in flight when the connection breaks
//! (S21), issued while disconnected, and a failed multi's per-op codes as
//! the server sends them (S31). The real side holds one direction of the
//! session's connection in its proxy; the simulator holds the same queue
//! of its own connection (see `conformance::sim`).

use zkreal::conformance::{Action, Script};
use zksim::Op;

use super::ops::*;

pub fn all() -> Vec<Script> {
    vec![
        s21_held_request_is_not_applied(),
        s21_held_multi_is_not_applied(),
        s21_answered_request_is_applied(),
        s21_lost_event_is_replayed(),
        s21_ops_queued_while_disconnected(),
        s22_expiry_with_ops_in_flight(),
        s31_failed_multi_codes_from_the_wire(),
        s1_dot_components_and_non_bmp_are_refused(),
    ]
}

fn check(path: &str, version: i32) -> Op {
    Op::Check {
        path: path.into(),
        version,
    }
}

/// The request never reached the server: `ConnectionLoss`, not applied,
/// no zxid taken.
fn s21_held_request_is_not_applied() -> Script {
    Script::new("S21_held_request_is_not_applied", 2)
        .op(1, exists("/@/x", true))
        .act(0, Action::HoldRequests)
        .act(0, Action::Send(create("/@/x", P)))
        .op(1, exists("/@/x", false))
        .act(0, Action::Disconnect)
        .act(0, Action::Reconnect)
        .op(0, exists("/@/x", false))
        .op(1, create("/@/y", P))
}

fn s21_held_multi_is_not_applied() -> Script {
    Script::new("S21_held_multi_is_not_applied", 2)
        .op(0, create("/@/p", P))
        .act(0, Action::HoldRequests)
        .act(
            0,
            Action::Send(multi(vec![create("/@/p/a", P), set("/@/p", b"v", 0)])),
        )
        .act(0, Action::Send(get("/@/p", false)))
        .op(1, kids("/@/p", false))
        .act(0, Action::Disconnect)
        .act(0, Action::Reconnect)
        .op(0, get("/@/p", false))
}

/// The server applied the request and its answer was lost with the
/// connection: `ConnectionLoss`, yet applied (a retry finds `NodeExists`).
fn s21_answered_request_is_applied() -> Script {
    Script::new("S21_answered_request_is_applied", 2)
        .op(1, exists("/@/x", true))
        .act(0, Action::HoldReplies)
        .act(0, Action::Send(create("/@/x", E)))
        .act(0, Action::Send(set("/@/x", b"v", 0)))
        .op(1, get("/@/x", false))
        .act(0, Action::Disconnect)
        .act(0, Action::Reconnect)
        .op(0, create("/@/x", E))
        .op(0, get("/@/x", false))
}

/// A notification lost with the connection: the client library still
/// holds the watch, and `SetWatches` (with the last zxid the client saw,
/// which is before the lost answer) brings the event back.
fn s21_lost_event_is_replayed() -> Script {
    Script::new("S21_lost_event_is_replayed", 2)
        .op(0, create("/@/w", P))
        .op(0, exists("/@/x", true))
        .op(0, get("/@/w", true))
        .act(0, Action::HoldReplies)
        .op(1, create("/@/x", P))
        .act(0, Action::Send(exists("/@/w", false)))
        .op(1, set("/@/w", b"v", -1))
        .act(0, Action::Disconnect)
        .act(0, Action::Reconnect)
        .op(0, get("/@/w", false))
}

/// Ops issued while disconnected wait in the client and go out, in order,
/// once it reconnects (Java's `queuePacket` while `CONNECTING`).
fn s21_ops_queued_while_disconnected() -> Script {
    Script::new("S21_ops_queued_while_disconnected", 2)
        .op(0, exists("/@/q", true))
        .act(0, Action::Disconnect)
        .act(0, Action::Send(create("/@/q", P)))
        .act(0, Action::Send(get("/@/q", true)))
        .act(0, Action::Send(multi(vec![create("/@/q", P)])))
        .op(1, exists("/@/q", false))
        .act(0, Action::Reconnect)
        .op(1, set("/@/q", b"v", -1))
        .op(0, exists("/@/q", false))
}

/// The session expires with an ephemeral create whose answer is held:
/// the connection fails first (`ConnectionLoss`; the create was applied,
/// and the expiry deletes it), then the client learns `Expired`.
fn s22_expiry_with_ops_in_flight() -> Script {
    Script::new("S22_expiry_with_ops_in_flight", 2)
        .op(1, exists("/@/answered", true))
        .act(0, Action::HoldReplies)
        .act(0, Action::Send(create("/@/answered", E)))
        .act(0, Action::Expire)
        .op(1, exists("/@/answered", false))
        .op(0, exists("/@/answered", false))
        .op(1, create("/@/after", P))
}

/// Per-op codes of failed multis, decoded from the server's reply: rolled
/// back (0) before the failing op, its code, `RuntimeInconsistency` after.
fn s31_failed_multi_codes_from_the_wire() -> Script {
    Script::new("S31_failed_multi_codes_from_the_wire", 1)
        .op(0, create("/@/c", P))
        .op(
            0,
            multi(vec![
                check("/@/c", 0),
                set("/@/c", b"v", 0),
                create("/@/c", P),
                delete("/@/c", -1),
                check("/@/c", 5),
            ]),
        )
        .op(0, multi(vec![delete("/@/c", 3), create("/@/d", P)]))
        .op(
            0,
            multi(vec![
                create("/@/d", P),
                create("/@/d/e", E),
                create("/@/d/e/f", P),
            ]),
        )
        .op(0, get("/@/c", false))
}

/// `PathUtils.validatePath` refuses `.`/`..` as the last component and
/// characters outside the BMP (surrogate pairs in Java) before sending.
fn s1_dot_components_and_non_bmp_are_refused() -> Script {
    Script::new("S1_dot_components_and_non_bmp_are_refused", 1)
        .op(0, create("/@/a", P))
        .op(0, exists("/@/a/.", false))
        .op(0, get("/@/a/..", false))
        .op(0, create("/@/a/.", P))
        .op(0, set("/@/a/..", b"v", -1))
        .op(0, create("/@/a/\u{1F600}", P))
        .op(0, multi(vec![create("/@/b", P), delete("/@/a/.", -1)]))
        .op(0, create("/@/after", P))
}
