//! What a run costs in time: acquisition latency, the run's total time,
//! how busy the servers were, how many watch notifications they sent — in
//! model time for a timed simulated run ([`run_timed`]), in wall time for
//! a real server's run (`zkreal`'s `compare` example), measured by one [`TimeLedger`].
//!
//! Like [`Tally`](zkcheck::monitor::Tally), everything merges exactly (sums and histograms), so a
//! cell's figures do not depend on the order or threads its seeds ran on.

use std::collections::BTreeMap;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Delivery, Happening};

use zkcheck::monitor::{ratio, Histogram};
use zkcheck::run::{Ending, RunOutcome};
use zkcheck::scenario::Scenario;

use super::TimedChooser;

/// Time figures of one or many runs (µs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeFigures {
    pub runs: u64,
    /// From `Requested` to `Acquired`, per acquisition (µs).
    pub latency_us: Histogram,
    /// Per run: from its start to its last `Released` (µs), summed over runs.
    pub total_us: u64,
    /// Per run: the busiest server's busy time (µs), summed over runs. `None`
    /// where it cannot be observed (a real server, from its clients).
    pub busy_us: Option<u64>,
    /// Watch notifications sent by the servers (on a real server: received
    /// by the clients, the same count when no connection breaks).
    pub notifications: u64,
}

impl TimeFigures {
    pub fn merge(&mut self, other: &TimeFigures) {
        // Busy time is known for all runs or for none.
        self.busy_us = if self.runs == 0 {
            other.busy_us
        } else if other.runs == 0 {
            self.busy_us
        } else {
            self.busy_us.zip(other.busy_us).map(|(a, b)| a + b)
        };
        self.runs += other.runs;
        self.latency_us.merge(&other.latency_us);
        self.total_us += other.total_us;
        self.notifications += other.notifications;
    }
    /// Mean acquisition latency in milliseconds.
    pub fn mean_latency_ms(&self) -> f64 {
        self.latency_us.mean() / 1000.0
    }
    /// 99th-percentile acquisition latency in milliseconds.
    pub fn p99_latency_ms(&self) -> f64 {
        self.latency_us.quantile(0.99).unwrap_or(0) as f64 / 1000.0
    }
    /// Mean total time of a run in milliseconds.
    pub fn mean_total_ms(&self) -> f64 {
        ratio(self.total_us, self.runs) / 1000.0
    }
    /// The busiest server's share of the run's time it was busy.
    pub fn busy_fraction(&self) -> Option<f64> {
        self.busy_us.map(|b| ratio(b, self.total_us))
    }
    /// Watch notifications per run.
    pub fn notifications_per_run(&self) -> f64 {
        ratio(self.notifications, self.runs)
    }
}

/// Reads a run's happenings with their times and keeps the time figures.
/// Every lock client asks for the lock when it starts, at time 0.
#[derive(Clone, Debug, Default)]
pub struct TimeLedger {
    requested: BTreeMap<usize, u64>,
    latency_us: Histogram,
    last_release: u64,
    delivered_watches: u64,
}

impl TimeLedger {
    /// A ledger for `clients` clients that asked at time 0.
    pub fn new(clients: usize) -> Self {
        TimeLedger {
            requested: (0..clients).map(|c| (c, 0)).collect(),
            ..TimeLedger::default()
        }
    }

    /// `happening` took place at `at` µs.
    pub fn observe(&mut self, at: u64, happening: &Happening<AppEvent>) {
        match happening {
            Happening::App {
                client,
                event: AppEvent::Requested { .. },
            } => {
                self.requested.entry(*client).or_insert(at);
            }
            Happening::App {
                client,
                event: AppEvent::Acquired { .. },
            } => {
                if let Some(asked) = self.requested.remove(client) {
                    self.latency_us.record(at.saturating_sub(asked));
                }
            }
            Happening::App {
                client,
                event: AppEvent::GaveUp,
            } => {
                self.requested.remove(client);
            }
            Happening::App {
                event: AppEvent::Released,
                ..
            } => self.last_release = self.last_release.max(at),
            Happening::Delivered {
                delivery: Delivery::Watch(_),
                ..
            } => self.delivered_watches += 1,
            _ => {}
        }
    }

    /// The figures of this one run; `busy_us` and `notifications` as the
    /// caller knows them (`None`: the notifications clients received).
    pub fn into_figures(self, busy_us: Option<u64>, notifications: Option<u64>) -> TimeFigures {
        TimeFigures {
            runs: 1,
            latency_us: self.latency_us,
            total_us: self.last_release,
            busy_us,
            notifications: notifications.unwrap_or(self.delivered_watches),
        }
    }
}

/// One seeded run under the scenario's timing model ([`TimedChooser`]):
/// the usual outcome (figures, violation, schedule) and its time figures.
pub fn run_timed<C: RecipeSet>(scenario: &Scenario<C>, seed: u64) -> (RunOutcome, TimeFigures) {
    run_timed_until(scenario, seed, &|| false).0
}

/// [`run_timed`], ending the run early when `stop` says so (read every
/// few thousand steps, [`super::drive::drive_timed_until`]); the `bool`
/// says whether the run was stopped that way (its figures are then those
/// of a run cut short, and its end was not judged).
pub fn run_timed_until<C: RecipeSet>(
    scenario: &Scenario<C>,
    seed: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> ((RunOutcome, TimeFigures), bool) {
    let mut chooser = TimedChooser::new(scenario.timing, seed);
    let clock = chooser.clock();
    let mut ledger = TimeLedger::new(scenario.clients);
    let run = super::drive::drive_timed_until(
        scenario,
        &mut chooser,
        |_, _, log| {
            let at = clock.get();
            for happening in log {
                ledger.observe(at, happening);
            }
        },
        stop,
    );
    let stopped = run.ending == Ending::Stopped && stop();
    chooser.finish(&run.model.world);
    let busy = chooser.busy_us().iter().copied().max().unwrap_or(0);
    let time = ledger.into_figures(Some(busy), Some(chooser.notifications()));
    ((run.into_outcome(seed), time), stopped)
}
