//! The probes no Java 3.8 client can send, written with zkwire itself: a
//! blocking little client, one new session per probe.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use zkwire::opcode as op;
use zkwire::*;

use crate::relay::Recorder;

/// A blocking zkwire client for the requests the Java client cannot send.
struct Raw {
    stream: TcpStream,
    frames: FrameReader,
}

impl Raw {
    fn connect(relay: SocketAddr, req: &ConnectRequest) -> Raw {
        let stream = TcpStream::connect(relay).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let mut raw = Raw {
            stream,
            frames: FrameReader::default(),
        };
        raw.send(&encode_connect_request(req));
        raw
    }

    fn send(&mut self, body: &[u8]) {
        let _ = self.stream.write_all(&write_frame(body));
    }

    /// The next frame body, or `None` once the server has closed.
    fn recv(&mut self) -> Option<Vec<u8>> {
        let mut buf = [0u8; 4096];
        loop {
            if let Ok(Some(f)) = self.frames.pop() {
                return Some(f);
            }
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(k) => self.frames.push(&buf[..k]),
            }
        }
    }

    fn request(&mut self, xid: i32, code: i32, body: &Request) -> Option<Vec<u8>> {
        self.send(&encode_request(&RequestHeader { xid, op: code }, body));
        self.recv()
    }
}

fn new_session() -> ConnectRequest {
    ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 2000,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    }
}

/// Opens a new session through the relay and returns it with its handshake.
fn raw_session(relay: SocketAddr) -> (Raw, ConnectResponse) {
    let mut raw = Raw::connect(relay, &new_session());
    let hello = decode_connect_response(&raw.recv().expect("a handshake reply")).unwrap();
    (raw, hello)
}

/// Reads until the server closes (bounded by the read timeout).
fn drain(raw: &mut Raw) {
    while raw.recv().is_some() {}
}

/// Sends `body` as the first request of a new session, then a getData and a
/// closeSession, reading whatever comes back: whether the server answers the
/// probe, and whether the connection survives it.
fn probe(relay: SocketAddr, body: &[u8]) {
    let (mut raw, _) = raw_session(relay);
    raw.send(body);
    let _ = raw.recv();
    let get = Request::GetData {
        path: "/golden".into(),
        watch: false,
    };
    let _ = raw.request(2, op::GET_DATA, &get);
    let _ = raw.request(3, op::CLOSE_SESSION, &Request::CloseSession);
    drain(&mut raw);
}

/// Sends raw bytes (no framing) after a handshake and reads until closed.
fn probe_unframed(relay: SocketAddr, bytes: &[u8]) {
    let (mut raw, _) = raw_session(relay);
    let _ = raw.stream.write_all(bytes);
    drain(&mut raw);
}

