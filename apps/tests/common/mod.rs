//! What the app tests share: the two servers each test runs against (the
//! real 3.8 server and `zkcheck serve`, `target.rs`), names that do not
//! collide, a forced session expiry through a fault proxy, and the checks
//! every library's apps must pass — the same on both servers.

#![allow(dead_code)] // each test binary uses its own subset

pub mod library;
mod target;

use std::time::{Duration, Instant};

use serde_json::Value;
use zkapps::{named, states, Finished};
use zkreal::FaultProxy;

pub(crate) use target::on_both_servers;
pub use target::Target;

/// How long one app may run before it is killed.
pub const APP_LIMIT: Duration = Duration::from_secs(40);
/// How long to wait for an event the app prints early (`session`, `ready`).
pub const EARLY_LIMIT: Duration = Duration::from_secs(20);
/// The session timeout asked for by an app whose session a test expires:
/// short, so that the server expires it about a second after the proxy
/// goes silent (the test server's tickTime is 100 ms, serve's 200 ms).
pub const EXPIRING_SESSION_MS: u64 = 1000;
/// How long the server may take to expire a silenced session.
const EXPIRY_LIMIT: Duration = Duration::from_secs(15);

/// Expire the session `id` (`0x…`, as the app printed it) the way the
/// network does it: the proxy holds every byte until the server has
/// dropped the session (it is gone from `dump`), then breaks the
/// connections and lets bytes flow, so that the client's reconnect is
/// answered "expired" — as `zkreal`'s conformance runner does `Expire`.
/// On serve, `dump` is the leader's: the leader expires the session on
/// ZooKeeper's timeline, the follower behind the proxy closes it.
pub fn expire(server: &Target, proxy: &FaultProxy, id: &str) {
    let lists = |dump: &str| {
        dump.lines()
            .any(|line| line.trim().trim_end_matches(':') == id)
    };
    let dump = server.four_letter("dump").expect("the server's dump");
    assert!(
        lists(&dump),
        "{id} is not a live session of the server:\n{dump}"
    );
    proxy.pause();
    let started = Instant::now();
    loop {
        let dump = server.four_letter("dump").expect("the server's dump");
        if !lists(&dump) {
            break;
        }
        assert!(
            started.elapsed() < EXPIRY_LIMIT,
            "the server did not expire {id} within {EXPIRY_LIMIT:?}:\n{dump}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    proxy.drop_connections();
    proxy.resume();
}

/// The `id` of the first `session` event whose `field` is `value` (or the
/// first one at all).
pub fn session_id(event: &Value) -> String {
    event["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a session event without an id: {event}"))
        .to_string()
}

/// The basic session app's events, with its `session` event (whose id
/// differs from run to run) left out: the same for every library.
pub fn expected_session_events(root: &str) -> Vec<Value> {
    let a = format!("{root}/a");
    let seq1 = format!("{root}/seq-0000000001");
    let seq2 = format!("{root}/seq-0000000002");
    let eph = format!("{root}/eph");
    let lines = [
        serde_json::json!({"ev": "connected"}),
        serde_json::json!({"ev": "created", "path": root}),
        serde_json::json!({"ev": "created", "path": a}),
        serde_json::json!({"ev": "get", "path": a, "data": "hello", "version": 0}),
        serde_json::json!({"ev": "set", "path": a, "version": 1}),
        serde_json::json!({"ev": "created", "path": seq1}),
        serde_json::json!({"ev": "created", "path": seq2}),
        serde_json::json!({"ev": "created", "path": eph}),
        serde_json::json!({"ev": "ephemeral", "path": eph, "mine": true}),
        serde_json::json!({"ev": "get", "path": a, "data": "world", "version": 1}),
        serde_json::json!({"ev": "children", "path": root,
            "children": ["a", "eph", "seq-0000000001", "seq-0000000002"]}),
        serde_json::json!({"ev": "watch", "type": "NodeDataChanged", "path": a}),
        serde_json::json!({"ev": "watch", "type": "NodeChildrenChanged", "path": root}),
        serde_json::json!({"ev": "deleted", "path": a}),
        serde_json::json!({"ev": "deleted", "path": seq1}),
        serde_json::json!({"ev": "deleted", "path": seq2}),
        serde_json::json!({"ev": "children", "path": root, "children": []}),
        serde_json::json!({"ev": "nonode", "path": root}),
        serde_json::json!({"ev": "done"}),
    ];
    lines.to_vec()
}

/// The events of a run without its `session` events.
pub fn without_sessions(done: &Finished) -> Vec<Value> {
    done.events
        .iter()
        .filter(|e| e["ev"] != "session")
        .cloned()
        .collect()
}

/// A lock app's run without faults: every increment done, written in
/// order 1, 2, …, none lost to a failed version check, no connection
/// trouble (Curator may report the first CONNECTED to a listener added
/// just after it connected; that is no trouble).
pub fn check_clean_lock_run(done: &Finished, increments: u64) {
    done.expect_success();
    let story = done.story();
    let writes: Vec<u64> = named(&done.events, "write")
        .iter()
        .map(|e| e["value"].as_u64().expect("a written value"))
        .collect();
    assert_eq!(writes, (1..=increments).collect::<Vec<_>>(), "{story}");
    assert!(named(&done.events, "conflict").is_empty(), "{story}");
    assert!(named(&done.events, "abandon").is_empty(), "{story}");
    assert!(
        states(&done.events, None).iter().all(|s| s == "CONNECTED"),
        "{story}"
    );
    let fin = named(&done.events, "final");
    assert_eq!(fin.len(), 1, "{story}");
    assert_eq!(fin[0]["value"], increments, "{story}");
    assert_eq!(fin[0]["increments"], increments, "{story}");
    assert_eq!(
        named(&done.events, "acquired").len(),
        named(&done.events, "released").len(),
        "{story}"
    );
}

/// An election app's run: each candidate led once, and leadership never
/// overlapped (every `leader` is followed by the same candidate's `resign`
/// before the next `leader`); the leaders' work added up.
pub fn check_election(done: &Finished, candidates: u64) {
    done.expect_success();
    let story = done.story();
    let turns: Vec<&Value> = done
        .events
        .iter()
        .filter(|e| e["ev"] == "leader" || e["ev"] == "resign")
        .collect();
    assert_eq!(turns.len() as u64, 2 * candidates, "{story}");
    let mut leaders = Vec::new();
    for pair in turns.chunks(2) {
        assert_eq!(pair[0]["ev"], "leader", "{story}");
        assert_eq!(pair[1]["ev"], "resign", "{story}");
        assert_eq!(pair[0]["candidate"], pair[1]["candidate"], "{story}");
        leaders.push(pair[0]["candidate"].as_u64().expect("a candidate number"));
    }
    leaders.sort_unstable();
    assert_eq!(leaders, (0..candidates).collect::<Vec<_>>(), "{story}");
    let fin = named(&done.events, "final");
    assert_eq!(fin.len(), 1, "{story}");
    assert_eq!(fin[0]["value"], candidates, "{story}");
    assert_eq!(fin[0]["led"], candidates, "{story}");
}

/// An expiry observer's run: the states it reported are exactly
/// `expected`, and the ephemeral node went with the expired session.
pub fn check_expiry(done: &Finished, expected: &[&str]) {
    done.expect_success();
    let story = done.story();
    assert_eq!(
        after_first_connect(states(&done.events, None)),
        expected,
        "{story}"
    );
    assert_eq!(named(&done.events, "new_session").len(), 1, "{story}");
    assert_eq!(named(&done.events, "ephemeral_gone").len(), 1, "{story}");
}

/// `states` without a first CONNECTED: a listener added just after the
/// client connected may or may not be told of it (Curator's are).
pub fn after_first_connect(mut states: Vec<String>) -> Vec<String> {
    if states.first().is_some_and(|s| s == "CONNECTED") {
        states.remove(0);
    }
    states
}

/// Where, in a lock app's run, a worker's first hold of the lock began and
/// ended: the events from its first `acquired` to its first `released`.
pub fn first_hold(done: &Finished) -> &[Value] {
    let story = done.story();
    let start = done
        .events
        .iter()
        .position(|e| e["ev"] == "acquired")
        .unwrap_or_else(|| panic!("never acquired:\n{story}"));
    let end = done.events[start..]
        .iter()
        .position(|e| e["ev"] == "released")
        .unwrap_or_else(|| panic!("never released:\n{story}"));
    &done.events[start..start + end + 1]
}

/// `127.0.0.1:P` where nothing listens: a port the OS just gave and took
/// back (a fixed low port may be taken by someone's server).
pub fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    addr.to_string()
}

/// A unique znode name for one test.
pub fn unique(prefix: &str) -> String {
    format!("/{prefix}-{}", std::process::id())
}
