//! The handoff between the threads that want the lock and the one event
//! thread that drives the recipe — the part of a blocking lock handle where
//! lost wakeups, double grants and leaked nodes live.
//!
//! It is a plain struct, generic over `G`, "what the event thread delivers
//! when the lock is granted" (a fence token for the real handle, a node id
//! in the loom models), and knows nothing of ZooKeeper, tokio or time: a
//! deadline that passes is an input ([`Handoff::deadline_passed`]) like any
//! other, which is what lets loom check it (`src/sync.rs`).
//!
//! # The protocol
//! Callers ([`Handoff::request`], [`Pending::wait`], dropping a [`Guard`])
//! and the event thread ([`Handoff::granted`], [`Handoff::lost`],
//! [`Handoff::gave_up`], [`Handoff::close`]) only change [`State`] under
//! one mutex; after every change `State::settle` decides what the recipe
//! must do next, as [`Command`]s the event thread takes in order
//! ([`Handoff::wait_command`] / [`Handoff::try_command`]). Waiting callers
//! sleep on one condition variable and re-check their own ticket in a loop
//! after every wakeup, so a notify meant for someone else, a spurious wakeup
//! or a notify that came before they slept is never mistaken or lost.
//!
//! Rules `settle` keeps (the loom models assert them):
//! * one recipe attempt at a time, asked only when no guard is alive: at most
//!   one guard exists in the process, even after its lock was lost (a lost
//!   guard still blocks the other threads until it is dropped; it only
//!   tells its owner that ZooKeeper no longer backs it);
//! * a grant nobody is waiting for any more (the caller timed out or dropped
//!   its request, or the recipe retried by itself after a session loss) goes
//!   to the next waiting caller, or is released at once — so a cancelled
//!   acquire leaves no node behind; while a lost guard is alive, every grant
//!   is released at once (nobody here may use it, others must not wait);
//! * a normal release always goes back to ZooKeeper before the next caller
//!   asks (fair to the other processes in line);
//! * when the recipe gives up (session trouble while waiting) every waiting
//!   caller is woken with [`AcquireError::Interrupted`]; when the recipe or
//!   the handle is closed, with [`AcquireError::Closed`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::sync::{self, Arc, Condvar, Deadline, Mutex};

/// One call to [`Handoff::request`]: the caller's place in the local queue.
pub type Ticket = u64;

/// What the event thread must do to the recipe, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start an attempt to take the lock (a no-op if one is already running).
    Acquire,
    /// Let go of the lock the recipe holds (a no-op if it holds none).
    Release,
}

/// Why an acquire returned without the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireError {
    /// The deadline passed first.
    TimedOut,
    /// The recipe gave up while waiting (the session was disconnected or
    /// expired); asking again may succeed.
    Interrupted,
    /// The handle or its recipe is closed; no acquire will succeed.
    Closed,
}

impl std::fmt::Display for AcquireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AcquireError::TimedOut => "timed out waiting for the lock",
            AcquireError::Interrupted => "the session was interrupted while waiting for the lock",
            AcquireError::Closed => "the lock handle is closed",
        })
    }
}

impl std::error::Error for AcquireError {}

/// Deliberately broken waits, for the tests that show loom catches them.
/// Never used by the real handle.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flaw {
    #[default]
    None,
    /// The waiter checks its ticket, lets go of the mutex, takes it again
    /// and only then sleeps: a grant notified in between is lost.
    NotifyBeforeRegister,
    /// `if` instead of `while`: after one wakeup the waiter assumes it was
    /// granted (seed 004's single `wait()`).
    IfNotWhile,
}

/// What the recipe is doing, as far as the handoff knows.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Recipe<G> {
    Idle,
    /// An [`Command::Acquire`] was issued; no grant yet.
    Asking,
    /// The recipe holds the lock under this grant.
    Holding(G),
}

