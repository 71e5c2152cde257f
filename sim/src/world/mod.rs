//! The world: ensemble + network + clients + clock + fault budget, one value.
//!
//! The public API in this file is a contract shared with the checker. How
//! the world works is split by concept:
//! - `server`: a server's tree and watch tables;
//! - `log`: the leader's committed log and its trimming;
//! - `session`: the leader's session tracker (expiry, S22);
//! - `connection`: a client's outbound / taken / inbound queues (S18, S21, S27);
//! - `client_watches`: the client library's watch memory (S25);
//! - `slot`: everything kept about one client;
//! - `ensemble`: ordering, applying, answering (S19, S27–S29);
//! - `handler`: calling a client's logic and routing what it asks for;
//! - `event`: the scheduler's alphabet (events and faults);
//! - `enabled`, `step`, `fault`: the scheduler's view.
//!
//! Modelling choices a reader should know (each one is ZooKeeper's
//! behaviour unless said otherwise):
//! - Taking a request and the leader ordering it are one step; a write is
//!   applied at the leader at once and at each follower by `Apply`.
//! - One tick is one `tickTime`. A connected, running client whose server
//!   reaches the leader is heard by the leader every tick (it pings at 1/3
//!   of the timeout, more often than a tick matters) and hears its server
//!   every tick (the ping replies).
//! - Expiry happens only by silence, as in ZooKeeper (S21a, S22): the leader
//!   expires a session heard last during tick `h` at tick `h + T + 1`
//!   (`ExpiryQueue` buckets); a client that has heard nothing from its
//!   server since tick `c` drops the connection at tick `c + ⌈2T/3⌉` (its
//!   read timeout), strictly before. Time never passes a running client's
//!   undelivered `Disconnected` (`Tick` is not enabled until the client has
//!   handled it), so a running client is always told before the leader
//!   can expire it. What does break that order is real: a pause (a frozen
//!   process is told nothing), a partitioned follower that keeps its
//!   clients longer than the timeout (`sync_limit > T`), and a kill.
//! - `Silence` cuts the client off from every server both ways until
//!   the leader has expired the session: it takes no request, hears no
//!   answer or event (they are lost), cannot connect. `KillSession` is the
//!   ensemble ending a pinging client's session at once.
//! - A partitioned follower applies nothing, forwards nothing to the leader
//!   (writes, `sync`, `closeSession`, connects and session touches stay
//!   with it; a session's reads queued behind such a request wait too) and
//!   answers plain reads from its stale tree. `sync_limit` ticks after the
//!   partition it closes every client connection and accepts none until
//!   healed (`Learner`'s socket timeout, then `Learner.shutdown`). S26
//!   keeps reconnects from going back in time.
//! - On reconnect the client gets `SyncConnected` first and then the events
//!   `SetWatches` derives, as ZooKeeper's client sends `ConnectRequest`
//!   before `SetWatches` on the new connection (measured on 3.8.0, S25).
//!   Within each of the three watch lists paths go in sorted order (the
//!   Java client walks a `HashMap`).
//! - Time is only `Tick`: a tick ends pauses (a pause of at least the read
//!   timeout drops the client's connection as it resumes, S21), fires the
//!   read timeouts of cut-off clients, makes partitioned followers past
//!   `sync_limit` drop their clients, lets running connected clients ping,
//!   then expires every session whose expiry bucket has come (S20, S22),
//!   and every `CONTAINER_CHECK_TICKS` ticks lets the leader reap empty
//!   containers (S35).
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
//! - A fresh session (after `reopen_session`) is created by `Connect`; the
//!   client's server answers it (`SyncConnected`) and takes any request of
//!   it only once it has applied the session's `createSession` — at once on
//!   the leader, when it gets there on a follower (S39). A connection lost
//!   before that answer leaves the client without a session id: its next
//!   connection creates another session.
//! - In one handler call, `reopen_session` takes effect before the ops it
//!   sends and `close_session` after them (`Cx` does not record their
//!   interleaving).

