//! One test (or a few) per rule S32–S38 of `docs/ZK-SEMANTICS.md`: the ops
//! ZooKeeper 3.6+ added that recipes and client libraries (Curator, kazoo)
//! use — `getEphemerals`, `getAllChildrenNumber`, `multiRead`, container
//! nodes and their reaper, TTL creates, persistent and recursive watches,
//! `removeWatches` / `checkWatches`. Named after the rule ids.

use crate::support;

use support::*;
use zksim::script::{Observed, Step};
use zksim::world::CONTAINER_CHECK_TICKS;
use zksim::{
    AddWatchMode, CreateMode, Event, EventType, Fault, Op, Reply, Response, SessionEvent,
    WatchedEvent, WatcherType, ZkError,
};

/// The replies a client saw, in order.
fn replies(sim: &Sim, client: usize) -> Vec<Reply> {
    sim.client(client)
        .replies()
        .map(|(_, r)| r.clone())
        .collect()
}

/// The watch events a client saw, in order.
fn events(sim: &Sim, client: usize) -> Vec<WatchedEvent> {
    sim.seen(client)
        .into_iter()
        .filter_map(|o| match o {
            Observed::Watch(w) => Some(w),
            _ => None,
        })
        .collect()
}

fn ev(kind: EventType, path: &str) -> WatchedEvent {
    WatchedEvent {
        kind,
        path: path.into(),
    }
}

fn czxid(reply: &Reply) -> i64 {
    match reply {
        Ok(Response::Created { stat, .. }) => stat.czxid,
        other => panic!("not a create: {other:?}"),
    }
}

fn add_watch(path: &str, mode: AddWatchMode) -> Op {
    Op::AddWatch {
        path: path.into(),
        mode,
    }
}

fn remove_watches(path: &str, kind: WatcherType) -> Op {
    Op::RemoveWatches {
        path: path.into(),
        kind,
    }
}

fn check_watches(path: &str, kind: WatcherType) -> Op {
    Op::CheckWatches {
        path: path.into(),
        kind,
    }
}

fn container(path: &str) -> Op {
    create(path, CreateMode::Container)
}

// ---- S32 getEphemerals ----

#[test]
fn s32_get_ephemerals_lists_the_sessions_own_by_string_prefix() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Send(ephemeral("/a/x")),
                Step::Send(ephemeral("/ab")),
                Step::Send(ephemeral("/b")),
                Step::Send(Op::GetEphemerals {
                    prefix: "/a".into(),
                }),
                Step::Send(Op::GetEphemerals { prefix: "/".into() }),
                Step::Send(Op::GetEphemerals {
                    prefix: "/c".into(),
                }),
            ],
            vec![Step::Sleep(1), Step::Send(ephemeral("/a/other"))],
        ],
    );
    sim.settle();
    sim.ticks(1);
    sim.settle();
    let r = replies(&sim, 0);
    let listed = |i: usize| match &r[i] {
        Ok(Response::Ephemerals(paths)) => {
            let mut paths = paths.clone();
            paths.sort();
            paths
        }
        other => panic!("reply {i}: {other:?}"),
    };
    // `/a` is a string prefix: `/ab` matches, `/b` does not; another
    // session's `/a/other` is never listed.
    assert_eq!(listed(4), vec!["/a/x", "/ab"]);
    assert_eq!(listed(5), vec!["/a/x", "/ab", "/b"]);
    assert_eq!(listed(6), Vec::<String>::new());
}

#[test]
fn s32_get_ephemerals_lists_in_the_order_a_close_deletes() {
    // Five siblings list in Java `HashSet` order, as S24's close deletes them.
    let mut script: Vec<Step> = ["/e-0", "/e-1", "/e-2", "/e-3", "/e-4"]
        .iter()
        .map(|p| Step::Send(ephemeral(p)))
        .collect();
    script.push(Step::Send(Op::GetEphemerals { prefix: "/".into() }));
    let mut sim = Sim::scripts(1, vec![script]);
    sim.settle();
    let close = sim
        .world
        .leader_tree()
        .prepare_close_session(sim.world.session_of(0));
    let zksim::tree::Txn::CloseSession { ephemerals, .. } = close else {
        panic!("not a close");
    };
    assert_eq!(
        replies(&sim, 0)[5],
        Ok(Response::Ephemerals(ephemerals.clone()))
    );
    // And that order is not the sorted one.
    assert_ne!(ephemerals, {
        let mut sorted = ephemerals.clone();
        sorted.sort();
        sorted
    });
}

