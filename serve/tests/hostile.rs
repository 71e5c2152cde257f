//! Hostile input (issue 31, item 5): a bad frame closes its own
//! connection, with a reason and a counter, and nothing else.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;
use zkserve::driver::{start, Options};
use zkserve::{Engine, Input, Limits, Output};
use zkwire::opcode as op;
use zkwire::{
    encode_connect_request, encode_request, write_frame, ConnectRequest, Request, RequestHeader,
};
use zookeeper_client as zk;

const WAIT: Duration = Duration::from_secs(20);

fn handshake() -> Vec<u8> {
    write_frame(&encode_connect_request(&ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 4000,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    }))
}

fn request(xid: i32, opcode: i32, request: Request) -> Vec<u8> {
    write_frame(&encode_request(
        &RequestHeader { xid, op: opcode },
        &request,
    ))
}

/// What real clients sent a real 3.8.0 server, one list of frames per
/// connection: the codec's golden capture (docs/WIRE.md), ZooKeeper's own
/// Java client and zkwire's raw probes. Frame bodies over 4 KiB are not
/// stored there and not replayed here.
fn captured_traffic() -> Vec<Vec<Vec<u8>>> {
    const FIXTURE: &str = include_str!("../../wire/tests/golden/zookeeper-3.8.frames");
    let mut by_conn: std::collections::BTreeMap<u32, Vec<Vec<u8>>> = Default::default();
    for line in FIXTURE.lines() {
        let mut fields = line.split(' ');
        if fields.next() != Some("c2s") {
            continue;
        }
        let (Some(conn), Some(_op), Some(hex)) = (fields.next(), fields.next(), fields.next())
        else {
            panic!("fixture line {line:?}");
        };
        let body: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        by_conn
            .entry(conn.parse().expect("conn"))
            .or_default()
            .push(write_frame(&body));
    }
    by_conn.into_values().collect()
}

/// A fixed-seed xorshift: the same mutations on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, mut frame: Vec<u8>) -> Vec<u8> {
    match rng.below(4) {
        0 => {
            let i = rng.below(frame.len());
            frame[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(frame.len());
            frame[i] = rng.next() as u8;
        }
        2 => frame.truncate(rng.below(frame.len())),
        _ => {
            let i = rng.below(frame.len());
            let n = rng.below(8) + 1;
            for _ in 0..n {
                frame.insert(i, rng.next() as u8);
            }
        }
    }
    frame
}

/// Mutated captured traffic on one connection at a time, next to a good
/// session that must keep working: no panic, no effect on the good one,
/// and every close a counted reason.
#[test]
fn mutated_traffic_never_panics_and_never_hurts_another_connection() {
    let mut engine = Engine::new(Limits {
        tick_ms: 100,
        ..Limits::default()
    });
    let mut out = Vec::new();
    engine.handle(Input::Accepted { conn: 0, server: 0 }, &mut out);
    engine.handle(
        Input::Bytes {
            conn: 0,
            data: handshake(),
        },
        &mut out,
    );
    let good_closed = |out: &[Output]| {
        out.iter()
            .any(|o| matches!(o, Output::Close { conn: 0, .. }))
    };
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let traffic = captured_traffic();
    assert!(traffic.len() > 20, "{} connections captured", traffic.len());
    for round in 0..2000u64 {
        let frames = &traffic[rng.below(traffic.len())];
        let conn = round + 1;
        out.clear();
        engine.handle(
            Input::Accepted {
                conn,
                server: (round % 3) as usize,
            },
            &mut out,
        );
        let bad = rng.below(frames.len());
        for (i, frame) in frames.iter().enumerate() {
            let frame = if i == bad {
                mutate(&mut rng, frame.clone())
            } else {
                frame.clone()
            };
            engine.handle(Input::Bytes { conn, data: frame }, &mut out);
        }
        engine.handle(Input::Closed { conn }, &mut out);
        if round % 50 == 0 {
            engine.handle(Input::Tick, &mut out);
        }
        // The good session pings and reads between every round.
        engine.handle(
            Input::Bytes {
                conn: 0,
                data: request(-2, op::PING, Request::Ping),
            },
            &mut out,
        );
        engine.handle(
            Input::Bytes {
                conn: 0,
                data: request(
                    round as i32,
                    op::EXISTS,
                    Request::Exists {
                        path: "/".into(),
                        watch: false,
                    },
                ),
            },
            &mut out,
        );
        assert!(!good_closed(&out), "round {round}: {out:?}");
        assert!(
            out.iter()
                .any(|o| matches!(o, Output::Send { conn: 0, .. })),
            "round {round}: the good session got no answer"
        );
    }
    let stats = engine.stats();
    assert!(stats.hostile() > 100, "{stats:?}");
    assert_eq!(engine.connections(), 1, "every fuzzed connection is gone");
}

