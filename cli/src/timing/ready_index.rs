//! The timed scheduler's enabled events, kept in ready-time order from one
//! step to the next.
//!
//! As a [`Chooser`](zkcheck::explore::Chooser), [`TimedChooser`] is handed the
//! world's whole enabled list and computes a ready time for each event:
//! O(clients) work per step, which at a thousand clients (a release wakes
//! a thousand waiters, so a thousand receives are enabled at once) was
//! most of a run's time. [`ReadyIndex`] keeps the same events ordered by
//! ready time and revisits only the clients a step wrote
//! ([`zksim::World::step_noting`]), so that
//! [`drive_timed`](super::drive::drive_timed) finds the earliest event in
//! O(log clients). Both must choose the same event at every step:
//! `timing::tests` drives both over the same runs and compares schedules.
//!
//! An event's key is the chooser's: (ready time, arrival, the event), the
//! event breaking ties in the world's listing order.

use std::collections::BTreeSet;

use zkrecipes::RecipeSet;
use zksim::{ClientId, ClientReadiness, Event, ServerId, World};

use super::{TimedChooser, TICK_US};

/// (ready time, arrival, event): the smallest is fired next.
pub(super) type Key = (u64, u64, Event);

/// See the module docs.
pub(super) struct ReadyIndex {
    /// Per client, what it allowed when last visited.
    readiness: Vec<ClientReadiness>,
    /// Per server: the clients whose next request it can take, by arrival
    /// (a server is one queue: all of them are ready once it is free).
    requests: Vec<BTreeSet<(u64, ClientId)>>,
    /// Where each client's request is filed: (server, arrival).
    request_at: Vec<Option<(ServerId, u64)>>,
    receives: Floored,
    timers: Floored,
    connecting: BTreeSet<ClientId>,
    disconnects_pending: usize,
    not_quiescent: usize,
}

impl ReadyIndex {
    /// The index of `world`'s enabled events, with `chooser`'s stamps.
    pub(super) fn new<C: RecipeSet>(world: &World<C>, chooser: &TimedChooser) -> Self {
        let mut index = ReadyIndex {
            readiness: Vec::new(),
            requests: Vec::new(),
            request_at: Vec::new(),
            receives: Floored::default(),
            timers: Floored::default(),
            connecting: BTreeSet::new(),
            disconnects_pending: 0,
            not_quiescent: 0,
        };
        index.rebuild(world, chooser);
        index
    }

    /// Visit every client again (after a tick or a fault: they change what
    /// the clock and the servers allow every client).
    pub(super) fn rebuild<C: RecipeSet>(&mut self, world: &World<C>, chooser: &TimedChooser) {
        let clients = world.num_clients();
        self.readiness = vec![ClientReadiness::default(); clients];
        self.requests = vec![BTreeSet::new(); world.num_servers()];
        self.request_at = vec![None; clients];
        self.receives = Floored::new(clients);
        self.timers = Floored::new(clients);
        self.connecting.clear();
        self.disconnects_pending = 0;
        self.not_quiescent = 0;
        self.set_floors(chooser);
        for client in 0..clients {
            let readiness = world.client_readiness(client);
            self.file(world, chooser, client, readiness);
        }
    }

    /// Visit `clients` again (those a step wrote, and its actor) and move
    /// the floors to the chooser's clock.
    pub(super) fn refresh<C: RecipeSet>(
        &mut self,
        world: &World<C>,
        chooser: &TimedChooser,
        clients: &[ClientId],
    ) {
        self.set_floors(chooser);
        for &client in clients {
            self.unfile(client);
            let readiness = world.client_readiness(client);
            self.file(world, chooser, client, readiness);
        }
    }

    /// Every client is quiescent (the servers are not looked at).
    pub(super) fn clients_quiescent(&self) -> bool {
        self.not_quiescent == 0
    }

    /// Some event other than a tick or a fault is enabled.
    pub(super) fn has_progress<C: RecipeSet>(&self, world: &World<C>) -> bool {
        self.requests.iter().any(|lane| !lane.is_empty())
            || !self.receives.is_empty()
            || !self.timers.is_empty()
            || (0..world.num_servers()).any(|s| world.apply_enabled(s))
            || self.first_connect(world).is_some()
    }

