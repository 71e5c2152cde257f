//! Request bodies (client to server), decoded and encoded.
//!
//! A request frame is a [`RequestHeader`] and then the record its opcode
//! names; the handshake ([`ConnectRequest`]) has no header.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::jute::{Reader, Writer};
use crate::opcode as op;
use crate::records::{Acl, ConnectRequest, MultiHeader, RequestHeader};

/// Every request body of ZooKeeper 3.8 that this codec speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `CreateRequest`: create, create2 and createContainer (the header's
    /// opcode tells which). `data` is `None` when the client sent null.
    Create {
        path: String,
        data: Option<Vec<u8>>,
        acl: Vec<Acl>,
        flags: i32,
    },
    /// `CreateTTLRequest` (createTTL).
    CreateTtl {
        path: String,
        data: Option<Vec<u8>>,
        acl: Vec<Acl>,
        flags: i32,
        ttl: i64,
    },
    Delete {
        path: String,
        version: i32,
    },
    Exists {
        path: String,
        watch: bool,
    },
    GetData {
        path: String,
        watch: bool,
    },
    SetData {
        path: String,
        data: Option<Vec<u8>>,
        version: i32,
    },
    GetAcl {
        path: String,
    },
    SetAcl {
        path: String,
        acl: Vec<Acl>,
        version: i32,
    },
    GetChildren {
        path: String,
        watch: bool,
    },
    GetChildren2 {
        path: String,
        watch: bool,
    },
    Sync {
        path: String,
    },
    /// `CheckVersionRequest`, alone or inside a multi.
    Check {
        path: String,
        version: i32,
    },
    /// A transaction: create/create2/createContainer/createTTL, delete,
    /// setData and check ops.
    Multi(Vec<MultiOp>),
    /// Reads answered one by one: getChildren and getData ops only.
    MultiRead(Vec<Request>),
    GetAllChildrenNumber {
        path: String,
    },
    GetEphemerals {
        prefix: String,
    },
    /// Sent with xid -8 after a reconnect: the watches to re-arm.
    SetWatches {
        relative_zxid: i64,
        data: Vec<String>,
        exist: Vec<String>,
        child: Vec<String>,
    },
    SetWatches2 {
        relative_zxid: i64,
        data: Vec<String>,
        exist: Vec<String>,
        child: Vec<String>,
        persistent: Vec<String>,
        persistent_recursive: Vec<String>,
    },
    /// `mode` 0 persistent, 1 persistent recursive (`AddWatchMode`).
    AddWatch {
        path: String,
        mode: i32,
    },
    /// `kind` is `Watcher.WatcherType`: 1 children, 2 data, 3 any.
    RemoveWatches {
        path: String,
        kind: i32,
    },
    CheckWatches {
        path: String,
        kind: i32,
    },
    /// `AuthPacket`, sent with xid -4. `kind` is always 0 from clients.
    SetAuth {
        kind: i32,
        scheme: String,
        auth: Vec<u8>,
    },
    /// No body (ZooKeeper 3.9).
    WhoAmI,
    /// No body.
    Ping,
    /// No body.
    CloseSession,
    /// `ReconfigRequest`; the three member lists may be null.
    Reconfig {
        joining: Option<String>,
        leaving: Option<String>,
        new_members: Option<String>,
        cur_config_id: i64,
    },
    /// An opcode this codec does not speak. Never produced by
    /// [`decode_request`] (which returns an error naming the opcode); it is
    /// for a server's dispatch to carry "answer this as unimplemented".
    Unknown {
        op: i32,
    },
}

/// One op of a multi: the opcode its `MultiHeader` carries (create, create2,
/// createContainer, createTTL, delete, setData, check) and its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiOp {
    pub op: i32,
    pub request: Request,
}

