//! The fault plan and the recorded history, through the engine alone:
//! inputs in, outputs and history records out, no sockets (issue 32).

use std::collections::BTreeMap;
use zkjudge::history::{FaultRecord, Record, SessionEvent, TxnRecord};
use zkserve::engine::faults::{Action, Aim, FaultSpec};
use zkserve::engine::history::{hex, unhex};
use zkserve::replay::{replay, Outcome};

use zkserve::{CloseReason, ConnId, Engine, Input, Limits, Output};
use zkwire::opcode as op;
use zkwire::{
    decode_connect_response, decode_reply, encode_connect_request, encode_request, write_frame,
    Acl, ConnectRequest, ConnectResponse, FrameReader, Request, RequestHeader,
};

struct Harness {
    engine: Engine,
    out: Vec<Output>,
    records: Vec<Record>,
    /// Each session's password, from its connect response.
    passwords: BTreeMap<i64, Vec<u8>>,
}

impl Harness {
    fn new(faults: &str, aim: &str, seed: u64) -> Self {
        let mut engine = Engine::new(Limits {
            tick_ms: 100,
            seed,
            faults: FaultSpec::parse(faults).unwrap(),
            aim: Aim::parse(aim).unwrap(),
            ..Limits::default()
        });
        engine.record_history();
        let records = vec![engine.meta()];
        Harness {
            engine,
            out: Vec::new(),
            records,
            passwords: BTreeMap::new(),
        }
    }

    fn input(&mut self, input: Input) -> Vec<Output> {
        self.engine.handle(input, &mut self.out);
        self.engine.take_records(&mut self.records);
        std::mem::take(&mut self.out)
    }

    fn ticks(&mut self, n: usize) -> Vec<Output> {
        (0..n).flat_map(|_| self.input(Input::Tick)).collect()
    }

    fn sent(outputs: &[Output], conn: ConnId) -> Vec<Vec<u8>> {
        let mut reader = FrameReader::default();
        let mut frames = Vec::new();
        for o in outputs {
            if let Output::Send { conn: c, bytes } = o {
                if *c == conn {
                    reader.push(bytes);
                    while let Some(f) = reader.pop().unwrap() {
                        frames.push(f);
                    }
                }
            }
        }
        frames
    }

    fn closed(outputs: &[Output], conn: ConnId) -> Option<CloseReason> {
        outputs.iter().find_map(|o| match o {
            Output::Close { conn: c, reason } if *c == conn => Some(reason.clone()),
            _ => None,
        })
    }

    /// Connect `conn` to `server`: `Some` answer, or `None` if unanswered.
    fn connect(&mut self, conn: ConnId, server: usize, session: i64) -> Option<ConnectResponse> {
        self.input(Input::Accepted { conn, server });
        let passwd = self.passwords.get(&session).cloned().unwrap_or(vec![0; 16]);
        let body = encode_connect_request(&ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 1000,
            session_id: session,
            passwd,
            read_only: Some(false),
        });
        let out = self.input(Input::Bytes {
            conn,
            data: write_frame(&body),
        });
        let response = Self::sent(&out, conn)
            .first()
            .map(|f| decode_connect_response(f).unwrap())?;
        self.passwords
            .insert(response.session_id, response.passwd.clone());
        Some(response)
    }

    fn request(&mut self, conn: ConnId, xid: i32, opcode: i32, request: Request) -> Vec<Output> {
        let body = encode_request(&RequestHeader { xid, op: opcode }, &request);
        self.input(Input::Bytes {
            conn,
            data: write_frame(&body),
        })
    }

    fn faults(&self) -> Vec<FaultRecord> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Fault { fault, .. } => Some(fault.clone()),
                _ => None,
            })
            .collect()
    }
}

fn create(path: &str, flags: i32) -> Request {
    Request::Create {
        path: path.into(),
        data: Some(b"v".to_vec()),
        acl: vec![Acl::open_unsafe()],
        flags,
    }
}

