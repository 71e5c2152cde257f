//! The timed scheduler: a [`Chooser`] that fires the world's enabled event
//! with the earliest ready time in model microseconds.
//!
//! What it keeps beside the world (the world itself is untimed):
//! - per client, when each request waiting on its connection reaches the
//!   server and when each message waiting for it reaches the client;
//! - per server, when it is next free (a server is one FIFO queue: a
//!   request is served once the ones before it are, so a herd of requests
//!   makes everyone behind it wait) and how long it was busy;
//! - when the leader committed each transaction (a follower applies it
//!   one peer latency later, once free).
//!
//! Ready times: a `Request` when its request has arrived and the server is
//! free; an `Apply` when the commit has reached the follower and it is
//! free; a `Receive` when the message has arrived and the client is free;
//! a `Timer` at its due tick; a `Tick` at the next tick boundary
//! ([`TICK_US`]); a `Connect` one round trip from now. Faults arrive as a
//! Poisson process (mean [`Timing::fault_interval_us`]) and strike an
//! enabled fault drawn at random. Ties go to the request that arrived
//! first, then to the world's event order: same seed, same schedule.
//!
//! After each step the scheduler compares the world's queues with its own
//! stamps: new requests a client sent are stamped with their arrival at the
//! server; new messages a server step produced are stamped with their
//! arrival at the client — watch notifications first, one
//! [`Timing::notify_us`] of server time each, then the reply (ZooKeeper's
//! `FinalRequestProcessor` triggers the watches before it answers); a
//! write's come [`Timing::commit_delay_us`] after its service, a delay
//! that holds up no other request. A server's busy time is the service
//! times and notification costs it was charged.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zkcheck::explore::Chooser;
use zkcheck::scenario::Timing;
use zkcheck::state::SystemState;
use zkrecipes::RecipeSet;
use zksim::{Event, World, Zxid};

use super::TICK_US;

/// The step the scheduler chose last, settled at the next call.
#[derive(Clone, Debug)]
struct Chosen {
    event: Event,
    /// When it started (model µs).
    start: u64,
    /// When its work was done (start + its cost).
    done: u64,
    /// When what it produced leaves (a write's reply and notifications
    /// wait [`Timing::commit_delay_us`] more).
    out: u64,
}

/// See the module docs.
pub struct TimedChooser {
    timing: Timing,
    rng: ChaCha8Rng,
    now: u64,
    clock: Rc<Cell<u64>>,
    started: bool,
    /// Per client: arrival at the server of each request on its connection.
    outbound: Vec<VecDeque<u64>>,
    /// Per client: arrival at the client of each message waiting for it.
    inbound: Vec<VecDeque<u64>>,
    /// When each client (or, with a shared client CPU, the one client
    /// thread: index 0) is next free.
    client_free: Vec<u64>,
    server_free: Vec<u64>,
    busy: Vec<u64>,
    /// When the leader committed each zxid not yet applied everywhere.
    commits: BTreeMap<Zxid, u64>,
    known_zxid: Zxid,
    chosen: Option<Chosen>,
    next_fault: u64,
    notifications: u64,
    /// `0..clients`: what a step may have changed when the caller does
    /// not say ([`Chooser::choose`] settles every client).
    all_clients: Vec<usize>,
}

impl TimedChooser {
    pub fn new(timing: Timing, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let next_fault = exponential(&mut rng, timing.fault_interval_us);
        TimedChooser {
            timing,
            rng,
            now: 0,
            clock: Rc::new(Cell::new(0)),
            started: false,
            outbound: Vec::new(),
            inbound: Vec::new(),
            client_free: Vec::new(),
            server_free: Vec::new(),
            busy: Vec::new(),
            commits: BTreeMap::new(),
            known_zxid: 0,
            chosen: None,
            next_fault,
            notifications: 0,
            all_clients: Vec::new(),
        }
    }