/// Decodes a request frame body (after the handshake).
pub fn decode_request(body: &[u8]) -> Result<(RequestHeader, Request), DecodeError> {
    let mut r = Reader::new(body);
    let header = RequestHeader::read(&mut r)?;
    let at = r.offset();
    let request =
        read_body(&mut r, header.op).map_err(|e| retag_unknown(e, at, "RequestHeader.type"))?;
    r.finish("request")?;
    Ok((header, request))
}

/// An unknown opcode is reported at the header's `type` field.
fn retag_unknown(e: DecodeError, at: usize, field: &'static str) -> DecodeError {
    match e.kind {
        DecodeErrorKind::UnknownOp(_) if e.offset == at && e.field == "request" => DecodeError {
            offset: at - 4,
            field,
            ..e
        },
        _ => e,
    }
}

/// The body `op` reads, at the reader's position.
fn read_body(r: &mut Reader<'_>, opcode: i32) -> Result<Request, DecodeError> {
    Ok(match opcode {
        op::CREATE | op::CREATE2 | op::CREATE_CONTAINER => Request::Create {
            path: r.ustring("CreateRequest.path")?,
            data: r.buffer("CreateRequest.data")?,
            acl: Acl::read_list(r, "CreateRequest.acl")?,
            flags: r.int("CreateRequest.flags")?,
        },
        op::CREATE_TTL => Request::CreateTtl {
            path: r.ustring("CreateTTLRequest.path")?,
            data: r.buffer("CreateTTLRequest.data")?,
            acl: Acl::read_list(r, "CreateTTLRequest.acl")?,
            flags: r.int("CreateTTLRequest.flags")?,
            ttl: r.long("CreateTTLRequest.ttl")?,
        },
        op::DELETE => Request::Delete {
            path: r.ustring("DeleteRequest.path")?,
            version: r.int("DeleteRequest.version")?,
        },
        op::EXISTS => Request::Exists {
            path: r.ustring("ExistsRequest.path")?,
            watch: r.bool("ExistsRequest.watch")?,
        },
        op::GET_DATA => Request::GetData {
            path: r.ustring("GetDataRequest.path")?,
            watch: r.bool("GetDataRequest.watch")?,
        },
        op::SET_DATA => Request::SetData {
            path: r.ustring("SetDataRequest.path")?,
            data: r.buffer("SetDataRequest.data")?,
            version: r.int("SetDataRequest.version")?,
        },
        op::GET_ACL => Request::GetAcl {
            path: r.ustring("GetACLRequest.path")?,
        },
        op::SET_ACL => Request::SetAcl {
            path: r.ustring("SetACLRequest.path")?,
            acl: Acl::read_list(r, "SetACLRequest.acl")?,
            version: r.int("SetACLRequest.version")?,
        },
        op::GET_CHILDREN => Request::GetChildren {
            path: r.ustring("GetChildrenRequest.path")?,
            watch: r.bool("GetChildrenRequest.watch")?,
        },
        op::GET_CHILDREN2 => Request::GetChildren2 {
            path: r.ustring("GetChildren2Request.path")?,
            watch: r.bool("GetChildren2Request.watch")?,
        },
        op::SYNC => Request::Sync {
            path: r.ustring("SyncRequest.path")?,
        },
        op::CHECK => Request::Check {
            path: r.ustring("CheckVersionRequest.path")?,
            version: r.int("CheckVersionRequest.version")?,
        },
        op::MULTI => Request::Multi(read_multi(r, |o| {
            matches!(
                o,
                op::CREATE
                    | op::CREATE2
                    | op::CREATE_CONTAINER
                    | op::CREATE_TTL
                    | op::DELETE
                    | op::SET_DATA
                    | op::CHECK
            )
        })?),
        op::MULTI_READ => Request::MultiRead(
            read_multi(r, |o| matches!(o, op::GET_CHILDREN | op::GET_DATA))?
                .into_iter()
                .map(|m| m.request)
                .collect(),
        ),
        op::GET_ALL_CHILDREN_NUMBER => Request::GetAllChildrenNumber {
            path: r.ustring("GetAllChildrenNumberRequest.path")?,
        },
        op::GET_EPHEMERALS => Request::GetEphemerals {
            prefix: r.ustring("GetEphemeralsRequest.prefixPath")?,
        },
        op::SET_WATCHES => Request::SetWatches {
            relative_zxid: r.long("SetWatches.relativeZxid")?,
            data: r.strings("SetWatches.dataWatches")?,
            exist: r.strings("SetWatches.existWatches")?,
            child: r.strings("SetWatches.childWatches")?,
        },
        op::SET_WATCHES2 => Request::SetWatches2 {
            relative_zxid: r.long("SetWatches2.relativeZxid")?,
            data: r.strings("SetWatches2.dataWatches")?,
            exist: r.strings("SetWatches2.existWatches")?,
            child: r.strings("SetWatches2.childWatches")?,
            persistent: r.strings("SetWatches2.persistentWatches")?,
            persistent_recursive: r.strings("SetWatches2.persistentRecursiveWatches")?,
        },
        op::ADD_WATCH => Request::AddWatch {
            path: r.ustring("AddWatchRequest.path")?,
            mode: r.int("AddWatchRequest.mode")?,
        },
        op::REMOVE_WATCHES => Request::RemoveWatches {
            path: r.ustring("RemoveWatchesRequest.path")?,
            kind: r.int("RemoveWatchesRequest.type")?,
        },
        op::CHECK_WATCHES => Request::CheckWatches {
            path: r.ustring("CheckWatchesRequest.path")?,
            kind: r.int("CheckWatchesRequest.type")?,
        },
        op::AUTH => Request::SetAuth {
            kind: r.int("AuthPacket.type")?,
            scheme: r.ustring("AuthPacket.scheme")?,
            auth: r.bytes("AuthPacket.auth")?,
        },
        op::WHO_AM_I => Request::WhoAmI,
        op::PING => Request::Ping,
        op::CLOSE_SESSION => Request::CloseSession,
        op::RECONFIG => Request::Reconfig {
            joining: r.opt_ustring("ReconfigRequest.joiningServers")?,
            leaving: r.opt_ustring("ReconfigRequest.leavingServers")?,
            new_members: r.opt_ustring("ReconfigRequest.newMembers")?,
            cur_config_id: r.long("ReconfigRequest.curConfigId")?,
        },
        other => return Err(r.error("request", DecodeErrorKind::UnknownOp(other))),
    })
}

