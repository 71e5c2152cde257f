//! Framing: every packet, both ways, is a 4-byte big-endian length and
//! that many bytes of body.
//!
//! [`FrameReader`] is sans-IO: a driver pushes whatever bytes the socket
//! gave it and pops whole frame bodies. It refuses a negative length or one
//! past its maximum (ZooKeeper's `jute.maxbuffer`, 0xfffff by default) as
//! soon as the 4 length bytes are in, so a hostile peer cannot make it
//! buffer more than it has actually sent, nor wait for a body that will
//! never fit.

use std::fmt;

/// ZooKeeper's default `jute.maxbuffer`: the largest frame body a server or
/// client accepts (1 MiB - 1).
pub const DEFAULT_MAX_FRAME: usize = 0xfffff;

/// Why a stream of frames cannot go on. The connection is beyond repair
/// once this is returned: the reader does not know where the next frame
/// starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A length prefix below zero.
    Negative { len: i32, offset: u64 },
    /// A length prefix above the reader's maximum.
    TooLarge { len: i32, max: usize, offset: u64 },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Negative { len, offset } => {
                write!(f, "frame at stream byte {offset}: negative length {len}")
            }
            FrameError::TooLarge { len, max, offset } => write!(
                f,
                "frame at stream byte {offset}: length {len} is past the limit {max}"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Splits a byte stream into frame bodies.
#[derive(Clone, Debug)]
pub struct FrameReader {
    /// Received bytes; `buf[start..]` is not yet popped.
    buf: Vec<u8>,
    start: usize,
    max: usize,
    /// Stream offset of `buf[0]`, for error messages.
    consumed: u64,
    failed: Option<FrameError>,
}

impl Default for FrameReader {
    fn default() -> Self {
        FrameReader::new(DEFAULT_MAX_FRAME)
    }
}

impl FrameReader {
    /// A reader that refuses frame bodies longer than `max` bytes.
    pub fn new(max: usize) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            start: 0,
            max,
            consumed: 0,
            failed: None,
        }
    }

    /// The largest body this reader accepts.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Bytes received and not yet popped as part of a frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Adds received bytes. After a [`FrameError`] they are dropped: the
    /// stream is over, and a driver that keeps reading must not make the
    /// reader grow.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.consumed += self.start as u64;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Ends the stream: keeps the error, frees what was buffered.
    fn fail(&mut self, e: FrameError) -> FrameError {
        self.failed = Some(e);
        self.buf = Vec::new();
        self.start = 0;
        e
    }

    /// The next whole frame body, `Ok(None)` if it has not all arrived, or
    /// the error that ends the stream (returned again on every later call).
    pub fn pop(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let pending = &self.buf[self.start..];
        let Some(prefix) = pending.get(..4) else {
            return Ok(None);
        };
        let len = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        let offset = self.consumed + self.start as u64;
        let body_len = match usize::try_from(len) {
            Err(_) => return Err(self.fail(FrameError::Negative { len, offset })),
            Ok(n) if n > self.max => {
                return Err(self.fail(FrameError::TooLarge {
                    len,
                    max: self.max,
                    offset,
                }))
            }
            Ok(n) => n,
        };
        let Some(body) = pending.get(4..4 + body_len) else {
            return Ok(None);
        };
        let body = body.to_vec();
        self.start += 4 + body_len;
        Ok(Some(body))
    }
}

/// A frame: `body` behind its 4-byte big-endian length.
///
/// A body longer than `i32::MAX` cannot be framed; its length saturates and
/// every ZooKeeper peer refuses it as too large.
pub fn write_frame(body: &[u8]) -> Vec<u8> {
    let len = i32::try_from(body.len()).unwrap_or(i32::MAX);
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(body);
    out
}
