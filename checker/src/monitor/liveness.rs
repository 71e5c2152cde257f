//! `liveness`: every client that asked for the lock gets it and finishes.
//!
//! Judged at the end of the run, and only when the end says something:
//! * **Cut off.** If some event other than `Tick` or a fault is still
//!   enabled, the step bound stopped a run that could go on: not judged.
//!   If a client still holds the lock (time ran out mid-hold) or none waits,
//!   the bounds were too tight: not judged either. Both count as cut-off runs.
//! * **Stuck.** Nothing but time or a fault could happen, no client holds
//!   the lock, and a client is waiting (`Requested`, neither `Acquired` nor
//!   `GaveUp` since): it waits for a watch that nothing will fire.
//! * **Finished badly.** The world is quiescent but a client is done while
//!   still waiting or holding.
//!
//! Clients that lost their session (it ended and the client is not done,
//! e.g. crashed) are not judged: they cannot finish. A stuck run is explained
//! by its wait-for graph ([`super::waitfor`]).

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening, SessionId};

use super::view::{who, End, Measured, Sessions, View};
use super::waitfor::{self, WatchBook};
use super::{Monitor, Property, Sim, StepLog, Violation};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Waiting,
    Holding,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LivenessMonitor {
    phase: BTreeMap<ClientId, Phase>,
    ended: std::collections::BTreeSet<SessionId>,
    sessions: Sessions,
    watches: WatchBook,
    verdict: Measured<Option<bool>>,
}

/// How the end of a run was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    Fine,
    CutOff,
    Stuck,
}

impl LivenessMonitor {
    pub fn new() -> Self {
        Self::default()
    }

    /// `Some(true)` stuck, `Some(false)` cut off, `None` fine or not yet judged.
    pub fn stuck(&self) -> Option<bool> {
        self.verdict.0
    }

