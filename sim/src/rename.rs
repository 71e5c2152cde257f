//! Renaming client slots: what a permutation of interchangeable clients
//! does to every name a client leaks into the world (symmetry reduction).
//!
//! A client slot leaks its identity in three ways: its index (in events,
//! monitors, the commit log's origins), the session id it was given at
//! start (allocated in client order: client `i` gets
//! `SESSION_ID_BASE + i`) and the guid `c<client>s<session>a<n>` recipes put
//! into node names (and so into paths, replies, watches and the recipe's
//! own memory). A [`Renaming`] maps all three at once, the way the same
//! schedule with the clients' roles swapped would have named them:
//! client `i` becomes `to[i]`, its first session `SESSION_ID_BASE + i`
//! becomes `SESSION_ID_BASE + to[i]`, and every guid is rewritten to match.
//! Sessions opened later (after an expiry) come from a global counter in
//! event order, so the permuted schedule gets the same ids: they stay.
//!
//! Renaming is done by value ([`World::renamed`](crate::World::renamed)),
//! and it is partial: a client logic that does not know how to rename
//! itself ([`Client::renamed`](crate::Client::renamed) is `None` by
//! default) makes the whole world un-renamable, so a checker falls back to
//! no reduction instead of an unsound one.

use crate::ids::{ClientId, SESSION_ID_BASE};
use crate::proto::{Op, Reply, Response, SessionId, Stat, WatchedEvent};
use crate::tree::Txn;

/// The index [`Renaming::placeholder`] sends a client to.
const PLACEHOLDER: ClientId = 1 << 20;

/// A permutation of client slots and the session ids and guids that go
/// with it. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renaming {
    /// Client `i` becomes client `to[i]`.
    to: Vec<ClientId>,
}

impl Renaming {
    /// The renaming that sends client `i` to `to[i]`. `to` must be a
    /// permutation of `0..to.len()`.
    pub fn new(to: Vec<ClientId>) -> Self {
        debug_assert!({
            let mut seen = to.clone();
            seen.sort_unstable();
            seen.into_iter().eq(0..to.len())
        });
        Renaming { to }
    }

    /// The renaming that sends client `id` to a placeholder index no
    /// client has (and its first session and guids with it), leaving the
    /// other `n - 1` clients be. Not a permutation: it only serves to
    /// summarise one slot without its own identity.
    pub fn placeholder(n: usize, id: ClientId) -> Self {
        Renaming {
            to: (0..n)
                .map(|i| if i == id { PLACEHOLDER } else { i })
                .collect(),
        }
    }

    /// A stable id of this renaming, for caches of renamed parts.
    pub fn id(&self) -> u64 {
        crate::fingerprint::stable_hash(&self.to)
    }

    /// Whether nothing moves.
    pub fn is_identity(&self) -> bool {
        self.to.iter().enumerate().all(|(i, &j)| i == j)
    }

    /// The new index of client `client` (unchanged if out of range).
    pub fn client(&self, client: ClientId) -> ClientId {
        self.to.get(client).copied().unwrap_or(client)
    }

    /// `event` as the renamed world offers it: its client renamed
    /// (servers do not move).
    pub fn event(&self, event: &crate::world::event::Event) -> crate::world::event::Event {
        use crate::world::event::{Event, Fault};
        let c = |client: ClientId| self.client(client);
        match event.clone() {
            Event::Request { client } => Event::Request { client: c(client) },
            Event::Receive { client } => Event::Receive { client: c(client) },
            Event::Timer { client } => Event::Timer { client: c(client) },
            Event::Connect { client, server } => Event::Connect {
                client: c(client),
                server,
            },
            Event::Fault(f) => Event::Fault(match f {
                Fault::DropConnection { client } => Fault::DropConnection { client: c(client) },
                Fault::Silence { client } => Fault::Silence { client: c(client) },
                Fault::KillSession { client } => Fault::KillSession { client: c(client) },
                Fault::Pause { client } => Fault::Pause { client: c(client) },
                Fault::Crash { client } => Fault::Crash { client: c(client) },
                other => other,
            }),
            other => other,
        }
    }

    /// The new id of `session`: a client's first session follows its
    /// client; every other session keeps its id.
    pub fn session(&self, session: SessionId) -> SessionId {
        match usize::try_from(session.wrapping_sub(SESSION_ID_BASE)) {
            Ok(i) if session >= SESSION_ID_BASE && i < self.to.len() => {
                SESSION_ID_BASE + self.to[i] as SessionId
            }
            _ => session,
        }
    }

    /// `text` with every guid tag `c<client>s<session>a` rewritten.
    ///
    /// Only the exact shape recipes use is touched: `c`, decimal digits, `s`,
    /// an optional `-` and decimal digits, `a`, preceded by a non-alphanumeric
    /// character (or the start). Anything else is copied as it is.
    pub fn text(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() + 2);
        let mut copied = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'c' && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
                if let Some((client, session, end)) = guid_tag(bytes, i) {
                    out.push_str(&text[copied..i]);
                    out.push('c');
                    out.push_str(&self.client(client).to_string());
                    out.push('s');
                    out.push_str(&self.session(session).to_string());
                    out.push('a');
                    copied = end;
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
        out.push_str(&text[copied..]);
        out
    }

