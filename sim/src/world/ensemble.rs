//! The servers at work: the leader orders transactions, every server
//! applies them in zxid order, fires its watches and answers its clients'
//! requests strictly in order.

use crate::client::Client;
use crate::proto::{AddWatchMode, Op, Reply, Response, SessionEvent, SessionId, ZkError, Zxid};
use crate::tree::Txn;
use crate::TICK_MS;

use super::client_watches::{WatchKind, WatchReg};
use super::connection::{Inbound, Pending};
use super::log::Origin;
use super::slot::{Link, Slots};
use super::{ClientId, Happening, ServerId, World};

impl<C: Client> World<C> {
    /// The leader orders `txn` at the next zxid and applies it at once.
    pub(super) fn commit(
        &mut self,
        txn: Txn,
        origin: Option<Origin>,
        session: SessionId,
        log: &mut Vec<Happening<C::Event>>,
    ) -> Zxid {
        let time_ms = i64::try_from(self.now)
            .unwrap_or(i64::MAX)
            .saturating_mul(TICK_MS);
        if let Some(kept) = &mut self.commit_tap.0 {
            kept.push(super::CommittedTxn {
                zxid: self.log.next_zxid(),
                txn: txn.clone(),
                client: origin.map(|o| o.client),
            });
        }
        let zxid = self.log.append(txn, time_ms, origin);
        log.push(Happening::Committed { zxid, session });
        self.apply_next(0, log);
        zxid
    }

    /// `server` applies the next committed transaction: its tree changes,
    /// its watches fire (events queued to the watching clients before any
    /// reply that follows, S18), the requester's reply is produced if the
    /// requester is connected here (S19), and the server's clients' waiting
    /// requests are answered as far as they now can be.
    pub(super) fn apply_next(&mut self, server: ServerId, log: &mut Vec<Happening<C::Event>>) {
        let zxid = self.servers[server].applied + 1;
        let entry = self
            .log
            .get(zxid)
            .expect("apply_next: nothing left to apply");
        let origin = entry.origin;
        let closed_session = match entry.txn {
            Txn::CloseSession { session, .. } => Some(session),
            _ => None,
        };
        let srv = &mut self.servers[server];
        let (reply, triggers) = srv.apply(zxid, entry.time_ms, &entry.txn);
        log.push(Happening::Applied { server, zxid });

        let mut notified = Vec::new();
        for trigger in &triggers {
            notified.extend(srv.watches.trigger(trigger));
        }
        // A herd notifies up to every client: find each session's client
        // through one index of the server's clients rather than a scan of
        // every client per notification (O(N²) per release otherwise).
        let index = (notified.len() > 2).then(|| sessions_on(&self.clients, server));
        for (session, event) in notified {
            let client = match &index {
                Some(index) => index.get(&session).copied(),
                None => client_with_session_on(&self.clients, session, server),
            };
            if let Some(client) = client {
                // An event sent to a client that is cut off is lost.
                if self.clients[client].cut.is_none() {
                    self.clients[client]
                        .conn
                        .inbound
                        .push_back(Inbound::Watch(event));
                }
            }
        }

        // The requester's slot is written only if it is on this server.
        if let Some(origin) = origin.filter(|o| self.clients[o.client].is_on(server)) {
            let slot = &mut self.clients[origin.client];
            for pending in slot.conn.pending.iter_mut() {
                match pending {
                    Pending::Write {
                        zxid: z,
                        reply: slot_reply,
                        ..
                    } if *z == zxid => {
                        *slot_reply = Some(reply);
                        break;
                    }
                    Pending::Close { zxid: z, applied } if *z == zxid => {
                        *applied = true;
                        break;
                    }
                    _ => {}
                }
            }
        }

        if let Some(session) = closed_session {
            self.servers[server].watches.remove_session(session);
            // The server closes the connection of a session that ended
            // other than by the client's own close (FinalRequestProcessor).
            if let Some(client) = client_with_session_on(&self.clients, session, server) {
                let own_close = self.clients[client]
                    .conn
                    .pending
                    .iter()
                    .any(|p| matches!(p, Pending::Close { zxid: z, .. } if *z == zxid));
                if !own_close {
                    self.lose_connection(client);
                }
            }
        }

        for client in 0..self.clients.len() {
            // Only clients with an answer ready are written to: a write
            // copies a shared slot and forgets its hash, and a herd puts
            // every client on this server.
            if self.clients[client].is_on(server) && self.can_answer(client) {
                self.answer(client);
            }
        }
        let applied_by_all = self.servers.iter().map(|s| s.applied).min().unwrap_or(0);
        self.log.trim(applied_by_all);
    }

