//! Just enough of ZooKeeper's wire format (jute, big-endian) for the fault
//! proxy to tell frames apart and to read a multi's per-op results.
//!
//! Why: `zookeeper-client` reports a failed multi as its failing op and
//! index only, but the server sends one result per op (`MultiResponse`:
//! a `MultiHeader{type, done, err}` per op, then the op's body; a failed
//! multi answers every op with an `ErrorResult`). The proxy sees every byte,
//! so it can read those codes as the server sent them.
//!
//! Framing: every packet is a 4-byte length and that many bytes. The first
//! packet each way on a connection is the session handshake
//! (`ConnectRequest` / `ConnectResponse`); after it, client packets start
//! with `RequestHeader{xid, type}` and server packets with
//! `ReplyHeader{xid, zxid, err}`. Negative xids are the library's own
//! traffic: `-1` a watch notification, `-2` a ping, `-4` auth, `-8`
//! `SetWatches`.

/// `OpCode.multi`.
pub const OP_MULTI: i32 = 14;
/// `OpCode.error`: the type of an `ErrorResult` inside a `MultiResponse`.
pub const OP_ERROR: i32 = -1;

/// Takes the first complete frame (length prefix included) off `pending`.
pub fn take_frame(pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let len = i32::from_be_bytes(pending.get(..4)?.try_into().ok()?);
    let total = 4 + usize::try_from(len).unwrap_or(0);
    if pending.len() < total {
        return None;
    }
    let rest = pending.split_off(total);
    Some(std::mem::replace(pending, rest))
}

/// A jute reader over one frame's body.
struct Reader<'a> {
    buf: &'a [u8],
}

impl Reader<'_> {
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.buf.split_at_checked(N)?;
        self.buf = rest;
        head.try_into().ok()
    }
    fn int(&mut self) -> Option<i32> {
        self.bytes::<4>().map(i32::from_be_bytes)
    }
    fn long(&mut self) -> Option<i64> {
        self.bytes::<8>().map(i64::from_be_bytes)
    }
    fn boolean(&mut self) -> Option<bool> {
        self.bytes::<1>().map(|[b]| b != 0)
    }
    /// A `ustring` or `buffer`: a length (−1 for null), then the bytes.
    fn skip_buffer(&mut self) -> Option<()> {
        let len = self.int()?;
        let len = usize::try_from(len).unwrap_or(0);
        self.buf = self.buf.get(len..)?;
        Some(())
    }
    /// A `Stat` ([`STAT_LEN`] bytes).
    fn skip_stat(&mut self) -> Option<()> {
        self.buf = self.buf.get(STAT_LEN..)?;
        Some(())
    }
}

/// czxid, mzxid, ctime, mtime (longs), version, cversion, aversion (ints),
/// ephemeralOwner (long), dataLength, numChildren (ints), pzxid (long).
const STAT_LEN: usize = 8 * 4 + 4 * 3 + 8 + 4 * 2 + 8;

/// The `(xid, type)` of a client request frame (not the handshake).
pub fn request_header(frame: &[u8]) -> Option<(i32, i32)> {
    let mut r = Reader {
        buf: frame.get(4..)?,
    };
    Some((r.int()?, r.int()?))
}

/// A server reply frame's header and body.
pub struct Reply<'a> {
    pub xid: i32,
    pub err: i32,
    pub body: &'a [u8],
}

/// A server reply frame (not the handshake), split into header and body.
pub fn reply(frame: &[u8]) -> Option<Reply<'_>> {
    let mut r = Reader {
        buf: frame.get(4..)?,
    };
    let xid = r.int()?;
    let _zxid = r.long()?;
    let err = r.int()?;
    Some(Reply {
        xid,
        err,
        body: r.buf,
    })
}

/// One entry of a `MultiResponse`: its op type and, for an `ErrorResult`
/// (type [`OP_ERROR`]), the op's error code (0 for a rolled-back op).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiEntry {
    pub op_type: i32,
    pub err: i32,
}

/// A multi's reply as the server sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiReply {
    /// The reply header's error (0 whenever per-op results follow).
    pub header_err: i32,
    pub entries: Vec<MultiEntry>,
}

