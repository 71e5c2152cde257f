//! One test per world-level rule of `docs/ZK-SEMANTICS.md` (S14–S29), named
//! after the rule id. Each builds a small world of scripted clients, drives
//! it step by step and asserts what the real server would make each client
//! see: which events, which replies, in which order.

use crate::support;

use support::*;
use zksim::script::{Observed, Step};
use zksim::{
    Config, Event, EventType, Fault, FaultBudget, Happening, Response, SessionEvent, WatchedEvent,
    ZkError,
};

fn watch(kind: EventType, path: &str) -> Observed {
    Observed::Watch(WatchedEvent {
        kind,
        path: path.into(),
    })
}

fn is_ok(o: &Observed) -> bool {
    matches!(o, Observed::Reply { reply: Ok(_), .. })
}

fn err_of(o: &Observed) -> Option<ZkError> {
    match o {
        Observed::Reply { reply: Err(e), .. } => Some(*e),
        _ => None,
    }
}

/// The watch and session events a client saw, in order (replies left out).
fn notifications(sim: &Sim, client: usize) -> Vec<Observed> {
    sim.seen(client)
        .into_iter()
        .filter(|o| matches!(o, Observed::Watch(_) | Observed::Session(_)))
        .collect()
}

#[test]
fn s14_exists_watch_on_missing_node_fires_node_created() {
    // Client 0 watches a missing node; client 1 creates it later.
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![Step::Send(exists("/a", true)), Step::WaitWatch],
            vec![Step::Send(persistent("/a"))],
        ],
    );
    sim.request(0);
    sim.receive(0);
    assert!(matches!(
        sim.seen(0)[0],
        Observed::Reply {
            reply: Ok(Response::Exists(None)),
            ..
        }
    ));
    sim.settle();
    assert_eq!(
        notifications(&sim, 0),
        vec![watch(EventType::NodeCreated, "/a")]
    );
    assert!(zksim::Client::is_done(sim.client(0)));
}

#[test]
fn s15_get_data_and_get_children_set_no_watch_on_missing_node() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(get_data("/a", true)),
                Step::Send(children("/a", true)),
            ],
            vec![
                Step::Send(persistent("/a")),
                Step::Send(persistent("/a/x")),
                Step::Send(set_data("/a", b"v")),
            ],
        ],
    );
    sim.request(0);
    sim.receive(0);
    sim.request(0);
    sim.receive(0);
    assert_eq!(err_of(&sim.seen(0)[0]), Some(ZkError::NoNode));
    assert_eq!(err_of(&sim.seen(0)[1]), Some(ZkError::NoNode));
    assert!(sim.world.client_watches(0).is_empty());
    sim.settle();
    assert_eq!(
        notifications(&sim, 0),
        vec![],
        "no watch was set, none may fire"
    );
}

#[test]
fn s16_triggers_for_create_set_and_delete() {
    // Client 0 builds /p and /p/c and watches both; client 1 changes them.
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/p")),
                Step::Send(persistent("/p/c")),
                Step::Send(get_data("/p/c", true)),
                Step::Send(children("/p/c", true)),
                Step::Send(children("/p", true)),
                Step::Send(exists("/p/d", true)),
            ],
            vec![
                Step::Send(set_data("/p/c", b"1")),
                Step::Send(delete("/p/c")),
                Step::Send(persistent("/p/d")),
            ],
        ],
    );
    sim.run_while(|e| {
        matches!(
            e,
            Event::Request { client: 0 } | Event::Receive { client: 0 }
        )
    });
    assert_eq!(sim.seen(0).len(), 6);
    assert!(sim.seen(0).iter().all(is_ok));
    sim.settle();
    assert_eq!(
        notifications(&sim, 0),
        vec![
            // setData /p/c: the data watch fires; the child watch stays.
            watch(EventType::NodeDataChanged, "/p/c"),
            // delete /p/c: NodeDeleted to its child watcher (the data watch
            // is spent), NodeChildrenChanged to the parent's child watcher.
            watch(EventType::NodeDeleted, "/p/c"),
            watch(EventType::NodeChildrenChanged, "/p"),
            // create /p/d: NodeCreated to the exists watcher; the parent's
            // child watch was spent by the delete.
            watch(EventType::NodeCreated, "/p/d"),
        ]
    );
}

#[test]
fn s16_deleted_node_with_data_and_child_watch_notifies_once() {
    // Client 1 deletes /a once client 0 holds both watches.
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Send(get_data("/a", true)),
                Step::Send(children("/a", true)),
                Step::WaitWatch,
            ],
            vec![Step::Sleep(1), Step::Send(delete("/a"))],
        ],
    );
    sim.run_while(|e| {
        matches!(
            e,
            Event::Request { client: 0 } | Event::Receive { client: 0 }
        )
    });
    sim.ticks(1);
    sim.settle();
    assert_eq!(
        notifications(&sim, 0),
        vec![watch(EventType::NodeDeleted, "/a")]
    );
    assert!(sim.world.client_watches(0).is_empty());
}

#[test]
fn s17_same_watch_twice_fires_once_and_only_once() {
    let mut sim = Sim::scripts(
        1,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Send(get_data("/a", true)),
                Step::Send(get_data("/a", true)),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(set_data("/a", b"1")),
                Step::Send(set_data("/a", b"2")),
            ],
        ],
    );
    sim.run_while(|e| {
        matches!(
            e,
            Event::Request { client: 0 } | Event::Receive { client: 0 }
        )
    });
    sim.ticks(1);
    sim.settle();
    assert_eq!(
        notifications(&sim, 0),
        vec![watch(EventType::NodeDataChanged, "/a")]
    );
}

#[test]
fn s18_watch_event_arrives_before_reply_to_later_read() {
    // Client 0 on follower 1 reads /a with a watch and pipelines a second
    // read; client 1 on the leader changes /a in between.
    // Clients are round-robin: client 1 is on follower 1.
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![Step::Sleep(1), Step::Send(set_data("/a", b"new"))],
            vec![
                Step::Send(persistent("/a")),
                Step::SendNoWait(get_data("/a", true)),
                Step::SendNoWait(get_data("/a", false)),
            ],
        ],
    );
    assert_eq!(sim.world.server_of(1), Some(1));
    sim.request(1); // create /a at the leader
    sim.apply(1); // the follower applies it and answers the create
    sim.receive(1); // reply to the create: client 1 now sends both reads
    sim.request(1); // first read answered from the follower, watch registered
    sim.ticks(1);
    sim.step(Event::Timer { client: 0 });
    sim.request(0); // setData ordered by the leader
    sim.apply(1); // the follower applies it: the watch fires
    sim.request(1); // second read answered after the event
    sim.drain(1);
    let seen = sim.seen(1);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(
        matches!(&seen[1], Observed::Reply { reply: Ok(Response::Data { data, .. }), .. } if data.is_empty())
    );
    assert_eq!(seen[2], watch(EventType::NodeDataChanged, "/a"));
    assert!(
        matches!(&seen[3], Observed::Reply { reply: Ok(Response::Data { data, .. }), .. } if data == b"new")
    );
}

