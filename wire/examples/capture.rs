//! Records golden frames from a real ZooKeeper server: starts one
//! (`zkreal::TestServer`), puts a recording relay in front of it, drives
//! ZooKeeper's own Java client through every request the codec speaks
//! (`capture/GoldenClient.java`), then sends the few requests no Java 3.8
//! client can (a standalone check, whoAmI, an unknown opcode, a handshake for
//! an expired session, one from the future) with zkwire itself, and writes
//! every frame, in order, as a readable fixture.
//!
//! ```text
//! cargo run --release -p zkwire --example capture -- wire/tests/golden/zookeeper-3.8.frames
//! ```
//!
//! Needs Debian's `zookeeper` (or `ZOOKEEPER_CLASSPATH`) and a JDK (`javac`).
//! A developer tool, not a test: it waits on sockets with OS threads and
//! wall-clock timeouts.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zkwire::opcode as op;
use zkwire::*;

/// Where Debian puts the client library; its manifest names the rest.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// The relay's frame limit: above ZooKeeper's, to see oversized probes.
const RELAY_MAX_FRAME: usize = 4 << 20;
/// Frames longer than this are described in the fixture but not stored.
const STORED_MAX: usize = 4096;
/// Keeps the client quiet.
const SLF4J_NOP: &str = "/usr/share/java/slf4j-nop.jar";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    ToServer,
    ToClient,
}

enum Event {
    Frame {
        conn: usize,
        dir: Dir,
        /// The opcode name the body is decoded with ("connect",
        /// "notification", or a request's opcode).
        op: String,
        body: Vec<u8>,
        step: String,
        summary: String,
    },
    Closed {
        conn: usize,
        dir: Dir,
        step: String,
        /// Milliseconds since the step began (a close by session expiry
        /// comes a session timeout after the last request).
        after_ms: u128,
    },
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Event>>,
    step: Mutex<(String, Option<Instant>)>,
    live: Mutex<Vec<TcpStream>>,
}

/// One connection's bookkeeping: which opcode each xid asked for.
#[derive(Default)]
struct Conn {
    ops: Mutex<BTreeMap<i32, i32>>,
}

impl Recorder {
    fn step(&self) -> String {
        self.step.lock().unwrap().0.clone()
    }

    fn step_age_ms(&self) -> u128 {
        self.step
            .lock()
            .unwrap()
            .1
            .map_or(0, |t| t.elapsed().as_millis())
    }

    fn set_step(&self, s: &str) {
        *self.step.lock().unwrap() = (s.to_string(), Some(Instant::now()));
    }

    fn drop_connections(&self) {
        for s in self.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "wire/tests/golden/zookeeper-3.8.frames".into());
    let server = zkreal::TestServer::start().expect("a real ZooKeeper server");
    let upstream: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let rec = Arc::new(Recorder::default());
    let relay = start_relay(upstream, rec.clone());
    let connect = format!("127.0.0.1:{}", relay.port());

    run_java_client(&connect, &rec);
    raw_requests(relay, &rec);
    rec.set_step("teardown: the recorder closes what is left");
    std::thread::sleep(Duration::from_millis(500));
    rec.drop_connections();
    std::thread::sleep(Duration::from_millis(200));

    let text = render(&rec.events.lock().unwrap());
    std::fs::write(&out, text).expect("write the fixture");
    eprintln!("wrote {out}");
}

fn start_relay(upstream: SocketAddr, rec: Arc<Recorder>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for (n, client) in listener.incoming().enumerate() {
            let Ok(client) = client else { continue };
            let server = TcpStream::connect(upstream).expect("connect to the server");
            rec.live.lock().unwrap().push(client.try_clone().unwrap());
            rec.live.lock().unwrap().push(server.try_clone().unwrap());
            let conn = Arc::new(Conn::default());
            for (from, to, dir) in [
                (
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    Dir::ToServer,
                ),
                (
                    server.try_clone().unwrap(),
                    client.try_clone().unwrap(),
                    Dir::ToClient,
                ),
            ] {
                let (rec, conn) = (rec.clone(), conn.clone());
                std::thread::spawn(move || relay(n + 1, from, to, dir, &rec, &conn));
            }
        }
    });
    addr
}

/// Copies `from` to `to`, recording each whole frame before the chunk that
/// completes it is forwarded (so that a reply is never recorded before its
/// request).
fn relay(n: usize, mut from: TcpStream, mut to: TcpStream, dir: Dir, rec: &Recorder, conn: &Conn) {
    // Larger than any server accepts, so that oversized probes are seen.
    let mut frames = FrameReader::new(RELAY_MAX_FRAME);
    let mut first = true;
    let mut buf = [0u8; 65536];
    loop {
        let got = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => k,
        };
        frames.push(&buf[..got]);
        while let Ok(Some(body)) = frames.pop() {
            let (op, summary) = describe(dir, first, &body, conn);
            first = false;
            rec.events.lock().unwrap().push(Event::Frame {
                conn: n,
                dir,
                op,
                body,
                step: rec.step(),
                summary,
            });
        }
        if to.write_all(&buf[..got]).is_err() {
            break;
        }
    }
    rec.events.lock().unwrap().push(Event::Closed {
        conn: n,
        dir,
        step: rec.step(),
        after_ms: rec.step_age_ms(),
    });
    let _ = to.shutdown(Shutdown::Write);
}