// ---- S33 getAllChildrenNumber ----

#[test]
fn s33_get_all_children_number_counts_every_descendant() {
    let count = |path: &str| Op::GetAllChildrenNumber { path: path.into() };
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(count("/")),
            Step::Send(persistent("/a")),
            Step::Send(persistent("/a/b")),
            Step::Send(persistent("/a/b/c")),
            Step::Send(persistent("/ab")),
            Step::Send(count("/a")),
            Step::Send(count("/a/b/c")),
            Step::Send(count("/")),
            Step::Send(count("/missing")),
            Step::Send(count("/zookeeper")),
        ]],
    );
    sim.settle();
    let r = replies(&sim, 0);
    // A fresh server: `/zookeeper`, `/zookeeper/quota`, `/zookeeper/config`.
    assert_eq!(r[0], Ok(Response::AllChildrenNumber(3)));
    // `/ab` is not below `/a`.
    assert_eq!(r[5], Ok(Response::AllChildrenNumber(2)));
    assert_eq!(r[6], Ok(Response::AllChildrenNumber(0)));
    assert_eq!(r[7], Ok(Response::AllChildrenNumber(7)));
    assert_eq!(r[8], Err(ZkError::NoNode));
    assert_eq!(r[9], Ok(Response::AllChildrenNumber(2)));
}

// ---- S34 multiRead ----

#[test]
fn s34_multi_read_answers_each_read_in_place_without_rollback() {
    let multi = Op::MultiRead(vec![
        get_data("/a", false),
        get_data("/missing", false),
        children("/a", false),
        children("/missing", false),
    ]);
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(persistent("/a")),
            Step::Send(persistent("/a/x")),
            Step::Send(multi),
            Step::Send(Op::MultiRead(vec![])),
            // Refused by the client before sending: a write or a watch inside.
            Step::Send(Op::MultiRead(vec![persistent("/b")])),
            Step::Send(Op::MultiRead(vec![get_data("/a", true)])),
        ]],
    );
    sim.settle();
    let r = replies(&sim, 0);
    let Ok(Response::Multi(items)) = &r[2] else {
        panic!("{:?}", r[2]);
    };
    assert_eq!(items.len(), 4);
    assert!(matches!(items[0], Ok(Response::Data { .. })));
    assert_eq!(items[1], Err(ZkError::NoNode));
    assert!(
        matches!(&items[2], Ok(Response::Children { names, .. }) if names == &["x".to_string()])
    );
    assert_eq!(items[3], Err(ZkError::NoNode));
    assert_eq!(r[3], Ok(Response::Multi(vec![])));
    assert_eq!(r[4], Err(ZkError::BadArguments));
    assert_eq!(r[5], Err(ZkError::BadArguments));
    // A multiRead takes no zxid and registers no watch.
    assert_eq!(sim.world.last_zxid(), czxid(&r[1]));
    assert!(sim.world.server_watches(0).is_empty());
}

#[test]
fn s34_multi_read_is_answered_by_the_clients_own_server() {
    // A follower that has not applied the write answers from its own tree.
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![Step::Send(persistent("/a"))],
            vec![
                Step::Sleep(1),
                Step::Send(Op::MultiRead(vec![get_data("/a", false)])),
            ],
        ],
    );
    sim.request(0);
    sim.ticks(1);
    sim.run_while(|e| matches!(e, Event::Timer { client: 1 } | Event::Request { client: 1 }));
    sim.drain(1);
    assert_eq!(
        replies(&sim, 1)[0],
        Ok(Response::Multi(vec![Err(ZkError::NoNode)]))
    );
}

// ---- S35 containers and the reaper ----

