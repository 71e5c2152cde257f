//! The property catalogue: every built-in property once, with everything
//! the checker knows about it apart from its monitor's logic — the name a
//! scenario file gives it, its name in machine-readable results, what its
//! monitor reads, which recipe families it can be judged on, which
//! families judge or measure it by default, and the few facts other layers
//! ask about it (whether it judges a run's end, which event shows it
//! judged something, what exhaustive search must treat as observed).
//!
//! Everything else reads this table: scenario parsing and validation
//! (known names, refusals of checks that do not fit a recipe), the
//! default checks of a recipe, the [`super::MonitorSet`] (which monitors a
//! family measures), result names ([`super::named`]), the verdict's
//! completeness rule, the event contract and `zkcheck list`'s family
//! names, and the roles a fault may be aimed at. It depends on nothing
//! above the monitors, so the scenario layer
//! builds on it and never the other way round.
//!
//! **Adding a property** is a [`Property`] variant, one [`PropertySpec`]
//! here, and its monitor (a [`super::Monitor`] and its slot in
//! `set.rs`). **Adding a family** is a [`Family`] variant (in zkrecipes),
//! one [`FamilySpec`] here, and the family named in the `applies_to` (and
//! default) lists of the properties that fit it; [`Families::Every`]
//! properties (liveness, leaks, no-panic) fit it already. The tests at the
//! bottom run the lookups over this table plus a toy property to show it.
//!
//! The user's own properties (`Property::Always`, `Property::Custom`) are
//! not listed: they are named by their code, apply to any recipe and are
//! never named in a scenario file.

use zkrecipes::Family;

use crate::aim::Role;

use super::asked::AskedMonitor;
use super::election::ElectionMonitor;
use super::fenced::FencedMonitor;
use super::fifo::FifoMonitor;
use super::herd::HerdMonitor;
use super::leaks::LeakMonitor;
use super::liveness::LivenessMonitor;
use super::mutex::MutexMonitor;
use super::owner::OwnerMonitor;
use super::queue::QueueMonitor;
use super::{Kinds, Monitor, Property, Tally};

/// A set of recipe families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Families {
    /// Every family, those added later included.
    Every,
    /// These families only (none: `Only(&[])`).
    Only(&'static [Family]),
}

impl Families {
    /// No family.
    pub const NONE: Families = Families::Only(&[]);

    /// Whether `family` is in the set.
    pub fn contains(self, family: Family) -> bool {
        match self {
            Families::Every => true,
            Families::Only(families) => families.contains(&family),
        }
    }
}

/// The event a hard check waits for before it can fail, and how the
/// figures show that some run emitted it: a hard check whose event no run
/// emitted judged nothing (`crate::contract`, docs/EVENTS.md).
#[derive(Clone, Copy)]
pub struct Awaited {
    /// The event, as the contract names it (for the message).
    pub event: &'static str,
    /// Whether the figures show the event was emitted at least once.
    pub seen: fn(&Tally) -> bool,
}

impl std::fmt::Debug for Awaited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Awaited")
            .field("event", &self.event)
            .finish_non_exhaustive()
    }
}

/// One built-in property: everything the checker knows about it but its
/// monitor's logic.
#[derive(Clone, Copy, Debug)]
pub struct PropertySpec {
    /// The property this entry describes.
    pub property: Property,
    /// Its name in scenario files (`checks.hard = ["mutex"]`), traces,
    /// reports and messages.
    pub name: &'static str,
    /// Its name in machine-readable results (`check --json`, `merge`):
    /// a format of its own (`zkcheck-result/…`), kept apart so that a
    /// change of the other name cannot change a result file unseen.
    pub json_name: &'static str,
    /// Whether a scenario file may name it (`no-panic` is always judged
    /// and never named).
    pub in_scenarios: bool,
    /// The kinds of happening its monitor reads: the monitor's own
    /// [`Monitor::READS`] (`no-panic` has no monitor: the model catches a
    /// step's panic).
    pub reads: Kinds,
    /// The families it can be judged on: a property over events a family
    /// never emits would hold vacuously, so naming it is refused.
    pub applies_to: Families,
    /// The families whose default checks make it hard
    /// ([`default_checks`]).
    pub hard_by_default: Families,
    /// The families whose default checks report (measure) it.
    pub reported_by_default: Families,
    /// Whether its monitor counts something for the figures (overlaps,
    /// wakeups, leaked nodes, ...). Monitors that only judge (`owner`,
    /// `asked`) run only where a scenario makes them hard or reports them:
    /// elsewhere they would produce nothing anyone reads.
    pub has_figures: bool,
    /// Whether it judges a run's *end* (what can only be judged once
    /// nothing more will happen): a run the clock cut was never at its
    /// end, so it judged nothing there (`crate::verdict`).
    pub judges_end: bool,
    /// The event it needs before it can fail, where some recipe may never
    /// emit it (the event contract).
    pub awaits: Option<Awaited>,
    /// Whether its monitor relates messages sent to and delivered to
    /// *different* clients, so that partial-order reduction must treat
    /// every send and delivery as observed when it is hard (`herd`,
    /// `queue`; `leaks` reads only a client's own deletes in flight, which
    /// only that client's steps change).
    pub reads_every_delivery: bool,
    /// Whether its monitor reads the leader's tree at each step (`owner`):
    /// partial-order reduction then counts the tree among what an
    /// observed step reads.
    pub reads_leader_tree: bool,
}