#[test]
fn s19_lagging_follower_fires_watch_late() {
    // Client 1 on follower 1 watches /a; client 0 on the leader deletes it.
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![
                Step::Send(persistent("/a")),
                Step::Sleep(1),
                Step::Send(delete("/a")),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(exists("/a", true)),
                Step::WaitWatch,
            ],
        ],
    );
    sim.request(0);
    sim.receive(0);
    sim.apply(1);
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 });
    sim.request(1);
    sim.receive(1);
    sim.step(Event::Timer { client: 0 });
    sim.request(0); // delete ordered and applied at the leader
    assert!(sim.world.leader_tree().get("/a").is_none());
    assert!(sim.world.server_tree(1).get("/a").is_some());
    assert!(
        !sim.is_enabled(&Event::Receive { client: 1 }),
        "the follower has not applied it"
    );
    sim.apply(1);
    sim.receive(1);
    assert_eq!(
        notifications(&sim, 1),
        vec![watch(EventType::NodeDeleted, "/a")]
    );
}

#[test]
fn s20_session_timeout_is_clamped_to_2_and_20_ticks() {
    let long = Sim::new(
        Config {
            session_timeout: 1000,
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![])],
    );
    assert_eq!(long.world.session_timeout(), 20);
    let short = Sim::new(
        Config {
            session_timeout: 1,
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![])],
    );
    assert_eq!(short.world.session_timeout(), 2);
    // A crashed client's session ends after the clamped timeout, not the asked one.
    let mut sim = Sim::new(
        Config {
            session_timeout: 1000,
            faults: FaultBudget {
                crashes: 1,
                ..Default::default()
            },
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![Step::WaitWatch])],
    );
    let session = sim.world.session_of(0);
    sim.fault(Fault::Crash { client: 0 });
    sim.ticks(20);
    assert!(sim.world.is_session_live(session));
    sim.ticks(1);
    assert!(!sim.world.is_session_live(session));
}

#[test]
fn s21_disconnect_fails_outstanding_with_connection_loss() {
    // Client 1 on follower 1: a write taken (ordered, not yet applied at
    // its server), a read taken behind it, two ops not taken yet.
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(2)
        },
        vec![
            zksim::script::Scripted::new(vec![]),
            zksim::script::Scripted::new(vec![
                Step::SendNoWait(persistent("/a")),
                Step::SendNoWait(get_data("/a", true)),
                Step::SendNoWait(sync("/")),
                Step::SendNoWait(persistent("/b")),
                Step::WaitSession(SessionEvent::Disconnected),
                Step::Send(persistent("/c")),
            ]),
        ],
    );
    sim.request(1);
    sim.request(1);
    sim.fault(Fault::DropConnection { client: 1 });
    assert_eq!(sim.world.budget().connection_drops, 0);
    assert_eq!(sim.world.server_of(1), None);
    sim.drain(1);
    let seen = sim.seen(1);
    let sent = sim.client(1).sent().to_vec();
    assert_eq!(
        seen[..5],
        [
            Observed::Reply {
                op: sent[0],
                reply: Err(ZkError::ConnectionLoss)
            },
            Observed::Reply {
                op: sent[1],
                reply: Err(ZkError::ConnectionLoss)
            },
            Observed::Reply {
                op: sent[2],
                reply: Err(ZkError::ConnectionLoss)
            },
            Observed::Reply {
                op: sent[3],
                reply: Err(ZkError::ConnectionLoss)
            },
            Observed::Session(SessionEvent::Disconnected),
        ]
    );
    // The create that reached the leader was applied all the same: the
    // client cannot tell.
    assert!(sim.world.leader_tree().get("/a").is_some());
    assert!(sim.world.leader_tree().get("/b").is_none());
    // The request sent while disconnected waits for a connection.
    assert!(!sim
        .enabled()
        .iter()
        .any(|e| matches!(e, Event::Request { client: 1 })));
    sim.connect(1, 0);
    sim.receive(1);
    assert_eq!(
        sim.seen(1).last(),
        Some(&Observed::Session(SessionEvent::SyncConnected))
    );
    sim.settle();
    assert!(sim.world.leader_tree().get("/c").is_some());
    assert!(zksim::Client::is_done(sim.client(1)));
}

#[test]
fn s21_long_pause_drops_connection_when_client_resumes() {
    let scripts = || {
        vec![zksim::script::Scripted::new(vec![Step::Send(persistent(
            "/a",
        ))])]
    };
    // Read timeout is ceil(2/3 · 20) = 14 ticks.
    let mut sim = Sim::new(
        Config {
            pause_ticks: 14,
            faults: FaultBudget {
                pauses: 1,
                ..Default::default()
            },
            ..config(1)
        },
        scripts(),
    );
    assert_eq!(sim.world.read_timeout(), 14);
    sim.fault(Fault::Pause { client: 0 });
    assert!(!sim.is_enabled(&Event::Receive { client: 0 }) || sim.world.inbound_len(0) == 0);
    sim.ticks(14);
    assert!(!sim.world.is_paused(0));
    assert_eq!(sim.world.server_of(0), None, "dropped on resume");
    sim.drain(0);
    let seen = sim.seen(0);
    assert_eq!(err_of(&seen[0]), Some(ZkError::ConnectionLoss));
    assert_eq!(seen[1], Observed::Session(SessionEvent::Disconnected));
    // 14 < 20: the session is still alive and the client reconnects to it.
    let session = sim.world.session_of(0);
    assert!(sim.world.is_session_live(session));
    sim.connect(0, 0);
    sim.drain(0);
    assert_eq!(
        sim.seen(0).last(),
        Some(&Observed::Session(SessionEvent::SyncConnected))
    );
    assert_eq!(sim.world.session_of(0), session);

    // A shorter pause keeps the connection.
    let mut sim = Sim::new(
        Config {
            pause_ticks: 13,
            faults: FaultBudget {
                pauses: 1,
                ..Default::default()
            },
            ..config(1)
        },
        scripts(),
    );
    sim.fault(Fault::Pause { client: 0 });
    sim.ticks(13);
    assert_eq!(sim.world.server_of(0), Some(0));
}

#[test]
fn s22_expiry_deletes_ephemerals_at_once_firing_other_sessions_watches() {
    // Client 0 (leader) owns two ephemerals; client 1 (follower 1) watches one.
    let mut sim = Sim::new(
        Config {
            pause_ticks: 30,
            faults: FaultBudget {
                pauses: 1,
                ..Default::default()
            },
            ..config(2)
        },
        vec![
            zksim::script::Scripted::new(vec![
                Step::Send(ephemeral("/e1")),
                Step::Send(ephemeral("/e2")),
                Step::WaitWatch,
            ]),
            zksim::script::Scripted::new(vec![
                Step::Sleep(1),
                Step::Send(exists("/e2", true)),
                Step::WaitWatch,
            ]),
        ],
    );
    sim.settle();
    sim.ticks(1);
    sim.settle();
    let owner = sim.world.session_of(0);
    assert_eq!(
        sim.world
            .leader_tree()
            .get("/e2")
            .unwrap()
            .stat
            .ephemeral_owner,
        owner
    );
    sim.fault(Fault::Pause { client: 0 });
    sim.ticks(20);
    assert!(
        sim.world.is_session_live(owner),
        "heard during tick 1: its expiry bucket is 1 + 20 + 1"
    );
    let before = sim.log.len();
    sim.ticks(1);
    let step = sim.log[before..].to_vec();
    assert!(step.contains(&Happening::SessionEnded {
        session: owner,
        expired: true
    }));
    let committed: Vec<_> = step
        .iter()
        .filter_map(|h| match h {
            Happening::Committed { zxid, session } => Some((*zxid, *session)),
            _ => None,
        })
        .collect();
    assert_eq!(committed.len(), 1, "one closeSession txn: {step:?}");
    assert_eq!(committed[0].1, owner);
    assert!(sim.world.leader_tree().get("/e1").is_none());
    assert!(sim.world.leader_tree().get("/e2").is_none());
    // The watcher on the follower hears it when its server applies it.
    sim.apply(1);
    sim.receive(1);
    assert_eq!(
        notifications(&sim, 1),
        vec![watch(EventType::NodeDeleted, "/e2")]
    );
}