mod client_watches;
mod connection;
mod cow;
mod enabled;
mod ensemble;
pub(crate) mod event;
mod external;
mod fault;
pub mod footprint;
mod handler;
mod journal;
mod log;
mod parts;
mod rename;
mod server;
mod session;
mod slot;
mod step;
mod tap;
mod time_shift;

use std::sync::Arc;

use crate::client::Client;
use crate::client::OpId;
use crate::fingerprint::StableHasher;
use crate::proto::{Op, Reply, SessionEvent, SessionId, Tick, WatchedEvent, Zxid};
use crate::tree::{DataTree, Txn};

pub use crate::ids::SESSION_ID_BASE;
pub use client_watches::{ClientWatches, PersistentPaths, WatchKind, WatchReg};

use self::log::CommitLog;
use cow::CowVec;
pub use parts::{Shared, SharedServer, SharedSlot};
use server::Server;
use session::SessionTracker;
use slot::{ClientSlot, Life, Link, Slots};
pub use time_shift::ClockRead;

pub use crate::ids::{ClientId, ServerId};
pub use enabled::ClientReadiness;
pub use event::{Event, Fault};
pub use external::{Refusal, SetWatches};
pub use tap::CommittedTxn;

/// How the ensemble is shaped and what may go wrong.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Number of servers; server 0 is the leader, the others followers.
    pub servers: usize,
    /// Negotiated session timeout, in ticks.
    pub session_timeout: Tick,
    /// How long a `Pause` fault freezes a client, in ticks.
    pub pause_ticks: Tick,
    /// A follower cut off from the leader notices it after this many ticks
    /// (ZooKeeper's `syncLimit`, in ticks of `tickTime`: the socket read
    /// timeout `Learner` sets on its leader connection) and then closes
    /// every client connection it holds. 3.8's default is 5.
    pub sync_limit: Tick,
    /// `Tick` is no longer enabled once the clock reaches this (keeps runs finite).
    pub max_time: Tick,
    /// How many faults of each kind a run may inject.
    pub faults: FaultBudget,
    /// Clients whose connect string names one server only: `(client,
    /// server)`. Such a client starts on that server and only ever
    /// reconnects to it. Other clients start round-robin and may move.
    pub pins: Vec<(ClientId, ServerId)>,
    /// Persistent nodes that exist before the clients start, each with its
    /// sequential-suffix counter (S5, S6) set to a given value — to start a
    /// recipe's parent near the 2^31−1 cap without two billion creates.
    /// Parents are created as needed (with counter 0).
    pub parents: Vec<(String, i32)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            servers: 3,
            session_timeout: 20,
            pause_ticks: 30,
            sync_limit: DEFAULT_SYNC_LIMIT,
            max_time: 400,
            faults: FaultBudget::default(),
            pins: Vec::new(),
            parents: Vec::new(),
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
    pub kills: u32,
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
/// ZooKeeper 3.8's default `syncLimit` (5 ticks of `tickTime`).
pub const DEFAULT_SYNC_LIMIT: Tick = 5;
/// How often the leader's container reaper runs, in ticks (S35): at every
/// tick `t` with `t % CONTAINER_CHECK_TICKS == 0`, after expiries. 3.8's
/// `znode.container.checkIntervalMs` defaults to 60 s, which is 30 ticks of
/// the default 2 s `tickTime`.
pub const CONTAINER_CHECK_TICKS: Tick = 30;