    /// The enabled event (not a fault) with the smallest key.
    pub(super) fn best<C: RecipeSet>(
        &self,
        world: &World<C>,
        chooser: &TimedChooser,
    ) -> Option<Key> {
        let now = chooser.now_us();
        let mut best: Option<Key> = None;
        let mut consider = |key: Key| {
            if best.as_ref().is_none_or(|b| key < *b) {
                best = Some(key);
            }
        };
        for (server, lane) in self.requests.iter().enumerate() {
            if let Some(&(arrival, client)) = lane.first() {
                let ready = arrival.max(chooser.server_free_at(server)).max(now);
                consider((ready, arrival, Event::Request { client }));
            }
        }
        for server in 0..world.num_servers() {
            if world.apply_enabled(server) {
                let event = Event::Apply { server };
                let (ready, arrival) = chooser.ready(world, &event);
                consider((ready, arrival, event));
            }
        }
        if let Some((ready, arrival, client)) = self.receives.best() {
            consider((ready.max(now), arrival, Event::Receive { client }));
        }
        if let Some((ready, arrival, client)) = self.timers.best() {
            consider((ready.max(now), arrival, Event::Timer { client }));
        }
        // Every connect has the same ready time: the first one listed wins.
        if let Some(event) = self.first_connect(world) {
            let (ready, arrival) = chooser.ready(world, &event);
            consider((ready, arrival, event));
        }
        if world.now() < world.config().max_time && self.disconnects_pending == 0 {
            let (ready, arrival) = chooser.ready(world, &Event::Tick);
            consider((ready, arrival, Event::Tick));
        }
        best
    }

    fn first_connect<C: RecipeSet>(&self, world: &World<C>) -> Option<Event> {
        self.connecting.iter().find_map(|&client| {
            (0..world.num_servers())
                .find(|&server| world.connect_enabled(client, server))
                .map(|server| Event::Connect { client, server })
        })
    }

    /// Receives and timers are ready no earlier than now, nor (with one
    /// client thread) before that thread is free.
    fn set_floors(&mut self, chooser: &TimedChooser) {
        let now = chooser.now_us();
        let floor = if chooser.shares_client_cpu() {
            chooser.client_free_at(0).max(now)
        } else {
            now
        };
        self.receives.set_floor(floor);
        self.timers.set_floor(floor);
    }

    fn unfile(&mut self, client: ClientId) {
        let old = self.readiness[client];
        if let Some((server, arrival)) = self.request_at[client].take() {
            self.requests[server].remove(&(arrival, client));
        }
        self.receives.remove(client);
        self.timers.remove(client);
        self.connecting.remove(&client);
        self.disconnects_pending -= usize::from(old.disconnect_pending);
        self.not_quiescent -= usize::from(!old.quiescent);
    }

    fn file<C: RecipeSet>(
        &mut self,
        world: &World<C>,
        chooser: &TimedChooser,
        client: ClientId,
        readiness: ClientReadiness,
    ) {
        // A client's own floor: when it is free (with one client thread,
        // that floor is everyone's: `set_floors`).
        let own = |at: u64| {
            if chooser.shares_client_cpu() {
                at
            } else {
                at.max(chooser.client_free_at(client))
            }
        };
        if readiness.request {
            let server = world.server_of(client).unwrap_or(0);
            let arrival = chooser.request_arrival(client);
            self.requests[server].insert((arrival, client));
            self.request_at[client] = Some((server, arrival));
        }
        if readiness.receive {
            let arrival = chooser.message_arrival(client);
            self.receives.insert(client, own(arrival), arrival);
        }
        if readiness.timer {
            let now = chooser.now_us();
            let due = world.timer_of(client).map_or(now, |t| t * TICK_US);
            self.timers.insert(client, own(due), due);
        }
        if readiness.connecting {
            self.connecting.insert(client);
        }
        self.disconnects_pending += usize::from(readiness.disconnect_pending);
        self.not_quiescent += usize::from(!readiness.quiescent);
        self.readiness[client] = readiness;
    }
}

