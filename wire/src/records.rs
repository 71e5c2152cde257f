//! The jute records shared by requests and replies
//! (`zookeeper-jute/src/main/resources/zookeeper.jute`).

use crate::error::DecodeError;
use crate::jute::{Reader, Writer};

/// The client's first frame (no `RequestHeader`). `read_only` is written
/// after the jute record by every client since 3.4; an old client leaves
/// it out, which the server accepts, so it is optional here too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectRequest {
    pub protocol_version: i32,
    pub last_zxid_seen: i64,
    pub timeout_ms: i32,
    /// 0 for a new session, else the session to re-attach.
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: Option<bool>,
}

/// The server's first frame (no `ReplyHeader`). `timeout_ms` 0 means the
/// session is expired (or the connection refused); `read_only` trails the
/// jute record as in [`ConnectRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectResponse {
    pub protocol_version: i32,
    pub timeout_ms: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: Option<bool>,
}

/// Every request after the handshake starts with this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    pub xid: i32,
    /// An [`crate::opcode`].
    pub op: i32,
}

/// Every reply and notification after the handshake starts with this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyHeader {
    pub xid: i32,
    pub zxid: i64,
    /// 0, or a `KeeperException.Code`.
    pub err: i32,
}

/// The header before each op of a multi request and each result of its
/// reply; a header with `done` set ends the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiHeader {
    pub op: i32,
    pub done: bool,
    pub err: i32,
}

/// A node's metadata (`org.apache.zookeeper.data.Stat`), 68 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub czxid: i64,
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

/// One ACL entry: permissions for an `Id{scheme, id}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acl {
    pub perms: i32,
    pub scheme: String,
    pub id: String,
}

/// A watch notification's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatcherEvent {
    /// `Watcher.Event.EventType` (1 created, 2 deleted, 3 data changed,
    /// 4 children changed, ...).
    pub kind: i32,
    /// `Watcher.Event.KeeperState` (3 SyncConnected).
    pub state: i32,
    pub path: String,
}

/// One entry of a `whoAmI` reply (ZooKeeper 3.9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    pub auth_scheme: String,
    pub user: String,
}

/// The encoded size of a [`Stat`].
pub const STAT_LEN: usize = 68;
/// The smallest encoding of an [`Acl`] (perms and two empty strings).
pub const MIN_ACL_LEN: usize = 12;

