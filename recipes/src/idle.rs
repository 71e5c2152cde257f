//! A client that does nothing: finishes at once. Useful to test the checker's
//! plumbing and as the smallest example of a [`Recipe`] (see also
//! `examples/own-recipe/` for one written outside this crate).

use zksim::{Client, Cx, OpId, Reply, SessionEvent, WatchedEvent};

use crate::{AppEvent, Family, Recipe, RecipeParams};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Idle;

impl Recipe for Idle {
    const FAMILY: Family = Family::Lock;
    /// It never asks, so it never waits anywhere.
    const WAITS_IN_LINE: bool = false;
    fn new(_: &RecipeParams) -> Self {
        Idle
    }
}

impl Client for Idle {
    type Event = AppEvent;
    fn start(&mut self, _: &mut Cx<AppEvent>) {}
    fn on_reply(&mut self, _: OpId, _: Reply, _: &mut Cx<AppEvent>) {}
    fn on_watch(&mut self, _: WatchedEvent, _: &mut Cx<AppEvent>) {}
    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {}
    fn on_timer(&mut self, _: &mut Cx<AppEvent>) {}
    fn is_done(&self) -> bool {
        true
    }
}