#[test]
fn s35_container_is_reaped_once_empty_after_having_had_a_child() {
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(container("/c")),
            Step::Send(container("/never")),
            Step::Send(persistent("/c/x")),
            Step::Send(ephemeral("/c/e")),
            Step::Send(exists("/c", true)),
            Step::Send(delete("/c/x")),
            Step::Send(delete("/c/e")),
            Step::WaitWatch,
        ]],
    );
    sim.settle();
    let r = replies(&sim, 0);
    let Ok(Response::Created { stat, .. }) = &r[0] else {
        panic!("{:?}", r[0]);
    };
    // The server marks a container with `ephemeralOwner = Long.MIN_VALUE`,
    // which clients read as 0 (measured); children (ephemeral ones too)
    // may be created under it.
    assert_eq!(stat.ephemeral_owner, 0);
    assert!(sim
        .world
        .leader_tree()
        .get("/c")
        .is_some_and(|n| n.is_container()));
    assert!(r[2].is_ok() && r[3].is_ok(), "{r:?}");
    let before = sim.world.last_zxid();
    // Empty now, but nothing happens until the reaper's pass.
    sim.ticks(CONTAINER_CHECK_TICKS - 1);
    assert!(sim.world.leader_tree().get("/c").is_some());
    assert_eq!(sim.world.last_zxid(), before);
    sim.ticks(1);
    // One deleteContainer, one zxid; the never-used container stays.
    assert!(sim.world.leader_tree().get("/c").is_none());
    assert!(sim.world.leader_tree().get("/never").is_some());
    assert_eq!(sim.world.last_zxid(), before + 1);
    sim.settle();
    assert_eq!(events(&sim, 0), vec![ev(EventType::NodeDeleted, "/c")]);
}

#[test]
fn s35_a_container_with_children_is_not_reaped_and_ephemeral_parents_still_refuse() {
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(container("/c")),
            Step::Send(persistent("/c/x")),
            Step::Send(ephemeral("/e")),
            Step::Send(container("/e/c")),
        ]],
    );
    sim.settle();
    sim.ticks(CONTAINER_CHECK_TICKS);
    assert!(sim.world.leader_tree().get("/c").is_some());
    assert_eq!(replies(&sim, 0)[3], Err(ZkError::NoChildrenForEphemerals));
    // A container is not an ephemeral: no session owns it, so closing the
    // creator's session leaves it.
    assert!(sim
        .world
        .leader_tree()
        .ephemerals_of(sim.world.session_of(0))
        .iter()
        .all(|p| p == "/e"));
}

#[test]
fn s35_the_reaper_runs_only_every_check_interval() {
    // A container emptied right after a pass waits for the next one.
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(container("/c")),
            Step::Send(persistent("/c/x")),
            Step::Sleep(CONTAINER_CHECK_TICKS + 1),
            Step::Send(delete("/c/x")),
        ]],
    );
    sim.settle();
    // The pass at tick 30 found /c with a child.
    sim.ticks(CONTAINER_CHECK_TICKS + 1);
    sim.settle();
    assert!(sim.world.leader_tree().get("/c").is_some());
    assert!(sim.world.waits_on_time(), "the reaper has work to do");
    sim.ticks(CONTAINER_CHECK_TICKS - 2);
    assert!(sim.world.leader_tree().get("/c").is_some());
    sim.ticks(1);
    assert!(sim.world.leader_tree().get("/c").is_none());
}

// ---- S36 TTL creates ----

#[test]
fn s36_ttl_create_is_unimplemented_and_takes_a_zxid() {
    let ttl = |path: &str, ttl_ms| create(path, CreateMode::PersistentWithTtl { ttl_ms });
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(persistent("/a")),
            Step::Send(ttl("/t", 1000)),
            Step::Send(create(
                "/a/s-",
                CreateMode::PersistentSequentialWithTtl { ttl_ms: 1000 },
            )),
            // Refused by the client: no zxid.
            Step::Send(ttl("/t", 0)),
            Step::Send(ttl("/t", zksim::proto::TTL_MAX_MS + 1)),
            Step::Send(persistent("/b")),
        ]],
    );
    sim.settle();
    let r = replies(&sim, 0);
    assert_eq!(r[1], Err(ZkError::Unimplemented));
    assert_eq!(r[2], Err(ZkError::Unimplemented));
    assert_eq!(r[3], Err(ZkError::BadArguments));
    assert_eq!(r[4], Err(ZkError::BadArguments));
    assert_eq!(czxid(&r[5]) - czxid(&r[0]), 3);
    assert!(sim.world.leader_tree().get("/t").is_none());
}