#[test]
fn s23_expired_client_learns_only_on_reconnect_and_its_handle_is_dead() {
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(ephemeral("/e")),
            Step::SendNoWait(get_data("/e", true)),
            Step::WaitSession(SessionEvent::Disconnected),
            Step::SendNoWait(persistent("/queued")),
            Step::WaitSession(SessionEvent::Expired),
            Step::Send(persistent("/after")),
            Step::Reopen,
            Step::WaitSession(SessionEvent::SyncConnected),
            Step::Send(ephemeral("/fresh")),
        ])],
    );
    sim.request(0);
    sim.receive(0);
    sim.fault(Fault::DropConnection { client: 0 });
    sim.drain(0);
    let old = sim.world.session_of(0);
    sim.ticks(21);
    assert!(!sim.world.is_session_live(old));
    assert!(
        sim.world.leader_tree().get("/e").is_none(),
        "ephemerals gone at expiry"
    );
    // Nothing told the client yet.
    assert_eq!(
        notifications(&sim, 0),
        vec![Observed::Session(SessionEvent::Disconnected)]
    );
    sim.connect(0, 0);
    sim.drain(0);
    let seen = sim.seen(0);
    let n = seen.len();
    // Expired, then the request queued meanwhile fails, then the request sent
    // on the dead handle fails too.
    assert_eq!(seen[n - 3], Observed::Session(SessionEvent::Expired));
    assert_eq!(err_of(&seen[n - 2]), Some(ZkError::SessionExpired));
    assert_eq!(err_of(&seen[n - 1]), Some(ZkError::SessionExpired));
    assert!(sim.world.leader_tree().get("/queued").is_none());
    assert!(sim.world.leader_tree().get("/after").is_none());
    // The script reopened after the dead-handle reply: a fresh session.
    let fresh = sim.world.session_of(0);
    assert_ne!(fresh, old);
    sim.connect(0, 0);
    sim.settle();
    assert_eq!(
        sim.seen(0).iter().rev().nth(1),
        Some(&Observed::Session(SessionEvent::SyncConnected))
    );
    assert_eq!(
        sim.world
            .leader_tree()
            .get("/fresh")
            .unwrap()
            .stat
            .ephemeral_owner,
        fresh
    );
}

#[test]
fn s23_killed_session_the_client_sees_disconnected_first_then_expired() {
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                kills: 1,
                ..Default::default()
            },
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(ephemeral("/e")),
            Step::WaitWatch,
        ])],
    );
    sim.settle();
    sim.fault(Fault::KillSession { client: 0 });
    // The server closes the connection of the killed session.
    assert_eq!(sim.world.server_of(0), None);
    sim.drain(0);
    assert_eq!(
        notifications(&sim, 0),
        vec![Observed::Session(SessionEvent::Disconnected)]
    );
    sim.connect(0, 0);
    sim.drain(0);
    assert_eq!(
        notifications(&sim, 0),
        vec![
            Observed::Session(SessionEvent::Disconnected),
            Observed::Session(SessionEvent::Expired)
        ]
    );
    assert!(sim.world.is_handle_dead(0));
}

#[test]
fn s24_close_session_deletes_ephemerals_at_once() {
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![
                Step::Send(ephemeral("/e")),
                Step::Sleep(2),
                Step::Close,
                Step::Sleep(1),
                Step::SendNoWait(persistent("/late")),
            ],
            vec![
                Step::Sleep(1),
                Step::Send(exists("/e", true)),
                Step::WaitWatch,
            ],
        ],
    );
    sim.settle();
    sim.ticks(1);
    sim.settle();
    sim.ticks(1);
    sim.step(Event::Timer { client: 0 });
    let session = sim.world.session_of(0);
    let before = sim.log.len();
    sim.request(0); // closeSession taken, ordered and applied by the leader
    let step = sim.log[before..].to_vec();
    assert!(step.contains(&Happening::SessionEnded {
        session,
        expired: false
    }));
    assert!(!sim.world.is_session_live(session));
    assert!(sim.world.leader_tree().get("/e").is_none());
    assert!(
        sim.world.is_handle_dead(0),
        "the close completed: the handle is closed"
    );
    sim.settle();
    assert_eq!(
        notifications(&sim, 1),
        vec![watch(EventType::NodeDeleted, "/e")]
    );
    // An op on the closed handle fails locally.
    sim.ticks(1);
    sim.settle();
    assert_eq!(
        sim.seen(0).last().and_then(err_of),
        Some(ZkError::SessionExpired)
    );
    assert!(sim.world.leader_tree().get("/late").is_none());
}

/// Client 1 on follower 1 holds a data, an exist and a child watch; its
/// connection drops, client 0 on the leader changes things, client 1
/// reconnects to the leader.
fn s25_setup(changes: Vec<Step>) -> Sim {
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(2)
        },
        vec![
            zksim::script::Scripted::new({
                let mut s = vec![
                    Step::Send(persistent("/d")),
                    Step::Send(persistent("/p")),
                    Step::Sleep(1),
                ];
                s.extend(changes);
                s
            }),
            zksim::script::Scripted::new(vec![
                Step::Sleep(1),
                Step::Send(get_data("/d", true)),
                Step::Send(exists("/x", true)),
                Step::Send(children("/p", true)),
                Step::WaitWatch,
            ]),
        ],
    );
    sim.run_while(|e| {
        matches!(
            e,
            Event::Request { client: 0 } | Event::Receive { client: 0 }
        )
    });
    sim.settle();
    sim.ticks(1);
    sim.run_while(|e| {
        matches!(
            e,
            Event::Timer { client: 1 }
                | Event::Request { client: 1 }
                | Event::Receive { client: 1 }
                | Event::Apply { .. }
        )
    });
    assert_eq!(sim.seen(1).iter().filter(|o| is_ok(o)).count(), 3);
    sim.fault(Fault::DropConnection { client: 1 });
    sim.drain(1);
    sim.step(Event::Timer { client: 0 });
    sim.run_while(|e| {
        matches!(
            e,
            Event::Request { client: 0 } | Event::Receive { client: 0 }
        )
    });
    sim
}