fn get(path: &str) -> Request {
    Request::GetData {
        path: path.into(),
        watch: false,
    }
}

/// A small app: two sessions, creates under /L and writes elsewhere,
/// ticks between. `noise` adds requests outside /L and extra ticks, as
/// another thread timing of the same app would.
fn script(h: &mut Harness, noise: bool) {
    h.connect(1, 1, 0).unwrap();
    h.connect(2, 2, 0).unwrap();
    h.request(1, 1, op::CREATE, create("/L", 0));
    h.request(2, 1, op::CREATE, create("/R", 0));
    for i in 0..12 {
        let conn = 1 + (i % 2) as u64;
        if noise {
            h.request(conn, 100 + i, op::GET_DATA, get("/R"));
            h.input(Input::Tick);
        }
        h.request(conn, 2 + i, op::CREATE2, create("/L/lock-", 3));
        h.input(Input::Tick);
    }
    h.ticks(30);
}

/// Which aimed request each fault fired at ("request N under /L").
fn fired_at(faults: &[FaultRecord]) -> Vec<String> {
    faults
        .iter()
        .filter_map(|f| match f {
            FaultRecord::Drop { reason, .. }
            | FaultRecord::Silence { reason, .. }
            | FaultRecord::Lag { reason, .. }
            | FaultRecord::Partition { reason, .. } => {
                // "... at request N under /L (create /L/lock- of session ...": the
                // session and xid depend on the app's timing, the rest not.
                let at = reason.split(" at request ").nth(1)?;
                Some(format!(
                    "{} {}",
                    reason.split(" at request ").next()?,
                    at.split(" of session").next()?
                ))
            }
            FaultRecord::Heal { .. } => None,
        })
        .collect()
}

const PLAN: &str = "drops=2,expiries=1,lag=1,partitions=1,within=10";

#[test]
fn a_seed_fixes_the_faults_whatever_the_app_timing() {
    let mut first = Harness::new(PLAN, "/L", 11);
    script(&mut first, false);
    let mut again = Harness::new(PLAN, "/L", 11);
    script(&mut again, false);
    assert_eq!(first.records, again.records, "same inputs, same history");
    let fired = fired_at(&first.faults());
    let stats = first.engine.stats();
    assert_eq!(fired.len() as u64, stats.faults, "{fired:?}");
    assert_eq!(
        stats.faults + stats.faults_skipped,
        5,
        "every fault fired or was skipped"
    );
    assert!(fired.len() >= 3, "{fired:?}");

    // Other requests and ticks around the aimed ones: the same faults at
    // the same aimed requests.
    let mut noisy = Harness::new(PLAN, "/L", 11);
    script(&mut noisy, true);
    assert_eq!(fired_at(&noisy.faults()), fired);

    let mut other = Harness::new(PLAN, "/L", 12);
    script(&mut other, false);
    assert_ne!(
        fired_at(&other.faults()),
        fired,
        "another seed, another plan"
    );
}

/// A seed whose plan's first fault is `want`.
fn seed_where(faults: &str, want: impl Fn(&Action) -> bool) -> u64 {
    (0..1000)
        .find(|&seed| {
            let h = Harness::new(faults, "/L", seed);
            want(&h.engine.faults().plan().planned[0].action)
        })
        .expect("a seed in 0..1000")
}

