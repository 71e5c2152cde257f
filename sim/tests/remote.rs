//! Clients driven from outside the world (`zksim::Remote`): attached at
//! run time, re-attached by session, kept alive by their own traffic, and
//! left to send their own `SetWatches`.

use zksim::{
    Config, CreateMode, Delivery, Event, EventType, Happening, Op, Refusal, Remote, Response,
    SessionEvent, SetWatches, World,
};

type Log = Vec<Happening<()>>;

/// Step every enabled event but time, faults and connects, as a serving
/// driver does after each input.
fn settle(world: &mut World<Remote>, log: &mut Log) {
    let mut enabled = Vec::new();
    loop {
        enabled.clear();
        world.enabled(&mut enabled);
        let Some(event) = enabled.into_iter().find(|e| {
            matches!(
                e,
                Event::Request { .. } | Event::Apply { .. } | Event::Receive { .. }
            )
        }) else {
            return;
        };
        world.step(&event, log);
        enabled = Vec::new();
    }
}

fn deliveries(log: &Log, client: usize) -> Vec<Delivery> {
    log.iter()
        .filter_map(|h| match h {
            Happening::Delivered {
                client: c,
                delivery,
            } if *c == client => Some(delivery.clone()),
            _ => None,
        })
        .collect()
}

fn world() -> World<Remote> {
    let config = Config {
        max_time: u64::MAX,
        ..Config::default()
    };
    World::new(config, Vec::new())
}

#[test]
fn a_remote_client_attaches_at_run_time_on_its_server() {
    let mut w = world();
    let mut log = Log::new();
    let (a, session) = w.attach(Remote, 2, 6, &mut log).unwrap();
    // S39: follower 2 has not applied the session's creation yet.
    assert!(w.is_connecting(a));
    settle(&mut w, &mut log);
    assert!(!w.is_connecting(a));
    assert_eq!(w.server_of(a), Some(2));
    assert!(w.is_session_live(session));
    assert_eq!(w.session_timeout_of(session), 6);
    assert!(w.applied_zxid(2) >= 1, "the follower applied createSession");
    let op = w.submit(
        a,
        Op::Create {
            path: "/x".into(),
            data: b"d".to_vec(),
            mode: CreateMode::Ephemeral,
        },
        &mut log,
    );
    settle(&mut w, &mut log);
    let got = deliveries(&log, a);
    assert!(
        matches!(&got[..], [Delivery::Session(SessionEvent::SyncConnected), Delivery::Reply { op: o, reply: Ok(Response::Created { path, .. }) }] if *o == op && path == "/x"),
        "{got:?}"
    );
    assert_eq!(w.client_last_zxid(a), w.applied_zxid(2));
}

/// S39 on a follower: the session's requests wait for its creation to be
/// applied there; on the leader nothing waits.
#[test]
fn a_remote_session_on_a_follower_is_connected_once_the_follower_applied_its_creation() {
    let mut w = world();
    let mut log = Log::new();
    let (on_leader, _) = w.attach(Remote, 0, 6, &mut log).unwrap();
    assert!(!w.is_connecting(on_leader));
    let (a, _) = w.attach(Remote, 1, 6, &mut log).unwrap();
    let read = w.submit(
        a,
        Op::Exists {
            path: "/".into(),
            watch: false,
        },
        &mut log,
    );
    let mut enabled = Vec::new();
    w.enabled(&mut enabled);
    assert!(
        !enabled.contains(&Event::Request { client: a }),
        "a request taken before the connect is answered: {enabled:?}"
    );
    settle(&mut w, &mut log);
    let got = deliveries(&log, a);
    assert!(
        matches!(&got[..], [Delivery::Session(SessionEvent::SyncConnected), Delivery::Reply { op, .. }] if *op == read),
        "{got:?}"
    );
    assert!(deliveries(&log, on_leader).is_empty());
}

/// A connection lost before its connect response: the client never
/// learned its session id and will ask for a new session on a new
/// connection; the slot keeps the session made for it, which lives on
/// unheard until it expires.
#[test]
fn a_remote_connection_lost_before_its_connect_response_keeps_its_session() {
    let mut w = world();
    let mut log = Log::new();
    let (a, session) = w.attach(Remote, 1, 6, &mut log).unwrap();
    assert!(w.is_connecting(a));
    w.disconnect(a);
    assert_eq!(w.session_of(a), session);
    assert!(w.is_session_live(session));
    assert!(!w.is_connecting(a));
}

#[test]
fn a_remote_session_lives_on_its_traffic_and_expires_on_its_own_timeout() {
    let mut w = world();
    let mut log = Log::new();
    let (a, sa) = w.attach(Remote, 0, 3, &mut log).unwrap();
    let (b, sb) = w.attach(Remote, 1, 3, &mut log).unwrap();
    settle(&mut w, &mut log);
    for _ in 0..10 {
        w.heard_from(a);
        w.step(&Event::Tick, &mut log);
        settle(&mut w, &mut log);
    }
    assert!(w.is_session_live(sa), "pinged every tick");
    assert!(!w.is_session_live(sb), "silent for more than 3 ticks");
    // Connected once follower 1 applied its creation (S39); the server
    // closed b's connection as it applied the expiry.
    assert_eq!(
        deliveries(&log, b),
        vec![
            Delivery::Session(SessionEvent::SyncConnected),
            Delivery::Session(SessionEvent::Disconnected)
        ]
    );
    assert_eq!(w.reattach(b, 0, 0, 3, &mut log), Err(Refusal::Expired));
    assert!(w.is_handle_dead(b));
    let _ = a;
}