    /// The model time of the step chosen last, shared: a run's `on_step`
    /// reads it to time what the step did.
    pub fn clock(&self) -> Rc<Cell<u64>> {
        Rc::clone(&self.clock)
    }

    /// Model time now (µs).
    pub fn now_us(&self) -> u64 {
        self.now
    }

    /// How long each server was busy (µs), by server.
    pub fn busy_us(&self) -> &[u64] {
        &self.busy
    }

    /// Watch notifications the servers sent.
    pub fn notifications(&self) -> u64 {
        self.notifications
    }

    /// Settle the last step (call once the run is over, before reading
    /// [`TimedChooser::busy_us`] and [`TimedChooser::notifications`]).
    pub fn finish<C: RecipeSet>(&mut self, world: &World<C>) {
        if self.started {
            self.settle_all(world);
        }
    }

    /// Which entry of `client_free` the client uses.
    fn cpu(&self, client: usize) -> usize {
        if self.timing.shared_client_cpu {
            0
        } else {
            client
        }
    }

    /// `value` with the model's jitter applied (± `jitter_percent`, seeded).
    fn jitter(&mut self, value: u64) -> u64 {
        let j = self.timing.jitter_percent.min(100);
        if j == 0 || value == 0 {
            return value;
        }
        let r = self.rng.random_range(0..=2 * j);
        value * (100 - j + r) / 100
    }

    pub(super) fn start<C: RecipeSet>(&mut self, world: &World<C>) {
        let clients = world.num_clients();
        self.all_clients = (0..clients).collect();
        let servers = world.num_servers();
        self.outbound = vec![VecDeque::new(); clients];
        self.inbound = vec![VecDeque::new(); clients];
        self.client_free = vec![0; clients.max(1)];
        self.server_free = vec![0; servers];
        self.busy = vec![0; servers];
        self.known_zxid = world.last_zxid();
        for c in 0..clients {
            for _ in 0..world.outbound_len(c) {
                let arrival = self.jitter(self.timing.latency_us);
                self.outbound[c].push_back(arrival);
            }
            for _ in 0..world.inbound_len(c) {
                self.inbound[c].push_back(0);
            }
        }
        self.started = true;
    }

    /// [`TimedChooser::settle`] over every client.
    fn settle_all<C: RecipeSet>(&mut self, world: &World<C>) {
        let all = std::mem::take(&mut self.all_clients);
        self.settle(world, &all);
        self.all_clients = all;
    }

