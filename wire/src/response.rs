//! Reply bodies (server to client), decoded and encoded.
//!
//! A reply frame is a [`ReplyHeader`] and then, when `err` is 0, the record
//! the request's opcode answers with. The body's shape is not on the wire,
//! so decoding needs the opcode of the request the reply answers (a client
//! knows it from the xid). A failed request has no body, except a multi,
//! whose per-op results follow even when the header carries the error.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::jute::{Reader, Writer};
use crate::opcode as op;
use crate::records::{
    Acl, ClientInfo, ConnectResponse, MultiHeader, ReplyHeader, Stat, WatcherEvent,
};
use crate::xid;

/// A successful reply's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// No body: delete, check, removeWatches, checkWatches, setWatches,
    /// setWatches2, setAuth, ping, closeSession.
    Empty,
    /// `ErrorResponse{err}`: addWatch's reply body (the 3.8 server writes
    /// one, with err 0, after a header whose err is 0 too).
    Code(i32),
    /// `CreateResponse` (create).
    Create { path: String },
    /// `Create2Response` (create2, createContainer, createTTL).
    Create2 { path: String, stat: Stat },
    /// `ExistsResponse`, `SetDataResponse`, `SetACLResponse`.
    Stat(Stat),
    /// `GetDataResponse` (getData, reconfig). `data` is `None` for a node
    /// created with null data.
    Data { data: Option<Vec<u8>>, stat: Stat },
    /// `GetACLResponse`.
    Acl { acl: Vec<Acl>, stat: Stat },
    /// `GetChildrenResponse`.
    Children { names: Vec<String> },
    /// `GetChildren2Response`.
    Children2 { names: Vec<String>, stat: Stat },
    /// `SyncResponse`.
    Sync { path: String },
    /// `GetAllChildrenNumberResponse`.
    Count(i32),
    /// `GetEphemeralsResponse`.
    Ephemerals(Vec<String>),
    /// `MultiResponse` of a multi: one result per op.
    Multi(Vec<MultiResult>),
    /// `MultiResponse` of a multiRead: one result per op.
    MultiRead(Vec<ReadResult>),
    /// `WhoAmIResponse` (ZooKeeper 3.9).
    WhoAmI(Vec<ClientInfo>),
}

/// One op's result in a multi's reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultiResult {
    /// A create op's result (type create).
    Create {
        path: String,
    },
    /// A create2, createContainer or createTTL op's result (type create2).
    Create2 {
        path: String,
        stat: Stat,
    },
    Delete,
    SetData {
        stat: Stat,
    },
    Check,
    /// `ErrorResult`: the op's error; 0 for an op that would have succeeded
    /// but was rolled back because another op failed.
    Error {
        err: i32,
    },
}

/// One op's result in a multiRead's reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadResult {
    Children { names: Vec<String> },
    Data { data: Option<Vec<u8>>, stat: Stat },
    Error { err: i32 },
}

/// Decodes a reply frame body to the request with opcode `opcode`: its
/// header, and its body — `None` when `err` is not 0 and no body follows.
/// For ping, auth and setWatches replies, pass [`op::PING`], [`op::AUTH`],
/// [`op::SET_WATCHES`]; notifications go to [`decode_notification`].
pub fn decode_reply(
    opcode: i32,
    body: &[u8],
) -> Result<(ReplyHeader, Option<Response>), DecodeError> {
    let mut r = Reader::new(body);
    let header = ReplyHeader::read(&mut r)?;
    let has_body = header.err == 0 || (matches!(opcode, op::MULTI) && r.remaining() > 0);
    let response = if has_body {
        Some(read_response(&mut r, opcode)?)
    } else {
        None
    };
    r.finish("reply")?;
    Ok((header, response))
}