/// `MultiOperationRecord.deserialize`: a `MultiHeader` and body per op
/// until a header with `done` set. `allowed` says which opcodes may appear.
fn read_multi(
    r: &mut Reader<'_>,
    allowed: impl Fn(i32) -> bool,
) -> Result<Vec<MultiOp>, DecodeError> {
    let mut ops = Vec::new();
    loop {
        let at = r.offset();
        let h = MultiHeader::read(r)?;
        if h.done {
            return Ok(ops);
        }
        if !allowed(h.op) {
            return Err(DecodeError::new(
                at,
                "MultiHeader.type",
                DecodeErrorKind::UnknownOp(h.op),
            ));
        }
        // Every op reads at least a header and a path length (13 bytes)
        // before it is kept, so the list cannot outgrow the frame; and no
        // allowed op is itself a multi, so there is no recursion.
        let request = read_body(r, h.op)?;
        ops.push(MultiOp { op: h.op, request });
    }
}

/// Encodes a request frame body (the frame's length prefix is added by
/// [`crate::frame::write_frame`]). The body written is the one `request`
/// holds; `header.op` is written as given.
pub fn encode_request(header: &RequestHeader, request: &Request) -> Vec<u8> {
    let mut w = Writer::new();
    header.write(&mut w);
    write_body(&mut w, request);
    w.into_bytes()
}