    /// Bring the stamps in line with the world after the chosen step.
    /// `clients` (ascending) are the only ones whose queues it may have
    /// changed (all of them, or those it wrote: [`zksim::World::step_noting`]);
    /// jitter is drawn in client order either way, so both give the same
    /// stamps.
    pub(super) fn settle<C: RecipeSet>(&mut self, world: &World<C>, clients: &[usize]) {
        let Some(chosen) = self.chosen.take() else {
            return;
        };
        let server_step = match chosen.event {
            Event::Request { client } => Some(world.server_of(client).unwrap_or(0)),
            Event::Apply { server } => Some(server),
            _ => None,
        };
        let actor = match chosen.event {
            Event::Request { client }
            | Event::Receive { client }
            | Event::Timer { client }
            | Event::Connect { client, .. } => Some(client),
            _ => None,
        };
        let last = world.last_zxid();
        if last > self.known_zxid {
            // Zxids count up by one; a jump (new epoch) stamps only the last.
            let from = if last - self.known_zxid > 4096 {
                last
            } else {
                self.known_zxid + 1
            };
            for z in from..=last {
                self.commits.insert(z, chosen.done);
            }
            self.known_zxid = last;
        }
        let oldest_applied = (0..world.num_servers())
            .map(|s| world.applied_zxid(s))
            .min()
            .unwrap_or(last);
        self.commits = self.commits.split_off(&(oldest_applied + 1));

        // Requests: dropped ones (taken, or lost with a connection) leave
        // from the front; new ones were sent by the step's client.
        for &c in clients {
            let world_len = world.outbound_len(c);
            while self.outbound[c].len() > world_len {
                self.outbound[c].pop_front();
            }
            while self.outbound[c].len() < world_len {
                let sent = if actor == Some(c) {
                    chosen.done
                } else {
                    self.now
                };
                let arrival = sent + self.jitter(self.timing.latency_us);
                self.outbound[c].push_back(arrival);
            }
        }
        // Messages: watch notifications first (each costs the server), then
        // the rest (replies; session events and local errors arrive at once).
        let mut cursor = chosen.out;
        let mut charged = chosen.done - chosen.start;
        let mut fresh: Vec<(usize, usize)> = Vec::new();
        for &c in clients {
            let world_len = world.inbound_len(c);
            while self.inbound[c].len() > world_len {
                self.inbound[c].pop_front();
            }
            for i in self.inbound[c].len()..world_len {
                fresh.push((c, i));
            }
        }
        let mut stamps: Vec<(usize, usize, u64)> = Vec::with_capacity(fresh.len());
        if server_step.is_some() {
            for &(c, i) in &fresh {
                if world.inbound_is_watch(c, i) {
                    let cost = self.jitter(self.timing.notify_us);
                    cursor += cost;
                    charged += cost;
                    self.notifications += 1;
                    let at = cursor + self.jitter(self.timing.latency_us);
                    stamps.push((c, i, at));
                }
            }
            for &(c, i) in &fresh {
                if !world.inbound_is_watch(c, i) {
                    let at = cursor + self.jitter(self.timing.latency_us);
                    stamps.push((c, i, at));
                }
            }
        } else {
            stamps.extend(fresh.iter().map(|&(c, i)| (c, i, chosen.done)));
        }
        stamps.sort_unstable_by_key(|&(c, i, _)| (c, i));
        for (c, _, at) in stamps {
            self.inbound[c].push_back(at);
        }
        if let Some(s) = server_step {
            self.server_free[s] = chosen.start + charged;
            self.busy[s] += charged;
        } else if let Some(c) = actor {
            let cpu = self.cpu(c);
            self.client_free[cpu] = chosen.done;
        }
    }

    /// When `event` could start, and the tie-breaker (arrival) for it.
    pub(super) fn ready<C: RecipeSet>(&self, world: &World<C>, event: &Event) -> (u64, u64) {
        let now = self.now;
        let (ready, arrival) = match *event {
            Event::Request { client } => {
                let server = world.server_of(client).unwrap_or(0);
                let arrival = self.outbound[client].front().copied().unwrap_or(now);
                (arrival.max(self.server_free[server]), arrival)
            }
            Event::Apply { server } => {
                let next = world.applied_zxid(server) + 1;
                let committed = self.commits.range(next..).next().map_or(now, |(_, &t)| t);
                let arrival = committed + self.timing.peer_latency_us;
                (arrival.max(self.server_free[server]), arrival)
            }
            Event::Receive { client } => {
                let arrival = self.inbound[client].front().copied().unwrap_or(now);
                (arrival.max(self.client_free[self.cpu(client)]), arrival)
            }
            Event::Timer { client } => {
                let due = world.timer_of(client).map_or(now, |t| t * TICK_US);
                (due.max(self.client_free[self.cpu(client)]), due)
            }
            Event::Connect { .. } => {
                let at = now + 2 * self.timing.latency_us;
                (at, at)
            }
            Event::Tick => {
                let at = (world.now() + 1) * TICK_US;
                (at, at)
            }
            Event::Fault(_) => (u64::MAX, u64::MAX),
        };
        (ready.max(now), arrival)
    }

