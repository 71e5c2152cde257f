//! Leader election as ZooKeeper's recipes page describes it
//! (<https://zookeeper.apache.org/doc/current/recipes.html#sc_leaderElection>):
//! every candidate makes an ephemeral sequential node under the election
//! root and watches the next lower one; the lowest node leads.
//!
//! That is the predecessor-watch lock ([`crate::lock::sequential`]) with a
//! term for a hold, so the recipe *is* that lock's protocol, run by
//! [`Rounds::for_leadership`]: `Elected` and `ResourceWrite { fence }` — the
//! leader's epoch, the czxid of its node, written to a leader-only resource
//! that rejects older epochs — when it leads, `Abdicated` when its term ends
//! or when it hears `Disconnected`/`Expired` (a leader that cannot reach the
//! ensemble cannot know it still leads). `workload.rounds` is the number of
//! terms each candidate serves, `hold_ticks` their length.

use crate::lock::protocol::LockClient;
use crate::lock::rounds::Rounds;
use crate::lock::sequential::{Role, SequentialProtocol};
use crate::lock::switches::Flaws;
use crate::RecipeParams;

/// A candidate for `params` with the given flaws.
pub fn election_with(params: &RecipeParams, flaws: Flaws) -> LockClient<SequentialProtocol> {
    LockClient::new(
        params.root.clone(),
        Rounds::new(params.workload, false).for_leadership(),
        SequentialProtocol::new(&params.root, params.client, Role::Exclusive, flaws),
    )
}

crate::lock::lock_recipe! {
    /// `election`: the predecessor-watch leader election; see the module docs.
    Election(SequentialProtocol) as Election = |params| election_with(params, Flaws::default())
}

crate::lock::lock_recipe! {
    /// `election-ignore-session`: a leader that never watches its own
    /// session. It ignores `Disconnected` and `Expired` and keeps leading
    /// while its session is gone and another candidate has been elected:
    /// **election** (two leaders) and **owner** break; the epoch still
    /// fences its stale writes (**fenced-mutex** holds).
    ElectionIgnoreSession(SequentialProtocol) as Election =
        |params| election_with(params, Flaws { ignore_session: true, ..Flaws::default() })
}
