//! Shrinking the scenario, not only the schedule (issue 36, item 7): a
//! liveness or leak counterexample on three servers and three clients
//! moves to a smaller scenario where it tells the same story, and its
//! token (which carries that scenario) replays it; a story that needs a
//! follower keeps one (and a search finds it on one client); the correct twin is never reported;
//! `keep_scenario` / `--keep-scenario` keep the scenario as written; the
//! same failure shrinks to the same scenario and schedule every time.

use std::path::Path;

use zkcheck::monitor::Property;
use zkcheck::scenario::Scenario;
use zkcheck::testkit::story::shape;
use zkcheck::token::Token;
use zkcheck::{shrink, shrink_with, Budget, Check, Phases};
use zkrecipes::AnyRecipe;

use crate::cli_kit::{write_input, zk};
use crate::verdicts::table;

/// `scenarios/lock-sequential-faults.toml` (3 servers, 3 clients, 2
/// rounds, drops, an expiry, a pause, a partition) run by `recipe`, with
/// only `check` hard.
fn faults_scenario(recipe: &str, check: Property) -> Scenario {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lock-sequential-faults.toml");
    let mut s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    s.recipe = recipe.to_string();
    s.hard = vec![check];
    s.report = Vec::new();
    s.validate().unwrap();
    s
}

fn blind_retry() -> Check<AnyRecipe> {
    Check::from_scenario(faults_scenario(
        "sequential-blind-retry",
        Property::Liveness,
    ))
    .random(50)
    .jobs(1)
}

#[test]
fn shrink_scenario_a_blind_retry_shrinks_on_a_smaller_scenario_and_replays() {
    let written = faults_scenario("sequential-blind-retry", Property::Liveness);
    let c = blind_retry().assert_fails();
    assert_eq!(c.property(), Property::Liveness);
    assert!(c.steps <= 25, "{} steps:\n{c}", c.steps);
    assert!(
        c.reductions.iter().any(|r| r == "servers 3 → 1"),
        "{:?}",
        c.reductions
    );
    let text = c.to_string();
    assert!(
        text.contains("shrunk on a smaller scenario: servers 3 → 1"),
        "{text}"
    );
    let token = c.token.as_deref().expect("a token");
    let decoded = Token::decode(token).expect("our own token decodes");
    assert_eq!(decoded.scenario.ensemble.servers, 1);
    assert!(decoded.scenario.clients <= written.clients);
    assert_eq!(decoded.scenario.name, written.name);
    assert_eq!(decoded.indices.len(), c.steps);
    // The token replays to the same violation, on the smaller scenario.
    let replayed = Check::<AnyRecipe>::replay(token).run();
    let r = replayed
        .counterexample
        .expect("the token replays to a failure");
    assert_eq!(r.violation, c.violation);
    assert_eq!(r.steps, c.steps);
    assert_eq!(r.trace, c.trace);
    // Same story as found on the scenario as written.
    let found = table::sweep(&written, 50, 1).failure.expect("it fails");
    assert_eq!(
        shape(&found.violation.explanation),
        shape(&c.violation.explanation)
    );
}

#[test]
fn shrink_scenario_is_deterministic() {
    let one = blind_retry().assert_fails();
    let two = blind_retry().assert_fails();
    assert_eq!(one.token, two.token, "same scenario and schedule");
    assert_eq!(one.reductions, two.reductions);
}

#[test]
fn shrink_scenario_keep_scenario_keeps_it() {
    let written = faults_scenario("sequential-blind-retry", Property::Liveness);
    let reduced = blind_retry().assert_fails();
    let kept = blind_retry().keep_scenario(true).assert_fails();
    assert!(kept.reductions.is_empty(), "{:?}", kept.reductions);
    assert!(!kept.to_string().contains("smaller scenario"));
    let decoded = Token::decode(kept.token.as_deref().unwrap()).unwrap();
    assert_eq!(decoded.scenario.to_canonical(), written.to_canonical());
    assert_eq!(kept.violation.property, reduced.violation.property);
    assert!(
        kept.steps > reduced.steps,
        "the smaller scenario is what made it shorter: {} vs {}",
        kept.steps,
        reduced.steps
    );
}

