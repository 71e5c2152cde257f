//! `liveness`: every client that asked (for a lock, for leadership) gets it
//! and finishes.
//!
//! Judged at the end of the run, and only when the end says something:
//! * **Cut off.** If some event other than `Tick` or a fault is still
//!   enabled, the step bound stopped a run that could go on: not judged.
//!   If a client still holds (time ran out mid-hold) or none waits, the
//!   bounds were too tight: not judged either. Both count as cut-off runs.
//! * **Stuck.** Nothing but time or a fault could happen, nobody holds, and
//!   a client is waiting (`Requested`, neither `Acquired`/`Elected` nor
//!   `GaveUp` since), or gave up and never asked again, or is not done while
//!   its session has ended and it never opened a new one: it waits for
//!   something nothing will bring.
//! * **Finished badly.** The world is quiescent but a client is done while
//!   still waiting or holding, or after giving up for good (its last word
//!   on what it asked for was `GaveUp`).
//!
//! Only crashed clients are excused: a crashed process cannot finish. A
//! client whose session ended while it waited is judged like any other: a
//! correct recipe opens a new session and asks again. A stuck run is
//! explained by its wait-for graph ([`super::waitfor`]).

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening, SessionId};

use super::view::{who, End, Measured, Sessions, View};
use super::waitfor::{self, WatchBook};
use super::{Kinds, Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Waiting,
    Holding,
    /// `GaveUp` and has not asked again (yet).
    GaveUp,
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
}

impl LivenessMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        LivenessMonitor {
            phase: self.phase.iter().map(|(&c, &p)| (r.client(c), p)).collect(),
            ended: self.ended.iter().map(|&s| r.session(s)).collect(),
            sessions: self.sessions.renamed(r),
            watches: self.watches.renamed(r),
            verdict: self.verdict.clone(),
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Clients waiting or given up (not crashed), in id order.
    pub fn waiting<C: zksim::Client>(&self, world: &zksim::World<C>) -> Vec<ClientId> {
        self.phase
            .iter()
            .filter(|(&c, &p)| {
                matches!(p, Phase::Waiting | Phase::GaveUp)
                    && c < world.num_clients()
                    && !world.is_crashed(c)
            })
            .map(|(&c, _)| c)
            .collect()
    }

    /// `Some(true)` stuck, `Some(false)` cut off, `None` fine or not yet judged.
    pub fn stuck(&self) -> Option<bool> {
        self.verdict.0
    }

    /// Judge the end and remember how it ended (for [`LivenessMonitor::stuck`]).
    pub fn conclude(&mut self, end: &End) -> Result<Judged, Violation> {
        let judged = self.judge(end);
        self.verdict.0 = match judged {
            Err(_) => Some(true),
            Ok(Judged::CutOff) => Some(false),
            Ok(Judged::Fine) => None,
        };
        judged
    }