fn write_body(w: &mut Writer, request: &Request) {
    match request {
        Request::Create {
            path,
            data,
            acl,
            flags,
        } => {
            w.ustring(path).buffer(data.as_deref());
            Acl::write_list(w, acl);
            w.int(*flags);
        }
        Request::CreateTtl {
            path,
            data,
            acl,
            flags,
            ttl,
        } => {
            w.ustring(path).buffer(data.as_deref());
            Acl::write_list(w, acl);
            w.int(*flags).long(*ttl);
        }
        Request::Delete { path, version } | Request::Check { path, version } => {
            w.ustring(path).int(*version);
        }
        Request::Exists { path, watch }
        | Request::GetData { path, watch }
        | Request::GetChildren { path, watch }
        | Request::GetChildren2 { path, watch } => {
            w.ustring(path).bool(*watch);
        }
        Request::SetData {
            path,
            data,
            version,
        } => {
            w.ustring(path).buffer(data.as_deref()).int(*version);
        }
        Request::GetAcl { path }
        | Request::Sync { path }
        | Request::GetAllChildrenNumber { path }
        | Request::GetEphemerals { prefix: path } => {
            w.ustring(path);
        }
        Request::SetAcl { path, acl, version } => {
            w.ustring(path);
            Acl::write_list(w, acl);
            w.int(*version);
        }
        Request::Multi(ops) => {
            for m in ops {
                MultiHeader {
                    op: m.op,
                    done: false,
                    err: -1,
                }
                .write(w);
                write_body(w, &m.request);
            }
            MultiHeader::END.write(w);
        }
        Request::MultiRead(reads) => {
            for read in reads {
                MultiHeader {
                    op: read_op(read),
                    done: false,
                    err: -1,
                }
                .write(w);
                write_body(w, read);
            }
            MultiHeader::END.write(w);
        }
        Request::SetWatches {
            relative_zxid,
            data,
            exist,
            child,
        } => {
            w.long(*relative_zxid)
                .strings(data)
                .strings(exist)
                .strings(child);
        }
        Request::SetWatches2 {
            relative_zxid,
            data,
            exist,
            child,
            persistent,
            persistent_recursive,
        } => {
            w.long(*relative_zxid)
                .strings(data)
                .strings(exist)
                .strings(child)
                .strings(persistent)
                .strings(persistent_recursive);
        }
        Request::AddWatch { path, mode: n }
        | Request::RemoveWatches { path, kind: n }
        | Request::CheckWatches { path, kind: n } => {
            w.ustring(path).int(*n);
        }
        Request::SetAuth { kind, scheme, auth } => {
            w.int(*kind).ustring(scheme).bytes(auth);
        }
        Request::Reconfig {
            joining,
            leaving,
            new_members,
            cur_config_id,
        } => {
            w.opt_ustring(joining.as_deref())
                .opt_ustring(leaving.as_deref())
                .opt_ustring(new_members.as_deref())
                .long(*cur_config_id);
        }
        Request::WhoAmI | Request::Ping | Request::CloseSession | Request::Unknown { .. } => {}
    }
}

/// The `MultiHeader` type of a multiRead op: getData for
/// [`Request::GetData`], else getChildren.
fn read_op(read: &Request) -> i32 {
    match read {
        Request::GetData { .. } => op::GET_DATA,
        _ => op::GET_CHILDREN,
    }
}

/// Decodes the client's handshake frame body.
pub fn decode_connect_request(body: &[u8]) -> Result<ConnectRequest, DecodeError> {
    let mut r = Reader::new(body);
    let req = ConnectRequest::read(&mut r)?;
    r.finish("ConnectRequest")?;
    Ok(req)
}

/// Encodes the client's handshake frame body.
pub fn encode_connect_request(req: &ConnectRequest) -> Vec<u8> {
    let mut w = Writer::new();
    req.write(&mut w);
    w.into_bytes()
}
