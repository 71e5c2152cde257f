//! The leader's session tracker (`SessionTrackerImpl`): which sessions are
//! alive and when the leader last heard from each (S22).
//!
//! The live sessions are a vector sorted by id rather than a `BTreeMap`:
//! a handful of entries, copied with every explored state, where a B-tree
//! leaf costs a few hundred bytes and a vector exactly what it holds. It
//! hashes exactly as the map did (length, then each `(id, heard)` in id
//! order), so fingerprints are unchanged.

use crate::ids::SESSION_ID_BASE;
use crate::proto::{SessionId, Tick};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionTracker {
    /// Live sessions and the tick the leader last heard from each.
    pub(super) live: Vec<(SessionId, Tick)>,
    pub(super) next_id: SessionId,
}

impl Default for SessionTracker {
    fn default() -> Self {
        SessionTracker {
            live: Vec::new(),
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

    /// Where `session` is in the sorted list, or where it would go.
    fn find(&self, session: SessionId) -> Result<usize, usize> {
        self.live.binary_search_by_key(&session, |&(id, _)| id)
    }

    pub fn open(&mut self, session: SessionId, now: Tick) {
        match self.find(session) {
            Ok(i) => self.live[i].1 = now,
            Err(i) => self.live.insert(i, (session, now)),
        }
    }

    pub fn is_live(&self, session: SessionId) -> bool {
        self.find(session).is_ok()
    }

    /// The leader heard from the session (a request, a ping, a reconnect).
    pub fn touch(&mut self, session: SessionId, now: Tick) {
        if let Ok(i) = self.find(session) {
            self.live[i].1 = now;
        }
    }

    /// The session ended (closed or expired). Returns whether it was live.
    pub fn end(&mut self, session: SessionId) -> bool {
        match self.find(session) {
            Ok(i) => {
                self.live.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The tick the leader last heard from a live session.
    pub fn last_heard(&self, session: SessionId) -> Option<Tick> {
        self.find(session).ok().map(|i| self.live[i].1)
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
                .filter(|&&(_, heard)| now.saturating_sub(heard) > timeout)
                .map(|&(id, _)| id),
        );
    }

    pub fn live(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.live.iter().map(|&(id, _)| id)
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

    /// The sorted vector hashes as the `BTreeMap` it replaced did, so
    /// state fingerprints (and anything keyed by them) did not move.
    #[test]
    fn hashes_like_the_map_it_replaced() {
        use crate::fingerprint::stable_hash;
        let mut t = SessionTracker::default();
        let mut map = std::collections::BTreeMap::new();
        for (id, heard) in [(7, 3), (2, 9), (5, 1)] {
            t.open(id, heard);
            map.insert(id, heard);
        }
        t.end(5);
        map.remove(&5);
        assert_eq!(stable_hash(&t.live), stable_hash(&map));
        assert_eq!(t.live().collect::<Vec<_>>(), vec![2, 7]);
    }
}