/// A recipe family as the checker names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FamilySpec {
    /// The family this entry describes.
    pub family: Family,
    /// Its name in `zkcheck list` and in messages ("a queue recipe").
    pub name: &'static str,
    /// The roles its clients' events make them play, which a fault may be
    /// aimed at (`[faults.aim]`): a lock has no leader, an election no
    /// releaser, a queue's consumers only wait. `queued` is played only by
    /// a recipe that waits in line (`zkrecipes::Recipe::WAITS_IN_LINE`).
    pub roles: &'static [Role],
}

const LOCKS: Families = Families::Only(&[Family::Lock, Family::RwLock]);
const LOCKS_AND_ELECTIONS: Families =
    Families::Only(&[Family::Lock, Family::RwLock, Family::Election]);

/// What a property entry holds unless it says otherwise.
const PLAIN: PropertySpec = PropertySpec {
    property: Property::NoPanic,
    name: "",
    json_name: "",
    in_scenarios: true,
    reads: Kinds::ALL,
    applies_to: Families::NONE,
    hard_by_default: Families::NONE,
    reported_by_default: Families::NONE,
    has_figures: true,
    judges_end: false,
    awaits: None,
    reads_every_delivery: false,
    reads_leader_tree: false,
};

/// Every built-in property, in the order scenarios and messages list them.
pub const CATALOGUE: &[PropertySpec] = &[
    // Never two clients that both believe they hold the lock.
    PropertySpec {
        property: Property::MutualExclusion,
        name: "mutex",
        json_name: "mutex",
        reads: <MutexMonitor as Monitor>::READS,
        applies_to: LOCKS,
        hard_by_default: LOCKS,
        ..PLAIN
    },
    // The protected resource never accepts a write out of fence order.
    PropertySpec {
        property: Property::FencedExclusion,
        name: "fenced-mutex",
        json_name: "fenced-mutex",
        reads: <FencedMonitor as Monitor>::READS,
        // A holder or a leader writes through a node of its own session
        // under a fence.
        applies_to: LOCKS_AND_ELECTIONS,
        awaits: Some(Awaited {
            event: "`ResourceWrite { fence }` (the holder's writes to the protected resource; \
                    zkrecipes::lock::rounds::Rounds emits one when the lock is acquired and one \
                    at the end of the hold)",
            seen: |f| f.accepted_writes > 0 || f.stale_writes > 0,
        }),
        ..PLAIN
    },
    // Clients acquire in the order they enqueued.
    PropertySpec {
        property: Property::Fifo,
        name: "fifo",
        json_name: "fifo",
        reads: <FifoMonitor as Monitor>::READS,
        applies_to: LOCKS,
        reported_by_default: LOCKS,
        ..PLAIN
    },
    // Each release wakes at most one waiter.
    PropertySpec {
        property: Property::NoHerd,
        name: "herd",
        json_name: "herd",
        reads: <HerdMonitor as Monitor>::READS,
        applies_to: LOCKS,
        reported_by_default: LOCKS,
        reads_every_delivery: true,
        ..PLAIN
    },
    // Every client that asked eventually acquires and finishes.
    PropertySpec {
        property: Property::Liveness,
        name: "liveness",
        json_name: "liveness",
        reads: <LivenessMonitor as Monitor>::READS,
        // Every recipe asks and finishes.
        applies_to: Families::Every,
        reported_by_default: Families::Every,
        judges_end: true,
        ..PLAIN
    },
    // No recipe znode is left once every client has finished.
    PropertySpec {
        property: Property::NoLeaks,
        name: "leaks",
        json_name: "leaks",
        reads: <LeakMonitor as Monitor>::READS,
        // Every recipe may leave nodes.
        applies_to: Families::Every,
        judges_end: true,
        ..PLAIN
    },
    // Every offered item is taken exactly once, in order.
    PropertySpec {
        property: Property::QueueSafety,
        name: "queue",
        json_name: "queue",
        reads: <QueueMonitor as Monitor>::READS,
        applies_to: Families::Only(&[Family::Queue]),
        hard_by_default: Families::Only(&[Family::Queue]),
        judges_end: true,
        awaits: Some(Awaited {
            event: "`Offered { item }` (a producer's item put on the queue)",
            seen: |f| f.offered > 0,
        }),
        reads_every_delivery: true,
        ..PLAIN
    },
    // At most one leader at a time, and a leader emerges.
    PropertySpec {
        property: Property::Election,
        name: "election",
        json_name: "election",
        reads: <ElectionMonitor as Monitor>::READS,
        applies_to: Families::Only(&[Family::Election]),
        hard_by_default: Families::Only(&[Family::Election]),
        judges_end: true,
        awaits: Some(Awaited {
            event: "`Elected` (a client coming to believe it leads)",
            seen: |f| f.elections > 0,
        }),
        ..PLAIN
    },
    // Every `Acquired` answers an open `Requested` of that client.
    PropertySpec {
        property: Property::AcquiredOnlyWhenAsked,
        name: "asked",
        json_name: "asked",
        reads: <AskedMonitor as Monitor>::READS,
        applies_to: LOCKS,
        has_figures: false,
        ..PLAIN
    },
    // A client that believes it holds does so through a node of its own
    // current, live session.
    PropertySpec {
        property: Property::Owner,
        name: "owner",
        json_name: "owner",
        reads: <OwnerMonitor as Monitor>::READS,
        applies_to: LOCKS_AND_ELECTIONS,
        has_figures: false,
        reads_leader_tree: true,
        ..PLAIN
    },
    // No step panics: always judged, never named in a scenario (a recipe
    // that panics has a bug whatever the checks).
    PropertySpec {
        property: Property::NoPanic,
        name: "no-panic",
        json_name: "no-panic",
        in_scenarios: false,
        reads: Kinds::NONE,
        applies_to: Families::Every,
        has_figures: false,
        ..PLAIN
    },
];

