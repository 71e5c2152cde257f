//! What a decoder says when the bytes are not what ZooKeeper sends.

use std::fmt;

/// Why a frame body could not be decoded, and where: `offset` counts bytes
/// from the start of the frame body (the length prefix excluded), so a
/// logged error points at the byte to look at in a hex dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// The byte offset in the frame body where the bad field starts.
    pub offset: usize,
    /// The jute field being read (`"path"`, `"MultiHeader.type"`, ...).
    pub field: &'static str,
    pub kind: DecodeErrorKind,
}

/// The ways a frame body can be wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The body ended inside a field: `needed` bytes, `available` left.
    Truncated { needed: usize, available: usize },
    /// A length prefix below -1, or -1 where null is not allowed.
    BadLength(i32),
    /// A length prefix larger than the bytes left in the body: refused
    /// before allocating anything.
    LengthPastEnd { len: i32, available: usize },
    /// A `ustring` that is not UTF-8.
    NotUtf8,
    /// An opcode this codec does not know, or that is not allowed here
    /// (inside a multi, say).
    UnknownOp(i32),
    /// Bytes left over after the record: ZooKeeper ignores them, we refuse
    /// them so that a decoded frame re-encodes to the same bytes.
    TrailingBytes(usize),
    /// A field whose value ZooKeeper would refuse (an AuthPacket type other
    /// than 0, say); the text says what was expected.
    BadValue(&'static str),
}

impl DecodeError {
    pub(crate) fn new(offset: usize, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset,
            field,
            kind,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {} ({}): ", self.offset, self.field)?;
        match &self.kind {
            DecodeErrorKind::Truncated { needed, available } => {
                write!(f, "truncated: needs {needed} bytes, {available} left")
            }
            DecodeErrorKind::BadLength(len) => write!(f, "bad length {len}"),
            DecodeErrorKind::LengthPastEnd { len, available } => {
                write!(f, "length {len} is past the end ({available} bytes left)")
            }
            DecodeErrorKind::NotUtf8 => write!(f, "string is not UTF-8"),
            DecodeErrorKind::UnknownOp(op) => write!(f, "unknown or misplaced opcode {op}"),
            DecodeErrorKind::TrailingBytes(n) => write!(f, "{n} trailing bytes after the record"),
            DecodeErrorKind::BadValue(what) => write!(f, "bad value: {what}"),
        }
    }
}

impl std::error::Error for DecodeError {}