/// Everything callers and the event thread share (behind one mutex).
#[derive(Debug)]
pub struct State<G> {
    next_ticket: Ticket,
    /// Callers waiting for the lock, first come first served.
    queue: VecDeque<Ticket>,
    /// Outcomes decided but not yet picked up by their caller.
    outcomes: BTreeMap<Ticket, Result<G, AcquireError>>,
    /// Tickets whose deadline passed (an explicit event; see the module doc).
    expired: BTreeSet<Ticket>,
    /// The ticket whose guard is alive (handed out or about to be picked up).
    guard: Option<Ticket>,
    /// That guard's lock was lost (session trouble while holding).
    lost: bool,
    recipe: Recipe<G>,
    /// The last grant delivered (only [`Flaw::IfNotWhile`] reads it).
    last_grant: Option<G>,
    commands: VecDeque<Command>,
    closed: bool,
}

impl<G: Clone> State<G> {
    /// Decide what follows from the current state (see the module doc).
    fn settle(&mut self) {
        if self.closed {
            while let Some(t) = self.queue.pop_front() {
                self.outcomes.insert(t, Err(AcquireError::Closed));
            }
        }
        match &self.recipe {
            // The recipe got the lock again by itself (a retry after the
            // loss) while the lost guard is still alive: nobody here may
            // use it yet, and keeping it would block the other sessions.
            Recipe::Holding(_) if self.lost => {
                self.commands.push_back(Command::Release);
                self.recipe = Recipe::Idle;
            }
            Recipe::Holding(grant) if self.guard.is_none() => match self.queue.pop_front() {
                // Nobody asked for this grant any more, but someone waits.
                Some(next) => {
                    self.guard = Some(next);
                    self.lost = false;
                    self.outcomes.insert(next, Ok(grant.clone()));
                }
                None => {
                    self.commands.push_back(Command::Release);
                    self.recipe = Recipe::Idle;
                }
            },
            Recipe::Idle if !self.closed && self.guard.is_none() && !self.queue.is_empty() => {
                self.commands.push_back(Command::Acquire);
                self.recipe = Recipe::Asking;
            }
            _ => {}
        }
    }

    /// Take `ticket` out of the queue; if it had already been granted, its
    /// guard is released (its caller will never see it).
    fn withdraw(&mut self, ticket: Ticket) {
        self.queue.retain(|t| *t != ticket);
        self.expired.remove(&ticket);
        if let Some(Ok(_)) = self.outcomes.remove(&ticket) {
            self.release(ticket);
        }
    }

    fn release(&mut self, ticket: Ticket) {
        if self.guard != Some(ticket) {
            return;
        }
        self.guard = None;
        let lost = std::mem::replace(&mut self.lost, false);
        // A lost guard's recipe no longer holds for it: whatever the recipe
        // holds now (a retry) is settled like any ownerless grant.
        if !lost && matches!(self.recipe, Recipe::Holding(_)) {
            self.commands.push_back(Command::Release);
            self.recipe = Recipe::Idle;
        }
    }
}

/// The shared core of a lock handle. See the module doc.
#[derive(Debug)]
pub struct Handoff<G> {
    state: Mutex<State<G>>,
    /// Waiting callers sleep here.
    callers: Condvar,
    /// The event thread sleeps here in [`Handoff::wait_command`].
    events: Condvar,
    flaw: Flaw,
}

impl<G: Clone> Default for Handoff<G> {
    fn default() -> Self {
        Self::with_flaw(Flaw::None)
    }
}

impl<G: Clone> Handoff<G> {
    pub fn new() -> Self {
        Self::default()
    }

    #[doc(hidden)]
    pub fn with_flaw(flaw: Flaw) -> Self {
        Handoff {
            state: Mutex::new(State {
                next_ticket: 0,
                queue: VecDeque::new(),
                outcomes: BTreeMap::new(),
                expired: BTreeSet::new(),
                guard: None,
                lost: false,
                recipe: Recipe::Idle,
                last_grant: None,
                commands: VecDeque::new(),
                closed: false,
            }),
            callers: Condvar::new(),
            events: Condvar::new(),
            flaw,
        }
    }

