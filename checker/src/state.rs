//! The explored state: the simulated world and the monitors judging it.
//!
//! Monitors live inside the state (not beside it) so that two runs reaching
//! the same world with different monitor memories (say, one already saw a
//! wasted wakeup) are not merged by visited-state dedup.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use zkrecipes::{AnyRecipe, AppEvent, RecipeSet};
use zksim::fingerprint::{stable_hash, StableHasher};
use zksim::{Event, Fault, Happening, World};

use crate::aim::{Aims, Roles};
use crate::invariant::Invariant;
use crate::monitor::Measured;
use crate::monitor::MonitorSet;
use crate::monitor::{Property, Violation};
use crate::scenario::Scenario;

/// World + monitors: one value, `Clone + Hash + Eq`, over clients of
/// recipe type `C` (the registered recipes by default).
///
/// The monitors are shared copy-on-write (like the world's big parts), so
/// that copying a state is cheap.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SystemState<C: RecipeSet = AnyRecipe> {
    /// The simulated ensemble and the recipe's clients.
    pub world: World<C>,
    /// The property monitors' state, judged after every step; part of the
    /// state's identity (what a monitor remembers can tell two states apart).
    pub monitors: Arc<MonitorSet>,
    /// Faults aimed at clients or roles, and the roles clients play; `None`
    /// (most scenarios) when every fault may strike anyone, so that a state
    /// copied by the search does not carry two empty tables inline.
    pub(crate) aiming: Option<Box<Aiming>>,
    /// The scenario's invariants: stateless, so not part of the identity.
    invariants: Measured<Arc<[Invariant<C>]>>,
}

/// Where a scenario aims its faults, and the roles that decide it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Aiming {
    /// Which client (or role) each fault kind may strike (fixed for the run).
    pub aims: Aims,
    /// The roles clients play, from their application events.
    pub roles: Roles,
}

impl<C: RecipeSet> SystemState<C> {
    /// The scenario's initial state: clients built as the scenario's
    /// recipe, connected and started.
    ///
    /// The scenario must be valid ([`Scenario::validate`]); an unknown
    /// recipe builds no clients.
    pub fn new(scenario: &Scenario<C>) -> Self {
        Self::with_start_log(scenario, &mut Vec::new())
    }

    /// [`SystemState::new`], also handing back what starting the clients did
    /// (traces print it before the first step).
    pub fn with_start_log(scenario: &Scenario<C>, start: &mut Vec<Happening<AppEvent>>) -> Self {
        let clients: Vec<C> = (0..scenario.clients)
            .map_while(|i| scenario.build_client(i))
            .collect();
        // The monitors see what starting the clients did (their first
        // requests, any early events) like any other step.
        start.clear();
        let world = World::new_with_log(scenario.config(), clients, start);
        let mut monitors = MonitorSet::new(
            scenario.family(),
            scenario.clients,
            &scenario.root,
            &scenario.hard,
            &scenario.report,
        )
        .with_custom(&scenario.monitors);
        monitors.start(&world, start);
        let aims = scenario.aims;
        let aiming = (!aims.is_empty()).then(|| {
            let mut roles = Roles::new(scenario.clients).with_groups(scenario.client_roles());
            roles.observe(start);
            Box::new(Aiming { aims, roles })
        });
        SystemState {
            world,
            monitors: Arc::new(monitors),
            aiming,
            invariants: Measured(scenario.always.iter().copied().collect()),
        }
    }

    /// [`SystemState::new`] for exhaustive search: the monitors judge the hard
    /// properties only ([`MonitorSet::judge_only`]), which is all a
    /// verdict needs, so that each explored state is small and cheap to copy.
    pub fn for_search(scenario: &Scenario<C>) -> Self {
        let mut model = Self::new(scenario);
        let monitors = Arc::unwrap_or_clone(model.monitors).judge_only();
        model.monitors = Arc::new(monitors);
        model
    }

