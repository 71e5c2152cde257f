//! The engine driven by hand-made frames, no sockets.

use super::*;
use zkwire::opcode as op;
use zkwire::{
    decode_connect_response, decode_notification, decode_reply, encode_connect_request,
    encode_request, Acl, ConnectRequest, FrameReader, RequestHeader,
};

struct Harness {
    engine: Engine,
    out: Vec<Output>,
}

impl Harness {
    fn new() -> Self {
        Harness {
            engine: Engine::new(Limits {
                tick_ms: 100,
                ..Limits::default()
            }),
            out: Vec::new(),
        }
    }

    fn with(limits: Limits) -> Self {
        Harness {
            engine: Engine::new(limits),
            out: Vec::new(),
        }
    }

    fn input(&mut self, input: Input) -> Vec<Output> {
        self.engine.handle(input, &mut self.out);
        std::mem::take(&mut self.out)
    }

    /// Frame bodies sent to `conn` (the length prefix checked and stripped).
    fn sent(outputs: &[Output], conn: ConnId) -> Vec<Vec<u8>> {
        outputs
            .iter()
            .filter_map(|o| match o {
                Output::Send { conn: c, bytes } if *c == conn => {
                    let mut reader = FrameReader::default();
                    reader.push(bytes);
                    reader.pop().unwrap()
                }
                _ => None,
            })
            .collect()
    }

    fn closed(outputs: &[Output], conn: ConnId) -> Option<&CloseReason> {
        outputs.iter().find_map(|o| match o {
            Output::Close { conn: c, reason } if *c == conn => Some(reason),
            _ => None,
        })
    }

    fn connect(
        &mut self,
        conn: ConnId,
        server: ServerId,
        session_id: i64,
        passwd: Vec<u8>,
        seen: i64,
    ) -> (ConnectResponse, Vec<Output>) {
        let outputs = self.send_connect(conn, server, session_id, passwd, seen);
        let frames = Self::sent(&outputs, conn);
        (decode_connect_response(&frames[0]).unwrap(), outputs)
    }

