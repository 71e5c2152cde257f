//! What a session saw, made comparable across the simulator and a real server.
//!
//! Kept as is: error codes, created paths (sequence suffixes included),
//! data, `version`, `cversion`, `aversion`, `dataLength`, `numChildren`,
//! watch events in order, session events in order.
//! Normalized:
//! * zxids (`czxid`, `mzxid`, `pzxid`) relative to the script's base: the
//!   `czxid` of the script's root node, created just before the first step.
//!   `0` stays `0`; anything older than the base (the real server's earlier
//!   history, the sessions' own `createSession`s) is just "before". So gaps
//!   (a failed write takes a zxid, S3) and equalities (a multi's ops share
//!   one) are compared exactly.
//! * `ephemeralOwner`: the index of the script session that owns the node.
//! * children: kept in the server's order. No order is promised to
//!   clients, but the simulator claims the real server's (Java `HashSet`
//!   order, S30) and a recipe that takes `children[0]` unsorted depends on
//!   it, so it is compared exactly.
//! * `ctime`/`mtime`: dropped (wall clock on the real server).

use std::fmt;

use zksim::{Reply, Response, SessionEvent, SessionId, Stat, WatchedEvent, ZkError, Zxid};

/// One thing a session saw, as the runners record it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seen {
    /// The reply to the op of script step `step`.
    Reply {
        step: usize,
        reply: Reply,
    },
    Watch(WatchedEvent),
    Session(SessionEvent),
}

/// One normalized observation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    Reply { step: usize, outcome: Outcome },
    Watch(WatchedEvent),
    Session(SessionEvent),
}

/// A normalized reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Err(ZkError),
    /// `stat` is `None` inside a multi: the server's multi answers a
    /// create with its path only (`CreateResult` without Stat).
    Created {
        path: String,
        stat: Option<StatView>,
    },
    Deleted,
    Exists(Option<StatView>),
    Data {
        data: Vec<u8>,
        stat: StatView,
    },
    SetData(StatView),
    /// Child names in the server's order (S30).
    Children {
        names: Vec<String>,
        stat: StatView,
    },
    Synced,
    /// A `check` inside a multi passed.
    Checked,
    Multi(Vec<Outcome>),
    /// A `getChildren` inside a `multiRead`: names only, no Stat on the wire (S34).
    ChildNames(Vec<String>),
    /// `getEphemerals`, in the server's order (S32).
    Ephemerals(Vec<String>),
    /// `getAllChildrenNumber` (S33).
    AllChildrenNumber(i32),
    /// `addWatch` (and the other answers without a body).
    Done,
}

/// A zxid relative to the script's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ZxidView {
    Zero,
    /// Older than the script (nonzero, below the base).
    Before,
    /// `zxid - base`.
    At(i64),
}

/// Who owns a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Persistent,
    Session(usize),
    /// A session that is none of the script's.
    Stranger,
}

/// The Stat fields that are deterministic on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatView {
    pub czxid: ZxidView,
    pub mzxid: ZxidView,
    pub pzxid: ZxidView,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub owner: Owner,
    pub data_length: i32,
    pub num_children: i32,
}

/// How raw values map: the base zxid and each script session's session ids.
pub struct Frame<'a> {
    pub base: Zxid,
    pub sessions: &'a [Vec<SessionId>],
}

impl Frame<'_> {
    fn zxid(&self, z: Zxid) -> ZxidView {
        if z == 0 {
            ZxidView::Zero
        } else if z < self.base {
            ZxidView::Before
        } else {
            ZxidView::At(z - self.base)
        }
    }
    fn owner(&self, id: SessionId) -> Owner {
        if id == 0 {
            return Owner::Persistent;
        }
        self.sessions
            .iter()
            .position(|ids| ids.contains(&id))
            .map_or(Owner::Stranger, Owner::Session)
    }
    fn stat(&self, s: &Stat) -> StatView {
        StatView {
            czxid: self.zxid(s.czxid),
            mzxid: self.zxid(s.mzxid),
            pzxid: self.zxid(s.pzxid),
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            owner: self.owner(s.ephemeral_owner),
            data_length: s.data_length,
            num_children: s.num_children,
        }
    }
    fn reply(&self, reply: &Reply) -> Outcome {
        match reply {
            Err(e) => Outcome::Err(*e),
            Ok(r) => self.response(r),
        }
    }
    fn response(&self, r: &Response) -> Outcome {
        match r {
            Response::Created { path, stat } => Outcome::Created {
                path: path.clone(),
                stat: Some(self.stat(stat)),
            },
            Response::Deleted => Outcome::Deleted,
            Response::Exists(stat) => Outcome::Exists(stat.as_ref().map(|s| self.stat(s))),
            Response::Data { data, stat } => Outcome::Data {
                data: data.clone(),
                stat: self.stat(stat),
            },
            Response::SetData(stat) => Outcome::SetData(self.stat(stat)),
            Response::Children { names, stat } => Outcome::Children {
                names: names.clone(),
                stat: self.stat(stat),
            },
            Response::Synced => Outcome::Synced,
            Response::Checked => Outcome::Checked,
            Response::Multi(results) => Outcome::Multi(
                results
                    .iter()
                    .map(|r| match self.reply(r) {
                        Outcome::Created { path, .. } => Outcome::Created { path, stat: None },
                        Outcome::Children { names, .. } => Outcome::ChildNames(names),
                        other => other,
                    })
                    .collect(),
            ),
            Response::Ephemerals(paths) => Outcome::Ephemerals(paths.clone()),
            Response::AllChildrenNumber(n) => Outcome::AllChildrenNumber(*n),
            Response::Done => Outcome::Done,
        }
    }
}

