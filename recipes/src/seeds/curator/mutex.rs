//! The article's `InterProcessMutex` usage (seed 002 lines 1058-1069):
//! `if (lock.acquire(maxWait, waitUnit)) { try { work } finally { release() } }`.

use zksim::{Client, Cx, OpId, Reply, SessionEvent, Tick, WatchedEvent};

use super::internals::{Alarm, Internals, Progress};
use crate::seeds::app::{Alarms, App, Stage};
use crate::{AppEvent, Recipe, RecipeParams};

/// `maxWait` is not given in the article; the port waits 60 s (600 ticks).
pub const MAX_WAIT_TICKS: Tick = 600;

/// Curator `InterProcessMutex` as the article uses it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuratorMutex {
    app: App,
    alarms: Alarms<Alarm>,
    lock: Internals,
}

impl Recipe for CuratorMutex {
    const FAMILY: crate::Family = crate::Family::Lock;
    fn new(p: &RecipeParams) -> Self {
        CuratorMutex {
            app: App::new(p.workload, false),
            alarms: Alarms::default(),
            lock: Internals::new(&p.root, p.client, Some(MAX_WAIT_TICKS)),
        }
    }
}

impl CuratorMutex {
    fn begin(&mut self, cx: &mut Cx<AppEvent>) {
        self.app.request(cx);
        self.lock.acquire(cx, &mut self.alarms);
    }

    fn progress(&mut self, p: Progress, cx: &mut Cx<AppEvent>) {
        let next_round = match p {
            Progress::Nothing => return,
            Progress::Enqueued(seq) => {
                if self.app.stage() == Stage::Acquiring {
                    cx.emit(AppEvent::Enqueued { seq });
                }
                return;
            }
            Progress::Acquired(fence) => {
                self.app.acquired(fence, cx);
                let hold = self.app.hold_ticks();
                self.alarms.set(Alarm::Hold, hold, cx);
                return;
            }
            Progress::Failed => {
                self.app.gave_up(cx);
                return;
            }
            Progress::TimedOut => self.app.timed_out(cx),
            Progress::Released => self.app.release_returned(cx),
        };
        if next_round {
            let think = self.app.think_ticks();
            self.alarms.set(Alarm::Think, think, cx);
        }
    }
}

impl Client for CuratorMutex {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        if self.app.workload().rounds == 0 {
            self.app.abandon();
            cx.close_session();
            return;
        }
        self.begin(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        let p = self.lock.on_reply(op, reply, cx, &mut self.alarms);
        self.progress(p, cx);
    }

    fn on_watch(&mut self, _: WatchedEvent, cx: &mut Cx<AppEvent>) {
        self.lock.notify(cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        // The lock's watcher wakes the waiting thread on any event; the
        // mutex itself does not look at connection state (the holder holds on).
        self.lock.notify(cx);
        match event {
            SessionEvent::SyncConnected => self.lock.reconnected(cx),
            // Curator replaces an expired ZooKeeper handle with a new one.
            SessionEvent::Expired if !self.app.is_finished() => cx.reopen_session(),
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        for alarm in self.alarms.take_due(cx) {
            match alarm {
                Alarm::Hold if matches!(self.app.stage(), Stage::Holding { .. }) => {
                    self.app.hold_over(cx);
                    self.lock.release(cx);
                    if self.lock.is_idle() {
                        self.progress(Progress::Released, cx);
                    }
                }
                Alarm::Think if self.app.stage() == Stage::Thinking => self.begin(cx),
                Alarm::Retry | Alarm::MaxWait => self.lock.on_timer(alarm, cx),
                _ => {}
            }
        }
    }

    fn is_done(&self) -> bool {
        self.app.is_finished()
    }
}