/// Every recipe family, by the name `zkcheck list` prints.
pub const FAMILIES: &[FamilySpec] = &[
    FamilySpec {
        family: Family::Lock,
        name: "lock",
        roles: LOCK_ROLES,
    },
    FamilySpec {
        family: Family::RwLock,
        name: "rwlock",
        roles: LOCK_ROLES,
    },
    FamilySpec {
        family: Family::Queue,
        name: "queue",
        roles: &[Role::Waiter],
    },
    FamilySpec {
        family: Family::Election,
        name: "election",
        roles: &[Role::Holder, Role::Waiter, Role::Leader, Role::Queued],
    },
];

const LOCK_ROLES: &[Role] = &[Role::Holder, Role::Waiter, Role::Releaser, Role::Queued];

/// How many catalogue properties a scenario may name.
const IN_SCENARIOS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < CATALOGUE.len() {
        if CATALOGUE[i].in_scenarios {
            n += 1;
        }
        i += 1;
    }
    n
};

/// Every property a scenario may name, in catalogue order.
pub const ALL_PROPERTIES: [Property; IN_SCENARIOS] = {
    let mut out = [Property::NoPanic; IN_SCENARIOS];
    let (mut i, mut j) = (0, 0);
    while i < CATALOGUE.len() {
        if CATALOGUE[i].in_scenarios {
            out[j] = CATALOGUE[i].property;
            j += 1;
        }
        i += 1;
    }
    out
};

/// What a property missing from the catalogue is called (a test keeps
/// every variant listed; this only keeps a slip from panicking).
const UNLISTED: &str = "unlisted-property";

/// The catalogue entry of `p` (`None` for a user's own property).
pub fn spec(p: Property) -> Option<&'static PropertySpec> {
    spec_in(CATALOGUE, p)
}

/// The name a scenario uses for a property (a user's: its own name).
pub fn property_name(p: Property) -> &'static str {
    name_in(CATALOGUE, p)
}

/// The property a scenario name stands for (one a scenario may name).
pub fn property_by_name(name: &str) -> Option<Property> {
    by_name_in(CATALOGUE, name)
}

/// Every name a scenario may give a check, in catalogue order.
pub fn scenario_names() -> Vec<&'static str> {
    scenario_names_in(CATALOGUE)
}

/// A built-in property's name in machine-readable results (`None` for a
/// user's own, which [`super::named`] prefixes).
pub fn json_name(p: Property) -> Option<&'static str> {
    spec(p).map(|s| s.json_name)
}

/// The built-in property a result names (`no-panic` included).
pub fn by_json_name(name: &str) -> Option<Property> {
    by_json_name_in(CATALOGUE, name)
}

/// Whether a property can be judged on a recipe of `family` (a user's
/// invariant or monitor is over the world: any recipe).
pub fn applies_to(p: Property, family: Family) -> bool {
    applies_in(CATALOGUE, p, family)
}