    /// Change the state, settle it, and wake whoever may care.
    fn update<T>(&self, change: impl FnOnce(&mut State<G>) -> T) -> T {
        let mut state = sync::lock(&self.state);
        let out = change(&mut state);
        state.settle();
        let wake_events = !state.commands.is_empty() || state.closed;
        drop(state);
        self.callers.notify_all();
        if wake_events {
            self.events.notify_one();
        }
        out
    }

    // ---- callers ----

    /// Ask for the lock: returns the caller's [`Pending`] request.
    pub fn request(this: &Arc<Self>) -> Result<Pending<G>, AcquireError> {
        let ticket = this.update(|s| {
            if s.closed {
                return Err(AcquireError::Closed);
            }
            let t = s.next_ticket;
            s.next_ticket += 1;
            s.queue.push_back(t);
            Ok(t)
        })?;
        Ok(Pending {
            handoff: Arc::clone(this),
            ticket,
            done: false,
        })
    }

    /// `ticket`'s deadline passed: its wait returns `TimedOut` unless the
    /// grant is already there. (Outside loom a waiter with a deadline also
    /// notices by itself.)
    pub fn deadline_passed(&self, ticket: Ticket) {
        self.update(|s| {
            s.expired.insert(ticket);
        });
    }

    fn wait(&self, ticket: Ticket, deadline: Option<Deadline>) -> Result<G, AcquireError> {
        let mut state = sync::lock(&self.state);
        loop {
            if let Some(outcome) = state.outcomes.remove(&ticket) {
                state.expired.remove(&ticket);
                return outcome;
            }
            if state.expired.contains(&ticket) {
                state.withdraw(ticket);
                state.settle();
                drop(state);
                self.callers.notify_all();
                self.events.notify_one();
                return Err(AcquireError::TimedOut);
            }
            if self.flaw == Flaw::NotifyBeforeRegister {
                // BROKEN: the check above is not atomic with the sleep below.
                crate::trace::note("waiter: not granted yet; lets go of the mutex before sleeping");
                drop(state);
                state = sync::lock(&self.state);
            }
            let (woken, passed) = sync::wait_until(&self.callers, state, deadline);
            state = woken;
            if passed {
                state.expired.insert(ticket);
            }
            if self.flaw == Flaw::IfNotWhile {
                // BROKEN: woken once, so it must be ours.
                crate::trace::note("waiter: woken once; takes the last grant as its own");
                if let Some(outcome) = state.outcomes.remove(&ticket) {
                    return outcome;
                }
                return state.last_grant.clone().ok_or(AcquireError::Closed);
            }
        }
    }

    fn cancel(&self, ticket: Ticket) {
        self.update(|s| s.withdraw(ticket));
    }

    fn release(&self, ticket: Ticket) {
        self.update(|s| s.release(ticket));
    }

    fn is_lost(&self, ticket: Ticket) -> bool {
        let s = sync::lock(&self.state);
        s.guard == Some(ticket) && s.lost
    }

    // ---- the event thread ----

