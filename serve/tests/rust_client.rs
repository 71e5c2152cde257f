//! An unmodified Rust client (`zookeeper-client` 0.11) against an
//! in-process zkserve on loopback: data ops, a watch, a reconnect to
//! another server with the session kept, an expiry decided by the server,
//! a new session on a lagging follower (S39).

use std::time::Duration;

use tokio::time::timeout;
use zkserve::driver::{start, Options, Running};
use zkserve::Limits;
use zookeeper_client as zk;

/// Every wait in these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(20);

async fn serve(tick_ms: u64) -> Running {
    serve_with(Limits {
        tick_ms,
        ..Limits::default()
    })
    .await
}

async fn serve_with(limits: Limits) -> Running {
    start(Options {
        limits,
        bind: [127, 0, 0, 1].into(),
        port: 0,
        verbose: true,
    })
    .await
    .expect("bind loopback ports")
}

async fn connect(cluster: &str, session_timeout: Duration) -> zk::Client {
    timeout(
        WAIT,
        zk::Client::connector()
            .with_session_timeout(session_timeout)
            .connect(cluster),
    )
    .await
    .expect("connect in time")
    .expect("connect")
}

fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

fn ephemeral() -> zk::CreateOptions<'static> {
    zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all())
}

#[tokio::test]
async fn create_read_set_delete_list_and_watch() {
    let server = serve(100).await;
    let cs = server.connect_string();
    let a = connect(&cs, Duration::from_secs(2)).await;
    let b = connect(&cs, Duration::from_secs(2)).await;
    assert_ne!(a.session_id(), b.session_id());

    a.create("/app", b"v0", &persistent()).await.unwrap();
    let (data, stat) = b.get_data("/app").await.unwrap();
    assert_eq!((data.as_slice(), stat.version), (&b"v0"[..], 0));

    let seq = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let (_, s1) = a.create("/app/n-", b"", &seq).await.unwrap();
    let (_, s2) = b.create("/app/n-", b"", &seq).await.unwrap();
    assert!(s2.into_i64() > s1.into_i64());
    let mut children = a.list_children("/app").await.unwrap();
    children.sort();
    assert_eq!(children.len(), 2, "{children:?}");
    assert!(children[0].starts_with("n-"), "{children:?}");

    let (_, _, watcher) = b.get_and_watch_data("/app").await.unwrap();
    a.set_data("/app", b"v1", Some(0)).await.unwrap();
    let event = timeout(WAIT, watcher.changed()).await.expect("notified");
    assert_eq!(event.event_type, zk::EventType::NodeDataChanged);
    assert_eq!(event.path, "/app");
    assert!(matches!(
        a.set_data("/app", b"v2", Some(0)).await,
        Err(zk::Error::BadVersion)
    ));

    // b's ephemeral goes with b's session.
    drop(b);
    let deadline = tokio::time::Instant::now() + WAIT;
    while a.list_children("/app").await.unwrap().len() != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "b's ephemeral stayed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_dropped_connection_reconnects_to_another_server_and_keeps_its_session() {
    let server = serve(100).await;
    // Only server 1 first: the client's first connection is there.
    let client = connect(&server.addrs[1].to_string(), Duration::from_secs(2)).await;
    drop(client);
    let cluster = format!("{},{}", server.addrs[1], server.addrs[2]);
    let client = connect(&cluster, Duration::from_secs(2)).await;
    let session = client.session_id();
    client.create("/e", b"", &ephemeral()).await.unwrap();
    let (_, watcher) = client.check_and_watch_stat("/e").await.unwrap();
    let mut states = client.state_watcher();

    // Both ports refuse for a moment, then server 1 stays down: the client
    // must come back on server 2 with the same session.
    server.set_down(1, true);
    server.set_down(2, true);
    let state = timeout(WAIT, states.changed())
        .await
        .expect("a state change");
    assert_eq!(state, zk::SessionState::Disconnected);
    server.set_down(2, false);
    let state = timeout(WAIT, states.changed())
        .await
        .expect("a state change");
    assert_eq!(state, zk::SessionState::SyncConnected);
    assert_eq!(client.session_id(), session);
    assert!(client.check_stat("/e").await.unwrap().is_some());

    // The watch was re-armed by the client's SetWatches on server 2.
    let other = connect(&server.addrs[0].to_string(), Duration::from_secs(2)).await;
    other.delete("/e", None).await.unwrap();
    let event = timeout(WAIT, watcher.changed()).await.expect("notified");
    assert_eq!(event.event_type, zk::EventType::NodeDeleted);
    let stats = server.stop().await;
    assert!(stats.sessions_reattached >= 1, "{stats:?}");
}