/// The names of the checks a scenario may give a recipe of `family`, in
/// catalogue order: what a refusal offers instead.
pub fn checks_for(family: Family) -> Vec<&'static str> {
    checks_for_in(CATALOGUE, family)
}

/// A family's default checks, hard and reported: what
/// `Scenario::of_recipe` (and so `Check::new`) starts from. A lock judges
/// `mutex` and measures `fifo`, `herd` and `liveness`; an election judges
/// `election`, a queue `queue`, each measuring `liveness`.
pub fn default_checks(family: Family) -> (Vec<Property>, Vec<Property>) {
    default_checks_in(CATALOGUE, family)
}

/// The properties a recipe of `family` can be judged on whose monitors
/// count something, in catalogue order: every figure a run of it can give
/// (what `compare` reports).
pub fn measured(family: Family) -> Vec<Property> {
    CATALOGUE
        .iter()
        .filter(|s| s.in_scenarios && s.has_figures && s.applies_to.contains(family))
        .map(|s| s.property)
        .collect()
}

/// Whether `p`'s monitor counts something for the figures (a user's own
/// monitor may: it is asked).
pub fn has_figures(p: Property) -> bool {
    spec(p).is_none_or(|s| s.has_figures)
}

/// Whether `p` judges a run's end ([`PropertySpec::judges_end`]; a user's
/// own monitor says so itself, not here).
pub fn judges_end(p: Property) -> bool {
    spec(p).is_some_and(|s| s.judges_end)
}

/// The event hard check `p` waits for before it can fail, where a recipe
/// may never emit it.
pub fn awaited(p: Property) -> Option<Awaited> {
    spec(p).and_then(|s| s.awaits)
}

/// Whether `p`'s monitor relates sends and deliveries of different clients.
pub fn reads_every_delivery(p: Property) -> bool {
    spec(p).is_some_and(|s| s.reads_every_delivery)
}

/// Whether `p`'s monitor reads the leader's tree at each step.
pub fn reads_leader_tree(p: Property) -> bool {
    spec(p).is_some_and(|s| s.reads_leader_tree)
}

/// A family's name as `zkcheck list` prints it.
pub fn family_name(family: Family) -> &'static str {
    family_name_in(FAMILIES, family)
}

/// The roles a recipe of `family` can play ([`FamilySpec::roles`]).
pub fn family_roles(family: Family) -> &'static [Role] {
    FAMILIES
        .iter()
        .find(|f| f.family == family)
        .map_or(&[], |f| f.roles)
}

fn spec_in(table: &[PropertySpec], p: Property) -> Option<&PropertySpec> {
    match p {
        Property::Always(_) | Property::Custom(_) => None,
        p => table.iter().find(|s| s.property == p),
    }
}

fn name_in(table: &[PropertySpec], p: Property) -> &'static str {
    match p {
        Property::Always(name) | Property::Custom(name) => name,
        p => spec_in(table, p).map_or(UNLISTED, |s| s.name),
    }
}

fn by_name_in(table: &[PropertySpec], name: &str) -> Option<Property> {
    table
        .iter()
        .find(|s| s.in_scenarios && s.name == name)
        .map(|s| s.property)
}

fn scenario_names_in(table: &[PropertySpec]) -> Vec<&'static str> {
    table
        .iter()
        .filter(|s| s.in_scenarios)
        .map(|s| s.name)
        .collect()
}

fn by_json_name_in(table: &[PropertySpec], name: &str) -> Option<Property> {
    table
        .iter()
        .find(|s| s.json_name == name)
        .map(|s| s.property)
}

fn applies_in(table: &[PropertySpec], p: Property, family: Family) -> bool {
    match p {
        Property::Always(_) | Property::Custom(_) => true,
        p => spec_in(table, p).is_some_and(|s| s.applies_to.contains(family)),
    }
}

fn checks_for_in(table: &[PropertySpec], family: Family) -> Vec<&'static str> {
    table
        .iter()
        .filter(|s| s.in_scenarios && s.applies_to.contains(family))
        .map(|s| s.name)
        .collect()
}

fn default_checks_in(table: &[PropertySpec], family: Family) -> (Vec<Property>, Vec<Property>) {
    let pick = |of: fn(&PropertySpec) -> Families| -> Vec<Property> {
        table
            .iter()
            .filter(|s| of(s).contains(family))
            .map(|s| s.property)
            .collect()
    };
    (pick(|s| s.hard_by_default), pick(|s| s.reported_by_default))
}

fn family_name_in(table: &[FamilySpec], family: Family) -> &'static str {
    table
        .iter()
        .find(|f| f.family == family)
        .map_or("unlisted-family", |f| f.name)
}

#[cfg(test)]
mod tests;
