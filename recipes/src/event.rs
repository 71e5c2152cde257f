//! What a recipe reports about itself: the history the checker judges.
//!
//! # The event contract
//!
//! The checker knows a recipe only by the events it emits; each hard check
//! reads some of them and can judge nothing without them (docs/EVENTS.md
//! has the table). A lock or leader that keeps this contract is judged by
//! every check of its family; [`crate::lock::rounds::Rounds`] keeps it for
//! you (the round loop: `Requested`, `Acquired` + `ResourceWrite`, hold,
//! `ResourceWrite`, `Released`, think, and `LostLock`/`GaveUp` on session
//! trouble, or `Elected`/`Abdicated` with [`Rounds::for_leadership`]).
//!
//! - **`mutex`** reads `Acquired` … `Released`/`LostLock` per client: two
//!   open exclusive holds at once fail it.
//! - **`fenced-mutex`** reads `ResourceWrite { fence }` only: the protected
//!   resource keeps the newest fence it accepted and refuses older ones; two
//!   clients writing under one fence fail it. A recipe that never emits
//!   `ResourceWrite` cannot fail it, and the checker says so (a hard
//!   `fenced-mutex` that judged no write is refused by `Check::assert_holds`
//!   and warned about by `zkcheck check`).
//! - **`owner`** reads the fence of `Acquired { fence }` as the *creation
//!   zxid (czxid) of the node that grants the lock*, looked up among the
//!   children of the scenario's root in the leader's tree; the node must
//!   exist and be an ephemeral of the client's current live session while
//!   it holds. A fence that is not a czxid under the root fails it at once.
//!   A leader names its node the same way with the first `ResourceWrite {
//!   fence }` it makes in the step it is `Elected`: its **epoch** is its
//!   node's czxid. A leader that never names one is held to the weaker rule
//!   that its session is live.
//! - **`election`** reads `Elected` … `Abdicated`: two leaders at once fail
//!   it; a run in which nobody is ever `Elected` judges nothing (refused
//!   like `fenced-mutex`'s).
//! - **`asked`** reads `Requested`, `Acquired`, `GaveUp`: every `Acquired`
//!   must answer a `Requested` made since the previous `Acquired`/`GaveUp`.
//! - **`fifo`** reads `Enqueued` (when the client's place in line exists)
//!   and `Requested`/`Acquired`/`GaveUp`.
//! - **`liveness`** reads `Requested`/`Acquired`/`GaveUp` (and queue and
//!   election events): whoever asked must get it and finish (`is_done`).
//! - **`queue`** reads `Offered { item }` and `Taken { item }`, and the
//!   czxid of the offer's node for order.
//! - **`leaks`** reads no event: the recipe's nodes under the root when a
//!   client is done and when every session is closed.
//!
//! [`Rounds::for_leadership`]: crate::lock::rounds::Rounds::for_leadership

/// An application-level event emitted by a recipe client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AppEvent {
    /// The client asks for the lock (read lock if `shared`).
    Requested { shared: bool },
    /// The client's place in line exists on the server (its node was created).
    /// `seq` is its sequence number, when the recipe has one.
    Enqueued { seq: Option<i64> },
    /// The client believes it holds the lock. `fence` grows with every
    /// acquisition: it must be the czxid of the node that grants it (what
    /// `owner` looks the node up by).
    Acquired { fence: i64, shared: bool },
    /// The client touches the protected resource under `fence` (what
    /// `fenced-mutex` judges; a new leader's first one names its epoch).
    ResourceWrite { fence: i64 },
    /// The client let go of the lock normally.
    Released,
    /// The client noticed it can no longer trust that it holds the lock
    /// (Disconnected / Expired while holding).
    LostLock,
    /// The client stopped waiting without acquiring (session trouble).
    GaveUp,
    /// Queue: an item was offered.
    Offered { item: u64 },
    /// Queue: an item was taken.
    Taken { item: u64 },
    /// Election: the client believes it leads.
    Elected,
    /// Election: the client stopped leading.
    Abdicated,
}
