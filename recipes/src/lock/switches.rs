//! [`Flaws`]: the switches that turn the predecessor-watch recipe into one
//! of its classic broken twins. A leaf of its own because three places read
//! them — the waiting line ([`super::line`]: ordering and whom to watch),
//! the protocol ([`super::sequential`]: retries, session events, release)
//! and the election built on it — while the registered broken recipes
//! ([`super::flaws`]) build on the protocol.

/// Deliberate mistakes, each one a rule of `ZK-SEMANTICS.md`; all `false`
/// is the correct recipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flaws {
    /// W3: on the predecessor's deletion (or when `exists` says it is gone)
    /// take the lock without listing the children again.
    pub no_recheck: bool,
    /// W5: ignore `Disconnected` and `Expired`; keep holding (or waiting).
    pub ignore_session: bool,
    /// W6: watch the lowest node instead of the predecessor.
    pub watch_lowest: bool,
    /// W4: after `ConnectionLoss` on the create, create again without
    /// looking for the node the first create may have made (and never clean
    /// up own leftovers).
    pub blind_retry: bool,
    /// W1: order the children by whole name as strings, not by sequence.
    pub string_sort: bool,
    /// On a retry after an interruption, adopt any node carrying this
    /// client's tag (of any session, any attempt) instead of creating one,
    /// without checking that its own current session owns it.
    pub adopt_any: bool,
    /// When the release's delete fails with `ConnectionLoss`, forget the
    /// node (no retry), and keep no record of own nodes to clean up later.
    pub forget_release: bool,
}