#[test]
fn a_drop_closes_the_connection_before_or_after_the_reply() {
    for before in [true, false] {
        let seed = seed_where(
            "drops=1,within=1",
            |a| matches!(a, Action::Drop { before_reply } if *before_reply == before),
        );
        let mut h = Harness::new("drops=1,within=1", "/L", seed);
        let a = h.connect(1, 1, 0).unwrap();
        let out = h.request(1, 5, op::CREATE, create("/L", 0));
        let replies = Harness::sent(&out, 1);
        assert_eq!(replies.len(), usize::from(!before), "before={before}");
        assert_eq!(
            Harness::closed(&out, 1),
            Some(CloseReason::FaultDrop {
                before_reply: before
            })
        );
        // The write was committed either way: a client that lost the
        // reply must find out by reading.
        assert!(h.records.iter().any(|r| matches!(
            r,
            Record::Commit { session, txn: TxnRecord::Create { path, .. }, xid: Some(5), .. }
                if *session == a.session_id && path == "/L"
        )));
        assert!(h.records.iter().any(|r| matches!(
            r,
            Record::Reply { xid: 5, lost, .. } if *lost == before
        )));
        assert!(matches!(
            h.faults()[..],
            [FaultRecord::Drop { conn: 1, session, .. }] if session == a.session_id
        ));
    }
}

#[test]
fn an_expiry_silences_the_session_until_the_leader_expires_it() {
    let mut h = Harness::new(
        "expiries=1,within=2",
        "/L",
        seed_where("expiries=1,within=2", |_| true),
    );
    let at = h.engine.faults().plan().planned[0].at;
    let a = h.connect(1, 1, 0).unwrap();
    h.request(1, 1, op::CREATE, create("/e", 1));
    let mut xid = 2;
    for _ in 1..at {
        let out = h.request(1, xid, op::CREATE, create(&format!("/L/n{xid}"), 0));
        assert_eq!(Harness::sent(&out, 1).len(), 1);
        xid += 1;
    }
    // The fault's request: lost. Pings: unanswered.
    let out = h.request(1, xid, op::CREATE, create("/L", 0));
    assert!(Harness::sent(&out, 1).is_empty());
    let out = h.request(1, -2, op::PING, Request::Ping);
    assert!(Harness::sent(&out, 1).is_empty(), "ping unanswered");
    assert!(
        matches!(h.faults()[..], [FaultRecord::Silence { session, .. }] if session == a.session_id)
    );
    // The client's read timeout fires (2/3 of 1 s): it drops the
    // connection and tries another server, which does not answer either.
    h.ticks(7);
    h.input(Input::Closed { conn: 1 });
    assert_eq!(h.connect(2, 2, a.session_id).map(|r| r.timeout_ms), None);
    // The leader expires it a full timeout (10 ticks) after it last heard
    // from it; the held reconnect is then answered timeOut 0.
    let out = h.ticks(5);
    let answer = Harness::sent(&out, 2);
    assert_eq!(answer.len(), 1, "answered once the session is gone");
    let answer = decode_connect_response(&answer[0]).unwrap();
    assert_eq!((answer.timeout_ms, answer.session_id), (0, 0));
    assert_eq!(Harness::closed(&out, 2), Some(CloseReason::SessionInvalid));
    assert!(h.records.iter().any(|r| matches!(
        r,
        Record::Session { session, event: SessionEvent::Expired, .. } if *session == a.session_id
    )));
    // The expiry's transaction deleted its ephemeral.
    assert!(h.records.iter().any(|r| matches!(
        r,
        Record::Commit { txn: TxnRecord::CloseSession { ephemerals, expired: true }, .. }
            if ephemerals == &vec!["/e".to_string()]
    )));
}

