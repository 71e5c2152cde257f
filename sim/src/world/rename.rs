//! Renaming a whole world (see [`crate::rename`]): client slots move to
//! their new places, and every session id and guid in servers, log,
//! sessions and connections is rewritten.
//!
//! The result is the state the permuted schedule reaches, with one
//! exception: lists the server built in an order derived from names — a
//! `getChildren` answer in flight (Java `HashSet` order of the names) and a
//! committed close's ephemerals (likewise) — come out sorted by name, since
//! the permuted names would hash elsewhere. A checker that merges states
//! through such a canonical form relies on the clients treating a listing
//! as a set, which is part of what [`Client::renamed`] returning `Some`
//! promises.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::client::Client;
use crate::fingerprint::stable_hash;
use crate::fingerprint::HashMemo;
use crate::rename::{cached_renamed_hash, Rename, Renaming};

/// Mixed into a renaming's id for the cache: which kind of part.
const SERVER_PART: u64 = 0x5e5e_0000_0000_0001;
const SLOT_PART: u64 = 0x5105_0000_0000_0002;

use super::client_watches::{ClientWatches, PersistentPaths, WatchReg};
use super::connection::{Connection, Inbound, Outgoing, Pending};
use super::log::{CommitLog, Entry, Origin};
use super::server::Server;
use super::session::SessionTracker;
use super::slot::{ClientSlot, Cut};
use super::World;

impl<C: Client> World<C> {
    /// This world under the renaming `r` (a permutation of
    /// `0..num_clients()`), or `None` if some client cannot be renamed.
    pub fn renamed(&self, r: &Renaming) -> Option<Self> {
        let n = self.clients.len();
        let mut moved: Vec<Option<ClientSlot<C>>> = vec![None; n];
        for (i, slot) in self.clients.iter().enumerate() {
            let to = r.client(i);
            moved[to] = Some(slot.renamed(r)?);
        }
        Some(World {
            config: self.config.clone(),
            now: self.now,
            budget: self.budget,
            servers: self.servers.iter().map(|s| s.renamed(r)).collect(),
            log: self.log.renamed(r),
            sessions: self.sessions.renamed(r),
            clients: moved
                .into_iter()
                .map(|slot| slot.expect("a permutation"))
                .collect(),
            clock_read: self.clock_read,
            commit_tap: self.commit_tap.clone(),
        })
    }

    /// The stable hash of [`World::renamed`]'s result (not the same value
    /// as its [`World::fingerprint`], but a function of the renamed world
    /// alone), without building it: servers and slots shared with states
    /// seen before are looked up in a per-thread cache of renamed hashes.
    pub fn renamed_fingerprint(&self, r: &Renaming) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = crate::fingerprint::StableHasher::new();
        self.config.hash(&mut h);
        self.now.hash(&mut h);
        self.clock_read.hash(&mut h);
        self.budget.hash(&mut h);
        let id = r.id();
        for i in 0..self.servers.len() {
            let server = self.servers.get(i)?;
            let hash = cached_renamed_hash(self.servers.hash_word_of(i), id ^ SERVER_PART, || {
                Some(stable_hash(&server.renamed(r)))
            })?;
            h.write_u64(hash);
        }
        self.log.renamed(r).hash(&mut h);
        self.sessions.renamed(r).hash(&mut h);
        let n = self.clients.len();
        let mut from = vec![0; n];
        for i in 0..n {
            from[r.client(i)] = i;
        }
        for &i in &from {
            let slot = self.clients.get(i)?;
            let hash = cached_renamed_hash(self.clients.hash_word_of(i), id ^ SLOT_PART, || {
                slot.renamed(r).map(|s| stable_hash(&s))
            })?;
            h.write_u64(hash);
        }
        Some(h.finish())
    }

    /// A renaming-invariant summary of client `id`'s slot: its hash with its
    /// own identity (index, first session, guids) renamed to a placeholder
    /// that no client has. Clients of equal keys are candidates to swap;
    /// sorting by it picks a representative permutation.
    pub fn slot_key(&self, id: usize) -> Option<u64> {
        let r = Renaming::placeholder(self.clients.len(), id);
        let slot = self.clients.get(id)?;
        cached_renamed_hash(self.clients.hash_word_of(id), r.id() ^ SLOT_PART, || {
            slot.renamed(&r).map(|s| stable_hash(&s))
        })
    }
}

