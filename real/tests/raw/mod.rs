//! A minimal blocking ZooKeeper client that writes each request frame
//! itself (jute, big-endian), for requests `zookeeper-client` cannot be
//! asked to send as they are (`removeWatches`, `checkWatches`,
//! `SetWatches2`). One request at a time; notifications (xid −1) that
//! arrive before an answer are collected. Loopback only, every read
//! bounded by a timeout.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use zksim::EventType;

const TIMEOUT: Duration = Duration::from_secs(10);
const NOTIFICATION_XID: i32 = -1;
const SET_WATCHES_XID: i32 = -8;

/// One session over one TCP connection (replaced on `reconnect`).
pub struct RawSession {
    stream: TcpStream,
    session: i64,
    passwd: Vec<u8>,
    next_xid: i32,
    last_zxid: i64,
    /// Node notifications received so far, in order.
    pub events: Vec<(EventType, String)>,
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// A jute record being written.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn int(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn long(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn boolean(mut self, v: bool) -> Self {
        self.0.push(u8::from(v));
        self
    }
    fn buffer(self, b: &[u8]) -> Self {
        let mut out = self.int(i32::try_from(b.len()).unwrap_or(i32::MAX));
        out.0.extend_from_slice(b);
        out
    }
    fn string(self, s: &str) -> Self {
        self.buffer(s.as_bytes())
    }
    fn strings(self, list: &[String]) -> Self {
        let mut out = self.int(i32::try_from(list.len()).unwrap_or(i32::MAX));
        for s in list {
            out = out.string(s);
        }
        out
    }
}

/// A jute record being read.
struct In<'a>(&'a [u8]);

impl In<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n).ok_or_else(|| bad("short"))?;
        self.0 = rest;
        Ok(head)
    }
    fn int(&mut self) -> io::Result<i32> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().map_err(|_| bad("int"))?,
        ))
    }
    fn long(&mut self) -> io::Result<i64> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().map_err(|_| bad("long"))?,
        ))
    }
    fn buffer(&mut self) -> io::Result<Vec<u8>> {
        let len = self.int()?;
        let len = usize::try_from(len).unwrap_or(0);
        Ok(self.take(len)?.to_vec())
    }
}

fn write_frame(stream: &mut TcpStream, body: &[u8]) -> io::Result<()> {
    let len = i32::try_from(body.len()).map_err(|_| bad("frame too long"))?;
    stream.write_all(&len.to_be_bytes())?;
    stream.write_all(body)
}

fn read_frame(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut len = [0; 4];
    stream.read_exact(&mut len)?;
    let len = usize::try_from(i32::from_be_bytes(len)).map_err(|_| bad("negative length"))?;
    if len > 1 << 20 {
        return Err(bad("frame too long"));
    }
    let mut body = vec![0; len];
    stream.read_exact(&mut body)?;
    Ok(body)
}

fn event_type(code: i32) -> io::Result<EventType> {
    Ok(match code {
        1 => EventType::NodeCreated,
        2 => EventType::NodeDeleted,
        3 => EventType::NodeDataChanged,
        4 => EventType::NodeChildrenChanged,
        _ => return Err(bad("unexpected event type")),
    })
}

/// `ConnectRequest` for a new session (id 0) or an existing one; returns
/// the stream and the session's id and password.
fn handshake(
    addr: &str,
    session: i64,
    passwd: &[u8],
    last_zxid: i64,
) -> io::Result<(TcpStream, i64, Vec<u8>)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    stream.set_nodelay(true)?;
    let request = Out::default()
        .int(0) // protocolVersion
        .long(last_zxid)
        .int(10_000) // timeOut (ms)
        .long(session)
        .buffer(passwd)
        .boolean(false); // readOnly
    write_frame(&mut stream, &request.0)?;
    let frame = read_frame(&mut stream)?;
    let mut r = In(&frame);
    let _protocol = r.int()?;
    let timeout = r.int()?;
    let id = r.long()?;
    let passwd = r.buffer()?;
    if timeout <= 0 {
        return Err(bad("session refused (expired?)"));
    }
    Ok((stream, id, passwd))
}

