//! The world: ensemble + network + clients + clock + fault budget, one value.
//!
//! The public API in this file is a contract shared with the checker. How
//! the world works is split by concept:
//! - `server`: a server's tree and watch tables;
//! - `log`: the leader's committed log and its trimming;
//! - `session`: the leader's session tracker (expiry, S22);
//! - `connection`: a client's outbound / taken / inbound queues (S18, S21, S27);
//! - `registry`: the client library's watch memory (S25);
//! - `slot`: everything kept about one client;
//! - `ensemble`: ordering, applying, answering (S19, S27–S29);
//! - `handler`: calling a client's logic and routing what it asks for;
//! - `enabled`, `step`, `fault`: the scheduler's view.
//!
//! Modelling choices a reader should know (each one is ZooKeeper's
//! behaviour unless said otherwise):
//! - Taking a request and the leader ordering it are one step; a write is
//!   applied at the leader at once and at each follower by `Apply`.
//! - A connected, running client pings often enough that its session never
//!   expires; only a paused, crashed or disconnected client's session can.
//! - A partitioned follower stops applying but keeps its clients, their
//!   pings and its (stale) reads; S26 keeps reconnects from going back in time.
//! - On reconnect the client gets `SyncConnected` first and then the events
//!   `SetWatches` derives, as ZooKeeper's client sends `ConnectRequest`
//!   before `SetWatches` on the new connection (measured on 3.8.0, S25).
//!   Within each of the three watch lists paths go in sorted order (the
//!   Java client walks a `HashMap`).
//! - Time is only `Tick`: a tick ends pauses (a pause of at least the read
//!   timeout drops the client's connection as it resumes, S21), lets
//!   running connected clients ping, then expires every session the leader
//!   has not heard from for the negotiated timeout (S20, S22).
//! - Requests already on the connection may be taken while their client is
//!   paused (they left before the pause; taking one is hearing from the
//!   session); a paused client receives nothing, fires no timer and does
//!   not reconnect.
//! - When the leader ends a session other than by that client's own close,
//!   the server holding its connection closes it as it applies the
//!   `closeSession` (`FinalRequestProcessor`): the client sees
//!   `Disconnected`, then `Expired` when it reconnects (S23).
//! - A write of a session the leader no longer knows fails with
//!   `SessionExpired` (an error txn, with its zxid), so no ephemeral can
//!   outlive its owner.
//! - A fresh session (after `reopen_session`) is created by `Connect` and
//!   its `SyncConnected` is queued at once (the real server waits until the
//!   client's server applied `createSession`).
//! - In one handler call, `reopen_session` takes effect before the ops it
//!   sends and `close_session` after them (`Cx` does not record their
//!   interleaving).

mod connection;
mod cow;
mod enabled;
mod ensemble;
mod fault;
mod handler;
mod log;
mod registry;
mod server;
mod session;
mod sharing;
mod slot;
mod step;

use crate::client::Client;
use crate::client::OpId;
use crate::fingerprint::StableHasher;
use crate::proto::{Op, Reply, SessionEvent, SessionId, Tick, WatchedEvent, Zxid};
use crate::tree::{DataTree, Txn};

pub use registry::{ClientWatches, WatchKind, WatchReg};
pub use session::SESSION_ID_BASE;

use self::log::CommitLog;
use cow::CowVec;
use server::Server;
use session::SessionTracker;
pub use sharing::Sharing;
use slot::{ClientSlot, Life, Link, Slots};

/// Index of a client in the world (stable for the run).
pub type ClientId = usize;
/// Index of a server; server 0 is the leader.
pub type ServerId = usize;

/// How the ensemble is shaped and what may go wrong.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Number of servers; server 0 is the leader, the others followers.
    pub servers: usize,
    /// Negotiated session timeout, in ticks.
    pub session_timeout: Tick,
    /// How long a `Pause` fault freezes a client, in ticks.
    pub pause_ticks: Tick,
    /// `Tick` is no longer enabled once the clock reaches this (keeps runs finite).
    pub max_time: Tick,
    /// How many faults of each kind a run may inject.
    pub faults: FaultBudget,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            servers: 3,
            session_timeout: 20,
            pause_ticks: 30,
            max_time: 400,
            faults: FaultBudget::default(),
        }
    }
}

/// Remaining faults of each kind. Part of the world's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaultBudget {
    pub connection_drops: u32,
    pub expiries: u32,
    pub pauses: u32,
    pub crashes: u32,
    pub partitions: u32,
}