#[tokio::test]
async fn a_session_expired_by_the_server_is_told_expired_on_reconnect() {
    let server = serve(50).await;
    let cs = server.connect_string();
    // 500 ms asked, within [100, 1000] at a 50 ms tick.
    let client = connect(&cs, Duration::from_millis(500)).await;
    assert_eq!(client.session_timeout(), Duration::from_millis(500));
    client.create("/gone", b"", &ephemeral()).await.unwrap();
    let mut states = client.state_watcher();
    for s in 0..3 {
        server.set_down(s, true);
    }
    assert_eq!(
        timeout(WAIT, states.changed()).await.expect("disconnected"),
        zk::SessionState::Disconnected
    );
    // No server hears from it: the leader expires it after its timeout.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for s in 0..3 {
        server.set_down(s, false);
    }
    assert_eq!(
        timeout(WAIT, states.changed()).await.expect("expired"),
        zk::SessionState::Expired
    );
    let other = connect(&cs, Duration::from_secs(2)).await;
    assert!(other.check_stat("/gone").await.unwrap().is_none());
    server.stop().await;
}

/// S36 through the wire: a TTL create (extended types off) is refused
/// Unimplemented, and, like every failed write, takes a zxid — the next
/// create's czxid is two past the one before it, as on 3.8.0
/// (conformance_serve's `S36_ttl_create_is_unimplemented` found serve
/// answering it without ordering it).
#[tokio::test]
async fn a_ttl_create_is_unimplemented_and_takes_a_zxid() {
    let server = serve(100).await;
    let client = connect(&server.connect_string(), Duration::from_secs(2)).await;
    let (before, _) = client.create("/before", b"", &persistent()).await.unwrap();
    let ttl = zk::CreateMode::Persistent
        .with_acls(zk::Acls::anyone_all())
        .with_ttl(Duration::from_secs(1));
    let refused = client.create("/t", b"", &ttl).await;
    assert!(
        matches!(refused, Err(zk::Error::Unimplemented)),
        "{refused:?}"
    );
    let (after, _) = client.create("/after", b"", &persistent()).await.unwrap();
    assert_eq!(after.czxid, before.czxid + 2);
    assert!(client.check_stat("/t").await.unwrap().is_none());
    drop(client);
    server.stop().await;
}

/// S39 through the wire: a new session on a lagging follower is connected
/// only once that follower has applied the session's creation, so its
/// first read shows a node written before it connected — never the
/// follower's older state.
#[tokio::test]
async fn a_new_session_on_a_lagging_follower_first_reads_what_was_written_before_it() {
    use zkserve::engine::faults::{Action, FaultPlan, FaultSpec, MAX_LAG_TICKS};
    let spec = FaultSpec::parse("lag=1,within=1").unwrap();
    // The longest lag the plan draws, so that the old behaviour (answer at
    // once, stale read) could not hide behind a lag already over.
    let seed = (0..1000)
        .find(|&seed| {
            matches!(FaultPlan::new(&spec, seed).planned[0].action,
                Action::Lag { ticks, .. } if ticks == MAX_LAG_TICKS)
        })
        .expect("a seed drawing the longest lag");
    let server = serve_with(Limits {
        servers: 3,
        tick_ms: 200,
        faults: spec,
        seed,
        ..Limits::default()
    })
    .await;
    let (leader, follower) = (server.addrs[0].to_string(), server.addrs[1].to_string());
    let timeout_s = Duration::from_secs(4);

    // The first data request, on follower 1, makes follower 1 lag; its
    // reply waits for the lag's end, so it runs on its own task.
    let writer = connect(&follower, timeout_s).await;
    let create = tokio::spawn(async move { writer.create("/x", b"", &persistent()).await });
    // The leader applies at once: once it shows /x, the create is ordered.
    let witness = connect(&leader, timeout_s).await;
    timeout(WAIT, async {
        while witness.check_stat("/x").await.unwrap().is_none() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the leader shows /x");

    let reader = connect(&follower, timeout_s).await;
    assert!(
        reader.check_stat("/x").await.unwrap().is_some(),
        "the new session read follower 1 before it applied the session's creation"
    );
    timeout(WAIT, create)
        .await
        .expect("the create answered once the lag ended")
        .unwrap()
        .unwrap();
    let stats = server.stop().await;
    assert_eq!(stats.faults, 1, "{stats:?}");
}