#[test]
fn s25_set_watches_after_reconnect_fires_what_was_missed() {
    let mut sim = s25_setup(vec![
        Step::Send(set_data("/d", b"1")),
        Step::Send(persistent("/x")),
        Step::Send(persistent("/p/c")),
    ]);
    sim.connect(1, 0);
    sim.drain(1);
    assert_eq!(
        notifications(&sim, 1),
        vec![
            Observed::Session(SessionEvent::Disconnected),
            Observed::Session(SessionEvent::SyncConnected),
            watch(EventType::NodeDataChanged, "/d"),
            watch(EventType::NodeCreated, "/x"),
            watch(EventType::NodeChildrenChanged, "/p"),
        ]
    );
    assert!(sim.world.client_watches(1).is_empty());
}

#[test]
fn s25_set_watches_reports_deleted_nodes() {
    let mut sim = s25_setup(vec![Step::Send(delete("/d")), Step::Send(delete("/p"))]);
    sim.connect(1, 0);
    sim.drain(1);
    assert_eq!(
        notifications(&sim, 1)[2..],
        [
            watch(EventType::NodeDeleted, "/d"),
            watch(EventType::NodeDeleted, "/p")
        ]
    );
}

#[test]
fn s25_set_watches_rearms_unchanged_watches_at_the_new_server() {
    let mut sim = s25_setup(vec![Step::WaitWatch]);
    sim.connect(1, 0);
    sim.drain(1);
    assert_eq!(
        notifications(&sim, 1),
        vec![
            Observed::Session(SessionEvent::Disconnected),
            Observed::Session(SessionEvent::SyncConnected)
        ]
    );
    assert!(!sim.world.client_watches(1).is_empty());
    // Client 0 now changes /d: client 1 hears it from its new server.
    let mut sim = s25_setup(vec![Step::Sleep(5), Step::Send(set_data("/d", b"2"))]);
    sim.connect(1, 0);
    sim.drain(1);
    sim.ticks(5);
    sim.settle();
    assert_eq!(
        notifications(&sim, 1).last(),
        Some(&watch(EventType::NodeDataChanged, "/d"))
    );
}

#[test]
fn s26_reconnect_refused_by_server_behind_last_seen_zxid() {
    // Client 0 on the leader writes and sees the zxid; follower 1 is partitioned.
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                partitions: 1,
                ..Default::default()
            },
            ..config(3)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(persistent("/a")),
            Step::WaitWatch,
        ])],
    );
    sim.fault(Fault::Partition { server: 1 });
    assert!(!sim.is_enabled(&Event::Apply { server: 1 }));
    sim.request(0);
    sim.receive(0);
    let seen_zxid = sim.world.client_last_zxid(0);
    assert_eq!(seen_zxid, sim.world.last_zxid());
    sim.fault(Fault::DropConnection { client: 0 });
    assert!(sim.is_enabled(&Event::Connect {
        client: 0,
        server: 0
    }));
    assert!(
        !sim.is_enabled(&Event::Connect {
            client: 0,
            server: 1
        }),
        "partitioned follower is behind"
    );
    assert!(
        !sim.is_enabled(&Event::Connect {
            client: 0,
            server: 2
        }),
        "lagging follower is behind"
    );
    sim.apply(2);
    assert!(sim.is_enabled(&Event::Connect {
        client: 0,
        server: 2
    }));
    sim.fault(Fault::Heal { server: 1 });
    sim.apply(1);
    assert!(sim.is_enabled(&Event::Connect {
        client: 0,
        server: 1
    }));
}

#[test]
fn s27_writes_are_totally_ordered_and_a_session_is_fifo() {
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![
                Step::SendNoWait(persistent("/a")),
                Step::SendNoWait(persistent("/a/b")),
                Step::SendNoWait(persistent("/a/b/c")),
            ],
            vec![
                Step::SendNoWait(persistent("/x")),
                Step::SendNoWait(exists("/x", false)),
                Step::SendNoWait(persistent("/x/y")),
            ],
        ],
    );
    sim.settle();
    for client in 0..2 {
        let seen = sim.seen(client);
        assert_eq!(seen.len(), 3);
        assert!(seen.iter().all(is_ok), "{seen:?}");
        let ops: Vec<_> = seen
            .iter()
            .map(|o| match o {
                Observed::Reply { op, .. } => *op,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ops, sim.client(client).sent());
    }
    let zxids: Vec<_> = sim
        .log
        .iter()
        .filter_map(|h| match h {
            Happening::Committed { zxid, .. } => Some(*zxid),
            _ => None,
        })
        .collect();
    assert!(zxids.windows(2).all(|w| w[1] == w[0] + 1), "{zxids:?}");
    // Every server applied every zxid in order.
    for server in 0..2 {
        let applied: Vec<_> = sim
            .log
            .iter()
            .filter_map(|h| match h {
                Happening::Applied { server: s, zxid } if *s == server => Some(*zxid),
                _ => None,
            })
            .collect();
        assert_eq!(applied, zxids);
    }
}

#[test]
fn s28_reads_may_be_stale_for_other_sessions_never_for_own_writes() {
    // Client 0 on the leader, client 1 on follower 1 writes and reads back,
    // client 2 on follower 2 reads what client 1 wrote.
    let mut sim = Sim::scripts(
        3,
        vec![
            vec![],
            vec![
                Step::SendNoWait(persistent("/x")),
                Step::SendNoWait(get_data("/x", false)),
            ],
            vec![Step::Sleep(1), Step::Send(get_data("/x", false))],
        ],
    );
    sim.request(1);
    sim.request(1);
    assert_eq!(
        sim.world.inbound_len(1),
        0,
        "the read waits behind the write"
    );
    sim.apply(1);
    sim.drain(1);
    assert!(sim.seen(1).iter().all(is_ok), "{:?}", sim.seen(1));
    sim.ticks(1);
    sim.step(Event::Timer { client: 2 });
    sim.request(2);
    sim.receive(2);
    assert_eq!(
        err_of(&sim.seen(2)[1]),
        Some(ZkError::NoNode),
        "follower 2 is stale"
    );
}

#[test]
fn s29_sync_makes_the_server_catch_up_before_answering() {
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![Step::Send(persistent("/y"))],
            vec![
                Step::Sleep(1),
                Step::SendNoWait(sync("/")),
                Step::SendNoWait(get_data("/y", false)),
            ],
        ],
    );
    sim.request(0);
    sim.receive(0);
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 });
    sim.request(1);
    sim.request(1);
    assert_eq!(
        sim.world.inbound_len(1),
        0,
        "sync and the read behind it wait"
    );
    sim.apply(1);
    sim.drain(1);
    let seen = sim.seen(1);
    assert!(matches!(
        seen[1],
        Observed::Reply {
            reply: Ok(Response::Synced),
            ..
        }
    ));
    assert!(matches!(
        seen[2],
        Observed::Reply {
            reply: Ok(Response::Data { .. }),
            ..
        }
    ));
}

#[test]
fn s1_invalid_path_is_refused_by_the_client_library_without_a_zxid() {
    let mut sim = Sim::scripts(
        1,
        vec![vec![
            Step::Send(persistent("/bad/")),
            Step::Send(persistent("/good")),
        ]],
    );
    let zxid = sim.world.last_zxid();
    sim.receive(0);
    assert_eq!(err_of(&sim.seen(0)[0]), Some(ZkError::BadArguments));
    assert_eq!(sim.world.last_zxid(), zxid);
    assert!(!sim
        .log
        .iter()
        .any(|h| matches!(h, Happening::Taken { op: 0, .. })));
}

