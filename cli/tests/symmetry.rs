//! Symmetry reduction, in both directions: on small scenarios BFS with and
//! without it reaches the same verdict with a counterexample of the same
//! (shortest) length, explores strictly fewer states with it, finds every
//! broken variant of the symmetric recipes, and its counterexamples replay
//! (through a token) to the same violation; correct recipes stay ok.
//! Recipes whose behaviour depends on names, monitors without renaming and
//! scenarios where expiry order reads session ids are explored without it.
//! And the renaming itself is checked against the simulator: renaming the
//! state a schedule reaches gives the state the permuted schedule reaches.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zkcheck::explore::{self, Exploration, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::state::SystemState;
use zkcheck::testkit::symmetry;
use zkcheck::token::Token;
use zksim::rename::Renaming;
use zksim::{Event, Fault};

use Property::*;

/// A small BFS scenario: one server, one round, hold one tick.
fn small(
    recipe: &str,
    clients: usize,
    hard: &[Property],
    f: impl FnOnce(&mut Scenario),
) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
    s.ensemble.servers = 1;
    s.ensemble.session_timeout = 4;
    s.ensemble.pause_ticks = 2;
    s.ensemble.max_time = 1;
    s.workload.rounds = 1;
    s.workload.hold_ticks = 1;
    s.workload.think_ticks = 0;
    s.hard = hard.to_vec();
    s.report = Vec::new();
    f(&mut s);
    s.validate().unwrap();
    s
}

fn bfs(scenario: &Scenario, symmetry: bool, strategy: Search, jobs: usize) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    options.strategy = strategy;
    options.depth = 200;
    options.jobs = jobs;
    options.symmetry = symmetry;
    // Symmetry alone: with sleep sets on, a search meets other members of
    // an orbit and the count of representatives moves with them (ties);
    // tests/por.rs covers the two together on exact orbit keys.
    options.por = false;
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

fn is_on(r: &Exploration) -> bool {
    r.symmetry.as_deref().is_some_and(|s| s.starts_with("on"))
}