#[test]
fn a_lagging_follower_serves_stale_reads_for_its_ticks() {
    let seed = seed_where("lag=1,within=1", |_| true);
    let mut h = Harness::new("lag=1,within=1", "/L", seed);
    let Action::Lag { ticks, .. } = h.engine.faults().plan().planned[0].action else {
        panic!("a lag")
    };
    h.connect(1, 0, 0).unwrap();
    h.connect(2, 2, 0).unwrap();
    // B's request under /L makes its own server (2) lag.
    h.request(
        2,
        1,
        op::EXISTS,
        Request::Exists {
            path: "/L".into(),
            watch: false,
        },
    );
    assert!(matches!(
        h.faults()[..],
        [FaultRecord::Lag { server: 2, .. }]
    ));
    h.request(1, 1, op::CREATE, create("/R", 0));
    let out = h.request(2, 2, op::GET_DATA, get("/R"));
    let (hdr, _) = decode_reply(op::GET_DATA, &Harness::sent(&out, 2)[0]).unwrap();
    assert_eq!(hdr.err, -101, "stale: the follower has not applied /R");
    let applied = |h: &Harness| {
        h.records.iter().rev().find_map(|r| match r {
            Record::Reply {
                xid: 2,
                server: 2,
                applied,
                ..
            } => Some(*applied),
            _ => None,
        })
    };
    let stale = applied(&h).flatten().unwrap();
    let out = h.ticks(ticks as usize);
    assert!(out.is_empty() || Harness::sent(&out, 2).is_empty());
    assert!(matches!(
        h.faults().last(),
        Some(FaultRecord::Heal { server: 2 })
    ));
    let out = h.request(2, 3, op::GET_DATA, get("/R"));
    let (hdr, _) = decode_reply(op::GET_DATA, &Harness::sent(&out, 2)[0]).unwrap();
    assert_eq!(hdr.err, 0, "caught up after the lag");
    let fresh = h.records.iter().rev().find_map(|r| match r {
        Record::Reply {
            xid: 3,
            server: 2,
            applied,
            ..
        } => *applied,
        _ => None,
    });
    assert!(fresh.unwrap() > stale);
}

#[test]
fn a_partitioned_follower_stops_forwarding_and_heals() {
    let seed = seed_where(
        "partitions=1,within=1",
        |a| matches!(a, Action::Partition { ticks, .. } if *ticks <= 4),
    );
    let mut h = Harness::new("partitions=1,within=1", "/L", seed);
    let Action::Partition { ticks, .. } = h.engine.faults().plan().planned[0].action else {
        panic!("a partition")
    };
    h.connect(2, 2, 0).unwrap();
    h.request(
        2,
        1,
        op::EXISTS,
        Request::Exists {
            path: "/L".into(),
            watch: false,
        },
    );
    assert!(matches!(
        h.faults()[..],
        [FaultRecord::Partition { server: 2, .. }]
    ));
    // A write on the partitioned follower is not forwarded: no commit.
    let out = h.request(2, 2, op::CREATE, create("/W", 0));
    assert!(Harness::sent(&out, 2).is_empty());
    assert!(!h.records.iter().any(|r| matches!(
        r,
        Record::Commit {
            txn: TxnRecord::Create { .. },
            ..
        }
    )));
    let mut out = h.ticks(ticks as usize);
    out.extend(h.ticks(1));
    let replies = Harness::sent(&out, 2);
    assert_eq!(replies.len(), 1, "answered once healed");
    let (hdr, _) = decode_reply(op::CREATE, &replies[0]).unwrap();
    assert_eq!((hdr.xid, hdr.err), (2, 0));
    assert!(h.faults().contains(&FaultRecord::Heal { server: 2 }));
}