/// One event per client, each ready at the later of its own time and a
/// floor common to all (the clock; with one client thread, when it is
/// free), ties broken by arrival, then client.
///
/// Below the floor every event is ready at the floor, so its order is by
/// arrival alone: those events are kept apart, and move over as the floor
/// rises (it falls only when a connect frees the one client thread early;
/// then they move back).
#[derive(Default)]
struct Floored {
    floor: u64,
    /// Ready above the floor: by (ready, arrival, client).
    above: BTreeSet<(u64, u64, ClientId)>,
    /// Ready at the floor: by (arrival, client).
    at_floor: BTreeSet<(u64, ClientId)>,
    /// Per client: (own ready time, arrival), if filed.
    entry: Vec<Option<(u64, u64)>>,
}

impl Floored {
    fn new(clients: usize) -> Self {
        Floored {
            entry: vec![None; clients],
            ..Floored::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.above.is_empty() && self.at_floor.is_empty()
    }

    fn insert(&mut self, client: ClientId, ready: u64, arrival: u64) {
        self.entry[client] = Some((ready, arrival));
        if ready <= self.floor {
            self.at_floor.insert((arrival, client));
        } else {
            self.above.insert((ready, arrival, client));
        }
    }

    fn remove(&mut self, client: ClientId) {
        if let Some((ready, arrival)) = self.entry[client].take() {
            if ready <= self.floor {
                self.at_floor.remove(&(arrival, client));
            } else {
                self.above.remove(&(ready, arrival, client));
            }
        }
    }

    fn set_floor(&mut self, floor: u64) {
        if floor >= self.floor {
            self.floor = floor;
            while let Some(&(ready, arrival, client)) = self.above.first() {
                if ready > floor {
                    break;
                }
                self.above.pop_first();
                self.at_floor.insert((arrival, client));
            }
        } else {
            self.floor = floor;
            let entry = &self.entry;
            let risen: Vec<(u64, ClientId)> = self
                .at_floor
                .iter()
                .copied()
                .filter(|&(_, client)| entry[client].is_some_and(|(ready, _)| ready > floor))
                .collect();
            for (arrival, client) in risen {
                self.at_floor.remove(&(arrival, client));
                if let Some((ready, _)) = self.entry[client] {
                    self.above.insert((ready, arrival, client));
                }
            }
        }
    }

    /// (ready time, arrival, client) of the earliest.
    fn best(&self) -> Option<(u64, u64, ClientId)> {
        if let Some(&(arrival, client)) = self.at_floor.first() {
            return Some((self.floor, arrival, client));
        }
        self.above.first().copied()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Floored;

    #[derive(Clone, Debug)]
    enum Op {
        Insert {
            client: usize,
            ready: u64,
            arrival: u64,
        },
        Remove {
            client: usize,
        },
        Floor(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..6usize, 0..40u64, 0..40u64).prop_map(|(client, ready, arrival)| Op::Insert {
                client,
                ready,
                arrival
            }),
            (0..6usize).prop_map(|client| Op::Remove { client }),
            (0..40u64).prop_map(Op::Floor),
        ]
    }

    proptest! {
        /// `Floored::best` is the smallest (max(ready, floor), arrival,
        /// client) among the filed events, whatever the floor did (rose or,
        /// as a connect makes it, fell).
        #[test]
        fn best_is_the_smallest_floored_key(ops in proptest::collection::vec(op(), 0..60)) {
            let mut floored = Floored::new(6);
            let mut plain: Vec<Option<(u64, u64)>> = vec![None; 6];
            let mut floor = 0;
            for op in ops {
                match op {
                    Op::Insert { client, ready, arrival } => {
                        floored.remove(client);
                        floored.insert(client, ready, arrival);
                        plain[client] = Some((ready, arrival));
                    }
                    Op::Remove { client } => {
                        floored.remove(client);
                        plain[client] = None;
                    }
                    Op::Floor(f) => {
                        floored.set_floor(f);
                        floor = f;
                    }
                }
                let expected = plain
                    .iter()
                    .enumerate()
                    .filter_map(|(c, e)| e.map(|(r, a)| (r.max(floor), a, c)))
                    .min();
                prop_assert_eq!(floored.best(), expected);
                prop_assert_eq!(floored.is_empty(), expected.is_none());
            }
        }
    }
}
