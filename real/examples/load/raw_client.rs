//! A minimal ZooKeeper client on the `zkwire` codec and a raw socket: one
//! session, one request in flight, notifications counted. It exists to
//! check that `zookeeper-client` is not what limits the benchmark: the
//! same workload through both clients should give the same figures when
//! the server is the limit (see `--client`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zkwire::{
    decode_connect_response, decode_reply, encode_connect_request, encode_request, opcode,
    write_frame, xid, Acl, ConnectRequest, FrameReader, ReplyHeader, Request, RequestHeader,
    DEFAULT_MAX_FRAME,
};

/// `KeeperException.Code.NODEEXISTS`.
pub const NODE_EXISTS: i32 = -110;

pub struct RawConn {
    stream: TcpStream,
    frames: FrameReader,
    buf: Vec<u8>,
    next_xid: i32,
    /// Notifications received and not yet waited for.
    events: usize,
}

impl RawConn {
    /// Connects to address `nth % addresses` of `connect` (`host:port,...`)
    /// and opens a session.
    pub async fn connect(
        connect: &str,
        nth: usize,
        session_timeout: Duration,
    ) -> Result<RawConn, String> {
        let addrs: Vec<&str> = connect.split(',').collect();
        let addr = addrs[nth % addrs.len()];
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("{addr}: TCP_NODELAY: {e}"))?;
        let mut conn = RawConn {
            stream,
            frames: FrameReader::new(DEFAULT_MAX_FRAME),
            buf: vec![0; 64 * 1024],
            next_xid: 1,
            events: 0,
        };
        let hello = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: i32::try_from(session_timeout.as_millis()).unwrap_or(i32::MAX),
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        };
        conn.send(&encode_connect_request(&hello)).await?;
        let body = conn.next_frame().await?;
        let answer = decode_connect_response(&body).map_err(|e| format!("handshake: {e}"))?;
        if answer.timeout_ms <= 0 {
            return Err(format!("{addr} refused the session"));
        }
        Ok(conn)
    }

    /// Sends `request`, reads until its reply; `Ok(err)` is the reply
    /// header's error code (0 on success). Notifications met on the way are
    /// counted for [`RawConn::wait_event`].
    pub async fn call(&mut self, op: i32, request: &Request) -> Result<i32, String> {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        let body = encode_request(&RequestHeader { xid, op }, request);
        self.send(&body).await?;
        loop {
            let body = self.next_frame().await?;
            let header = ReplyHeader::peek(&body).map_err(|e| format!("reply header: {e}"))?;
            if header.xid == xid::NOTIFICATION {
                self.events += 1;
            } else if header.xid == xid {
                // Decode the body as a client must, so that the cost is counted.
                decode_reply(op, &body).map_err(|e| format!("reply to op {op}: {e}"))?;
                return Ok(header.err);
            } else if header.xid != xid::PING {
                return Err(format!(
                    "reply with xid {} while waiting for {xid}",
                    header.xid
                ));
            }
        }
    }

    /// Waits for one notification (or takes one that came already).
    pub async fn wait_event(&mut self) -> Result<(), String> {
        while self.events == 0 {
            let body = self.next_frame().await?;
            let header = ReplyHeader::peek(&body).map_err(|e| format!("frame header: {e}"))?;
            if header.xid == xid::NOTIFICATION {
                self.events += 1;
            }
        }
        self.events -= 1;
        Ok(())
    }

    /// closeSession, then drop the socket.
    pub async fn close(mut self) -> Result<(), String> {
        self.call(opcode::CLOSE_SESSION, &Request::CloseSession)
            .await
            .map(|_| ())
    }

    async fn send(&mut self, body: &[u8]) -> Result<(), String> {
        self.stream
            .write_all(&write_frame(body))
            .await
            .map_err(|e| format!("sending: {e}"))
    }

    async fn next_frame(&mut self) -> Result<Vec<u8>, String> {
        loop {
            if let Some(body) = self.frames.pop().map_err(|e| format!("framing: {e}"))? {
                return Ok(body);
            }
            let n = self
                .stream
                .read(&mut self.buf)
                .await
                .map_err(|e| format!("reading: {e}"))?;
            if n == 0 {
                return Err("the server closed the connection".to_string());
            }
            self.frames.push(&self.buf[..n]);
        }
    }
}

/// The open ACL every node of the benchmark gets.
pub fn open_acl() -> Vec<Acl> {
    vec![Acl::open_unsafe()]
}
