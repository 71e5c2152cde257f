//! Partial-order reduction (sleep sets), in both directions: on small
//! scenarios BFS and DFS with and without it visit the same distinct
//! states, reach the same verdict and (BFS) a counterexample of the same
//! shortest length, while stepping strictly fewer events with it where
//! several clients run; correct recipes pass and every broken variant is
//! caught on its property; counterexamples found with it replay through a
//! token to the same violation; BFS results do not depend on `--jobs`.
//! Under symmetry the count of representatives depends on which members
//! of an orbit a search meets (ties in the representative's choice), so
//! there the counts are compared with exact orbit keys
//! (the engine's `Symmetry::exact`). And the independence relation itself is checked
//! against the simulator: along random schedules of the scenario files
//! (with faults, followers, every recipe family), every two steps it calls
//! independent commute — each stays enabled after the other, both orders
//! reach equal states with equal verdicts, and each keeps its footprint.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zkcheck::explore::exhaustive::Exhaustive;
use zkcheck::explore::{self, Exploration, Explorer, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Role, Target};
use zkcheck::scenario::{Scenario, Search};
use zkcheck::state::SystemState;
use zkcheck::testkit::por;
use zkcheck::token::Token;
use zksim::Event;

use Property::*;

/// A small exhaustive scenario: one server, one round, hold one tick.
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    Off,
    On,
    /// On, with one key per orbit (a test oracle).
    Exact,
}

fn search(scenario: &Scenario, dfs: bool, sym: Sym, por: bool, jobs: usize) -> Exploration {
    let mut e = if dfs {
        Exhaustive::dfs(200)
    } else {
        Exhaustive::bfs(200)
    }
    .with_jobs(jobs)
    .with_symmetry(sym != Sym::Off)
    .with_por(por)
    // The cycle check needs every step and turns sleep sets off; DFS is
    // compared here without it (`cycle_check_turns_por_off` below).
    .with_cycles(false);
    e.exact_symmetry = sym == Sym::Exact;
    let r = e.explore(scenario, &Progress::hidden());
    assert_eq!(
        r.por.as_deref().is_some_and(|p| p.starts_with("on")),
        por,
        "{:?}",
        r.por
    );
    r
}

