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

use crate::client::Client;
use crate::proto::Tick;

use super::slot::Life;
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

    /// This world with every time the rules compare made relative to the
    /// clock (`t - now`, wrapping: a bijection, so the key loses nothing)
    /// and the clock at 0. Parts without times stay shared.
    pub fn time_shifted(&self) -> World<C> {
        let base = self.now;
        let rel = |t: Tick| t.wrapping_sub(base);
        let mut world = self.clone();
        world.now = 0;
        for id in 0..self.clients.len() {
            let slot = &self.clients[id];
            let timed = slot.timer.is_some()
                || matches!(slot.life, Life::Paused { .. })
                || slot.cut.is_some();
            if !timed {
                continue;
            }
            let slot = &mut world.clients[id];
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
        }
        for id in 0..self.servers.len() {
            if let Some(since) = self.servers[id].partitioned_since {
                // Past `sync_limit` the follower is down for good (until
                // healed) and how long ago it was cut off no longer
                // matters: every such start reads as `sync_limit` ago.
                let since = if self.server_down(id) {
                    rel(base.wrapping_sub(self.config.sync_limit))
                } else {
                    rel(since)
                };
                world.servers[id].partitioned_since = Some(since);
            }
        }
        for heard in world.sessions.live.values_mut() {
            *heard = rel(*heard);
        }
        world
    }

    /// The fingerprint of [`World::time_shifted`]: equal for two worlds
    /// that differ only by a shift of the clock (see the module docs).
    /// `None` once a client has read the absolute time.
    pub fn time_shift_fingerprint(&self) -> Option<u64> {
        if self.clock_read() {
            return None;
        }
        Some(self.time_shifted().fingerprint())
    }
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
