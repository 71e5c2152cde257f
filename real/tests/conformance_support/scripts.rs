//! Hand-written scripts, one or more per rule of `docs/ZK-SEMANTICS.md`
//! that a single real server shows. Each is named after its rule.
//! `/@` is the script's own fresh root node.

use zkreal::conformance::{Action, Script};

use super::ops::*;

pub fn all() -> Vec<Script> {
    vec![
        s1_bad_paths_are_refused(),
        s1_reserved_nodes(),
        s2_sequential_trailing_slash(),
        s3_create_errors_take_zxids(),
        s4_no_children_for_ephemerals(),
        s5_suffix_skips_deletes(),
        s5_suffix_after_three_deletes(),
        s7_ephemeral_owner(),
        s8_parent_stat_on_create(),
        s10_delete_rules(),
        s11_set_data_versions(),
        s12_large_data_under_the_limit(),
        s14_exists_watch_on_absent_node(),
        s15_no_watch_on_no_node(),
        s16_triggers(),
        s16_delete_fires_data_and_child_watchers(),
        s16_multi_create_then_delete_fires_each(),
        s17_one_shot(),
        s17_one_node_deleted_for_data_and_child_watch(),
        s18_event_before_later_reply(),
        s22_expiry_deletes_ephemerals(),
        s23_expired_handle_is_dead(),
        s24_close_deletes_ephemerals(),
        s24_close_fires_child_watch_of_sequential(),
        s25_set_watches_replay(),
        s25_no_event_for_create_and_delete_while_away(),
        s25_child_watch_on_deleted_node(),
        s27_writes_totally_ordered(),
        s29_sync(),
        s30_children_are_a_set(),
        s31_multi_failure_results(),
        s31_multi_success_shares_a_zxid(),
        s31_multi_sequential(),
        s31_failed_multi_fires_nothing(),
    ]
}

fn s1_bad_paths_are_refused() -> Script {
    Script::new("S1_bad_paths_are_refused", 1)
        .op(0, create("/@//a", P))
        .op(0, create("/@/a/", P))
        .op(0, exists("/@/./a", false))
        .op(0, get("/@/../a", false))
        .op(0, kids("", false))
        .op(0, multi(vec![create("/@/ok", P), create("/@//bad", P)]))
        .op(0, exists("/@/ok", false))
}

fn s1_reserved_nodes() -> Script {
    Script::new("S1_reserved_nodes", 1)
        .op(0, delete("/", -1))
        .op(0, delete("/zookeeper", -1))
        .op(0, delete("/zookeeper/quota", -1))
        .op(0, delete("/zookeeper/config", -1))
        .op(0, set("/zookeeper/config", b"x", -1))
        .op(0, create("/zookeeper/config/x", P))
        .op(0, exists("/zookeeper", false))
        .op(0, get("/zookeeper/config", false))
}

fn s2_sequential_trailing_slash() -> Script {
    Script::new("S2_sequential_trailing_slash", 1)
        .op(0, create("/@/q", P))
        .op(0, create("/@/q/", PS))
        .op(0, create("/@/q/", ES))
        .op(0, kids("/@/q", false))
}

fn s3_create_errors_take_zxids() -> Script {
    Script::new("S3_create_errors_take_zxids", 2)
        .op(0, create("/@/a/b", P))
        .op(0, create("/@/a", P))
        .op(1, create("/@/a", P))
        .op(1, delete("/@/nope", -1))
        .op(0, create("/@/b", P))
        .op(1, exists("/@/b", false))
}

fn s4_no_children_for_ephemerals() -> Script {
    Script::new("S4_no_children_for_ephemerals", 2)
        .op(0, create("/@/e", E))
        .op(1, create("/@/e/c", P))
        .op(1, create("/@/e/", PS))
        .op(0, get("/@/e", false))
}

fn s5_suffix_skips_deletes() -> Script {
    Script::new("S5_suffix_skips_deletes", 1)
        .op(0, create("/@/p", P))
        .op(0, create("/@/p/s-", PS))
        .op(0, create("/@/p/plain", P))
        .op(0, delete("/@/p/plain", -1))
        .op(0, exists("/@/p", false))
        .op(0, create("/@/p/s-", PS))
        .op(0, create("/@/p/other-", ES))
        .op(0, kids("/@/p", false))
}

