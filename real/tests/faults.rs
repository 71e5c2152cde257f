//! Faults on a real ZooKeeper through [`FaultProxy`]: a broken connection
//! (ConnectionLoss, Disconnected, SyncConnected, same session) and a silent
//! network that lets the server expire a session (Expired, ephemerals gone,
//! a new session after reopen).
//!
//! The fault is injected from the test thread while the run goes on in
//! another; the test waits for the server to show the state it needs
//! (`dump` lists ephemerals by session) rather than for fixed delays, and
//! the clients leave wide margins (a second) around the moment of the fault.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::*;
use zkreal::{drive_blocking, DriveConfig, FaultProxy, TestServer};
use zksim::{
    CreateMode, Delivery, EventType, Happening, Op, Response, SessionEvent, WatchedEvent, ZkError,
};

fn exists(path: &str, watch: bool) -> Op {
    Op::Exists {
        path: path.into(),
        watch,
    }
}

/// Poll the server's `dump` until `pred` holds of it (or panic after `limit`).
fn wait_for_dump(server: &TestServer, limit: Duration, what: &str, pred: impl Fn(&str) -> bool) {
    let started = Instant::now();
    loop {
        if server.four_letter("dump").is_ok_and(|d| pred(&d)) {
            return;
        }
        assert!(started.elapsed() < limit, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn proxy_for(server: &TestServer) -> FaultProxy {
    let addr: SocketAddr = server.connect_string().parse().expect("loopback address");
    FaultProxy::start(addr).expect("proxy")
}

#[test]
fn a_broken_connection_fails_what_is_in_flight_then_reconnects_the_same_session() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let proxy = proxy_for(&server);
    let client = CuedClient::new(vec![
        Cue::Do(create("/f1", CreateMode::Ephemeral)),
        Cue::Sleep(20),
        // Sent while the proxy holds every byte: lost with the connection.
        Cue::Do(exists("/f1", false)),
        Cue::AwaitSession(SessionEvent::SyncConnected),
        Cue::Do(exists("/f1", false)),
    ]);
    // A long session timeout keeps the library from noticing the silence by
    // itself (it gives up on a connection after 2/5 of it): we break it.
    let config = DriveConfig {
        session_timeout: Duration::from_secs(10),
        run_timeout: Duration::from_secs(20),
        ..DriveConfig::new(proxy.connect_string())
    };
    let run = std::thread::spawn(move || drive_blocking(vec![client], &config));
    wait_for_dump(&server, Duration::from_secs(10), "the ephemeral /f1", |d| {
        d.contains("/f1")
    });
    // The client sends its next op 2 s after creating /f1: into the pause.
    // Only requests are held, so the reply to the create still gets through
    // even if the server showed /f1 before sending it.
    proxy.pause_requests();
    std::thread::sleep(Duration::from_millis(2600));
    proxy.drop_connections();
    proxy.resume();
    let run = run.join().expect("driver thread").expect("drive");
    assert!(run.finished, "{:?}", run.clients);
    assert_eq!(
        run.sessions[0].len(),
        1,
        "the session survived the broken connection"
    );
    let session = run.sessions[0][0];

    let seen: Vec<Delivery> = deliveries(&run, 0).into_iter().map(|(_, d)| d).collect();
    let Delivery::Reply {
        reply: Ok(Response::Created { .. }),
        ..
    } = &seen[0]
    else {
        panic!("{seen:?}")
    };
    assert!(
        matches!(
            &seen[1],
            Delivery::Reply {
                reply: Err(ZkError::ConnectionLoss),
                ..
            }
        ),
        "the op in flight fails first (as in the Java client): {seen:?}"
    );
    assert_eq!(
        seen[2],
        Delivery::Session(SessionEvent::Disconnected),
        "{seen:?}"
    );
    assert_eq!(
        seen[3],
        Delivery::Session(SessionEvent::SyncConnected),
        "{seen:?}"
    );
    assert!(
        matches!(&seen[4], Delivery::Reply { reply: Ok(Response::Exists(Some(stat))), .. } if stat.ephemeral_owner == session),
        "the ephemeral is still there, still ours: {seen:?}"
    );
    assert_eq!(seen.len(), 5, "{seen:?}");
}

#[test]
fn a_silent_network_lets_the_server_expire_the_session_and_its_ephemerals() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let proxy = proxy_for(&server);
    // Client 0 goes through the proxy and will be cut off; client 1 watches directly.
    let victim = CuedClient::new(vec![
        Cue::Do(create("/f2", CreateMode::Ephemeral)),
        Cue::AwaitSession(SessionEvent::Expired),
        Cue::Reopen,
        Cue::Do(exists("/f2", false)),
        Cue::Do(create("/f2", CreateMode::Ephemeral)),
    ]);
    let witness = CuedClient::new(vec![
        Cue::Do(exists("/f2", true)),
        Cue::AwaitCreationIfAbsent,
        Cue::Do(exists("/f2", true)),
        Cue::AwaitOneMoreWatch,
    ]);
    let config = DriveConfig {
        session_timeout: Duration::from_secs(2),
        run_timeout: Duration::from_secs(30),
        ..DriveConfig::new(server.connect_string())
    }
    .with_client_server(0, proxy.connect_string());
    let run = std::thread::spawn(move || drive_blocking(vec![victim, witness], &config));
    wait_for_dump(&server, Duration::from_secs(10), "the ephemeral /f2", |d| {
        d.contains("/f2")
    });
    let silenced = Instant::now();
    proxy.pause();
    wait_for_dump(
        &server,
        Duration::from_secs(10),
        "the server to expire /f2's session",
        |d| !d.contains("/f2"),
    );
    eprintln!(
        "the server expired the session {:?} after the network went silent",
        silenced.elapsed()
    );
    proxy.drop_connections();
    proxy.resume();
    let run = run.join().expect("driver thread").expect("drive");
    assert!(run.finished, "{:?}", run.clients);

    let sessions = &run.sessions[0];
    assert_eq!(sessions.len(), 2, "expired, then reopened");
    assert!(run.log.iter().any(
        |h| matches!(h, Happening::SessionEnded { session, expired: true } if *session == sessions[0])
    ));
    let victim_seen: Vec<Delivery> = deliveries(&run, 0).into_iter().map(|(_, d)| d).collect();
    eprintln!("the cut-off client saw: {victim_seen:?}");
    assert!(
        victim_seen.contains(&Delivery::Session(SessionEvent::Expired)),
        "{victim_seen:?}"
    );
    let got = replies(&run, 0);
    assert_eq!(
        got[1].1,
        Ok(Response::Exists(None)),
        "the ephemeral went with the session"
    );
    assert!(
        matches!(&got[2].1, Ok(Response::Created { stat, .. }) if stat.ephemeral_owner == sessions[1]),
        "the new session owns the new ephemeral: {:?}",
        got[2]
    );
    assert!(
        deliveries(&run, 1).iter().any(|(_, d)| *d
            == Delivery::Watch(WatchedEvent {
                kind: EventType::NodeDeleted,
                path: "/f2".into()
            })),
        "the other session saw the expiry delete the ephemeral"
    );
}

/// A multi reply that the proxy holds when the connection breaks never
/// reaches the client, so the proxy must not keep it for the next multi
/// (the conformance conductor reads a failed multi's per-op codes from
/// it) — even while the relay that held it still sleeps in the pause. A
/// multi answered on the new connection is kept. (CI once matched a
/// reconnected session's multi with the stale reply of the one before.)
#[test]
fn a_held_multi_reply_goes_with_its_connection_and_the_next_one_is_kept() {
    use zookeeper_client as zk;
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let proxy = proxy_for(&server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let multi = |client: &zk::Client, path: &'static str| {
        let client = client.clone();
        tokio::spawn(async move {
            let mut writer = client.new_multi_writer();
            let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
            writer.add_create(path, b"", &mode).expect("a create");
            writer.commit().await.map(|_| ())
        })
    };
    runtime.block_on(async {
        let client = zk::Client::connector()
            .with_session_timeout(Duration::from_secs(10))
            .connect(&proxy.connect_string())
            .await
            .expect("connect");
        proxy.pause_replies();
        let answered = proxy.replies_seen();
        let first = multi(&client, "/held-multi");
        let started = Instant::now();
        while proxy.replies_seen() == answered {
            assert!(started.elapsed() < Duration::from_secs(10), "no reply");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        proxy.drop_connections();
        assert!(
            proxy.next_multi_reply_if(|_| true).is_none(),
            "the held reply went with its connection"
        );
        proxy.resume();
        let lost = first.await.expect("task");
        assert!(lost.is_err(), "the held multi failed: {lost:?}");
        let second = multi(&client, "/kept-multi").await.expect("task");
        assert!(second.is_ok(), "{second:?}");
        let kept = proxy
            .next_multi_reply_if(|_| true)
            .expect("the reply it got");
        assert_eq!((kept.header_err, kept.entries.len()), (0, 1), "{kept:?}");
    });
}
