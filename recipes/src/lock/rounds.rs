//! The round loop every lock client runs, independent of how it locks:
//! `Requested` → (`Enqueued`) → `Acquired` → hold → `Released` → think → next
//! round, and what a session event does to it.
//!
//! [`Rounds`] emits the round-level [`AppEvent`]s and arms the timer, so that
//! every lock recipe (ours and the seed ports) reports the same history
//! shape to the checker's monitors. The recipe itself decides *when* it has
//! the lock and sends the ops; it tells `Rounds` through [`Rounds::acquired`]
//! and [`Rounds::released`], and asks [`Rounds::should_start`] when to begin.
//!
//! Event conventions (the monitors depend on them):
//! - `Requested { shared }` when a round (or its retry) starts asking;
//! - `Acquired { fence, shared }` immediately followed by `ResourceWrite { fence }`,
//!   then the hold timer is armed for `hold_ticks`;
//! - when it fires, `ResourceWrite { fence }` again (the write a paused,
//!   expired holder makes too late), the recipe sends its delete, `Released`;
//! - `think_ticks` later the next round; after the last one the session is
//!   closed and [`Rounds::is_done`] is true;
//! - `Disconnected`/`Expired` while holding: `LostLock`; while waiting:
//!   `GaveUp`; the round is retried once the session is usable again
//!   (after `Expired` a new session is opened first).
//!
//! `Enqueued` is the recipe's own business (only it knows when its node exists).

use zksim::{Cx, SessionEvent};

use crate::{AppEvent, Workload};

/// Where a client is in its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// A round should start as soon as the session is usable: before the
    /// first round, after thinking, and after an interrupted attempt.
    Ready,
    /// Asked for the lock, not granted yet.
    Waiting,
    /// Believes it holds the lock under `fence` (hold timer armed).
    Holding { fence: i64 },
    /// Between rounds (think timer armed).
    Thinking,
    /// All rounds done; the session was closed.
    Done,
}

/// What an interruption (see [`Rounds::interrupt`]) cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interrupted {
    /// Nothing was in progress (thinking, done, not started).
    Nothing,
    /// A wait: `GaveUp` was emitted.
    Wait,
    /// A hold: `LostLock` was emitted and the hold timer cancelled.
    Hold,
}

/// What the timer meant (see [`Rounds::on_timer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Due {
    /// The hold is over: `ResourceWrite` was emitted; send the delete that
    /// releases the lock, then call [`Rounds::released`].
    Release { fence: i64 },
    /// Thinking is over: start the next round if [`Rounds::should_start`].
    NextRound,
    /// A timer that no longer means anything.
    Stale,
}

/// The round loop of one lock client. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rounds {
    workload: Workload,
    /// Whether this client asks for a shared (read) lock.
    shared: bool,
    completed: u32,
    phase: Phase,
    /// Whether the session is usable (between `SyncConnected` and the next
    /// `Disconnected`/`Expired`).
    connected: bool,
    /// Leader election's words: `Elected` for `Acquired`, `Abdicated` for
    /// `Released` and `LostLock` (see [`Rounds::for_leadership`]).
    leadership: bool,
}

impl Rounds {
    pub fn new(workload: Workload, shared: bool) -> Self {
        Rounds {
            workload,
            shared,
            completed: 0,
            phase: Phase::Ready,
            connected: false,
            leadership: false,
        }
    }

    /// The same loop run for leadership: a term is a round. Emits `Elected`
    /// followed by `ResourceWrite { fence }` (the new leader's epoch, written
    /// to a leader-only resource) where a lock emits `Acquired`, and
    /// `Abdicated` where a lock emits `Released` or `LostLock`.
    pub fn for_leadership(mut self) -> Self {
        self.leadership = true;
        self
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn shared(&self) -> bool {
        self.shared
    }
    pub fn is_connected(&self) -> bool {
        self.connected
    }
    /// Rounds released so far.
    pub fn completed(&self) -> u32 {
        self.completed
    }
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }
    pub fn is_waiting(&self) -> bool {
        self.phase == Phase::Waiting
    }
    pub fn is_holding(&self) -> bool {
        matches!(self.phase, Phase::Holding { .. })
    }

