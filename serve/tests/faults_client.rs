//! Server-side faults seen by an unmodified client (`zookeeper-client`
//! 0.11) over loopback, and the run's recorded history replayed to the
//! same trace hash (issue 32).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::timeout;
use zkjudge::history::{self, FaultRecord, Record, SessionEvent, TxnRecord};
use zkserve::driver::{start_recording, Options, Running};
use zkserve::engine::faults::{Aim, FaultSpec};
use zkserve::replay::{replay, Outcome};
use zkserve::Limits;
use zookeeper_client as zk;

/// Every wait in these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(20);

fn history_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zkserve-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir.join(name)
}

async fn serve(faults: &str, aim: &str, history: &Path) -> Running {
    start_recording(
        Options {
            limits: Limits {
                tick_ms: 50,
                seed: 1,
                faults: FaultSpec::parse(faults).unwrap(),
                aim: Aim::parse(aim).unwrap(),
                ..Limits::default()
            },
            bind: [127, 0, 0, 1].into(),
            port: 0,
            verbose: true,
        },
        Some(history.to_path_buf()),
    )
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

fn read_history(path: &Path) -> Vec<Record> {
    let file = std::fs::File::open(path).expect("the history was written");
    history::read(std::io::BufReader::new(file)).expect("a readable history")
}

/// The plan's one expiry, aimed at the first request under /L: the
/// client's request goes unanswered, its pings too, its read timeout
/// fires, the leader expires the session, and the client is told Expired
/// on reconnect; the history says so and replays to the same hash.
#[tokio::test]
async fn an_expiry_fault_makes_the_client_see_its_session_expire() {
    let path = history_file("expiry.jsonl");
    let server = serve("expiries=1,within=1", "/L", &path).await;
    let cs = server.connect_string();
    let client = connect(&cs, Duration::from_millis(500)).await;
    let session = client.session_id().0;
    client.create("/e", b"", &ephemeral()).await.unwrap();
    client.create("/R", b"0", &persistent()).await.unwrap();
    let mut states = client.state_watcher();
    // The aimed request: lost with the silenced session.
    let lost = timeout(WAIT, client.create("/L", b"", &persistent()))
        .await
        .expect("the client gives up in time");
    assert!(lost.is_err(), "{lost:?}");
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(zk::SessionState::Expired)) {
        let state = timeout(WAIT, states.changed())
            .await
            .expect("a state change in time");
        seen.push(state);
    }
    assert_eq!(
        seen.first(),
        Some(&zk::SessionState::Disconnected),
        "{seen:?}"
    );
    let other = connect(&cs, Duration::from_secs(2)).await;
    assert!(
        other.check_stat("/e").await.unwrap().is_none(),
        "ephemeral gone"
    );
    assert!(
        other.check_stat("/L").await.unwrap().is_none(),
        "the lost create"
    );
    drop(other);
    drop(client);
    server.stop().await;

    let records = read_history(&path);
    assert!(records.iter().any(|r| matches!(
        r,
        Record::Fault { fault: FaultRecord::Silence { session: s, .. }, .. } if *s == session
    )));
    assert!(records.iter().any(|r| matches!(
        r,
        Record::Session { session: s, event: SessionEvent::Expired, .. } if *s == session
    )));
    assert!(records.iter().any(|r| matches!(
        r,
        Record::Commit { session: s, txn: TxnRecord::CloseSession { ephemerals, expired: true }, .. }
            if *s == session && ephemerals == &vec!["/e".to_string()]
    )));
    // The re-attach was refused (timeOut 0).
    assert!(records.iter().any(|r| matches!(
        r,
        Record::Session { session: s, event: SessionEvent::Refused, .. } if *s == session
    )));
    assert!(matches!(records.last(), Some(Record::End { .. })));
    assert_eq!(
        replay(&records).unwrap(),
        Outcome::Same {
            records: records.len(),
            ended: true
        }
    );
    let _ = std::fs::remove_file(&path);
}

/// Drops under /L: the client loses its connection (a reply maybe with
/// it), reconnects with its session and goes on; the recorded run,
/// wall-clock ticks and all, replays to the same hash.
#[tokio::test]
async fn a_recorded_run_with_drops_replays_to_the_same_hash() {
    let path = history_file("drops.jsonl");
    let server = serve("drops=2,within=6", "/L", &path).await;
    let cs = server.connect_string();
    let client = connect(&cs, Duration::from_secs(2)).await;
    let session = client.session_id();
    client.create("/L", b"", &persistent()).await.ok();
    for i in 0..8 {
        let path = format!("/L/n{i}");
        // A dropped connection fails the request in flight; the client
        // reconnects by itself. A create whose reply was lost may have
        // been committed: retried, it is NodeExists.
        for _ in 0..20 {
            match timeout(WAIT, client.create(&path, b"", &persistent()))
                .await
                .expect("an answer in time")
            {
                Ok(_) | Err(zk::Error::NodeExists) => break,
                Err(zk::Error::ConnectionLoss) => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let (children, _) = client.get_children("/L").await.unwrap();
    assert_eq!(children.len(), 8);
    assert_eq!(
        client.session_id(),
        session,
        "the session survived the drops"
    );
    let stats = server.stats().await;
    drop(client);
    server.stop().await;
    assert_eq!(stats.faults, 2, "{stats:?}");

    let records = read_history(&path);
    let drops = records
        .iter()
        .filter(|r| {
            matches!(
                r,
                Record::Fault {
                    fault: FaultRecord::Drop { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(drops, 2);
    assert_eq!(
        replay(&records).unwrap(),
        Outcome::Same {
            records: records.len(),
            ended: true
        }
    );
    let _ = std::fs::remove_file(&path);
}