/// The correct lock on the same scenario: never reported, so nothing to
/// shrink on any scenario.
#[test]
fn shrink_scenario_the_correct_twin_is_never_reported() {
    Check::from_scenario(faults_scenario("sequential", Property::Liveness))
        .random(50)
        .jobs(1)
        .assert_holds();
    Check::from_scenario(faults_scenario("sequential", Property::NoLeaks))
        .random(50)
        .jobs(1)
        .assert_holds();
}

/// `seed001-ouyang-lock × leaks` rests on a lagging follower (S26: the
/// recovery lists on a follower that has not applied the create yet). On
/// one server that story cannot be told, so the reduction to one server is
/// refused; two servers keep a follower, and are taken. One client is
/// enough for the story, but the schedule does not carry over to it (the
/// client left must create the root itself, and the drop strikes that
/// create): the search on the smaller scenario finds it, and without that
/// search (a zero budget) the clients stay.
#[test]
fn shrink_scenario_a_story_that_needs_a_follower_keeps_one() {
    let scenario = table::scenario(&table::row("ouyang-lock-faults.toml", Property::NoLeaks));
    assert_eq!(scenario.ensemble.servers, 3);
    let failure = table::sweep(&scenario, 3000, 2)
        .failure
        .expect("the leak is found");
    let shrunk = |budget| {
        shrink_with(
            &scenario,
            &failure.schedule,
            &failure.violation,
            Phases::All,
            budget,
            &|| false,
        )
    };
    let s = shrunk(Budget::default());
    assert_eq!(s.violation.property, Property::NoLeaks);
    assert_eq!(
        shape(&s.violation.explanation),
        shape(&failure.violation.explanation)
    );
    assert_eq!(s.scenario.ensemble.servers, 2, "{:?}", s.reductions);
    assert_eq!(s.scenario.clients, 1, "{:?}", s.reductions);
    assert!(s.schedule.len() <= 25, "{} steps", s.schedule.len());
    // The shrunk schedule lists on the follower before it caught up: it
    // has follower applies.
    assert!(
        s.schedule
            .events
            .iter()
            .any(|e| matches!(e, zksim::Event::Apply { .. })),
        "a follower's lag is part of the story"
    );
    let without_search = shrunk(Budget {
        scenario_states: 0,
        ..Budget::default()
    });
    assert_eq!(without_search.scenario.ensemble.servers, 2);
    assert!(
        without_search.scenario.clients > 1,
        "{:?}",
        without_search.reductions
    );
    assert!(without_search.schedule.len() > s.schedule.len());
}

/// `seed002-queue` splits roles by client (even ones offer, odd ones
/// take): its row's story (a consumer dies, its items are never taken)
/// must keep a consumer, as one producer alone fails the same way with
/// any queue recipe — the correct `queue-producer` too.
#[test]
fn shrink_scenario_a_queue_keeps_a_consumer() {
    let scenario = table::scenario(&table::row("queue-drop.toml", Property::QueueSafety));
    let failure = table::sweep(&scenario, 3000, 2)
        .failure
        .expect("the dead consumer is found");
    let s = shrink(&scenario, &failure.schedule, &failure.violation);
    assert_eq!(s.violation.property, Property::QueueSafety);
    assert!(s.scenario.clients >= 2, "{:?}", s.reductions);
    // What the reduction refuses is vacuous: one client of the correct
    // producer recipe fails the queue check on a run of its own.
    let mut alone = s.scenario.clone();
    alone.clients = 1;
    alone.recipe = "queue-producer".into();
    let found = table::sweep(&alone, 50, 1)
        .failure
        .expect("any queue fails");
    assert_eq!(found.violation.property, Property::QueueSafety);
}

