//! Applying one scheduler choice.

use crate::client::Client;
use crate::proto::{Op, SessionEvent, SessionId, ZkError};
use crate::tree::Txn;

use super::connection::{Inbound, Outgoing, Pending};
use super::cow::CowVec;
use super::log::Origin;
use super::server::Server;
use super::slot::{ClientSlot, Life, Link};
use super::{ClientId, Delivery, Event, Happening, ServerId, World};

impl<C: Client> World<C> {
    pub(super) fn apply_event(&mut self, event: &Event, log: &mut Vec<Happening<C::Event>>) {
        match *event {
            Event::Request { client } => self.take_request(client, log),
            Event::Apply { server } => {
                assert!(self.can_apply(server), "step: {event:?} is not enabled");
                self.apply_next(server, log);
            }
            Event::Receive { client } => self.receive(client, log),
            Event::Timer { client } => self.fire_timer(client, log),
            Event::Connect { client, server } => self.connect(client, server, log),
            Event::Tick => self.tick(log),
            Event::Fault(ref fault) => self.inject(fault, log),
        }
    }

    pub(super) fn can_apply(&self, server: ServerId) -> bool {
        server != 0
            && server < self.servers.len()
            && !self.servers[server].is_partitioned()
            && self.servers[server].applied < self.log.last_zxid()
    }

    /// The client's server can take the next request on its connection: the
    /// client is connected and not cut off, and — on a partitioned follower,
    /// which forwards nothing to the leader — the request is a plain read
    /// (a write, a `sync` or a `closeSession` would be forwarded, and the
    /// session's later requests wait behind it, as `CommitProcessor` keeps
    /// a session's requests in order).
    pub(super) fn can_take_request(&self, client: ClientId) -> bool {
        let slot = &self.clients[client];
        let Link::Connected(server) = slot.link else {
            return false;
        };
        // A fresh session's server reads nothing more until it has applied
        // the session's `createSession` (S39).
        if slot.is_crashed() || slot.cut.is_some() || slot.conn.connecting() {
            return false;
        }
        match slot.conn.outbound.front() {
            None => false,
            Some(_) if !self.servers[server].is_partitioned() => true,
            Some(Outgoing::Op { request, .. }) => {
                !request.is_write() && !matches!(request, Op::Sync { .. })
            }
            Some(Outgoing::Close) => false,
        }
    }

    /// Time may pass: the clock is below `max_time`, and no running client
    /// has a `Disconnected` it has not handled yet.
    ///
    /// Why the second condition: a read timeout, a server closing the
    /// connection or a broken socket is noticed by the client library's
    /// send thread and handed to the application's event thread within
    /// milliseconds, while a tick is a `tickTime` (2 s by default). Letting
    /// the clock run past an undelivered `Disconnected` would invent a
    /// window ZooKeeper does not have: the leader expiring the session (at
    /// least a full timeout after the last ping, i.e. after the read
    /// timeout) while the client has not yet been told it is disconnected.
    /// Blocking `Tick` instead of delivering inside it keeps delivery a
    /// step of its own (the client handles it like any message) and makes
    /// the state space smaller, not larger. A paused client is exempt: a
    /// frozen process is told nothing, which is the real long-pause window.
    pub(super) fn tick_enabled(&self) -> bool {
        self.now < self.config.max_time && !self.disconnect_undelivered()
    }