impl RawSession {
    pub fn connect(addr: &str) -> io::Result<Self> {
        let (stream, session, passwd) = handshake(addr, 0, &[0; 16], 0)?;
        Ok(RawSession {
            stream,
            session,
            passwd,
            next_xid: 1,
            last_zxid: 0,
            events: Vec::new(),
        })
    }

    /// Send `body` as request `op_type` under `xid`; return the answer's
    /// error code, collecting notifications that come first.
    fn call_with_xid(&mut self, xid: i32, op_type: i32, body: Out) -> io::Result<i32> {
        let frame = Out::default().int(xid).int(op_type);
        let mut frame = frame.0;
        frame.extend_from_slice(&body.0);
        write_frame(&mut self.stream, &frame)?;
        loop {
            let reply = read_frame(&mut self.stream)?;
            let mut r = In(&reply);
            let got = r.int()?;
            let zxid = r.long()?;
            let err = r.int()?;
            if got == NOTIFICATION_XID {
                let kind = event_type(r.int()?)?;
                let _state = r.int()?;
                let path = String::from_utf8(r.buffer()?).map_err(|_| bad("path"))?;
                self.events.push((kind, path));
                continue;
            }
            if got != xid {
                return Err(bad("answer to another request"));
            }
            if zxid > 0 {
                self.last_zxid = zxid;
            }
            return Ok(err);
        }
    }

    fn call(&mut self, op_type: i32, body: Out) -> io::Result<i32> {
        let xid = self.next_xid;
        self.next_xid += 1;
        self.call_with_xid(xid, op_type, body)
    }

    /// `create(path, "d", OPEN_ACL_UNSAFE, PERSISTENT)` (opcode 1).
    pub fn create(&mut self, path: &str) -> io::Result<i32> {
        let body = Out::default()
            .string(path)
            .buffer(b"d")
            .int(1) // one ACL
            .int(31) // ALL
            .string("world")
            .string("anyone")
            .int(0); // flags: persistent
        self.call(1, body)
    }

    pub fn delete(&mut self, path: &str) -> io::Result<i32> {
        self.call(2, Out::default().string(path).int(-1))
    }

    pub fn set_data(&mut self, path: &str) -> io::Result<i32> {
        self.call(5, Out::default().string(path).buffer(b"x").int(-1))
    }

    pub fn exists(&mut self, path: &str) -> io::Result<i32> {
        self.call(3, Out::default().string(path).boolean(false))
    }

    pub fn get_data_watch(&mut self, path: &str) -> io::Result<i32> {
        self.call(4, Out::default().string(path).boolean(true))
    }

    /// `getChildren2(path, watch)` (opcode 12).
    pub fn children_watch(&mut self, path: &str) -> io::Result<i32> {
        self.call(12, Out::default().string(path).boolean(true))
    }

    /// `addWatch(path, mode)` (opcode 106).
    pub fn add_watch(&mut self, path: &str, mode: i32) -> io::Result<i32> {
        self.call(106, Out::default().string(path).int(mode))
    }

    /// `checkWatches` (17) or `removeWatches` (18): path and watcher type.
    pub fn watches_request(&mut self, op_type: i32, path: &str, kind: i32) -> io::Result<i32> {
        self.call(op_type, Out::default().string(path).int(kind))
    }

    /// Drop the connection, attach the same session on a new one and send
    /// `SetWatches2` (opcode 105, xid −8) with no one-shot watches and these
    /// persistent and recursive paths. Returns the `SetWatches2` answer's code.
    pub fn reconnect(
        &mut self,
        addr: &str,
        persistent: &[String],
        recursive: &[String],
    ) -> io::Result<i32> {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        let (stream, _, _) = handshake(addr, self.session, &self.passwd, self.last_zxid)?;
        self.stream = stream;
        let body = Out::default()
            .long(self.last_zxid)
            .strings(&[])
            .strings(&[])
            .strings(&[])
            .strings(persistent)
            .strings(recursive);
        self.call_with_xid(SET_WATCHES_XID, 105, body)
    }

    /// `closeSession` (opcode −11).
    pub fn close(&mut self) -> io::Result<i32> {
        self.call(-11, Out::default())
    }
}
