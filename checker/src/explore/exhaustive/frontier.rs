//! BFS's frontier: a level of states kept taken apart, as indices into
//! tables of distinct parts.
//!
//! The states of a level differ in one client or one step each, and their
//! big parts recur across thousands of them: on the reference BFS the
//! widest level held 87,816 states with 1,680 distinct client slots, 696
//! distinct servers and about a hundred distinct rests (clock, log,
//! session table, monitors). A state kept whole cost ~470 bytes (its boxed
//! model, its slot, server and session vectors, the log's emptied buffer);
//! kept as one key and a row of `u32` indices it costs
//! `8 + 4 · (1 + clients + servers)` bytes, plus one index for its
//! (interned) sleep set under partial-order reduction. This is SPIN's
//! "collapse" compression; the tables live as long as the level and
//! equality, not the hash, decides what is shared, so no state's identity
//! changes between kept and expanded. Rests are equal by identity, which
//! leaves out what monitors only measure: a kept state may come back with
//! another equal state's measurements, just as visited-state dedup keeps
//! the first of two equal states.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use nohash_hasher::BuildNoHashHasher;
use zkrecipes::RecipeSet;
use zksim::fingerprint::stable_hash;
use zksim::{SharedServer, SharedSlot};

use super::expand::Queued;
use super::por::Asleep;
use crate::state::SystemState;

/// A level of states (see the module docs), in the order they were pushed.
pub(super) struct Frontier<C: RecipeSet> {
    keys: Vec<u64>,
    /// Each state's row: the index of its rest, of its client slots, of
    /// its servers and, under partial-order reduction, of its sleep set
    /// and `only` mask ([`Queued`]).
    rows: Vec<u32>,
    /// How many slots and servers a world has (fixed for a run).
    shape: Option<(usize, usize)>,
    /// Models with their world's slots and servers taken out.
    rests: Table<SystemState<C>>,
    slots: Table<SharedSlot<C>>,
    servers: Table<SharedServer>,
    /// Sleep sets with `only` masks; `None` without partial-order
    /// reduction (both are then always empty).
    reductions: Option<Table<Reduced>>,
    taken: (Vec<SharedSlot<C>>, Vec<SharedServer>),
}

impl<C: RecipeSet> Frontier<C> {
    /// An empty level; `por`: states carry sleep sets.
    pub fn new(por: bool) -> Self {
        Frontier {
            keys: Vec::new(),
            rows: Vec::new(),
            shape: None,
            rests: Table::default(),
            slots: Table::default(),
            servers: Table::default(),
            reductions: por.then(Table::default),
            taken: (Vec::new(), Vec::new()),
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keep `node` as the level's last state.
    pub fn push(&mut self, node: Queued<C>) {
        let Queued {
            mut model,
            key,
            sleep,
            only,
        } = node;
        let (slots, servers) = &mut self.taken;
        model.world.take_parts(slots, servers);
        let shape = *self.shape.get_or_insert((slots.len(), servers.len()));
        assert_eq!(
            shape,
            (slots.len(), servers.len()),
            "a world's clients and servers are fixed for a run"
        );
        let rest = stable_hash(&*model);
        self.rows.push(self.rests.intern(*model, rest));
        for slot in slots.drain(..) {
            let hash = slot.hash_word();
            self.rows.push(self.slots.intern(slot, hash));
        }
        for server in servers.drain(..) {
            let hash = server.hash_word();
            self.rows.push(self.servers.intern(server, hash));
        }
        match &mut self.reductions {
            Some(reductions) => {
                let reduced = (sleep, only);
                let hash = stable_hash(&reduced);
                self.rows.push(reductions.intern(reduced, hash));
            }
            None => debug_assert!(sleep.is_empty() && only.is_none()),
        }
        self.keys.push(key);
    }

    /// Indices in a state's row.
    fn width(&self) -> usize {
        let (clients, servers) = self.shape.unwrap_or_default();
        1 + clients + servers + usize::from(self.reductions.is_some())
    }

    /// State `i`, put back together.
    pub fn get(&self, i: usize) -> Queued<C> {
        let width = self.width();
        let row = &self.rows[i * width..][..width];
        let (clients, servers) = self.shape.unwrap_or_default();
        let mut model = Box::new(self.rests.values[row[0] as usize].clone());
        let slots = &row[1..][..clients];
        let servers = &row[1 + clients..][..servers];
        model.world.put_parts(
            slots.iter().map(|&s| self.slots.values[s as usize].clone()),
            servers
                .iter()
                .map(|&s| self.servers.values[s as usize].clone()),
        );
        let (sleep, only) = match &self.reductions {
            Some(reductions) => reductions.values[row[width - 1] as usize].clone(),
            None => (Vec::new(), None),
        };
        Queued {
            model,
            key: self.keys[i],
            sleep,
            only,
        }
    }

    /// Keep only the steps of state `i`'s sleep set whose bits are in
    /// `mask` (nothing to do without partial-order reduction).
    pub fn narrow_sleep(&mut self, i: usize, mask: u64) {
        let width = self.width();
        let Some(reductions) = &mut self.reductions else {
            return;
        };
        let cell = &mut self.rows[(i + 1) * width - 1];
        let (mut sleep, only) = reductions.values[*cell as usize].clone();
        sleep.retain(|a| a.canon & mask != 0);
        let reduced = (sleep, only);
        let hash = stable_hash(&reduced);
        *cell = reductions.intern(reduced, hash);
    }
}

/// A state's sleep set and `only` mask ([`Queued`]).
type Reduced = (Vec<Asleep>, Option<u64>);

/// Distinct values, each kept once and named by its index.
struct Table<T> {
    values: Vec<T>,
    /// Hash → the first value with it; later values with the same hash and
    /// a different value (a 64-bit collision) are in `collided`.
    first: HashMap<u64, u32, BuildNoHashHasher<u64>>,
    collided: HashMap<u64, Vec<u32>, BuildNoHashHasher<u64>>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            values: Vec::new(),
            first: HashMap::default(),
            collided: HashMap::default(),
        }
    }
}

