//! Deliberately broken lock recipes, one classic mistake each, so that the
//! checker can show it catches them. Each is the correct recipe with one
//! [`Flaws`] switch (or [`NaiveFlaws`]) on; the doc comment says which rule
//! of `docs/ZK-SEMANTICS.md` (W1–W6) it breaks, which seed article makes the
//! same mistake, and which property should fail.

use super::naive::{naive_with, NaiveFlaws, NaiveProtocol};
use super::sequential::{sequential_with, Role, SequentialProtocol};
pub use super::switches::Flaws;

fn exclusive(params: &crate::RecipeParams, flaws: Flaws) -> super::LockClient<SequentialProtocol> {
    sequential_with(params, Role::Exclusive, flaws)
}

super::lock_recipe! {
    /// `sequential-no-recheck` (W3): when the watched predecessor is deleted
    /// (or `exists` says it is gone) the client takes the lock without listing
    /// the children again. The predecessor may have been a *waiter* that gave
    /// up or whose session ended while the holder still holds: **mutual
    /// exclusion** breaks. (The seed articles that `return true` straight from
    /// their watcher make this mistake.)
    SequentialNoRecheck(SequentialProtocol) =
        |params| exclusive(params, Flaws { no_recheck: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-ignore-session` (W5): ignores `Disconnected` and
    /// `Expired`: a holder whose session expired keeps believing it holds the
    /// lock (and writes with its old fence) while its node is gone and
    /// another client acquires: **belief-level mutual exclusion** breaks;
    /// fenced exclusion still holds. After `Expired` it opens a new session
    /// but a waiter keeps waiting on a watch that died with the old one, so
    /// **liveness** can break too. (Most seed articles never look at session
    /// events.)
    SequentialIgnoreSession(SequentialProtocol) =
        |params| exclusive(params, Flaws { ignore_session: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-watch-lowest` (W6): every waiter watches the lowest node
    /// (the holder) instead of its own predecessor, so each release wakes all
    /// of them: **no-herd** breaks. It still re-lists on every wakeup, so
    /// mutual exclusion and FIFO order hold.
    SequentialWatchLowest(SequentialProtocol) =
        |params| exclusive(params, Flaws { watch_lowest: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-blind-retry` (W4): after `ConnectionLoss` on the create it
    /// creates again without looking for the node the first create may have
    /// made. That orphan stays until the session ends and blocks everyone
    /// behind it; when it is lower than the client's new node the client
    /// waits on itself: **liveness** breaks (a stuck run). The orphan is
    /// ephemeral, so it is gone once the session closes: the end-of-run
    /// **leaks** check does not see it. (The seeds that retry `create` in a
    /// loop on any `KeeperException` do this.)
    SequentialBlindRetry(SequentialProtocol) =
        |params| exclusive(params, Flaws { blind_retry: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-string-sort` (W1): orders the children by whole name as
    /// strings. Our names carry a guid (`lock-c<client>s<session>a<n>-<seq>`)
    /// as Curator's protected mode does, so the order is by client, not by
    /// arrival: a later client with a smaller tag sorts first and takes the
    /// lock while the holder still holds — **mutual exclusion** and **FIFO**
    /// break.
    SequentialStringSort(SequentialProtocol) =
        |params| exclusive(params, Flaws { string_sort: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-adopt-any`: when it retries after an interruption it
    /// first lists the children and adopts any node carrying its client tag
    /// — saving a create — without checking that the node belongs to its
    /// current session. (Recovery code that matches its node by a name
    /// prefix that leaves out the session makes this mistake.) After
    /// `Expired` it is harmless on ZooKeeper: the old session's node is
    /// gone wherever the fresh session can read, since a server serves a
    /// fresh session only once it has applied the session's creation,
    /// ordered after the old session's close (S39). Before S39 the
    /// simulator let a lagging follower list the old node to the new
    /// session and this variant broke **owner** — a window ZooKeeper does
    /// not have. It would bite a client that opens a new session while the
    /// old one still lives (a client-side LOST), which this recipe does
    /// not do.
    SequentialAdoptAny(SequentialProtocol) =
        |params| exclusive(params, Flaws { adopt_any: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `sequential-forget-release`: when the release's `delete` fails with
    /// `ConnectionLoss` it forgets the node (the delete may not have been
    /// applied) and keeps no record of its own nodes to clean up later. The
    /// node lives on with the session and blocks everyone queued behind it;
    /// the client's own next node queues behind it too and waits on itself:
    /// **liveness** breaks (a stuck run), and a client that finishes with
    /// such a node leaks it in its live session (**leaks**). (The seed
    /// articles' `unlock()` that logs and swallows the delete's exception
    /// makes this mistake.)
    SequentialForgetRelease(SequentialProtocol) =
        |params| exclusive(params, Flaws { forget_release: true, ..Flaws::default() })
}

super::lock_recipe! {
    /// `naive-no-rewatch` (W2): when `exists` says the lock node is already
    /// gone it waits for a watch anyway instead of creating the node. That
    /// watch only fires when someone else creates the node, so the last
    /// waiter waits forever: **liveness** breaks.
    NaiveNoRewatch(NaiveProtocol) =
        |params| naive_with(params, NaiveFlaws { no_recheck_when_gone: true })
}

/// `sequential-unwrap`: the reference lock, written by someone sure that
/// a request cannot fail: it `unwrap()`s every reply, so the first
/// `ConnectionLoss` panics inside the client. A panicking recipe is a bug
/// the checker reports (`no-panic`, with a trace and a replay token), not a
/// crash of the checker.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SequentialUnwrap(pub super::SequentialLock);

impl crate::Recipe for SequentialUnwrap {
    const FAMILY: crate::Family = crate::Family::Lock;
    fn new(params: &crate::RecipeParams) -> Self {
        SequentialUnwrap(<super::SequentialLock as crate::Recipe>::new(params))
    }
}

impl zksim::Client for SequentialUnwrap {
    type Event = crate::AppEvent;
    fn start(&mut self, cx: &mut zksim::Cx<crate::AppEvent>) {
        self.0.start(cx)
    }
    fn on_reply(
        &mut self,
        op: zksim::OpId,
        reply: zksim::Reply,
        cx: &mut zksim::Cx<crate::AppEvent>,
    ) {
        if reply == Err(zksim::ZkError::ConnectionLoss) {
            let _: zksim::Response = reply.clone().unwrap();
        }
        self.0.on_reply(op, reply, cx)
    }
    fn on_watch(&mut self, event: zksim::WatchedEvent, cx: &mut zksim::Cx<crate::AppEvent>) {
        self.0.on_watch(event, cx)
    }
    fn on_session(&mut self, event: zksim::SessionEvent, cx: &mut zksim::Cx<crate::AppEvent>) {
        self.0.on_session(event, cx)
    }
    fn on_timer(&mut self, cx: &mut zksim::Cx<crate::AppEvent>) {
        self.0.on_timer(cx)
    }
    fn is_done(&self) -> bool {
        zksim::Client::is_done(&self.0)
    }
    fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        zksim::Client::renamed(&self.0, r).map(SequentialUnwrap)
    }
}

super::lock_recipe! {
    /// `sequential-poll-defer`: a polling waiter (it lists the children
    /// again every few ticks instead of watching) whose yielding rule is
    /// too polite: it takes the lock only when its node is the *only* one
    /// listed, deferring to every other contender, lower or higher — the
    /// "after you" of a try-lock-and-back-off written on sequential nodes.
    /// A lone client acquires, and a client that arrives while another
    /// holds gets its turn after the release; but two clients whose nodes
    /// both exist before either has looked defer to each other for ever:
    /// each poll sees the other's node, nobody deletes its own. The run
    /// never goes quiet (the polls keep a timer armed), so only a cycle
    /// check finds it: **liveness** breaks with a lasso (a reachable cycle
    /// of polls in which nobody acquires). The correct twin is
    /// `sequential-poll` (the lowest node takes the lock).
    SequentialPollDefer(super::sequential::SequentialProtocol) =
        |params| super::sequential::polling_with(params, true)
}