// ---- S37 persistent and recursive watches ----

#[test]
fn s37_persistent_watch_fires_without_being_consumed() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(add_watch("/p", AddWatchMode::Persistent)),
                Step::WaitWatch,
                Step::WaitWatch,
                Step::WaitWatch,
                Step::WaitWatch,
                Step::WaitWatch,
            ],
            vec![
                Step::Sleep(1),
                Step::Send(persistent("/p")),
                Step::Send(set_data("/p", b"1")),
                Step::Send(set_data("/p", b"2")),
                Step::Send(persistent("/p/c")),
                Step::Send(persistent("/p/c/d")),
                Step::Send(delete("/p/c/d")),
                Step::Send(delete("/p/c")),
                Step::Send(delete("/p")),
            ],
        ],
    );
    sim.settle();
    assert_eq!(replies(&sim, 0), vec![Ok(Response::Done)]);
    sim.ticks(1);
    sim.settle();
    use EventType::*;
    // Data and child events of the path itself, a grandchild's nothing; a
    // delete fires once (data and child tables, one session).
    assert_eq!(
        events(&sim, 0),
        vec![
            ev(NodeCreated, "/p"),
            ev(NodeDataChanged, "/p"),
            ev(NodeDataChanged, "/p"),
            ev(NodeChildrenChanged, "/p"),
            ev(NodeChildrenChanged, "/p"),
            ev(NodeDeleted, "/p"),
        ]
    );
    // Still armed after the node went.
    assert_eq!(sim.world.server_watches(0).persistent_watches().count(), 1);
}

#[test]
fn s37_recursive_watch_hears_the_subtree_but_no_child_events() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![Step::Send(add_watch(
                "/r",
                AddWatchMode::PersistentRecursive,
            ))],
            vec![
                Step::Sleep(1),
                Step::Send(persistent("/r")),
                Step::Send(persistent("/r/a")),
                Step::Send(persistent("/r/a/b")),
                Step::Send(set_data("/r/a/b", b"x")),
                Step::Send(persistent("/rx")),
                Step::Send(delete("/r/a/b")),
            ],
        ],
    );
    sim.settle();
    sim.ticks(1);
    sim.settle();
    sim.drain(0);
    use EventType::*;
    assert_eq!(
        events(&sim, 0),
        vec![
            ev(NodeCreated, "/r"),
            ev(NodeCreated, "/r/a"),
            ev(NodeCreated, "/r/a/b"),
            ev(NodeDataChanged, "/r/a/b"),
            ev(NodeDeleted, "/r/a/b"),
        ]
    );
}

#[test]
fn s37_a_one_shot_watch_on_the_same_path_replaces_the_persistent_one() {
    // ZOOKEEPER-4466: `getData(watch)` turns the data table's entry into a
    // one-shot watch; the child table's stays persistent.
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/p")),
                Step::Send(add_watch("/p", AddWatchMode::Persistent)),
                Step::Send(get_data("/p", true)),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(set_data("/p", b"1")),
                Step::Send(set_data("/p", b"2")),
                Step::Send(persistent("/p/c")),
                Step::Send(persistent("/p/d")),
            ],
        ],
    );
    sim.settle();
    sim.ticks(1);
    sim.settle();
    sim.drain(0);
    use EventType::*;
    assert_eq!(
        events(&sim, 0),
        vec![
            ev(NodeDataChanged, "/p"),
            ev(NodeChildrenChanged, "/p"),
            ev(NodeChildrenChanged, "/p"),
        ]
    );
}

