//! Measure a real ZooKeeper for the checker's timing model (the
//! `calibrate` example): how long one request takes end to end when the server is
//! idle (a round trip), how long each request costs when many are queued
//! (the server's service time — a queue drains at one request per service
//! time), and how long a release that wakes many watchers keeps the system
//! busy per notification.
//!
//! Everything runs on one tokio thread, as the real-server example and
//! its `compare` example run their clients: what is measured is the cost of the
//! whole loopback system (server, network stack, the client library on one
//! thread), which is what the timing model must reproduce for them.
//! Requests are pipelined by creating their futures before awaiting any
//! (`zookeeper-client` sends a request when its method is called).

use std::time::{Duration, Instant};

use zookeeper_client as zk;

/// What [`calibrate`] measured, in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Median time of one `exists` when nothing else is in flight.
    pub round_trip_read_us: f64,
    /// Median time of one `create` or `delete` when nothing else is in flight.
    pub round_trip_write_us: f64,
    /// Time per `exists` with `samples` of them in flight at once.
    pub read_us: f64,
    /// Time per `create`/`delete` with `samples` of them in flight at once.
    pub write_us: f64,
    /// Median time per notification when one delete wakes `watchers` watchers.
    pub notify_us: f64,
    /// Requests per measurement.
    pub samples: usize,
    /// Watchers of the notification burst.
    pub watchers: usize,
}

/// Measure the server at `connect_string` with `samples` requests per
/// measurement and a burst of `watchers` notifications. Makes its own
/// nodes under a fresh `/zkcheck-calibrate-…` and removes them.
pub fn calibrate(
    connect_string: &str,
    samples: usize,
    watchers: usize,
) -> Result<Calibration, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| format!("no tokio runtime: {e}"))?;
    runtime.block_on(measure(connect_string, samples.max(10), watchers.max(2)))
}

async fn connect(connect_string: &str) -> Result<zk::Client, String> {
    zk::Client::connector()
        .with_session_timeout(Duration::from_secs(10))
        .connect(connect_string)
        .await
        .map_err(|e| format!("cannot connect to {connect_string}: {e}"))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

async fn measure(
    connect_string: &str,
    samples: usize,
    watchers: usize,
) -> Result<Calibration, String> {
    let fail = |what: &str, e: zk::Error| format!("{what}: {e}");
    let client = connect(connect_string).await?;
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let root = format!("/zkcheck-calibrate-{millis}");
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());
    client
        .create(&root, b"", &persistent)
        .await
        .map_err(|e| fail("create the calibration root", e))?;

    // Warm up (JIT, connection buffers), then idle round trips.
    for _ in 0..samples.min(500) {
        client
            .check_stat(&root)
            .await
            .map_err(|e| fail("exists", e))?;
    }
    let mut reads = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = Instant::now();
        client
            .check_stat(&root)
            .await
            .map_err(|e| fail("exists", e))?;
        reads.push(micros(t.elapsed()));
    }
    let writes_n = (samples / 4).max(5);
    let mut writes = Vec::with_capacity(2 * writes_n);
    for i in 0..writes_n {
        let path = format!("{root}/rt-{i}");
        let t = Instant::now();
        client
            .create(&path, b"", &ephemeral)
            .await
            .map_err(|e| fail("create", e))?;
        writes.push(micros(t.elapsed()));
        let t = Instant::now();
        client
            .delete(&path, None)
            .await
            .map_err(|e| fail("delete", e))?;
        writes.push(micros(t.elapsed()));
    }

    // Saturation: every request in flight at once, spread over `watchers`
    // sessions (one session's requests are served strictly in order). The
    // first pass warms up; the second is measured.
    let mut sessions = Vec::with_capacity(watchers);
    for _ in 0..watchers {
        sessions.push(connect(connect_string).await?);
    }
    let mut read_us = 0.0;
    let mut write_us = 0.0;
    for pass in 0..2 {
        let t = Instant::now();
        let pending: Vec<_> = (0..samples)
            .map(|i| sessions[i % watchers].check_stat(&root))
            .collect();
        for f in pending {
            f.await.map_err(|e| fail("exists", e))?;
        }
        read_us = micros(t.elapsed()) / samples as f64;
        let paths: Vec<String> = (0..samples)
            .map(|i| format!("{root}/s-{pass}-{i}"))
            .collect();
        let t = Instant::now();
        let created: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| sessions[i % watchers].create(p, b"", &ephemeral))
            .collect();
        for f in created {
            f.await.map_err(|e| fail("create", e))?;
        }
        let deleted: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| sessions[i % watchers].delete(p, None))
            .collect();
        for f in deleted {
            f.await.map_err(|e| fail("delete", e))?;
        }
        write_us = micros(t.elapsed()) / (2 * samples) as f64;
    }

    // A herd: every session watches one node, one delete wakes them all.
    // The last notification comes one write round trip plus the burst's
    // cost after the delete is sent.
    let write_round_trip = median(writes.clone());
    let mut per_notification = Vec::new();
    for round in 0..20 {
        let node = format!("{root}/herd-{round}");
        client
            .create(&node, b"", &persistent)
            .await
            .map_err(|e| fail("create", e))?;
        let mut armed = Vec::with_capacity(watchers);
        for s in &sessions {
            let (_, watcher) = s
                .check_and_watch_stat(&node)
                .await
                .map_err(|e| fail("exists(watch)", e))?;
            armed.push(watcher);
        }
        let t = Instant::now();
        let deleting = client.delete(&node, None);
        let mut last = Duration::ZERO;
        for watcher in armed {
            watcher.changed().await;
            last = last.max(t.elapsed());
        }
        deleting.await.map_err(|e| fail("delete", e))?;
        let burst = (micros(last) - write_round_trip).max(0.0);
        per_notification.push(burst / watchers as f64);
    }
    drop(sessions);
    let _ = client.delete(&root, None).await;

    Ok(Calibration {
        round_trip_read_us: median(reads),
        round_trip_write_us: median(writes),
        read_us,
        write_us,
        notify_us: median(per_notification),
        samples,
        watchers,
    })
}