#[test]
fn the_history_has_every_commit_in_zxid_order_and_replays_to_the_same_hash() {
    let mut h = Harness::new(PLAN, "/L", 11);
    script(&mut h, true);
    h.records.push(h.engine.end_record());
    let zxids: Vec<i64> = h
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Commit { zxid, .. } => Some(*zxid),
            _ => None,
        })
        .collect();
    let last = h.engine.world().last_zxid();
    assert_eq!(
        zxids,
        (1..=last).collect::<Vec<_>>(),
        "every transaction, once, in order"
    );
    assert!(matches!(h.records[1], Record::Input { n: 0, .. }));
    assert_eq!(
        replay(&h.records).unwrap(),
        Outcome::Same {
            records: h.records.len(),
            ended: true
        }
    );

    // One byte of one request changed: the replay differs from there on.
    let mut tampered = h.records.clone();
    // The last request that reached the world (a Request record after it).
    let at = (1..tampered.len() - 1)
        .rev()
        .find(|&i| {
            matches!(
                tampered[i],
                Record::Input {
                    input: zkjudge::history::InputRecord::Bytes { .. },
                    ..
                }
            ) && matches!(tampered[i + 1], Record::Request { .. })
        })
        .unwrap();
    if let Record::Input {
        input: zkjudge::history::InputRecord::Bytes { hex: text, .. },
        ..
    } = &mut tampered[at]
    {
        let mut bytes = unhex(text).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        *text = hex(&bytes);
    }
    match replay(&tampered).unwrap() {
        Outcome::Different { index, .. } => assert!(index > at, "{index} after {at}"),
        same => panic!("a tampered input replayed the same: {same:?}"),
    }
    // A tampered derived record is caught too (the replay makes its own).
    let mut edited = h.records.clone();
    let commit = edited
        .iter()
        .position(|r| matches!(r, Record::Commit { .. }))
        .unwrap();
    if let Record::Commit { zxid, .. } = &mut edited[commit] {
        *zxid += 100;
    }
    assert!(
        matches!(replay(&edited).unwrap(), Outcome::Different { index, .. } if index == commit)
    );
    // Bytes that are not hex: not replayable, named by their record.
    let mut broken = h.records.clone();
    if let Record::Input {
        input: zkjudge::history::InputRecord::Bytes { hex: text, .. },
        ..
    } = &mut broken[at]
    {
        *text = "zz".into();
    }
    assert_eq!(replay(&broken).unwrap_err().0, at);
}

#[test]
fn recording_changes_nothing_the_engine_sends() {
    let run = |record: bool| {
        let mut h = Harness::new(PLAN, "/L", 3);
        if !record {
            h.engine = Engine::new(Limits {
                tick_ms: 100,
                seed: 3,
                faults: FaultSpec::parse(PLAN).unwrap(),
                aim: Aim::parse("/L").unwrap(),
                ..Limits::default()
            });
        }
        let mut all = Vec::new();
        h.connect(1, 1, 0).unwrap();
        h.connect(2, 0, 0).unwrap();
        for i in 0..10 {
            all.extend(h.request(1 + (i % 2) as u64, i, op::CREATE2, create("/L-", 2)));
            all.extend(h.request(1 + (i % 2) as u64, 50 + i, op::CREATE2, create("/L/x-", 2)));
            all.extend(h.ticks(1));
        }
        all.extend(h.ticks(20));
        all
    };
    assert_eq!(run(true), run(false));
}

/// `zkserve --replay-input FILE`: exit 0 for the same run, 1 for a
/// tampered one (showing the first difference), 2 for a file that is not
/// a history, naming the line.
#[test]
fn replay_input_exits_0_same_1_different_2_unreadable() {
    let mut h = Harness::new(PLAN, "/L", 5);
    script(&mut h, false);
    h.records.push(h.engine.end_record());
    let dir = std::env::temp_dir().join(format!("zkserve-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, records: &[Record]| {
        let path = dir.join(name);
        let mut w = zkjudge::history::Writer::new(std::fs::File::create(&path).unwrap());
        for r in records {
            w.write(r).unwrap();
        }
        path
    };
    let run = |path: &std::path::Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zkserve"))
            .arg("--replay-input")
            .arg(path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, text) = run(&write("same.jsonl", &h.records));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("same trace hash"), "{text}");

    let mut tampered = h.records.clone();
    if let Some(Record::End { trace_hash, .. }) = tampered.last_mut() {
        *trace_hash = "0000000000000000".into();
    }
    let (code, text) = run(&write("tampered.jsonl", &tampered));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("line {}", tampered.len())), "{text}");

    let path = dir.join("garbage.jsonl");
    let mut text = serde_json::to_string(&h.records[0]).unwrap();
    text.push_str("\nnot json\n");
    std::fs::write(&path, text).unwrap();
    let (code, text) = run(&path);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("line 2"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