/// One row: a scenario small enough to search both ways, the property it
/// is caught on (`None`: it passes), and whether several clients run at
/// once (then the reduction must save steps).
type Row = (&'static str, Scenario, Option<Property>, bool);

fn table() -> Vec<Row> {
    let drop = |s: &mut Scenario| s.faults.connection_drops = 1;
    let kill = |s: &mut Scenario| s.faults.kills = 1;
    let safety = [MutualExclusion, FencedExclusion, NoLeaks, Owner, Fifo];
    vec![
        (
            "sequential, 2 clients, a drop",
            small("sequential", 2, &safety, drop),
            None,
            true,
        ),
        (
            "sequential, 1 client, a drop",
            // `mutex` and `fifo` cannot fail with one client (refused).
            small("sequential", 1, &[FencedExclusion, NoLeaks, Owner], drop),
            None,
            false,
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
            "naive, a drop",
            small("naive", 2, &[MutualExclusion, FencedExclusion], drop),
            None,
            true,
        ),
        (
            "rwlock, 3 clients",
            small("rwlock", 3, &[MutualExclusion, NoLeaks], |_| {}),
            None,
            true,
        ),
        (
            "election, 2 clients, a drop",
            small("election", 2, &[Election, Owner], |s| {
                s.root = "/election".into();
                s.faults.connection_drops = 1;
            }),
            None,
            true,
        ),
        (
            "sequential-no-recheck",
            small("sequential-no-recheck", 3, &[MutualExclusion], kill),
            Some(MutualExclusion),
            true,
        ),
        (
            "sequential-ignore-session",
            small("sequential-ignore-session", 2, &[MutualExclusion], kill),
            Some(MutualExclusion),
            true,
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

fn caught(r: &Exploration) -> Option<Property> {
    r.failure.as_ref().map(|f| f.violation.property)
}

#[test]
fn sleep_sets_keep_states_verdicts_and_shortest_counterexamples_with_fewer_steps() {
    for (name, scenario, expected, concurrent) in table() {
        for dfs in [false, true] {
            let how = if dfs { "dfs" } else { "bfs" };
            let on = search(&scenario, dfs, Sym::Off, true, 1);
            let off = search(&scenario, dfs, Sym::Off, false, 1);
            assert_eq!(
                caught(&on),
                expected,
                "{name} ({how}) with POR: {:?}",
                on.failure
            );
            assert_eq!(
                caught(&off),
                expected,
                "{name} ({how}) without: {:?}",
                off.failure
            );
            if expected.is_none() {
                // Complete searches: every state, both ways.
                assert_eq!(on.truncated, 0, "{name} ({how})");
                assert_eq!(off.truncated, 0, "{name} ({how})");
                assert_eq!(
                    on.distinct_states, off.distinct_states,
                    "{name} ({how}): the same states"
                );
                assert_eq!(on.schedules, off.schedules, "{name} ({how}): the same ends");
            }
            if !dfs {
                let len = |r: &Exploration| r.failure.as_ref().map(|f| f.schedule.events.len());
                assert_eq!(
                    len(&on),
                    len(&off),
                    "{name}: the same shortest counterexample"
                );
            }
            if concurrent && expected.is_none() {
                assert!(
                    on.events < off.events,
                    "{name} ({how}): {} events with POR, {} without",
                    on.events,
                    off.events
                );
            }
            eprintln!(
                "{name} ({how}): {:?} states; events {} with POR, {} without",
                on.distinct_states, on.events, off.events
            );
        }
    }
}

/// With symmetry on, sleep sets are kept in the representative's client
/// numbering. With one key per orbit the number of orbits visited is the
/// same with and without POR, BFS and DFS; the verdicts too.
#[test]
fn sleep_sets_under_symmetry_visit_the_same_orbits() {
    for (name, scenario, expected, _) in table() {
        let plain = search(&scenario, false, Sym::Exact, false, 1);
        for dfs in [false, true] {
            let on = search(&scenario, dfs, Sym::Exact, true, 1);
            assert_eq!(caught(&on), expected, "{name}");
            if expected.is_none() {
                assert_eq!(
                    on.distinct_states, plain.distinct_states,
                    "{name} (dfs: {dfs})"
                );
            }
            if !dfs {
                let len = |r: &Exploration| r.failure.as_ref().map(|f| f.schedule.events.len());
                assert_eq!(len(&on), len(&plain), "{name}");
            }
            // With the default (tie-breaking) keys the verdict holds too.
            let quick = search(&scenario, dfs, Sym::On, true, 1);
            assert_eq!(caught(&quick), expected, "{name} (dfs: {dfs}, ties)");
        }
    }
}

#[test]
fn bfs_with_sleep_sets_does_not_depend_on_jobs() {
    for (name, scenario, _, _) in table()
        .into_iter()
        .take(2)
        .chain(table().into_iter().skip(6).take(2))
    {
        for sym in [Sym::Off, Sym::On] {
            let one = search(&scenario, false, sym, true, 1);
            for jobs in [2, 3] {
                let many = search(&scenario, false, sym, true, jobs);
                assert_eq!(one.distinct_states, many.distinct_states, "{name}");
                assert_eq!(one.events, many.events, "{name}");
                assert_eq!(one.schedules, many.schedules, "{name}");
                assert_eq!(one.failure, many.failure, "{name}");
            }
        }
    }
}

#[test]
fn counterexamples_found_with_sleep_sets_replay_through_a_token_to_the_same_violation() {
    for (name, scenario, expected, _) in table() {
        let Some(property) = expected else { continue };
        for (dfs, sym) in [
            (false, Sym::Off),
            (true, Sym::Off),
            (false, Sym::On),
            (true, Sym::On),
        ] {
            let failure = search(&scenario, dfs, sym, true, 1).failure.expect("found");
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
            assert_eq!(v.property, property, "{name} (dfs {dfs}, {sym:?})");
            assert_eq!(
                v.explanation, failure.violation.explanation,
                "{name}: same story"
            );
            assert_eq!(replayed.unused, 0, "{name}: it breaks at the last step");
        }
    }
}

/// The independence relation is what the simulator does. Along random
/// schedules of the scenario files (three servers, every fault kind,
/// every recipe family), at each state every two enabled steps the
/// footprints call independent are stepped in both orders: each stays
/// enabled after the other, the two orders reach equal states (world and
/// monitors) with the same verdict, and a step's footprint after the other
/// is the one it had before (what a sleeping step carries).
#[test]
fn steps_called_independent_commute_in_the_simulator() {
    let files = [
        "lock-sequential-faults.toml",
        "lock-sequential-partition-window.toml",
        "lock-naive.toml",
        "rwlock-faults.toml",
        "election.toml",
        "queue.toml",
        "lock-sequential-forget-release.toml",
        "lock-sequential-ignore-session.toml",
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut total = 0;
    for file in files {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(file);
        let scenario = Scenario::from_file(&path).unwrap();
        let root = SystemState::for_search(&scenario);
        let por = por::decide(&scenario, &root).expect("sleep sets apply");
        let mut pairs = 0;
        let mut log = Vec::new();
        for _ in 0..12 {
            let mut state = root.clone();
            for _ in 0..150 {
                let mut enabled = Vec::new();
                state.enabled(&mut enabled);
                if enabled.is_empty() {
                    break;
                }
                let mut stepped = Vec::new();
                for e in &enabled {
                    let mut next = state.clone();
                    let ok = next.step(e, &mut log).is_ok();
                    let fp = por.footprint(&state, &next, e, &log);
                    stepped.push((e.clone(), next, ok, fp));
                }
                for (i, (a, sa, a_ok, fa)) in stepped.iter().enumerate() {
                    for (b, sb, b_ok, fb) in &stepped[i + 1..] {
                        if !fa.independent(fb) || !a_ok || !b_ok {
                            continue;
                        }
                        let after = |first: &SystemState, e: &Event| {
                            let mut en = Vec::new();
                            first.enabled(&mut en);
                            assert!(en.contains(e), "{file}: {e:?} stays enabled");
                            let mut next = first.clone();
                            let mut log = Vec::new();
                            let verdict = next.step(e, &mut log).map_err(|v| v.property);
                            let fp = por.footprint(first, &next, e, &log);
                            (next, verdict, fp)
                        };
                        let (sab, vab, fb_after) = after(sa, b);
                        let (sba, vba, fa_after) = after(sb, a);
                        assert_eq!(vab, vba, "{file}: {a:?} and {b:?}: same verdict");
                        assert!(sab == sba, "{file}: {a:?} and {b:?} commute");
                        assert_eq!(
                            fb_after, *fb,
                            "{file}: {b:?} keeps its footprint after {a:?}"
                        );
                        assert_eq!(
                            fa_after, *fa,
                            "{file}: {a:?} keeps its footprint after {b:?}"
                        );
                        pairs += 1;
                    }
                }
                let pick = rng.random_range(0..stepped.len());
                let (_, next, ok, _) = stepped.swap_remove(pick);
                if !ok {
                    break;
                }
                state = next;
            }
        }
        eprintln!("{file}: {pairs} independent pairs checked");
        assert!(pairs > 50, "{file}: only {pairs} independent pairs met");
        total += pairs;
    }
    assert!(total > 1000);
}

/// `check` says whether POR was used; `--no-por` and `[explore] por =
/// false` turn it off, with the same states and more events.
#[test]
fn check_prints_whether_por_was_used_and_the_flag_and_key_turn_it_off() {
    let scenario = small("sequential", 2, &[MutualExclusion], |s| {
        s.faults.connection_drops = 1
    });
    let mut options = Options::from_scenario(&scenario);
    options.strategy = Search::Bfs;
    options.depth = 200;
    // Symmetry's tie-breaking keys make counts depend on the path taken.
    options.symmetry = false;
    let on = explore::explorer(&options).explore(&scenario, &Progress::hidden());
    options.por = false;
    let off = explore::explorer(&options).explore(&scenario, &Progress::hidden());
    assert!(
        on.por
            .as_deref()
            .unwrap()
            .starts_with("on (sleep sets over "),
        "{:?}",
        on.por
    );
    assert_eq!(off.por.as_deref(), Some("off (turned off)"));
    assert_eq!(on.distinct_states, off.distinct_states);
    assert!(on.events < off.events);

    let mut keyed = scenario.clone();
    keyed.explore.por = false;
    assert!(!Options::from_scenario(&keyed).por);
    let text = keyed.to_canonical();
    assert!(text.contains("por = false"), "{text}");
    let back = Scenario::parse(&text, "test").unwrap();
    assert!(!back.explore.por);
    // On is the default and not written, so older tokens stay the same.
    assert!(!scenario.to_canonical().contains("por ="));
}

/// Scenarios whose monitors or faults are not footprinted search without it.
#[test]
fn custom_code_and_aimed_faults_turn_por_off() {
    let aimed = small("sequential", 2, &[MutualExclusion], |s| {
        s.faults.expiries = 1;
        s.aims.expiries = Some(Target::Role(Role::Holder));
    });
    let root = SystemState::for_search(&aimed);
    let why = por::decide(&aimed, &root).expect_err("off");
    assert!(why.contains("aimed"), "{why}");
    let r = search_default(&aimed);
    assert!(
        r.por
            .as_deref()
            .unwrap()
            .starts_with("off (faults are aimed"),
        "{:?}",
        r.por
    );
}

fn search_default(scenario: &Scenario) -> Exploration {
    Exhaustive::bfs(200).explore(scenario, &Progress::hidden())
}

/// The reference scenario of docs/PERFORMANCE.md (3 clients, no drop)
/// under exact orbit keys: the same orbits with and without sleep sets,
/// BFS and DFS. Slow (the exact key renames each state six ways): run with
/// `cargo test --release -p zkcheck-cli --test suite por:: -- --ignored`.
#[test]
#[ignore]
fn the_reference_scenario_has_the_same_orbits_with_and_without_sleep_sets() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/lock-sequential-small.toml");
    let mut scenario = Scenario::from_file(&path).unwrap();
    scenario.clients = 3;
    scenario.faults.connection_drops = 0;
    let off = search(&scenario, false, Sym::Exact, false, 1);
    assert!(off.failure.is_none() && off.truncated == 0);
    for dfs in [false, true] {
        let on = search(&scenario, dfs, Sym::Exact, true, 1);
        assert!(on.failure.is_none() && on.truncated == 0);
        assert_eq!(on.distinct_states, off.distinct_states, "dfs: {dfs}");
        assert!(on.events < off.events);
        eprintln!(
            "reference, exact orbits (dfs: {dfs}): {:?} orbits; events {} with POR, {} without",
            on.distinct_states, on.events, off.events
        );
    }
}

/// The CLI: `check` prints `por on (…)`, and `--no-por` and `[explore] por
/// = false` print `por off (turned off)`, with the same states (symmetry
/// off: its representative counts move with the members met) and more
/// events.
#[test]
fn the_cli_prints_por_and_the_flag_and_key_turn_it_off() {
    let small = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/lock-sequential-small.toml");
    let text = std::fs::read_to_string(&small).unwrap();
    let off_file = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("por-off.toml");
    std::fs::write(
        &off_file,
        text.replace("[explore]\n", "[explore]\npor = false\nsymmetry = false\n"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_zkcheck"))
            .args(args)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let number = |label: &str| -> u64 {
            text.split(label)
                .nth(1)
                .and_then(|rest| rest.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{label} in {text}"))
        };
        let figures = (number("distinct states: "), number("events: "));
        (text, figures)
    };
    let small = small.to_str().unwrap();
    let (on, with) = run(&["check", small, "-q", "--no-symmetry"]);
    assert!(on.contains("; por on (sleep sets over 22 events)"), "{on}");
    let (off, without) = run(&["check", small, "-q", "--no-symmetry", "--no-por"]);
    assert!(off.contains("; por off (turned off)"), "{off}");
    let (key, by_key) = run(&["check", off_file.to_str().unwrap(), "-q"]);
    assert!(key.contains("; por off (turned off)"), "{key}");
    assert_eq!(with.0, without.0, "the same states");
    assert!(with.1 < without.1, "{with:?} / {without:?}");
    assert_eq!(without, by_key);
}

/// DFS's cycle check (lassos) needs every enabled step of the states on
/// its path: with it on, sleep sets are off, and `check` says why.
#[test]
fn cycle_check_turns_por_off() {
    let scenario = &table()
        .into_iter()
        .find(|(name, ..)| *name == "naive-no-rewatch")
        .expect("the row")
        .1;
    let with_cycles = Exhaustive::dfs(200).explore(scenario, &Progress::hidden());
    assert!(
        with_cycles
            .cycle_check
            .as_deref()
            .unwrap()
            .starts_with("on"),
        "{:?}",
        with_cycles.cycle_check
    );
    assert_eq!(
        with_cycles.por.as_deref(),
        Some("off (the cycle check needs every step)")
    );
    assert_eq!(caught(&with_cycles), Some(Liveness));
    let without = search(scenario, true, Sym::Off, true, 1);
    assert_eq!(caught(&without), Some(Liveness));
}