/// The whole simulated system. See the crate docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World<C: Client> {
    /// Fixed for the run, so shared by every copy of the world (a search
    /// keeps hundreds of thousands of copies at once).
    config: Arc<Config>,
    now: Tick,
    /// Faults still available (starts as `config.faults`).
    budget: FaultBudget,
    /// Server 0 is the leader.
    servers: CowVec<Server>,
    log: CommitLog,
    sessions: SessionTracker,
    clients: Slots<C>,
    /// Whether some client's handler ever read the absolute time. Hashed
    /// only when set, so that worlds of clients that never read it keep
    /// their fingerprints.
    clock_read: ClockRead,
    /// Committed transactions for an outside observer, when asked for
    /// ([`World::keep_commits`]); not state (ignored by `Hash` and `Eq`).
    commit_tap: tap::CommitTap,
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
            config: Arc::new(config),
            now: 0,
            servers: (0..servers).map(|_| Server::new()).collect(),
            log: CommitLog::default(),
            sessions: SessionTracker::default(),
            clients: Slots::with_capacity(clients.len()),
            clock_read: ClockRead::default(),
            commit_tap: tap::CommitTap::default(),
        };
        world.create_parents(log);
        for (id, logic) in clients.into_iter().enumerate() {
            let session = world.sessions.allocate();
            world.sessions.open(session, 0);
            let server = world.pinned_server(id).unwrap_or(id % servers);
            world.clients.push(ClientSlot::new(logic, session, server));
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
    /// The server a pinned client must use (`Config::pins`), if valid.
    pub fn pinned_server(&self, client: ClientId) -> Option<ServerId> {
        self.config
            .pins
            .iter()
            .find(|&&(c, _)| c == client)
            .map(|&(_, server)| server)
            .filter(|&server| server < self.servers.len())
    }

    /// Create `Config::parents` (and their ancestors) at every server,
    /// committed like any write, and set their suffix counters.
    fn create_parents(&mut self, log: &mut Vec<Happening<C::Event>>) {
        let parents = self.config.parents.clone();
        for (path, counter) in parents {
            let mut prefix = String::new();
            for part in path.split('/').filter(|p| !p.is_empty()) {
                prefix.push('/');
                prefix.push_str(part);
                if self.servers[0].tree().get(&prefix).is_some() {
                    continue;
                }
                let op = Op::Create {
                    path: prefix.clone(),
                    data: Vec::new(),
                    mode: crate::proto::CreateMode::Persistent,
                };
                let txn = self.servers[0].tree().prepare(0, &op);
                self.commit(txn, None, 0, log);
                for server in 1..self.servers.len() {
                    self.apply_next(server, log);
                }
            }
            for server in 0..self.servers.len() {
                self.servers[server].set_seq_counter(&path, counter);
            }
        }
    }

    /// Append the enabled events, in a deterministic order, to `out`.
    ///
    /// The order is `Event`'s own (`Ord`): the list comes out sorted.
    pub fn enabled(&self, out: &mut Vec<Event>) {
        self.list_enabled(out, |_| true);
    }
    /// [`World::enabled`] without the faults `keep` rejects, which are not
    /// even checked: for a scheduler that would never pick them (a random
    /// run whose seed switched their kind off), listing them is waste.
    pub fn enabled_where(&self, out: &mut Vec<Event>, keep: impl Fn(&Fault) -> bool) {
        self.list_enabled(out, keep);
    }
    /// Apply one enabled event, appending what happened to `log`.
    /// Panics if `event` is not enabled (a scheduler bug, never user input).
    pub fn step(&mut self, event: &Event, log: &mut Vec<Happening<C::Event>>) {
        self.apply_event(event, log);
    }
    /// [`World::step`], and which clients' slots it wrote (ascending, each
    /// once) into `written`: every client whose [`World::client_readiness`]
    /// or queues may have changed, unless the step was a `Tick` or a fault
    /// (they change what the clock and the servers allow every client) or
    /// changed a server a connecting client waits on.
    pub fn step_noting(
        &mut self,
        event: &Event,
        log: &mut Vec<Happening<C::Event>>,
        written: &mut Vec<ClientId>,
    ) {
        let journal = journal::Journal::open();
        self.apply_event(event, log);
        journal.close_into(written);
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
        self.clients.iter().all(|slot| slot.is_quiescent()) && self.servers_quiescent()
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
    /// The watches a server holds for its sessions (S19).
    pub fn server_watches(&self, server: ServerId) -> &crate::watch::WatchManager {
        &self.servers[server].watches
    }
    /// Whether a follower is partitioned.
    pub fn is_partitioned(&self, server: ServerId) -> bool {
        self.servers[server].is_partitioned()
    }
    /// Whether a partitioned follower has given up on the leader (after
    /// `sync_limit` ticks): it has closed its client connections and
    /// accepts none until healed.
    pub fn is_server_down(&self, server: ServerId) -> bool {
        self.server_down(server)
    }
    /// Whether the client is cut off from every server (a `Silence`
    /// fault whose session has not expired yet).
    pub fn is_cut_off(&self, id: ClientId) -> bool {
        self.clients[id].cut.is_some()
    }
    /// The tick at which the leader will expire `session` if it hears
    /// nothing more from it, if the session is live: by its own negotiated
    /// timeout when it has one (a remote client's), as `overdue` counts it.
    pub fn expiry_deadline(&self, session: SessionId) -> Option<Tick> {
        self.sessions
            .last_heard(session)
            .map(|heard| heard + self.session_timeout_of(session) + 1)
    }
    /// Whether the leader holds `session` as live.
    pub fn is_session_live(&self, session: SessionId) -> bool {
        self.sessions.is_live(session)
    }
    /// The id the next new session will get. Session ids are handed out in
    /// order and a client's session changes only to a new one, so while
    /// this stays the same no client's session has changed: observers that
    /// map sessions to clients rescan only when it moves.
    pub fn next_session_id(&self) -> SessionId {
        self.sessions.next_id()
    }
    /// The live sessions, in id order.
    pub fn live_sessions(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.sessions.live()
    }
    /// The last zxid the client saw in a reply header.
    pub fn client_last_zxid(&self, id: ClientId) -> Zxid {
        self.clients[id].last_zxid
    }
    /// The client library's watch memory (what `SetWatches` would send).
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
    /// Requests waiting on the client's connection, not yet taken by its
    /// server. Timing models (the checker's timed scheduler) stamp each with
    /// the time it reaches the server.
    pub fn outbound_len(&self, id: ClientId) -> usize {
        self.clients[id].conn.outbound.len()
    }
    /// The request the client's server would take next (`None`: nothing
    /// waiting, or the client's own `closeSession`): a timing model charges
    /// a read and a write differently.
    pub fn next_request(&self, id: ClientId) -> Option<&Op> {
        match self.clients[id].conn.outbound.front() {
            Some(connection::Outgoing::Op { request, .. }) => Some(request),
            _ => None,
        }
    }
    /// Whether the `index`th message waiting for the client (oldest first)
    /// is a watch notification: what a timing model charges a server's
    /// per-notification cost for.
    pub fn inbound_is_watch(&self, id: ClientId, index: usize) -> bool {
        matches!(
            self.clients[id].conn.inbound.get(index),
            Some(connection::Inbound::Watch(_))
        )
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
    /// Keep a copy of every transaction committed from now on, to be taken
    /// by [`World::take_commits`] (zkserve's history records each one with
    /// its content). Not part of the state: fingerprints do not move.
    pub fn keep_commits(&mut self) {
        self.commit_tap.0.get_or_insert_with(Box::default);
    }
    /// The transactions committed since the last call, in zxid order
    /// (nothing unless [`World::keep_commits`] was called).
    pub fn take_commits(&mut self, out: &mut Vec<CommittedTxn>) {
        if let Some(kept) = &mut self.commit_tap.0 {
            out.append(kept.as_mut());
        }
    }
    /// A running client has a `Disconnected` it has not handled yet: time
    /// may not pass until it has (see "Modelling choices").
    pub fn disconnect_undelivered(&self) -> bool {
        self.clients.iter().any(|slot| slot.disconnect_pending())
    }
}