    /// Bytes renamed as text when they are UTF-8 (a recipe may store a
    /// guid in a node's data), else copied.
    pub fn bytes(&self, data: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(data) {
            Ok(text) if text.contains('c') => self.text(text).into_bytes(),
            _ => data.to_vec(),
        }
    }
}

/// The guid tag starting at `at` (which holds `c`): client, session and the
/// index just past its `a`.
fn guid_tag(bytes: &[u8], at: usize) -> Option<(ClientId, SessionId, usize)> {
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let client_from = at + 1;
    let client_len = digits(client_from);
    let s_at = client_from + client_len;
    if client_len == 0 || bytes.get(s_at) != Some(&b's') {
        return None;
    }
    let mut session_from = s_at + 1;
    let negative = bytes.get(session_from) == Some(&b'-');
    if negative {
        session_from += 1;
    }
    let session_len = digits(session_from);
    let a_at = session_from + session_len;
    if session_len == 0 || bytes.get(a_at) != Some(&b'a') {
        return None;
    }
    let number = |from: usize, len: usize| std::str::from_utf8(&bytes[from..from + len]).ok();
    let client: ClientId = number(client_from, client_len)?.parse().ok()?;
    let session: SessionId = number(session_from, session_len)?.parse().ok()?;
    Some((client, if negative { -session } else { session }, a_at + 1))
}

thread_local! {
    /// (a part's stable hash, what it is and the renaming's id) → the
    /// renamed part's stable hash. Most parts of a state are shared with
    /// states seen before (copy-on-write), so their renamed hashes are too.
    static RENAMED: std::cell::RefCell<std::collections::HashMap<(u64, u64), u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Entries the cache of renamed hashes holds before it starts over.
const CACHE_LIMIT: usize = 1 << 20;

/// The stable hash of a part renamed, through a per-thread cache keyed by
/// the part's own stable hash and `renaming` (a [`Renaming::id`] mixed with
/// what kind of part it is). A pure function, so results do not depend on
/// the cache; a 64-bit hash collision is the same risk a fingerprint takes.
pub fn cached_renamed_hash(
    part: u64,
    renaming: u64,
    compute: impl FnOnce() -> Option<u64>,
) -> Option<u64> {
    if let Some(hash) = RENAMED.with(|c| c.borrow().get(&(part, renaming)).copied()) {
        return Some(hash);
    }
    let hash = compute()?;
    RENAMED.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert((part, renaming), hash);
    });
    Some(hash)
}

/// A value that can be renamed. Lists whose order the server derives from
/// names (a `getChildren` answer, a close's ephemerals) come out sorted:
/// see [`World::renamed`](crate::World::renamed) for why that is the one
/// place a renamed state is a canonical form rather than a permuted state.
pub trait Rename {
    fn renamed(&self, r: &Renaming) -> Self;
}

impl Rename for String {
    fn renamed(&self, r: &Renaming) -> Self {
        r.text(self)
    }
}

impl Rename for Stat {
    fn renamed(&self, r: &Renaming) -> Self {
        Stat {
            ephemeral_owner: r.session(self.ephemeral_owner),
            ..*self
        }
    }
}

impl Rename for Op {
    fn renamed(&self, r: &Renaming) -> Self {
        match self {
            Op::Create { path, data, mode } => Op::Create {
                path: r.text(path),
                data: r.bytes(data),
                mode: *mode,
            },
            Op::Delete { path, version } => Op::Delete {
                path: r.text(path),
                version: *version,
            },
            Op::Exists { path, watch } => Op::Exists {
                path: r.text(path),
                watch: *watch,
            },
            Op::GetData { path, watch } => Op::GetData {
                path: r.text(path),
                watch: *watch,
            },
            Op::SetData {
                path,
                data,
                version,
            } => Op::SetData {
                path: r.text(path),
                data: r.bytes(data),
                version: *version,
            },
            Op::GetChildren { path, watch } => Op::GetChildren {
                path: r.text(path),
                watch: *watch,
            },
            Op::Sync { path } => Op::Sync { path: r.text(path) },
            Op::Check { path, version } => Op::Check {
                path: r.text(path),
                version: *version,
            },
            Op::Multi(ops) => Op::Multi(ops.iter().map(|op| op.renamed(r)).collect()),
            Op::MultiRead(ops) => Op::MultiRead(ops.iter().map(|op| op.renamed(r)).collect()),
            Op::GetEphemerals { prefix } => Op::GetEphemerals {
                prefix: r.text(prefix),
            },
            Op::GetAllChildrenNumber { path } => Op::GetAllChildrenNumber { path: r.text(path) },
            Op::AddWatch { path, mode } => Op::AddWatch {
                path: r.text(path),
                mode: *mode,
            },
            Op::RemoveWatches { path, kind } => Op::RemoveWatches {
                path: r.text(path),
                kind: *kind,
            },
            Op::CheckWatches { path, kind } => Op::CheckWatches {
                path: r.text(path),
                kind: *kind,
            },
        }
    }
}