    /// Open `conn` and send its connect request; what came back (the
    /// connect response, unless the server holds it).
    fn send_connect(
        &mut self,
        conn: ConnId,
        server: ServerId,
        session_id: i64,
        passwd: Vec<u8>,
        seen: i64,
    ) -> Vec<Output> {
        self.input(Input::Accepted { conn, server });
        let body = encode_connect_request(&ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: seen,
            timeout_ms: 1000,
            session_id,
            passwd,
            read_only: Some(false),
        });
        self.input(Input::Bytes {
            conn,
            data: write_frame(&body),
        })
    }

    fn request(&mut self, conn: ConnId, xid: i32, opcode: i32, request: Request) -> Vec<Output> {
        let body = encode_request(&RequestHeader { xid, op: opcode }, &request);
        self.input(Input::Bytes {
            conn,
            data: write_frame(&body),
        })
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

#[test]
fn a_session_creates_reads_and_is_notified_across_servers() {
    let mut h = Harness::new();
    let (a, _) = h.connect(1, 0, 0, vec![0; 16], 0);
    let (b, _) = h.connect(2, 2, 0, vec![0; 16], 0);
    assert_eq!(a.timeout_ms, 1000);
    assert_ne!(a.session_id, b.session_id);
    let out = h.request(
        2,
        1,
        op::EXISTS,
        Request::Exists {
            path: "/n".into(),
            watch: true,
        },
    );
    let (hdr, body) = decode_reply(op::EXISTS, &Harness::sent(&out, 2)[0]).unwrap();
    assert_eq!((hdr.xid, hdr.err, body), (1, -101, None));

    let out = h.request(1, 7, op::CREATE2, create("/n", 3));
    let (hdr, body) = decode_reply(op::CREATE2, &Harness::sent(&out, 1)[0]).unwrap();
    assert_eq!(hdr.xid, 7);
    let Some(zkwire::Response::Create2 { path, stat }) = body else {
        panic!("{body:?}")
    };
    assert_eq!(path, "/n0000000000");
    assert_eq!(stat.ephemeral_owner, a.session_id);
    assert_eq!(hdr.zxid, stat.czxid);

    // The exists watch on /n did not fire (a sequential name), so set one
    // on the created node and delete it.
    h.request(
        2,
        2,
        op::GET_DATA,
        Request::GetData {
            path: "/n0000000000".into(),
            watch: true,
        },
    );
    let out = h.request(
        1,
        8,
        op::DELETE,
        Request::Delete {
            path: "/n0000000000".into(),
            version: -1,
        },
    );
    let (hdr, event) = decode_notification(&Harness::sent(&out, 2)[0]).unwrap();
    assert_eq!((hdr.xid, hdr.zxid), (-1, -1));
    assert_eq!((event.kind, event.path.as_str()), (2, "/n0000000000"));
}

#[test]
fn a_session_reattaches_elsewhere_and_a_wrong_password_is_refused() {
    let mut h = Harness::new();
    let (a, _) = h.connect(1, 1, 0, vec![0; 16], 0);
    h.request(1, 1, op::CREATE, create("/e", 1));
    h.input(Input::Closed { conn: 1 });
    let (bad, out) = h.connect(2, 0, a.session_id, vec![9; 16], 0);
    assert_eq!((bad.timeout_ms, bad.session_id), (0, 0));
    assert_eq!(Harness::closed(&out, 2), Some(&CloseReason::SessionInvalid));
    let (again, _) = h.connect(3, 2, a.session_id, a.passwd.clone(), 2);
    assert_eq!(again.session_id, a.session_id);
    assert_eq!(again.timeout_ms, 1000);
    let live = h.engine.world().leader_tree().get("/e").is_some();
    assert!(live, "the ephemeral lives on with its session");
}

#[test]
fn a_silent_session_expires_its_connection_closes_and_a_reattach_is_told_expired() {
    let mut h = Harness::new();
    let (a, _) = h.connect(1, 1, 0, vec![0; 16], 0);
    let (b, _) = h.connect(2, 0, 0, vec![0; 16], 0);
    h.request(1, 1, op::CREATE, create("/e", 1));
    let mut closed = None;
    for _ in 0..12 {
        // b pings; a says nothing for 12 ticks (its timeout is 10).
        h.request(2, -2, op::PING, Request::Ping);
        let out = h.input(Input::Tick);
        closed = closed.or_else(|| Harness::closed(&out, 1).cloned());
    }
    assert_eq!(closed, Some(CloseReason::SessionEnded));
    assert!(h.engine.world().is_session_live(b.session_id));
    assert!(h.engine.world().leader_tree().get("/e").is_none());
    let (expired, out) = h.connect(3, 2, a.session_id, a.passwd.clone(), 0);
    assert_eq!(expired.timeout_ms, 0);
    assert_eq!(Harness::closed(&out, 3), Some(&CloseReason::SessionInvalid));
}

#[test]
fn close_session_is_answered_then_closed() {
    let mut h = Harness::new();
    h.connect(1, 0, 0, vec![0; 16], 0);
    h.request(1, 1, op::CREATE, create("/e", 1));
    let out = h.request(1, 2, op::CLOSE_SESSION, Request::CloseSession);
    let (hdr, _) = decode_reply(op::CLOSE_SESSION, &Harness::sent(&out, 1)[0]).unwrap();
    assert_eq!((hdr.xid, hdr.err), (2, 0));
    assert_eq!(hdr.zxid, h.engine.world().last_zxid());
    assert_eq!(Harness::closed(&out, 1), Some(&CloseReason::SessionClosed));
    assert!(h.engine.world().leader_tree().get("/e").is_none());
}

#[test]
fn hostile_frames_close_only_their_connection() {
    let mut h = Harness::new();
    h.connect(1, 0, 0, vec![0; 16], 0);
    for (conn, data) in [
        (10, vec![0x7f, 0xff, 0xff, 0xff]), // past jute.maxbuffer
        (11, vec![0xff, 0xff, 0xff, 0xfe]), // negative length
        (12, write_frame(b"\x00\x00\x00\x01garbage")), // no handshake
    ] {
        h.input(Input::Accepted { conn, server: 0 });
        let out = h.input(Input::Bytes { conn, data });
        let reason = Harness::closed(&out, conn).expect("closed");
        assert!(reason.is_hostile(), "{reason}");
        assert!(Harness::closed(&out, 1).is_none());
    }
    // After a handshake: an unknown opcode is answered, then closed.
    h.connect(20, 1, 0, vec![0; 16], 0);
    let out = h.input(Input::Bytes {
        conn: 20,
        data: write_frame(&[0, 0, 0, 5, 0, 0, 0x03, 0xe7]),
    });
    let (hdr, _) = decode_reply(op::EXISTS, &Harness::sent(&out, 20)[0]).unwrap();
    assert_eq!((hdr.xid, hdr.zxid, hdr.err), (5, -1, -6));
    assert_eq!(
        Harness::closed(&out, 20),
        Some(&CloseReason::Unsupported(999))
    );
    // A bad path.
    h.connect(21, 1, 0, vec![0; 16], 0);
    let out = h.request(
        21,
        1,
        op::GET_DATA,
        Request::GetData {
            path: "/a//b".into(),
            watch: false,
        },
    );
    assert!(matches!(
        Harness::closed(&out, 21),
        Some(CloseReason::BadPath(_))
    ));
    // The first session still works.
    let out = h.request(
        1,
        3,
        op::EXISTS,
        Request::Exists {
            path: "/".into(),
            watch: false,
        },
    );
    let (hdr, _) = decode_reply(op::EXISTS, &Harness::sent(&out, 1)[0]).unwrap();
    assert_eq!((hdr.xid, hdr.err), (3, 0));
    assert_eq!(h.engine.stats().hostile(), 5);
}

#[test]
fn the_same_inputs_give_the_same_outputs() {
    let run = || {
        let mut h = Harness::new();
        let mut all = Vec::new();
        let (a, out) = h.connect(1, 1, 0, vec![0; 16], 0);
        all.extend(out);
        all.extend(h.request(1, 1, op::CREATE, create("/q-", 2)));
        all.extend(h.request(
            1,
            2,
            op::GET_CHILDREN2,
            Request::GetChildren2 {
                path: "/".into(),
                watch: true,
            },
        ));
        all.extend(h.input(Input::Tick));
        all.extend(h.input(Input::Closed { conn: 1 }));
        all.extend(h.connect(2, 2, a.session_id, a.passwd, 0).1);
        all
    };
    assert_eq!(run(), run());
}

/// S39: a follower answers a new session's connect only once it has
/// applied the session's creation, so the session's first read cannot be
/// older than that (here: it sees the node created before it connected).
#[test]
fn a_new_session_on_a_lagging_follower_is_answered_once_its_creation_is_applied() {
    let mut h = Harness::with(Limits {
        servers: 3,
        tick_ms: 100,
        faults: faults::FaultSpec::parse("lag=1,within=1").unwrap(),
        aim: faults::Aim::All,
        ..Limits::default()
    });
    h.connect(1, 1, 0, vec![0; 16], 0);
    // The first data request starts the lag on its follower, 1.
    let out = h.request(1, 1, op::CREATE, create("/x", 0));
    assert!(
        Harness::sent(&out, 1).is_empty(),
        "follower 1 lags: no reply yet"
    );
    assert!(h.engine.faults().is_lagging(1));

    // A new session on follower 1, which sends a read at once.
    let mut seen = h.send_connect(2, 1, 0, vec![0; 16], 0);
    let exists = Request::Exists {
        path: "/x".into(),
        watch: false,
    };
    seen.extend(h.request(2, 1, op::EXISTS, exists));
    assert!(
        Harness::sent(&seen, 2).is_empty(),
        "answered before follower 1 applied the session's creation: {seen:?}"
    );
    let mut ticks = 0;
    while h.engine.faults().is_lagging(1) {
        assert!(ticks <= faults::MAX_LAG_TICKS, "the lag never ended");
        seen.extend(h.input(Input::Tick));
        ticks += 1;
    }
    seen.extend(h.input(Input::Tick));
    let frames = Harness::sent(&seen, 2);
    assert_eq!(frames.len(), 2, "{seen:?}");
    let response = decode_connect_response(&frames[0]).unwrap();
    assert_ne!(response.session_id, 0);
    assert_eq!(response.timeout_ms, 1000);
    let (hdr, body) = decode_reply(op::EXISTS, &frames[1]).unwrap();
    assert_eq!((hdr.xid, hdr.err), (1, 0), "the read sees /x: {body:?}");
    // The first session's create was answered by then too.
    assert_eq!(Harness::sent(&seen, 1).len(), 1);
}
