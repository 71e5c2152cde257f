//! `queue`: every offered item is taken exactly once, in queue order.
//!
//! **Queue order** is the order the ensemble gave the items' nodes: the
//! czxid of the node whose confirmed create made the offer (the `Created`
//! reply the offering client handled in the step it emitted `Offered`). For a
//! sequential node under one parent this is the order of the sequence
//! suffixes. An offer with no such reply in its step (a producer that lost
//! the create's reply and found its node again by listing) has no known
//! place in the queue: it is judged for being taken exactly once, but never
//! for order — guessing a place (the order of confirmation, or "last") would
//! call a correct in-order take out of order.
//!
//! Judged: an item taken twice (or taken when it was never offered, once the
//! run is over and nobody is paused, crashed or cut off by a bound — one of
//! them may be a producer whose create was applied while its reply was on
//! the way) breaks the queue; a consumer taking an item that comes before
//! one it already took breaks the order (several consumers racing may finish
//! their takes in any order, so order is judged per consumer); at a quiescent
//! end, an offered item nobody took breaks it, told apart by the leader's
//! tree: its node gone is a **lost** item (a take applied whose reply was
//! lost), its node still there an item **left queued** (the consumers
//! stopped first; nothing lost). A run that ends stuck (nothing
//! but time can happen, nobody paused or crashed) is judged too: an offered
//! item whose node is gone from the leader's tree while nobody reported
//! taking it is lost (a consumer that took it and did not know).

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Delivery, Happening, Response};

