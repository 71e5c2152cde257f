//! The leader's session tracker (`SessionTrackerImpl`): which sessions are
//! alive and when the leader last heard from each (S22).
//!
//! The live sessions are a vector sorted by id rather than a `BTreeMap`:
//! a handful of entries, copied with every explored state, where a B-tree
//! leaf costs a few hundred bytes and a vector exactly what it holds. It
//! hashes exactly as the map did (length, then each `(id, heard)` in id
//! order), so fingerprints are unchanged.

use std::hash::{Hash, Hasher};

use crate::ids::SESSION_ID_BASE;
use crate::proto::{SessionId, Tick};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionTracker {
    /// Live sessions and the tick the leader last heard from each.
    pub(super) live: Vec<(SessionId, Tick)>,
    pub(super) next_id: SessionId,
    /// Sessions whose timeout was negotiated on their own (clients that
    /// connect at run time, [`crate::World::attach`]); every other session
    /// has the world's `Config::session_timeout`.
    pub(super) timeouts: OwnTimeouts,
}

/// Per-session negotiated timeouts, in ticks, by session id. Hashes to
/// nothing while empty, so worlds without run-time clients hash as they
/// did before it existed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnTimeouts(pub(super) Vec<(SessionId, Tick)>);

impl Hash for OwnTimeouts {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

impl OwnTimeouts {
    fn get(&self, session: SessionId) -> Option<Tick> {
        self.0
            .binary_search_by_key(&session, |&(id, _)| id)
            .ok()
            .map(|i| self.0[i].1)
    }
    fn set(&mut self, session: SessionId, timeout: Tick) {
        match self.0.binary_search_by_key(&session, |&(id, _)| id) {
            Ok(i) => self.0[i].1 = timeout,
            Err(i) => self.0.insert(i, (session, timeout)),
        }
    }
    fn remove(&mut self, session: SessionId) {
        if let Ok(i) = self.0.binary_search_by_key(&session, |&(id, _)| id) {
            self.0.remove(i);
        }
    }
}

impl Default for SessionTracker {
    fn default() -> Self {
        SessionTracker {
            live: Vec::new(),
            next_id: SESSION_ID_BASE,
            timeouts: OwnTimeouts::default(),
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
                self.timeouts.remove(session);
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
    ///
    /// `timeout` is the world's; a session with its own negotiated
    /// timeout ([`SessionTracker::set_timeout`]) uses that instead.
    pub fn overdue(&self, now: Tick, timeout: Tick, out: &mut Vec<SessionId>) {
        if self.timeouts.0.is_empty() {
            out.extend(
                self.live
                    .iter()
                    .filter(|&&(_, heard)| now.saturating_sub(heard) > timeout)
                    .map(|&(id, _)| id),
            );
            return;
        }
        out.extend(
            self.live
                .iter()
                .filter(|&&(id, heard)| {
                    now.saturating_sub(heard) > self.timeouts.get(id).unwrap_or(timeout)
                })
                .map(|&(id, _)| id),
        );
    }

    /// Give a live session its own negotiated timeout (in ticks).
    pub fn set_timeout(&mut self, session: SessionId, timeout: Tick) {
        if self.is_live(session) {
            self.timeouts.set(session, timeout);
        }
    }

    /// The session's own negotiated timeout, if it has one.
    pub fn own_timeout(&self, session: SessionId) -> Option<Tick> {
        self.timeouts.get(session)
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

    #[test]
    fn a_session_with_its_own_timeout_expires_on_it() {
        let mut t = SessionTracker::default();
        let a = t.allocate();
        let b = t.allocate();
        t.open(a, 0);
        t.open(b, 0);
        t.set_timeout(b, 3);
        let mut out = Vec::new();
        t.overdue(4, 20, &mut out);
        assert_eq!(out, vec![b], "b's own 3 ticks, a's world-wide 20");
        assert!(t.end(b));
        assert_eq!(t.own_timeout(b), None, "ending forgets it");
        assert_eq!(t.timeouts, OwnTimeouts::default());
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