/// One choice a scheduler can make. A schedule is a list of these.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// The client's server takes the next request waiting on the connection
    /// (a write goes to the leader, which orders it at once).
    Request { client: ClientId },
    /// A follower applies the next committed transaction (follower lag).
    Apply { server: ServerId },
    /// The client handles the next message waiting for it (reply, watch
    /// event or session event), in connection order.
    Receive { client: ClientId },
    /// The client's timer is due and fires.
    Timer { client: ClientId },
    /// A disconnected client connects (or reconnects) to `server`.
    Connect { client: ClientId, server: ServerId },
    /// Simulated time advances one tick.
    Tick,
    /// A fault from the budget.
    Fault(Fault),
}

/// Faults a scenario may inject.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// The TCP connection breaks: requests not yet taken are lost, every
    /// outstanding op fails with `ConnectionLoss`, the client sees `Disconnected`.
    DropConnection { client: ClientId },
    /// The leader expires the client's session now.
    ExpireSession { client: ClientId },
    /// The client freezes for `Config::pause_ticks` (a GC pause).
    Pause { client: ClientId },
    /// The client process dies; its session lives until it expires.
    Crash { client: ClientId },
    /// A follower stops applying the log (it can still serve stale reads).
    Partition { server: ServerId },
    /// A partitioned follower catches up again.
    Heal { server: ServerId },
}

/// What a client received.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    Reply { op: OpId, reply: Reply },
    Watch(WatchedEvent),
    Session(SessionEvent),
}

/// Something observable that a step did; the history checkers read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Happening<E> {
    /// A client queued a request.
    Sent {
        client: ClientId,
        op: OpId,
        request: Op,
    },
    /// A server took a client's request.
    Taken {
        client: ClientId,
        server: ServerId,
        op: OpId,
    },
    /// The leader ordered a write (or a session close/expiry) at `zxid`.
    Committed { zxid: Zxid, session: SessionId },
    /// A server applied the transaction `zxid`.
    Applied { server: ServerId, zxid: Zxid },
    /// A client handled a message.
    Delivered {
        client: ClientId,
        delivery: Delivery,
    },
    /// A client emitted an application event.
    App { client: ClientId, event: E },
    /// A session ended (expired or closed); its ephemerals are gone.
    SessionEnded { session: SessionId, expired: bool },
}

/// The smallest negotiated session timeout, in ticks (2·tickTime, S20).
pub const MIN_SESSION_TIMEOUT: Tick = 2;
/// The largest negotiated session timeout, in ticks (20·tickTime, S20).
pub const MAX_SESSION_TIMEOUT: Tick = 20;

/// The whole simulated system. See the crate docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World<C: Client> {
    config: Config,
    now: Tick,
    /// Faults still available (starts as `config.faults`).
    budget: FaultBudget,
    /// Server 0 is the leader.
    servers: CowVec<Server>,
    log: CommitLog,
    sessions: SessionTracker,
    clients: Slots<C>,
}

impl<C: Client> World<C> {
    /// A world whose clients are connected round-robin to the servers and
    /// have been started (their first ops are queued).
    ///
    /// What starting them did (sessions committed, first ops sent, events
    /// emitted) is dropped; use [`World::new_with_log`] to see it.
    pub fn new(config: Config, clients: Vec<C>) -> Self {
        let mut log = Vec::new();
        Self::new_with_log(config, clients, &mut log)
    }