    /// Whether time alone will still change something: a timer is set, a
    /// pause will end, a cut-off client's read timeout will run out, a
    /// partitioned follower will give up on the leader (or drop the
    /// clients still on it), or a live session nobody keeps alive will
    /// expire. When not, a `Tick` only moves the clock and the last-heard
    /// ticks of the sessions pinged at every tick: a state whose only
    /// other choices are faults has reached its end (a stuck waiter there
    /// stays stuck however long the clock runs). Conservative: `true`
    /// whenever in doubt.
    pub fn waits_on_time(&self) -> bool {
        let slot_waits = |slot: &ClientSlot<C>| {
            !slot.is_crashed()
                && (slot.timer.is_some()
                    || matches!(slot.life, Life::Paused { .. })
                    || slot.cut.is_some())
        };
        if self.clients.iter().any(slot_waits) {
            return true;
        }
        let follower_waits = |server: ServerId| {
            self.servers[server].is_partitioned()
                && (!self.server_down(server) || self.clients.iter().any(|s| s.is_on(server)))
        };
        if (0..self.servers.len()).any(follower_waits) {
            return true;
        }
        let kept_alive = |session: SessionId| {
            self.clients.iter().any(|slot| {
                slot.session == session
                    && slot.pings()
                    && slot
                        .server()
                        .is_some_and(|server| !self.servers[server].is_partitioned())
            })
        };
        self.sessions.live().any(|session| !kept_alive(session))
            // The container reaper will delete an emptied container (S35).
            || self.servers[0].tree().has_container_candidate()
    }

    /// A partitioned follower that has given up on the leader: `sync_limit`
    /// ticks after the partition it closed its client connections and,
    /// being in leader election now, accepts no client until healed.
    pub(super) fn server_down(&self, server: ServerId) -> bool {
        self.servers[server]
            .partitioned_since
            .is_some_and(|since| self.now.saturating_sub(since) >= self.config.sync_limit)
    }

    /// The client's server takes the next request on its connection. A
    /// write goes to the leader, which prepares it against its newest tree
    /// and orders it at once (S27); a request of a session the leader no
    /// longer knows fails there with `SessionExpired`, still taking a zxid.
    fn take_request(&mut self, client: ClientId, log: &mut Vec<Happening<C::Event>>) {
        assert!(
            self.can_take_request(client),
            "step: Request {{ client: {client} }} is not enabled"
        );
        // One write access to the slot for the whole request: each copies
        // the slot if shared and costs atomic reference-count operations.
        let slot = &mut self.clients[client];
        let Link::Connected(server) = slot.link else {
            unreachable!("can_take_request checked the link");
        };
        let Some(next) = slot.conn.outbound.pop_front() else {
            unreachable!("can_take_request checked the queue");
        };
        let session = slot.session;
        // A partitioned follower keeps its session touches to itself until
        // it reaches the leader again.
        if self.servers[server].is_partitioned() {
            hold_touch(&mut self.servers, server, session);
        } else {
            self.sessions.touch(session, self.now);
        }
        let live = self.sessions.is_live(session);
        let origin = Some(Origin { client });
        match next {
            Outgoing::Op { op, request } => {
                log.push(Happening::Taken { client, server, op });
                if request.is_write() {
                    let txn = if live {
                        self.servers[0].tree().prepare(session, &request)
                    } else {
                        Txn::Error(Err(ZkError::SessionExpired))
                    };
                    let zxid = self.log.next_zxid();
                    slot.conn.pending.push_back(Pending::Write {
                        op,
                        zxid,
                        reply: None,
                    });
                    self.commit(txn, origin, session, log);
                } else if let Op::Sync { .. } = request {
                    let upto = self.log.last_zxid();
                    slot.conn.pending.push_back(Pending::Sync { op, upto });
                } else {
                    slot.conn.pending.push_back(Pending::Read { op, request });
                }
            }
            Outgoing::Close => {
                let zxid = self.log.next_zxid();
                slot.conn.pending.push_back(Pending::Close {
                    zxid,
                    applied: false,
                });
                if live {
                    self.end_session(session, false, origin, log);
                } else {
                    self.commit(
                        Txn::Error(Err(ZkError::SessionExpired)),
                        origin,
                        session,
                        log,
                    );
                }
            }
        }
        // A write waits for its server to apply it: nothing to answer yet.
        if self.can_answer(client) {
            self.answer(client);
        }
    }

