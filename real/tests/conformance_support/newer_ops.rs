//! Scripts for the ops ZooKeeper added after 3.4 (rules S32–S37):
//! `getEphemerals`, `getAllChildrenNumber`, `multiRead`, container nodes
//! and their reaper, TTL creates (refused), persistent and recursive
//! watches. S38 (`removeWatches` / `checkWatches`) cannot be sent through
//! `zookeeper-client`'s API; `raw_watches.rs` compares it over raw frames.

use zkreal::conformance::{Action, Script};
use zksim::{AddWatchMode, CreateMode, Op};

use super::ops::*;

pub fn all() -> Vec<Script> {
    vec![
        s32_get_ephemerals_by_string_prefix(),
        s32_get_ephemerals_in_server_order(),
        s33_get_all_children_number(),
        s34_multi_read_results_in_place(),
        s35_container_reaped_once_emptied(),
        s35_container_reaped_after_its_ephemeral_child_goes(),
        s36_ttl_create_is_unimplemented(),
        s37_persistent_watch_stays_armed(),
        s37_recursive_watch_hears_the_subtree(),
        // Not here: SetWatches2 after a reconnect. `zookeeper-client` 0.11
        // re-sends persistent watches with `SetWatches` (its
        // `resend_watches` never raises the list index), so the real server
        // never re-arms them — the library's bug, not the server's. Compared
        // over raw frames in `raw_watches.rs` instead.
    ]
}

const C: CreateMode = CreateMode::Container;

fn ephemerals(prefix: &str) -> Op {
    Op::GetEphemerals {
        prefix: prefix.into(),
    }
}

fn count(path: &str) -> Op {
    Op::GetAllChildrenNumber { path: path.into() }
}

fn add_watch(path: &str, mode: AddWatchMode) -> Op {
    Op::AddWatch {
        path: path.into(),
        mode,
    }
}

fn s32_get_ephemerals_by_string_prefix() -> Script {
    Script::new("S32_get_ephemerals_by_string_prefix", 2)
        .op(0, create("/@/a", P))
        .op(0, create("/@/a/x", E))
        .op(0, create("/@/ab", E))
        .op(0, create("/@/b", E))
        .op(1, create("/@/a/y", E))
        .op(0, ephemerals("/@/a"))
        .op(1, ephemerals("/@/a"))
        .op(0, ephemerals("/@/zz"))
        .op(0, ephemerals("/@/a/"))
        // `/` lists all of the session's own, whoever else is on the server.
        .op(0, ephemerals("/"))
        .op(0, create("/@/after", P))
}

fn s32_get_ephemerals_in_server_order() -> Script {
    let mut script = Script::new("S32_get_ephemerals_in_server_order", 1);
    for i in [3, 0, 4, 1, 2, 10, 11] {
        script = script.op(0, create(&format!("/@/e-{i}"), E));
    }
    script.op(0, ephemerals("/@/e-"))
}

fn s33_get_all_children_number() -> Script {
    Script::new("S33_get_all_children_number", 1)
        .op(0, count("/@"))
        .op(0, create("/@/a", P))
        .op(0, create("/@/a/b", P))
        .op(0, create("/@/a/b/c", E))
        .op(0, create("/@/ab", P))
        .op(0, count("/@"))
        .op(0, count("/@/a"))
        .op(0, count("/@/a/b/c"))
        .op(0, count("/@/missing"))
        .op(0, count("/zookeeper"))
        .op(0, count("/@//bad"))
}

fn s34_multi_read_results_in_place() -> Script {
    Script::new("S34_multi_read_results_in_place", 1)
        .op(0, create("/@/a", P))
        .op(0, create("/@/a/x", P))
        .op(
            0,
            Op::MultiRead(vec![
                get("/@/a", false),
                get("/@/missing", false),
                kids("/@/a", false),
                kids("/@/missing", false),
                get("/@/a/x", false),
            ]),
        )
        .op(0, Op::MultiRead(vec![]))
        .op(0, Op::MultiRead(vec![get("/@/a", true)]))
        .op(0, Op::MultiRead(vec![create("/@/w", P)]))
        // No zxid was taken by any of them.
        .op(0, create("/@/after", P))
}

fn s35_container_reaped_once_emptied() -> Script {
    Script::new("S35_container_reaped_once_emptied", 2)
        .op(0, create("/@/c", C))
        .op(0, create("/@/never", C))
        .op(0, create("/@/c/x", P))
        .op(0, exists("/@/c", true))
        .op(1, kids("/@", true))
        .op(0, get("/@/c", false))
        .op(1, delete("/@/c/x", -1))
        .act(1, Action::AwaitReaped("/@/c".into()))
        .op(0, exists("/@/c", false))
        .op(0, exists("/@/never", false))
        // The reaper's delete took one zxid.
        .op(0, create("/@/after", P))
}

fn s35_container_reaped_after_its_ephemeral_child_goes() -> Script {
    // Curator's lock parents: a container holding the lock nodes, whose
    // owner's close leaves it empty.
    Script::new("S35_container_reaped_after_its_ephemeral_child_goes", 2)
        .op(0, create("/@/lock", C))
        .op(1, create("/@/lock/n-", ES))
        .op(0, kids("/@/lock", true))
        .act(1, Action::Close)
        .act(0, Action::AwaitReaped("/@/lock".into()))
        .op(0, create("/@/lock", C))
}

fn s36_ttl_create_is_unimplemented() -> Script {
    let ttl = |ttl_ms| CreateMode::PersistentWithTtl { ttl_ms };
    Script::new("S36_ttl_create_is_unimplemented", 1)
        .op(0, create("/@/before", P))
        .op(0, create("/@/t", ttl(1000)))
        .op(
            0,
            create(
                "/@/s-",
                CreateMode::PersistentSequentialWithTtl { ttl_ms: 5 },
            ),
        )
        // Refused by the client library: no zxid.
        .op(0, create("/@/t", ttl(0)))
        .op(0, create("/@/after", P))
        .op(0, exists("/@/t", false))
}

fn s37_persistent_watch_stays_armed() -> Script {
    Script::new("S37_persistent_watch_stays_armed", 2)
        .op(0, add_watch("/@/p", AddWatchMode::Persistent))
        .op(1, create("/@/p", P))
        .op(1, set("/@/p", b"1", -1))
        .op(1, set("/@/p", b"2", -1))
        .op(1, create("/@/p/c", P))
        .op(1, create("/@/p/c/d", P))
        .op(1, delete("/@/p/c/d", -1))
        .op(1, delete("/@/p/c", -1))
        .op(1, delete("/@/p", -1))
        .op(1, create("/@/p", P))
}

fn s37_recursive_watch_hears_the_subtree() -> Script {
    Script::new("S37_recursive_watch_hears_the_subtree", 2)
        .op(0, add_watch("/@/r", AddWatchMode::PersistentRecursive))
        .op(1, create("/@/r", P))
        .op(1, create("/@/r/a", P))
        .op(1, create("/@/r/a/b", E))
        .op(1, set("/@/r/a/b", b"x", -1))
        .op(1, create("/@/rx", P))
        .op(1, delete("/@/r/a/b", -1))
        .op(1, set("/@/r", b"y", -1))
}
