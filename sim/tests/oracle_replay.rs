//! Differential test against a real ZooKeeper 3.8.0 server.
//!
//! `tests/oracle/*.script` are op scripts (three sessions; creates, deletes,
//! setData, reads with watches, multis, session closes). `*.expected` is
//! what `tests/oracle/DiffOracle.java` printed running each script against
//! an embedded 3.8.0 server: every reply (codes, created names, every Stat
//! field but the times, children in the server's order) and every watch
//! event each session saw. This test runs the same script through
//! `DataTree` + `WatchManager` and must print exactly the same.
//!
//! The harness plays the client's part the way the Java client does: an
//! invalid request (`path::validate_request`) fails locally with
//! `BadArguments` and takes no zxid; sessions 1–3 are created at zxids 1–3;
//! a closed session's own events are not shown.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use zksim::path::validate_request;
use zksim::tree::{DataTree, Txn};
use zksim::watch::WatchManager;
use zksim::{CreateMode, Op, Reply, Response, SessionId, Stat, ZkError};

const SESSIONS: SessionId = 3;

fn owner(id: SessionId) -> String {
    if id == 0 {
        "0".into()
    } else {
        format!("s{id}")
    }
}

fn stat(s: &Stat) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{}",
        s.czxid,
        s.mzxid,
        s.pzxid,
        s.version,
        s.cversion,
        s.aversion,
        owner(s.ephemeral_owner),
        s.data_length,
        s.num_children
    )
}

fn mode(m: &str) -> CreateMode {
    match m {
        "P" => CreateMode::Persistent,
        "E" => CreateMode::Ephemeral,
        "PS" => CreateMode::PersistentSequential,
        _ => CreateMode::EphemeralSequential,
    }
}

fn num<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.parse().expect("number in script")
}

/// A write op from its tokens: `create P MODE LEN`, `delete P V`, `set P V LEN`.
fn write_op(t: &[&str]) -> Op {
    match t[0] {
        "create" => Op::Create {
            path: t[1].into(),
            data: vec![b'x'; num(t[3])],
            mode: mode(t[2]),
        },
        "delete" => Op::Delete {
            path: t[1].into(),
            version: num(t[2]),
        },
        "set" => Op::SetData {
            path: t[1].into(),
            data: vec![b'x'; num(t[3])],
            version: num(t[2]),
        },
        other => panic!("unknown write op {other}"),
    }
}

fn multi_item(r: &Result<Response, ZkError>) -> String {
    match r {
        Err(e) => format!("err {}", e.code()),
        Ok(Response::Created { path, .. }) => format!("created {path}"),
        Ok(Response::SetData(s)) => format!("setdata {}", stat(s)),
        Ok(Response::Deleted) => "deleted".into(),
        Ok(other) => format!("{other:?}"),
    }
}

fn show(reply: &Reply) -> String {
    match reply {
        Err(e) => format!("ERR {}", e.code()),
        Ok(Response::Created { path, stat: s }) => format!("created {path} {}", stat(s)),
        Ok(Response::Deleted) => "deleted".into(),
        Ok(Response::SetData(s)) => format!("setdata {}", stat(s)),
        Ok(Response::Exists(None)) => "exists none".into(),
        Ok(Response::Exists(Some(s))) => format!("exists {}", stat(s)),
        Ok(Response::Data { data, stat: s }) => format!("data {} {}", data.len(), stat(s)),
        Ok(Response::Children { names, stat: s }) => {
            format!("children [{}] {}", names.join(", "), stat(s))
        }
        Ok(Response::Multi(items)) => {
            let items: Vec<String> = items.iter().map(multi_item).collect();
            format!("multi [{}]", items.join("; "))
        }
        Ok(Response::Synced) => "closed".into(),
        Ok(Response::Checked) => "checked".into(),
        // The oracle's scripts send none of the newer ops.
        Ok(other @ (Response::Ephemerals(_) | Response::AllChildrenNumber(_) | Response::Done)) => {
            format!("{other:?}")
        }
    }
}

/// Run a script through the simulator, printing what DiffOracle.java prints.
fn replay(script: &str) -> String {
    let lines: Vec<&str> = script.lines().collect();
    let mut tree = DataTree::new();
    let mut watches = WatchManager::new();
    let mut zxid = 0;
    for session in 1..=SESSIONS {
        zxid += 1;
        let (reply, _) = tree.apply(zxid, 0, &Txn::CreateSession { session });
        assert!(reply.is_ok());
    }
    let mut closed = BTreeSet::new();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') || line.starts_with(' ') {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let session: SessionId = num(&t[0][1..]);
        let op = match t[1] {
            "create" | "delete" | "set" => Some(write_op(&t[1..])),
            "exists" => Some(Op::Exists {
                path: t[2].into(),
                watch: t[3] == "1",
            }),
            "get" => Some(Op::GetData {
                path: t[2].into(),
                watch: t[3] == "1",
            }),
            "children" => Some(Op::GetChildren {
                path: t[2].into(),
                watch: t[3] == "1",
            }),
            "multi" => {
                let n: usize = num(t[2]);
                let subs = lines[i + 1..=i + n]
                    .iter()
                    .map(|l| write_op(&l.split_whitespace().collect::<Vec<_>>()))
                    .collect();
                Some(Op::Multi(subs))
            }
            "close" => None,
            other => panic!("unknown op {other}"),
        };
        let mut events = Vec::new();
        let reply = match op {
            None => {
                let txn = tree.prepare_close_session(session);
                zxid += 1;
                let (reply, triggers) = tree.apply(zxid, 0, &txn);
                events = watches.trigger_all(&triggers);
                watches.remove_session(session);
                closed.insert(session);
                reply
            }
            Some(op) => match validate_request(&op) {
                Err(e) => Err(e),
                Ok(()) if op.is_write() => {
                    let txn = tree.prepare(session, &op);
                    zxid += 1;
                    let (reply, triggers) = tree.apply(zxid, 0, &txn);
                    events = watches.trigger_all(&triggers);
                    reply
                }
                Ok(()) => {
                    let reply = tree.read(&op);
                    watches.register_read(session, &op, &reply);
                    reply
                }
            },
        };
        writeln!(out, "{} {}", i + 1, show(&reply)).unwrap();
        for s in 1..=SESSIONS {
            if closed.contains(&s) {
                continue;
            }
            for (_, e) in events.iter().filter(|(to, _)| *to == s) {
                writeln!(out, "  event s{s} {:?} {}", e.kind, e.path).unwrap();
            }
        }
    }
    out
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle");
    let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).expect("script");
    let expected = std::fs::read_to_string(dir.join(format!("{name}.expected"))).expect("expected");
    let got = replay(&script);
    for (n, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
        assert_eq!(
            g,
            e,
            "{name}: output line {} differs from the real server",
            n + 1
        );
    }
    assert_eq!(
        got.lines().count(),
        expected.lines().count(),
        "{name}: output length"
    );
}

#[test]
fn basics_match_real_server() {
    check("basics");
}

#[test]
fn lock_pattern_matches_real_server() {
    check("lock");
}

#[test]
fn random_scripts_match_real_server() {
    for seed in 1..=12 {
        check(&format!("random-{seed}"));
    }
}