/// The command line: the default prints the reduction line, and
/// `--keep-scenario` keeps the scenario (no such line; the token carries
/// the file's scenario).
#[test]
fn shrink_scenario_cli_says_so_and_keep_scenario_keeps_it() {
    let file = blind_retry_file("blind.toml");
    let args = ["check", &file, "--schedules", "50", "--jobs", "1"];
    let reduced = zk(&args);
    assert!(
        reduced
            .out
            .contains("shrunk on a smaller scenario: servers 3 → 1"),
        "{}",
        reduced.out
    );
    let mut keep = args.to_vec();
    keep.push("--keep-scenario");
    let kept = zk(&keep);
    assert!(kept.out.contains("VIOLATION of liveness"), "{}", kept.out);
    assert!(!kept.out.contains("smaller scenario"), "{}", kept.out);
    let token = kept
        .out
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a token");
    let decoded = Token::decode(token).unwrap();
    assert_eq!(decoded.scenario.ensemble.servers, 3);
    assert_eq!(decoded.scenario.clients, 3);
    let help = zk(&["check", "--help"]);
    assert!(help.out.contains("--keep-scenario"), "{}", help.out);
    assert!(help.out.contains("exact topology"), "{}", help.out);
}

/// The summary says how short the counterexample is known to be: the
/// shortest of its story when the last search looked at every shorter
/// run (the blind retry, 21 steps), a lower bound when its budget ran out
/// first (the waiter expiry: 27 steps, none under 19 found), nothing for a
/// replayed token (no search); `--json` carries the bound.
#[test]
fn shrink_scenario_the_summary_says_how_short() {
    let file = blind_retry_file("blind-short.toml");
    let shortest = zk(&["check", &file, "--schedules", "50", "--jobs", "1"]);
    assert!(
        shortest.out.contains("the shortest of its story"),
        "{}",
        shortest.out
    );
    let json = zk(&["check", &file, "--schedules", "50", "--jobs", "1", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&json.out).expect("JSON");
    let c = &value["counterexample"];
    assert_eq!(c["no_shorter_than"], c["steps"], "{c}");
    let expiry = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/seeds/ouyang-lock-waiter-expiry.toml");
    let bounded = zk(&["check", expiry.to_str().unwrap(), "--jobs", "1"]);
    assert!(
        bounded.out.contains("no run of fewer than 19 steps"),
        "{}",
        bounded.out
    );
    assert!(!bounded.out.contains("the shortest of its story"));
    let token = shortest
        .out
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a token");
    // A replayed token was not searched: its counterexample says nothing
    // of how short it is (the library's replay, whose summary is the one
    // `check` prints).
    let replayed = Check::<AnyRecipe>::replay(token).assert_fails();
    assert_eq!(replayed.no_shorter_than, 0);
    assert!(!replayed.to_string().contains("of its story"), "{replayed}");
}

/// Shards whose counterexample runs on a smaller scenario merge (the
/// token's scenario is the result's, reduced: same name, recipe and
/// checks), and the merge says so in the same line.
#[test]
fn shrink_scenario_shards_of_a_reduced_counterexample_merge() {
    let file = blind_retry_file("blind-shards.toml");
    let mut parts = Vec::new();
    for shard in ["0/2", "1/2"] {
        let ran = zk(&[
            "check",
            &file,
            "--schedules",
            "40",
            "--jobs",
            "1",
            "--shard",
            shard,
            "--json",
        ]);
        let name = format!("blind-{}.json", shard.replace('/', "-"));
        parts.push(write_input("shrink_scenario", &name, &ran.out));
    }
    assert!(
        std::fs::read_to_string(&parts[0])
            .unwrap()
            .contains("\"reductions\":[\"servers 3 → 1\""),
        "the JSON lists the reductions"
    );
    let merged = zk(&["merge", &parts[0], &parts[1]]);
    assert!(merged.err.is_empty(), "{}", merged.err);
    assert!(
        merged
            .out
            .contains("shrunk on a smaller scenario: servers 3 → 1"),
        "{}",
        merged.out
    );
}

/// `lock-sequential-faults.toml` with `sequential-blind-retry` swapped in
/// and only `liveness` hard, written to `name` for the command line.
fn blind_retry_file(name: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lock-sequential-faults.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace(
            "recipe = \"sequential\"",
            "recipe = \"sequential-blind-retry\"",
        )
        .replace(
            "hard = [\"mutex\", \"fenced-mutex\", \"liveness\", \"leaks\"]",
            "hard = [\"liveness\"]",
        );
    write_input("shrink_scenario", name, &text)
}