#[test]
fn crashed_client_does_nothing_and_its_session_expires() {
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                crashes: 1,
                ..Default::default()
            },
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(ephemeral("/e")),
            Step::Sleep(3),
            Step::Send(persistent("/z")),
        ])],
    );
    sim.settle();
    sim.fault(Fault::Crash { client: 0 });
    assert!(sim.world.is_crashed(0));
    assert!(
        sim.enabled().iter().all(|e| matches!(e, Event::Tick)),
        "{:?}",
        sim.enabled()
    );
    sim.ticks(20);
    assert!(sim.world.leader_tree().get("/e").is_some());
    sim.ticks(1);
    assert!(sim.world.leader_tree().get("/e").is_none());
    assert!(sim.world.leader_tree().get("/z").is_none());
}

#[test]
fn enabled_is_sorted_and_faults_spend_the_budget() {
    let mut sim = Sim::new(
        Config {
            faults: support::budget_all(1),
            ..config(3)
        },
        vec![
            zksim::script::Scripted::new(vec![Step::SendNoWait(persistent("/a")), Step::WaitWatch]),
            zksim::script::Scripted::new(vec![Step::SendNoWait(persistent("/b")), Step::WaitWatch]),
        ],
    );
    let enabled = sim.enabled();
    let mut sorted = enabled.clone();
    sorted.sort();
    assert_eq!(enabled, sorted);
    assert!(enabled.contains(&Event::Fault(Fault::Partition { server: 1 })));
    assert!(
        !enabled.contains(&Event::Fault(Fault::Partition { server: 0 })),
        "the leader is never partitioned"
    );
    sim.fault(Fault::Partition { server: 2 });
    assert!(
        !sim.is_enabled(&Event::Fault(Fault::Partition { server: 1 })),
        "budget spent"
    );
    assert!(sim.is_enabled(&Event::Fault(Fault::Heal { server: 2 })));
    sim.fault(Fault::Heal { server: 2 });
    assert!(!sim
        .enabled()
        .iter()
        .any(|e| matches!(e, Event::Fault(Fault::Heal { .. }))));
}

#[test]
#[should_panic(expected = "not enabled")]
fn stepping_a_disabled_event_panics() {
    let mut sim = Sim::scripts(1, vec![vec![]]);
    let mut log = Vec::new();
    sim.world.step(&Event::Receive { client: 0 }, &mut log);
}

#[test]
fn fingerprint_follows_equality() {
    let mut a = Sim::scripts(
        2,
        vec![
            vec![Step::Send(persistent("/a"))],
            vec![Step::Send(persistent("/b"))],
        ],
    );
    let b = Sim::scripts(
        2,
        vec![
            vec![Step::Send(persistent("/a"))],
            vec![Step::Send(persistent("/b"))],
        ],
    );
    assert_eq!(a.world, b.world);
    assert_eq!(a.world.fingerprint(), b.world.fingerprint());
    let before = a.world.fingerprint();
    a.request(0);
    assert_ne!(a.world.fingerprint(), before);
    let c = a.world.clone();
    assert_eq!(c.fingerprint(), a.world.fingerprint());
}

#[test]
fn log_is_trimmed_once_every_server_applied() {
    let mut sim = Sim::scripts(
        3,
        vec![vec![
            Step::SendNoWait(persistent("/a")),
            Step::SendNoWait(persistent("/b")),
        ]],
    );
    sim.request(0);
    sim.request(0);
    assert_eq!(sim.world.log_len(), 2);
    sim.apply(1);
    sim.apply(1);
    assert_eq!(sim.world.log_len(), 2, "server 2 still needs them");
    sim.apply(2);
    assert_eq!(sim.world.log_len(), 1);
    sim.apply(2);
    assert_eq!(sim.world.log_len(), 0);
}

#[test]
fn pause_freezes_receive_timer_and_connect_until_it_ends() {
    let mut sim = Sim::new(
        Config {
            pause_ticks: 5,
            faults: FaultBudget {
                pauses: 1,
                connection_drops: 1,
                ..Default::default()
            },
            ..config(1)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Sleep(2),
            Step::Send(persistent("/a")),
        ])],
    );
    sim.fault(Fault::Pause { client: 0 });
    sim.fault(Fault::DropConnection { client: 0 });
    sim.ticks(4);
    assert!(sim.world.is_paused(0));
    let frozen = sim.enabled();
    assert!(
        frozen.iter().all(|e| matches!(e, Event::Tick)),
        "a paused client neither receives, fires timers nor connects: {frozen:?}"
    );
    sim.ticks(1);
    assert!(!sim.world.is_paused(0));
    assert!(sim.is_enabled(&Event::Timer { client: 0 }));
    assert!(sim.is_enabled(&Event::Receive { client: 0 }));
    assert!(sim.is_enabled(&Event::Connect {
        client: 0,
        server: 0
    }));
}

#[test]
fn s18_set_watches_events_come_before_replies_to_requests_queued_while_disconnected() {
    // Client 1 (follower 1) watches /d, loses its connection and queues a
    // read while disconnected; client 0 (leader) changes /d meanwhile.
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(2)
        },
        vec![
            zksim::script::Scripted::new(vec![
                Step::Send(persistent("/d")),
                Step::Sleep(1),
                Step::Send(set_data("/d", b"new")),
            ]),
            zksim::script::Scripted::new(vec![
                Step::Sleep(1),
                Step::Send(get_data("/d", true)),
                Step::WaitSession(SessionEvent::Disconnected),
                Step::SendNoWait(get_data("/d", false)),
            ]),
        ],
    );
    sim.request(0);
    sim.receive(0);
    sim.apply(1);
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 });
    sim.request(1);
    sim.receive(1);
    sim.fault(Fault::DropConnection { client: 1 });
    sim.receive(1); // Disconnected: the client queues its read locally
    sim.step(Event::Timer { client: 0 });
    sim.request(0); // /d changes at the leader
    sim.connect(1, 0);
    sim.request(1); // the queued read goes out on the new connection
    sim.drain(1);
    let seen = sim.seen(1);
    let n = seen.len();
    assert_eq!(seen[n - 3], Observed::Session(SessionEvent::SyncConnected));
    assert_eq!(seen[n - 2], watch(EventType::NodeDataChanged, "/d"));
    assert!(
        matches!(&seen[n - 1], Observed::Reply { reply: Ok(Response::Data { data, .. }), .. } if data == b"new"),
        "{seen:?}"
    );
}

#[test]
fn quiescent_once_everyone_is_done_and_followers_caught_up() {
    let mut sim = Sim::scripts(2, vec![vec![Step::Send(persistent("/a"))], vec![]]);
    assert!(!sim.world.is_quiescent());
    sim.request(0);
    sim.receive(0);
    assert!(!sim.world.is_quiescent(), "follower 1 has not applied /a");
    sim.apply(1);
    assert!(sim.world.is_quiescent());
}