    /// Append the enabled events, in the world's deterministic order,
    /// leaving out faults the scenario's aims do not allow now.
    pub fn enabled(&self, out: &mut Vec<Event>) {
        self.enabled_where(out, |_| true);
    }

    /// [`SystemState::enabled`] without the faults `keep` rejects
    /// ([`World::enabled_where`]).
    pub fn enabled_where(&self, out: &mut Vec<Event>, keep: impl Fn(&Fault) -> bool) {
        let from = out.len();
        self.world.enabled_where(out, keep);
        if let Some(aiming) = &self.aiming {
            let mut i = from;
            while i < out.len() {
                if aiming.aims.allows(&out[i], &aiming.roles, &self.world) {
                    i += 1;
                } else {
                    out.remove(i);
                }
            }
        }
    }

    /// Apply one enabled event and let the monitors judge it. `log` is
    /// cleared first and holds what the step did afterwards.
    ///
    /// A panic during the step (a recipe's `unwrap` on a failed reply, say)
    /// is a `no-panic` violation, not a crash: the run ends here and the
    /// model must not be stepped again (it may be half-updated).
    pub fn step(
        &mut self,
        event: &Event,
        log: &mut Vec<Happening<AppEvent>>,
    ) -> Result<(), Violation> {
        self.step_with(event, log, |world, log| world.step(event, log))
    }

    /// [`SystemState::step`], and which clients' slots the step wrote into
    /// `written` ([`zksim::World::step_noting`]).
    pub fn step_noting(
        &mut self,
        event: &Event,
        log: &mut Vec<Happening<AppEvent>>,
        written: &mut Vec<zksim::ClientId>,
    ) -> Result<(), Violation> {
        written.clear();
        self.step_with(event, log, |world, log| {
            world.step_noting(event, log, written)
        })
    }

    fn step_with(
        &mut self,
        event: &Event,
        log: &mut Vec<Happening<AppEvent>>,
        apply: impl FnOnce(&mut World<C>, &mut Vec<Happening<AppEvent>>),
    ) -> Result<(), Violation> {
        log.clear();
        crate::panics::catch(|| {
            let sessions = self.world.next_session_id();
            apply(&mut self.world, log);
            if let Some(aiming) = &mut self.aiming {
                aiming.roles.observe(log);
            }
            let sessions_moved = self.world.next_session_id() != sessions;
            if self.monitors.concerns(log, sessions_moved) {
                Arc::make_mut(&mut self.monitors).observe(&self.world, log)?;
            }
            self.judge_invariants()
        })
        .unwrap_or_else(|caught| {
            Err(Violation {
                property: Property::NoPanic,
                explanation: format!(
                    "the step `{}` panicked: {caught}",
                    crate::words::event_words(event)
                ),
            })
        })
    }

    /// The run is over: judge end-of-run properties.
    pub fn finish(&mut self) -> Result<(), Violation> {
        Arc::make_mut(&mut self.monitors).finish(&self.world)?;
        self.judge_invariants()
    }

    fn judge_invariants(&self) -> Result<(), Violation> {
        self.invariants
            .0
            .iter()
            .try_for_each(|i| i.judge(&self.world))
    }

    /// Whether nothing more will happen by itself (the run may stop here).
    pub fn is_quiescent(&self) -> bool {
        self.world.is_quiescent()
    }

    /// What keeps [`SystemState::renamed`] from renaming this state apart from
    /// the clients' own logic, one phrase each (empty: nothing does).
    pub(crate) fn rename_blockers(&self) -> Vec<String> {
        let mut blockers = Vec::new();
        if self.aiming.is_some() {
            blockers.push("faults aimed at roles".to_string());
        }
        if !self.invariants.0.is_empty() {
            let names: Vec<String> = self
                .invariants
                .0
                .iter()
                .map(|i| format!("`{}`", i.name))
                .collect();
            blockers.push(format!(
                "the invariant(s) {} added with Check::always (a function of the world may \
                 read client ids any way it likes)",
                names.join(", ")
            ));
        }
        blockers.extend(self.monitors.rename_blockers());
        blockers
    }

