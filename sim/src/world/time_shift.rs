//! States equal up to a shift of the clock.
//!
//! The world keeps absolute ticks: the clock, each client's timer, a
//! pause's start and end, a cut-off client's silence start, a partitioned
//! follower's start, and the leader's last-heard tick per session. Every
//! rule that reads them compares two of them (`timer <= now`,
//! `now - since >= read_timeout`, `now - heard > timeout`, ...), never one
//! against a constant — except `Tick`'s own bound, `now < max_time`, which
//! only keeps runs finite. So two worlds whose times differ by one shift
//! have the same futures, shifted, in a system without that bound.
//! [`World::time_shift_fingerprint`] keys a world by its times *relative
//! to now*, for a checker that looks for cycles: a run that comes back to
//! the same key has come back to the same state, later, and can go round
//! again for ever.
//!
//! A follower partitioned longer than `sync_limit` ago is down whatever the
//! exact start: its start reads as exactly `sync_limit` ago.
//!
//! Op ids are the other counter that never comes back: each request a
//! client sends takes the next one (ZooKeeper's xid). They are only
//! matched for equality (a reply to its request), so a client whose logic
//! can rewrite the op ids it remembers ([`Client::ops_shifted`]) is keyed
//! with every op id — its counter, its requests and replies in flight, its
//! memory — relative to its counter. A client that cannot keeps its ops
//! absolute.
//!
//! What stays absolute, and why that is still sound:
//! - node `ctime`/`mtime` (and the leader's clock in its commit log, where
//!   they come from): only reported in a `Stat`, and no recipe or monitor
//!   reads them (kept absolute, they can only keep two keys apart);
//! - anything a client learnt from [`Cx::now`](crate::Cx::now): a client
//!   that read the absolute time may act on it, so a world where any
//!   handler ever read it ([`ClockRead`]) has no shifted key (`None`).
//!
//! Keeping something absolute never merges two states that differ: a
//! shifted key is equal only where every time the rules compare is equal
//! relative to now, and everything else is equal outright.

use std::hash::{Hash, Hasher};

use crate::client::{Client, OpId};
use crate::fingerprint::{stable_hash, StableHasher};
use crate::proto::Tick;

use super::connection::{Inbound, Outgoing, Pending};
use super::slot::{ClientSlot, Life};
use super::World;

/// Whether some client's handler has read the absolute time. Hashes to
/// nothing while false, so worlds whose clients never read the clock hash
/// as they did before this flag existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockRead(pub bool);

impl Hash for ClockRead {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if self.0 {
            state.write_u8(1);
        }
    }
}

impl<C: Client> World<C> {
    /// Whether some client's handler has read the absolute time
    /// ([`Cx::now`](crate::Cx::now)) in this world's history.
    pub fn clock_read(&self) -> bool {
        self.clock_read.0
    }

    /// A fingerprint equal for two worlds that differ only by a shift of
    /// the clock and, per client, of its op counter (see the module
    /// docs); a function of the shifted world alone. `None` once a client
    /// has read the absolute time.
    ///
    /// Slots are shifted through a per-thread cache keyed by the slot's
    /// remembered hash and the clock: most slots of a state are shared
    /// with states keyed before.
    pub fn time_shift_fingerprint(&self) -> Option<u64> {
        if self.clock_read() {
            return None;
        }
        let now = self.now;
        let rel = |t: Tick| t.wrapping_sub(now);
        let mut h = StableHasher::new();
        self.config.hash(&mut h);
        self.budget.hash(&mut h);
        h.write_usize(self.servers.len());
        for id in 0..self.servers.len() {
            match self.servers[id].partitioned_since {
                None => h.write_u64(self.servers.hash_word_of(id)),
                Some(since) => {
                    // Past `sync_limit` the follower is down for good
                    // (until healed) and how long ago it was cut off no
                    // longer matters: every such start reads as
                    // `sync_limit` ago.
                    let since = if self.server_down(id) {
                        rel(now.wrapping_sub(self.config.sync_limit))
                    } else {
                        rel(since)
                    };
                    let mut server = self.servers[id].clone();
                    server.partitioned_since = Some(since);
                    h.write_u64(stable_hash(&server));
                }
            }
        }
        self.log.hash(&mut h);
        h.write_usize(self.sessions.live.len());
        for &(session, heard) in self.sessions.live.iter() {
            h.write_u64(session as u64);
            h.write_u64(rel(heard));
        }
        h.write_u64(self.sessions.next_id as u64);
        self.sessions.timeouts.hash(&mut h);
        h.write_usize(self.clients.len());
        for id in 0..self.clients.len() {
            let word = self.clients.hash_word_of(id);
            let slot = &self.clients[id];
            h.write_u64(cached(word, now, || stable_hash(&shifted_slot(slot, now))));
        }
        Some(h.finish())
    }
}

