//! Clients driven from outside the world ([`Client::DRIVEN_FROM_OUTSIDE`],
//! e.g. [`crate::Remote`]): real ZooKeeper clients on sockets, whose
//! driver (`zkserve`'s engine) turns their frames into calls here.
//!
//! They attach at run time with a session created on the server they
//! connected to, re-attach by session id on any server (the driver checks
//! the password), negotiate their own session timeout, send `SetWatches`
//! themselves, and keep their session alive by their own traffic. Nothing
//! here is used by a world of simulated clients, whose states and
//! fingerprints it leaves as they were.

use crate::client::{Client, OpId};
use crate::proto::{Op, SessionId, Tick, Zxid};
use crate::tree::Txn;

use super::connection::{Inbound, Pending};
use super::slot::{ClientSlot, Link};
use super::step::hold_touch;
use super::{ClientId, Happening, ServerId, World, MAX_SESSION_TIMEOUT, MIN_SESSION_TIMEOUT};

/// What a client's `SetWatches` (or `SetWatches2`) names.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetWatches<'a> {
    pub relative_zxid: Zxid,
    pub data: &'a [String],
    pub exist: &'a [String],
    pub child: &'a [String],
    pub persistent: &'a [String],
    pub recursive: &'a [String],
}

/// Why a session cannot be attached to, or re-attached on, a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// No such server.
    NoServer,
    /// The server is partitioned from the leader: it can neither create
    /// nor revalidate a session (both go to the leader).
    Unavailable,
    /// The leader no longer knows the session (expired or closed, S23).
    Expired,
    /// S26: the server has applied less than the client has already seen.
    Behind { server_zxid: Zxid, seen_zxid: Zxid },
    /// The client is still connected (its old connection must be
    /// dropped first, [`World::disconnect`]), crashed, or cut off.
    NotSeeking,
}

impl<C: Client> World<C> {
    /// A new client connects to `server` at run time: a fresh session is
    /// created for it (committed by the leader like every session) with
    /// its own negotiated timeout (`timeout` ticks clamped to [2, 20],
    /// S20), and its logic is started. Returns its id and session.
    pub fn attach(
        &mut self,
        logic: C,
        server: ServerId,
        timeout: Tick,
        log: &mut Vec<Happening<C::Event>>,
    ) -> Result<(ClientId, SessionId), Refusal> {
        self.check_server(server)?;
        let session = self.sessions.allocate();
        self.sessions.open(session, self.now);
        self.sessions
            .set_timeout(session, negotiate_timeout(timeout));
        let id = self.clients.len();
        self.clients.push(ClientSlot::new(logic, session, server));
        let zxid = self.commit(Txn::CreateSession { session }, None, session, log);
        if self.servers[server].applied < zxid {
            // S39: a follower answers the connect, and reads anything more
            // from the connection, once it has applied the session's
            // creation; the client's `SyncConnected` is delivered then.
            self.clients[id]
                .conn
                .pending
                .push_back(Pending::Connect { zxid });
        }
        self.call(id, log, |logic, cx| logic.start(cx));
        Ok((id, session))
    }

    /// The client's session was created on a server that has not applied
    /// its creation yet (S39): no connect response may go out, and no
    /// request is taken, until a `SyncConnected` is delivered to it.
    pub fn is_connecting(&self, client: ClientId) -> bool {
        self.clients[client].conn.connecting()
    }

    /// A disconnected client re-attaches its session on `server` (any
    /// server), having seen `seen_zxid` (its `lastZxidSeen`), asking for
    /// `timeout` ticks (renegotiated, as each connect request does). On
    /// success it is connected and its `SyncConnected` is queued; a client
    /// driven from outside then sends its own `SetWatches`
    /// ([`World::set_watches`]). On [`Refusal::Expired`] the handle is dead.
    pub fn reattach(
        &mut self,
        client: ClientId,
        server: ServerId,
        seen_zxid: Zxid,
        timeout: Tick,
        log: &mut Vec<Happening<C::Event>>,
    ) -> Result<(), Refusal> {
        self.check_server(server)?;
        let slot = &self.clients[client];
        if !slot.seeks_server() {
            return Err(Refusal::NotSeeking);
        }
        let session = slot.session;
        if !self.sessions.is_live(session) {
            let slot = &mut self.clients[client];
            slot.link = Link::Dead;
            slot.conn.expire_queued();
            return Err(Refusal::Expired);
        }
        let server_zxid = self.servers[server].applied;
        if server_zxid < seen_zxid {
            return Err(Refusal::Behind {
                server_zxid,
                seen_zxid,
            });
        }
        // What the client says it has seen is what S26 compares from now on.
        self.clients[client].last_zxid = seen_zxid;
        self.sessions
            .set_timeout(session, negotiate_timeout(timeout));
        self.connect(client, server, log);
        Ok(())
    }

