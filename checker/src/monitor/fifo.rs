//! `fifo`: clients acquire in the order they joined the line.
//!
//! If client A was `Enqueued` (its node exists on the ensemble) strictly
//! before client B `Requested` the lock, and A neither gave up (`GaveUp`) nor
//! lost its session meanwhile, then A acquires before B. Readers of a
//! read/write lock may overtake each other (they hold together), so a pair
//! of two readers is never judged.
//!
//! A client that gave up and retries the same round keeps the moment it
//! first asked (its old node may still hold its place), but while it has
//! given up it is in nobody's way: others may overtake it.
//!
//! The monitor keeps no clock of its own: when B requests, it remembers
//! who is enqueued at that moment ("ahead of B"); when B acquires, anyone
//! still waiting among them was overtaken. Each overtaken pair counts once.

use std::collections::{BTreeMap, BTreeSet};

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening, SessionId};

use super::view::{who, Measured, Sessions, View};
use super::{Kinds, Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wait {
    shared: bool,
    /// The session the client's node belongs to, once enqueued.
    enqueued: Option<(SessionId, Option<i64>)>,
    /// Clients enqueued (and still in line) when this one requested.
    ahead: BTreeSet<ClientId>,
    /// Gave up and has not asked again yet: out of line.
    given_up: bool,
}

impl Wait {
    fn in_line(&self) -> bool {
        self.enqueued.is_some() && !self.given_up
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FifoMonitor {
    waiting: BTreeMap<ClientId, Wait>,
    sessions: Sessions,
    violations: Measured<u64>,
}

impl FifoMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        let wait = |w: &Wait| Wait {
            shared: w.shared,
            enqueued: w.enqueued.map(|(s, seq)| (r.session(s), seq)),
            ahead: w.ahead.iter().map(|&c| r.client(c)).collect(),
            given_up: w.given_up,
        };
        FifoMonitor {
            waiting: self
                .waiting
                .iter()
                .map(|(&c, w)| (r.client(c), wait(w)))
                .collect(),
            sessions: self.sessions.renamed(r),
            violations: self.violations.clone(),
        }
    }

    pub fn new() -> Self {
        Self::default()
    }
    /// Overtaken pairs so far.
    pub fn violations(&self) -> u64 {
        self.violations.0
    }

    /// The client is out of everyone's way; `forget` also ends its round.
    fn leave_line(&mut self, client: ClientId, forget: bool) {
        if forget {
            self.waiting.remove(&client);
        } else if let Some(wait) = self.waiting.get_mut(&client) {
            wait.given_up = true;
            wait.enqueued = None;
        }
        for (&c, wait) in self.waiting.iter_mut() {
            if c != client {
                wait.ahead.remove(&client);
            }
        }
    }

    fn start_waiting(&mut self, client: ClientId, shared: bool) {
        if let Some(wait) = self.waiting.get_mut(&client) {
            // A retry of a round it gave up: it keeps the moment it first asked.
            wait.given_up = false;
            return;
        }
        let ahead = self
            .waiting
            .iter()
            .filter(|(&c, w)| c != client && w.in_line())
            .map(|(&c, _)| c)
            .collect();
        self.waiting.insert(
            client,
            Wait {
                shared,
                enqueued: None,
                ahead,
                given_up: false,
            },
        );
    }
}

impl Monitor for FifoMonitor {
    /// The line's comings and goings, and sessions that end (their
    /// clients leave the line).
    const READS: Kinds = Kinds::APP.union(Kinds::SESSION_ENDED);

    fn pass<V: View + ?Sized>(&mut self, view: &V) {
        self.sessions.refresh(view);
    }

    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        self.sessions.refresh(view);
        let mut first = None;
        for happening in step {
            match happening {
                Happening::SessionEnded { session, .. } => {
                    let gone: Vec<ClientId> = self
                        .waiting
                        .iter()
                        .filter(|(_, w)| matches!(w.enqueued, Some((s, _)) if s == *session))
                        .map(|(&c, _)| c)
                        .collect();
                    for client in gone {
                        self.leave_line(client, false);
                    }
                }
                Happening::App { client, event } => match *event {
                    AppEvent::Requested { shared } => self.start_waiting(*client, shared),
                    AppEvent::Enqueued { seq } => {
                        if self.waiting.get(client).is_none_or(|w| w.given_up) {
                            self.start_waiting(*client, false);
                        }
                        let session = view.session_of(*client);
                        if let Some(wait) = self.waiting.get_mut(client) {
                            wait.enqueued = Some((session, seq));
                        }
                    }
                    AppEvent::Acquired { shared, .. } => {
                        if let Some(wait) = self.waiting.get(client) {
                            let overtaken: Vec<ClientId> = wait
                                .ahead
                                .iter()
                                .copied()
                                .filter(|a| {
                                    self.waiting.get(a).is_some_and(|aw| {
                                        aw.in_line() && !(aw.shared && shared && wait.shared)
                                    })
                                })
                                .collect();
                            for a in &overtaken {
                                self.violations.0 += 1;
                                let seq = |c: &ClientId| match self
                                    .waiting
                                    .get(c)
                                    .and_then(|w| w.enqueued)
                                {
                                    Some((_, Some(s))) => format!(" (sequence {s})"),
                                    _ => String::new(),
                                };
                                first.get_or_insert_with(|| Violation {
                                    property: Property::Fifo,
                                    explanation: format!(
                                        "{} acquired the lock at tick {} ahead of {}, which was already \
                                         in line{} before {} even asked and is still waiting with \
                                         its session alive: the lock is not first-come, first-served",
                                        who(*client),
                                        view.now(),
                                        who(*a),
                                        seq(a),
                                        who(*client),
                                    ),
                                });
                            }
                        }
                        self.leave_line(*client, true);
                    }
                    AppEvent::GaveUp => self.leave_line(*client, false),
                    _ => {}
                },
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn tally(&self, tally: &mut Tally) {
        tally.fifo_violations += self.violations();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    #[test]
    fn first_in_line_first_served() {
        let mut m = FifoMonitor::new();
        let v = FakeView::new(3);
        let log = [
            req(0),
            enq(0, 1),
            req(1),
            req(2),
            enq(2, 2),
            enq(1, 3),
            acq(0, 1),
            rel(0),
            // 1 and 2 requested concurrently (neither was enqueued when the other asked).
            acq(1, 3),
            rel(1),
            acq(2, 2),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
        assert_eq!(m.violations(), 0);
    }

    #[test]
    fn overtaking_a_client_in_line_is_caught() {
        let mut m = FifoMonitor::new();
        let v = FakeView::new(3);
        let log = [
            req(0),
            enq(0, 1),
            acq(0, 1),
            req(1),
            enq(1, 2),
            req(2),
            enq(2, 3),
            rel(0),
            acq(2, 3),
        ];
        let err = m.observe(&v, &log).unwrap_err();
        assert_eq!(err.property, Property::Fifo);
        assert!(
            err.explanation.contains("client 2 acquired"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("ahead of client 1"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("sequence 2"),
            "{}",
            err.explanation
        );
        assert_eq!(m.violations(), 1);
    }

    #[test]
    fn giving_up_or_losing_the_session_forfeits_the_place() {
        let v = FakeView::new(3);
        let mut m = FifoMonitor::new();
        let log = [req(1), enq(1, 1), req(2), enq(2, 2), gave_up(1), acq(2, 2)];
        assert_eq!(m.observe(&v, &log), Ok(()));
        let mut m = FifoMonitor::new();
        let log = [
            req(1),
            enq(1, 1),
            req(2),
            enq(2, 2),
            ended(1001, true),
            acq(2, 2),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
    }

    /// Client 1 kept its node through a retry: its place dates from its first request.
    #[test]
    fn a_retry_keeps_its_first_request() {
        let v = FakeView::new(3);
        let mut m = FifoMonitor::new();
        let log = [
            req(1),
            enq(1, 0),
            gave_up(1),
            req(0),
            enq(0, 1),
            req(1),
            enq(1, 0),
            acq(1, 0),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
        // While 1 had given up, 2 asked and joined: 2 is ahead of nobody, 0 still is.
        let mut m = FifoMonitor::new();
        let log = [
            req(0),
            enq(0, 0),
            req(1),
            enq(1, 1),
            gave_up(0),
            req(2),
            enq(2, 2),
            req(0),
            acq(2, 2),
        ];
        let err = m.observe(&v, &log).unwrap_err();
        assert!(
            err.explanation.contains("ahead of client 1"),
            "{}",
            err.explanation
        );
        assert_eq!(m.violations(), 1, "client 0 had given up when 2 asked");
    }

    #[test]
    fn readers_may_overtake_readers() {
        let v = FakeView::new(2);
        let mut m = FifoMonitor::new();
        let log = [
            req_read(0),
            enq(0, 1),
            req_read(1),
            enq(1, 2),
            read(1, 2),
            read(0, 1),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
    }
}
