//! `election`: at most one client believes it leads at a time, and a
//! leader emerges.
//!
//! A client believes it leads from `Elected` until `Abdicated` (a crashed
//! client believes nothing). At the end of a run that was not cut off
//! (nothing but time or a fault could still happen), if some client is still
//! running for leader and nobody leads, no leader emerged.

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening};

use super::view::{who, End, Measured, View};
use super::{Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ElectionMonitor {
    /// Leaders and the tick they were elected.
    leaders: BTreeMap<ClientId, u64>,
    elections: Measured<u64>,
}

impl ElectionMonitor {
    pub fn new() -> Self {
        Self::default()
    }

    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        ElectionMonitor {
            leaders: self
                .leaders
                .iter()
                .map(|(&c, &since)| (r.client(c), since))
                .collect(),
            elections: self.elections.clone(),
        }
    }
    pub fn elections(&self) -> u64 {
        self.elections.0
    }
}

impl Monitor for ElectionMonitor {
    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            let Happening::App { client, event } = happening else {
                continue;
            };
            match event {
                AppEvent::Elected => {
                    self.elections.0 += 1;
                    self.leaders.retain(|&c, _| !view.is_crashed(c));
                    if let Some((&other, &since)) = self.leaders.iter().find(|(&c, _)| c != *client)
                    {
                        first.get_or_insert_with(|| Violation {
                            property: Property::Election,
                            explanation: format!(
                                "{} became leader at tick {} while {} still believed it led (since tick {since}) and had not abdicated: two leaders",
                                who(*client),
                                view.now(),
                                who(other)
                            ),
                        });
                    }
                    self.leaders.insert(*client, view.now());
                }
                AppEvent::Abdicated => {
                    self.leaders.remove(client);
                }
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn finish(&mut self, end: &End) -> Result<(), Violation> {
        if end.quiescent || end.progress_possible || !self.leaders.is_empty() {
            return Ok(());
        }
        let running: Vec<String> = (0..end.done.len())
            .filter(|&c| !end.done[c])
            .map(who)
            .collect();
        if running.is_empty() {
            return Ok(());
        }
        Err(Violation {
            property: Property::Election,
            explanation: format!(
                "nothing but time can happen and {} still run{} for leader, yet nobody leads: no leader emerged",
                running.join(", "),
                if running.len() == 1 { "s" } else { "" }
            ),
        })
    }

    fn tally(&self, tally: &mut Tally) {
        tally.elections += self.elections();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    #[test]
    fn one_leader_at_a_time_passes() {
        let mut m = ElectionMonitor::new();
        let v = FakeView::new(2);
        assert_eq!(
            m.observe(&v, &[elected(0), abdicated(0), elected(1)]),
            Ok(())
        );
        let end = End {
            done: vec![true, false],
            ..End::default()
        };
        assert_eq!(m.finish(&end), Ok(()));
        assert_eq!(m.elections(), 2);
    }

    #[test]
    fn two_leaders_and_no_leader_are_caught() {
        let v = FakeView::new(2);
        let mut m = ElectionMonitor::new();
        let err = m.observe(&v, &[elected(0), elected(1)]).unwrap_err();
        assert!(
            err.explanation.contains("client 1 became leader"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("client 0 still believed"),
            "{}",
            err.explanation
        );

        let mut m = ElectionMonitor::new();
        m.observe(&v, &[elected(0), abdicated(0)]).unwrap();
        let end = End {
            done: vec![true, false],
            ..End::default()
        };
        let err = m.finish(&end).unwrap_err();
        assert!(
            err.explanation.contains("client 1 still runs"),
            "{}",
            err.explanation
        );
    }
}