impl Rename for Response {
    fn renamed(&self, r: &Renaming) -> Self {
        match self {
            Response::Created { path, stat } => Response::Created {
                path: r.text(path),
                stat: stat.renamed(r),
            },
            Response::Exists(stat) => Response::Exists(stat.map(|s| s.renamed(r))),
            Response::Data { data, stat } => Response::Data {
                data: r.bytes(data),
                stat: stat.renamed(r),
            },
            Response::SetData(stat) => Response::SetData(stat.renamed(r)),
            Response::Children { names, stat } => {
                let mut names: Vec<String> = names.iter().map(|n| r.text(n)).collect();
                names.sort_unstable();
                Response::Children {
                    names,
                    stat: stat.renamed(r),
                }
            }
            Response::Multi(results) => {
                Response::Multi(results.iter().map(|reply| reply.renamed(r)).collect())
            }
            // Listed in an order that hangs on the names (S32), as children.
            Response::Ephemerals(paths) => {
                let mut paths: Vec<String> = paths.iter().map(|p| r.text(p)).collect();
                paths.sort_unstable();
                Response::Ephemerals(paths)
            }
            Response::Deleted
            | Response::Synced
            | Response::Checked
            | Response::AllChildrenNumber(_)
            | Response::Done => self.clone(),
        }
    }
}

impl Rename for Reply {
    fn renamed(&self, r: &Renaming) -> Self {
        match self {
            Ok(response) => Ok(response.renamed(r)),
            Err(e) => Err(*e),
        }
    }
}

impl Rename for WatchedEvent {
    fn renamed(&self, r: &Renaming) -> Self {
        WatchedEvent {
            kind: self.kind,
            path: r.text(&self.path),
        }
    }
}

impl Rename for Txn {
    fn renamed(&self, r: &Renaming) -> Self {
        match self {
            Txn::Create {
                path,
                data,
                ephemeral_owner,
            } => Txn::Create {
                path: r.text(path),
                data: r.bytes(data),
                ephemeral_owner: r.session(*ephemeral_owner),
            },
            Txn::Delete { path } => Txn::Delete { path: r.text(path) },
            Txn::SetData {
                path,
                data,
                version,
            } => Txn::SetData {
                path: r.text(path),
                data: r.bytes(data),
                version: *version,
            },
            Txn::Check { path } => Txn::Check { path: r.text(path) },
            Txn::Multi(txns) => Txn::Multi(txns.iter().map(|t| t.renamed(r)).collect()),
            Txn::Error(reply) => Txn::Error(reply.renamed(r)),
            Txn::CreateSession { session } => Txn::CreateSession {
                session: r.session(*session),
            },
            Txn::CloseSession {
                session,
                ephemerals,
            } => {
                let mut ephemerals: Vec<String> = ephemerals.iter().map(|p| r.text(p)).collect();
                ephemerals.sort_unstable();
                Txn::CloseSession {
                    session: r.session(*session),
                    ephemerals,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_guid_tags_only() {
        let base = SESSION_ID_BASE;
        let r = Renaming::new(vec![2, 0, 1]);
        let name = format!("/lock/lock-c0s{base}a3-0000000007");
        assert_eq!(
            r.text(&name),
            format!("/lock/lock-c2s{}a3-0000000007", base + 2)
        );
        // A later session keeps its id; the client index still moves.
        let later = base + 9;
        assert_eq!(
            r.text(&format!("write-c1s{later}a1-")),
            format!("write-c0s{later}a1-")
        );
        for plain in [
            "/locks/c0",
            "abc1s2a",
            "/lock/lock-0000000001",
            "c1s",
            "c1sa",
        ] {
            assert_eq!(r.text(plain), plain);
        }
        assert_eq!(r.session(base + 1), base);
        assert_eq!(r.session(7), 7);
        assert!(!r.is_identity() && Renaming::new(vec![0, 1]).is_identity());
    }

    #[test]
    fn children_come_out_sorted() {
        let base = SESSION_ID_BASE;
        let r = Renaming::new(vec![1, 0]);
        let reply: Reply = Ok(Response::Children {
            names: vec![
                format!("lock-c0s{base}a1-0000000001"),
                format!("lock-c1s{}a1-0000000000", base + 1),
            ],
            stat: Stat::default(),
        });
        let Ok(Response::Children { names, .. }) = reply.renamed(&r) else {
            panic!("still a listing")
        };
        assert_eq!(
            names,
            vec![
                format!("lock-c0s{base}a1-0000000000"),
                format!("lock-c1s{}a1-0000000001", base + 1),
            ]
        );
    }
}
