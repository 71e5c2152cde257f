//! A client whose library and application run outside the world: a real
//! ZooKeeper client on a socket, served by `zkserve`.
//!
//! It does nothing by itself. Its driver submits its requests
//! ([`crate::World::submit`], [`crate::World::close`]) and reads what it
//! receives — replies with their zxids, watch events, session events — from
//! the history the world appends to ([`crate::Happening::Delivered`]), in
//! the order the world delivers them. Keeping the record in the history
//! rather than in the client keeps the world's state free of an ever
//! growing inbox.

use crate::client::{Client, Cx, OpId};
use crate::proto::{Reply, SessionEvent, WatchedEvent};

/// See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Remote;

impl Client for Remote {
    type Event = ();
    const DRIVEN_FROM_OUTSIDE: bool = true;

    fn start(&mut self, _cx: &mut Cx<()>) {}
    fn on_reply(&mut self, _op: OpId, _reply: Reply, _cx: &mut Cx<()>) {}
    fn on_watch(&mut self, _event: WatchedEvent, _cx: &mut Cx<()>) {}
    fn on_session(&mut self, _event: SessionEvent, _cx: &mut Cx<()>) {}
    fn on_timer(&mut self, _cx: &mut Cx<()>) {}
    /// Whatever its application still means to do, the world cannot wait
    /// for it: a remote client is never what keeps a world from quiescence.
    fn is_done(&self) -> bool {
        true
    }
}