fn read_response(r: &mut Reader<'_>, opcode: i32) -> Result<Response, DecodeError> {
    Ok(match opcode {
        op::CREATE => Response::Create {
            path: r.ustring("CreateResponse.path")?,
        },
        op::CREATE2 | op::CREATE_CONTAINER | op::CREATE_TTL => Response::Create2 {
            path: r.ustring("Create2Response.path")?,
            stat: Stat::read(r)?,
        },
        op::EXISTS | op::SET_DATA | op::SET_ACL => Response::Stat(Stat::read(r)?),
        op::GET_DATA | op::RECONFIG => Response::Data {
            data: r.buffer("GetDataResponse.data")?,
            stat: Stat::read(r)?,
        },
        op::GET_ACL => Response::Acl {
            acl: Acl::read_list(r, "GetACLResponse.acl")?,
            stat: Stat::read(r)?,
        },
        op::GET_CHILDREN => Response::Children {
            names: r.strings("GetChildrenResponse.children")?,
        },
        op::GET_CHILDREN2 => Response::Children2 {
            names: r.strings("GetChildren2Response.children")?,
            stat: Stat::read(r)?,
        },
        op::SYNC => Response::Sync {
            path: r.ustring("SyncResponse.path")?,
        },
        op::GET_ALL_CHILDREN_NUMBER => {
            Response::Count(r.int("GetAllChildrenNumberResponse.totalNumber")?)
        }
        op::GET_EPHEMERALS => Response::Ephemerals(r.strings("GetEphemeralsResponse.ephemerals")?),
        op::WHO_AM_I => {
            Response::WhoAmI(r.vector("WhoAmIResponse.clientInfo", 8, ClientInfo::read)?)
        }
        op::ADD_WATCH => Response::Code(r.int("ErrorResponse.err")?),
        op::MULTI => Response::Multi(read_results(r, read_multi_result)?),
        op::MULTI_READ => Response::MultiRead(read_results(r, read_read_result)?),
        op::DELETE
        | op::CHECK
        | op::REMOVE_WATCHES
        | op::CHECK_WATCHES
        | op::SET_WATCHES
        | op::SET_WATCHES2
        | op::AUTH
        | op::PING
        | op::CLOSE_SESSION => Response::Empty,
        other => return Err(r.error("reply", DecodeErrorKind::UnknownOp(other))),
    })
}

/// `MultiResponse.deserialize`: a `MultiHeader` and a body per result until
/// a header with `done` set.
fn read_results<T>(
    r: &mut Reader<'_>,
    read_one: impl Fn(&mut Reader<'_>, i32) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    loop {
        let at = r.offset();
        let h = MultiHeader::read(r)?;
        if h.done {
            return Ok(out);
        }
        let result = read_one(r, h.op).map_err(|e| match e.kind {
            DecodeErrorKind::UnknownOp(_) if e.offset == at + 9 => {
                DecodeError::new(at, "MultiHeader.type", e.kind)
            }
            _ => e,
        })?;
        out.push(result);
    }
}

fn read_multi_result(r: &mut Reader<'_>, opcode: i32) -> Result<MultiResult, DecodeError> {
    Ok(match opcode {
        op::CREATE => MultiResult::Create {
            path: r.ustring("CreateResponse.path")?,
        },
        op::CREATE2 => MultiResult::Create2 {
            path: r.ustring("Create2Response.path")?,
            stat: Stat::read(r)?,
        },
        op::DELETE => MultiResult::Delete,
        op::CHECK => MultiResult::Check,
        op::SET_DATA => MultiResult::SetData {
            stat: Stat::read(r)?,
        },
        op::ERROR => MultiResult::Error {
            err: r.int("ErrorResponse.err")?,
        },
        other => return Err(r.error("MultiHeader.type", DecodeErrorKind::UnknownOp(other))),
    })
}

fn read_read_result(r: &mut Reader<'_>, opcode: i32) -> Result<ReadResult, DecodeError> {
    Ok(match opcode {
        op::GET_CHILDREN => ReadResult::Children {
            names: r.strings("GetChildrenResponse.children")?,
        },
        op::GET_DATA => ReadResult::Data {
            data: r.buffer("GetDataResponse.data")?,
            stat: Stat::read(r)?,
        },
        op::ERROR => ReadResult::Error {
            err: r.int("ErrorResponse.err")?,
        },
        other => return Err(r.error("MultiHeader.type", DecodeErrorKind::UnknownOp(other))),
    })
}

/// Encodes a reply frame body: the header, then the body if any.
pub fn encode_reply(header: &ReplyHeader, response: Option<&Response>) -> Vec<u8> {
    let mut w = Writer::new();
    header.write(&mut w);
    if let Some(response) = response {
        write_response(&mut w, response);
    }
    w.into_bytes()
}