impl ConnectRequest {
    pub fn read(r: &mut Reader<'_>) -> Result<ConnectRequest, DecodeError> {
        Ok(ConnectRequest {
            protocol_version: r.int("ConnectRequest.protocolVersion")?,
            last_zxid_seen: r.long("ConnectRequest.lastZxidSeen")?,
            timeout_ms: r.int("ConnectRequest.timeOut")?,
            session_id: r.long("ConnectRequest.sessionId")?,
            passwd: r.bytes("ConnectRequest.passwd")?,
            read_only: optional_bool(r, "ConnectRequest.readOnly")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.protocol_version)
            .long(self.last_zxid_seen)
            .int(self.timeout_ms)
            .long(self.session_id)
            .bytes(&self.passwd);
        if let Some(ro) = self.read_only {
            w.bool(ro);
        }
    }
}

impl ConnectResponse {
    pub fn read(r: &mut Reader<'_>) -> Result<ConnectResponse, DecodeError> {
        Ok(ConnectResponse {
            protocol_version: r.int("ConnectResponse.protocolVersion")?,
            timeout_ms: r.int("ConnectResponse.timeOut")?,
            session_id: r.long("ConnectResponse.sessionId")?,
            passwd: r.bytes("ConnectResponse.passwd")?,
            read_only: optional_bool(r, "ConnectResponse.readOnly")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.protocol_version)
            .int(self.timeout_ms)
            .long(self.session_id)
            .bytes(&self.passwd);
        if let Some(ro) = self.read_only {
            w.bool(ro);
        }
    }
}

/// A trailing boolean that old peers leave out.
fn optional_bool(r: &mut Reader<'_>, field: &'static str) -> Result<Option<bool>, DecodeError> {
    if r.remaining() == 0 {
        Ok(None)
    } else {
        r.bool(field).map(Some)
    }
}

impl RequestHeader {
    pub fn read(r: &mut Reader<'_>) -> Result<RequestHeader, DecodeError> {
        Ok(RequestHeader {
            xid: r.int("RequestHeader.xid")?,
            op: r.int("RequestHeader.type")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.xid).int(self.op);
    }

    /// The header of a request frame body, without decoding the rest: what
    /// a server needs to answer a request whose body it cannot decode (the
    /// real server answers MARSHALLINGERROR, −5, to such a body).
    pub fn peek(body: &[u8]) -> Result<RequestHeader, DecodeError> {
        RequestHeader::read(&mut Reader::new(body))
    }
}

impl ReplyHeader {
    pub fn read(r: &mut Reader<'_>) -> Result<ReplyHeader, DecodeError> {
        Ok(ReplyHeader {
            xid: r.int("ReplyHeader.xid")?,
            zxid: r.long("ReplyHeader.zxid")?,
            err: r.int("ReplyHeader.err")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.xid).long(self.zxid).int(self.err);
    }

    /// The header of a reply frame body, without decoding the rest: how a
    /// client finds which request (or notification, ping...) a frame answers.
    pub fn peek(body: &[u8]) -> Result<ReplyHeader, DecodeError> {
        ReplyHeader::read(&mut Reader::new(body))
    }
}

impl MultiHeader {
    pub fn read(r: &mut Reader<'_>) -> Result<MultiHeader, DecodeError> {
        Ok(MultiHeader {
            op: r.int("MultiHeader.type")?,
            done: r.bool("MultiHeader.done")?,
            err: r.int("MultiHeader.err")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.op).bool(self.done).int(self.err);
    }

    /// The header that ends a multi's ops or results.
    pub const END: MultiHeader = MultiHeader {
        op: -1,
        done: true,
        err: -1,
    };
}

impl Stat {
    pub fn read(r: &mut Reader<'_>) -> Result<Stat, DecodeError> {
        Ok(Stat {
            czxid: r.long("Stat.czxid")?,
            mzxid: r.long("Stat.mzxid")?,
            ctime: r.long("Stat.ctime")?,
            mtime: r.long("Stat.mtime")?,
            version: r.int("Stat.version")?,
            cversion: r.int("Stat.cversion")?,
            aversion: r.int("Stat.aversion")?,
            ephemeral_owner: r.long("Stat.ephemeralOwner")?,
            data_length: r.int("Stat.dataLength")?,
            num_children: r.int("Stat.numChildren")?,
            pzxid: r.long("Stat.pzxid")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.long(self.czxid)
            .long(self.mzxid)
            .long(self.ctime)
            .long(self.mtime)
            .int(self.version)
            .int(self.cversion)
            .int(self.aversion)
            .long(self.ephemeral_owner)
            .int(self.data_length)
            .int(self.num_children)
            .long(self.pzxid);
    }
}

impl Acl {
    pub fn read(r: &mut Reader<'_>) -> Result<Acl, DecodeError> {
        Ok(Acl {
            perms: r.int("ACL.perms")?,
            scheme: r.ustring("ACL.id.scheme")?,
            id: r.ustring("ACL.id.id")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.perms).ustring(&self.scheme).ustring(&self.id);
    }

    /// `ZooDefs.Ids.OPEN_ACL_UNSAFE`'s one entry: everyone, all permissions.
    pub fn open_unsafe() -> Acl {
        Acl {
            perms: 31,
            scheme: "world".into(),
            id: "anyone".into(),
        }
    }

    pub fn read_list(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<Acl>, DecodeError> {
        r.vector(field, MIN_ACL_LEN, Acl::read)
    }

    pub fn write_list(w: &mut Writer, acl: &[Acl]) {
        w.vector(acl, |w, a| a.write(w));
    }
}

impl WatcherEvent {
    pub fn read(r: &mut Reader<'_>) -> Result<WatcherEvent, DecodeError> {
        Ok(WatcherEvent {
            kind: r.int("WatcherEvent.type")?,
            state: r.int("WatcherEvent.state")?,
            path: r.ustring("WatcherEvent.path")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.int(self.kind).int(self.state).ustring(&self.path);
    }
}

impl ClientInfo {
    pub fn read(r: &mut Reader<'_>) -> Result<ClientInfo, DecodeError> {
        Ok(ClientInfo {
            auth_scheme: r.ustring("ClientInfo.authScheme")?,
            user: r.ustring("ClientInfo.user")?,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.ustring(&self.auth_scheme).ustring(&self.user);
    }
}