/// `slot` with its times relative to `now` and, if its logic can shift
/// its op ids ([`Client::ops_shifted`]), its ops relative to its counter.
fn shifted_slot<C: Client>(slot: &ClientSlot<C>, now: Tick) -> ClientSlot<C> {
    let rel = |t: Tick| t.wrapping_sub(now);
    let mut slot = slot.clone();
    slot.timer = slot.timer.map(rel);
    if let Life::Paused { since, until } = slot.life {
        slot.life = Life::Paused {
            since: rel(since),
            until: rel(until),
        };
    }
    if let Some(cut) = &mut slot.cut {
        cut.since = rel(cut.since);
    }
    let base = slot.next_op;
    if let Some(logic) = slot.logic.ops_shifted(base) {
        let op = |o: &mut OpId| *o = o.wrapping_sub(base);
        slot.logic = logic;
        slot.next_op = 0;
        for out in &mut slot.conn.outbound {
            if let Outgoing::Op { op: o, .. } = out {
                op(o);
            }
        }
        for pending in &mut slot.conn.pending {
            match pending {
                Pending::Read { op: o, .. }
                | Pending::Sync { op: o, .. }
                | Pending::Write { op: o, .. } => op(o),
                Pending::Close { .. } | Pending::Connect { .. } => {}
            }
        }
        for inbound in &mut slot.conn.inbound {
            if let Inbound::Reply { op: o, .. } = inbound {
                op(o);
            }
        }
    }
    slot
}

thread_local! {
    /// (a slot's stable hash, the clock) → the shifted slot's stable hash.
    static SHIFTED: std::cell::RefCell<std::collections::HashMap<(u64, u64), u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Entries the cache of shifted slot hashes holds before it starts over.
const CACHE_LIMIT: usize = 1 << 18;

/// A pure function through a per-thread cache: results never depend on it.
fn cached(part: u64, now: Tick, compute: impl FnOnce() -> u64) -> u64 {
    if let Some(hash) = SHIFTED.with(|c| c.borrow().get(&(part, now)).copied()) {
        return hash;
    }
    let hash = compute();
    SHIFTED.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert((part, now), hash);
    });
    hash
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use crate::demo;
    use crate::Event;

    /// Along random demo runs: a tick taken where nothing waits on time
    /// keeps the shifted key (the plain fingerprint moves with the clock);
    /// any other step that changes the world changes the shifted key too
    /// unless it changed nothing but times.
    #[test]
    fn an_idle_tick_keeps_the_shifted_key_and_other_ticks_do_not() {
        let (mut idle, mut timed) = (0, 0);
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut world = demo::world();
            let (mut enabled, mut log) = (Vec::new(), Vec::new());
            for _ in 0..400 {
                enabled.clear();
                world.enabled(&mut enabled);
                if enabled.is_empty() {
                    break;
                }
                let event = demo::pick(&mut rng, &mut enabled);
                let before = world.clone();
                world.step(&event, &mut log);
                if event != Event::Tick || before.clock_read() {
                    continue;
                }
                assert_ne!(before.fingerprint(), world.fingerprint());
                let same = before.time_shift_fingerprint() == world.time_shift_fingerprint();
                if before.waits_on_time() {
                    timed += 1;
                    assert!(!same, "a tick that matters must change the shifted key");
                } else {
                    idle += 1;
                    assert!(same, "an idle tick must keep the shifted key");
                }
            }
        }
        assert!(idle > 0 && timed > 0, "idle {idle}, timed {timed}");
    }

    /// The key is only sound if worlds with equal keys have the same
    /// futures: from a world and the same world one idle tick later, the
    /// same random choices keep the keys equal step after step (until the
    /// later one's clock hits `max_time`, the bound the key ignores).
    #[test]
    fn worlds_with_equal_keys_have_the_same_futures() {
        let mut compared = 0;
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut world = demo::world();
            let (mut enabled, mut log) = (Vec::new(), Vec::new());
            // Walk to a world where a tick is idle, then split.
            let mut split = None;
            for _ in 0..300 {
                enabled.clear();
                world.enabled(&mut enabled);
                if enabled.is_empty() {
                    break;
                }
                if enabled.contains(&Event::Tick) && !world.waits_on_time() && !world.clock_read() {
                    let mut later = world.clone();
                    later.step(&Event::Tick, &mut log);
                    split = Some(later);
                    break;
                }
                let event = demo::pick(&mut rng, &mut enabled);
                world.step(&event, &mut log);
            }
            let Some(mut later) = split else { continue };
            let mut other = Vec::new();
            let mut keyed = true;
            for _ in 0..300 {
                enabled.clear();
                world.enabled(&mut enabled);
                other.clear();
                later.enabled(&mut other);
                if later.now() + 1 >= later.config().max_time || enabled.is_empty() {
                    break;
                }
                assert_eq!(enabled, other, "equal keys, different choices");
                let event = demo::pick(&mut rng, &mut enabled);
                let zxid = world.last_zxid();
                world.step(&event, &mut log);
                later.step(&event, &mut log);
                // A write stamps its node with the absolute time (ctime),
                // which the key keeps: from then on the keys may differ
                // (the key is incomplete there, never unsound), and only
                // the choices are compared.
                if world.last_zxid() == zxid && keyed {
                    assert_eq!(
                        world.time_shift_fingerprint(),
                        later.time_shift_fingerprint()
                    );
                    compared += 1;
                } else {
                    keyed = false;
                }
            }
        }
        assert!(compared > 20, "only {compared} keys compared");
    }
}