    fn judge(&self, end: &End) -> Result<Judged, Violation> {
        let clients = end.done.len();
        let in_phase = |p: Phase| -> Vec<ClientId> {
            self.phase
                .iter()
                .filter(|(&c, &ph)| ph == p && c < clients && !end.is_crashed(c))
                .map(|(&c, _)| c)
                .collect()
        };
        let (waiting, holding, gave_up) = (
            in_phase(Phase::Waiting),
            in_phase(Phase::Holding),
            in_phase(Phase::GaveUp),
        );
        // Not done, not crashed, and its session is over with no new one.
        let orphaned: Vec<ClientId> = (0..clients)
            .filter(|&c| {
                !end.done[c] && !end.is_crashed(c) && self.ended.contains(&end.sessions[c])
            })
            .collect();
        if end.quiescent {
            let odd = waiting.iter().chain(&holding).chain(&gave_up).copied();
            if let Some(c) = odd.min() {
                let doing = if waiting.contains(&c) {
                    "still waiting for what it asked for"
                } else if holding.contains(&c) {
                    "still holding"
                } else {
                    "having given up for good: it never got what it asked for"
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
        let unfinished = (0..clients).any(|c| !end.done[c] && !end.is_crashed(c));
        if !unfinished {
            return Ok(Judged::Fine);
        }
        let mut stuck: Vec<ClientId> = waiting
            .iter()
            .chain(&gave_up)
            .chain(&orphaned)
            .copied()
            .collect();
        stuck.sort_unstable();
        stuck.dedup();
        if end.progress_possible || !holding.is_empty() || stuck.is_empty() {
            return Ok(Judged::CutOff);
        }
        let names: Vec<String> = stuck
            .iter()
            .map(|&c| {
                let why = if orphaned.contains(&c) {
                    " (its session ended and it never opened a new one)"
                } else if gave_up.contains(&c) {
                    " (it gave up and never asked again)"
                } else {
                    ""
                };
                format!("{}{why}", who(c))
            })
            .collect();
        Err(Violation {
            property: Property::Liveness,
            explanation: format!(
                "stuck: nobody holds and nothing but time can happen, yet {} still \
                 wait{} for what {} asked for\n{}",
                names.join(", "),
                if stuck.len() == 1 { "s" } else { "" },
                if stuck.len() == 1 { "it" } else { "they" },
                waitfor::explain(&stuck, &self.watches, end, &self.sessions),
            ),
        })
    }
}

impl Monitor for LivenessMonitor {
    /// Waiting and holding (application events), sessions that end, and
    /// what the watch book reads (watching reads sent and answered, watch
    /// events delivered).
    const READS: Kinds = Kinds::APP
        .union(Kinds::SESSION_ENDED)
        .union(Kinds::SENT)
        .union(Kinds::DELIVERED);

    fn pass<V: View + ?Sized>(&mut self, view: &V) {
        self.sessions.refresh(view);
    }

    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
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
                    AppEvent::Acquired { .. } | AppEvent::Elected => {
                        self.phase.insert(*client, Phase::Holding);
                    }
                    AppEvent::Released
                    | AppEvent::LostLock
                    | AppEvent::Abdicated
                    | AppEvent::Taken { .. } => {
                        self.phase.remove(client);
                    }
                    AppEvent::GaveUp => {
                        self.phase.insert(*client, Phase::GaveUp);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        Ok(())
    }

    fn finish(&mut self, end: &End) -> Result<(), Violation> {
        self.conclude(end).map(drop)
    }

    fn tally(&self, tally: &mut Tally) {
        match self.stuck() {
            Some(true) => tally.stuck_runs += 1,
            Some(false) => tally.cut_off_runs += 1,
            None => {}
        }
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
            paused: false,
        }
    }

    #[test]
    fn a_finished_run_passes() {
        let mut m = LivenessMonitor::new();
        m.observe(
            &FakeView::new(2),
            &[req(0), req(1), acq(0, 1), rel(0), acq(1, 2), rel(1)],
        )
        .unwrap();
        let mut e = end(&[true, true], &[]);
        e.quiescent = true;
        assert_eq!(m.conclude(&e), Ok(Judged::Fine));
    }

    #[test]
    fn a_cut_off_run_is_not_judged() {
        let mut m = LivenessMonitor::new();
        m.observe(&FakeView::new(2), &[req(0), req(1), acq(0, 1)])
            .unwrap();
        // Time ran out while client 0 holds the lock.
        assert_eq!(m.conclude(&end(&[false, false], &[])), Ok(Judged::CutOff));
        // The step bound stopped a run that could still go on.
        let mut m = LivenessMonitor::new();
        m.observe(&FakeView::new(2), &[req(0), req(1)]).unwrap();
        let mut e = end(&[false, false], &[]);
        e.progress_possible = true;
        assert_eq!(m.conclude(&e), Ok(Judged::CutOff));
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
        m.observe(&FakeView::new(3), &log).unwrap();
        let e = end(
            &[false, false, false],
            &[("/lock", 0), ("/lock/n-0", 1000), ("/lock/n-1", 1001)],
        );
        let err = m.conclude(&e).unwrap_err();
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
        m.observe(&FakeView::new(2), &log).unwrap();
        let mut e = end(&[false, false], &[]);
        e.crashed = vec![true, false];
        let err = m.conclude(&e).unwrap_err();
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
        m.observe(&FakeView::new(2), &[req(0), req(1), acq(1, 1), rel(1)])
            .unwrap();
        let mut e = end(&[false, true], &[]);
        e.quiescent = true;
        e.crashed = vec![true, false];
        assert_eq!(m.conclude(&e), Ok(Judged::Fine));
    }

    #[test]
    fn done_while_waiting_is_a_violation() {
        let mut m = LivenessMonitor::new();
        m.observe(&FakeView::new(1), &[req(0)]).unwrap();
        let mut e = end(&[true], &[]);
        e.quiescent = true;
        let err = m.conclude(&e).unwrap_err();
        assert!(err.explanation.contains("client 0 finished still waiting"));
    }

    #[test]
    fn giving_up_for_good_is_judged() {
        // Quiescent: client 0 finished with GaveUp as its last word.
        let mut m = LivenessMonitor::new();
        m.observe(
            &FakeView::new(2),
            &[req(0), req(1), acq(1, 1), gave_up(0), rel(1)],
        )
        .unwrap();
        let mut e = end(&[true, true], &[]);
        e.quiescent = true;
        let err = m.conclude(&e).unwrap_err();
        assert!(
            err.explanation
                .contains("client 0 finished having given up for good"),
            "{}",
            err.explanation
        );
        // Not quiescent, nothing but time can happen: it is stuck.
        let mut m = LivenessMonitor::new();
        m.observe(&FakeView::new(2), &[req(0), gave_up(0)]).unwrap();
        let err = m.conclude(&end(&[false, true], &[])).unwrap_err();
        assert!(
            err.explanation
                .contains("client 0 (it gave up and never asked again)"),
            "{}",
            err.explanation
        );
        // Giving up and asking again is fine.
        let mut m = LivenessMonitor::new();
        m.observe(
            &FakeView::new(1),
            &[req(0), gave_up(0), req(0), acq(0, 3), rel(0)],
        )
        .unwrap();
        let mut e = end(&[true], &[]);
        e.quiescent = true;
        assert_eq!(m.conclude(&e), Ok(Judged::Fine));
    }

    #[test]
    fn a_session_that_ended_while_waiting_is_judged() {
        let mut m = LivenessMonitor::new();
        // Client 0's session (1000) ended while it waited; it never reopened.
        m.observe(&FakeView::new(2), &[req(0), ended(1000, true)])
            .unwrap();
        let err = m.conclude(&end(&[false, true], &[])).unwrap_err();
        assert!(
            err.explanation
                .contains("client 0 (its session ended and it never opened a new one)"),
            "{}",
            err.explanation
        );
    }
}