    /// This state under a renaming of interchangeable clients (symmetry
    /// reduction, `explore::exhaustive::symmetry`), or `None` when some part
    /// cannot be renamed: a client logic or a judged monitor without
    /// renaming, the scenario's own invariants or monitors (code that may
    /// read client ids any way it likes), or faults aimed at roles.
    pub fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        if self.aiming.is_some() || !self.invariants.0.is_empty() {
            return None;
        }
        Some(SystemState {
            world: self.world.renamed(r)?,
            monitors: Arc::new(self.monitors.renamed(r)?),
            aiming: None,
            invariants: self.invariants.clone(),
        })
    }

    /// The fingerprint of [`SystemState::renamed`]'s result (a function of the
    /// renamed state alone, not equal to its [`SystemState::fingerprint`]),
    /// computed without building it where parts are shared with states
    /// seen before: the visited-set key of symmetry reduction.
    pub(crate) fn renamed_fingerprint(&self, r: &zksim::rename::Renaming) -> Option<u64> {
        if self.aiming.is_some() || !self.invariants.0.is_empty() {
            return None;
        }
        let world = self.world.renamed_fingerprint(r)?;
        let monitors = zksim::rename::cached_renamed_hash(
            stable_hash(&*self.monitors),
            r.id() ^ 0x3030_0000_0000_0003,
            || self.monitors.renamed(r).map(|m| stable_hash(&m)),
        )?;
        let mut h = StableHasher::new();
        h.write_u64(world);
        h.write_u64(monitors);
        self.roles().hash(&mut h);
        Some(h.finish())
    }

    /// The key under which a cycle check compares states: equal for two
    /// states that differ only by a shift of the clock
    /// ([`zksim::World::time_shift_fingerprint`]; the monitors keep the
    /// ticks they stamp on events as they are), so that a run that comes
    /// back to it has come back to the same state, later. It falls back to
    /// the exact [`SystemState::fingerprint`] where absolute time may be read:
    /// a client read [`zksim::Cx::now`], or the scenario has its own
    /// invariants or monitors (code that may read `World::now`), and
    /// while a judged monitor remembers op ids (they would stay absolute
    /// beside shifted ones in the world).
    pub fn time_shift_key(&self) -> u64 {
        let shifted = if self.invariants.0.is_empty()
            && !self.monitors.has_custom()
            && !self.monitors.holds_op_ids()
        {
            self.world.time_shift_fingerprint()
        } else {
            None
        };
        let Some(world) = shifted else {
            return self.fingerprint();
        };
        let mut h = StableHasher::new();
        h.write_u64(0x7153_4b1f_0000_0005);
        h.write_u64(world);
        self.monitors.hash(&mut h);
        self.roles().hash(&mut h);
        h.finish()
    }

    /// A fingerprint of world *and* monitors, for visited-state dedup.
    pub fn fingerprint(&self) -> u64 {
        let mut h = StableHasher::new();
        h.write_u64(self.world.fingerprint());
        self.monitors.hash(&mut h);
        self.roles().hash(&mut h);
        h.finish()
    }

    /// Whether some fault kind is aimed (the scenario's `[faults.aim]`).
    pub(crate) fn is_aimed(&self) -> bool {
        self.aiming.is_some()
    }

    /// The roles clients play (empty unless faults are aimed): part of the
    /// state's identity, hashed the same whether or not it is kept.
    fn roles(&self) -> &Roles {
        static EMPTY: Roles = Roles::EMPTY;
        self.aiming.as_deref().map_or(&EMPTY, |a| &a.roles)
    }
}

