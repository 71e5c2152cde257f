//! What a recipe reports about itself: the history the checker judges.

/// An application-level event emitted by a recipe client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AppEvent {
    /// The client asks for the lock (read lock if `shared`).
    Requested { shared: bool },
    /// The client's place in line exists on the server (its node was created).
    /// `seq` is its sequence number, when the recipe has one.
    Enqueued { seq: Option<i64> },
    /// The client believes it holds the lock. `fence` grows with every
    /// acquisition (the czxid of the node that grants it).
    Acquired { fence: i64, shared: bool },
    /// The client touches the protected resource under `fence`.
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
