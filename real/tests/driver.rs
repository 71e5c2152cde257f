//! The real-server driver against a real ZooKeeper: replies, stats, watch
//! events and their order, ephemerals and session close, timers.
//! Each test starts its own server (≈0.3 s) so tests stay independent.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use zkreal::drive_blocking;
use zksim::{CreateMode, Delivery, EventType, Happening, Op, Response, WatchedEvent, ZkError};

#[test]
fn replies_stats_and_watch_events_match_the_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    eprintln!("server started in {:?}", server.startup_time());
    let seq0 = "/r/s-0000000000";
    let delete_seq0 = Op::Delete {
        path: seq0.into(),
        version: -1,
    };
    let multi_ok = Op::Multi(vec![
        create("/r/m2", CreateMode::Persistent),
        Op::SetData {
            path: "/r/m2".into(),
            data: b"yy".to_vec(),
            version: 0,
        },
    ]);
    let script = vec![
        Cue::Do(create("/r", CreateMode::Persistent)),
        Cue::Do(create("/r/s-", CreateMode::PersistentSequential)),
        Cue::Do(create("/r/e-", CreateMode::EphemeralSequential)),
        // Two library watchers on one path: one notification, delivered once.
        Cue::Do(Op::Exists {
            path: seq0.into(),
            watch: true,
        }),
        Cue::Do(Op::GetData {
            path: seq0.into(),
            watch: true,
        }),
        Cue::Do(Op::Delete {
            path: seq0.into(),
            version: 5,
        }),
        Cue::Do(delete_seq0.clone()),
        Cue::AwaitWatches(1),
        Cue::Do(create("/r/s-", CreateMode::PersistentSequential)),
        Cue::Do(create("/r/eph", CreateMode::Ephemeral)),
        Cue::Do(create("/r/eph/c", CreateMode::Persistent)),
        Cue::Do(create("/r", CreateMode::Persistent)),
        Cue::Do(Op::Delete {
            path: "/r".into(),
            version: -1,
        }),
        Cue::Do(Op::GetData {
            path: "/r/none".into(),
            watch: true,
        }),
        Cue::Do(Op::GetChildren {
            path: "/r".into(),
            watch: true,
        }),
        Cue::Do(Op::Multi(vec![
            create("/r/m1", CreateMode::Persistent),
            Op::Delete {
                path: "/r/missing".into(),
                version: -1,
            },
            create("/r/m3", CreateMode::Persistent),
        ])),
        Cue::Do(Op::Exists {
            path: "/r/m1".into(),
            watch: false,
        }),
        Cue::Do(multi_ok.clone()),
        Cue::AwaitWatches(2),
        Cue::Do(Op::Sync { path: "/r".into() }),
    ];
    let started = Instant::now();
    let run = drive_blocking(vec![CuedClient::new(script)], &config(&server)).expect("drive");
    eprintln!(
        "scripted run took {:?} (drive: {:?})",
        started.elapsed(),
        run.elapsed
    );
    assert!(
        run.finished,
        "the script ran to its end: {:?}",
        run.clients[0]
    );
    let session = run.sessions[0][0];
    let got = replies(&run, 0);
    let reply = |i: usize| got[i].1.clone();

    let Ok(Response::Created { path, stat }) = reply(0) else {
        panic!("create /r: {:?}", reply(0))
    };
    assert_eq!(path, "/r");
    assert!(stat.czxid > 0 && stat.czxid == stat.mzxid && stat.czxid == stat.pzxid);
    assert_eq!(
        (
            stat.version,
            stat.cversion,
            stat.num_children,
            stat.ephemeral_owner
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(stat.data_length, 1);
    assert!(matches!(reply(1), Ok(Response::Created { ref path, .. }) if path == seq0));
    let Ok(Response::Created { path, stat }) = reply(2) else {
        panic!("create /r/e-: {:?}", reply(2))
    };
    assert_eq!(
        path, "/r/e-0000000001",
        "one counter per parent, shared by prefixes"
    );
    assert_eq!(stat.ephemeral_owner, session);
    assert!(matches!(reply(3), Ok(Response::Exists(Some(_)))));
    assert!(matches!(reply(4), Ok(Response::Data { ref data, .. }) if data == b"x"));
    assert_eq!(reply(5), Err(ZkError::BadVersion));
    assert_eq!(reply(6), Ok(Response::Deleted));
    // S5: a delete does not advance the sequence counter.
    assert!(
        matches!(reply(7), Ok(Response::Created { ref path, .. }) if path == "/r/s-0000000002"),
        "{:?}",
        reply(7)
    );
    assert!(matches!(reply(8), Ok(Response::Created { .. })));
    assert_eq!(reply(9), Err(ZkError::NoChildrenForEphemerals));
    assert_eq!(reply(10), Err(ZkError::NodeExists));
    assert_eq!(reply(11), Err(ZkError::NotEmpty));
    assert_eq!(reply(12), Err(ZkError::NoNode));
    let Ok(Response::Children { mut names, stat }) = reply(13) else {
        panic!("getChildren: {:?}", reply(13))
    };
    names.sort();
    assert_eq!(names, ["e-0000000001", "eph", "s-0000000002"]);
    assert_eq!(stat.num_children, 3);
    assert_eq!(
        reply(14),
        Ok(Response::Multi(vec![
            Err(ZkError::RolledBack),
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ])),
        "S31: a failed multi answers per op"
    );
    assert_eq!(
        reply(15),
        Ok(Response::Exists(None)),
        "the failed multi left nothing"
    );
    let Ok(Response::Multi(results)) = reply(16) else {
        panic!("multi: {:?}", reply(16))
    };
    assert!(matches!(&results[0], Ok(Response::Created { path, .. }) if path == "/r/m2"));
    assert!(matches!(&results[1], Ok(Response::SetData(stat)) if stat.version == 1));
    assert_eq!(reply(17), Ok(Response::Synced));

    // Watch events: exactly two, each before the reply of the write that fired it.
    let watches: Vec<(usize, WatchedEvent)> = deliveries(&run, 0)
        .into_iter()
        .filter_map(|(i, d)| match d {
            Delivery::Watch(w) => Some((i, w)),
            _ => None,
        })
        .collect();
    assert_eq!(
        watches.iter().map(|(_, w)| w.clone()).collect::<Vec<_>>(),
        vec![
            WatchedEvent {
                kind: EventType::NodeDeleted,
                path: seq0.into()
            },
            WatchedEvent {
                kind: EventType::NodeChildrenChanged,
                path: "/r".into()
            },
        ],
        "exists+getData on one path give one NodeDeleted; getData on a missing node sets no watch"
    );
    assert!(watches[0].0 < position_of_reply(&run, 0, &delete_seq0));
    assert!(watches[1].0 < position_of_reply(&run, 0, &multi_ok));
    assert!(
        run.log.iter().any(
            |h| matches!(h, Happening::SessionEnded { session: s, expired: false } if *s == session)
        ),
        "the driver closed the session at the end"
    );
}

#[test]
fn closing_a_session_deletes_its_ephemerals_for_everyone() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let setup = drive_blocking(
        vec![CuedClient::new(vec![Cue::Do(create(
            "/r2",
            CreateMode::Persistent,
        ))])],
        &config(&server),
    )
    .expect("setup");
    assert!(setup.finished);

    let exists = |path: &str, watch| Op::Exists {
        path: path.into(),
        watch,
    };
    // A owns an ephemeral and closes its session once B says it is watching.
    let a = CuedClient::new(vec![
        Cue::Do(create("/r2/e", CreateMode::Ephemeral)),
        Cue::Do(exists("/r2/ready", true)),
        Cue::AwaitCreationIfAbsent,
        Cue::Close,
    ]);
    // B sees the ephemeral, says so, and waits for its deletion.
    let b = CuedClient::new(vec![
        Cue::Do(exists("/r2/e", true)),
        Cue::AwaitCreationIfAbsent,
        Cue::Do(exists("/r2/e", true)),
        Cue::Do(create("/r2/ready", CreateMode::Persistent)),
        Cue::AwaitOneMoreWatch,
        Cue::Do(exists("/r2/e", false)),
    ]);
    let run = drive_blocking(vec![a, b], &config(&server)).expect("drive");
    assert!(run.finished, "{:?}", run.clients);
    let a_session = run.sessions[0][0];
    assert!(
        run.log.iter().any(|h| matches!(h, Happening::SessionEnded { session, expired: false } if *session == a_session)),
        "A's close is recorded"
    );
    let b_got = replies(&run, 1);
    let owner = b_got.iter().find_map(|(op, r)| match (op, r) {
        (Op::Exists { .. }, Ok(Response::Exists(Some(stat)))) => Some(stat.ephemeral_owner),
        _ => None,
    });
    assert_eq!(
        owner,
        Some(a_session),
        "B saw A's ephemeral, owned by A's session"
    );
    assert!(
        deliveries(&run, 1).iter().any(|(_, d)| *d
            == Delivery::Watch(WatchedEvent {
                kind: EventType::NodeDeleted,
                path: "/r2/e".into()
            })),
        "B's watch fired when A's session closed"
    );
    assert_eq!(
        b_got.last().map(|(_, r)| r.clone()),
        Some(Ok(Response::Exists(None))),
        "the ephemeral is gone"
    );
}

#[test]
fn timers_fire_after_their_ticks_of_real_time() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let run = drive_blocking(
        vec![CuedClient::new(vec![Cue::Sleep(3), Cue::Sleep(2)])],
        &config(&server),
    )
    .expect("drive");
    assert!(run.finished);
    assert_eq!(run.clients[0].timer_ticks, vec![3, 5]);
    assert!(
        run.elapsed >= Duration::from_millis(500),
        "{:?}",
        run.elapsed
    );
}

#[test]
fn without_zookeeper_tests_skip_loudly_unless_on_ci() {
    let nowhere = Some("/nonexistent/zookeeper.jar");
    assert!(zkreal::require_server_with(nowhere, false).is_none());
    let on_ci = std::panic::catch_unwind(|| zkreal::require_server_with(nowhere, true));
    assert!(
        on_ci.is_err(),
        "CI=true turns a missing server into a failure"
    );
}
