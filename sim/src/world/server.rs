//! One server: its data tree as far as it has applied the log, and the
//! watches its connected sessions set (S19: watches live at the server).

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::cow_mut::cow_mut;
use crate::fingerprint::{stable_hash, HashMemo};
use crate::proto::{Reply, SessionId, Tick, WatchedEvent, Zxid};
use crate::tree::{DataTree, Trigger, Txn};
use crate::watch::WatchManager;

use super::client_watches::ClientWatches;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// Changed only through [`Server::apply`], which keeps `tree_hash` true.
    /// Shared copy-on-write: most steps leave the tree alone, so a copied
    /// world (an explorer's child state) shares its parent's tree until a
    /// transaction is applied to it.
    pub(super) tree: Arc<DataTree>,
    /// The tree's stable hash, remembered between applies: fingerprinting a
    /// world then costs one word per unchanged tree instead of a walk.
    pub(super) tree_hash: HashMemo,
    /// The newest zxid this server applied; never goes back.
    pub applied: Zxid,
    /// Since when a partitioned follower has been cut off from the leader
    /// (it applies nothing until healed); `None` when it is not.
    pub partitioned_since: Option<Tick>,
    /// Sessions this follower heard from while partitioned. A follower
    /// reports the sessions it heard from in its answer to the leader's
    /// next ping (`LearnerSessionTracker`'s touch table, sent by
    /// `Learner.ping`); cut off, it keeps collecting them, and if the
    /// partition heals before `sync_limit` (the TCP connection to the
    /// leader survived) they reach the leader then. Past `sync_limit` the
    /// follower has shut down and they are gone.
    pub held_touches: BTreeSet<SessionId>,
    pub watches: WatchManager,
}

impl Server {
    pub fn new() -> Self {
        Server {
            tree: Arc::new(DataTree::new()),
            tree_hash: HashMemo::default(),
            applied: 0,
            partitioned_since: None,
            held_touches: BTreeSet::new(),
            watches: WatchManager::new(),
        }
    }

    pub fn is_partitioned(&self) -> bool {
        self.partitioned_since.is_some()
    }

    pub fn tree(&self) -> &DataTree {
        &self.tree
    }

    /// Apply the next committed transaction.
    pub fn apply(&mut self, zxid: Zxid, time_ms: i64, txn: &Txn) -> (Reply, Vec<Trigger>) {
        debug_assert_eq!(zxid, self.applied + 1, "servers apply the log in order");
        self.tree_hash.clear();
        self.applied = zxid;
        self.tree_mut().apply(zxid, time_ms, txn)
    }

    /// Set a parent's suffix counter (a scenario's starting state, S6).
    pub fn set_seq_counter(&mut self, path: &str, counter: i32) -> bool {
        self.tree_hash.clear();
        self.tree_mut().set_seq_counter(path, counter)
    }

    /// The tree to change, copied first if another world's server shares it.
    fn tree_mut(&mut self) -> &mut DataTree {
        // SAFETY: the tree's `Arc` never has a `Weak`: no code downgrades
        // it, and `tree()` lends the tree, not the `Arc`.
        unsafe { cow_mut(&mut self.tree) }
    }

    /// A reconnecting session re-registers its watches here (S25); returns
    /// the events it missed.
    pub fn set_watches(
        &mut self,
        session: SessionId,
        last_zxid: Zxid,
        watches: &ClientWatches,
    ) -> Vec<WatchedEvent> {
        let list = |set: &BTreeSet<String>| -> Vec<String> { set.iter().cloned().collect() };
        let events = self.watches.set_watches(
            session,
            last_zxid,
            &list(&watches.data),
            &list(&watches.exist),
            &list(&watches.child),
            &self.tree,
        );
        // `SetWatches2` (S37): a client with persistent watches sends them
        // too; they are re-armed without events.
        if !watches.persistent.is_empty() {
            self.watches.set_persistent_watches(
                session,
                &list(&watches.persistent.node),
                &list(&watches.persistent.recursive),
            );
        }
        events
    }
}

impl Hash for Server {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.tree_hash.get_or(|| stable_hash(&*self.tree)));
        self.applied.hash(state);
        self.partitioned_since.hash(state);
        self.held_touches.hash(state);
        self.watches.hash(state);
    }
}
