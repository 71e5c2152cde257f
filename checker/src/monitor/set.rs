//! Every monitor a run needs, behind one value that lives in the explored state.
//!
//! A set runs every monitor that fits the recipe's family (the catalogue's
//! [`catalogue::PropertySpec::applies_to`]: lock families get exclusion,
//! fencing, FIFO, herd, liveness and leaks; queues and elections their
//! own), plus any other property a scenario names, so that figures are
//! always complete. Monitors that only judge and count nothing (`owner`,
//! `asked`: [`Property::has_figures`]) run only when the scenario makes
//! their property hard or reports it. Only *hard* properties stop a run;
//! *report* properties are counted in [`Tally::violations`] (once per run
//! each); the rest are measured and otherwise ignored.
//!
//! Only the monitors of hard properties are part of the set's identity
//! (`Hash`/`Eq`, hence of visited-state dedup): they alone decide a run's
//! verdict. The others only measure, so two states that differ in them are
//! the same state for the checker; keeping them out keeps exhaustive search
//! as small as the hard properties allow.

use std::collections::BTreeSet;

use zkrecipes::Family;
use zksim::rename::Renaming;
use zksim::{Client, ClientId, World};

use super::asked::AskedMonitor;
use super::catalogue;
use super::custom::Custom;
use super::election::ElectionMonitor;
use super::fenced::FencedMonitor;
use super::fifo::FifoMonitor;
use super::herd::HerdMonitor;
use super::leaks::LeakMonitor;
use super::liveness::LivenessMonitor;
use super::mutex::MutexMonitor;
use super::owner::OwnerMonitor;
use super::queue::QueueMonitor;
use super::tally::Tally;
use super::view::{End, Measured, View};
use super::{Kinds, Monitor, Property, StepLog, Violation};

/// Runs `$body` with `$m` bound to every monitor of a [`Monitors`] that is
/// present, in one fixed order: safety before liveness, so that when
/// several break at one step the first reported explains the others (a
/// lost item or a leaked node is why a client is stuck, not the other way
/// round). Each call goes through the [`Monitor`] trait, statically.
macro_rules! each {
    ($monitors:expr, $as:ident, |$m:ident| $body:expr) => {{
        let monitors = $monitors;
        if let Some($m) = monitors.mutex.$as() {
            $body;
        }
        if let Some($m) = monitors.fenced.$as() {
            $body;
        }
        if let Some($m) = monitors.fifo.$as() {
            $body;
        }
        if let Some($m) = monitors.herd.$as() {
            $body;
        }
        if let Some($m) = monitors.queue.$as() {
            $body;
        }
        if let Some($m) = monitors.election.$as() {
            $body;
        }
        if let Some($m) = monitors.asked.$as() {
            $body;
        }
        if let Some($m) = monitors.owner.$as() {
            $body;
        }
        if let Some($m) = monitors.leaks.$as() {
            $body;
        }
        if let Some($m) = monitors.liveness.$as() {
            $body;
        }
    }};
}

/// `m` observes `step` if the step holds a kind of happening it reads
/// ([`Monitor::READS`]), and is passed over it otherwise.
#[inline(always)]
fn observe_one<M: Monitor, V: View + ?Sized>(
    m: &mut M,
    world: &V,
    step: &StepLog,
    kinds: Kinds,
    out: &mut Vec<Violation>,
) {
    if kinds.meets(M::READS) {
        out.extend(m.observe(world, step).err());
    } else {
        m.pass(world);
    }
}

/// One group of monitors (each present or not).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Monitors {
    mutex: Option<MutexMonitor>,
    fenced: Option<FencedMonitor>,
    fifo: Option<FifoMonitor>,
    herd: Option<HerdMonitor>,
    liveness: Option<LivenessMonitor>,
    leaks: Option<LeakMonitor>,
    queue: Option<QueueMonitor>,
    election: Option<ElectionMonitor>,
    asked: Option<AskedMonitor>,
    owner: Option<OwnerMonitor>,
}

impl Monitors {
    /// The monitors of the properties `wanted` selects.
    fn of(family: Family, root: &str, wanted: impl Fn(Property) -> bool) -> Self {
        Monitors {
            mutex: wanted(Property::MutualExclusion).then(|| MutexMonitor::new(family)),
            fenced: wanted(Property::FencedExclusion).then(FencedMonitor::new),
            fifo: wanted(Property::Fifo).then(FifoMonitor::new),
            herd: wanted(Property::NoHerd).then(|| HerdMonitor::new(family)),
            liveness: wanted(Property::Liveness).then(LivenessMonitor::new),
            leaks: wanted(Property::NoLeaks).then(|| LeakMonitor::new(root)),
            queue: wanted(Property::QueueSafety).then(QueueMonitor::new),
            election: wanted(Property::Election).then(ElectionMonitor::new),
            asked: wanted(Property::AcquiredOnlyWhenAsked).then(AskedMonitor::new),
            owner: wanted(Property::Owner).then(|| OwnerMonitor::new(root)),
        }
    }

