//! The checker is generic over the recipe type: a scenario typed by one
//! recipe (not the registry's `AnyRecipe`) runs through the same explorers,
//! monitors, shrinker and tokens, both ways — the reference lock holds, a
//! broken twin is caught, shrunk, and its token replays for that type only.

use zkcheck::explore::{self, replay::replay, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::shrink;
use zkcheck::token::Token;
use zkrecipes::lock::flaws::SequentialStringSort;
use zkrecipes::lock::SequentialLock;
use zkrecipes::{Family, Recipe};

fn typed<C: zkrecipes::Recipe + Send + Sync + 'static>() -> Scenario<C> {
    let mut s = Scenario::<C>::of_recipe(3);
    s.workload.rounds = 2;
    s.hard = vec![Property::MutualExclusion];
    s.validate().unwrap();
    s
}

fn explore<C: zkrecipes::RecipeSet>(s: &Scenario<C>, strategy: Search) -> explore::Exploration {
    let mut o = Options::from_scenario(s);
    o.strategy = strategy;
    o.schedules = 300;
    o.depth = 8;
    explore::explorer::<C>(&o).explore(s, &Progress::hidden())
}

#[test]
fn a_recipe_type_declares_its_family_and_name() {
    assert_eq!(SequentialLock::FAMILY, Family::Lock);
    assert_eq!(zkrecipes::lock::RwLock::FAMILY, Family::RwLock);
    assert_eq!(
        zkrecipes::seeds::apache_queue::TakeQueue::FAMILY,
        Family::Queue
    );
    let s = typed::<SequentialLock>();
    assert_eq!(s.recipe, SequentialLock::name());
    assert_eq!(s.family(), Family::Lock);
    // A typed scenario knows only its own recipe.
    let mut wrong = s.clone();
    wrong.recipe = "naive".into();
    assert!(matches!(
        wrong.validate(),
        Err(zkcheck::scenario::Invalid::UnknownRecipe { .. })
    ));
}

#[test]
fn the_reference_type_holds_under_random_pct_and_bfs() {
    let s = typed::<SequentialLock>();
    for strategy in [Search::Random, Search::Pct, Search::Bfs] {
        let r = explore(&s, strategy);
        assert!(r.failure.is_none(), "{strategy:?}: {:?}", r.failure);
        assert!(r.events > 0);
    }
}

#[test]
fn a_broken_type_is_caught_shrunk_and_replayed_by_its_token() {
    let s = typed::<SequentialStringSort>();
    let r = explore(&s, Search::Random);
    let failure = r.failure.expect("string-sort breaks mutual exclusion");
    assert_eq!(failure.violation.property, Property::MutualExclusion);
    let shrunk = shrink(&s, &failure.schedule, &failure.violation);
    assert!(shrunk.schedule.len() <= failure.schedule.len());

    let indices = shrunk.schedule.to_indices(&shrunk.scenario).unwrap();
    let line = Token::new(shrunk.scenario.clone(), indices).encode();
    let token = Token::decode_as::<SequentialStringSort>(&line).unwrap();
    assert_eq!(token.scenario, shrunk.scenario);
    let replayed = replay(&token.scenario, &token.indices).unwrap();
    assert_eq!(replayed.run.violation, Some(shrunk.violation));

    // The registry has no recipe of that type name, and another type refuses it.
    assert!(Token::decode(&line).is_err());
    assert!(Token::decode_as::<SequentialLock>(&line).is_err());
}
