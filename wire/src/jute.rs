//! Jute, ZooKeeper's record serialisation: big-endian ints and longs, one
//! byte booleans, and length-prefixed buffers, strings and vectors.
//!
//! Why our own reader: every length on the wire comes from the peer, so each
//! is checked against the bytes actually left before anything is
//! allocated — a 4-byte frame claiming a 2 GiB vector costs nothing. Every
//! error names the field and its offset in the frame body.

use crate::error::{DecodeError, DecodeErrorKind};

/// A cursor over one frame body.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far (the offset of the next field).
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// An error at the current offset.
    pub fn error(&self, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.pos, field, kind)
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if n > available {
            return Err(self.error(
                field,
                DecodeErrorKind::Truncated {
                    needed: n,
                    available,
                },
            ));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub fn int(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        self.array::<4>(field).map(i32::from_be_bytes)
    }

    pub fn long(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        self.array::<8>(field).map(i64::from_be_bytes)
    }

    /// A boolean: one byte, anything but 0 is true (as Java's
    /// `DataInput.readBoolean`). Re-encoding writes 1.
    pub fn bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        self.array::<1>(field).map(|[b]| b != 0)
    }

    /// A length prefix for `unit`-byte-or-larger items: -1 is null (`None`),
    /// other negatives and lengths past the end are refused.
    fn length(&mut self, field: &'static str, unit: usize) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        let len = self.int(field)?;
        if len == -1 {
            return Ok(None);
        }
        let Ok(count) = usize::try_from(len) else {
            return Err(DecodeError::new(at, field, DecodeErrorKind::BadLength(len)));
        };
        let available = self.remaining();
        if count.saturating_mul(unit) > available {
            return Err(DecodeError::new(
                at,
                field,
                DecodeErrorKind::LengthPastEnd { len, available },
            ));
        }
        Ok(Some(count))
    }

    /// A `buffer` that may be null (length -1), as node data may be: Java
    /// clients tell `null` from an empty array, so we keep the difference.
    pub fn buffer(&mut self, field: &'static str) -> Result<Option<Vec<u8>>, DecodeError> {
        match self.length(field, 1)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(n, field)?.to_vec())),
        }
    }

    /// A `buffer` that must not be null (a password, an auth token).
    pub fn bytes(&mut self, field: &'static str) -> Result<Vec<u8>, DecodeError> {
        let at = self.pos;
        self.buffer(field)?
            .ok_or_else(|| DecodeError::new(at, field, DecodeErrorKind::BadLength(-1)))
    }

    /// A `ustring` that may be null.
    pub fn opt_ustring(&mut self, field: &'static str) -> Result<Option<String>, DecodeError> {
        let at = self.pos;
        match self.length(field, 1)? {
            None => Ok(None),
            Some(n) => {
                let bytes = self.take(n, field)?;
                match std::str::from_utf8(bytes) {
                    Ok(s) => Ok(Some(s.to_owned())),
                    Err(_) => Err(DecodeError::new(at, field, DecodeErrorKind::NotUtf8)),
                }
            }
        }
    }

    /// A `ustring` that must not be null (a path: ZooKeeper refuses a null
    /// path anyway, so a null one is a malformed frame to us).
    pub fn ustring(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let at = self.pos;
        self.opt_ustring(field)?
            .ok_or_else(|| DecodeError::new(at, field, DecodeErrorKind::BadLength(-1)))
    }

    /// A non-null `vector`, each item read by `item`; `min_item` is the
    /// smallest encoding of one item, so that the count is checked against
    /// the bytes left before the vector is allocated.
    pub fn vector<T>(
        &mut self,
        field: &'static str,
        min_item: usize,
        mut item: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let at = self.pos;
        let Some(count) = self.length(field, min_item.max(1))? else {
            return Err(DecodeError::new(at, field, DecodeErrorKind::BadLength(-1)));
        };
        // `count` fits the bytes left at `min_item` bytes each, but an item
        // can be larger in memory than on the wire (a `String` is 24 bytes
        // for a 4-byte empty string): reserve no more than the bytes left,
        // and let items that really are there grow the vector.
        let per_item = std::mem::size_of::<T>().max(1);
        let mut out = Vec::with_capacity(count.min(self.remaining() / per_item));
        for _ in 0..count {
            out.push(item(self)?);
        }
        Ok(out)
    }

    /// A non-null `vector<ustring>`.
    pub fn strings(&mut self, field: &'static str) -> Result<Vec<String>, DecodeError> {
        self.vector(field, 4, |r| r.ustring(field))
    }

    /// Refuses bytes after the record.
    pub fn finish(&self, field: &'static str) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(field, DecodeErrorKind::TrailingBytes(n))),
        }
    }
}

/// Appends jute fields to a frame body.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn int(&mut self, v: i32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn long(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.buf.push(u8::from(v));
        self
    }

    /// A length prefix. Jute lengths are i32; a longer item is far past
    /// any frame limit, so the length saturates and the far side's frame
    /// limit refuses the frame.
    fn len(&mut self, n: usize) -> &mut Self {
        self.int(i32::try_from(n).unwrap_or(i32::MAX))
    }

    pub fn buffer(&mut self, v: Option<&[u8]>) -> &mut Self {
        match v {
            None => self.int(-1),
            Some(b) => {
                self.len(b.len());
                self.buf.extend_from_slice(b);
                self
            }
        }
    }

    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buffer(Some(v))
    }

    pub fn opt_ustring(&mut self, v: Option<&str>) -> &mut Self {
        self.buffer(v.map(str::as_bytes))
    }

    pub fn ustring(&mut self, v: &str) -> &mut Self {
        self.bytes(v.as_bytes())
    }

    pub fn vector<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Self, &T)) -> &mut Self {
        self.len(items.len());
        for i in items {
            item(self, i);
        }
        self
    }

    pub fn strings(&mut self, items: &[String]) -> &mut Self {
        self.vector(items, |w, s| {
            w.ustring(s);
        })
    }
}
