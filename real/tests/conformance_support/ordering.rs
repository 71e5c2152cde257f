//! Scripts that pin the orders the simulator claims to reproduce (S30,
//! S24): children and close-time events in the real server's `HashSet`
//! order, compared unsorted.
//!
//! Each was written to fail on an order the simulator once got wrong:
//! siblings created by one multi share a `czxid`, and the server inserts
//! them in the multi's op order (the simulator broke the tie by name); a
//! session's ephemeral set never shrinks, so a session that once held more
//! than 12 ephemerals deletes the rest, on close, in the order of its grown
//! table (the simulator sized it from the present count).

use zkreal::conformance::{Action, Script};

use super::ops::*;

pub fn all() -> Vec<Script> {
    vec![
        s30_multi_siblings_in_op_order(),
        s30_many_children_mixed_names(),
        s24_close_order_of_multi_ephemerals(),
        s24_close_order_after_set_grew(),
    ]
}

/// `i` and `a` share bucket 1 of an 8-slot table: listed in the multi's
/// op order (`i` first), not by name.
fn s30_multi_siblings_in_op_order() -> Script {
    Script::new("S30_multi_siblings_in_op_order", 1)
        .op(0, create("/@/m", P))
        .op(
            0,
            multi(vec![
                create("/@/m/i", P),
                create("/@/m/q", P),
                create("/@/m/a", P),
            ]),
        )
        .op(0, kids("/@/m", false))
}

/// More than 12 children (the table grows to 32) with names of mixed
/// shapes, some from one multi, some deleted and re-created.
fn s30_many_children_mixed_names() -> Script {
    let mut s = Script::new("S30_many_children_mixed_names", 2).op(0, create("/@/d", P));
    for name in ["zeta", "a", "lock-", "B", "x1", "x10"] {
        let mode = if name == "lock-" { PS } else { P };
        s = s.op(1, create(&format!("/@/d/{name}"), mode));
    }
    s = s.op(
        0,
        multi(
            ["q", "i", "a2", "Aa", "BB", "m"]
                .iter()
                .map(|n| create(&format!("/@/d/{n}"), E))
                .collect(),
        ),
    );
    s = s
        .op(0, kids("/@/d", false))
        .op(1, delete("/@/d/zeta", -1))
        .op(1, create("/@/d/zeta", P))
        .op(0, create("/@/d/lock-", ES))
        .op(0, create("/@/d/lock-", ES));
    s.op(1, kids("/@/d", false))
}

/// Ephemerals from one multi, closed: `BB` and `Aa` have the same Java
/// hash under any parent path (so one bucket in every table) and the same
/// czxid, and the server deletes them in the multi's op order, `BB` first.
/// The watcher sees the deletions in that order.
fn s24_close_order_of_multi_ephemerals() -> Script {
    let names = ["/@/BB", "/@/k", "/@/Aa", "/@/e1", "/@/lock"];
    let mut s = Script::new("S24_close_order_of_multi_ephemerals", 2)
        .op(0, multi(names.iter().map(|p| create(p, E)).collect()));
    for path in names {
        s = s.op(1, exists(path, true));
    }
    s.act(0, Action::Close).op(1, kids("/@", false))
}

/// Fourteen ephemerals (the session's set grows from 16 slots to 32), ten
/// deleted again, then close: the server never shrinks a `HashSet`, so the
/// four left are deleted in the order of the 32-slot table.
///
/// The four are chosen so that this shows under any parent path: `fO` and
/// `g0` have one Java hash, `f_` and `g@` another, 16 more (same-length
/// names under one parent differ in hash only by their own). So all four
/// share a bucket of 8 and of 16 slots but fall in two buckets of 32; born
/// in the order `g0`, `g@`, `f_`, `fO`, one pair is listed against its
/// creation order whichever bucket comes first.
fn s24_close_order_after_set_grew() -> Script {
    let kept = ["/@/g0", "/@/g@", "/@/f_", "/@/fO"];
    let fillers: Vec<String> = (0..10).map(|k| format!("/@/z{k}")).collect();
    let mut s = Script::new("S24_close_order_after_set_grew", 2);
    for path in kept
        .iter()
        .copied()
        .chain(fillers.iter().map(String::as_str))
    {
        s = s.op(0, create(path, E));
    }
    for path in kept {
        s = s.op(1, exists(path, true));
    }
    for path in &fillers {
        s = s.op(0, delete(path, -1));
    }
    s.act(0, Action::Close).op(1, kids("/@", false))
}