#[test]
fn s37_set_watches2_rearms_persistent_watches_without_replaying_missed_events() {
    let mut sim = Sim::new(
        zksim::Config {
            servers: 1,
            faults: budget_all(1),
            ..zksim::Config::default()
        },
        vec![
            zksim::script::Scripted::new(vec![
                Step::Send(add_watch("/p", AddWatchMode::PersistentRecursive)),
                Step::WaitWatch,
            ]),
            zksim::script::Scripted::new(vec![
                Step::Sleep(1),
                Step::Send(persistent("/p")),
                Step::Sleep(1),
                Step::Send(persistent("/p/after")),
            ]),
        ],
    );
    sim.settle();
    sim.fault(Fault::DropConnection { client: 0 });
    sim.drain(0);
    // While client 0 is away, /p is created: nothing replays it.
    sim.ticks(1);
    sim.run_while(|e| matches!(e, Event::Timer { client: 1 } | Event::Request { client: 1 }));
    sim.settle();
    sim.connect(0, 0);
    sim.drain(0);
    assert!(sim.world.server_watches(0).persistent_watches().count() == 1);
    sim.ticks(1);
    sim.settle();
    assert_eq!(
        events(&sim, 0),
        vec![ev(EventType::NodeCreated, "/p/after")]
    );
    assert!(sim
        .seen(0)
        .contains(&Observed::Session(SessionEvent::SyncConnected)));
}

// ---- S38 removeWatches / checkWatches ----

#[test]
fn s38_remove_watches_removes_the_servers_watch_or_answers_no_watcher() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Send(get_data("/a", true)),
                Step::Send(children("/a", true)),
                Step::Send(remove_watches("/a", WatcherType::Data)),
                Step::Send(remove_watches("/a", WatcherType::Data)),
                Step::Send(remove_watches("/b", WatcherType::Any)),
                Step::Send(add_watch("/b", AddWatchMode::Persistent)),
                Step::Send(remove_watches("/b", WatcherType::Any)),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(set_data("/a", b"1")),
                Step::Send(persistent("/a/c")),
                Step::Send(persistent("/b")),
            ],
        ],
    );
    sim.settle();
    let r = replies(&sim, 0);
    assert_eq!(r[3], Ok(Response::Done));
    assert_eq!(r[4], Err(ZkError::NoWatcher));
    assert_eq!(r[5], Err(ZkError::NoWatcher));
    assert_eq!(r[7], Ok(Response::Done));
    assert!(sim.world.client_watches(0).data.is_empty());
    sim.ticks(1);
    sim.settle();
    // The data watch is gone, the child watch is still there; /b hears nothing.
    assert_eq!(
        events(&sim, 0),
        vec![ev(EventType::NodeChildrenChanged, "/a")]
    );
    assert_eq!(ZkError::NoWatcher.code(), -121);
}

#[test]
fn s38_check_watches_looks_for_any_sessions_watch_and_the_library_drops_its_own() {
    // 3.8.0's `WatchManager.containsWatcher` answers whether anyone watches
    // the path; the Java client then removes its own watch locally (and
    // fails with NoWatcher if it had none), while the server keeps its.
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Send(get_data("/a", true)),
                Step::Send(check_watches("/a", WatcherType::Data)),
                Step::Sleep(2),
                Step::Send(set_data("/a", b"x")),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(check_watches("/a", WatcherType::Data)),
                Step::Send(check_watches("/a", WatcherType::Children)),
            ],
        ],
    );
    sim.settle();
    let r0 = replies(&sim, 0);
    assert_eq!(r0[2], Ok(Response::Done));
    assert!(sim.world.client_watches(0).data.is_empty());
    assert!(sim
        .world
        .server_watches(0)
        .has_data_watch(sim.world.session_of(0), "/a"));
    // The server's check, for a session that watches nothing.
    let other = sim.world.session_of(1);
    let watches = sim.world.server_watches(0);
    assert!(watches.contains_watcher(other, "/a", WatcherType::Data));
    assert!(watches.contains_watcher(other, "/a", WatcherType::Any));
    assert!(!watches.contains_watcher(other, "/a", WatcherType::Children));
    sim.ticks(1);
    sim.settle();
    // Client 1 has no watch: the server says OK (someone watches /a), the
    // library finds nothing of its own to remove.
    assert_eq!(
        replies(&sim, 1),
        vec![Err(ZkError::NoWatcher), Err(ZkError::NoWatcher)]
    );
    sim.ticks(1);
    sim.settle();
    // The server's watch fires; the Java client hands the event to nobody.
    assert!(!sim
        .world
        .server_watches(0)
        .has_data_watch(sim.world.session_of(0), "/a"));
    assert!(events(&sim, 0).is_empty());
}