fn s5_suffix_after_three_deletes() -> Script {
    let mut s = Script::new("S5_suffix_after_three_deletes", 2).op(0, create("/@/p", P));
    for name in ["x", "y", "z"] {
        s = s.op(0, create(&format!("/@/p/{name}"), P));
    }
    for name in ["x", "y", "z"] {
        s = s.op(1, delete(&format!("/@/p/{name}"), -1));
    }
    s.op(1, exists("/@/p", false)).op(0, create("/@/p/n-", PS))
}

fn s7_ephemeral_owner() -> Script {
    Script::new("S7_ephemeral_owner", 3)
        .op(0, create("/@/e0", E))
        .op(1, create("/@/e1", ES))
        .op(2, create("/@/p", P))
        .op(2, exists("/@/e0", false))
        .op(0, get("/@/e1", false))
        .op(1, exists("/@/p", false))
}

fn s8_parent_stat_on_create() -> Script {
    Script::new("S8_parent_stat_on_create", 2)
        .op(0, create("/@/p", P))
        .op(0, set("/@/p", b"v1", -1))
        .op(1, create("/@/p/a", P))
        .op(0, exists("/@/p", false))
        .op(1, create("/@/p/b", E))
        .op(0, get("/@/p", false))
}

fn s10_delete_rules() -> Script {
    Script::new("S10_delete_rules", 2)
        .op(0, delete("/@/a", -1))
        .op(0, create("/@/a", P))
        .op(0, create("/@/a/c", P))
        .op(1, delete("/@/a", -1))
        .op(1, delete("/@/a/c", 3))
        .op(1, delete("/@/a/c", 0))
        .op(0, exists("/@/a", false))
        .op(0, set("/@/a", b"x", -1))
        .op(1, delete("/@/a", 0))
        .op(1, delete("/@/a", 1))
        .op(0, exists("/@", false))
}

fn s11_set_data_versions() -> Script {
    Script::new("S11_set_data_versions", 2)
        .op(0, set("/@/a", b"x", -1))
        .op(0, create("/@/a", P))
        .op(0, set("/@/a", b"one", 0))
        .op(1, set("/@/a", b"two", 0))
        .op(1, set("/@/a", b"three!", 1))
        .op(0, set("/@/a", b"", -1))
        .op(0, get("/@/a", false))
}

fn s12_large_data_under_the_limit() -> Script {
    Script::new("S12_large_data_under_the_limit", 1)
        .op(0, create("/@/big", P))
        .op(0, set("/@/big", &vec![b'z'; 1_000_000], -1))
        .op(0, exists("/@/big", false))
}

fn s14_exists_watch_on_absent_node() -> Script {
    Script::new("S14_exists_watch_on_absent_node", 2)
        .op(0, exists("/@/x", true))
        .op(1, create("/@/x", P))
        .op(0, exists("/@/x", true))
        .op(1, set("/@/x", b"2", -1))
}

fn s15_no_watch_on_no_node() -> Script {
    Script::new("S15_no_watch_on_no_node", 2)
        .op(0, get("/@/x", true))
        .op(0, kids("/@/x", true))
        .op(1, create("/@/x", P))
        .op(1, create("/@/x/c", P))
        .op(1, set("/@/x", b"2", -1))
        .op(0, exists("/@/x", false))
}

fn s16_triggers() -> Script {
    Script::new("S16_triggers", 2)
        .op(0, create("/@/a", P))
        .op(0, get("/@/a", true))
        .op(0, kids("/@/a", true))
        .op(0, kids("/@", true))
        .op(1, set("/@/a", b"2", -1))
        .op(1, create("/@/a/c", P))
        .op(0, kids("/@/a", true))
        .op(1, delete("/@/a/c", -1))
        .op(1, create("/@/b", P))
        .op(1, set("/@/b", b"no watch", -1))
}

