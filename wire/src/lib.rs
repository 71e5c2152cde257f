//! ZooKeeper 3.8's client-server wire protocol: framing, jute records, and
//! every request and reply body, decoded and encoded, for both sides.
//!
//! Sans-IO: bytes in, values out, and back. A server pushes what a socket
//! gave it into a [`frame::FrameReader`], pops frame bodies, decodes the
//! first with [`request::decode_connect_request`] and the rest with
//! [`request::decode_request`], and answers with
//! [`response::encode_reply`] behind [`frame::write_frame`]. A test client
//! does the mirror image.
//!
//! The decoder is written for hostile input: it never panics, never
//! allocates more than the bytes it was given, and every error names the
//! field and its byte offset in the frame body ([`DecodeError`]).
//! `docs/WIRE.md` says what it refuses and why.

pub mod error;
pub mod frame;
pub mod jute;
pub mod opcode;
pub mod records;
pub mod request;
pub mod response;
pub mod xid;

pub use error::{DecodeError, DecodeErrorKind};
pub use frame::{write_frame, FrameError, FrameReader, DEFAULT_MAX_FRAME};
pub use records::{
    Acl, ClientInfo, ConnectRequest, ConnectResponse, MultiHeader, ReplyHeader, RequestHeader,
    Stat, WatcherEvent,
};
pub use request::{
    decode_connect_request, decode_request, encode_connect_request, encode_request, MultiOp,
    Request,
};
pub use response::{
    decode_connect_response, decode_notification, decode_reply, encode_connect_response,
    encode_notification, encode_reply, MultiResult, ReadResult, Response,
};