/// One row: a recipe on a scenario small enough for BFS both ways, the
/// property BFS catches it on (`None`: it passes), and whether the
/// reference recipe passes that very scenario (so that the catch is the
/// flaw's, not the scenario's).
type Row = (&'static str, Scenario, Option<Property>, bool);

/// The broken variants of the symmetric recipes and the correct recipes.
///
/// `sequential-no-recheck` and `sequential-ignore-session` are caught here
/// through a kill, which breaks belief-level exclusion for any recipe; the
/// scenarios that separate them from the reference (a waiter that gives
/// up among three clients; an expiry by silence under a long hold) are too
/// big for a test run both ways. `sequential-blind-retry` leaves its
/// first node behind in its live session, which the reference does not.
fn table() -> Vec<Row> {
    let drop = |s: &mut Scenario| s.faults.connection_drops = 1;
    let kill = |s: &mut Scenario| s.faults.kills = 1;
    let safety = [MutualExclusion, FencedExclusion, NoLeaks, Owner, Fifo];
    vec![
        (
            "sequential",
            small("sequential", 2, &safety, drop),
            None,
            true,
        ),
        (
            "naive, 3 clients",
            small(
                "naive",
                3,
                &[MutualExclusion, FencedExclusion, NoLeaks],
                |_| {},
            ),
            None,
            true,
        ),
        (
            "naive",
            small("naive", 2, &[MutualExclusion, FencedExclusion], drop),
            None,
            true,
        ),
        (
            "sequential-no-recheck",
            small("sequential-no-recheck", 3, &[MutualExclusion], kill),
            Some(MutualExclusion),
            false,
        ),
        (
            "sequential-ignore-session",
            small("sequential-ignore-session", 2, &[MutualExclusion], kill),
            Some(MutualExclusion),
            false,
        ),
        (
            "sequential-forget-release",
            small("sequential-forget-release", 2, &[NoLeaks], drop),
            Some(NoLeaks),
            true,
        ),
        (
            "sequential-unwrap",
            small("sequential-unwrap", 2, &[MutualExclusion], drop),
            Some(NoPanic),
            true,
        ),
        (
            "naive-no-rewatch",
            small("naive-no-rewatch", 2, &[Liveness], |s| {
                s.ensemble.max_time = 6
            }),
            Some(Liveness),
            true,
        ),
        (
            "election",
            small("election", 2, &[Election, FencedExclusion, NoLeaks], drop),
            None,
            true,
        ),
        // A leader cut off by an expiry hears `Disconnected` at its read
        // timeout: the reference abdicates, this one leads on while the
        // other candidate is elected.
        (
            "election-ignore-session",
            small("election-ignore-session", 2, &[Election], |s| {
                s.faults.expiries = 1;
                s.workload.hold_ticks = 8;
                s.ensemble.max_time = 10;
            }),
            Some(Election),
            true,
        ),
        // A clock that stops early cuts waits, it does not judge them
        // (tests/liveness_clock.rs): the reference passes this scenario.
        (
            "sequential-blind-retry",
            small("sequential-blind-retry", 2, &[Liveness, NoLeaks], |s| {
                s.faults.connection_drops = 1;
                s.ensemble.max_time = 3;
            }),
            Some(NoLeaks),
            true,
        ),
    ]
}

#[test]
fn symmetry_keeps_verdicts_and_shortest_counterexamples_with_fewer_states() {
    for (name, scenario, expected, _) in table() {
        let on = bfs(&scenario, true, Search::Bfs, 1);
        let off = bfs(&scenario, false, Search::Bfs, 1);
        assert!(is_on(&on), "{name}: {:?}", on.symmetry);
        assert!(!is_on(&off), "{name}: {:?}", off.symmetry);
        for r in [&on, &off] {
            assert!(
                !r.state_cap_hit && r.ended_by.is_none() && r.truncated == 0,
                "{name}: incomplete"
            );
        }
        let verdict = |r: &Exploration| r.failure.as_ref().map(|f| f.violation.property);
        assert_eq!(
            verdict(&on),
            expected,
            "{name} with symmetry: {:?}",
            on.failure
        );
        assert_eq!(
            verdict(&off),
            expected,
            "{name} without symmetry: {:?}",
            off.failure
        );
        let length = |r: &Exploration| r.failure.as_ref().map(|f| f.schedule.len());
        assert_eq!(
            length(&on),
            length(&off),
            "{name}: shortest counterexample length"
        );
        let (with, without) = (on.distinct_states.unwrap(), off.distinct_states.unwrap());
        assert!(
            with < without,
            "{name}: {with} states with symmetry, {without} without"
        );
        eprintln!("{name}: {with} states with symmetry, {without} without");
    }
}

#[test]
fn counterexamples_found_under_symmetry_replay_through_a_token_to_the_same_violation() {
    for (name, scenario, expected, _) in table() {
        let Some(property) = expected else { continue };
        for strategy in [Search::Bfs, Search::Dfs] {
            let failure = bfs(&scenario, true, strategy, 1).failure.expect("found");
            assert_eq!(failure.violation.property, property, "{name}");
            let indices = failure
                .schedule
                .to_indices(&scenario)
                .unwrap_or_else(|| panic!("{name}: the rebuilt schedule is enabled step by step"));
            let token = Token::new(scenario.clone(), indices).encode();
            let decoded = Token::decode(&token).expect("decodes");
            let replayed =
                explore::replay::replay(&decoded.scenario, &decoded.indices).expect("replays");
            let v = replayed
                .run
                .violation
                .expect("the replay breaks a property");
            assert_eq!(v.property, property, "{name} ({strategy:?})");
            assert_eq!(
                v.explanation, failure.violation.explanation,
                "{name}: same story"
            );
            assert_eq!(replayed.unused, 0, "{name}: it breaks at the last step");
        }
    }
}

#[test]
fn each_flaw_is_found_with_symmetry_on_and_the_reference_passes_its_scenario() {
    for (name, scenario, expected, reference_passes) in table() {
        let (Some(property), true) = (expected, reference_passes) else {
            continue;
        };
        let found = bfs(&scenario, true, Search::Bfs, 1);
        assert_eq!(
            found.failure.map(|f| f.violation.property),
            Some(property),
            "{name}"
        );
        let mut reference = scenario.clone();
        reference.recipe = if name.starts_with("naive") {
            "naive"
        } else if name.starts_with("election") {
            "election"
        } else {
            "sequential"
        }
        .into();
        let ok = bfs(&reference, true, Search::Bfs, 1);
        assert!(is_on(&ok));
        assert!(
            ok.failure.is_none(),
            "{name}'s scenario fails the reference: {:?}",
            ok.failure
        );
    }
}

/// The herd monitor is renamed too: a recipe whose every waiter watches
/// the lowest node (each release wakes them all) is caught on `herd` with
/// symmetry on (its counterexample replays through a token), and the
/// reference, whose release wakes one waiter, passes the same scenario
/// exhaustively. (A BFS takes 326,000 states with symmetry and 1.8 M
/// without, too many to run both ways in a test.)
#[test]
fn a_herd_is_found_with_symmetry_on_and_the_reference_passes_herd() {
    let scenario = small("sequential-watch-lowest", 3, &[NoHerd], |_| {});
    let found = bfs(&scenario, true, Search::Dfs, 1);
    assert!(is_on(&found), "{:?}", found.symmetry);
    let failure = found.failure.expect("a herd");
    assert_eq!(failure.violation.property, NoHerd);
    let indices = failure.schedule.to_indices(&scenario).expect("enabled");
    let token = Token::new(scenario.clone(), indices).encode();
    let decoded = Token::decode(&token).expect("decodes");
    let replayed = explore::replay::replay(&decoded.scenario, &decoded.indices).expect("replays");
    assert_eq!(replayed.run.violation.map(|v| v.property), Some(NoHerd));
    let mut reference = scenario;
    reference.recipe = "sequential".into();
    let ok = bfs(&reference, true, Search::Bfs, 1);
    assert!(is_on(&ok));
    assert!(!ok.state_cap_hit && ok.ended_by.is_none() && ok.truncated == 0);
    assert!(ok.failure.is_none(), "{:?}", ok.failure);
}

#[test]
fn bfs_dfs_and_threads_agree_under_symmetry() {
    let scenario = &table()[0].1;
    let one = bfs(scenario, true, Search::Bfs, 1);
    let two = bfs(scenario, true, Search::Bfs, 2);
    let dfs = bfs(scenario, true, Search::Dfs, 1);
    assert_eq!(one.distinct_states, two.distinct_states);
    assert_eq!(one.events, two.events);
    // Representatives of one orbit have successors in the same orbits, so
    // DFS, which expands other members, reaches the very same keys.
    assert_eq!(one.distinct_states, dfs.distinct_states);
    let kill = &table()[4].1;
    let a = bfs(kill, true, Search::Bfs, 1).failure;
    let b = bfs(kill, true, Search::Bfs, 3).failure;
    assert!(a.is_some());
    assert_eq!(a, b);
}

#[test]
fn names_that_matter_and_unrenamed_monitors_turn_symmetry_off_and_flaws_are_still_found() {
    let cases = [
        // Sorts whole names: the guid's client number decides the order.
        (
            small("sequential-string-sort", 2, &[MutualExclusion], |_| {}),
            "recipe",
        ),
        // A user's invariant: a function of the world, named in the reason.
        (
            small("sequential", 2, &[MutualExclusion], |s| {
                s.always.push(zkcheck::Invariant::new("anything", |_| true))
            }),
            "cannot rename the invariant(s) `anything`",
        ),
        // Two silencing faults: two sessions could expire in one tick.
        (
            small("sequential", 2, &[MutualExclusion], |s| {
                s.faults.connection_drops = 2
            }),
            "faults may silence",
        ),
        (
            small("sequential", 2, &[MutualExclusion], |s| {
                s.ensemble.servers = 2;
                s.faults.partitions = 1;
            }),
            "partition",
        ),
        // Every client on its own server: none interchangeable.
        (
            small("sequential", 2, &[MutualExclusion], |s| {
                s.ensemble.servers = 2
            }),
            "no two clients",
        ),
    ];
    for (scenario, why) in &cases {
        let root = SystemState::for_search(scenario);
        let said = symmetry::decide(scenario, &root).expect_err("symmetry is off");
        assert!(said.contains(why), "{}: {said}", scenario.recipe);
    }
    let string_sort = bfs(&cases[0].0, true, Search::Bfs, 1);
    assert_eq!(
        string_sort.failure.map(|f| f.violation.property),
        Some(MutualExclusion)
    );
}

/// `asked` renames (each client's last lock event moves with it): a
/// search judging it is reduced, and reaches the verdict of the search
/// without the reduction.
#[test]
fn the_asked_monitor_renames_and_keeps_symmetry_on() {
    let scenario = small(
        "sequential",
        2,
        &[AcquiredOnlyWhenAsked, MutualExclusion],
        |_| {},
    );
    let on = bfs(&scenario, true, Search::Bfs, 1);
    assert_eq!(
        on.symmetry.as_deref(),
        Some("on (interchangeable clients {0,1})")
    );
    let off = bfs(&scenario, false, Search::Bfs, 1);
    assert!(on.failure.is_none() && off.failure.is_none());
    assert!(
        on.distinct_states < off.distinct_states,
        "{:?} vs {:?}",
        on.distinct_states,
        off.distinct_states
    );
}

#[test]
fn only_clients_of_one_role_are_interchangeable() {
    // rwlock: client 0 writes, clients 1 and 2 read.
    let r = bfs(
        &small("rwlock", 3, &[MutualExclusion], |_| {}),
        true,
        Search::Bfs,
        1,
    );
    assert_eq!(
        r.symmetry.as_deref(),
        Some("on (interchangeable clients {1,2})")
    );
    let off = bfs(
        &small("rwlock", 3, &[MutualExclusion], |_| {}),
        false,
        Search::Bfs,
        1,
    );
    assert!(r.failure.is_none() && off.failure.is_none());
    assert!(r.distinct_states < off.distinct_states);
}

/// The event `e` with its client renamed.
fn renamed_event(e: &Event, r: &Renaming) -> Event {
    let c = |client: usize| r.client(client);
    match e.clone() {
        Event::Request { client } => Event::Request { client: c(client) },
        Event::Receive { client } => Event::Receive { client: c(client) },
        Event::Timer { client } => Event::Timer { client: c(client) },
        Event::Connect { client, server } => Event::Connect {
            client: c(client),
            server,
        },
        Event::Fault(f) => Event::Fault(match f {
            Fault::DropConnection { client } => Fault::DropConnection { client: c(client) },
            Fault::Silence { client } => Fault::Silence { client: c(client) },
            Fault::KillSession { client } => Fault::KillSession { client: c(client) },
            Fault::Pause { client } => Fault::Pause { client: c(client) },
            Fault::Crash { client } => Fault::Crash { client: c(client) },
            other => other,
        }),
        other => other,
    }
}

/// The renaming is what the simulator does: along random schedules (with a
/// drop, a kill, an expiry and a crash) of the `sequential` lock, every
/// lock monitor judged (`herd` included), and of `election`, the state
/// reached renamed equals
/// the state the renamed schedule reaches (both put in the canonical form
/// that sorts listings in flight), and the renamed schedule is enabled at
/// every step.
#[test]
fn renaming_a_reached_state_is_reaching_it_by_the_renamed_schedule() {
    let faults = |s: &mut Scenario| {
        s.faults.connection_drops = 1;
        s.faults.kills = 1;
        s.faults.expiries = 1;
        s.faults.crashes = 1;
        s.ensemble.max_time = 30;
        s.workload.rounds = 2;
    };
    let lock = small(
        "sequential",
        3,
        &[
            MutualExclusion,
            FencedExclusion,
            NoLeaks,
            Owner,
            Fifo,
            Liveness,
            NoHerd,
        ],
        faults,
    );
    let election = small("election", 3, &[Election, FencedExclusion, NoLeaks], faults);
    for scenario in [lock, election] {
        let compared = renamed_runs_agree(&scenario);
        assert!(
            compared > 1000,
            "{}: only {compared} steps compared",
            scenario.recipe
        );
    }
}

/// Step a state and its renamed twin by renamed events along random
/// schedules; they must enable the renamed events and stay each other's
/// renaming (world and judged monitors). Returns the steps compared.
fn renamed_runs_agree(scenario: &Scenario) -> usize {
    let permutations = [vec![1, 0, 2], vec![2, 0, 1], vec![0, 2, 1]];
    let identity = Renaming::new(vec![0, 1, 2]);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut compared = 0;
    for run in 0..60 {
        let r = Renaming::new(permutations[run % 3].clone());
        let mut a = SystemState::for_search(scenario);
        let mut b = SystemState::for_search(scenario);
        let (mut ea, mut eb, mut log) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..120 {
            ea.clear();
            eb.clear();
            a.enabled(&mut ea);
            b.enabled(&mut eb);
            let mut want: Vec<Event> = ea.iter().map(|e| renamed_event(e, &r)).collect();
            want.sort();
            assert_eq!(want, eb, "the renamed state enables the renamed events");
            if ea.is_empty() {
                break;
            }
            let e = ea[rng.random_range(0..ea.len())].clone();
            let ra = a.step(&e, &mut log);
            let rb = b.step(&renamed_event(&e, &r), &mut log);
            assert_eq!(ra.is_ok(), rb.is_ok());
            assert_eq!(
                a.renamed(&r).expect("renamable"),
                b.renamed(&identity).expect("renamable"),
                "{} run {run}: after {e:?}",
                scenario.recipe
            );
            compared += 1;
            if ra.is_err() {
                break;
            }
        }
    }
    compared
}

/// `check` says whether symmetry was used and counts states accordingly;
/// `--no-symmetry` and `[explore] symmetry = false` turn it off.
#[test]
fn check_prints_whether_symmetry_was_used_and_the_flag_and_key_turn_it_off() {
    let small = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/lock-sequential-small.toml");
    let text = std::fs::read_to_string(&small).unwrap();
    let off_file = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("symmetry-off.toml");
    std::fs::write(
        &off_file,
        text.replace("[explore]\n", "[explore]\nsymmetry = false\n"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zkcheck"))
            .args(args)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let states: u64 = text
            .split("distinct states: ")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .expect("a state count");
        (text, states)
    };
    let small = small.to_str().unwrap();
    let (on, with) = run(&["check", small, "-q"]);
    assert!(
        on.contains("symmetry on (interchangeable clients {0,1})"),
        "{on}"
    );
    let (off, without) = run(&["check", small, "-q", "--no-symmetry"]);
    assert!(off.contains("symmetry off (turned off)"), "{off}");
    let (key, by_key) = run(&["check", off_file.to_str().unwrap(), "-q"]);
    assert!(key.contains("symmetry off (turned off)"), "{key}");
    assert!(
        with < without && without == by_key,
        "{with} / {without} / {by_key}"
    );
}