#[test]
fn s23_reopen_on_a_live_handle_abandons_the_old_session_until_it_expires() {
    let mut sim = Sim::scripts(
        2,
        vec![
            vec![],
            vec![
                Step::Send(ephemeral("/old")),
                Step::SendNoWait(persistent("/lost")),
                Step::Sleep(1),
                Step::Reopen,
                Step::WaitSession(SessionEvent::SyncConnected),
                Step::Send(ephemeral("/new")),
            ],
        ],
    );
    let old = sim.world.session_of(1);
    sim.request(1);
    sim.apply(1);
    sim.receive(1); // created /old: the script sends /lost (not taken yet)
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 }); // reopen
    let fresh = sim.world.session_of(1);
    assert_ne!(fresh, old);
    assert_eq!(sim.world.server_of(1), None);
    sim.drain(1);
    assert_eq!(
        sim.seen(1).last().and_then(err_of),
        Some(ZkError::ConnectionLoss),
        "the old handle's outstanding op fails"
    );
    assert!(!sim
        .enabled()
        .iter()
        .any(|e| matches!(e, Event::Request { client: 1 })));
    sim.connect(1, 1);
    sim.settle();
    let tree = sim.world.leader_tree();
    assert_eq!(tree.get("/new").unwrap().stat.ephemeral_owner, fresh);
    assert_eq!(
        tree.get("/old").unwrap().stat.ephemeral_owner,
        old,
        "the old session lives on"
    );
    sim.ticks(21);
    assert!(
        sim.world.leader_tree().get("/old").is_none(),
        "until it expires"
    );
    assert!(sim.world.leader_tree().get("/new").is_some());
}

/// A client holding an ephemeral, connected to server `server` of three,
/// that then waits for a watch forever; client 0 idles on the leader.
fn holder_on(server: usize, config: Config) -> Sim {
    let mut scripts = vec![zksim::script::Scripted::new(vec![Step::WaitWatch]); server];
    scripts.push(zksim::script::Scripted::new(vec![
        Step::Send(ephemeral("/e")),
        Step::WaitWatch,
    ]));
    let mut sim = Sim::new(config, scripts);
    sim.settle();
    assert!(sim.world.leader_tree().get("/e").is_some());
    sim
}

#[test]
fn s21a_cut_off_client_hears_disconnected_at_its_read_timeout_then_expired_on_return() {
    // T = 20 ticks: read timeout ceil(2/3 · 20) = 14, expiry bucket 0 + 20 + 1.
    let mut sim = holder_on(
        0,
        Config {
            faults: FaultBudget {
                expiries: 1,
                ..Default::default()
            },
            ..config(3)
        },
    );
    let session = sim.world.session_of(0);
    assert_eq!(sim.world.expiry_deadline(session), Some(21));
    sim.fault(Fault::Silence { client: 0 });
    assert!(sim.world.is_cut_off(0));
    sim.ticks(13);
    assert_eq!(
        sim.world.server_of(0),
        Some(0),
        "still within its read timeout"
    );
    assert_eq!(notifications(&sim, 0), vec![]);
    sim.ticks(1);
    assert_eq!(sim.world.server_of(0), None, "read timeout at tick 14");
    // Time waits until the client has been told.
    assert!(!sim.is_enabled(&Event::Tick));
    sim.drain(0);
    assert_eq!(
        notifications(&sim, 0),
        vec![Observed::Session(SessionEvent::Disconnected)]
    );
    assert!(sim.is_enabled(&Event::Tick));
    // Cut off: no server can be reached until the leader gave up on it.
    assert!(!sim
        .enabled()
        .iter()
        .any(|e| matches!(e, Event::Connect { .. })));
    sim.ticks(6);
    assert!(sim.world.is_session_live(session), "tick 20: not yet");
    assert!(sim.world.leader_tree().get("/e").is_some());
    sim.ticks(1);
    assert!(!sim.world.is_session_live(session), "expired at tick 21");
    assert!(sim.world.leader_tree().get("/e").is_none());
    assert!(!sim.world.is_cut_off(0));
    sim.connect(0, 1);
    sim.drain(0);
    assert_eq!(
        notifications(&sim, 0),
        vec![
            Observed::Session(SessionEvent::Disconnected),
            Observed::Session(SessionEvent::Expired)
        ]
    );
    assert!(sim.world.is_handle_dead(0));
}

#[test]
fn s21a_answers_and_events_sent_to_a_cut_off_client_are_lost() {
    // Client 1 on follower 1 watches /x and has a write ordered but not yet
    // applied at its server when it is cut off; client 0 then creates /x.
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                expiries: 1,
                ..Default::default()
            },
            ..config(2)
        },
        vec![
            zksim::script::Scripted::new(vec![Step::Sleep(1), Step::Send(persistent("/x"))]),
            zksim::script::Scripted::new(vec![
                Step::Send(exists("/x", true)),
                Step::SendNoWait(persistent("/y")),
                Step::WaitWatch,
            ]),
        ],
    );
    sim.request(1);
    sim.receive(1);
    sim.request(1); // /y is ordered at the leader; follower 1 has not applied it
    assert_eq!(sim.world.inbound_len(1), 0);
    sim.fault(Fault::Silence { client: 1 });
    assert!(!sim.is_enabled(&Event::Request { client: 1 }));
    sim.ticks(1);
    sim.step(Event::Timer { client: 0 });
    sim.request(0);
    sim.apply(1); // /y: its answer never arrives
    sim.apply(1); // /x: the watch event never arrives
    assert_eq!(sim.world.inbound_len(1), 0);
    sim.ticks(13);
    sim.drain(1);
    let seen = sim.seen(1);
    assert!(
        seen.iter().all(|o| !matches!(o, Observed::Watch(_))),
        "{seen:?}"
    );
    assert_eq!(err_of(&seen[seen.len() - 2]), Some(ZkError::ConnectionLoss));
    assert_eq!(
        seen.last(),
        Some(&Observed::Session(SessionEvent::Disconnected))
    );
}

#[test]
fn s21a_time_does_not_pass_an_undelivered_disconnected() {
    let mut sim = holder_on(
        1,
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(3)
        },
    );
    sim.fault(Fault::DropConnection { client: 1 });
    assert!(!sim.is_enabled(&Event::Tick));
    sim.drain(1);
    assert!(sim.is_enabled(&Event::Tick));
}

