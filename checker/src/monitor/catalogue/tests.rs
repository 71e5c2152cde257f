//! The catalogue is the one list of properties: every variant has one
//! entry, the names and refusals are what scenarios, messages and result
//! files have always said, and a new property is one entry — shown by
//! running the lookups over the catalogue plus a toy property.

use super::*;

/// Every built-in variant of [`Property`]. The match below has no `_`
/// arm, so a new variant does not compile until it is listed here, and
/// then fails [`every_property_has_one_entry`] until it has its entry.
const BUILT_IN: [Property; 11] = [
    Property::MutualExclusion,
    Property::FencedExclusion,
    Property::Fifo,
    Property::NoHerd,
    Property::Liveness,
    Property::NoLeaks,
    Property::QueueSafety,
    Property::Election,
    Property::AcquiredOnlyWhenAsked,
    Property::Owner,
    Property::NoPanic,
];

fn is_built_in(p: Property) -> bool {
    match p {
        Property::MutualExclusion
        | Property::FencedExclusion
        | Property::Fifo
        | Property::NoHerd
        | Property::Liveness
        | Property::NoLeaks
        | Property::QueueSafety
        | Property::Election
        | Property::AcquiredOnlyWhenAsked
        | Property::Owner
        | Property::NoPanic => BUILT_IN.contains(&p),
        // The user's own, named by their code; the toy of these tests.
        Property::Always(_) | Property::Custom(_) | Property::Toy => false,
    }
}

/// Every family, by an exhaustive match likewise.
const EVERY_FAMILY: [Family; 4] = [
    Family::Lock,
    Family::RwLock,
    Family::Queue,
    Family::Election,
];

fn is_family(f: Family) -> bool {
    match f {
        Family::Lock | Family::RwLock | Family::Queue | Family::Election => {
            EVERY_FAMILY.contains(&f)
        }
    }
}

#[test]
fn every_property_has_one_entry() {
    assert!(BUILT_IN.iter().all(|&p| is_built_in(p)));
    assert_eq!(CATALOGUE.len(), BUILT_IN.len());
    for p in BUILT_IN {
        let entries = CATALOGUE.iter().filter(|s| s.property == p).count();
        assert_eq!(entries, 1, "{p:?} has {entries} catalogue entries");
        assert_ne!(property_name(p), UNLISTED);
    }
    for (i, a) in CATALOGUE.iter().enumerate() {
        for b in &CATALOGUE[..i] {
            assert_ne!(a.name, b.name, "two properties called {}", a.name);
            assert_ne!(
                a.json_name, b.json_name,
                "two results called {}",
                a.json_name
            );
        }
        // A result name with a `:` could be read back as a user's own.
        assert!(!a.json_name.contains(':'), "{}", a.json_name);
        assert!(!a.name.is_empty() && !a.json_name.is_empty());
    }
    // What a scenario may name: every entry but `no-panic`, in order.
    let named: Vec<Property> = CATALOGUE
        .iter()
        .filter(|s| s.property != Property::NoPanic)
        .map(|s| s.property)
        .collect();
    assert_eq!(ALL_PROPERTIES.to_vec(), named);
    assert_eq!(property_by_name("no-panic"), None);
    assert_eq!(by_json_name("no-panic"), Some(Property::NoPanic));
}

#[test]
fn every_family_has_one_name() {
    assert!(EVERY_FAMILY.iter().all(|&f| is_family(f)));
    assert_eq!(FAMILIES.len(), EVERY_FAMILY.len());
    for f in EVERY_FAMILY {
        assert_eq!(FAMILIES.iter().filter(|s| s.family == f).count(), 1);
        assert_ne!(family_name(f), "unlisted-family");
        // Every family's clients wait for something.
        assert!(family_roles(f).contains(&Role::Waiter), "{f:?}");
    }
    let names = |f| -> Vec<&str> { family_roles(f).iter().map(|r| r.name()).collect() };
    assert_eq!(
        names(Family::Lock),
        ["holder", "waiter", "releaser", "queued"]
    );
    assert_eq!(names(Family::RwLock), names(Family::Lock));
    assert_eq!(names(Family::Queue), ["waiter"]);
    assert_eq!(
        names(Family::Election),
        ["holder", "waiter", "leader", "queued"]
    );
}

/// The names, applicability and defaults that scenario files, refusals,
/// result files and `Check::new` have always used, written out once more:
/// a slip in an entry shows here before it changes what users see.
#[test]
fn names_refusals_and_defaults_are_as_users_know_them() {
    assert_eq!(
        scenario_names().join(", "),
        "mutex, fenced-mutex, fifo, herd, liveness, leaks, queue, election, asked, owner"
    );
    let fits = |f| checks_for(f).join(", ");
    let lock = "mutex, fenced-mutex, fifo, herd, liveness, leaks, asked, owner";
    assert_eq!(fits(Family::Lock), lock);
    assert_eq!(fits(Family::RwLock), lock);
    assert_eq!(fits(Family::Queue), "liveness, leaks, queue");
    assert_eq!(
        fits(Family::Election),
        "fenced-mutex, liveness, leaks, election, owner"
    );
    use Property::*;
    assert_eq!(
        default_checks(Family::Lock),
        (vec![MutualExclusion], vec![Fifo, NoHerd, Liveness])
    );
    assert_eq!(default_checks(Family::RwLock), default_checks(Family::Lock));
    assert_eq!(
        default_checks(Family::Queue),
        (vec![QueueSafety], vec![Liveness])
    );
    assert_eq!(
        default_checks(Family::Election),
        (vec![Election], vec![Liveness])
    );
    assert_eq!(
        measured(Family::Lock),
        [
            MutualExclusion,
            FencedExclusion,
            Fifo,
            NoHerd,
            Liveness,
            NoLeaks
        ]
    );
    let ends: Vec<_> = BUILT_IN.into_iter().filter(|&p| judges_end(p)).collect();
    assert_eq!(ends, [Liveness, NoLeaks, QueueSafety, Election]);
    let judge_only: Vec<_> = BUILT_IN.into_iter().filter(|&p| !has_figures(p)).collect();
    assert_eq!(judge_only, [AcquiredOnlyWhenAsked, Owner, NoPanic]);
    // A user's own: named by its code, judged on any recipe, measured.
    assert_eq!(property_name(Custom("mine")), "mine");
    assert!(applies_to(Always("x"), Family::Queue) && has_figures(Custom("mine")));
    assert_eq!(family_name(Family::RwLock), "rwlock");
}