/// Passing monitors over steps they do not read, and skipping steps no
/// monitor reads, changes nothing along real runs (`monitor/set/tests.rs`
/// says why and checks it on hand-made views); and the model shows its
/// set exactly the steps that concern it.
#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::monitor::set::tests::{EveryMonitor, Seen};
    use crate::monitor::{Custom, Monitor, StepLog, View};

    /// Steps per run, and runs per scenario.
    const STEPS: usize = 300;
    const SEEDS: u64 = 12;

    fn run(scenario: &Scenario, seed: u64, seen: &mut Seen) {
        let mut start = Vec::new();
        let mut model = SystemState::with_start_log(scenario, &mut start);
        // Every monitor, whatever the scenario asks for.
        let mut every = EveryMonitor::new(scenario.family(), &scenario.root);
        every.observe(&model.world, &start);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut events, mut log) = (Vec::new(), Vec::new());
        for _ in 0..STEPS {
            events.clear();
            model.enabled(&mut events);
            if events.is_empty() {
                break;
            }
            let event = events[rng.random_range(0..events.len())].clone();
            let before = Arc::clone(&model.monitors);
            let sessions = model.world.next_session_id();
            let verdict = model.step(&event, &mut log);
            let sessions_moved = model.world.next_session_id() != sessions;
            let world = &model.world;
            every.pass_or_observe(world, &log, sessions_moved, seen);
            let concerned = before.concerns(&log, sessions_moved);
            // The model shows its set the steps that concern it, and only those
            // (`before` shares the set, so showing it a step copies it).
            assert_eq!(Arc::ptr_eq(&before, &model.monitors), !concerned);
            if !concerned {
                // Showing the set the step it was spared must change nothing.
                let mut shown = (*before).clone();
                assert!(shown.observe(world, &log).is_ok());
                assert_eq!(format!("{shown:?}"), format!("{before:?}"));
                seen.skipped += 1;
            }
            if verdict.is_err() {
                break;
            }
        }
    }

    #[test]
    fn monitors_passed_over_a_step_end_as_if_shown_it() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut files: Vec<_> = [dir.clone(), dir.join("seeds")]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).expect("scenarios/ lists"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        assert!(files.len() > 30, "the shipped scenarios are found");
        let mut seen = Seen::default();
        for file in &files {
            let scenario = Scenario::from_file(file).expect("a shipped scenario loads");
            for seed in 0..SEEDS {
                run(&scenario, seed, &mut seen);
            }
        }
        // The comparisons above ran, on steps that started sessions too.
        assert!(seen.passes > 10_000, "{} passes", seen.passes);
        assert!(seen.passes_with_new_session > 0);
        assert!(seen.skipped > 1_000, "{} skipped steps", seen.skipped);
    }

    /// A user's monitor that counts the steps it is shown.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct StepCounter(usize);

    impl Monitor for StepCounter {
        fn observe<V: View + ?Sized>(&mut self, _: &V, _: &StepLog) -> Result<(), Violation> {
            self.0 += 1;
            Ok(())
        }
    }

    /// A user's monitor may read anything at any step (it does not say
    /// otherwise): with one in the set, no step is skipped.
    #[test]
    fn a_users_monitor_is_shown_every_step() {
        let mut scenario = Scenario::lock("sequential", 3);
        scenario.monitors.push(Custom::new(StepCounter(0)));
        let mut model = SystemState::new(&scenario);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut events, mut log) = (Vec::new(), Vec::new());
        let mut steps = 0;
        while steps < STEPS {
            events.clear();
            model.enabled(&mut events);
            if events.is_empty() {
                break;
            }
            let event = events[rng.random_range(0..events.len())].clone();
            model
                .step(&event, &mut log)
                .expect("the sequential lock holds");
            steps += 1;
        }
        assert!(steps > 50);
        // Shown the start, then every step.
        let counted = format!("{:?}", model.monitors);
        assert!(
            counted.contains(&format!("StepCounter({})", steps + 1)),
            "{counted} after {steps} steps"
        );
    }
}
