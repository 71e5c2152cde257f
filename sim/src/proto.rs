//! ZooKeeper's request/response vocabulary: what a client may ask and what
//! the ensemble may answer. Names follow the Java client so that a reader can
//! go from here to `org.apache.zookeeper.ZooKeeper` without a dictionary.

/// A ZooKeeper transaction id. Signed, as in the wire protocol.
pub type Zxid = i64;
/// A session id as the server assigns it.
pub type SessionId = i64;
/// Simulated time, in ticks. One tick is [`crate::TICK_MS`] simulated milliseconds.
pub type Tick = u64;

/// How a node is created (`org.apache.zookeeper.CreateMode`).
///
/// Container and TTL nodes are not modelled yet; the enum is
/// `non_exhaustive` so that adding them is not a breaking change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CreateMode {
    Persistent,
    Ephemeral,
    PersistentSequential,
    EphemeralSequential,
}

impl CreateMode {
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential | CreateMode::EphemeralSequential
        )
    }
}

/// One request. `version == -1` means "any version", as in ZooKeeper.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
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
        data: Vec<u8>,
        version: i32,
    },
    GetChildren {
        path: String,
        watch: bool,
    },
    Sync {
        path: String,
    },
    /// `check(path, version)`: inside a multi, fail the whole multi unless
    /// `path` exists with data version `version` (-1: any). The 3.8 client
    /// APIs offer it only inside a multi; sent alone, the simulator answers
    /// `Unimplemented` rather than guess at a reply no client can ask for.
    Check {
        path: String,
        version: i32,
    },
    /// All-or-nothing; only Create, Delete, SetData and Check inside.
    Multi(Vec<Op>),
}

impl Op {
    /// Whether the op changes the tree and so must be ordered by the leader.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Multi(_)
        )
    }
    /// The path the op is about (the first op's path for a multi).
    pub fn path(&self) -> &str {
        match self {
            Op::Create { path, .. }
            | Op::Delete { path, .. }
            | Op::Exists { path, .. }
            | Op::GetData { path, .. }
            | Op::SetData { path, .. }
            | Op::GetChildren { path, .. }
            | Op::Sync { path }
            | Op::Check { path, .. } => path,
            Op::Multi(ops) => ops.first().map_or("/", Op::path),
        }
    }
}

/// A node's metadata (`org.apache.zookeeper.data.Stat`), every field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Stat {
    pub czxid: Zxid,
    pub mzxid: Zxid,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: SessionId,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: Zxid,
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Response {
    /// The actual path created (with its sequence suffix) and its Stat, as `create2` returns.
    Created {
        path: String,
        stat: Stat,
    },
    Deleted,
    /// `exists`: `None` when the node does not exist (not an error).
    Exists(Option<Stat>),
    Data {
        data: Vec<u8>,
        stat: Stat,
    },
    SetData(Stat),
    /// Child names (not paths), in no promised order, and the parent's Stat.
    Children {
        names: Vec<String>,
        stat: Stat,
    },
    Synced,
    /// A `check` inside a multi passed (`OpResult.CheckResult`).
    Checked,
    /// Per-op results of a multi, like the async API's `opResults`. A failed
    /// multi also answers with this variant: every entry is then an `Err`
    /// (see [`ZkError::RolledBack`] and [`ZkError::RuntimeInconsistency`]).
    Multi(Vec<Result<Response, ZkError>>),
}

/// What the client sees for one request.
pub type Reply = Result<Response, ZkError>;

/// ZooKeeper's error codes (`KeeperException.Code`) that the simulator can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ZkError {
    /// Code 0 inside a failed multi's result: this op was rolled back.
    RolledBack,
    RuntimeInconsistency,
    DataInconsistency,
    ConnectionLoss,
    MarshallingError,
    Unimplemented,
    OperationTimeout,
    BadArguments,
    NoNode,
    NoAuth,
    BadVersion,
    NoChildrenForEphemerals,
    NodeExists,
    NotEmpty,
    SessionExpired,
    InvalidCallback,
    InvalidAcl,
    AuthFailed,
    SessionMoved,
    NotReadOnly,
}

impl ZkError {
    /// Every error the simulator can produce.
    pub const ALL: [ZkError; 20] = [
        ZkError::RolledBack,
        ZkError::RuntimeInconsistency,
        ZkError::DataInconsistency,
        ZkError::ConnectionLoss,
        ZkError::MarshallingError,
        ZkError::Unimplemented,
        ZkError::OperationTimeout,
        ZkError::BadArguments,
        ZkError::NoNode,
        ZkError::NoAuth,
        ZkError::BadVersion,
        ZkError::NoChildrenForEphemerals,
        ZkError::NodeExists,
        ZkError::NotEmpty,
        ZkError::SessionExpired,
        ZkError::InvalidCallback,
        ZkError::InvalidAcl,
        ZkError::AuthFailed,
        ZkError::SessionMoved,
        ZkError::NotReadOnly,
    ];

    /// The error a server code names (0, inside a failed multi, is
    /// [`ZkError::RolledBack`]); `None` for a code the simulator has no
    /// name for. The inverse of [`ZkError::code`].
    pub fn from_code(code: i32) -> Option<ZkError> {
        ZkError::ALL.into_iter().find(|e| e.code() == code)
    }

    /// The numeric code the Java server uses, for comparing with a real ensemble.
    pub fn code(self) -> i32 {
        match self {
            ZkError::RolledBack => 0,
            ZkError::RuntimeInconsistency => -2,
            ZkError::DataInconsistency => -3,
            ZkError::ConnectionLoss => -4,
            ZkError::MarshallingError => -5,
            ZkError::Unimplemented => -6,
            ZkError::OperationTimeout => -7,
            ZkError::BadArguments => -8,
            ZkError::NoNode => -101,
            ZkError::NoAuth => -102,
            ZkError::BadVersion => -103,
            ZkError::NoChildrenForEphemerals => -108,
            ZkError::NodeExists => -110,
            ZkError::NotEmpty => -111,
            ZkError::SessionExpired => -112,
            ZkError::InvalidCallback => -113,
            ZkError::InvalidAcl => -114,
            ZkError::AuthFailed => -115,
            ZkError::SessionMoved => -118,
            ZkError::NotReadOnly => -119,
        }
    }
}

impl std::fmt::Display for ZkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for ZkError {}

/// The kind of a node watch notification (`Watcher.Event.EventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    NodeCreated,
    NodeDeleted,
    NodeDataChanged,
    NodeChildrenChanged,
}

/// A node watch firing (event type other than `None`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchedEvent {
    pub kind: EventType,
    pub path: String,
}

/// A connection-state notification (event type `None`, `Watcher.Event.KeeperState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SessionEvent {
    SyncConnected,
    Disconnected,
    Expired,
}

#[cfg(test)]
mod tests {
    use super::ZkError;

    /// Every error's code names it back, and no two errors share a code.
    #[test]
    fn from_code_is_the_inverse_of_code() {
        for e in ZkError::ALL {
            assert_eq!(ZkError::from_code(e.code()), Some(e), "{e}");
        }
        assert_eq!(ZkError::from_code(-999), None);
    }
}
