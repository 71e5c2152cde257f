//! Everything the world keeps about one client: its logic, its handle's
//! state (session, connection link, last seen zxid, watch memory), its
//! process state (running, paused, crashed) and its single timer.

use crate::client::{Client, OpId};
use crate::proto::{SessionEvent, SessionId, Tick, Zxid};

use super::client_watches::ClientWatches;
use super::connection::{Connection, Inbound};
use super::cow::CowVec;
use super::ServerId;

/// The state of the client's ZooKeeper handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// Connected to a server with a live (as far as it knows) session, or,
    /// for a fresh session, waiting for that server to apply its creation
    /// (`Pending::Connect` on the connection, S39).
    Connected(ServerId),
    /// Looking for a server. `fresh`: the session does not exist yet (after
    /// `reopen_session`); connecting creates it.
    Connecting { fresh: bool },
    /// The handle is dead: its session expired (and it learned so) or was
    /// closed. Every request fails with `SessionExpired` until it reopens.
    Dead,
}

/// The client process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Life {
    Running,
    /// Frozen (a GC pause) from `since` until `until`.
    Paused {
        since: Tick,
        until: Tick,
    },
    /// Gone for good.
    Crashed,
}

/// A client cut off from every server: since when (a deadline source, not
/// a counter: the read timeout fires at `since + read_timeout`) and until
/// which session has been expired by the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cut {
    pub since: Tick,
    pub session: SessionId,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientSlot<C: Client> {
    pub logic: C,
    pub next_op: OpId,
    pub session: SessionId,
    pub link: Link,
    /// `close_session` was called and the close has not completed.
    pub closing: bool,
    pub life: Life,
    pub timer: Option<Tick>,
    /// Cut off from every server (a `Silence` fault) until the
    /// leader has expired the session that was current then.
    pub cut: Option<Cut>,
    /// The last zxid seen in a reply header (S25, S26).
    pub last_zxid: Zxid,
    pub watches: ClientWatches,
    pub conn: Connection,
}

impl<C: Client> ClientSlot<C> {
    pub fn new(logic: C, session: SessionId, server: ServerId) -> Self {
        ClientSlot {
            logic,
            next_op: 0,
            session,
            link: Link::Connected(server),
            closing: false,
            life: Life::Running,
            timer: None,
            cut: None,
            last_zxid: 0,
            watches: ClientWatches::default(),
            conn: Connection::default(),
        }
    }

    pub fn server(&self) -> Option<ServerId> {
        match self.link {
            Link::Connected(server) => Some(server),
            _ => None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.life == Life::Running
    }

    pub fn is_crashed(&self) -> bool {
        self.life == Life::Crashed
    }

    /// Running, looking for a server, and not cut off from the network:
    /// which servers it may connect to is `World::can_connect`'s business.
    pub fn seeks_server(&self) -> bool {
        self.is_running() && matches!(self.link, Link::Connecting { .. }) && self.cut.is_none()
    }

    /// Connected to `server` (with `session` as its current session).
    pub fn is_on(&self, server: ServerId) -> bool {
        self.link == Link::Connected(server)
    }

    /// Its logic is done and nothing waits on its connection either way.
    pub fn is_idle(&self) -> bool {
        self.logic.is_done() && self.conn.is_idle()
    }

    /// Its part of a quiescent world: crashed (it will do nothing again),
    /// or done with nothing in flight and no timer armed.
    pub fn is_quiescent(&self) -> bool {
        self.is_crashed() || (self.is_idle() && self.timer.is_none())
    }

    /// Running, with a `Disconnected` it has not handled yet (time may
    /// not pass until it has: `World::tick_enabled`).
    pub fn disconnect_pending(&self) -> bool {
        self.is_running()
            && self
                .conn
                .inbound
                .iter()
                .any(|m| *m == Inbound::Session(SessionEvent::Disconnected))
    }

    /// The client pings its server: it must be connected, its process
    /// running and its network not cut. (Whether the ping reaches the
    /// leader depends on the server: a partitioned follower keeps it.)
    pub fn pings(&self) -> bool {
        self.is_running() && matches!(self.link, Link::Connected(_)) && self.cut.is_none()
    }
}

/// The clients' slots, each shared copy-on-write (see [`CowVec`]), their
/// writes noted while a [`journal`](super::journal) is open.
pub type Slots<C> = CowVec<ClientSlot<C>, true>;