/// Decode a `MultiResponse` body (`MultiResponse.deserialize`): entries
/// until a header with `done` set. `None` if the bytes are not one.
pub fn multi_response(header_err: i32, body: &[u8]) -> Option<MultiReply> {
    let mut r = Reader { buf: body };
    let mut entries = Vec::new();
    loop {
        let op_type = r.int()?;
        let done = r.boolean()?;
        // The header repeats an ErrorResult's code; its body is what
        // `MultiResponse.deserialize` reads.
        let _ = r.int()?;
        if done {
            break;
        }
        let err = match op_type {
            // create: CreateResponse{path}
            1 => r.skip_buffer().map(|()| 0)?,
            // create2, createContainer, createTTL: Create2Response{path, stat}
            15 | 19 | 21 => r.skip_buffer().and_then(|()| r.skip_stat()).map(|()| 0)?,
            // delete, deleteContainer, check: no body
            2 | 20 | 13 => 0,
            // setData: SetDataResponse{stat}
            5 => r.skip_stat().map(|()| 0)?,
            // ErrorResult: ErrorResponse{err}
            OP_ERROR => r.int()?,
            _ => return None,
        };
        entries.push(MultiEntry { op_type, err });
    }
    Some(MultiReply {
        header_err,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    fn header(out: &mut Vec<u8>, op_type: i32, done: bool, err: i32) {
        out.extend_from_slice(&op_type.to_be_bytes());
        out.push(u8::from(done));
        out.extend_from_slice(&err.to_be_bytes());
    }

    #[test]
    fn frames_are_split_at_their_lengths() {
        let mut pending = frame(b"abc");
        pending.extend(frame(b"de"));
        pending.extend_from_slice(&[0, 0]);
        assert_eq!(take_frame(&mut pending), Some(frame(b"abc")));
        assert_eq!(take_frame(&mut pending), Some(frame(b"de")));
        assert_eq!(
            take_frame(&mut pending),
            None,
            "half a length is not a frame"
        );
        assert_eq!(pending, vec![0, 0]);
    }

    #[test]
    fn a_failed_multi_carries_one_code_per_op() {
        // What PrepRequestProcessor makes of [create ok, setData ok,
        // delete NoNode, create]: 0, 0, -101, -2.
        let mut body = Vec::new();
        for code in [0, 0, -101, -2] {
            header(&mut body, OP_ERROR, false, code);
            body.extend_from_slice(&code.to_be_bytes());
        }
        header(&mut body, -1, true, -1);
        let mut packet = 7i32.to_be_bytes().to_vec(); // xid
        packet.extend_from_slice(&42i64.to_be_bytes()); // zxid
        packet.extend_from_slice(&0i32.to_be_bytes()); // err
        packet.extend_from_slice(&body);
        let framed = frame(&packet);
        let reply = reply(&framed).expect("a reply");
        assert_eq!((reply.xid, reply.err), (7, 0));
        let multi = multi_response(reply.err, reply.body).expect("a multi response");
        let codes: Vec<i32> = multi.entries.iter().map(|e| e.err).collect();
        assert_eq!(codes, vec![0, 0, -101, -2]);
        assert!(multi.entries.iter().all(|e| e.op_type == OP_ERROR));
    }

    #[test]
    fn a_successful_multi_skips_each_body() {
        let mut body = Vec::new();
        header(&mut body, 1, false, 0); // create: path
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"/a");
        header(&mut body, 5, false, 0); // setData: stat
        body.extend_from_slice(&[0u8; STAT_LEN]);
        header(&mut body, 13, false, 0); // check
        header(&mut body, 2, false, 0); // delete
        header(&mut body, -1, true, -1);
        let multi = multi_response(0, &body).expect("a multi response");
        let types: Vec<i32> = multi.entries.iter().map(|e| e.op_type).collect();
        assert_eq!(types, vec![1, 5, 13, 2]);
        assert!(multi.entries.iter().all(|e| e.err == 0));
        // Truncated: not a multi response.
        assert_eq!(multi_response(0, &body[..body.len() - 3]), None);
    }
}