fn s16_delete_fires_data_and_child_watchers() -> Script {
    Script::new("S16_delete_fires_data_and_child_watchers", 3)
        .op(0, create("/@/a", P))
        .op(1, get("/@/a", true))
        .op(2, kids("/@/a", true))
        .op(0, kids("/@", true))
        .op(0, delete("/@/a", -1))
}

fn s17_one_shot() -> Script {
    Script::new("S17_one_shot", 2)
        .op(0, create("/@/a", P))
        .op(1, exists("/@/a", true))
        .op(1, get("/@/a", true))
        .op(1, get("/@/a", true))
        .op(0, set("/@/a", b"1", -1))
        .op(0, set("/@/a", b"2", -1))
        .op(1, kids("/@/a", true))
        .op(1, kids("/@/a", true))
        .op(0, create("/@/a/c", P))
        .op(0, create("/@/a/d", P))
}

fn s17_one_node_deleted_for_data_and_child_watch() -> Script {
    Script::new("S17_one_node_deleted_for_data_and_child_watch", 2)
        .op(0, create("/@/a", P))
        .op(1, get("/@/a", true))
        .op(1, kids("/@/a", true))
        .op(0, delete("/@/a", -1))
        .op(0, create("/@/a", P))
        .op(0, set("/@/a", b"after", -1))
}

fn s18_event_before_later_reply() -> Script {
    Script::new("S18_event_before_later_reply", 2)
        .op(0, create("/@/a", P))
        .op(1, get("/@/a", true))
        .op(0, set("/@/a", b"new", -1))
        .op(1, get("/@/a", false))
}

fn s22_expiry_deletes_ephemerals() -> Script {
    Script::new("S22_expiry_deletes_ephemerals", 2)
        .op(0, create("/@/e", E))
        .op(0, create("/@/f", ES))
        .op(1, exists("/@/e", true))
        .op(1, kids("/@", true))
        .act(0, Action::Expire)
        .op(1, kids("/@", false))
}

fn s23_expired_handle_is_dead() -> Script {
    Script::new("S23_expired_handle_is_dead", 2)
        .op(0, create("/@/e", E))
        .op(0, get("/@/e", true))
        .act(0, Action::Expire)
        .op(0, exists("/@/e", false))
        .op(0, create("/@/e2", P))
        .op(1, exists("/@/e", false))
}

fn s24_close_deletes_ephemerals() -> Script {
    Script::new("S24_close_deletes_ephemerals", 2)
        .op(0, create("/@/e", E))
        .op(1, exists("/@/e", true))
        .op(1, kids("/@", true))
        .act(0, Action::Close)
        .op(1, exists("/@/e", false))
        .op(1, get("/@", false))
}

fn s25_set_watches_replay() -> Script {
    Script::new("S25_set_watches_replay", 2)
        .op(1, create("/@/a", P))
        .op(1, create("/@/c", P))
        .op(1, create("/@/d", P))
        .op(1, create("/@/gone", P))
        .op(0, get("/@/a", true))
        .op(0, exists("/@/b", true))
        .op(0, kids("/@/c", true))
        .op(0, get("/@/d", true))
        .op(0, exists("/@/gone", true))
        .act(0, Action::Disconnect)
        .op(1, set("/@/a", b"changed", -1))
        .op(1, create("/@/b", P))
        .op(1, create("/@/c/x", P))
        .op(1, delete("/@/gone", -1))
        .act(0, Action::Reconnect)
        .op(1, set("/@/d", b"later", -1))
        .op(0, exists("/@/d", false))
}

fn s25_no_event_for_create_and_delete_while_away() -> Script {
    Script::new("S25_no_event_for_create_and_delete_while_away", 2)
        .op(0, exists("/@/x", true))
        .act(0, Action::Disconnect)
        .op(1, create("/@/x", P))
        .op(1, delete("/@/x", -1))
        .act(0, Action::Reconnect)
        .op(1, create("/@/x", P))
        .op(0, exists("/@/x", false))
}