    /// The client handles the next message waiting for it.
    fn receive(&mut self, client: ClientId, log: &mut Vec<Happening<C::Event>>) {
        let slot = &mut self.clients[client];
        assert!(
            slot.is_running(),
            "step: Receive {{ client: {client} }} is not enabled (not running)"
        );
        let Some(message) = slot.conn.inbound.pop_front() else {
            panic!("step: Receive {{ client: {client} }} is not enabled (nothing to receive)");
        };
        match message {
            Inbound::Reply {
                op,
                reply,
                zxid,
                watch,
            } => {
                if let Some(zxid) = zxid {
                    slot.last_zxid = zxid;
                }
                let mut reply = reply;
                // A client library outside the world keeps its own watch
                // memory (and answers its own NoWatcher).
                if let (Some(reg), false) = (watch, C::DRIVEN_FROM_OUTSIDE) {
                    // A removal the server accepted but the library finds
                    // nothing to remove for fails with `NoWatcher` (S38).
                    if !slot.watches.add(reg) {
                        reply = Err(ZkError::NoWatcher);
                    }
                }
                log.push(Happening::Delivered {
                    client,
                    delivery: Delivery::Reply {
                        op,
                        reply: reply.clone(),
                    },
                });
                self.call(client, log, |logic, cx| logic.on_reply(op, reply, cx));
            }
            Inbound::Watch(event) => {
                // The Java client hands an event no watch of its own hears
                // to nobody (`materialize` finds no watcher): e.g. after
                // `checkWatches` removed the library's watch but left the
                // server's (S38). A dead handle's leftover events are still
                // handed over, as before. A library outside the world does
                // this itself: it is handed every event its server sent.
                if !C::DRIVEN_FROM_OUTSIDE {
                    if slot.link != Link::Dead && !slot.watches.hears(&event) {
                        return;
                    }
                    slot.watches.materialize(&event);
                }
                log.push(Happening::Delivered {
                    client,
                    delivery: Delivery::Watch(event.clone()),
                });
                self.call(client, log, |logic, cx| logic.on_watch(event, cx));
            }
            Inbound::Session(event) => {
                log.push(Happening::Delivered {
                    client,
                    delivery: Delivery::Session(event),
                });
                self.call(client, log, |logic, cx| logic.on_session(event, cx));
            }
        }
    }

    pub(super) fn timer_due(&self, client: ClientId) -> bool {
        let slot = &self.clients[client];
        slot.is_running() && slot.timer.is_some_and(|at| at <= self.now)
    }

    fn fire_timer(&mut self, client: ClientId, log: &mut Vec<Happening<C::Event>>) {
        assert!(
            self.timer_due(client),
            "step: Timer {{ client: {client} }} is not enabled"
        );
        self.clients[client].timer = None;
        self.call(client, log, |logic, cx| logic.on_timer(cx));
    }

    pub(super) fn can_connect(&self, client: ClientId, server: ServerId) -> bool {
        let slot = &self.clients[client];
        slot.seeks_server()
            && server < self.servers.len()
            // A partitioned follower cannot create or revalidate a session
            // (both go to the leader); a connection attempt there times out.
            && !self.servers[server].is_partitioned()
            // A client whose connect string names one server tries only it.
            && self.pinned_server(client).is_none_or(|pin| pin == server)
            // S26: a server behind what the client has seen refuses it.
            && self.servers[server].applied >= slot.last_zxid
    }

    /// The client (re)connects to `server`. A fresh session is created and
    /// connected once `server` has applied its `createSession` (S39: at
    /// once on the leader; a follower answers, and reads anything more
    /// from the connection, only when it gets there); a live one continues
    /// (`SyncConnected`, then the events `SetWatches` derives, S25); a
    /// session the leader no longer knows is `Expired` (S23): the handle
    /// dies and requests queued meanwhile fail.
    pub(super) fn connect(
        &mut self,
        client: ClientId,
        server: ServerId,
        log: &mut Vec<Happening<C::Event>>,
    ) {
        assert!(
            self.can_connect(client, server),
            "step: Connect {{ client: {client}, server: {server} }} is not enabled"
        );
        let now = self.now;
        let slot = &mut self.clients[client];
        let session = slot.session;
        let fresh = slot.link == Link::Connecting { fresh: true };
        if fresh {
            slot.link = Link::Connected(server);
            self.sessions.open(session, now);
            let zxid = self.commit(Txn::CreateSession { session }, None, session, log);
            let conn = &mut self.clients[client].conn;
            if self.servers[server].applied >= zxid {
                conn.inbound
                    .push_back(Inbound::Session(SessionEvent::SyncConnected));
            } else {
                conn.pending.push_back(Pending::Connect { zxid });
            }
        } else if self.sessions.is_live(session) {
            self.sessions.touch(session, now);
            slot.link = Link::Connected(server);
            slot.conn
                .inbound
                .push_back(Inbound::Session(SessionEvent::SyncConnected));
            if !slot.watches.is_empty() {
                let srv = &mut self.servers[server];
                let events = srv.set_watches(session, slot.last_zxid, &slot.watches);
                slot.conn
                    .inbound
                    .extend(events.into_iter().map(Inbound::Watch));
                // The SetWatches reply header carries the server's zxid.
                slot.last_zxid = srv.applied;
            }
        } else {
            slot.conn
                .inbound
                .push_back(Inbound::Session(SessionEvent::Expired));
            slot.conn.expire_queued();
            slot.watches.clear();
            slot.closing = false;
            slot.link = Link::Dead;
        }
    }