    fn check_server(&self, server: ServerId) -> Result<(), Refusal> {
        match self.servers.get(server) {
            None => Err(Refusal::NoServer),
            Some(s) if s.is_partitioned() => Err(Refusal::Unavailable),
            Some(_) => Ok(()),
        }
    }

    /// The client's connection closed (its socket, not a fault: no budget
    /// is spent). As for any lost connection (S21): its server forgets the
    /// session's watches, outstanding ops fail with `ConnectionLoss`, the
    /// client learns `Disconnected`; the session lives until it expires.
    pub fn disconnect(&mut self, client: ClientId) {
        self.lose_connection(client);
    }

    /// Queue `op` on the client's connection, as its library would; the
    /// returned id comes back in its reply's `Happening::Delivered`.
    pub fn submit(&mut self, client: ClientId, op: Op, log: &mut Vec<Happening<C::Event>>) -> OpId {
        let mut id = 0;
        self.call(client, log, |_, cx| id = cx.send(op));
        id
    }

    /// The client asks to close its session (`closeSession`), behind the
    /// ops it submitted before. The handle is dead once it is done
    /// ([`World::is_handle_dead`]).
    pub fn close(&mut self, client: ClientId, log: &mut Vec<Happening<C::Event>>) {
        self.call(client, log, |_, cx| cx.close_session());
    }

    /// The client's server heard from it (a ping): the leader hears it
    /// too, unless the server is partitioned (it keeps the touch, as for
    /// any request). Requests touch the session by themselves.
    pub fn heard_from(&mut self, client: ClientId) {
        let slot = &self.clients[client];
        let (Some(server), true) = (slot.server(), slot.cut.is_none()) else {
            return;
        };
        let session = slot.session;
        if self.servers[server].is_partitioned() {
            hold_touch(&mut self.servers, server, session);
        } else {
            self.sessions.touch(session, self.now);
        }
    }

    /// `SetWatches` / `SetWatches2` from a connected client (S25, S37):
    /// its server re-registers the one-shot watches that still wait and
    /// queues, for the client, the events it missed since `relative_zxid`;
    /// persistent and persistent-recursive watches are re-armed without
    /// events. Returns how many events fired.
    pub fn set_watches(&mut self, client: ClientId, watches: &SetWatches<'_>) -> usize {
        let Link::Connected(server) = self.clients[client].link else {
            return 0;
        };
        let session = self.clients[client].session;
        let srv = &mut self.servers[server];
        let tree = std::sync::Arc::clone(&srv.tree);
        let events = srv.watches.set_watches(
            session,
            watches.relative_zxid,
            watches.data,
            watches.exist,
            watches.child,
            &tree,
        );
        if !watches.persistent.is_empty() || !watches.recursive.is_empty() {
            srv.watches
                .set_persistent_watches(session, watches.persistent, watches.recursive);
        }
        let fired = events.len();
        self.clients[client]
            .conn
            .inbound
            .extend(events.into_iter().map(Inbound::Watch));
        fired
    }

    /// The session's negotiated timeout, in ticks: its own if it was
    /// attached at run time, the world's otherwise.
    pub fn session_timeout_of(&self, session: SessionId) -> Tick {
        self.sessions
            .own_timeout(session)
            .unwrap_or_else(|| self.session_timeout())
    }

    /// How many watches `session` holds at `server` (data and exist
    /// watches, and child watches): what a per-session limit counts.
    pub fn watches_held(&self, server: ServerId, session: SessionId) -> usize {
        let watches = &self.servers[server].watches;
        watches
            .data_watches()
            .filter(|&(_, s)| s == session)
            .count()
            + watches
                .child_watches()
                .filter(|&(_, s)| s == session)
                .count()
    }
}

/// A requested timeout clamped to the server's range (S20).
fn negotiate_timeout(ticks: Tick) -> Tick {
    ticks.clamp(MIN_SESSION_TIMEOUT, MAX_SESSION_TIMEOUT)
}