    pub fn on_step(&mut self, view: &impl View, step: &StepLog) {
        self.sessions.refresh(view);
        for happening in step {
            self.watches.observe(happening, &self.sessions);
            match happening {
                Happening::SessionEnded { session, .. } => {
                    self.ended.insert(*session);
                }
                Happening::App { client, event } => match event {
                    AppEvent::Requested { .. } => {
                        self.phase.insert(*client, Phase::Waiting);
                    }
                    AppEvent::Acquired { .. } => {
                        self.phase.insert(*client, Phase::Holding);
                    }
                    AppEvent::Released | AppEvent::LostLock | AppEvent::GaveUp => {
                        self.phase.remove(client);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    pub fn on_finish(&mut self, end: &End) -> Result<Judged, Violation> {
        let judged = self.judge(end);
        self.verdict.0 = match judged {
            Ok(Judged::Stuck) | Err(_) => Some(true),
            Ok(Judged::CutOff) => Some(false),
            Ok(Judged::Fine) => None,
        };
        judged
    }

    fn judge(&self, end: &End) -> Result<Judged, Violation> {
        let lost = |c: ClientId| {
            end.is_crashed(c) || (!end.done[c] && self.ended.contains(&end.sessions[c]))
        };
        let in_phase = |p: Phase| -> Vec<ClientId> {
            self.phase
                .iter()
                .filter(|(&c, &ph)| ph == p && c < end.done.len() && !lost(c))
                .map(|(&c, _)| c)
                .collect()
        };
        let (waiting, holding) = (in_phase(Phase::Waiting), in_phase(Phase::Holding));
        let unfinished = (0..end.done.len()).any(|c| !end.done[c] && !lost(c));
        if end.quiescent {
            let odd: Vec<ClientId> = waiting.iter().chain(&holding).copied().collect();
            if let Some(&c) = odd.first() {
                let doing = if waiting.contains(&c) {
                    "still waiting for the lock it asked for"
                } else {
                    "still holding the lock"
                };
                return Err(Violation {
                    property: Property::Liveness,
                    explanation: format!(
                        "the run ended with every client done, yet {} finished {doing}",
                        who(c)
                    ),
                });
            }
            return Ok(Judged::Fine);
        }
        if !unfinished {
            return Ok(Judged::Fine);
        }
        if end.progress_possible || !holding.is_empty() || waiting.is_empty() {
            return Ok(Judged::CutOff);
        }
        let names: Vec<String> = waiting.iter().map(|&c| who(c)).collect();
        Err(Violation {
            property: Property::Liveness,
            explanation: format!(
                "stuck: nobody holds the lock and nothing but time can happen, yet {} still \
                 wait{} for it\n{}",
                names.join(", "),
                if waiting.len() == 1 { "s" } else { "" },
                waitfor::explain(&waiting, &self.watches, end, &self.sessions),
            ),
        })
    }
}

impl<C: zksim::Client<Event = zkrecipes::AppEvent>> Monitor<C> for LivenessMonitor {
    fn observe(&mut self, world: &Sim<C>, step: &StepLog) -> Result<(), Violation> {
        self.on_step(world, step);
        Ok(())
    }
    fn finish(&mut self, world: &Sim<C>) -> Result<(), Violation> {
        self.on_finish(&End::of(world)).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;
    use zksim::{Reply, Response};

    fn end(done: &[bool], nodes: &[(&str, SessionId)]) -> End {
        End {
            quiescent: false,
            progress_possible: false,
            done: done.to_vec(),
            sessions: (0..done.len()).map(|c| 1000 + c as SessionId).collect(),
            nodes: nodes.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            crashed: Vec::new(),
        }
    }

    #[test]
    fn a_finished_run_passes() {
        let mut m = LivenessMonitor::new();
        m.on_step(
            &FakeView::new(2),
            &[req(0), req(1), acq(0, 1), rel(0), acq(1, 2), rel(1)],
        );
        let mut e = end(&[true, true], &[]);
        e.quiescent = true;
        assert_eq!(m.on_finish(&e), Ok(Judged::Fine));
    }

    #[test]
    fn a_cut_off_run_is_not_judged() {
        let mut m = LivenessMonitor::new();
        m.on_step(&FakeView::new(2), &[req(0), req(1), acq(0, 1)]);
        // Time ran out while client 0 holds the lock.
        assert_eq!(m.on_finish(&end(&[false, false], &[])), Ok(Judged::CutOff));
        // The step bound stopped a run that could still go on.
        let mut m = LivenessMonitor::new();
        m.on_step(&FakeView::new(2), &[req(0), req(1)]);
        let mut e = end(&[false, false], &[]);
        e.progress_possible = true;
        assert_eq!(m.on_finish(&e), Ok(Judged::CutOff));
    }

    /// Client 1 watches client 0's node, client 0 watches client 1's: a cycle.
    #[test]
    fn a_stuck_run_is_explained_by_its_wait_for_graph() {
        let mut m = LivenessMonitor::new();
        let log = [
            req(0),
            req(1),
            req(2),
            exists_watch(0, 4, "/lock/n-1"),
            exists_watch(1, 4, "/lock/n-0"),
            reply(0, 4, Ok(Response::Exists(None))),
            reply(1, 4, Ok(Response::Exists(None))),
        ];
        m.on_step(&FakeView::new(3), &log);
        let e = end(
            &[false, false, false],
            &[("/lock", 0), ("/lock/n-0", 1000), ("/lock/n-1", 1001)],
        );
        let err = m.on_finish(&e).unwrap_err();
        assert_eq!(err.property, Property::Liveness);
        let text = &err.explanation;
        assert!(
            text.contains("client 0, client 1, client 2 still wait"),
            "{text}"
        );
        assert!(
            text.contains("client 1 watches /lock/n-0: /lock/n-0 is owned by client 0"),
            "{text}"
        );
        assert!(text.contains("client 2 waits but holds no watch"), "{text}");
        assert!(
            text.contains("cycle: /lock/n-0 ↔ /lock/n-1 ↔ client 0 ↔ client 1"),
            "{text}"
        );
    }

    #[test]
    fn a_consumed_watch_is_gone_and_lost_sessions_are_excused() {
        let mut m = LivenessMonitor::new();
        let log = [
            req(0),
            req(1),
            exists_watch(1, 4, "/lock/n-0"),
            reply(1, 4, Ok(Response::Exists(None))),
            deleted(1, "/lock/n-0"),
            // Client 0 crashed: its session expired.
            ended(1000, true),
        ];
        m.on_step(&FakeView::new(2), &log);
        let err = m.on_finish(&end(&[false, false], &[])).unwrap_err();
        assert!(
            err.explanation.contains("client 1 still waits"),
            "{}",
            err.explanation
        );
        assert!(!err.explanation.contains("client 0"), "{}", err.explanation);
        assert!(
            err.explanation.contains("holds no watch"),
            "{}",
            err.explanation
        );
        let _: Reply = Ok(Response::Synced);
    }

    #[test]
    fn a_crashed_client_is_not_judged() {
        let mut m = LivenessMonitor::new();
        m.on_step(&FakeView::new(2), &[req(0), req(1), acq(1, 1), rel(1)]);
        let mut e = end(&[false, true], &[]);
        e.quiescent = true;
        e.crashed = vec![true, false];
        assert_eq!(m.on_finish(&e), Ok(Judged::Fine));
    }

    #[test]
    fn done_while_waiting_is_a_violation() {
        let mut m = LivenessMonitor::new();
        m.on_step(&FakeView::new(1), &[req(0)]);
        let mut e = end(&[true], &[]);
        e.quiescent = true;
        let err = m.on_finish(&e).unwrap_err();
        assert!(err.explanation.contains("client 0 finished still waiting"));
    }
}