/// Normalize every session's raw observations.
pub fn normalize(seen: &[Vec<Seen>], frame: &Frame<'_>) -> Vec<Vec<Obs>> {
    seen.iter()
        .map(|session| {
            let mut list: Vec<Obs> = session
                .iter()
                .map(|s| match s {
                    Seen::Reply { step, reply } => Obs::Reply {
                        step: *step,
                        outcome: frame.reply(reply),
                    },
                    Seen::Watch(w) => Obs::Watch(w.clone()),
                    Seen::Session(e) => Obs::Session(*e),
                })
                .collect();
            collapse_disconnect_before_expiry(&mut list);
            sort_replays(&mut list);
            list
        })
        .collect()
}

/// Drop a `Disconnected` that comes right before `Expired`, on both sides.
///
/// The real server only tells a client it expired when it reconnects, so a
/// Java client always sees `Disconnected` first (and so does the simulator).
/// But `zookeeper-client`'s state watcher keeps only the latest state: when
/// the two follow each other quickly the driver may never see the
/// `Disconnected`. That is the client library's reporting, not the server's
/// behaviour, so both sides drop it; the expiry itself is still compared
/// through `Expired` and the `SessionExpired` replies that follow.
fn collapse_disconnect_before_expiry(list: &mut Vec<Obs>) {
    let mut i = 0;
    while i + 1 < list.len() {
        if list[i] == Obs::Session(SessionEvent::Disconnected)
            && list[i + 1] == Obs::Session(SessionEvent::Expired)
        {
            list.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Sort each run of watch events right after a `SyncConnected`: the events
/// `SetWatches` replays on reconnect (S25). The server answers the watch
/// lists in the order the client sent them, and that order is the client
/// library's map iteration (Java: `HashMap`; `zookeeper-client`: its own),
/// promised by nobody; so the run is compared as a set.
fn sort_replays(list: &mut [Obs]) {
    let mut i = 0;
    while i < list.len() {
        if list[i] == Obs::Session(SessionEvent::SyncConnected) {
            let start = i + 1;
            let mut end = start;
            while end < list.len() && matches!(list[end], Obs::Watch(_)) {
                end += 1;
            }
            list[start..end].sort_by(|a, b| match (a, b) {
                (Obs::Watch(a), Obs::Watch(b)) => a.cmp(b),
                _ => std::cmp::Ordering::Equal,
            });
            i = end;
        } else {
            i += 1;
        }
    }
}

impl fmt::Display for ZxidView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZxidView::Zero => write!(f, "0"),
            ZxidView::Before => write!(f, "<"),
            ZxidView::At(z) => write!(f, "+{z}"),
        }
    }
}

impl fmt::Display for StatView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let owner = match self.owner {
            Owner::Persistent => "-".to_string(),
            Owner::Session(k) => format!("s{k}"),
            Owner::Stranger => "?".to_string(),
        };
        write!(
            f,
            "[cz{} mz{} pz{} v{} cv{} av{} own{} len{} n{}]",
            self.czxid,
            self.mzxid,
            self.pzxid,
            self.version,
            self.cversion,
            self.aversion,
            owner,
            self.data_length,
            self.num_children
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Err(e) => write!(f, "{e:?}"),
            Outcome::Created {
                path,
                stat: Some(stat),
            } => write!(f, "Created {path} {stat}"),
            Outcome::Created { path, stat: None } => write!(f, "Created {path}"),
            Outcome::Deleted => write!(f, "Deleted"),
            Outcome::Exists(None) => write!(f, "Exists(none)"),
            Outcome::Exists(Some(s)) => write!(f, "Exists {s}"),
            Outcome::Data { data, stat } => {
                write!(f, "Data {:?} {stat}", String::from_utf8_lossy(data))
            }
            Outcome::SetData(s) => write!(f, "SetData {s}"),
            Outcome::Children { names, stat } => write!(f, "Children {names:?} {stat}"),
            Outcome::Synced => write!(f, "Synced"),
            Outcome::Checked => write!(f, "Checked"),
            Outcome::ChildNames(names) => write!(f, "ChildNames {names:?}"),
            Outcome::Ephemerals(paths) => write!(f, "Ephemerals {paths:?}"),
            Outcome::AllChildrenNumber(n) => write!(f, "AllChildrenNumber {n}"),
            Outcome::Done => write!(f, "Done"),
            Outcome::Multi(rs) => {
                write!(f, "Multi[")?;
                for (i, r) in rs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{r}")?;
                }
                write!(f, "]")
            }
        }
    }
}

impl fmt::Display for Obs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Obs::Reply { step, outcome } => write!(f, "#{step} {outcome}"),
            Obs::Watch(w) => write!(f, "watch {:?} {}", w.kind, w.path),
            Obs::Session(e) => write!(f, "session {e:?}"),
        }
    }
}