fn s27_writes_totally_ordered() -> Script {
    Script::new("S27_writes_totally_ordered", 3)
        .op(0, create("/@/a", P))
        .op(1, create("/@/b", P))
        .op(2, set("/@/a", b"2", -1))
        .op(0, set("/@/b", b"3", -1))
        .op(1, get("/@/a", false))
        .op(2, get("/@/b", false))
        .op(0, exists("/@", false))
}

fn s29_sync() -> Script {
    Script::new("S29_sync", 2)
        .op(0, create("/@/a", P))
        .op(1, sync("/@/a"))
        .op(1, get("/@/a", false))
        .op(1, sync("/@/missing"))
}

fn s30_children_are_a_set() -> Script {
    let mut s = Script::new("S30_children_are_a_set", 2).op(0, create("/@/l", P));
    for k in 0..5 {
        s = s.op(k % 2, create("/@/l/lock-", ES));
    }
    s.op(1, kids("/@/l", false))
        .op(0, create("/@/l/other-", PS))
}

fn s31_multi_failure_results() -> Script {
    Script::new("S31_multi_failure_results", 2)
        .op(
            0,
            multi(vec![
                create("/@/a", P),
                set("/@/a", b"v", 0),
                delete("/@/missing", -1),
                create("/@/b", P),
            ]),
        )
        .op(1, exists("/@/a", false))
        .op(1, create("/@/c", P))
}

fn s31_multi_success_shares_a_zxid() -> Script {
    Script::new("S31_multi_success_shares_a_zxid", 2)
        .op(1, exists("/@/a", true))
        .op(
            0,
            multi(vec![
                create("/@/a", P),
                set("/@/a", b"v", 0),
                create("/@/a/b", E),
                set("/@/a", b"w", 1),
            ]),
        )
        .op(1, get("/@/a", false))
        .op(1, kids("/@/a", false))
}

fn s31_multi_sequential() -> Script {
    Script::new("S31_multi_sequential", 1)
        .op(0, create("/@/q", P))
        .op(
            0,
            multi(vec![
                create("/@/q/n-", PS),
                create("/@/q/n-", ES),
                delete("/@/q/n-0000000000", -1),
            ]),
        )
        .op(0, kids("/@/q", false))
}

fn s16_multi_create_then_delete_fires_each() -> Script {
    Script::new("S16_multi_create_then_delete_fires_each", 2)
        .op(1, exists("/@/a", true))
        .op(1, kids("/@", true))
        .op(0, multi(vec![create("/@/a", P), delete("/@/a", -1)]))
        .op(1, exists("/@/a", false))
        .op(1, get("/@", false))
}

fn s24_close_fires_child_watch_of_sequential() -> Script {
    Script::new("S24_close_fires_child_watch_of_sequential", 3)
        .op(0, create("/@/l", P))
        .op(1, create("/@/l/n-", ES))
        .op(2, create("/@/l/n-", ES))
        .op(0, kids("/@/l", true))
        .op(2, exists("/@/l/n-0000000000", true))
        .act(1, Action::Close)
        .op(0, kids("/@/l", false))
        .op(2, exists("/@/l", false))
}

fn s25_child_watch_on_deleted_node() -> Script {
    Script::new("S25_child_watch_on_deleted_node", 2)
        .op(1, create("/@/p", P))
        .op(1, create("/@/q", P))
        .op(0, kids("/@/p", true))
        .op(0, kids("/@/q", true))
        .op(0, get("/@/q", true))
        .act(0, Action::Disconnect)
        .op(1, delete("/@/p", -1))
        .op(1, set("/@/q", b"2", -1))
        .act(0, Action::Reconnect)
        .op(1, create("/@/q/c", P))
        .op(0, exists("/@/p", false))
}

fn s31_failed_multi_fires_nothing() -> Script {
    Script::new("S31_failed_multi_fires_nothing", 2)
        .op(0, create("/@/a", P))
        .op(1, get("/@/a", true))
        .op(1, kids("/@", true))
        .op(0, multi(vec![set("/@/a", b"x", -1), create("/@/a", P)]))
        .op(0, create("/@/b", P))
        .op(1, get("/@/a", false))
}