impl<T: Eq> Table<T> {
    /// The index of the kept value equal to `value` (whose hash is `hash`),
    /// keeping it if there is none.
    fn intern(&mut self, value: T, hash: u64) -> u32 {
        let next = u32::try_from(self.values.len()).expect("fewer than 2^32 distinct parts");
        match self.first.entry(hash) {
            Entry::Vacant(entry) => {
                entry.insert(next);
            }
            Entry::Occupied(entry) => {
                let at = *entry.get();
                if self.values[at as usize] == value {
                    return at;
                }
                let others = self.collided.entry(hash).or_default();
                if let Some(&i) = others.iter().find(|&&i| self.values[i as usize] == value) {
                    return i;
                }
                others.push(next);
            }
        }
        self.values.push(value);
        next
    }
}

#[cfg(test)]
mod tests {
    use zksim::world::footprint::Footprint;

    use super::super::expand::Queued;
    use super::super::por::Asleep;
    use super::{Frontier, Table};
    use crate::scenario::Scenario;
    use crate::state::SystemState;

    const TWO_CLIENTS: &str = r#"
name = "frontier"
recipe = "sequential"
clients = 2
root = "/lock"
[ensemble]
servers = 2
[faults]
connection_drops = 1
"#;

    /// Three levels of a search's states, every child of every state.
    fn states() -> Vec<SystemState> {
        let scenario = Scenario::parse(TWO_CLIENTS, "frontier.toml").unwrap();
        let mut level = vec![SystemState::for_search(&scenario)];
        let mut all = level.clone();
        let (mut enabled, mut log) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let mut next = Vec::new();
            for model in &level {
                enabled.clear();
                model.enabled(&mut enabled);
                for event in &enabled {
                    let mut child = model.clone();
                    if child.step(event, &mut log).is_ok() {
                        next.push(child);
                    }
                }
            }
            all.extend(next.iter().cloned());
            level = next;
        }
        all
    }

    fn asleep(canon: u64) -> Asleep {
        Asleep {
            event: zksim::Event::Tick,
            canon,
            footprint: Footprint::default(),
        }
    }

    /// Every state kept comes back equal, with its key, sleep set and
    /// `only` mask; narrowing one state's sleep set (shared in the table
    /// with others equal to it) narrows that state's alone.
    #[test]
    fn a_kept_state_comes_back_equal_and_narrowing_touches_only_its_own_sleep_set() {
        let states = states();
        assert!(states.len() > 50, "{} states", states.len());
        for por in [false, true] {
            let mut frontier = Frontier::new(por);
            let sleep_of = |i: usize| match por {
                true => (0..i as u64 % 3).map(|b| asleep(1 << b)).collect(),
                false => Vec::new(),
            };
            let only_of = |i: usize| (por && i % 5 == 0).then_some(7);
            for (i, model) in states.iter().enumerate() {
                frontier.push(Queued {
                    model: Box::new(model.clone()),
                    key: i as u64 * 31,
                    sleep: sleep_of(i),
                    only: only_of(i),
                });
            }
            assert_eq!(frontier.len(), states.len());
            if por {
                frontier.narrow_sleep(5, 1);
            }
            for (i, model) in states.iter().enumerate() {
                let node = frontier.get(i);
                assert_eq!(*node.model, *model, "state {i}");
                assert_eq!(node.model.fingerprint(), model.fingerprint());
                assert_eq!(node.key, i as u64 * 31);
                let mut sleep = sleep_of(i);
                if por && i == 5 {
                    sleep.retain(|a| a.canon & 1 != 0);
                }
                assert_eq!(node.sleep, sleep, "state {i}");
                assert_eq!(node.only, only_of(i));
            }
            // Kept taken apart: far fewer distinct parts than states.
            assert!(frontier.slots.values.len() < states.len());
            assert!(frontier.rests.values.len() < states.len());
        }
    }

    /// Equal values share an index; unequal values with the same hash
    /// (a collision, forced here) do not.
    #[test]
    fn a_table_keeps_each_distinct_value_once_even_when_hashes_collide() {
        let mut table = Table::default();
        assert_eq!(table.intern("a", 1), 0);
        assert_eq!(table.intern("b", 1), 1);
        assert_eq!(table.intern("c", 2), 2);
        assert_eq!(table.intern("a", 1), 0);
        assert_eq!(table.intern("b", 1), 1);
        assert_eq!(table.intern("d", 1), 3);
        assert_eq!(table.intern("d", 1), 3);
        assert_eq!(table.values, ["a", "b", "c", "d"]);
    }
}