    /// The client's first session is connected. With no rounds to do, closes
    /// it at once.
    pub fn on_start(&mut self, cx: &mut Cx<AppEvent>) {
        self.connected = true;
        if self.workload.rounds == 0 {
            self.finish(cx);
        }
    }

    /// A round should begin now: there is one to do and the session is usable.
    pub fn should_start(&self) -> bool {
        self.phase == Phase::Ready && self.connected
    }

    /// Start asking: emits `Requested`.
    pub fn begin(&mut self, cx: &mut Cx<AppEvent>) {
        self.phase = Phase::Waiting;
        cx.emit(AppEvent::Requested {
            shared: self.shared,
        });
    }

    /// The recipe believes it holds the lock under `fence`: emits `Acquired`
    /// and the first `ResourceWrite`, arms the hold timer. Ignored (returns
    /// false) unless waiting.
    pub fn acquired(&mut self, fence: i64, cx: &mut Cx<AppEvent>) -> bool {
        if self.phase != Phase::Waiting {
            return false;
        }
        self.phase = Phase::Holding { fence };
        cx.emit(if self.leadership {
            AppEvent::Elected
        } else {
            AppEvent::Acquired {
                fence,
                shared: self.shared,
            }
        });
        cx.emit(AppEvent::ResourceWrite { fence });
        cx.after(self.workload.hold_ticks);
        true
    }

    /// The timer fired.
    pub fn on_timer(&mut self, cx: &mut Cx<AppEvent>) -> Due {
        match self.phase {
            Phase::Holding { fence } => {
                cx.emit(AppEvent::ResourceWrite { fence });
                Due::Release { fence }
            }
            Phase::Thinking => {
                self.phase = Phase::Ready;
                Due::NextRound
            }
            _ => Due::Stale,
        }
    }

    /// The recipe sent the ops that release the lock: emits `Released`, then
    /// thinks, or closes the session after the last round.
    pub fn released(&mut self, cx: &mut Cx<AppEvent>) {
        if !self.is_holding() {
            return;
        }
        cx.emit(if self.leadership {
            AppEvent::Abdicated
        } else {
            AppEvent::Released
        });
        self.completed += 1;
        if self.completed >= self.workload.rounds {
            self.finish(cx);
        } else {
            self.phase = Phase::Thinking;
            cx.after(self.workload.think_ticks);
        }
    }

    /// Stop trusting the current attempt: `LostLock` if holding, `GaveUp` if
    /// waiting; either way the round will be retried ([`Phase::Ready`]).
    pub fn interrupt(&mut self, cx: &mut Cx<AppEvent>) -> Interrupted {
        match self.phase {
            Phase::Waiting => {
                cx.emit(AppEvent::GaveUp);
                self.phase = Phase::Ready;
                Interrupted::Wait
            }
            Phase::Holding { .. } => {
                cx.emit(if self.leadership {
                    AppEvent::Abdicated
                } else {
                    AppEvent::LostLock
                });
                cx.cancel_timer();
                self.phase = Phase::Ready;
                Interrupted::Hold
            }
            _ => Interrupted::Nothing,
        }
    }