/// Whether the server closed the stream: a read returns end of file (after
/// whatever it sent first).
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match timeout(WAIT, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn bad_frames_on_sockets_close_only_their_connection() {
    let server = start(Options {
        limits: Limits {
            tick_ms: 100,
            ..Limits::default()
        },
        bind: [127, 0, 0, 1].into(),
        port: 0,
        verbose: false,
    })
    .await
    .unwrap();
    let good = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(2))
        .connect(&server.connect_string())
        .await
        .unwrap();
    let addr = server.addrs[0];
    let bad_frames: Vec<Vec<u8>> = vec![
        vec![0x00, 0x20, 0x00, 0x00],            // 2 MiB, past jute.maxbuffer
        vec![0x80, 0x00, 0x00, 0x00],            // negative
        write_frame(b"\x00\x00\x00\x00garbage"), // a handshake that is not one
        [handshake(), write_frame(&[0, 0, 0, 1, 0, 0, 0, 200])].concat(), // unknown op
        [
            handshake(),
            request(
                1,
                op::EXISTS,
                Request::Exists {
                    path: "relative".into(),
                    watch: false,
                },
            ),
        ]
        .concat(),
    ];
    for bytes in &bad_frames {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(bytes).await.unwrap();
        assert!(closed_by_server(&mut s).await, "{bytes:?} not closed");
    }
    // Half a frame, then the client goes: counted as truncated.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&handshake()[..10]).await.unwrap();
    drop(s);
    good.create(
        "/still-here",
        b"",
        &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
    )
    .await
    .expect("the good session is untouched");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stats = server.stop().await;
    assert_eq!(stats.hostile(), 5, "{stats:?}");
    assert_eq!(stats.truncated, 1, "{stats:?}");
    assert_eq!(stats.closed.get("unsupported-op"), Some(&1));
}

/// A client that sends and never reads is throttled: the server stops
/// reading its socket while its unread replies pile up, so its own writes
/// block (TCP), the server's queue for it stays bounded, and other sessions
/// go on.
#[tokio::test]
async fn a_client_that_never_reads_is_throttled() {
    let server = start(Options {
        limits: Limits {
            tick_ms: 100,
            ..Limits::default()
        },
        bind: [127, 0, 0, 1].into(),
        port: 0,
        verbose: false,
    })
    .await
    .unwrap();
    let mut greedy = TcpStream::connect(server.addrs[0]).await.unwrap();
    greedy.write_all(&handshake()).await.unwrap();
    let exists = request(
        1,
        op::EXISTS,
        Request::Exists {
            path: "/".into(),
            watch: false,
        },
    );
    let burst: Vec<u8> = exists.repeat(10_000);
    // 200 bursts are 2 million requests: far more than the server queues
    // for one client plus what the kernel buffers both ways.
    let mut blocked = false;
    for _ in 0..200 {
        if timeout(Duration::from_secs(2), greedy.write_all(&burst))
            .await
            .is_err()
        {
            blocked = true;
            break;
        }
    }
    assert!(blocked, "the server kept reading a client that never reads");
    let good = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(2))
        .connect(&server.connect_string())
        .await
        .unwrap();
    good.check_stat("/")
        .await
        .expect("another session is served");
    let stats = server.stop().await;
    assert!(stats.frames_in < 2_000_000, "{stats:?}");
}