    /// Drop the monitors of the properties `keep` rejects. (Destructured
    /// without `..`, so that a new monitor cannot be forgotten here.)
    fn retain(&mut self, keep: impl Fn(Property) -> bool) {
        fn keep_if<T>(slot: &mut Option<T>, keep: bool) {
            if !keep {
                *slot = None;
            }
        }
        let Monitors {
            mutex,
            fenced,
            fifo,
            herd,
            liveness,
            leaks,
            queue,
            election,
            asked,
            owner,
        } = self;
        keep_if(mutex, keep(Property::MutualExclusion));
        keep_if(fenced, keep(Property::FencedExclusion));
        keep_if(fifo, keep(Property::Fifo));
        keep_if(herd, keep(Property::NoHerd));
        keep_if(liveness, keep(Property::Liveness));
        keep_if(leaks, keep(Property::NoLeaks));
        keep_if(queue, keep(Property::QueueSafety));
        keep_if(election, keep(Property::Election));
        keep_if(asked, keep(Property::AcquiredOnlyWhenAsked));
        keep_if(owner, keep(Property::Owner));
    }

    fn is_empty(&self) -> bool {
        *self == Monitors::default()
    }

    /// These monitors under a renaming of clients, or `None` if one of them
    /// cannot be renamed yet (its state is then not known to be symmetric).
    fn renamed(&self, r: &Renaming) -> Option<Self> {
        let Monitors {
            mutex,
            fenced,
            fifo,
            herd,
            liveness,
            leaks,
            queue,
            election,
            asked,
            owner,
        } = self;
        if queue.is_some() {
            return None;
        }
        Some(Monitors {
            mutex: mutex.as_ref().map(|m| m.renamed(r)),
            fenced: fenced.as_ref().map(|m| m.renamed(r)),
            fifo: fifo.as_ref().map(|m| m.renamed(r)),
            herd: herd.as_ref().map(|m| m.renamed(r)),
            liveness: liveness.as_ref().map(|m| m.renamed(r)),
            leaks: leaks.as_ref().map(|m| m.renamed(r)),
            queue: None,
            election: election.as_ref().map(|m| m.renamed(r)),
            asked: asked.as_ref().map(|m| m.renamed(r)),
            owner: owner.as_ref().map(|m| m.renamed(r)),
        })
    }

    /// Show the step to each monitor that reads one of its `kinds`; pass
    /// the others over it.
    fn observe<V: View + ?Sized>(
        &mut self,
        world: &V,
        step: &StepLog,
        kinds: Kinds,
        out: &mut Vec<Violation>,
    ) {
        each!(self, as_mut, |m| observe_one(m, world, step, kinds, out));
    }

    /// The kinds of happening some monitor here reads.
    fn reads(&self) -> Kinds {
        fn reads_of<M: Monitor>(_: &M) -> Kinds {
            M::READS
        }
        let mut kinds = Kinds::NONE;
        each!(self, as_ref, |m| kinds = kinds | reads_of(m));
        kinds
    }

    fn finish(&mut self, end: &End, out: &mut Vec<Violation>) {
        each!(self, as_mut, |m| out.extend(m.finish(end).err()));
    }

    fn tally(&self, tally: &mut Tally) {
        each!(self, as_ref, |m| m.tally(tally));
    }
}