    /// Track the connection state, interrupt on `Disconnected`/`Expired`,
    /// and open a new session after `Expired` (unless done). Returns what
    /// was interrupted; after `SyncConnected` check [`Rounds::should_start`].
    pub fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) -> Interrupted {
        match event {
            SessionEvent::SyncConnected => {
                self.connected = true;
                Interrupted::Nothing
            }
            SessionEvent::Disconnected => {
                self.connected = false;
                self.interrupt(cx)
            }
            SessionEvent::Expired => {
                self.connected = false;
                let cut = self.interrupt(cx);
                if !self.is_done() {
                    cx.reopen_session();
                }
                cut
            }
        }
    }

    /// Record the connection state without interrupting anything (for
    /// recipes that deliberately ignore session events).
    pub fn set_connected(&mut self, connected: bool) {
        self.connected = connected;
    }

    fn finish(&mut self, cx: &mut Cx<AppEvent>) {
        self.phase = Phase::Done;
        cx.cancel_timer();
        cx.close_session();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zksim::{SessionRequest, TimerRequest};

    fn workload(rounds: u32) -> Workload {
        Workload {
            rounds,
            hold_ticks: 5,
            think_ticks: 3,
        }
    }

    #[test]
    fn one_round_from_request_to_close() {
        let mut r = Rounds::new(workload(1), false);
        let mut cx = Cx::new(0, 1, 0);
        r.on_start(&mut cx);
        assert!(r.should_start());
        r.begin(&mut cx);
        assert!(r.acquired(7, &mut cx));
        assert_eq!(cx.clone().into_parts().timer, TimerRequest::At(5));
        let mut cx2 = Cx::new(5, 1, 0);
        assert_eq!(r.on_timer(&mut cx2), Due::Release { fence: 7 });
        r.released(&mut cx2);
        assert!(r.is_done());
        assert_eq!(
            cx.events(),
            [
                AppEvent::Requested { shared: false },
                AppEvent::Acquired {
                    fence: 7,
                    shared: false
                },
                AppEvent::ResourceWrite { fence: 7 },
            ]
        );
        assert_eq!(
            cx2.events(),
            [AppEvent::ResourceWrite { fence: 7 }, AppEvent::Released]
        );
        assert_eq!(
            cx2.into_parts().session_request,
            Some(SessionRequest::Close)
        );
    }

    #[test]
    fn thinks_between_rounds() {
        let mut r = Rounds::new(workload(2), true);
        let mut cx = Cx::new(0, 1, 0);
        r.on_start(&mut cx);
        r.begin(&mut cx);
        r.acquired(1, &mut cx);
        r.on_timer(&mut cx);
        r.released(&mut cx);
        assert_eq!(r.phase(), Phase::Thinking);
        assert_eq!(cx.clone().into_parts().timer, TimerRequest::At(3));
        assert_eq!(r.on_timer(&mut cx), Due::NextRound);
        assert!(r.should_start());
    }

    #[test]
    fn interruptions_say_what_was_cut() {
        let mut r = Rounds::new(workload(1), false);
        let mut cx = Cx::new(0, 1, 0);
        r.on_start(&mut cx);
        r.begin(&mut cx);
        assert_eq!(
            r.on_session(SessionEvent::Disconnected, &mut cx),
            Interrupted::Wait
        );
        assert!(!r.should_start());
        r.on_session(SessionEvent::SyncConnected, &mut cx);
        assert!(r.should_start());
        r.begin(&mut cx);
        r.acquired(2, &mut cx);
        let mut cx = Cx::new(1, 1, 0);
        assert_eq!(
            r.on_session(SessionEvent::Expired, &mut cx),
            Interrupted::Hold
        );
        assert_eq!(cx.events(), [AppEvent::LostLock]);
        let out = cx.into_parts();
        assert_eq!(out.timer, TimerRequest::Cancel);
        assert_eq!(out.session_request, Some(SessionRequest::Reopen));
        // A stale hold timer does nothing.
        let mut cx = Cx::new(5, 2, 0);
        assert_eq!(r.on_timer(&mut cx), Due::Stale);
        assert!(cx.events().is_empty());
    }

    #[test]
    fn zero_rounds_close_at_start() {
        let mut r = Rounds::new(workload(0), false);
        let mut cx = Cx::new(0, 1, 0);
        r.on_start(&mut cx);
        assert!(r.is_done());
        assert!(!r.should_start());
    }
}