    /// The cost of `event` once chosen (µs of its server's or client's time).
    fn cost<C: RecipeSet>(&mut self, world: &World<C>, event: &Event) -> u64 {
        let t = self.timing;
        let base = match *event {
            Event::Request { client } => match world.next_request(client) {
                Some(op) if op.is_write() => t.write_us,
                _ => t.read_us,
            },
            Event::Apply { .. } => t.apply_us,
            Event::Receive { .. } | Event::Timer { .. } => t.client_us,
            _ => 0,
        };
        self.jitter(base)
    }
}

/// A draw from the exponential distribution with mean `mean` (µs), at least 1.
fn exponential(rng: &mut ChaCha8Rng, mean: u64) -> u64 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    ((-u.ln()) * mean as f64)
        .max(1.0)
        .min(u64::MAX as f64 / 4.0) as u64
}

impl<C: RecipeSet> Chooser<C> for TimedChooser {
    fn choose(&mut self, model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        let world = &model.world;
        if !self.started {
            self.start(world);
        }
        self.settle_all(world);
        let mut best: Option<((u64, u64), usize)> = None;
        let mut faults = 0usize;
        for (i, event) in enabled.iter().enumerate() {
            if matches!(event, Event::Fault(_)) {
                faults += 1;
                continue;
            }
            let key = self.ready(world, event);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, i));
            }
        }
        let best_ready = best.map_or(u64::MAX, |((ready, _), _)| ready);
        let (index, start) = if faults > 0 && self.fault_due(best_ready) {
            let (pick, at) = self.strike(faults);
            let index = enabled
                .iter()
                .enumerate()
                .filter(|(_, e)| matches!(e, Event::Fault(_)))
                .nth(pick)
                .map(|(i, _)| i)?;
            (index, at)
        } else {
            let ((ready, _), index) = best?;
            (index, ready)
        };
        self.commit(world, enabled[index].clone(), start);
        Some(index)
    }
}

impl TimedChooser {
    /// When the client's next request reaches its server.
    pub(super) fn request_arrival(&self, client: usize) -> u64 {
        self.outbound[client].front().copied().unwrap_or(self.now)
    }

    /// When the next message for the client reaches it.
    pub(super) fn message_arrival(&self, client: usize) -> u64 {
        self.inbound[client].front().copied().unwrap_or(self.now)
    }

    /// When the client (or the one client thread) is next free.
    pub(super) fn client_free_at(&self, client: usize) -> u64 {
        self.client_free[self.cpu(client)]
    }

    /// When the server is next free.
    pub(super) fn server_free_at(&self, server: usize) -> u64 {
        self.server_free[server]
    }

    /// Every client runs on one thread ([`Timing::shared_client_cpu`]).
    pub(super) fn shares_client_cpu(&self) -> bool {
        self.timing.shared_client_cpu
    }

    /// A fault arrives before the earliest other event could start.
    pub(super) fn fault_due(&self, best_ready: u64) -> bool {
        self.next_fault <= best_ready
    }

    /// A fault strikes now: which of the `faults` enabled ones (drawn), and
    /// when; the next one is drawn.
    pub(super) fn strike(&mut self, faults: usize) -> (usize, u64) {
        let pick = self.rng.random_range(0..faults);
        let at = self.next_fault.max(self.now);
        self.next_fault = at + exponential(&mut self.rng, self.timing.fault_interval_us);
        (pick, at)
    }

    /// `event` was chosen to start at `start`: the clock moves there and
    /// the step is settled at the next call.
    pub(super) fn commit<C: RecipeSet>(&mut self, world: &World<C>, event: Event, start: u64) {
        let cost = self.cost(world, &event);
        let delay = match event {
            Event::Request { client }
                if world.next_request(client).is_some_and(|op| op.is_write()) =>
            {
                self.jitter(self.timing.commit_delay_us)
            }
            _ => 0,
        };
        self.now = start;
        self.clock.set(start);
        self.chosen = Some(Chosen {
            event,
            start,
            done: start + cost,
            out: start + cost + delay,
        });
    }
}