use super::view::{who, End, Measured, View};
use super::{Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueMonitor {
    /// item → (queue position: the czxid of its node if known, offering client)
    offered: BTreeMap<u64, (Option<i64>, ClientId)>,
    /// item → its node's path, when the offer's `Created` reply named it.
    nodes: BTreeMap<u64, String>,
    taken: BTreeMap<u64, ClientId>,
    /// Each consumer's furthest taken position (czxid) and that item.
    last_taken: BTreeMap<ClientId, (i64, u64)>,
    counts: Measured<(u64, u64)>,
}

impl QueueMonitor {
    pub fn new() -> Self {
        Self::default()
    }
    /// (offered, taken) counts.
    pub fn counts(&self) -> (u64, u64) {
        self.counts.0
    }
}

impl QueueMonitor {
    /// A stuck end: items whose node is gone but that nobody took.
    fn judge_stuck(&self, end: &End) -> Result<(), Violation> {
        if end.progress_possible || end.paused || end.crashed.iter().any(|&c| c) {
            return Ok(());
        }
        let lost: Vec<String> = self
            .nodes
            .iter()
            .filter(|(i, path)| !self.taken.contains_key(i) && end.owner_of(path).is_none())
            .map(|(i, path)| {
                let by = self.offered.get(i).map_or(0, |o| o.1);
                format!("item {i} (offered by {}, node {path})", who(by))
            })
            .collect();
        if lost.is_empty() {
            return Ok(());
        }
        Err(lost_items("nothing but time can happen", &lost))
    }
}

/// The violation for items gone from the queue that nobody reported
/// taking, judged at a stuck run or at a finished one (`when`).
fn lost_items(when: &str, lost: &[String]) -> Violation {
    Violation {
        property: Property::QueueSafety,
        explanation: format!(
            "{when}, and {} gone from the queue that nobody reported taking: {} — lost",
            if lost.len() == 1 {
                "an item is"
            } else {
                "items are"
            },
            lost.join(", ")
        ),
    }
}

impl Monitor for QueueMonitor {
    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        let mut created: BTreeMap<ClientId, (i64, &str)> = BTreeMap::new();
        for happening in step {
            match happening {
                Happening::Delivered {
                    client,
                    delivery:
                        Delivery::Reply {
                            reply: Ok(Response::Created { stat, path }),
                            ..
                        },
                } => {
                    created.insert(*client, (stat.czxid, path));
                }
                Happening::App {
                    client,
                    event: AppEvent::Offered { item },
                } => {
                    self.counts.0 .0 += 1;
                    let node = created.get(client).copied();
                    self.offered.insert(*item, (node.map(|n| n.0), *client));
                    if let Some((_, path)) = node {
                        self.nodes.insert(*item, path.to_string());
                    }
                }
                Happening::App {
                    client,
                    event: AppEvent::Taken { item },
                } => {
                    self.counts.0 .1 += 1;
                    if let Some(&before) = self.taken.get(item) {
                        first.get_or_insert_with(|| Violation {
                            property: Property::QueueSafety,
                            explanation: format!(
                                "{} took item {item} at tick {}, but {} had already taken it: an item was handed out twice",
                                who(*client),
                                view.now(),
                                who(before)
                            ),
                        });
                        continue;
                    }
                    self.taken.insert(*item, *client);
                    let Some(&(Some(position), _)) = self.offered.get(item) else {
                        continue;
                    };
                    if let Some(&(last, last_item)) = self.last_taken.get(client) {
                        if position < last {
                            first.get_or_insert_with(|| Violation {
                                property: Property::QueueSafety,
                                explanation: format!(
                                    "{} took item {item} at tick {} after item {last_item}, but item {item} was queued first: the consumer took items out of queue order",
                                    who(*client),
                                    view.now(),
                                ),
                            });
                        }
                    }
                    if self
                        .last_taken
                        .get(client)
                        .is_none_or(|&(last, _)| position > last)
                    {
                        self.last_taken.insert(*client, (position, *item));
                    }
                }
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn finish(&mut self, end: &End) -> Result<(), Violation> {
        // "Never offered" is only known at a final end: a producer paused,
        // crashed or cut off by a bound (the clock, the step bound) with
        // its create applied and the reply still on its way has offered an
        // item it has not confirmed yet, and a consumer may take it first.
        let final_end = !end.progress_possible && !end.paused && !end.crashed.iter().any(|&c| c);
        if let Some((item, c)) = self
            .taken
            .iter()
            .find(|(i, _)| final_end && !self.offered.contains_key(i))
        {
            return Err(Violation {
                property: Property::QueueSafety,
                explanation: format!("{} took item {item}, which no client ever offered", who(*c)),
            });
        }
        if !end.quiescent {
            return self.judge_stuck(end);
        }
        // Untaken items, told apart by the tree: a node gone with nobody
        // reporting the take is a lost item (a delete applied whose reply was
        // lost); a node still there is an item left queued (its consumer
        // stopped before taking it: nothing lost, but never taken).
        let mut lost = Vec::new();
        let mut left = Vec::new();
        for (i, (_, c)) in self
            .offered
            .iter()
            .filter(|(i, _)| !self.taken.contains_key(i))
        {
            match self.nodes.get(i) {
                Some(path) if end.owner_of(path).is_none() => {
                    lost.push(format!("item {i} (offered by {}, node {path})", who(*c)))
                }
                Some(path) => left.push(format!(
                    "item {i} (offered by {}, still queued as {path})",
                    who(*c)
                )),
                None => left.push(format!("item {i} (offered by {})", who(*c))),
            }
        }
        if !lost.is_empty() {
            return Err(lost_items("every client is done", &lost));
        }
        if left.is_empty() {
            return Ok(());
        }
        Err(Violation {
            property: Property::QueueSafety,
            explanation: format!(
                "every client is done, yet {} offered item{} never taken: {}",
                left.len(),
                if left.len() == 1 { " was" } else { "s were" },
                left.join(", ")
            ),
        })
    }

    fn tally(&self, tally: &mut Tally) {
        let (offered, taken) = self.counts();
        tally.offered += offered;
        tally.taken += taken;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;
    use zksim::Stat;

    fn created(client: ClientId, czxid: i64) -> H {
        reply(
            client,
            1,
            Ok(Response::Created {
                path: format!("/q/item-{czxid}"),
                stat: Stat {
                    czxid,
                    ..Stat::default()
                },
            }),
        )
    }
    fn quiescent() -> End {
        End {
            quiescent: true,
            ..End::default()
        }
    }

    /// Issue 35 item 6: a producer paused (or cut off by the clock) with
    /// its create applied and the reply on its way has not confirmed its
    /// offer; a consumer that took the item is not taking one "never
    /// offered". At a final end (nobody paused, nothing left to happen)
    /// the same history is a violation.
    #[test]
    fn an_unconfirmed_offer_taken_is_judged_only_at_a_final_end() {
        let v = FakeView::new(2);
        let history = [taken(1, 0)];
        for unfinished in [
            End {
                paused: true,
                ..End::default()
            },
            End {
                progress_possible: true,
                ..End::default()
            },
            End {
                crashed: vec![true, false],
                ..End::default()
            },
        ] {
            let mut m = QueueMonitor::new();
            m.observe(&v, &history).unwrap();
            assert_eq!(m.finish(&unfinished), Ok(()), "{unfinished:?}");
        }
        let mut m = QueueMonitor::new();
        m.observe(&v, &history).unwrap();
        let err = m.finish(&quiescent()).unwrap_err();
        assert!(
            err.explanation.contains("which no client ever offered"),
            "{}",
            err.explanation
        );
    }

    #[test]
    fn each_item_once_in_order_passes() {
        let mut m = QueueMonitor::new();
        let v = FakeView::new(3);
        // Offers confirmed out of order (item 8's reply first) but queued by czxid.
        let log = [
            created(0, 11),
            offered(0, 8),
            created(1, 10),
            offered(1, 7),
            taken(2, 7),
            taken(2, 8),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
        assert_eq!(m.finish(&quiescent()), Ok(()));
        assert_eq!(m.counts(), (2, 2));
    }

    #[test]
    fn duplicates_disorder_and_losses_are_caught() {
        let v = FakeView::new(3);
        let mut m = QueueMonitor::new();
        let err = m
            .observe(
                &v,
                &[created(0, 5), offered(0, 1), taken(1, 1), taken(2, 1)],
            )
            .unwrap_err();
        assert!(
            err.explanation.contains("client 2 took item 1"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("client 1 had already taken it"),
            "{}",
            err.explanation
        );

        let mut m = QueueMonitor::new();
        let log = [
            created(0, 5),
            offered(0, 1),
            created(0, 6),
            offered(0, 2),
            taken(1, 2),
            taken(1, 1),
        ];
        let err = m.observe(&v, &log).unwrap_err();
        assert!(
            err.explanation
                .contains("took item 1 at tick 0 after item 2"),
            "{}",
            err.explanation
        );

        let mut m = QueueMonitor::new();
        m.observe(&v, &[created(0, 5), offered(0, 1)]).unwrap();
        let err = m.finish(&quiescent()).unwrap_err();
        assert!(
            err.explanation
                .contains("item 1 (offered by client 0, node /q/item-5) — lost"),
            "{}",
            err.explanation
        );
    }

    /// At a quiescent end an untaken item is judged by the tree: its node
    /// gone is lost (a take applied, its reply lost), its node still there
    /// was left queued (a consumer stopped; nothing lost). Both break
    /// `queue`, with different words; taking it passes.
    #[test]
    fn an_untaken_item_is_lost_or_left_queued_by_the_tree() {
        let v = FakeView::new(2);
        let run = |end: End| {
            let mut m = QueueMonitor::new();
            m.observe(&v, &[created(0, 5), offered(0, 1)]).unwrap();
            m.finish(&end)
        };
        let gone = End {
            nodes: vec![("/q".into(), 0)],
            ..quiescent()
        };
        let err = run(gone).unwrap_err();
        assert!(err.explanation.contains("— lost"), "{}", err.explanation);
        let still = End {
            nodes: vec![("/q".into(), 0), ("/q/item-5".into(), 0)],
            ..quiescent()
        };
        let err = run(still).unwrap_err();
        assert!(
            err.explanation.contains("still queued as /q/item-5")
                && !err.explanation.contains("lost"),
            "{}",
            err.explanation
        );
        let mut m = QueueMonitor::new();
        m.observe(&v, &[created(0, 5), offered(0, 1), taken(1, 1)])
            .unwrap();
        assert_eq!(m.finish(&quiescent()), Ok(()));
    }

    /// Regression: an offer recovered by listing after `ConnectionLoss` (no
    /// `Created` reply in its step) used to be placed last (`i64::MAX`), so
    /// taking it and then a later-created item was called out of order.
    #[test]
    fn a_recovered_offer_is_not_misplaced() {
        let mut m = QueueMonitor::new();
        let v = FakeView::new(2);
        let log = [
            // Item 1's create (czxid 5) applied but its reply was lost; the
            // producer found its node by listing and confirmed it.
            offered(0, 1),
            created(0, 6),
            offered(0, 2),
            taken(1, 1),
            taken(1, 2),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
        assert_eq!(m.finish(&quiescent()), Ok(()));
        // It is still judged for being taken once.
        let err = m.observe(&v, &[taken(0, 1)]).unwrap_err();
        assert!(
            err.explanation.contains("had already taken it"),
            "{}",
            err.explanation
        );
    }

    #[test]
    fn an_item_gone_untaken_at_a_stuck_end_is_lost() {
        let mut m = QueueMonitor::new();
        let v = FakeView::new(2);
        m.observe(
            &v,
            &[
                created(0, 5),
                offered(0, 1),
                created(0, 6),
                offered(0, 2),
                taken(1, 2),
            ],
        )
        .unwrap();
        // Stuck: item-5's node is gone and nobody took item 1.
        let stuck = End {
            nodes: vec![("/q".into(), 0)],
            ..End::default()
        };
        let err = m.finish(&stuck).unwrap_err();
        assert!(
            err.explanation
                .contains("item 1 (offered by client 0, node /q/item-5)"),
            "{}",
            err.explanation
        );
        // Still in the tree: a liveness matter, not a lost item.
        let waiting = End {
            nodes: vec![("/q".into(), 0), ("/q/item-5".into(), 0)],
            ..End::default()
        };
        assert_eq!(m.finish(&waiting), Ok(()));
        // Cut off, or someone paused: not judged.
        let cut = End {
            progress_possible: true,
            ..stuck.clone()
        };
        assert_eq!(m.finish(&cut), Ok(()));
        let paused = End {
            paused: true,
            ..stuck
        };
        assert_eq!(m.finish(&paused), Ok(()));
    }
}
