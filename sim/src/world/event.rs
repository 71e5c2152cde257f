//! The scheduler's alphabet: every choice a run can make ([`Event`]), the
//! faults among them ([`Fault`]). Plain data over client and server ids, in
//! a leaf module so that what renames or orders events (symmetry's
//! renaming, footprints, the checker's schedules) needs nothing else of the
//! world.

use crate::ids::{ClientId, ServerId};

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
    /// The client is cut off from every server, both ways, until the
    /// leader has expired its session: its pings reach nobody (the leader
    /// expires the session a full timeout after it last heard from it), it
    /// hears nothing (it reports `Disconnected` at its read timeout), and
    /// once the session is gone it can reach a server again and learns
    /// `Expired`. Expiry as ZooKeeper really does it (S21, S22, S23).
    Silence { client: ClientId },
    /// The ensemble ends the session of a client that may be connected and
    /// pinging: an operator's kill, a leader whose clock jumped. The
    /// client's server closes its connection as it applies the
    /// `closeSession` (the client sees `Disconnected`, then `Expired`).
    KillSession { client: ClientId },
    /// The client freezes for `Config::pause_ticks` (a GC pause).
    Pause { client: ClientId },
    /// The client process dies; its session lives until it expires.
    Crash { client: ClientId },
    /// A follower is cut off from the leader: it applies nothing, forwards
    /// no request and no session touch, serves stale reads until
    /// `Config::sync_limit` ticks have passed and then closes all its
    /// client connections and refuses new ones until healed.
    Partition { server: ServerId },
    /// A partitioned follower reaches the leader again and catches up.
    Heal { server: ServerId },
}