    /// The next command for the recipe, waiting for one; `None` once the
    /// handoff is closed and every command has been taken.
    pub fn wait_command(&self) -> Option<Command> {
        let mut state = sync::lock(&self.state);
        loop {
            if let Some(c) = state.commands.pop_front() {
                return Some(c);
            }
            if state.closed {
                return None;
            }
            state = self.events.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The next command, if there is one (for an event loop that cannot block).
    pub fn try_command(&self) -> Option<Command> {
        sync::lock(&self.state).commands.pop_front()
    }

    /// Put back a command the event side could not carry out yet (it is
    /// taken again first).
    pub fn requeue_front(&self, command: Command) {
        sync::lock(&self.state).commands.push_front(command);
    }

    /// The recipe now holds the lock under `grant`.
    pub fn granted(&self, grant: G) {
        self.update(|s| {
            if matches!(s.recipe, Recipe::Holding(_)) {
                return; // a second grant without a release: not a lock recipe's behaviour
            }
            s.last_grant = Some(grant.clone());
            s.recipe = Recipe::Holding(grant);
        });
    }

    /// The recipe stopped trusting the lock it held (`LostLock`).
    pub fn lost(&self) {
        self.update(|s| {
            if matches!(s.recipe, Recipe::Holding(_)) {
                s.recipe = Recipe::Idle;
                if s.guard.is_some() {
                    s.lost = true;
                }
            }
        });
    }

    /// The recipe stopped waiting without the lock (`GaveUp`): every waiting
    /// caller is told.
    pub fn gave_up(&self) {
        self.update(|s| {
            if matches!(s.recipe, Recipe::Asking) {
                s.recipe = Recipe::Idle;
                while let Some(t) = s.queue.pop_front() {
                    s.outcomes.insert(t, Err(AcquireError::Interrupted));
                }
            }
        });
    }

    /// No more acquires: waiting callers get `Closed`, a live guard is lost,
    /// and [`Handoff::wait_command`] returns `None` once drained.
    pub fn close(&self) {
        self.update(|s| {
            s.closed = true;
            if matches!(s.recipe, Recipe::Holding(_)) && s.guard.is_some() {
                s.lost = true;
            }
        });
    }

    pub fn is_closed(&self) -> bool {
        sync::lock(&self.state).closed
    }
}

impl<G: PartialEq> Handoff<G> {
    /// Whether the handoff currently believes the recipe holds `grant`
    /// (for the models' final checks).
    pub fn recipe_holds(&self, grant: &G) -> bool {
        matches!(&sync::lock(&self.state).recipe, Recipe::Holding(g) if g == grant)
    }
}

/// A request for the lock that has not returned yet. Dropping it cancels
/// the request (and releases the lock if it was granted meanwhile).
#[derive(Debug)]
pub struct Pending<G: Clone> {
    handoff: Arc<Handoff<G>>,
    ticket: Ticket,
    done: bool,
}

impl<G: Clone> Pending<G> {
    pub fn ticket(&self) -> Ticket {
        self.ticket
    }

    /// Block until the lock is granted or the request fails.
    pub fn wait(self) -> Result<Guard<G>, AcquireError> {
        self.wait_until(None)
    }

    /// Block until the lock is granted, the request fails or `deadline` passes.
    pub fn wait_until(mut self, deadline: Option<Deadline>) -> Result<Guard<G>, AcquireError> {
        self.done = true;
        let grant = self.handoff.wait(self.ticket, deadline)?;
        Ok(Guard {
            handoff: Arc::clone(&self.handoff),
            ticket: self.ticket,
            grant,
        })
    }
}

impl<G: Clone> Drop for Pending<G> {
    fn drop(&mut self) {
        if !self.done {
            self.handoff.cancel(self.ticket);
        }
    }
}

/// The lock, held by one caller. Dropping it releases the lock.
#[derive(Debug)]
pub struct Guard<G: Clone> {
    handoff: Arc<Handoff<G>>,
    ticket: Ticket,
    grant: G,
}

impl<G: Clone> Guard<G> {
    /// What the event thread delivered with the grant (e.g. the fence token).
    pub fn grant(&self) -> &G {
        &self.grant
    }

    /// Whether the lock was lost since it was granted: the session was
    /// disconnected or expired, so ZooKeeper no longer backs this guard.
    /// The guard still keeps the other threads of this process out until
    /// it is dropped.
    pub fn is_lost(&self) -> bool {
        self.handoff.is_lost(self.ticket)
    }
}

impl<G: Clone> Drop for Guard<G> {
    fn drop(&mut self) {
        self.handoff.release(self.ticket);
    }
}
