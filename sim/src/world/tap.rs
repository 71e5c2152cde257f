//! A copy of every committed transaction, for an observer outside the
//! world that asked for it ([`World::keep_commits`]): zkserve's recorded
//! history writes each transaction the leader orders, and the commit log
//! cannot serve it (entries go as soon as every server applied them, at
//! once in a one-server ensemble).
//!
//! Not part of the world's state: equal and hashed as nothing, so a
//! world's fingerprint and equality do not depend on whether someone
//! watches. Off (`None`, one word) in every world of the checker.

use crate::proto::Zxid;
use crate::tree::Txn;

use super::ClientId;

/// One committed transaction as the leader ordered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedTxn {
    pub zxid: Zxid,
    pub txn: Txn,
    /// The client whose request (or own close) made it, if any.
    pub client: Option<ClientId>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct CommitTap(pub(super) Option<Vec<CommittedTxn>>);

impl PartialEq for CommitTap {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for CommitTap {}

impl std::hash::Hash for CommitTap {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}
