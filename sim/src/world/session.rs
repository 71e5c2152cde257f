//! The leader's session tracker (`SessionTrackerImpl`): which sessions are
//! alive and when the leader last heard from each (S22).

use std::collections::BTreeMap;

use crate::ids::SESSION_ID_BASE;
use crate::proto::{SessionId, Tick};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionTracker {
    /// Live sessions and the tick the leader last heard from each.
    pub(super) live: BTreeMap<SessionId, Tick>,
    pub(super) next_id: SessionId,
}

impl Default for SessionTracker {
    fn default() -> Self {
        SessionTracker {
            live: BTreeMap::new(),
            next_id: SESSION_ID_BASE,
        }
    }
}

impl SessionTracker {
    /// Hand out a fresh id (not live until [`SessionTracker::open`]).
    pub fn allocate(&mut self) -> SessionId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The id [`SessionTracker::allocate`] will hand out next: it grows
    /// with every session ever allocated.
    pub fn next_id(&self) -> SessionId {
        self.next_id
    }

    pub fn open(&mut self, session: SessionId, now: Tick) {
        self.live.insert(session, now);
    }

    pub fn is_live(&self, session: SessionId) -> bool {
        self.live.contains_key(&session)
    }

    /// The leader heard from the session (a request, a ping, a reconnect).
    pub fn touch(&mut self, session: SessionId, now: Tick) {
        if let Some(heard) = self.live.get_mut(&session) {
            *heard = now;
        }
    }

    /// The session ended (closed or expired). Returns whether it was live.
    pub fn end(&mut self, session: SessionId) -> bool {
        self.live.remove(&session).is_some()
    }

    /// The tick the leader last heard from a live session.
    pub fn last_heard(&self, session: SessionId) -> Option<Tick> {
        self.live.get(&session).copied()
    }

    /// Sessions whose expiry time has come, in id order.
    ///
    /// `SessionTrackerImpl` files a session touched at time `h` in the
    /// expiry bucket `roundToNextInterval(h + timeout)` — the first
    /// multiple of `tickTime` strictly after `h + timeout` (`ExpiryQueue`)
    /// — and expires the whole bucket when the clock reaches it. A touch
    /// during tick `h` (any time in `[h, h+1)`) with a timeout of `T` whole
    /// ticks therefore expires at tick `h + T + 1`: strictly more than a
    /// full timeout after the last packet, never less.
    pub fn overdue(&self, now: Tick, timeout: Tick, out: &mut Vec<SessionId>) {
        out.extend(
            self.live
                .iter()
                .filter(|&(_, &heard)| now.saturating_sub(heard) > timeout)
                .map(|(&id, _)| id),
        );
    }

    pub fn live(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.live.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overdue_in_the_bucket_after_a_full_timeout() {
        let mut t = SessionTracker::default();
        let a = t.allocate();
        let b = t.allocate();
        t.open(a, 0);
        t.open(b, 0);
        t.touch(b, 5);
        let mut out = Vec::new();
        t.overdue(20, 20, &mut out);
        assert!(out.is_empty(), "heard during tick 0: bucket 21");
        t.overdue(21, 20, &mut out);
        assert_eq!(out, vec![a]);
        assert!(t.end(a));
        assert!(!t.end(a));
        assert!(!t.is_live(a) && t.is_live(b));
    }
}