    /// Time advances one tick. In this order: pauses end (a pause of at
    /// least the read timeout makes the client drop its connection as it
    /// resumes, S21); a client cut off from every server for its read
    /// timeout drops its connection (S21); a follower partitioned for
    /// `sync_limit` ticks closes all its client connections; running
    /// connected clients ping — the leader hears those whose server is not
    /// partitioned (a partitioned follower holds the touches until it is
    /// healed); the leader expires every session whose expiry
    /// bucket has come (S22, [`SessionTracker::overdue`]); and every
    /// [`super::CONTAINER_CHECK_TICKS`] ticks the container reaper runs (S35).
    ///
    /// [`SessionTracker::overdue`]: super::session::SessionTracker::overdue
    fn tick(&mut self, log: &mut Vec<Happening<C::Event>>) {
        assert!(self.tick_enabled(), "step: Tick is not enabled");
        self.now += 1;
        let now = self.now;
        let read_timeout = self.read_timeout();
        for client in 0..self.clients.len() {
            if let Life::Paused { since, until } = self.clients[client].life {
                if until <= now {
                    self.clients[client].life = Life::Running;
                    if now - since >= read_timeout {
                        self.lose_connection(client);
                    }
                }
            }
        }
        for client in 0..self.clients.len() {
            let slot = &self.clients[client];
            let silent_too_long = slot.cut.is_some_and(|cut| now - cut.since >= read_timeout);
            if slot.is_running() && silent_too_long {
                self.lose_connection(client);
            }
        }
        for server in 1..self.servers.len() {
            if self.server_down(server) {
                for client in 0..self.clients.len() {
                    if self.clients[client].is_on(server) {
                        self.lose_connection(client);
                    }
                }
            }
        }
        // A client library outside the world pings on its own clock; its
        // driver reports what the server hears (`World::heard_from`).
        let pinging = if C::DRIVEN_FROM_OUTSIDE {
            0
        } else {
            self.clients.len()
        };
        for client in 0..pinging {
            let slot = &self.clients[client];
            let (Some(server), true) = (slot.server(), slot.pings()) else {
                continue;
            };
            let session = slot.session;
            if self.servers[server].is_partitioned() {
                hold_touch(&mut self.servers, server, session);
            } else {
                self.sessions.touch(session, now);
            }
        }
        let mut overdue = Vec::new();
        self.sessions
            .overdue(now, self.session_timeout(), &mut overdue);
        for session in overdue {
            self.end_session(session, true, None, log);
        }
        if now % super::CONTAINER_CHECK_TICKS == 0 {
            self.reap_containers(log);
        }
    }
}

/// A partitioned follower heard from `session`: it keeps the touch for the
/// leader. Servers are shared copy-on-write, so the set is written only
/// when it changes (a partition lasts many ticks of pings).
pub(super) fn hold_touch(servers: &mut CowVec<Server>, server: ServerId, session: SessionId) {
    if !servers[server].held_touches.contains(&session) {
        servers[server].held_touches.insert(session);
    }
}