/// Every monitor a scenario asked for (and those its family always measures).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MonitorSet {
    hard: Vec<Property>,
    report: Vec<Property>,
    /// Monitors of hard properties: the set's identity.
    judged: Monitors,
    /// Every other monitor that runs: measured only. Only the `report`
    /// properties' (or `None`) when the set judges only
    /// ([`MonitorSet::judge_only`]): exhaustive search keeps just what
    /// decides a verdict in each explored state, so that a state is cheap
    /// to copy and small to keep.
    measured: Measured<Option<Box<Monitors>>>,
    /// Properties that broke in this run (reported once each).
    broken: Measured<BTreeSet<Property>>,
    /// A hard violation found while the world started, reported by the
    /// first `observe` or `finish` (starting cannot fail).
    at_start: Option<Violation>,
    /// Scratch for one step's verdicts (kept to avoid allocating per step).
    scratch: Measured<Vec<Violation>>,
    /// The user's own monitors ([`MonitorSet::with_custom`]): always hard,
    /// so part of the set's identity (and kept by `judge_only`).
    custom: Box<[Custom]>,
    /// The kinds of happening some monitor of the set reads (all of them
    /// with user monitors present): a step with none of them, and no new
    /// session, changes nothing here ([`MonitorSet::concerns`]).
    reads: Kinds,
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
        let by_family = |p: Property| catalogue::applies_to(p, family);
        let is_hard = |p: Property| hard.contains(&p);
        MonitorSet {
            hard: hard.to_vec(),
            report: report.to_vec(),
            judged: Monitors::of(family, root, is_hard),
            measured: Measured(Some(Box::new(Monitors::of(family, root, |p| {
                !is_hard(p) && ((by_family(p) && p.has_figures()) || report.contains(&p))
            })))),
            broken: Measured(BTreeSet::new()),
            at_start: None,
            scratch: Measured(Vec::new()),
            custom: Box::new([]),
            reads: Kinds::NONE,
        }
        .with_reads()
    }

    /// The set with [`MonitorSet::reads`] worked out again (after a change
    /// of its monitors).
    fn with_reads(mut self) -> Self {
        let measured = self.measured.0.as_ref().map_or(Kinds::NONE, |m| m.reads());
        self.reads = if self.custom.is_empty() {
            self.judged.reads() | measured
        } else {
            // The set skips no step on a user's word: a user's monitor is
            // shown every step it reads and passed over the others.
            Kinds::ALL
        };
        self
    }

    /// Whether `step` must be shown to the set: it holds a kind of
    /// happening one of the monitors reads, or a client's session changed
    /// in it (`sessions_moved`: the world's next session id moved; monitors
    /// that mirror the clients' sessions keep up on every step, see
    /// [`Monitor::pass`]), or a violation found at the start waits to be
    /// reported. Otherwise `observe` would only pass every monitor over the
    /// step, each doing nothing, and the step can be skipped: half the
    /// steps of a run are the servers' own work, which no built-in monitor
    /// reads.
    pub(crate) fn concerns(&self, step: &StepLog, sessions_moved: bool) -> bool {
        sessions_moved || self.at_start.is_some() || Kinds::in_step(step).meets(self.reads)
    }

    /// The set with the user's own monitors added. Their violations fail
    /// the run whatever property they name; they come after the built-in
    /// ones of the same step.
    pub(crate) fn with_custom(mut self, monitors: &[Custom]) -> Self {
        self.custom = self.custom.iter().chain(monitors).cloned().collect();
        self.with_reads()
    }

    /// Drop every monitor that only measures, keeping those of the
    /// scenario's `report` properties: the set then judges the hard
    /// properties and counts report-only violations, and no other figure
    /// is kept (what exhaustive search needs from each explored state).
    pub fn judge_only(mut self) -> Self {
        let report = &self.report;
        let measured = self.measured.0.take().map(|mut m| {
            m.retain(|p| report.contains(&p));
            m
        });
        self.measured.0 = measured.filter(|m| !m.is_empty());
        self.with_reads()
    }

    /// Whether liveness is judged (a hard property here).
    pub(crate) fn judges_liveness(&self) -> bool {
        self.judged.liveness.is_some()
    }

    /// Whether a judged monitor remembers op ids (the leaks monitor's
    /// deletes in flight): a key that shifts op ids must then keep them
    /// absolute ([`crate::state::SystemState::time_shift_key`]).
    pub(crate) fn holds_op_ids(&self) -> bool {
        self.judged
            .leaks
            .as_ref()
            .is_some_and(|m| m.deletes_in_flight())
    }

    /// Whether the user's own monitors run (code that may read anything,
    /// the absolute time included).
    pub(crate) fn has_custom(&self) -> bool {
        !self.custom.is_empty()
    }

    /// The clients the liveness monitor sees waiting (asked and not granted
    /// yet, or gave up and never asked again), crashed ones left out; empty
    /// when liveness is not judged. What a cycle without progress must
    /// leave waiting to be a livelock.
    pub(crate) fn waiting_clients<C: Client>(&self, world: &World<C>) -> Vec<ClientId> {
        self.judged
            .liveness
            .as_ref()
            .map(|m| m.waiting(world))
            .unwrap_or_default()
    }

    /// Sort the step's verdicts: the first hard violation is returned,
    /// report-only ones are recorded. `custom`: how many verdicts at the
    /// end of the scratch are the user monitors' (hard whatever they name).
    fn weigh(&mut self, custom: usize) -> Result<(), Violation> {
        // Most steps break nothing.
        if self.scratch.0.is_empty() && self.at_start.is_none() {
            return Ok(());
        }
        let mut hard = self.at_start.take();
        let first_custom = self.scratch.0.len() - custom;
        for (i, violation) in self.scratch.0.drain(..).enumerate() {
            let p = violation.property;
            if i >= first_custom || self.hard.contains(&p) {
                self.broken.0.insert(p);
                hard.get_or_insert(violation);
            } else if self.report.contains(&p) {
                self.broken.0.insert(p);
            }
        }
        hard.map_or(Ok(()), Err)
    }

    /// What keeps [`MonitorSet::renamed`] from renaming this set, one
    /// phrase each (empty: nothing does): what symmetry reduction names
    /// when it has to stay off.
    pub(crate) fn rename_blockers(&self) -> Vec<String> {
        let mut blockers = Vec::new();
        if self.judged.queue.is_some() {
            blockers.push(
                "the hard check `queue` (its monitor keeps item node paths, which it cannot \
                 rename yet; judge it in random or PCT runs, or turn symmetry off)"
                    .to_string(),
            );
        }
        if !self.custom.is_empty() {
            blockers.push(format!(
                "{} monitor(s) of your own added with Check::monitor (a Monitor has no renaming: \
                 it may read client ids any way it likes)",
                self.custom.len()
            ));
        }
        if self.at_start.is_some() {
            blockers.push("a violation at the start of the run".to_string());
        }
        blockers
    }

    /// The set's identity under a renaming of clients (symmetry
    /// reduction): the judged monitors renamed, the measured ones kept as
    /// they are (they are not part of the identity). `None` when a judged
    /// monitor cannot be renamed, or the user's own monitors are present
    /// (they may read client ids in any way).
    pub(crate) fn renamed(&self, r: &Renaming) -> Option<Self> {
        if !self.custom.is_empty() || self.at_start.is_some() {
            return None;
        }
        Some(MonitorSet {
            judged: self.judged.renamed(r)?,
            ..self.clone()
        })
    }

    /// Observe what starting the world did (`World::new_with_log`'s log).
    /// A hard violation there is returned by the next `observe`/`finish`.
    pub fn start<C: Client>(&mut self, world: &World<C>, log: &StepLog) {
        if let Err(v) = self.observe(world, log) {
            self.at_start.get_or_insert(v);
        }
    }

    /// Judge one step (the world is already after it): every monitor that reads
    /// a kind of happening in `step` observes it, the others pass. Returns the
    /// first hard violation.
    pub fn observe<C: Client>(
        &mut self,
        world: &World<C>,
        step: &StepLog,
    ) -> Result<(), Violation> {
        let kinds = Kinds::in_step(step);
        self.judged.observe(world, step, kinds, &mut self.scratch.0);
        if let Some(m) = self.measured.0.as_mut() {
            m.observe(world, step, kinds, &mut self.scratch.0);
        }
        let before = self.scratch.0.len();
        for m in self.custom.iter_mut() {
            self.scratch.0.extend(m.observe(world, step, kinds).err());
        }
        let custom = self.scratch.0.len() - before;
        self.weigh(custom)
    }

    /// The run ended: judge what only the end can tell (liveness, leaks) on
    /// `world`'s final state.
    pub fn finish<C: Client>(&mut self, world: &World<C>) -> Result<(), Violation> {
        let end = End::of(world);
        self.finish_with(&end)
    }

    /// [`MonitorSet::finish`] on an end state read elsewhere (tests).
    pub(crate) fn finish_with(&mut self, end: &End) -> Result<(), Violation> {
        self.judged.finish(end, &mut self.scratch.0);
        if let Some(m) = self.measured.0.as_mut() {
            m.finish(end, &mut self.scratch.0);
        }
        let before = self.scratch.0.len();
        for m in self.custom.iter_mut() {
            self.scratch.0.extend(m.finish(end).err());
        }
        let custom = self.scratch.0.len() - before;
        self.weigh(custom)
    }

    /// What this run measured so far (one run).
    pub fn figures(&self) -> Tally {
        let mut f = Tally {
            runs: 1,
            ..Tally::default()
        };
        self.judged.tally(&mut f);
        if let Some(m) = &self.measured.0 {
            m.tally(&mut f);
        }
        for m in self.custom.iter() {
            m.tally(&mut f);
        }
        f.violations = self.broken.0.iter().map(|&p| (p, 1)).collect();
        f
    }
}

/// Tests, and what the model's tests need to run every monitor along
/// real runs ([`tests::EveryMonitor`]).
#[cfg(test)]
pub(crate) mod tests;
