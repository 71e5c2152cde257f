//! The recording relay: each client connection is relayed to the server by
//! two threads, and every whole frame is recorded, labelled with the step
//! the driver is in, before it is passed on.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use zkwire::opcode as op;
use zkwire::*;

/// The relay's frame limit: above ZooKeeper's, to see oversized probes.
const RELAY_MAX_FRAME: usize = 4 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    ToServer,
    ToClient,
}

pub enum Event {
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
pub struct Recorder {
    pub events: Mutex<Vec<Event>>,
    step: Mutex<(String, Option<Instant>)>,
    live: Mutex<Vec<TcpStream>>,
}

/// One connection's bookkeeping: which opcode each xid asked for.
#[derive(Default)]
struct Conn {
    ops: Mutex<BTreeMap<i32, i32>>,
}

impl Recorder {
    pub fn step(&self) -> String {
        self.step.lock().unwrap().0.clone()
    }

    fn step_age_ms(&self) -> u128 {
        self.step
            .lock()
            .unwrap()
            .1
            .map_or(0, |t| t.elapsed().as_millis())
    }

    pub fn set_step(&self, s: &str) {
        *self.step.lock().unwrap() = (s.to_string(), Some(Instant::now()));
    }

    pub fn drop_connections(&self) {
        for s in self.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

pub fn start_relay(upstream: SocketAddr, rec: Arc<Recorder>) -> SocketAddr {
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
