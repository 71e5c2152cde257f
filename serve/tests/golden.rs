//! The engine answers what a real ZooKeeper 3.8.0 answered: the Java
//! client's sessions (A across its two re-attaches, and B) of the codec's
//! golden capture (docs/WIRE.md; ZooKeeper's own
//! Java client against Debian's server) is replayed into the engine, frame
//! by frame, and every reply and notification is compared with the one
//! the real server sent — header (xid, err) and body — with what differs
//! from run to run on a real server too (session ids, passwords, zxids,
//! times) left out.
//!
//! Requests this server does not serve (docs/SERVE.md: setACL) are
//! skipped with their replies, and listed, so the test says how much of the
//! capture it compared.

use std::collections::{BTreeMap, VecDeque};

use zkserve::{CloseReason, Engine, Input, Limits, Output};
use zkwire::opcode as op;
use zkwire::{decode_connect_response, decode_notification, decode_reply, FrameReader};

const FIXTURE: &str = include_str!("../../wire/tests/golden/zookeeper-3.8.frames");

/// Opcodes the engine answers Unimplemented and closes on.
const NOT_SERVED: [i32; 1] = [op::SET_ACL];

fn opcode_of(name: &str) -> i32 {
    if name == "connect" {
        return op::CREATE_SESSION;
    }
    (-20..200)
        .find(|&code| op::name(code) == Some(name))
        .unwrap_or_else(|| panic!("opcode name {name:?}"))
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A frame as compared: what a second real server would also send.
fn normalized(opcode: i32, body: &[u8]) -> String {
    if opcode == op::CREATE_SESSION {
        let r = decode_connect_response(body).expect("connect response");
        return format!(
            "connect timeout={} read_only={:?}",
            r.timeout_ms, r.read_only
        );
    }
    if opcode == op::NOTIFICATION {
        let (h, e) = decode_notification(body).expect("notification");
        return format!("notification zxid={} {e:?}", h.zxid);
    }
    let (h, response) = decode_reply(opcode, body).expect("reply");
    let text = format!("xid={} err={} {:?}", h.xid, h.err, response);
    // Stat's run-dependent fields, wherever they appear; and `aversion`:
    // setACL is not served, so the node it changed in the capture keeps
    // aversion 0 here.
    let mut out = text;
    for field in [
        "czxid",
        "mzxid",
        "pzxid",
        "ctime",
        "mtime",
        "ephemeral_owner",
        "aversion",
    ] {
        out = blank_field(&out, field);
    }
    out
}

fn blank_field(text: &str, field: &str) -> String {
    let key = format!("{field}: ");
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(&key) {
        out.push_str(&rest[..at + key.len()]);
        rest = &rest[at + key.len()..];
        let end = rest.find([',', ' ', '}']).unwrap_or(rest.len());
        out.push('_');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Steps whose answers differ on purpose (docs/SERVE.md): ACLs are not
/// enforced, so session B reads the creator-only node.
const DIFFERENT_ON_PURPOSE: [&str; 1] = ["session B reads the creator-only node (NoAuth)"];

#[test]
fn the_java_clients_sessions_are_answered_as_the_real_server_answered_them() {
    let mut engine = Engine::new(Limits {
        servers: 1,
        tick_ms: 100,
        ..Limits::default()
    });
    let mut out = Vec::new();
    // Our frames not yet compared, per connection.
    let mut ours: BTreeMap<u64, VecDeque<Vec<u8>>> = BTreeMap::new();
    // A captured session id → ours, and our password for it.
    let mut sessions: BTreeMap<i64, (i64, Vec<u8>)> = BTreeMap::new();
    let mut skipped_xids = Vec::new();
    let mut skipped = Vec::new();
    let mut step = String::new();
    let mut compared = 0;
    let take = |out: &mut Vec<Output>, ours: &mut BTreeMap<u64, VecDeque<Vec<u8>>>| {
        for o in out.drain(..) {
            match o {
                Output::Send { conn, bytes } => {
                    let mut reader = FrameReader::default();
                    reader.push(&bytes);
                    let frame = reader.pop().unwrap().unwrap();
                    ours.entry(conn).or_default().push_back(frame);
                }
                Output::Close { conn, reason } => {
                    assert_eq!(reason, CloseReason::SessionClosed, "conn {conn} closed")
                }
            }
        }
    };
    for line in FIXTURE.lines() {
        if let Some(name) = line.strip_prefix("# step: ") {
            if name.starts_with("connect session C") {
                // Sessions C and on are zkwire's raw probes.
                break;
            }
            step = name.to_string();
            continue;
        }
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.first() == Some(&"close") && fields.get(2) == Some(&"client") {
            let conn = fields[1].parse().unwrap();
            engine.handle(Input::Closed { conn }, &mut out);
            take(&mut out, &mut ours);
            continue;
        }
        if fields.len() < 4 || !matches!(fields[0], "c2s" | "s2c") {
            continue;
        }
        let conn: u64 = fields[1].parse().unwrap();
        let (dir, name, body) = (fields[0], fields[2], unhex(fields[3]));
        let opcode = opcode_of(name);
        let xid = (opcode != op::CREATE_SESSION && opcode != op::NOTIFICATION)
            .then(|| i32::from_be_bytes(body[..4].try_into().unwrap()));
        if dir == "c2s" {
            let body = if opcode == op::CREATE_SESSION {
                engine.handle(Input::Accepted { conn, server: 0 }, &mut out);
                // A re-attach names the captured session: name ours.
                let mut request = zkwire::decode_connect_request(&body).unwrap();
                if let Some((id, passwd)) = sessions.get(&request.session_id) {
                    request.session_id = *id;
                    request.passwd = passwd.clone();
                    request.last_zxid_seen = request.last_zxid_seen.min(engine.world().last_zxid());
                }
                zkwire::encode_connect_request(&request)
            } else {
                if NOT_SERVED.contains(&opcode) {
                    skipped_xids.push((conn, xid));
                    skipped.push(name.to_string());
                    continue;
                }
                body
            };
            engine.handle(
                Input::Bytes {
                    conn,
                    data: zkwire::write_frame(&body),
                },
                &mut out,
            );
            take(&mut out, &mut ours);
            continue;
        }
        if skipped_xids.contains(&(conn, xid)) {
            continue;
        }
        let mine = ours
            .get_mut(&conn)
            .and_then(VecDeque::pop_front)
            .unwrap_or_else(|| panic!("step {step:?}: no frame where the real server sent {line}"));
        if opcode == op::CREATE_SESSION {
            let theirs = decode_connect_response(&body).unwrap();
            let mine = decode_connect_response(&mine).unwrap();
            sessions.insert(theirs.session_id, (mine.session_id, mine.passwd));
        }
        if DIFFERENT_ON_PURPOSE.contains(&step.as_str()) {
            continue;
        }
        assert_eq!(
            normalized(opcode, &mine),
            normalized(opcode, &body),
            "step {step:?}, conn {conn}, after {compared} equal frames"
        );
        compared += 1;
    }
    let left: Vec<_> = ours.iter().filter(|(_, q)| !q.is_empty()).collect();
    assert!(
        left.is_empty(),
        "frames the real server did not send: {left:?}"
    );
    eprintln!("compared {compared} frames; skipped (not served): {skipped:?}");
    assert!(compared >= 70, "only {compared} frames compared");
}