    /// Whether [`World::answer`] would do anything for `client` now: it is
    /// connected, not cut off, and the oldest request its server took is
    /// ready to be answered.
    pub(super) fn can_answer(&self, client: ClientId) -> bool {
        let slot = &self.clients[client];
        let Link::Connected(server) = slot.link else {
            return false;
        };
        if slot.cut.is_some() {
            return false;
        }
        match slot.conn.pending.front() {
            None => false,
            Some(Pending::Write { reply, .. }) => reply.is_some(),
            Some(Pending::Sync { upto, .. }) => self.servers[server].applied >= *upto,
            Some(Pending::Read { .. }) => true,
            Some(Pending::Close { applied, .. }) => *applied,
            Some(Pending::Connect { zxid }) => self.servers[server].applied >= *zxid,
        }
    }

    /// Answer the client's taken requests, in order, as far as its server can
    /// (S27, S28, S29): a write once its server applied it, a sync once the
    /// server caught up with the leader as of the sync, a read at once (from
    /// the server's tree, registering its watch there).
    pub(super) fn answer(&mut self, client: ClientId) {
        let slot = &mut self.clients[client];
        let Link::Connected(server) = slot.link else {
            return;
        };
        if slot.cut.is_some() {
            // Answers to a client that is cut off never arrive; the requests
            // stay outstanding and fail with `ConnectionLoss` when the
            // client gives up on the connection.
            return;
        }
        let srv = &mut self.servers[server];
        while let Some(front) = slot.conn.pending.front() {
            let ready = match front {
                Pending::Write { reply, .. } => reply.is_some(),
                Pending::Sync { upto, .. } => srv.applied >= *upto,
                Pending::Read { .. } => true,
                Pending::Close { applied, .. } => *applied,
                Pending::Connect { zxid } => srv.applied >= *zxid,
            };
            if !ready {
                break;
            }
            let Some(done) = slot.conn.pending.pop_front() else {
                break;
            };
            let message = match done {
                Pending::Write { op, reply, zxid } => Inbound::Reply {
                    op,
                    reply: reply.unwrap_or(Err(ZkError::RuntimeInconsistency)),
                    zxid: Some(zxid),
                    watch: None,
                },
                Pending::Sync { op, .. } => Inbound::Reply {
                    op,
                    reply: Ok(Response::Synced),
                    zxid: Some(srv.applied),
                    watch: None,
                },
                Pending::Read { op, request } => {
                    let (reply, watch) = match watch_request(srv, slot.session, &request) {
                        Some(answered) => answered,
                        None => {
                            let reply = srv.tree().read_as(slot.session, &request);
                            let watch = register_read_watch(&request, &reply);
                            if let Some(reg) = &watch {
                                match reg.kind {
                                    WatchKind::Data | WatchKind::Exist => {
                                        srv.watches.add_data_watch(slot.session, &reg.path)
                                    }
                                    WatchKind::Child => {
                                        srv.watches.add_child_watch(slot.session, &reg.path)
                                    }
                                    _ => {}
                                }
                            }
                            (reply, watch)
                        }
                    };
                    Inbound::Reply {
                        op,
                        reply,
                        zxid: Some(srv.applied),
                        watch,
                    }
                }
                // The server applied the session's creation: the
                // connect response goes out, the connection is read again.
                Pending::Connect { .. } => Inbound::Session(SessionEvent::SyncConnected),
                Pending::Close { .. } => {
                    // The close is done: the server answers it and closes
                    // the connection; the handle is dead from now on.
                    slot.link = Link::Dead;
                    slot.closing = false;
                    slot.watches.clear();
                    srv.watches.remove_session(slot.session);
                    // Anything still queued behind the close can never be sent.
                    slot.conn.expire_queued();
                    return;
                }
            };
            slot.conn.inbound.push_back(message);
        }
    }

    /// The client's connection is gone (fault, server close, read timeout):
    /// its server forgets the session's watches, every outstanding op fails
    /// with `ConnectionLoss` and the client learns `Disconnected` (S21).
    pub(super) fn lose_connection(&mut self, client: ClientId) {
        let slot = &mut self.clients[client];
        let Link::Connected(server) = slot.link else {
            return;
        };
        self.servers[server].watches.remove_session(slot.session);
        let failed = slot.conn.fail_all();
        if failed.close_lost || slot.closing {
            // `close()` gives up on a lost connection and the handle is
            // closed locally; the session lives on until it expires.
            slot.closing = false;
            slot.link = Link::Dead;
            slot.watches.clear();
        } else if failed.connect_lost && !C::DRIVEN_FROM_OUTSIDE {
            // The connect response never came (S39): the client library
            // still has session id 0 and asks for a new session on its next
            // connection (`ClientCnxn` learns the id in `onConnected`); the
            // one created for it lives, unheard, until it expires. The
            // application is told `Disconnected` (`cleanAndNotifyState`).
            slot.conn
                .inbound
                .push_back(Inbound::Session(SessionEvent::Disconnected));
            slot.session = self.sessions.allocate();
            slot.link = Link::Connecting { fresh: true };
        } else {
            // (A client driven from outside whose connect response never
            // came asks for its new session itself, as a new client: this
            // slot keeps the session created for it, which expires unheard.)
            slot.conn
                .inbound
                .push_back(Inbound::Session(SessionEvent::Disconnected));
            slot.link = Link::Connecting { fresh: false };
        }
    }

