//! One client's connection: what waits to be taken by the server, what the
//! server took and has not answered yet, and what is on its way back.
//!
//! The three queues together are the FIFO channel of S18/S27: requests are
//! taken in the order the client sent them, answered in that order, and the
//! answers (with the watch events the server queued between them) reach the
//! client in the order the server produced them.

use std::collections::VecDeque;

use crate::client::OpId;
use crate::proto::{Op, Reply, SessionEvent, WatchedEvent, ZkError, Zxid};

use super::client_watches::WatchReg;

/// A request waiting on the connection (or queued locally while disconnected).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outgoing {
    Op {
        op: OpId,
        request: Op,
    },
    /// `closeSession`, sent by `Cx::close_session` behind the ops before it.
    Close,
}

/// A request the server took and has not answered yet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pending {
    /// Answered from the server's own tree once every earlier request is answered.
    Read { op: OpId, request: Op },
    /// Answered once the server has applied everything up to `upto` (S29).
    Sync { op: OpId, upto: Zxid },
    /// Ordered by the leader at `zxid`; `reply` is filled in when the
    /// client's server applies it (S19: the reply comes from that server).
    Write {
        op: OpId,
        zxid: Zxid,
        reply: Option<Reply>,
    },
    /// The client's own `closeSession` at `zxid`; `applied` once the client's server applied it.
    Close { zxid: Zxid, applied: bool },
    /// The connect request of a fresh session whose `createSession` the
    /// leader ordered at `zxid`: answered (`SyncConnected`) once the
    /// client's server has applied it, and nothing behind it is taken
    /// before (S39: the server stops reading the connection until
    /// `FinalRequestProcessor` has applied the session's creation).
    Connect { zxid: Zxid },
}

/// A message on its way to the client, or made by the client library itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Inbound {
    Reply {
        op: OpId,
        reply: Reply,
        /// The reply header's zxid (the server's last applied zxid when it
        /// answered); `None` for an answer the client library made up
        /// (`ConnectionLoss`, `SessionExpired`), which never left the client.
        zxid: Option<Zxid>,
        /// The watch the client library registers when it handles this reply.
        watch: Option<WatchReg>,
    },
    Watch(WatchedEvent),
    Session(SessionEvent),
}

impl Inbound {
    pub fn local_error(op: OpId, err: ZkError) -> Self {
        Inbound::Reply {
            op,
            reply: Err(err),
            zxid: None,
            watch: None,
        }
    }
}

/// The three queues of one client.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Connection {
    pub outbound: VecDeque<Outgoing>,
    pub pending: VecDeque<Pending>,
    pub inbound: VecDeque<Inbound>,
}

/// What [`Connection::fail_all`] found besides failed ops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failed {
    /// A `closeSession` of the client was among the lost requests.
    pub close_lost: bool,
    /// The connect request of a fresh session was lost before its answer:
    /// the client never learned its session id (S39).
    pub connect_lost: bool,
}

impl Connection {
    /// Nothing waiting in any direction.
    pub fn is_idle(&self) -> bool {
        self.outbound.is_empty() && self.pending.is_empty() && self.inbound.is_empty()
    }

    /// The connection broke (S21): messages from the server that the
    /// client has not read are lost — a lost reply becomes `ConnectionLoss`
    /// for its op, a lost watch event is dropped (the client library still
    /// remembers the watch and `SetWatches` re-derives the event) — and every
    /// op the server took but did not answer, then every op not yet taken,
    /// fails with `ConnectionLoss`, in op order. Session events and answers
    /// the library made itself stay where they are.
    pub fn fail_all(&mut self) -> Failed {
        let mut failed = Failed::default();
        let inbound = std::mem::take(&mut self.inbound);
        for msg in inbound {
            match msg {
                Inbound::Reply {
                    op, zxid: Some(_), ..
                } => {
                    self.inbound
                        .push_back(Inbound::local_error(op, ZkError::ConnectionLoss));
                }
                Inbound::Watch(_) => {}
                kept => self.inbound.push_back(kept),
            }
        }
        for pending in std::mem::take(&mut self.pending) {
            match pending {
                Pending::Read { op, .. } | Pending::Sync { op, .. } | Pending::Write { op, .. } => {
                    self.inbound
                        .push_back(Inbound::local_error(op, ZkError::ConnectionLoss));
                }
                Pending::Close { .. } => failed.close_lost = true,
                Pending::Connect { .. } => failed.connect_lost = true,
            }
        }
        for outgoing in std::mem::take(&mut self.outbound) {
            match outgoing {
                Outgoing::Op { op, .. } => {
                    self.inbound
                        .push_back(Inbound::local_error(op, ZkError::ConnectionLoss));
                }
                Outgoing::Close => failed.close_lost = true,
            }
        }
        failed
    }

    /// A fresh session's connect request waits for its server (S39): the
    /// server reads nothing more from the connection until it is answered.
    pub fn connecting(&self) -> bool {
        matches!(self.pending.front(), Some(Pending::Connect { .. }))
    }

    /// The session turned out to be expired on reconnect (S23): requests
    /// queued while disconnected fail with `SessionExpired`.
    pub fn expire_queued(&mut self) {
        for outgoing in std::mem::take(&mut self.outbound) {
            if let Outgoing::Op { op, .. } = outgoing {
                self.inbound
                    .push_back(Inbound::local_error(op, ZkError::SessionExpired));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{EventType, Response};

    #[test]
    fn fail_all_keeps_op_order_and_drops_watch_events() {
        let mut c = Connection::default();
        c.inbound
            .push_back(Inbound::Session(SessionEvent::SyncConnected));
        c.inbound.push_back(Inbound::Reply {
            op: 1,
            reply: Ok(Response::Synced),
            zxid: Some(5),
            watch: None,
        });
        c.inbound.push_back(Inbound::Watch(WatchedEvent {
            kind: EventType::NodeDeleted,
            path: "/x".into(),
        }));
        c.pending.push_back(Pending::Write {
            op: 2,
            zxid: 6,
            reply: None,
        });
        c.outbound.push_back(Outgoing::Op {
            op: 3,
            request: Op::Sync { path: "/".into() },
        });
        let failed = c.fail_all();
        assert!(!failed.close_lost);
        let got: Vec<_> = c.inbound.iter().cloned().collect();
        assert_eq!(
            got,
            vec![
                Inbound::Session(SessionEvent::SyncConnected),
                Inbound::local_error(1, ZkError::ConnectionLoss),
                Inbound::local_error(2, ZkError::ConnectionLoss),
                Inbound::local_error(3, ZkError::ConnectionLoss),
            ]
        );
        assert!(c.pending.is_empty() && c.outbound.is_empty());
    }
}
