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
/// `Container` is `createContainer` (opcode 19, rule S35): a persistent
/// node the server's reaper deletes once it is empty after having had a
/// child. The TTL modes are `createTTL` (opcode 21), which a 3.8 server
/// with extended types off (the default) refuses with `Unimplemented`
/// (S36); the simulator models only that refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CreateMode {
    Persistent,
    Ephemeral,
    PersistentSequential,
    EphemeralSequential,
    Container,
    /// `PERSISTENT_WITH_TTL`, with the requested TTL in milliseconds.
    PersistentWithTtl {
        ttl_ms: i64,
    },
    /// `PERSISTENT_SEQUENTIAL_WITH_TTL`, with the requested TTL in milliseconds.
    PersistentSequentialWithTtl {
        ttl_ms: i64,
    },
}

/// The `ephemeralOwner` a container node carries on the server
/// (`EphemeralType.CONTAINER_EPHEMERAL_OWNER`, `Long.MIN_VALUE`): what
/// marks it as a container in the tree. A client never sees it: every
/// Stat it reads says 0 (`DataNode.getClientEphemeralOwner`, measured).
pub const CONTAINER_OWNER: SessionId = i64::MIN;

/// The largest TTL a client may ask for (`EphemeralType.TTL.maxValue()`:
/// 40 bits of milliseconds); the client libraries refuse anything else.
pub const TTL_MAX_MS: i64 = 0x00ff_ffff_ffff;

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
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl { .. }
        )
    }
    pub fn is_container(self) -> bool {
        self == CreateMode::Container
    }
    /// The TTL a TTL mode asks for, `None` for the other modes.
    pub fn ttl_ms(self) -> Option<i64> {
        match self {
            CreateMode::PersistentWithTtl { ttl_ms }
            | CreateMode::PersistentSequentialWithTtl { ttl_ms } => Some(ttl_ms),
            _ => None,
        }
    }
}

/// `addWatch`'s mode (`org.apache.zookeeper.AddWatchMode`; S37).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddWatchMode {
    /// Mode 0: data and child events of the path itself, never consumed.
    Persistent,
    /// Mode 1: created, deleted and data-changed events of the path and
    /// every node below it (no child events), never consumed.
    PersistentRecursive,
}

impl AddWatchMode {
    /// The wire value (`ZooDefs.AddWatchModes`).
    pub fn code(self) -> i32 {
        match self {
            AddWatchMode::Persistent => 0,
            AddWatchMode::PersistentRecursive => 1,
        }
    }
}

/// Which watches `removeWatches` / `checkWatches` are about
/// (`Watcher.WatcherType`; S38).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatcherType {
    /// 1: the child-watch table.
    Children,
    /// 2: the data-watch table (`exists` and `getData` watches).
    Data,
    /// 3: both.
    Any,
}

impl WatcherType {
    /// The wire value.
    pub fn code(self) -> i32 {
        match self {
            WatcherType::Children => 1,
            WatcherType::Data => 2,
            WatcherType::Any => 3,
        }
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
    /// `getEphemerals(prefix)` (opcode 103, S32): the paths of the
    /// session's ephemerals that start with `prefix` as a *string* (`/a`
    /// matches `/ab`); `/` lists them all.
    GetEphemerals {
        prefix: String,
    },
    /// `getAllChildrenNumber(path)` (opcode 104, S33): how many nodes lie
    /// below `path`, at any depth.
    GetAllChildrenNumber {
        path: String,
    },
    /// `multiRead` (opcode 22, S34): only `GetData` and `GetChildren` (without
    /// watches) inside; each answered in order from one server's tree, a
    /// failing one with its error in place, the others as usual.
    MultiRead(Vec<Op>),
    /// `addWatch(path, mode)` (opcode 106, S37): a persistent or
    /// persistent-recursive watch, set whether or not `path` exists.
    AddWatch {
        path: String,
        mode: AddWatchMode,
    },
    /// `removeWatches` (opcode 18, S38): remove the session's watches of
    /// `kind` on `path` at its server; `NoWatcher` if there were none.
    RemoveWatches {
        path: String,
        kind: WatcherType,
    },
    /// `checkWatches` (opcode 17, S38): whether the server holds a watch of
    /// `kind` on `path` (3.8.0: any session's); `NoWatcher` if not. Changes
    /// nothing at the server. The Java client sends it for
    /// `removeWatches(path, watcher, type, local)` and removes its watcher
    /// itself when the answer is OK.
    CheckWatches {
        path: String,
        kind: WatcherType,
    },
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
            | Op::Check { path, .. }
            | Op::GetAllChildrenNumber { path }
            | Op::AddWatch { path, .. }
            | Op::RemoveWatches { path, .. }
            | Op::CheckWatches { path, .. } => path,
            Op::GetEphemerals { prefix } => prefix,
            Op::Multi(ops) | Op::MultiRead(ops) => ops.first().map_or("/", Op::path),
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
    /// A `multiRead` answers with it too, each entry on its own (S34); there
    /// a `GetChildren` entry's `stat` is not sent on the wire
    /// (`GetChildrenResult` carries the names only).
    Multi(Vec<Result<Response, ZkError>>),
    /// `getEphemerals`: the matching paths, in the server's order (a Java
    /// `HashSet` clone of the session's ephemeral set, as for S24).
    Ephemerals(Vec<String>),
    /// `getAllChildrenNumber`: the number of descendants.
    AllChildrenNumber(i32),
    /// An answer with no body: `addWatch`, `removeWatches`, `checkWatches`.
    Done,
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
    /// No watch of the asked type (`removeWatches`, `checkWatches`; S38).
    NoWatcher,
}

impl ZkError {
    /// Every error the simulator can produce.
    pub const ALL: [ZkError; 21] = [
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
        ZkError::NoWatcher,
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
            ZkError::NoWatcher => -121,
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