    /// Like [`World::new`], appending what starting the world did to `log`:
    /// one `Committed`/`Applied` per session created, then each client's
    /// `start` (its `Sent` and `App` happenings), in client order.
    pub fn new_with_log(
        config: Config,
        clients: Vec<C>,
        log: &mut Vec<Happening<C::Event>>,
    ) -> Self {
        let servers = config.servers.max(1);
        let mut world = World {
            budget: config.faults,
            config,
            now: 0,
            servers: (0..servers).map(|_| Server::new()).collect(),
            log: CommitLog::default(),
            sessions: SessionTracker::default(),
            clients: Slots::with_capacity(clients.len()),
        };
        for (id, logic) in clients.into_iter().enumerate() {
            let session = world.sessions.allocate();
            world.sessions.open(session, 0);
            world
                .clients
                .push(ClientSlot::new(logic, session, id % servers));
            // Every server starts caught up: the sessions exist everywhere.
            world.commit(Txn::CreateSession { session }, None, session, log);
            for server in 1..servers {
                world.apply_next(server, log);
            }
        }
        for id in 0..world.clients.len() {
            world.call(id, log, |logic, cx| logic.start(cx));
        }
        world
    }
    /// Append the enabled events, in a deterministic order, to `out`.
    ///
    /// The order is `Event`'s own (`Ord`): the list comes out sorted.
    pub fn enabled(&self, out: &mut Vec<Event>) {
        self.list_enabled(out);
    }
    /// Apply one enabled event, appending what happened to `log`.
    /// Panics if `event` is not enabled (a scheduler bug, never user input).
    pub fn step(&mut self, event: &Event, log: &mut Vec<Happening<C::Event>>) {
        self.apply_event(event, log);
    }
    /// Simulated time.
    pub fn now(&self) -> Tick {
        self.now
    }
    pub fn config(&self) -> &Config {
        &self.config
    }
    pub fn client(&self, id: ClientId) -> &C {
        &self.clients[id].logic
    }
    pub fn num_clients(&self) -> usize {
        self.clients.len()
    }
    /// The client's current session id.
    pub fn session_of(&self, id: ClientId) -> SessionId {
        self.clients[id].session
    }
    /// The server the client is connected to, if connected.
    pub fn server_of(&self, id: ClientId) -> Option<ServerId> {
        self.clients[id].server()
    }
    /// The leader's (newest) data tree.
    pub fn leader_tree(&self) -> &DataTree {
        self.servers[0].tree()
    }
    /// A server's data tree as it has applied the log so far.
    pub fn server_tree(&self, server: ServerId) -> &DataTree {
        self.servers[server].tree()
    }
    /// Every client is done, nothing is in flight, no timer armed.
    ///
    /// A crashed client counts as done (it will never do anything again);
    /// "in flight" includes committed transactions a reachable (not
    /// partitioned) follower has not applied yet, as applying them may
    /// still fire watches.
    pub fn is_quiescent(&self) -> bool {
        let clients_idle = self.clients.iter().all(|slot| {
            slot.is_crashed()
                || (slot.logic.is_done() && slot.conn.is_idle() && slot.timer.is_none())
        });
        let last = self.log.last_zxid();
        clients_idle
            && self
                .servers
                .iter()
                .all(|s| s.partitioned || s.applied == last)
    }
    /// A stable 64-bit fingerprint of the whole state (same on every
    /// machine and run), for visited-state sets and trace hashes.
    ///
    /// It hashes absolute times (the clock, timers, last-heard ticks, node
    /// ctime/mtime): two states that differ only in when they happened do
    /// not dedup, which is what `Tick`'s `max_time` bound requires anyway.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = StableHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }

    // ---- observation helpers beyond the contract (tests, checkers, tools) ----

    /// Number of servers (server 0 is the leader).
    pub fn num_servers(&self) -> usize {
        self.servers.len()
    }
    /// The faults still available.
    pub fn budget(&self) -> FaultBudget {
        self.budget
    }
    /// The newest zxid the leader ordered.
    pub fn last_zxid(&self) -> Zxid {
        self.log.last_zxid()
    }
    /// The newest zxid a server applied.
    pub fn applied_zxid(&self, server: ServerId) -> Zxid {
        self.servers[server].applied
    }
    /// Whether a follower is partitioned.
    pub fn is_partitioned(&self, server: ServerId) -> bool {
        self.servers[server].partitioned
    }
    /// Whether the leader holds `session` as live.
    pub fn is_session_live(&self, session: SessionId) -> bool {
        self.sessions.is_live(session)
    }
    /// The live sessions, in id order.
    pub fn live_sessions(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.sessions.live()
    }
    /// The last zxid the client saw in a reply header.
    pub fn client_last_zxid(&self, id: ClientId) -> Zxid {
        self.clients[id].last_zxid
    }
    /// The client library's watch registry (what `SetWatches` would send).
    pub fn client_watches(&self, id: ClientId) -> &ClientWatches {
        &self.clients[id].watches
    }
    /// The client's handle is dead (expired and told so, or closed).
    pub fn is_handle_dead(&self, id: ClientId) -> bool {
        self.clients[id].link == Link::Dead
    }
    pub fn is_crashed(&self, id: ClientId) -> bool {
        self.clients[id].is_crashed()
    }
    pub fn is_paused(&self, id: ClientId) -> bool {
        matches!(self.clients[id].life, Life::Paused { .. })
    }
    /// Messages waiting for the client (including answers its library made up).
    pub fn inbound_len(&self, id: ClientId) -> usize {
        self.clients[id].conn.inbound.len()
    }
    /// The client's armed timer, if any.
    pub fn timer_of(&self, id: ClientId) -> Option<Tick> {
        self.clients[id].timer
    }
    /// Committed transactions some server has not applied yet.
    pub fn log_len(&self) -> usize {
        self.log.len()
    }
    /// The negotiated session timeout (S20): the requested
    /// `config.session_timeout` clamped to [2, 20] ticks, ZooKeeper's
    /// default [2·tickTime, 20·tickTime] with one tick per tickTime.
    pub fn session_timeout(&self) -> Tick {
        self.config
            .session_timeout
            .clamp(MIN_SESSION_TIMEOUT, MAX_SESSION_TIMEOUT)
    }
    /// How many ticks without hearing from its server make a client drop
    /// its connection: 2/3 of the negotiated timeout, rounded up to whole
    /// ticks (`ClientCnxn`'s read timeout, S21).
    pub fn read_timeout(&self) -> Tick {
        (self.session_timeout() * 2).div_ceil(3)
    }
}