/// The opcode a frame is decoded with, and a one-line summary of it.
fn describe(dir: Dir, first: bool, body: &[u8], conn: &Conn) -> (String, String) {
    let short = |s: String| s.chars().take(160).collect::<String>();
    match (dir, first) {
        (Dir::ToServer, true) => (
            "connect".into(),
            short(format!("{:?}", decode_connect_request(body))),
        ),
        (Dir::ToClient, true) => (
            "connect".into(),
            short(format!("{:?}", decode_connect_response(body))),
        ),
        (Dir::ToServer, false) => {
            let (xid, code) = match RequestHeader::read(&mut jute::Reader::new(body)) {
                Ok(h) => (h.xid, h.op),
                Err(e) => return ("?".into(), format!("undecodable: {e}")),
            };
            conn.ops.lock().unwrap().insert(xid, code);
            let name = op::name(code).map_or(format!("op{code}"), str::to_string);
            let what = match decode_request(body) {
                Ok((_, r)) => format!("{r:?}"),
                Err(e) => format!("not decodable by zkwire: {e}"),
            };
            (name, short(format!("xid={xid} {what}")))
        }
        (Dir::ToClient, false) => {
            let header = match ReplyHeader::peek(body) {
                Ok(h) => h,
                Err(e) => return ("?".into(), format!("undecodable: {e}")),
            };
            if header.xid == xid::NOTIFICATION {
                let what = match decode_notification(body) {
                    Ok((_, e)) => format!("{e:?}"),
                    Err(e) => format!("not decodable by zkwire: {e}"),
                };
                return (
                    "notification".into(),
                    short(format!("zxid={} {what}", header.zxid)),
                );
            }
            let code = conn.ops.lock().unwrap().get(&header.xid).copied();
            let Some(code) = code else {
                return ("?".into(), format!("reply to unknown xid {}", header.xid));
            };
            let name = op::name(code).map_or(format!("op{code}"), str::to_string);
            let what = match decode_reply(code, body) {
                Ok((_, r)) => format!("{r:?}"),
                Err(e) => format!("not decodable by zkwire: {e}"),
            };
            (
                name,
                short(format!(
                    "xid={} zxid={} err={} {what}",
                    header.xid, header.zxid, header.err
                )),
            )
        }
    }
}

fn run_java_client(connect: &str, rec: &Recorder) {
    let classes = std::env::temp_dir().join(format!("zkwire-capture-{}", std::process::id()));
    std::fs::create_dir_all(&classes).unwrap();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/capture/GoldenClient.java"
    );
    let status = Command::new("javac")
        .args(["-cp", ZOOKEEPER_JAR, "-d"])
        .arg(&classes)
        .arg(source)
        .status()
        .expect("javac (a JDK) on PATH");
    assert!(status.success(), "javac failed");
    let classpath = format!("{}:{ZOOKEEPER_JAR}:{SLF4J_NOP}", classes.display());
    let mut child = Command::new("java")
        .args(["-cp", &classpath, "GoldenClient", connect])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("java on PATH");
    let mut to_java = child.stdin.take().unwrap();
    let from_java = BufReader::new(child.stdout.take().unwrap());
    for line in from_java.lines() {
        let line = line.unwrap();
        eprintln!("java: {line}");
        if let Some(step) = line.strip_prefix("STEP ") {
            rec.set_step(step);
            if step.starts_with("drop the connection") {
                rec.drop_connections();
            }
            writeln!(to_java, "ok").unwrap();
            to_java.flush().unwrap();
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the Java client failed: {status}");
    let _ = std::fs::remove_dir_all(&classes);
}

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
fn probes() -> Vec<(&'static str, Vec<u8>)> {
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

fn raw_requests(relay: SocketAddr, rec: &Recorder) {
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

fn render(events: &[Event]) -> String {
    let mut s = String::new();
    s.push_str(HEADER);
    let mut last_step = String::new();
    for e in events {
        let step = match e {
            Event::Frame { step, .. } | Event::Closed { step, .. } => step,
        };
        if *step != last_step {
            s.push_str(&format!("\n# step: {step}\n"));
            last_step = step.clone();
        }
        match e {
            Event::Frame {
                conn,
                dir,
                op,
                body,
                summary,
                ..
            } => {
                let d = if *dir == Dir::ToServer { "c2s" } else { "s2c" };
                if body.len() > STORED_MAX {
                    s.push_str(&format!(
                        "## {summary}\n# {d} {conn} {op}: a {}-byte body, not stored\n",
                        body.len()
                    ));
                } else {
                    s.push_str(&format!("## {summary}\n{d} {conn} {op} {}\n", hex(body)));
                }
            }
            Event::Closed {
                conn,
                dir,
                after_ms,
                ..
            } => {
                let who = if *dir == Dir::ToServer {
                    "client"
                } else {
                    "server"
                };
                s.push_str(&format!(
                    "close {conn} {who} # {after_ms} ms into the step\n"
                ));
            }
        }
    }
    s
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const HEADER: &str = "\
# Golden frames from a real ZooKeeper 3.8.0 standalone server (Debian's
# package, tickTime=100, extended types off), driven by ZooKeeper's own Java
# client (wire/examples/capture/GoldenClient.java) and, for the steps marked
# \"raw\", by zkwire itself. Recaptured with:
#
#   cargo run --release -p zkwire --example capture -- wire/tests/golden/zookeeper-3.8.frames
#
# One line per frame, in the order the relay saw them:
#   <dir> <conn> <op> <hex>
# dir: c2s (client to server) or s2c; conn: the relay's connection number;
# op: the opcode name the body decodes with (the request's own for c2s, the
# answered request's for a reply, `connect` for a handshake, `notification`
# for a watch event); hex: the frame body, its 4-byte length prefix removed.
# The `##` line above a frame is zkwire's reading of it at capture time;
# `close <conn> <server|client>` says that side closed the connection (a
# raw session that sends nothing more is closed by the server when its
# 2000 ms session expires).
# Session ids, zxids and times differ from run to run.
";