fn write_response(w: &mut Writer, response: &Response) {
    match response {
        Response::Empty => {}
        Response::Create { path } | Response::Sync { path } => {
            w.ustring(path);
        }
        Response::Create2 { path, stat } => {
            w.ustring(path);
            stat.write(w);
        }
        Response::Stat(stat) => stat.write(w),
        Response::Data { data, stat } => {
            w.buffer(data.as_deref());
            stat.write(w);
        }
        Response::Acl { acl, stat } => {
            Acl::write_list(w, acl);
            stat.write(w);
        }
        Response::Children { names } | Response::Ephemerals(names) => {
            w.strings(names);
        }
        Response::Children2 { names, stat } => {
            w.strings(names);
            stat.write(w);
        }
        Response::Count(n) | Response::Code(n) => {
            w.int(*n);
        }
        Response::WhoAmI(infos) => {
            w.vector(infos, |w, i| i.write(w));
        }
        Response::Multi(results) => {
            for result in results {
                write_multi_result(w, result);
            }
            MultiHeader::END.write(w);
        }
        Response::MultiRead(results) => {
            for result in results {
                write_read_result(w, result);
            }
            MultiHeader::END.write(w);
        }
    }
}

/// `MultiResponse.serialize`: the header's `err` is an ErrorResult's code,
/// else 0.
fn result_header(w: &mut Writer, opcode: i32, err: i32) {
    MultiHeader {
        op: opcode,
        done: false,
        err,
    }
    .write(w);
}

fn write_multi_result(w: &mut Writer, result: &MultiResult) {
    match result {
        MultiResult::Create { path } => {
            result_header(w, op::CREATE, 0);
            w.ustring(path);
        }
        MultiResult::Create2 { path, stat } => {
            result_header(w, op::CREATE2, 0);
            w.ustring(path);
            stat.write(w);
        }
        MultiResult::Delete => result_header(w, op::DELETE, 0),
        MultiResult::Check => result_header(w, op::CHECK, 0),
        MultiResult::SetData { stat } => {
            result_header(w, op::SET_DATA, 0);
            stat.write(w);
        }
        MultiResult::Error { err } => {
            result_header(w, op::ERROR, *err);
            w.int(*err);
        }
    }
}

fn write_read_result(w: &mut Writer, result: &ReadResult) {
    match result {
        ReadResult::Children { names } => {
            result_header(w, op::GET_CHILDREN, 0);
            w.strings(names);
        }
        ReadResult::Data { data, stat } => {
            result_header(w, op::GET_DATA, 0);
            w.buffer(data.as_deref());
            stat.write(w);
        }
        ReadResult::Error { err } => {
            result_header(w, op::ERROR, *err);
            w.int(*err);
        }
    }
}

/// A watch notification frame body: `ReplyHeader{xid: -1, zxid, err: 0}`
/// and the event.
pub fn encode_notification(zxid: i64, event: &WatcherEvent) -> Vec<u8> {
    let mut w = Writer::new();
    ReplyHeader {
        xid: xid::NOTIFICATION,
        zxid,
        err: 0,
    }
    .write(&mut w);
    event.write(&mut w);
    w.into_bytes()
}

/// Decodes a notification frame body (a reply with xid -1).
pub fn decode_notification(body: &[u8]) -> Result<(ReplyHeader, WatcherEvent), DecodeError> {
    let mut r = Reader::new(body);
    let header = ReplyHeader::read(&mut r)?;
    if header.xid != xid::NOTIFICATION {
        return Err(DecodeError::new(
            0,
            "ReplyHeader.xid",
            DecodeErrorKind::BadValue("a notification has xid -1"),
        ));
    }
    let event = WatcherEvent::read(&mut r)?;
    r.finish("notification")?;
    Ok((header, event))
}

/// Decodes the server's handshake frame body.
pub fn decode_connect_response(body: &[u8]) -> Result<ConnectResponse, DecodeError> {
    let mut r = Reader::new(body);
    let rsp = ConnectResponse::read(&mut r)?;
    r.finish("ConnectResponse")?;
    Ok(rsp)
}

/// Encodes the server's handshake frame body.
pub fn encode_connect_response(rsp: &ConnectResponse) -> Vec<u8> {
    let mut w = Writer::new();
    rsp.write(&mut w);
    w.into_bytes()
}
