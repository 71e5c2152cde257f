//! What one step touched: the footprint partial-order reduction compares.
//!
//! Two steps taken from the same state *commute* when neither changes
//! anything the other reads: then each does exactly the same thing in
//! either order (it reads the same values, so it takes the same branches
//! and writes the same values), both stay enabled (whether a step is
//! enabled is read from its own read set), and both orders end in the
//! same state. Sleep sets (`zkcheck`'s exhaustive search) skip one of
//! the two orders on that ground.
//!
//! A footprint is two sets of *resources* (bit masks, see [`Layout`]):
//! the clock, the commit log, the session tracker, the fault budget, each
//! server (tree, watch table, applied zxid, partition state), each client
//! slot (logic, handle, connection queues, timer, watch memory), and each
//! client's *wire*: the part of its slot that servers applying a
//! transaction read — its session, link, cut, process state and the
//! requests its server took and has not answered (`pending`) — and its
//! *identity*, the part the checker's monitors read: its session and
//! whether it crashed. A slot written is always in the writes; its wire
//! and identity only when one of their fields changed; reading a slot
//! reads both.
//! One bit is kept free for the checker's monitors ([`MONITORS`]).
//!
//! - **Writes are measured**, not guessed: a resource is written when the
//!   step changed it. Slots and servers are shared copy-on-write with the
//!   state the step started from, so an unchanged slot is still the same
//!   allocation; a server whose allocation changed is compared by value
//!   (answering a read copies it even when nothing in it changes).
//! - **Reads are a conservative superset per kind of step**, written out
//!   in [`World::step_footprint`] with the code path that needs each one,
//!   and always include the writes. A resource a step may write back with
//!   its old value (a session touched at the tick it was last heard) is
//!   in its read set, so two such "writes" still conflict.
//!
//! Why each kind reads what it reads (from `step.rs`, `ensemble.rs`,
//! `handler.rs`):
//! - `Receive{c}`, `Timer{c}`: slot `c` (what is waiting, the timer, the
//!   logic) and the clock (handed to the logic, the timer deadline). If
//!   the logic reopened its session (the tracker's next id moved, which
//!   every reopen does) also the tracker and the server `c` was on (its
//!   watches for the old session go).
//! - `Request{c}` that orders nothing (a read, a `sync`, a read on a
//!   partitioned follower): slot `c`, `c`'s server (tree, watches, held
//!   touches, partition state), the session tracker (liveness, touch),
//!   the clock (touch time), the log (a `sync` records the last zxid).
//! - `Request{c}` that ordered something, `Connect` that created a
//!   session, `Apply{k}`: a server applies a transaction, which reads the
//!   log, the tracker and the clock (ctime), every server (the log is
//!   trimmed to what all applied) and every client's wire (the watches it
//!   fires go to the client holding the session there, unless it is cut
//!   off; every client of the server whose oldest taken request can now be
//!   answered is answered). What it then writes into other slots (an
//!   event, a reply) is measured like any write.
//! - `Connect{c,k}` otherwise: slot `c`, server `k` (S26 check, SetWatches),
//!   the tracker, the clock, the log.
//! - `Tick`, faults: everything (they walk every client and read the
//!   clock).
//!
//! A scenario whose layout does not fit 64 bits gets no reduction
//! ([`Layout::fits`]).

use std::sync::Arc;

use crate::client::Client;

use super::{ClientId, Event, Fault, ServerId, World};

/// Resources read and written by one step (bit masks over a [`Layout`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Footprint {
    pub reads: u64,
    pub writes: u64,
}

impl Footprint {
    /// Every resource, read and written: dependent with every step.
    pub const ALL: Footprint = Footprint {
        reads: u64::MAX,
        writes: u64::MAX,
    };

    /// Neither step writes what the other reads (see the module docs).
    pub fn independent(&self, other: &Footprint) -> bool {
        self.writes & other.reads == 0 && other.writes & self.reads == 0
    }
}

/// The simulated clock.
pub const CLOCK: u64 = 1 << 0;
/// The leader's commit log.
pub const LOG: u64 = 1 << 1;
/// The leader's session tracker.
pub const SESSIONS: u64 = 1 << 2;
/// The fault budget.
pub const BUDGET: u64 = 1 << 3;
/// Not a part of the world: free for the checker's monitors.
pub const MONITORS: u64 = 1 << 4;
const FIXED: usize = 5;

/// Where each server and client has its bit, for a world of a given shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub servers: usize,
    pub clients: usize,
}

