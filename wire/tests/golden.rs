//! Golden frames captured from a real ZooKeeper 3.8 server
//! (`tests/golden/zookeeper-3.8.frames`, recorded by `examples/capture.rs`):
//! every frame decodes, and re-encodes to the very same bytes; the fixture
//! covers every opcode the codec speaks; and the server's answers that a
//! reimplementation must copy (failed multis, addWatch's body, expiry, the
//! unknown opcode...) are pinned as facts.

use std::collections::BTreeSet;

use zkwire::opcode as op;
use zkwire::*;

const FIXTURE: &str = include_str!("golden/zookeeper-3.8.frames");

#[derive(Debug)]
struct Frame {
    line: usize,
    to_server: bool,
    conn: usize,
    op: String,
    body: Vec<u8>,
    /// The `# step:` the frame was captured in.
    step: String,
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn frames() -> Vec<Frame> {
    let mut out = Vec::new();
    let mut step = String::new();
    for (i, line) in FIXTURE.lines().enumerate() {
        if let Some(s) = line.strip_prefix("# step: ") {
            step = s.to_string();
        }
        let mut words = line.split(' ');
        let dir = words.next().unwrap_or("");
        if dir != "c2s" && dir != "s2c" {
            continue;
        }
        let conn = words.next().unwrap().parse().unwrap();
        let op = words.next().unwrap().to_string();
        let body = unhex(words.next().unwrap());
        out.push(Frame {
            line: i + 1,
            to_server: dir == "c2s",
            conn,
            op,
            body,
            step: step.clone(),
        });
    }
    out
}

/// The opcode a fixture names: `op::name`'s, or `op<N>` for one it lacks.
fn opcode(name: &str) -> Option<i32> {
    (-20..200)
        .find(|&c| op::name(c) == Some(name))
        .or_else(|| name.strip_prefix("op")?.parse().ok())
}

/// Decodes a frame and re-encodes what was decoded.
fn reencode(f: &Frame) -> Result<Vec<u8>, DecodeError> {
    Ok(match (f.to_server, f.op.as_str()) {
        (true, "connect") => encode_connect_request(&decode_connect_request(&f.body)?),
        (false, "connect") => encode_connect_response(&decode_connect_response(&f.body)?),
        (false, "notification") => {
            let (h, e) = decode_notification(&f.body)?;
            encode_notification(h.zxid, &e)
        }
        (true, _) => {
            let (h, r) = decode_request(&f.body)?;
            assert_eq!(Some(h.op), opcode(&f.op), "line {}", f.line);
            encode_request(&h, &r)
        }
        (false, name) => {
            let code = opcode(name).unwrap_or_else(|| panic!("line {}: op {name}", f.line));
            let (h, r) = decode_reply(code, &f.body)?;
            encode_reply(&h, r.as_ref())
        }
    })
}

/// The raw probes whose request the decoder refuses on purpose
/// (docs/WIRE.md), with the refusal each must get.
fn expected_refusal(step: &str) -> Option<(usize, &'static str, DecodeErrorKind)> {
    let table = [
        (
            "raw: an unknown opcode 999",
            (4, "RequestHeader.type", DecodeErrorKind::UnknownOp(999)),
        ),
        (
            "raw: a multi holding a getData",
            (
                8,
                "MultiHeader.type",
                DecodeErrorKind::UnknownOp(op::GET_DATA),
            ),
        ),
        (
            "raw: a getData with a null path",
            (8, "GetDataRequest.path", DecodeErrorKind::BadLength(-1)),
        ),
        (
            "raw: a getData whose path is not UTF-8",
            (8, "GetDataRequest.path", DecodeErrorKind::NotUtf8),
        ),
        (
            "raw: a getData with 2 trailing bytes",
            (20, "request", DecodeErrorKind::TrailingBytes(2)),
        ),
        (
            "raw: a getData whose path length is past the frame",
            (
                8,
                "GetDataRequest.path",
                DecodeErrorKind::LengthPastEnd {
                    len: 0x7fff_0000,
                    available: 0,
                },
            ),
        ),
    ];
    table
        .into_iter()
        .find(|(prefix, _)| step.starts_with(prefix))
        .map(|(_, e)| e)
}

#[test]
fn every_golden_frame_decodes_and_reencodes_to_the_same_bytes() {
    let frames = frames();
    assert!(frames.len() > 200, "only {} frames", frames.len());
    let mut refused = 0;
    for f in &frames {
        match reencode(f) {
            Ok(bytes) => assert_eq!(bytes, f.body, "line {} ({})", f.line, f.step),
            Err(e) => {
                // Only a probe's first request may be refused, and only as
                // the table says.
                let expected = expected_refusal(&f.step);
                assert!(
                    f.to_server && expected.is_some(),
                    "line {} ({}): {e}",
                    f.line,
                    f.step
                );
                assert_eq!(
                    Some((e.offset, e.field, e.kind)),
                    expected,
                    "line {}",
                    f.line
                );
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 6);
}

#[test]
fn the_fixture_covers_every_opcode_the_codec_speaks() {
    let frames = frames();
    let requests: BTreeSet<&str> = frames
        .iter()
        .filter(|f| f.to_server)
        .map(|f| f.op.as_str())
        .collect();
    for name in [
        "connect",
        "create",
        "create2",
        "createContainer",
        "createTTL",
        "delete",
        "exists",
        "getData",
        "setData",
        "getACL",
        "setACL",
        "getChildren",
        "getChildren2",
        "sync",
        "check",
        "multi",
        "multiRead",
        "setWatches",
        "setWatches2",
        "addWatch",
        "removeWatches",
        "checkWatches",
        "getEphemerals",
        "getAllChildrenNumber",
        "auth",
        "ping",
        "closeSession",
        "whoAmI",
    ] {
        assert!(requests.contains(name), "no {name} request in the fixture");
    }
    assert!(frames.iter().any(|f| f.op == "notification"));
    // The error codes the server answered with.
    let errs: BTreeSet<i32> = frames
        .iter()
        .filter(|f| !f.to_server && f.op != "connect" && f.op != "notification")
        .map(|f| ReplyHeader::peek(&f.body).unwrap().err)
        .collect();
    for err in [-6, -101, -102, -103, -108, -110, -111, -115, -121] {
        assert!(errs.contains(&err), "no reply with err {err}: {errs:?}");
    }
}

/// The frames of one step, in order.
fn step<'a>(frames: &'a [Frame], name: &str) -> Vec<&'a Frame> {
    let found: Vec<&Frame> = frames.iter().filter(|f| f.step.starts_with(name)).collect();
    assert!(!found.is_empty(), "no step {name}");
    found
}

fn reply(f: &Frame) -> (ReplyHeader, Option<Response>) {
    decode_reply(opcode(&f.op).unwrap(), &f.body).unwrap()
}

#[test]
fn a_failed_multi_answers_every_op_with_header_err_zero() {
    let frames = frames();
    let s = step(&frames, "multi that fails on its second op");
    let (h, r) = reply(s.iter().find(|f| !f.to_server).unwrap());
    assert_eq!(h.err, 0);
    // The ops before the failure roll back with 0, the failing op has its
    // code, the ops after it RUNTIMEINCONSISTENCY (-2).
    assert_eq!(
        r,
        Some(Response::Multi(vec![
            MultiResult::Error { err: 0 },
            MultiResult::Error { err: -103 },
            MultiResult::Error { err: -2 },
        ]))
    );
    let s = step(&frames, "multi with a TTL create");
    let (h, r) = reply(s.iter().find(|f| !f.to_server).unwrap());
    assert_eq!(h.err, 0);
    assert_eq!(
        r,
        Some(Response::Multi(vec![MultiResult::Error { err: -6 }]))
    );
}

#[test]
fn creates_in_a_multi_answer_as_create_or_create2() {
    let frames = frames();
    let s = step(&frames, "multi that succeeds");
    let Some(Response::Multi(results)) = reply(s.iter().find(|f| !f.to_server).unwrap()).1 else {
        panic!("no multi results")
    };
    // create, container create, ephemeral sequential create, setData,
    // check, delete.
    assert!(matches!(results[0], MultiResult::Create { .. }));
    assert!(matches!(results[1], MultiResult::Create2 { .. }));
    assert!(matches!(results[2], MultiResult::Create { .. }));
    assert!(matches!(results[3], MultiResult::SetData { .. }));
    assert_eq!(results[4..], [MultiResult::Check, MultiResult::Delete]);
}

#[test]
fn add_watch_answers_with_an_error_response_body() {
    let frames = frames();
    for name in ["addWatch persistent (", "addWatch persistent recursive"] {
        let s = step(&frames, name);
        let (h, r) = reply(s.iter().find(|f| !f.to_server).unwrap());
        assert_eq!((h.err, r), (0, Some(Response::Code(0))), "{name}");
    }
}

#[test]
fn notifications_carry_zxid_minus_one() {
    let frames = frames();
    let notes: Vec<_> = frames
        .iter()
        .filter(|f| f.op == "notification")
        .map(|f| decode_notification(&f.body).unwrap())
        .collect();
    assert!(notes.len() >= 8);
    assert!(notes
        .iter()
        .all(|(h, e)| h.zxid == -1 && h.err == 0 && e.state == 3));
}

/// The server's replies in a probe step, by xid.
fn probe_replies(frames: &[Frame], name: &str) -> Vec<ReplyHeader> {
    step(frames, name)
        .iter()
        .filter(|f| !f.to_server && f.op != "connect")
        .map(|f| ReplyHeader::peek(&f.body).unwrap())
        .collect()
}

/// The (xid, err) of each reply in a probe step.
fn answers(frames: &[Frame], name: &str) -> Vec<(i32, i32)> {
    probe_replies(frames, name)
        .iter()
        .map(|h| (h.xid, h.err))
        .collect()
}

#[test]
fn the_server_answers_hostile_handshakes_and_ops_as_recorded() {
    let frames = frames();
    // An expired session: timeOut 0, session 0, a zeroed password.
    let s = step(&frames, "raw: re-attach the closed session");
    let rsp = decode_connect_response(&s.iter().find(|f| !f.to_server).unwrap().body).unwrap();
    assert_eq!((rsp.timeout_ms, rsp.session_id), (0, 0));
    assert_eq!(rsp.passwd, vec![0; 16]);
    // A client from the future gets no answer at all (only a close).
    let s = step(
        &frames,
        "raw: a client that has seen a zxid from the future",
    );
    assert!(s.iter().all(|f| f.to_server));
    // An unknown opcode: UNIMPLEMENTED with zxid -1, then a close (the
    // getData after it is never answered).
    let replies = probe_replies(&frames, "raw: an unknown opcode 999");
    assert_eq!(
        replies,
        [ReplyHeader {
            xid: 1,
            zxid: -1,
            err: -6
        }]
    );
    // A standalone check that holds gets no reply in 3.8; the requests
    // after it are answered.
    assert_eq!(
        answers(&frames, "raw: a standalone check that holds"),
        [(2, 0), (3, 0)]
    );
    assert_eq!(
        answers(&frames, "raw: a standalone check with a stale version"),
        [(1, -103), (2, 0), (3, 0)]
    );
    // Bodies the server cannot read: MARSHALLINGERROR (-5), and the
    // connection goes on.
    for name in [
        "raw: a multi holding a getData",
        "raw: a getData with a null path",
        "raw: a getData whose path length is past the frame",
    ] {
        assert_eq!(answers(&frames, name), [(1, -5), (2, 0), (3, 0)], "{name}");
    }
    // Java replaces bad UTF-8 (no such node); it ignores trailing bytes.
    assert_eq!(
        answers(&frames, "raw: a getData whose path is not UTF-8"),
        [(1, -101), (2, 0), (3, 0)]
    );
    assert_eq!(
        answers(&frames, "raw: a getData with 2 trailing bytes"),
        [(1, 0), (2, 0), (3, 0)]
    );
    assert_eq!(
        answers(&frames, "raw: a reconfig to a standalone server"),
        [(1, -123), (2, 0), (3, 0)]
    );
    // A body of exactly jute.maxbuffer is served; one byte more and the
    // server closes without a word.
    assert_eq!(
        answers(&frames, "raw: a setData frame of 0xfffff + 0 bytes"),
        [(1, 0), (2, 0), (3, 0)]
    );
    for past in [1, 1024, 4096] {
        let name = format!("raw: a setData frame of 0xfffff + {past} bytes");
        assert_eq!(answers(&frames, &name), [], "{name}");
    }
    // An old client (no readOnly flag) gets an answer without one.
    let s = step(
        &frames,
        "raw: a handshake without the trailing readOnly flag",
    );
    let req = decode_connect_request(&s[0].body).unwrap();
    assert_eq!(req.read_only, None);
    let rsp = decode_connect_response(&s[1].body).unwrap();
    assert_eq!(rsp.read_only, None);
    assert_eq!(s[0].conn, s[1].conn);
}

#[test]
fn golden_frames_survive_the_frame_reader_in_small_chunks() {
    let frames = frames();
    let stream: Vec<u8> = frames.iter().flat_map(|f| write_frame(&f.body)).collect();
    let mut reader = FrameReader::default();
    let mut out = Vec::new();
    for chunk in stream.chunks(7) {
        reader.push(chunk);
        while let Some(f) = reader.pop().unwrap() {
            out.push(f);
        }
    }
    let bodies: Vec<Vec<u8>> = frames.into_iter().map(|f| f.body).collect();
    assert_eq!(out, bodies);
}