/// The deadline the leader reports (what `zkserve`'s `dump` prints) is
/// the tick at which the session really expires, by its own timeout.
#[test]
fn a_remote_session_expiry_deadline_counts_its_own_timeout() {
    let mut w = world();
    let mut log = Log::new();
    let (_, session) = w.attach(Remote, 1, 4, &mut log).unwrap();
    settle(&mut w, &mut log);
    let deadline = w.expiry_deadline(session).expect("a live session");
    assert_eq!(deadline, w.now() + 4 + 1);
    while w.now() + 1 < deadline {
        w.step(&Event::Tick, &mut log);
        settle(&mut w, &mut log);
        assert!(w.is_session_live(session), "expired early, at {}", w.now());
    }
    w.step(&Event::Tick, &mut log);
    settle(&mut w, &mut log);
    assert!(!w.is_session_live(session), "not expired at its deadline");
}

#[test]
fn a_remote_session_reattaches_elsewhere_and_its_own_set_watches_fire_missed_events() {
    let mut w = world();
    let mut log = Log::new();
    let (a, sa) = w.attach(Remote, 1, 10, &mut log).unwrap();
    let (b, _) = w.attach(Remote, 2, 10, &mut log).unwrap();
    settle(&mut w, &mut log);
    w.submit(
        a,
        Op::Exists {
            path: "/n".into(),
            watch: true,
        },
        &mut log,
    );
    settle(&mut w, &mut log);
    assert!(
        w.client_watches(a).is_empty(),
        "no watch memory kept for it"
    );
    w.disconnect(a);
    settle(&mut w, &mut log);
    assert_eq!(
        w.reattach(a, 1, i64::MAX, 10, &mut log),
        Err(Refusal::Behind {
            server_zxid: w.applied_zxid(1),
            seen_zxid: i64::MAX
        }),
        "S26"
    );
    w.submit(
        b,
        Op::Create {
            path: "/n".into(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        },
        &mut log,
    );
    settle(&mut w, &mut log);
    let seen = w.client_last_zxid(a);
    w.reattach(a, 0, seen, 10, &mut log).unwrap();
    assert!(w.is_session_live(sa));
    assert_eq!(w.server_of(a), Some(0));
    let exist = ["/n".to_string()];
    let fired = w.set_watches(
        a,
        &SetWatches {
            relative_zxid: seen,
            exist: &exist,
            ..SetWatches::default()
        },
    );
    assert_eq!(fired, 1);
    settle(&mut w, &mut log);
    let got = deliveries(&log, a);
    assert_eq!(
        got[got.len() - 2..],
        [
            Delivery::Session(SessionEvent::SyncConnected),
            Delivery::Watch(zksim::WatchedEvent {
                kind: EventType::NodeCreated,
                path: "/n".into()
            })
        ]
    );
}

#[test]
fn a_remote_close_ends_the_session_and_kills_the_handle() {
    let mut w = world();
    let mut log = Log::new();
    let (a, sa) = w.attach(Remote, 0, 10, &mut log).unwrap();
    w.submit(
        a,
        Op::Create {
            path: "/e".into(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        },
        &mut log,
    );
    w.close(a, &mut log);
    settle(&mut w, &mut log);
    assert!(w.is_handle_dead(a));
    assert!(!w.is_session_live(sa));
    assert!(w.leader_tree().get("/e").is_none());
    assert!(log.iter().any(
        |h| matches!(h, Happening::SessionEnded { session, expired: false } if *session == sa)
    ));
}

#[test]
fn kept_commits_carry_every_txn_even_with_one_server_and_leave_the_fingerprint_alone() {
    use zksim::tree::Txn;
    let config = Config {
        servers: 1,
        max_time: u64::MAX,
        ..Config::default()
    };
    let mut watched = World::<Remote>::new(config.clone(), Vec::new());
    let mut plain = World::<Remote>::new(config, Vec::new());
    watched.keep_commits();
    for w in [&mut watched, &mut plain] {
        let mut log = Log::new();
        let (a, _) = w.attach(Remote, 0, 6, &mut log).unwrap();
        settle(w, &mut log);
        let create = Op::Create {
            path: "/e".into(),
            data: b"x".to_vec(),
            mode: CreateMode::Ephemeral,
        };
        w.submit(a, create, &mut log);
        settle(w, &mut log);
        w.close(a, &mut log);
        settle(w, &mut log);
    }
    assert_eq!(watched.fingerprint(), plain.fingerprint());
    assert_eq!(watched, plain);
    let mut kept = Vec::new();
    watched.take_commits(&mut kept);
    let zxids: Vec<_> = kept.iter().map(|c| c.zxid).collect();
    assert_eq!(zxids, vec![1, 2, 3]);
    assert!(matches!(kept[0].txn, Txn::CreateSession { .. }));
    assert!(matches!(&kept[1].txn, Txn::Create { path, .. } if path == "/e"));
    assert!(
        matches!(&kept[2].txn, Txn::CloseSession { ephemerals, .. } if ephemerals == &vec!["/e".to_string()])
    );
    assert_eq!(kept[1].client, Some(0));
    let mut again = Vec::new();
    watched.take_commits(&mut again);
    assert!(again.is_empty(), "taken once");
    let mut nothing = Vec::new();
    plain.take_commits(&mut nothing);
    assert!(nothing.is_empty());
}