#[test]
fn s22a_partitioned_follower_forwards_nothing_serves_stale_reads_and_drops_its_clients_at_sync_limit(
) {
    let mut sim = Sim::new(
        Config {
            sync_limit: 5,
            faults: FaultBudget {
                partitions: 1,
                ..Default::default()
            },
            ..config(3)
        },
        vec![
            zksim::script::Scripted::new(vec![Step::Sleep(1), Step::Send(persistent("/new"))]),
            zksim::script::Scripted::new(vec![
                Step::Send(ephemeral("/e")),
                Step::Sleep(2),
                Step::SendNoWait(exists("/new", false)),
                Step::SendNoWait(persistent("/w")),
                Step::SendNoWait(exists("/e", false)),
                Step::WaitWatch,
            ]),
        ],
    );
    sim.settle();
    let session = sim.world.session_of(1);
    sim.fault(Fault::Partition { server: 1 });
    sim.ticks(1);
    sim.step(Event::Timer { client: 0 });
    sim.settle(); // /new exists at the leader, not at the partitioned follower
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 });
    sim.request(1); // a read: answered from the stale tree
    assert!(
        !sim.is_enabled(&Event::Request { client: 1 }),
        "a write is never forwarded"
    );
    sim.drain(1);
    assert!(matches!(
        sim.seen(1).last(),
        Some(Observed::Reply {
            reply: Ok(Response::Exists(None)),
            ..
        })
    ));
    assert!(
        !sim.is_enabled(&Event::Connect {
            client: 0,
            server: 1
        }) && !sim.is_enabled(&Event::Apply { server: 1 })
    );
    sim.ticks(2);
    assert_eq!(sim.world.server_of(1), Some(1), "tick 4 < sync_limit");
    sim.ticks(1);
    assert!(sim.world.is_server_down(1));
    assert_eq!(sim.world.server_of(1), None, "dropped at tick 5");
    assert!(!sim.is_enabled(&Event::Tick));
    sim.drain(1);
    let seen = sim.seen(1);
    let n = seen.len();
    assert_eq!(
        err_of(&seen[n - 3]),
        Some(ZkError::ConnectionLoss),
        "{seen:?}"
    );
    assert_eq!(err_of(&seen[n - 2]), Some(ZkError::ConnectionLoss));
    assert_eq!(seen[n - 1], Observed::Session(SessionEvent::Disconnected));
    assert!(sim.world.leader_tree().get("/w").is_none());
    // sync_limit 5 ≤ T = 20: the session lives and the client moves on.
    assert!(sim.world.is_session_live(session));
    assert!(!sim.is_enabled(&Event::Connect {
        client: 1,
        server: 1
    }));
    sim.connect(1, 2);
    sim.drain(1);
    assert_eq!(sim.world.session_of(1), session);
    assert_eq!(
        sim.seen(1).last(),
        Some(&Observed::Session(SessionEvent::SyncConnected))
    );
}

#[test]
fn s22a_partition_longer_than_the_session_timeout_expires_a_client_that_believes_it_is_connected() {
    // The real window: sync_limit (25) > T (20). The leader hears nothing
    // from the follower's clients and expires them at tick 21; the follower
    // notices the lost leader only at tick 25.
    let mut sim = holder_on(
        1,
        Config {
            sync_limit: 25,
            faults: FaultBudget {
                partitions: 1,
                ..Default::default()
            },
            ..config(3)
        },
    );
    let session = sim.world.session_of(1);
    sim.fault(Fault::Partition { server: 1 });
    sim.ticks(21);
    assert!(!sim.world.is_session_live(session));
    assert!(sim.world.leader_tree().get("/e").is_none());
    assert_eq!(sim.world.server_of(1), Some(1));
    assert_eq!(
        notifications(&sim, 1),
        vec![],
        "still believes it is connected"
    );
    assert!(sim.world.server_tree(1).get("/e").is_some(), "stale reads");
    sim.ticks(4);
    assert_eq!(sim.world.server_of(1), None, "dropped at tick 25");
    sim.drain(1);
    sim.connect(1, 0);
    sim.drain(1);
    assert_eq!(
        notifications(&sim, 1),
        vec![
            Observed::Session(SessionEvent::Disconnected),
            Observed::Session(SessionEvent::Expired)
        ]
    );
}

#[test]
fn s22a_a_healed_follower_forwards_the_touches_it_held_unless_it_had_shut_down() {
    // The follower keeps collecting its clients' pings while cut off
    // (`LearnerSessionTracker`'s touch table) and answers the leader's next
    // ping with them once the partition heals within sync_limit (the TCP
    // connection survived); past sync_limit it shut down and they are lost.
    for (heal_after, forwarded) in [(4, true), (5, false)] {
        let mut sim = holder_on(
            1,
            Config {
                sync_limit: 5,
                faults: FaultBudget {
                    partitions: 1,
                    ..Default::default()
                },
                ..config(3)
            },
        );
        let session = sim.world.session_of(1);
        let cut_at = sim.world.now();
        sim.fault(Fault::Partition { server: 1 });
        sim.ticks(heal_after);
        assert_eq!(
            sim.world.expiry_deadline(session),
            Some(cut_at + 20 + 1),
            "the leader heard nothing while partitioned"
        );
        sim.fault(Fault::Heal { server: 1 });
        let expected = if forwarded {
            cut_at + heal_after + 20 + 1
        } else {
            cut_at + 20 + 1
        };
        assert_eq!(
            sim.world.expiry_deadline(session),
            Some(expected),
            "healed after {heal_after} ticks"
        );
    }
}

#[test]
fn s22a_a_pause_no_longer_than_the_timeout_keeps_the_session_a_longer_one_does_not() {
    for (pause, survives) in [(20, true), (21, false)] {
        let mut sim = holder_on(
            0,
            Config {
                pause_ticks: pause,
                faults: FaultBudget {
                    pauses: 1,
                    ..Default::default()
                },
                ..config(3)
            },
        );
        let session = sim.world.session_of(0);
        sim.fault(Fault::Pause { client: 0 });
        sim.ticks(pause);
        assert_eq!(
            sim.world.is_session_live(session),
            survives,
            "pause {pause}"
        );
        assert!(!sim.world.is_paused(0));
        // Either way the client resumes past its read timeout: disconnected.
        assert_eq!(sim.world.server_of(0), None);
    }
}

#[test]
fn a_pinned_client_starts_on_its_server_and_reconnects_only_there() {
    let mut sim = Sim::new(
        Config {
            pins: vec![(0, 2)],
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(3)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(persistent("/a")),
            Step::WaitWatch,
        ])],
    );
    assert_eq!(sim.world.server_of(0), Some(2));
    sim.fault(Fault::DropConnection { client: 0 });
    sim.drain(0);
    let connects: Vec<Event> = sim
        .enabled()
        .into_iter()
        .filter(|e| matches!(e, Event::Connect { .. }))
        .collect();
    assert_eq!(
        connects,
        vec![Event::Connect {
            client: 0,
            server: 2
        }]
    );
}

#[test]
fn s6_a_parent_may_start_with_its_suffix_counter_near_the_cap() {
    let mut sim = Sim::new(
        Config {
            parents: vec![("/q/jobs".into(), i32::MAX - 1)],
            ..config(2)
        },
        vec![zksim::script::Scripted::new(vec![
            Step::Send(create(
                "/q/jobs/j-",
                zksim::CreateMode::PersistentSequential,
            )),
            Step::Send(create(
                "/q/jobs/j-",
                zksim::CreateMode::PersistentSequential,
            )),
            Step::Send(create(
                "/q/jobs/j-",
                zksim::CreateMode::PersistentSequential,
            )),
        ])],
    );
    for server in 0..2 {
        assert!(sim.world.server_tree(server).get("/q").is_some());
        assert_eq!(
            sim.world
                .server_tree(server)
                .get("/q/jobs")
                .unwrap()
                .seq_counter,
            i32::MAX - 1
        );
    }
    sim.settle();
    let created: Vec<String> = sim
        .seen(0)
        .into_iter()
        .map(|o| match o {
            Observed::Reply {
                reply: Ok(Response::Created { path, .. }),
                ..
            } => path,
            other => format!("{other:?}"),
        })
        .collect();
    // S6: 2147483646, 2147483647, then the capped counter gives 2147483647
    // again, which exists.
    assert_eq!(created[0], "/q/jobs/j-2147483646");
    assert_eq!(created[1], "/q/jobs/j-2147483647");
    assert!(created[2].contains("NodeExists"), "{created:?}");
}