#[test]
fn defaults_are_checks_that_fit_their_family() {
    for f in EVERY_FAMILY {
        let (hard, report) = default_checks(f);
        assert!(!hard.is_empty(), "{f:?} judges something by default");
        for p in hard.iter().chain(&report) {
            assert!(applies_to(*p, f), "{p:?} is a default of {f:?}");
        }
        assert!(hard.iter().all(|p| !report.contains(p)));
    }
}

/// The event contract's figures: each awaited event is seen exactly when
/// the tally counts it.
#[test]
fn awaited_events_read_their_counts() {
    let seen = |p, tally: &Tally| (awaited(p).expect("an awaited event").seen)(tally);
    let none = Tally::default();
    for p in [
        Property::FencedExclusion,
        Property::QueueSafety,
        Property::Election,
    ] {
        assert!(!seen(p, &none), "{p:?} saw nothing");
    }
    let stale = Tally {
        stale_writes: 1,
        ..Tally::default()
    };
    assert!(seen(Property::FencedExclusion, &stale));
    assert!(!seen(Property::Election, &stale));
    let offered = Tally {
        offered: 1,
        ..Tally::default()
    };
    assert!(seen(Property::QueueSafety, &offered));
    let elected = Tally {
        elections: 2,
        ..Tally::default()
    };
    assert!(seen(Property::Election, &elected));
    assert!(awaited(Property::MutualExclusion).is_none());
}

/// A new property, written as one would write it: a variant
/// ([`Property::Toy`], which exists in unit tests only) and one entry. It
/// reads application events and fits queues only, which measure it by
/// default; its result name differs from its scenario name, to show each
/// lookup reads its own.
const TOY: PropertySpec = PropertySpec {
    property: Property::Toy,
    name: "toy",
    json_name: "toy-result",
    reads: Kinds::APP,
    applies_to: Families::Only(&[Family::Queue]),
    reported_by_default: Families::Only(&[Family::Queue]),
    ..PLAIN
};

#[test]
fn a_new_property_is_one_entry() {
    let with_toy: Vec<PropertySpec> = CATALOGUE.iter().copied().chain([TOY]).collect();
    let table = with_toy.as_slice();

    // Without its entry, nothing knows it.
    assert_eq!(name_in(CATALOGUE, Property::Toy), UNLISTED);
    assert_eq!(by_name_in(CATALOGUE, "toy"), None);
    assert_eq!(by_json_name_in(CATALOGUE, "toy-result"), None);
    assert!(!applies_in(CATALOGUE, Property::Toy, Family::Queue));

    // With it: named, read back from a scenario's name and a result's.
    assert_eq!(name_in(table, Property::Toy), "toy");
    assert_eq!(by_name_in(table, "toy"), Some(Property::Toy));
    assert_eq!(by_json_name_in(table, "toy-result"), Some(Property::Toy));
    assert_eq!(by_json_name_in(table, "toy"), None);
    assert_eq!(by_name_in(table, "toy-result"), None);
    let mut names = scenario_names();
    names.push("toy");
    assert_eq!(scenario_names_in(table), names);

    // Judged on its family only, and a default there.
    assert!(applies_in(table, Property::Toy, Family::Queue));
    for other in [Family::Lock, Family::RwLock, Family::Election] {
        assert!(!applies_in(table, Property::Toy, other), "{other:?}");
        assert!(!checks_for_in(table, other).contains(&"toy"));
        assert_eq!(default_checks_in(table, other), default_checks(other));
    }
    assert_eq!(
        checks_for_in(table, Family::Queue),
        ["liveness", "leaks", "queue", "toy"]
    );
    assert_eq!(
        default_checks_in(table, Family::Queue),
        (
            vec![Property::QueueSafety],
            vec![Property::Liveness, Property::Toy]
        )
    );

    // Refused both ways: the toy on a lock, and a lock's check on a queue,
    // where the refusal now offers the toy among the queue's checks.
    assert!(!applies_in(table, Property::Toy, Family::Lock));
    assert!(!checks_for_in(table, Family::Lock).contains(&"toy"));
    assert!(!applies_in(table, Property::MutualExclusion, Family::Queue));
    assert!(checks_for_in(table, Family::Queue).contains(&"toy"));

    // The properties that were there are as they were.
    for p in BUILT_IN {
        assert_eq!(name_in(table, p), property_name(p));
        for f in EVERY_FAMILY {
            assert_eq!(applies_in(table, p, f), applies_to(p, f));
        }
    }
}
