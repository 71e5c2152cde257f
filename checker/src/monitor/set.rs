//! Every monitor a run needs, behind one value that lives in the explored state.
//!
//! A set runs every monitor that fits the recipe's family (lock families get
//! exclusion, fencing, FIFO, herd, liveness and leaks; queues and elections
//! their own), plus any other property a scenario names, so that figures are
//! always complete. Only *hard* properties stop a run; *report* properties
//! are counted in [`Figures::violations`] (once per run each); the rest are
//! measured and otherwise ignored.

use std::collections::BTreeSet;

use zkrecipes::Family;

use super::election::ElectionMonitor;
use super::fenced::FencedMonitor;
use super::fifo::FifoMonitor;
use super::figures::Figures;
use super::herd::HerdMonitor;
use super::leaks::LeakMonitor;
use super::liveness::LivenessMonitor;
use super::mutex::MutexMonitor;
use super::queue::QueueMonitor;
use super::view::{End, Measured};
use super::{Property, Sim, StepLog, Violation};

/// Every monitor a scenario asked for (and those its family always measures).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MonitorSet {
    hard: Vec<Property>,
    report: Vec<Property>,
    mutex: Option<MutexMonitor>,
    fenced: Option<FencedMonitor>,
    fifo: Option<FifoMonitor>,
    herd: Option<HerdMonitor>,
    liveness: Option<LivenessMonitor>,
    leaks: Option<LeakMonitor>,
    queue: Option<QueueMonitor>,
    election: Option<ElectionMonitor>,
    /// Properties that broke in this run (reported once each).
    broken: Measured<BTreeSet<Property>>,
    ended: Measured<bool>,
    /// A hard violation found while the world started, reported by the
    /// first `observe` or `finish` (starting cannot fail).
    at_start: Option<Violation>,
}

impl MonitorSet {
    /// `hard`: properties whose violation fails the run; `report`: only measured.
    pub fn new(
        family: Family,
        _clients: usize,
        root: &str,
        hard: &[Property],
        report: &[Property],
    ) -> Self {
        let is_lock = matches!(family, Family::Lock | Family::RwLock);
        let asked = |p: Property| hard.contains(&p) || report.contains(&p);
        let with = |p: Property, by_family: bool| by_family || asked(p);
        MonitorSet {
            hard: hard.to_vec(),
            report: report.to_vec(),
            mutex: with(Property::MutualExclusion, is_lock).then(|| MutexMonitor::new(family)),
            fenced: with(Property::FencedExclusion, is_lock).then(FencedMonitor::new),
            fifo: with(Property::Fifo, is_lock).then(FifoMonitor::new),
            herd: with(Property::NoHerd, is_lock).then(|| HerdMonitor::new(family)),
            liveness: with(Property::Liveness, is_lock).then(LivenessMonitor::new),
            leaks: with(Property::NoLeaks, true).then(|| LeakMonitor::new(root)),
            queue: with(Property::QueueSafety, family == Family::Queue).then(QueueMonitor::new),
            election: with(Property::Election, family == Family::Election)
                .then(ElectionMonitor::new),
            broken: Measured(BTreeSet::new()),
            ended: Measured(false),
            at_start: None,
        }
    }

    /// Sort a monitor's verdict: hard violations are returned, report-only
    /// ones recorded.
    fn weigh(&mut self, verdict: Result<(), Violation>, hard: &mut Option<Violation>) {
        let Err(violation) = verdict else {
            return;
        };
        let p = violation.property;
        if self.hard.contains(&p) {
            self.broken.0.insert(p);
            hard.get_or_insert(violation);
        } else if self.report.contains(&p) {
            self.broken.0.insert(p);
        }
    }

    /// Observe what starting the world did (`World::new_with_log`'s log).
    /// A hard violation there is returned by the next `observe`/`finish`.
    pub fn start(&mut self, world: &Sim, log: &StepLog) {
        if let Err(v) = self.observe(world, log) {
            self.at_start.get_or_insert(v);
        }
    }

    pub fn observe(&mut self, world: &Sim, step: &StepLog) -> Result<(), Violation> {
        let mut hard = self.at_start.take();
        let verdicts = [
            self.mutex.as_mut().map(|m| m.on_step(world, step)),
            self.fenced.as_mut().map(|m| m.on_step(world, step)),
            self.fifo.as_mut().map(|m| m.on_step(world, step)),
            self.herd.as_mut().map(|m| m.on_step(world, step)),
            self.queue.as_mut().map(|m| m.on_step(world, step)),
            self.election.as_mut().map(|m| m.on_step(world, step)),
        ];
        if let Some(m) = self.liveness.as_mut() {
            m.on_step(world, step);
        }
        if let Some(m) = self.leaks.as_mut() {
            m.on_step(world, step);
        }
        for verdict in verdicts.into_iter().flatten() {
            self.weigh(verdict, &mut hard);
        }
        hard.map_or(Ok(()), Err)
    }

    pub fn finish(&mut self, world: &Sim) -> Result<(), Violation> {
        let end = End::of(world);
        self.finish_with(&end)
    }

    /// [`MonitorSet::finish`] on an end state read elsewhere (tests).
    pub fn finish_with(&mut self, end: &End) -> Result<(), Violation> {
        self.ended.0 = true;
        let mut hard = self.at_start.take();
        if let Some(m) = self.herd.as_mut() {
            m.on_finish();
        }
        let verdicts = [
            self.liveness.as_mut().map(|m| m.on_finish(end).map(|_| ())),
            self.leaks.as_mut().map(|m| m.on_finish(end)),
            self.queue.as_mut().map(|m| m.on_finish(end)),
            self.election.as_mut().map(|m| m.on_finish(end)),
        ];
        for verdict in verdicts.into_iter().flatten() {
            self.weigh(verdict, &mut hard);
        }
        hard.map_or(Ok(()), Err)
    }

    /// What this run measured so far (one run).
    pub fn figures(&self) -> Figures {
        let mut f = Figures {
            runs: 1,
            ..Figures::default()
        };
        if let Some(m) = &self.herd {
            m.add_figures(&mut f);
        }
        if let Some(m) = &self.mutex {
            f.overlaps = m.overlaps();
        }
        if let Some(m) = &self.fenced {
            f.stale_writes = m.stale_writes();
            f.accepted_writes = m.accepted_writes();
        }
        if let Some(m) = &self.fifo {
            f.fifo_violations = m.violations();
        }
        if let Some(m) = &self.liveness {
            match m.stuck() {
                Some(true) => f.stuck_runs = 1,
                Some(false) => f.cut_off_runs = 1,
                None => {}
            }
        }
        if let Some(m) = &self.leaks {
            f.leaked_nodes = m.leaked();
        }
        if let Some(m) = &self.queue {
            (f.offered, f.taken) = m.counts();
        }
        if let Some(m) = &self.election {
            f.elections = m.elections();
        }
        f.violations = self.broken.0.iter().map(|&p| (p, 1)).collect();
        f
    }
}