impl Layout {
    /// Whether every resource has a bit of its own.
    pub fn fits(&self) -> bool {
        FIXED + self.servers + 3 * self.clients <= 64
    }
    pub fn server(&self, k: ServerId) -> u64 {
        1 << (FIXED + k)
    }
    pub fn slot(&self, c: ClientId) -> u64 {
        1 << (FIXED + self.servers + c)
    }
    pub fn wire(&self, c: ClientId) -> u64 {
        1 << (FIXED + self.servers + self.clients + c)
    }
    pub fn ident(&self, c: ClientId) -> u64 {
        1 << (FIXED + self.servers + 2 * self.clients + c)
    }
    /// Every client's wire.
    pub fn wires(&self) -> u64 {
        (0..self.clients).fold(0, |m, c| m | self.wire(c))
    }
    /// Every server.
    pub fn all_servers(&self) -> u64 {
        (0..self.servers).fold(0, |m, k| m | self.server(k))
    }
    /// What the checker's monitors read from the world as they judge a
    /// step (`View`): the clock, the session tracker (liveness, the next
    /// session id), every client's session and crash state (its wire) and,
    /// if `tree`, the leader's tree.
    pub fn observer_reads(&self, tree: bool) -> u64 {
        let tree = if tree { self.server(0) } else { 0 };
        let idents = (0..self.clients).fold(0, |m, c| m | self.ident(c));
        CLOCK | SESSIONS | idents | tree
    }

    /// How many distinct events a world of this shape can offer
    /// ([`Layout::event_index`] is below it).
    pub fn events(&self) -> usize {
        let (n, m) = (self.clients, self.servers);
        3 * n + m + n * m + 1 + 5 * n + 2 * m
    }

    /// A stable index of `event` in `0..self.events()` (sleep sets are bit
    /// masks over it).
    pub fn event_index(&self, event: &Event) -> usize {
        let (n, m) = (self.clients, self.servers);
        let faults = 3 * n + m + n * m + 1;
        match *event {
            Event::Request { client } => client,
            Event::Apply { server } => n + server,
            Event::Receive { client } => n + m + client,
            Event::Timer { client } => 2 * n + m + client,
            Event::Connect { client, server } => 3 * n + m + client * m + server,
            Event::Tick => 3 * n + m + n * m,
            Event::Fault(ref f) => match *f {
                Fault::DropConnection { client } => faults + client,
                Fault::Silence { client } => faults + n + client,
                Fault::KillSession { client } => faults + 2 * n + client,
                Fault::Pause { client } => faults + 3 * n + client,
                Fault::Crash { client } => faults + 4 * n + client,
                Fault::Partition { server } => faults + 5 * n + server,
                Fault::Heal { server } => faults + 5 * n + m + server,
            },
        }
    }
}

impl<C: Client> World<C> {
    /// The resource layout of this world.
    pub fn layout(&self) -> Layout {
        Layout {
            servers: self.servers.len(),
            clients: self.clients.len(),
        }
    }

    /// The footprint of the step `event` that took `before` to `self`
    /// (`self` a copy of `before`, then stepped: unchanged parts are still
    /// shared). See the module docs for why each kind reads what it reads.
    pub fn step_footprint(&self, before: &World<C>, event: &Event) -> Footprint {
        let layout = self.layout();
        if !layout.fits() || self.clients.len() != before.clients.len() {
            return Footprint::ALL;
        }
        let mut writes = 0;
        if self.now != before.now {
            writes |= CLOCK;
        }
        if self.log.last_zxid != before.log.last_zxid
            || self.log.entries.len() != before.log.entries.len()
        {
            writes |= LOG;
        }
        if self.sessions != before.sessions {
            writes |= SESSIONS;
        }
        if self.budget != before.budget {
            writes |= BUDGET;
        }
        for k in 0..self.servers.len() {
            let same = Arc::ptr_eq(&self.servers.0[k], &before.servers.0[k])
                || self.servers[k] == before.servers[k];
            if !same {
                writes |= layout.server(k);
            }
        }
        for c in 0..self.clients.len() {
            if Arc::ptr_eq(&self.clients.0[c], &before.clients.0[c]) {
                continue;
            }
            writes |= layout.slot(c);
            let (now, then) = (&self.clients[c], &before.clients[c]);
            let wire_moved = now.session != then.session
                || now.link != then.link
                || now.cut != then.cut
                || now.life != then.life
                || now.conn.pending != then.conn.pending;
            if wire_moved {
                writes |= layout.wire(c);
            }
            if now.session != then.session || now.is_crashed() != then.is_crashed() {
                writes |= layout.ident(c);
            }
        }
        let own = |c: ClientId| layout.slot(c) | layout.wire(c) | layout.ident(c);
        let applying = LOG | SESSIONS | CLOCK | layout.all_servers() | layout.wires();
        let reads = match *event {
            Event::Receive { client } | Event::Timer { client } => {
                let mut r = own(client) | CLOCK;
                if writes & SESSIONS != 0 {
                    // A reopen: the old session's watches leave its server.
                    r |= SESSIONS;
                    if let Some(server) = before.clients[client].server() {
                        r |= layout.server(server);
                    }
                }
                r
            }
            Event::Request { client } if writes & LOG == 0 => {
                let server = before.clients[client].server().unwrap_or(0);
                own(client) | layout.server(server) | SESSIONS | CLOCK | LOG
            }
            Event::Connect { client, server } if writes & LOG == 0 => {
                own(client) | layout.server(server) | SESSIONS | CLOCK | LOG
            }
            Event::Request { client } | Event::Connect { client, .. } => own(client) | applying,
            Event::Apply { .. } => applying,
            Event::Tick | Event::Fault(_) => u64::MAX,
        };
        Footprint {
            reads: reads | writes,
            writes,
        }
    }
}
