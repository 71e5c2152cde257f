//! The world: ensemble + network + clients + clock + fault budget, one value.
//!
//! CONTRACT STUB — the public API below is fixed; bodies are being written.

use crate::client::Client;
use crate::client::OpId;
use crate::proto::{Op, Reply, SessionEvent, SessionId, Tick, WatchedEvent, Zxid};
use crate::tree::DataTree;

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
    Sent { client: ClientId, op: OpId, request: Op },
    /// A server took a client's request.
    Taken { client: ClientId, server: ServerId, op: OpId },
    /// The leader ordered a write (or a session close/expiry) at `zxid`.
    Committed { zxid: Zxid, session: SessionId },
    /// A server applied the transaction `zxid`.
    Applied { server: ServerId, zxid: Zxid },
    /// A client handled a message.
    Delivered { client: ClientId, delivery: Delivery },
    /// A client emitted an application event.
    App { client: ClientId, event: E },
    /// A session ended (expired or closed); its ephemerals are gone.
    SessionEnded { session: SessionId, expired: bool },
}

/// The whole simulated system. See the crate docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World<C: Client> {
    _todo: std::marker::PhantomData<C>,
}

impl<C: Client> World<C> {
    /// A world whose clients are connected round-robin to the servers and
    /// have been started (their first ops are queued).
    pub fn new(_config: Config, _clients: Vec<C>) -> Self {
        todo!()
    }
    /// Append the enabled events, in a deterministic order, to `out`.
    pub fn enabled(&self, _out: &mut Vec<Event>) {
        todo!()
    }
    /// Apply one enabled event, appending what happened to `log`.
    /// Panics if `event` is not enabled (a scheduler bug, never user input).
    pub fn step(&mut self, _event: &Event, _log: &mut Vec<Happening<C::Event>>) {
        todo!()
    }
    /// Simulated time.
    pub fn now(&self) -> Tick {
        todo!()
    }
    pub fn config(&self) -> &Config {
        todo!()
    }
    pub fn client(&self, _id: ClientId) -> &C {
        todo!()
    }
    pub fn num_clients(&self) -> usize {
        todo!()
    }
    /// The client's current session id.
    pub fn session_of(&self, _id: ClientId) -> SessionId {
        todo!()
    }
    /// The server the client is connected to, if connected.
    pub fn server_of(&self, _id: ClientId) -> Option<ServerId> {
        todo!()
    }
    /// The leader's (newest) data tree.
    pub fn leader_tree(&self) -> &DataTree {
        todo!()
    }
    /// A server's data tree as it has applied the log so far.
    pub fn server_tree(&self, _server: ServerId) -> &DataTree {
        todo!()
    }
    /// Every client is done, nothing is in flight, no timer armed.
    pub fn is_quiescent(&self) -> bool {
        todo!()
    }
    /// A stable 64-bit fingerprint of the whole state (same on every
    /// machine and run), for visited-state sets and trace hashes.
    pub fn fingerprint(&self) -> u64 {
        todo!()
    }
}
