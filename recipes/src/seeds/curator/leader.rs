//! The article's `LeaderSelector` with `autoRequeue()` (seed 002 lines
//! 1093-1106) and a `LeaderSelectorListenerAdapter`, whose `stateChanged`
//! cancels leadership on `SUSPENDED` and `LOST`.

use zksim::{Client, Cx, OpId, Reply, SessionEvent, Tick, WatchedEvent};

use super::internals::{Alarm, Internals, Progress};
use crate::seeds::app::Alarms;
use crate::{AppEvent, Recipe, RecipeParams};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum State {
    /// `doWork`: in `mutex.acquire()`.
    Queued,
    /// In `takeLeadership`.
    Leading,
    /// `finally { mutex.release() }`.
    Releasing,
    Closed,
}

/// Curator `LeaderSelector` with `autoRequeue`. `takeLeadership` keeps
/// leadership `hold_ticks`; after `rounds` terms the program closes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuratorLeader {
    alarms: Alarms<Alarm>,
    lock: Internals,
    state: State,
    terms: u32,
    rounds: u32,
    hold: Tick,
}

impl Recipe for CuratorLeader {
    const FAMILY: crate::Family = crate::Family::Election;
    fn new(p: &RecipeParams) -> Self {
        CuratorLeader {
            alarms: Alarms::default(),
            lock: Internals::new(&p.root, p.client, None),
            state: State::Queued,
            terms: 0,
            rounds: p.workload.rounds,
            hold: p.workload.hold_ticks,
        }
    }
}

impl CuratorLeader {
    /// `internalRequeue` → `doWorkLoop` → `doWork` → `mutex.acquire()`.
    fn requeue(&mut self, cx: &mut Cx<AppEvent>) {
        if self.terms >= self.rounds {
            self.state = State::Closed;
            cx.close_session();
            return;
        }
        self.state = State::Queued;
        self.lock.acquire(cx, &mut self.alarms);
    }

    /// `takeLeadership` returned or was interrupted: `hasLeadership = false`.
    fn abdicate(&mut self, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Abdicated);
        self.alarms.clear(&Alarm::Hold, cx);
        self.terms += 1;
    }

    fn progress(&mut self, p: Progress, cx: &mut Cx<AppEvent>) {
        match p {
            Progress::Acquired(_) if self.state == State::Queued => {
                self.state = State::Leading;
                cx.emit(AppEvent::Elected);
                self.alarms.set(Alarm::Hold, self.hold, cx);
            }
            // acquire threw (autoRequeue swallows it) or release returned.
            Progress::Failed | Progress::TimedOut | Progress::Released => self.requeue(cx),
            _ => {}
        }
    }

    /// `interruptLeadership()`: the task is cancelled wherever it is.
    fn interrupt(&mut self, cx: &mut Cx<AppEvent>) {
        match self.state {
            State::Closed => return,
            State::Leading => self.abdicate(cx),
            State::Queued | State::Releasing => {}
        }
        // The interrupted call throws; doDelete / release hand our node to
        // the guaranteed-delete manager; then autoRequeue.
        self.lock.abort(cx, &mut self.alarms);
        self.requeue(cx);
    }
}

impl Client for CuratorLeader {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.requeue(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        let p = self.lock.on_reply(op, reply, cx, &mut self.alarms);
        if self.state != State::Closed {
            self.progress(p, cx);
        }
    }

    fn on_watch(&mut self, _: WatchedEvent, cx: &mut Cx<AppEvent>) {
        self.lock.notify(cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        match event {
            SessionEvent::SyncConnected => {
                self.lock.notify(cx);
                self.lock.reconnected(cx);
            }
            SessionEvent::Disconnected => self.interrupt(cx),
            SessionEvent::Expired => {
                self.interrupt(cx);
                if self.state != State::Closed {
                    cx.reopen_session();
                }
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        for alarm in self.alarms.take_due(cx) {
            match alarm {
                Alarm::Hold if self.state == State::Leading => {
                    self.abdicate(cx);
                    self.state = State::Releasing;
                    self.lock.release(cx);
                    if self.lock.is_idle() {
                        self.requeue(cx);
                    }
                }
                Alarm::Retry | Alarm::MaxWait => self.lock.on_timer(alarm, cx),
                _ => {}
            }
        }
    }

    fn is_done(&self) -> bool {
        self.state == State::Closed
    }
}