#[test]
fn s21a_a_client_cut_off_while_paused_times_out_from_when_it_froze() {
    // T = 6: read timeout 4, expiry bucket 0 + 6 + 1 = 7.
    let mut sim = holder_on(
        0,
        Config {
            session_timeout: 6,
            pause_ticks: 3,
            faults: FaultBudget {
                pauses: 1,
                expiries: 1,
                ..Default::default()
            },
            ..config(3)
        },
    );
    sim.step(Event::Fault(Fault::Pause { client: 0 }));
    sim.ticks(2);
    sim.fault(Fault::Silence { client: 0 });
    sim.ticks(1);
    assert!(!sim.world.is_paused(0));
    assert_eq!(
        sim.world.server_of(0),
        Some(0),
        "tick 3: within 4 of tick 0"
    );
    sim.ticks(1);
    assert_eq!(
        sim.world.server_of(0),
        None,
        "tick 4: 4 ticks since it last heard its server (it froze at 0)"
    );
    sim.drain(0);
    sim.ticks(2);
    assert!(sim.world.is_session_live(sim.world.session_of(0)));
    sim.ticks(1);
    assert!(!sim.world.is_session_live(sim.world.session_of(0)));
}

/// Three servers; client 1 (on follower 1) made `/e` in its old session and
/// closed it; follower 2 applied `/e` but not the close. Client 1 then
/// reopens (asking `exists /e` on the new handle at once) and connects to
/// follower 2. Client 2 is an established session on follower 2.
fn closed_then_reopened_on_a_lagging_follower() -> Sim {
    let mut sim = Sim::scripts(
        3,
        vec![
            vec![],
            vec![
                Step::Send(ephemeral("/e")),
                Step::Close,
                Step::Sleep(1),
                Step::Reopen,
                Step::SendNoWait(exists("/e", false)),
            ],
            vec![Step::Sleep(1), Step::SendNoWait(exists("/e", false))],
        ],
    );
    sim.request(1);
    sim.apply(1);
    sim.apply(2); // follower 2 has `/e`
    sim.receive(1); // created: the script closes and sleeps
    sim.request(1); // the leader orders the close
    sim.apply(1); // follower 1 applies it: the old handle is closed
    assert!(sim.world.is_handle_dead(1));
    assert!(sim.world.server_tree(2).get("/e").is_some(), "2 lags");
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 }); // reopen, `exists /e` queued
    sim.step(Event::Timer { client: 2 }); // `exists /e` on the old session
    sim.connect(1, 2);
    sim
}

#[test]
fn s39_a_fresh_sessions_requests_wait_until_its_follower_applied_create_session() {
    let mut sim = closed_then_reopened_on_a_lagging_follower();
    let fresh = sim.world.session_of(1);
    assert!(sim.world.is_session_live(fresh), "created at the leader");
    assert_eq!(sim.world.server_of(1), Some(2));
    // Follower 2 has applied neither the old close nor the new session:
    // it neither answers the connect nor takes the queued read.
    assert!(!sim.is_enabled(&Event::Request { client: 1 }));
    assert!(!sim.is_enabled(&Event::Receive { client: 1 }));
    sim.apply(2); // the old session's close
    assert!(!sim.is_enabled(&Event::Request { client: 1 }));
    assert!(!sim.is_enabled(&Event::Receive { client: 1 }));
    sim.apply(2); // the fresh session's createSession
    assert!(sim.world.server_tree(2).get("/e").is_none());
    sim.request(1);
    sim.drain(1);
    let seen = sim.seen(1);
    let n = seen.len();
    assert_eq!(seen[n - 2], Observed::Session(SessionEvent::SyncConnected));
    assert_eq!(
        seen[n - 1],
        Observed::Reply {
            op: *sim.client(1).sent().last().unwrap(),
            reply: Ok(Response::Exists(None)),
        },
        "the fresh session never sees its old session's ephemeral"
    );
}

#[test]
fn s39_an_established_sessions_read_and_a_fresh_session_on_the_leader_do_not_wait() {
    let mut sim = closed_then_reopened_on_a_lagging_follower();
    // Client 2's session was established at start: follower 2 answers its
    // read at once, from its stale tree (S28), though the leader has
    // ordered a close and a createSession it has not applied.
    assert!(sim.world.applied_zxid(2) < sim.world.last_zxid());
    sim.request(2);
    sim.drain(2);
    assert!(matches!(
        sim.client(2).reply_to(0),
        Some(Ok(Response::Exists(Some(_))))
    ));

    // A fresh session on the leader is connected at once and its read is
    // taken at once: the leader applies its createSession as it orders it.
    let mut sim = Sim::scripts(
        3,
        vec![vec![
            Step::Sleep(1),
            Step::Reopen,
            Step::SendNoWait(exists("/e", false)),
        ]],
    );
    sim.ticks(1);
    sim.step(Event::Timer { client: 0 });
    sim.connect(0, 0);
    assert!(sim.is_enabled(&Event::Request { client: 0 }));
    assert!(sim.is_enabled(&Event::Receive { client: 0 }));
    sim.request(0);
    sim.drain(0);
    assert_eq!(
        sim.client(0).session_events().last(),
        Some(&SessionEvent::SyncConnected)
    );
    assert_eq!(sim.client(0).reply_to(0), Some(&Ok(Response::Exists(None))));
}

#[test]
fn s39_a_connection_lost_before_the_connect_response_asks_for_a_new_session() {
    let mut sim = Sim::new(
        Config {
            faults: FaultBudget {
                connection_drops: 1,
                ..Default::default()
            },
            ..config(3)
        },
        vec![
            zksim::script::Scripted::new(vec![]),
            zksim::script::Scripted::new(vec![
                Step::Sleep(1),
                Step::Reopen,
                Step::SendNoWait(ephemeral("/mine")),
            ]),
        ],
    );
    sim.ticks(1);
    sim.step(Event::Timer { client: 1 });
    sim.connect(1, 1);
    let abandoned = sim.world.session_of(1);
    sim.fault(Fault::DropConnection { client: 1 });
    // The client never learned its session: the next connection asks for
    // a new one, and the abandoned one lives, unheard, until it expires.
    let next = sim.world.session_of(1);
    assert_ne!(next, abandoned);
    assert!(sim.world.is_session_live(abandoned));
    assert!(!sim.world.is_session_live(next));
    sim.drain(1);
    assert_eq!(
        sim.client(1).session_events(),
        vec![SessionEvent::Disconnected]
    );
    assert_eq!(
        sim.client(1).reply_to(0),
        Some(&Err(ZkError::ConnectionLoss)),
        "the request queued behind the connect fails"
    );
    sim.connect(1, 0);
    assert!(sim.world.is_session_live(next));
    sim.drain(1);
    assert_eq!(
        sim.client(1).session_events(),
        vec![SessionEvent::Disconnected, SessionEvent::SyncConnected]
    );
    sim.ticks(21);
    assert!(!sim.world.is_session_live(abandoned), "expired by silence");
    assert!(sim.world.is_session_live(next));
}
