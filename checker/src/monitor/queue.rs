//! `queue`: every offered item is taken exactly once, in queue order.
//!
//! **Queue order** is the order the ensemble gave the items' nodes: the
//! czxid of the node whose confirmed create made the offer (the `Created`
//! reply the offering client handled in the step it emitted `Offered`). For a
//! sequential node under one parent this is the order of the sequence
//! suffixes. An offer with no such reply in its step falls back to the order
//! in which offers were confirmed.
//!
//! Judged: an item taken twice (or taken when it was never offered, once the
//! run is over) breaks the queue; a consumer taking an item that comes before
//! one it already took breaks the order (several consumers racing may finish
//! their takes in any order, so order is judged per consumer); at a quiescent
//! end, an offered item nobody took is lost.

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Delivery, Happening, Response};

use super::view::{who, End, Measured, View};
use super::{Monitor, Property, Sim, StepLog, Violation};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueMonitor {
    /// item → (queue position, offering client)
    offered: BTreeMap<u64, ((i64, u64), ClientId)>,
    taken: BTreeMap<u64, ClientId>,
    /// Each consumer's last taken position.
    last_taken: BTreeMap<ClientId, ((i64, u64), u64)>,
    confirmed: u64,
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

    pub fn on_step(&mut self, view: &impl View, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        let mut czxid: BTreeMap<ClientId, i64> = BTreeMap::new();
        for happening in step {
            match happening {
                Happening::Delivered {
                    client,
                    delivery:
                        Delivery::Reply {
                            reply: Ok(Response::Created { stat, .. }),
                            ..
                        },
                } => {
                    czxid.insert(*client, stat.czxid);
                }
                Happening::App {
                    client,
                    event: AppEvent::Offered { item },
                } => {
                    self.counts.0 .0 += 1;
                    self.confirmed += 1;
                    let position = (
                        czxid.get(client).copied().unwrap_or(i64::MAX),
                        self.confirmed,
                    );
                    self.offered.insert(*item, (position, *client));
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
                    let Some(&(position, _)) = self.offered.get(item) else {
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

    pub fn on_finish(&mut self, end: &End) -> Result<(), Violation> {
        if let Some((item, c)) = self
            .taken
            .iter()
            .find(|(i, _)| !self.offered.contains_key(i))
        {
            return Err(Violation {
                property: Property::QueueSafety,
                explanation: format!("{} took item {item}, which no client ever offered", who(*c)),
            });
        }
        if !end.quiescent {
            return Ok(());
        }
        let lost: Vec<String> = self
            .offered
            .iter()
            .filter(|(i, _)| !self.taken.contains_key(i))
            .map(|(i, (_, c))| format!("item {i} (offered by {})", who(*c)))
            .collect();
        if lost.is_empty() {
            return Ok(());
        }
        Err(Violation {
            property: Property::QueueSafety,
            explanation: format!(
                "every client is done, yet {} offered item{} never taken: {}",
                lost.len(),
                if lost.len() == 1 { " was" } else { "s were" },
                lost.join(", ")
            ),
        })
    }
}

impl<C: zksim::Client<Event = zkrecipes::AppEvent>> Monitor<C> for QueueMonitor {
    fn observe(&mut self, world: &Sim<C>, step: &StepLog) -> Result<(), Violation> {
        self.on_step(world, step)
    }
    fn finish(&mut self, world: &Sim<C>) -> Result<(), Violation> {
        self.on_finish(&End::of(world))
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
        assert_eq!(m.on_step(&v, &log), Ok(()));
        assert_eq!(m.on_finish(&quiescent()), Ok(()));
        assert_eq!(m.counts(), (2, 2));
    }

    #[test]
    fn duplicates_disorder_and_losses_are_caught() {
        let v = FakeView::new(3);
        let mut m = QueueMonitor::new();
        let err = m
            .on_step(
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
        let err = m.on_step(&v, &log).unwrap_err();
        assert!(
            err.explanation
                .contains("took item 1 at tick 0 after item 2"),
            "{}",
            err.explanation
        );

        let mut m = QueueMonitor::new();
        m.on_step(&v, &[created(0, 5), offered(0, 1)]).unwrap();
        let err = m.on_finish(&quiescent()).unwrap_err();
        assert!(
            err.explanation.contains("item 1 (offered by client 0)"),
            "{}",
            err.explanation
        );
    }
}
