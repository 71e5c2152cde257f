//! The explored state: the simulated world and the monitors judging it.
//!
//! Monitors live inside the state (not beside it) so that two runs reaching
//! the same world with different monitor memories (say, one already saw a
//! wasted wakeup) are not merged by visited-state dedup.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use zkrecipes::{AnyRecipe, AppEvent, RecipeSet};
use zksim::{Event, Happening, World};

use crate::aim::{Aims, Roles};
use crate::invariant::Invariant;
use crate::monitor::set::MonitorSet;
use crate::monitor::view::Measured;
use crate::monitor::{Property, Violation};
use crate::scenario::Scenario;

/// World + monitors: one value, `Clone + Hash + Eq`, over clients of
/// recipe type `C` (the registered recipes by default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Model<C: RecipeSet = AnyRecipe> {
    pub world: World<C>,
    pub monitors: MonitorSet,
    /// Which client (or role) each fault kind may strike.
    pub aims: Aims,
    /// The roles clients play, kept only when some fault is aimed at a
    /// role (otherwise it stays empty and adds nothing to the state).
    pub roles: Roles,
    /// The scenario's invariants: stateless, so not part of the identity.
    invariants: Measured<Arc<[Invariant<C>]>>,
}

impl<C: RecipeSet> Model<C> {
    /// The scenario's initial state: clients built as the scenario's
    /// recipe, connected and started.
    ///
    /// The scenario must be valid ([`Scenario::validate`]); an unknown
    /// recipe builds no clients.
    pub fn new(scenario: &Scenario<C>) -> Self {
        Self::with_start_log(scenario, &mut Vec::new())
    }

    /// [`Model::new`], also handing back what starting the clients did
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
        );
        monitors.start(&world, start);
        let aims = scenario.aims;
        let mut roles = Roles::default();
        if !aims.is_empty() {
            roles = Roles::new(scenario.clients).with_groups(scenario.client_roles());
            roles.observe(start);
        }
        Model {
            world,
            monitors,
            aims,
            roles,
            invariants: Measured(scenario.always.iter().copied().collect()),
        }
    }

    /// Append the enabled events, in the world's deterministic order,
    /// leaving out faults the scenario's aims do not allow now.
    pub fn enabled(&self, out: &mut Vec<Event>) {
        let from = out.len();
        self.world.enabled(out);
        if !self.aims.is_empty() {
            let mut i = from;
            while i < out.len() {
                if self.aims.allows(&out[i], &self.roles, &self.world) {
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
        log.clear();
        crate::panics::catch(|| {
            self.world.step(event, log);
            if !self.aims.is_empty() {
                self.roles.observe(log);
            }
            self.monitors.observe(&self.world, log)?;
            self.judge_invariants()
        })
        .unwrap_or_else(|caught| {
            Err(Violation {
                property: Property::NoPanic,
                explanation: format!(
                    "the step `{}` panicked: {caught}",
                    crate::trace::event_words(event)
                ),
            })
        })
    }

    /// The run is over: judge end-of-run properties.
    pub fn finish(&mut self) -> Result<(), Violation> {
        self.monitors.finish(&self.world)?;
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

    /// A fingerprint of world *and* monitors, for visited-state dedup.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv64::default();
        self.world.fingerprint().hash(&mut h);
        self.monitors.hash(&mut h);
        self.roles.hash(&mut h);
        h.finish()
    }
}

/// FNV-1a: a fixed, seedless hash, the same in every process and on every
/// machine (std's `DefaultHasher` promises neither across releases).
#[derive(Clone, Copy)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv64 {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