impl<C: Client> ClientSlot<C> {
    fn renamed(&self, r: &Renaming) -> Option<Self> {
        Some(ClientSlot {
            logic: self.logic.renamed(r)?,
            session: r.session(self.session),
            cut: self.cut.map(|cut| Cut {
                since: cut.since,
                session: r.session(cut.session),
            }),
            watches: ClientWatches {
                data: self.watches.data.iter().map(|p| r.text(p)).collect(),
                exist: self.watches.exist.iter().map(|p| r.text(p)).collect(),
                child: self.watches.child.iter().map(|p| r.text(p)).collect(),
                persistent: PersistentPaths {
                    node: self
                        .watches
                        .persistent
                        .node
                        .iter()
                        .map(|p| r.text(p))
                        .collect(),
                    recursive: (self.watches.persistent.recursive.iter())
                        .map(|p| r.text(p))
                        .collect(),
                },
            },
            conn: self.conn.renamed(r),
            ..self.clone()
        })
    }
}

impl Rename for Connection {
    fn renamed(&self, r: &Renaming) -> Self {
        let outbound: VecDeque<Outgoing> = self
            .outbound
            .iter()
            .map(|o| match o {
                Outgoing::Op { op, request } => Outgoing::Op {
                    op: *op,
                    request: request.renamed(r),
                },
                Outgoing::Close => Outgoing::Close,
            })
            .collect();
        let pending = self
            .pending
            .iter()
            .map(|p| match p {
                Pending::Read { op, request } => Pending::Read {
                    op: *op,
                    request: request.renamed(r),
                },
                Pending::Write { op, zxid, reply } => Pending::Write {
                    op: *op,
                    zxid: *zxid,
                    reply: reply.as_ref().map(|reply| reply.renamed(r)),
                },
                other => other.clone(),
            })
            .collect();
        let inbound = self
            .inbound
            .iter()
            .map(|m| match m {
                Inbound::Reply {
                    op,
                    reply,
                    zxid,
                    watch,
                } => Inbound::Reply {
                    op: *op,
                    reply: reply.renamed(r),
                    zxid: *zxid,
                    watch: watch.as_ref().map(|w| WatchReg {
                        kind: w.kind,
                        path: r.text(&w.path),
                    }),
                },
                Inbound::Watch(event) => Inbound::Watch(event.renamed(r)),
                Inbound::Session(event) => Inbound::Session(*event),
            })
            .collect();
        Connection {
            outbound,
            pending,
            inbound,
        }
    }
}

impl Rename for Server {
    fn renamed(&self, r: &Renaming) -> Self {
        Server {
            tree: Arc::new(self.tree.renamed(r)),
            tree_hash: HashMemo::default(),
            applied: self.applied,
            partitioned_since: self.partitioned_since,
            held_touches: self.held_touches.iter().map(|&s| r.session(s)).collect(),
            watches: self.watches.renamed(r),
        }
    }
}

impl Rename for CommitLog {
    fn renamed(&self, r: &Renaming) -> Self {
        CommitLog {
            entries: self
                .entries
                .iter()
                .map(|e| Entry {
                    zxid: e.zxid,
                    txn: e.txn.renamed(r),
                    time_ms: e.time_ms,
                    origin: e.origin.map(|o| Origin {
                        client: r.client(o.client),
                    }),
                })
                .collect(),
            last_zxid: self.last_zxid,
        }
    }
}

impl Rename for SessionTracker {
    fn renamed(&self, r: &Renaming) -> Self {
        let mut live: Vec<_> = self
            .live
            .iter()
            .map(|&(s, heard)| (r.session(s), heard))
            .collect();
        live.sort_unstable();
        let mut timeouts: Vec<_> = self
            .timeouts
            .0
            .iter()
            .map(|&(s, timeout)| (r.session(s), timeout))
            .collect();
        timeouts.sort_unstable();
        SessionTracker {
            live,
            next_id: self.next_id,
            timeouts: super::session::OwnTimeouts(timeouts),
        }
    }
}