/// The probes no Java 3.8 client sends: (step name, request frame body).
pub fn probes() -> Vec<(&'static str, Vec<u8>)> {
    let req = |code: i32, r: Request| encode_request(&RequestHeader { xid: 1, op: code }, &r);
    let header = |w: &mut jute::Writer, code: i32| {
        RequestHeader { xid: 1, op: code }.write(w);
    };
    let mut out = vec![
        (
            "a standalone check that holds (check)",
            req(
                op::CHECK,
                Request::Check {
                    path: "/".into(),
                    version: 0,
                },
            ),
        ),
        (
            "a standalone check with a stale version (check)",
            req(
                op::CHECK,
                Request::Check {
                    path: "/golden".into(),
                    version: 0,
                },
            ),
        ),
        (
            "whoAmI, which no Java 3.8 client sends (whoAmI)",
            req(op::WHO_AM_I, Request::WhoAmI),
        ),
        (
            "an unknown opcode 999 with an empty body",
            req(999, Request::Unknown { op: 999 }),
        ),
        (
            "a multi holding a getData (multi)",
            req(
                op::MULTI,
                Request::Multi(vec![MultiOp {
                    op: op::GET_DATA,
                    request: Request::GetData {
                        path: "/golden".into(),
                        watch: false,
                    },
                }]),
            ),
        ),
        (
            "a reconfig to a standalone server (reconfig)",
            req(
                op::RECONFIG,
                Request::Reconfig {
                    joining: None,
                    leaving: Some("2".into()),
                    new_members: None,
                    cur_config_id: -1,
                },
            ),
        ),
    ];
    let mut w = jute::Writer::new();
    header(&mut w, op::GET_DATA);
    w.int(-1).bool(false);
    out.push(("a getData with a null path (getData)", w.into_bytes()));
    let mut w = jute::Writer::new();
    header(&mut w, op::GET_DATA);
    w.bytes(b"/gold\xffen").bool(false);
    out.push((
        "a getData whose path is not UTF-8 (getData)",
        w.into_bytes(),
    ));
    let mut body = req(
        op::GET_DATA,
        Request::GetData {
            path: "/golden".into(),
            watch: false,
        },
    );
    body.extend_from_slice(&[0xde, 0xad]);
    out.push(("a getData with 2 trailing bytes (getData)", body));
    let mut w = jute::Writer::new();
    header(&mut w, op::GET_DATA);
    w.int(0x7fff_0000);
    out.push((
        "a getData whose path length is past the frame (getData)",
        w.into_bytes(),
    ));
    // setData bodies just past the default jute.maxbuffer (0xfffff): where
    // exactly does the server draw the line?
    for past in [0, 1, 1024, 4096] {
        let target = DEFAULT_MAX_FRAME + past;
        // A node no later step reads. Header 8, path 4 + 13, data
        // length 4, version 4.
        let data = vec![b'x'; target - 33];
        let body = req(
            op::SET_DATA,
            Request::SetData {
                path: "/golden/later".into(),
                data: Some(data),
                version: -1,
            },
        );
        assert_eq!(body.len(), target);
        let name: &'static str = Box::leak(
            format!("a setData frame of 0xfffff + {past} bytes (setData)").into_boxed_str(),
        );
        out.push((name, body));
    }
    out
}

pub fn raw_requests(relay: SocketAddr, rec: &Recorder) {
    let get = Request::GetData {
        path: "/golden".into(),
        watch: false,
    };

    for (name, body) in probes() {
        rec.set_step(&format!("raw: {name}"));
        probe(relay, &body);
    }

    rec.set_step("raw: a negative frame length after the handshake");
    probe_unframed(relay, &(-1i32).to_be_bytes());
    rec.set_step("raw: a four-letter word after the handshake");
    probe_unframed(relay, b"ruok");

    rec.set_step("raw: a getData whose path is not absolute (getData)");
    let (mut raw, hello) = raw_session(relay);
    let bad = Request::GetData {
        path: "golden".into(),
        watch: false,
    };
    let _ = raw.request(1, op::GET_DATA, &bad);
    let _ = raw.request(2, op::GET_DATA, &get);
    rec.set_step("raw: close the session (closeSession)");
    let _ = raw.request(3, op::CLOSE_SESSION, &Request::CloseSession);
    drain(&mut raw);

    rec.set_step("raw: re-attach the closed session (connect, expired)");
    let mut raw = Raw::connect(
        relay,
        &ConnectRequest {
            session_id: hello.session_id,
            passwd: hello.passwd.clone(),
            ..new_session()
        },
    );
    drain(&mut raw);

    rec.set_step("raw: a client that has seen a zxid from the future (connect, refused)");
    let mut raw = Raw::connect(
        relay,
        &ConnectRequest {
            last_zxid_seen: 1 << 40,
            ..new_session()
        },
    );
    drain(&mut raw);

    rec.set_step("raw: a handshake without the trailing readOnly flag (connect)");
    let mut raw = Raw::connect(
        relay,
        &ConnectRequest {
            read_only: None,
            ..new_session()
        },
    );
    let _ = raw.recv();
    let _ = raw.request(1, op::CLOSE_SESSION, &Request::CloseSession);
    drain(&mut raw);
}