    /// A pass of the leader's container reaper (`ContainerManager.checkContainers`,
    /// S35): each empty container that has had a child is deleted by a
    /// `deleteContainer` request of its own (session 0), prepared against
    /// the newest tree and ordered like any write — a zxid each, the usual
    /// watch events.
    pub(super) fn reap_containers(&mut self, log: &mut Vec<Happening<C::Event>>) {
        for path in self.servers[0].tree().container_candidates() {
            let txn = self.servers[0].tree().prepare_delete_container(&path);
            self.commit(txn, None, 0, log);
        }
    }

    /// The leader ends `session` (expiry or explicit close): one
    /// `closeSession` transaction deletes all its ephemerals at once (S22, S24).
    pub(super) fn end_session(
        &mut self,
        session: SessionId,
        expired: bool,
        origin: Option<Origin>,
        log: &mut Vec<Happening<C::Event>>,
    ) -> Zxid {
        let txn = self.servers[0].tree().prepare_close_session(session);
        self.sessions.end(session);
        // A cut lasts until the leader has ended the session: the client
        // can reach a server again (and learn `Expired` there).
        for client in 0..self.clients.len() {
            // Written only when it changes: writing copies a shared slot.
            if self.clients[client]
                .cut
                .is_some_and(|cut| cut.session == session)
            {
                self.clients[client].cut = None;
            }
        }
        let zxid = self.commit(txn, origin, session, log);
        log.push(Happening::SessionEnded { session, expired });
        zxid
    }
}

/// The watch requests a server answers from its watch tables, not its
/// tree (`FinalRequestProcessor`; none is a transaction): `addWatch` (S37)
/// registers in both tables, `removeWatches` removes the session's watches
/// of the type, `checkWatches` only looks (S38). `None` for any other op.
/// The reply carries what the client library does with it once handled.
fn watch_request(
    srv: &mut super::server::Server,
    session: SessionId,
    request: &Op,
) -> Option<(Reply, Option<WatchReg>)> {
    let done = |kind: WatchKind, path: &str| {
        let reg = WatchReg {
            kind,
            path: path.to_string(),
        };
        (Ok(Response::Done), Some(reg))
    };
    let answered = match request {
        Op::AddWatch { path, mode } => {
            if let Err(e) = crate::path::validate_path(path) {
                return Some((Err(e), None));
            }
            srv.watches.add_persistent_watch(session, path, *mode);
            let kind = match mode {
                AddWatchMode::Persistent => WatchKind::Persistent,
                AddWatchMode::PersistentRecursive => WatchKind::PersistentRecursive,
            };
            done(kind, path)
        }
        Op::RemoveWatches { path, kind } | Op::CheckWatches { path, kind } => {
            if let Err(e) = crate::path::validate_path(path) {
                return Some((Err(e), None));
            }
            let found = if matches!(request, Op::RemoveWatches { .. }) {
                srv.watches.remove_watch(session, path, *kind)
            } else {
                srv.watches.contains_watcher(session, path, *kind)
            };
            if found {
                done(WatchKind::Remove(*kind), path)
            } else {
                (Err(ZkError::NoWatcher), None)
            }
        }
        _ => return None,
    };
    Some(answered)
}

/// The watch a read sets, at the server and (once the reply is handled) at
/// the client: `exists` always (S14: a data watch if the node exists, an
/// exist watch if not), `getData`/`getChildren` only on success (S15).
fn register_read_watch(request: &Op, reply: &Reply) -> Option<WatchReg> {
    let (kind, path) = match (request, reply) {
        (Op::Exists { path, watch: true }, Ok(Response::Exists(Some(_)))) => {
            (WatchKind::Data, path)
        }
        (Op::Exists { path, watch: true }, Ok(Response::Exists(None))) => (WatchKind::Exist, path),
        (Op::GetData { path, watch: true }, Ok(_)) => (WatchKind::Data, path),
        (Op::GetChildren { path, watch: true }, Ok(_)) => (WatchKind::Child, path),
        _ => return None,
    };
    Some(WatchReg {
        kind,
        path: path.clone(),
    })
}

/// The client connected to `server` whose current session is `session`.
/// Each session connected to `server`, with its client (the first such
/// client, as [`client_with_session_on`] finds it).
fn sessions_on<C: Client>(
    clients: &Slots<C>,
    server: ServerId,
) -> std::collections::BTreeMap<SessionId, ClientId> {
    let mut index = std::collections::BTreeMap::new();
    for (client, slot) in clients.iter().enumerate() {
        if slot.is_on(server) {
            index.entry(slot.session).or_insert(client);
        }
    }
    index
}

fn client_with_session_on<C: Client>(
    clients: &Slots<C>,
    session: SessionId,
    server: ServerId,
) -> Option<ClientId> {
    clients
        .iter()
        .position(|slot| slot.session == session && slot.is_on(server))
}
