//! Livelocks found as lassos by DFS's cycle check, both ways.
//!
//! `sequential-poll-defer` polls instead of watching and takes the lock
//! only when its node is alone: two contenders that both enqueued defer
//! to each other for ever. Its runs never go quiet (a poll timer is always
//! armed), so without the cycle check the clock cuts every such run
//! unjudged. With it, DFS closes the cycle of polls and reports a lasso
//! whose cycle leads back to the same state, up to the clock. The correct
//! twin `sequential-poll`, whose polls close thousands of cycles (every
//! waiter polling while the holder holds), and the reference `sequential`
//! and `naive` locks (pings, a reconnect after a drop, a second round
//! after thinking, finished clients) pass with the check on. A cycle that
//! exists only by starving one client is not a livelock.

use crate::cli_kit::{write_input, zk};
use zkcheck::explore::replay::replay_lasso;
use zkcheck::explore::{self, Exploration, Options};
use zkcheck::lasso;
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::state::SystemState;
use zkcheck::token::Token;
use zkcheck::trace::CYCLE_MARK;
use zkcheck::Counterexample;
use zkcheck_cli::command::Exit;
use zksim::{Event, Happening};

/// Two clients of `recipe` on one server, one round (or two, with a
/// think timer between them), liveness hard, the clock stopping at
/// `max_time`, optionally one connection drop.
fn scenario(recipe: &str, max_time: u64, rounds: u32, drops: u32) -> Scenario {
    let text = format!(
        r#"
name = "lasso"
recipe = "{recipe}"
clients = 2
root = "/lock"

[workload]
rounds = {rounds}
hold_ticks = 1
think_ticks = 1

[ensemble]
servers = 1
session_timeout = 4
max_time = {max_time}

[faults]
connection_drops = {drops}

[checks]
hard = ["mutex", "liveness"]
report = []

[explore]
strategy = "dfs"
depth = 400
"#
    );
    Scenario::parse(&text, "lasso.rs").unwrap_or_else(|e| panic!("{e}"))
}

fn explore(scenario: &Scenario, strategy: Search, cycles: bool) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    options.strategy = strategy;
    options.cycles = cycles;
    // Sleep sets are off under the cycle check; keep them off without it
    // too, so that on and off differ by the cycle check alone.
    options.por = false;
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

/// The time-shift key of the state after each prefix of `events`.
fn keys(scenario: &Scenario, events: &[Event]) -> Vec<(u64, u64, u64)> {
    let mut model = SystemState::for_search(scenario);
    let mut log: Vec<Happening<zkrecipes::AppEvent>> = Vec::new();
    let mut out = vec![(
        model.time_shift_key(),
        model.fingerprint(),
        model.world.now(),
    )];
    for e in events {
        model.step(e, &mut log).expect("the lasso breaks nothing");
        out.push((
            model.time_shift_key(),
            model.fingerprint(),
            model.world.now(),
        ));
    }
    out
}

#[test]
fn the_deferring_poll_lock_livelocks_and_dfs_finds_the_lasso() {
    for max_time in [4, 12] {
        let s = scenario("sequential-poll-defer", max_time, 1, 0);
        let r = explore(&s, Search::Dfs, true);
        let failure = r
            .failure
            .unwrap_or_else(|| panic!("max_time {max_time}: livelock not found"));
        assert_eq!(failure.violation.property, Property::Liveness);
        assert!(failure.violation.explanation.starts_with("livelock:"));
        let from = failure.cycle_from.expect("reported as a lasso");
        let events = &failure.schedule.events;
        assert!(from < events.len());
        // The cycle leads back to the same state, later: the same key up
        // to the clock, another exact fingerprint, a later clock.
        let k = keys(&s, events);
        let (start, end) = (k[from], k[events.len()]);
        assert_eq!(start.0, end.0, "the cycle returns to its key");
        assert_ne!(start.1, end.1, "exactly, the states differ (time moved)");
        assert!(end.2 > start.2, "the cycle takes time");
        // Going round once more gives the key again.
        let mut twice = events.clone();
        twice.extend_from_slice(&events[from..]);
        let k2 = keys(&s, &twice);
        assert_eq!(k2[twice.len()].0, start.0, "and again");
        // Nobody acquires in it.
        assert!(lasso::judge(&s, events, from).is_ok());
    }
}

#[test]
fn the_lasso_token_replays_to_the_same_verdict_with_the_cycle_marked() {
    let s = scenario("sequential-poll-defer", 8, 1, 0);
    let failure = explore(&s, Search::Dfs, true)
        .failure
        .expect("livelock found");
    let c = Counterexample::of(&s, &failure);
    assert_eq!(c.violation.property, Property::Liveness);
    let from = c.cycle_from.expect("a lasso counterexample");
    assert!(c.steps <= failure.schedule.len());
    assert!(c.trace.contains(CYCLE_MARK), "{}", c.trace);
    assert!(c.to_string().contains("LASSO: steps"), "{c}");
    let token = Token::decode(c.token.as_deref().expect("a token")).expect("decodes");
    assert_eq!(token.cycle_from, Some(from));
    let replayed = replay_lasso(&token.scenario, &token.indices, token.cycle_from).expect("fits");
    let v = replayed.run.violation.expect("replay judges the lasso");
    assert_eq!(v.property, Property::Liveness);
    assert_eq!(v.explanation, c.violation.explanation);
    // The Markdown/HTML report marks the lasso too.
    let dir = std::env::temp_dir().join(format!("zkcheck-lasso-{}", std::process::id()));
    let written = zkcheck_cli::viewer::write_counterexample(&dir, &token).expect("report written");
    let md = std::fs::read_to_string(&written[0]).expect("markdown");
    assert!(md.contains("**LASSO**: steps"), "{md}");
    assert!(md.contains("**VIOLATION of liveness**: livelock"), "{md}");
    let html = std::fs::read_to_string(&written[2]).expect("html");
    assert!(
        html.contains(CYCLE_MARK),
        "the page's trace marks the cycle"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Without its cycle mark the same schedule is only a cut run.
    let plain = replay_lasso(&token.scenario, &token.indices, None).expect("fits");
    assert!(plain.run.violation.is_none());
    // A mark that does not start a cycle is refused on replay, not judged.
    let wrong = replay_lasso(&token.scenario, &token.indices, Some(from + 1)).expect("fits");
    assert!(wrong.run.violation.is_none());
    assert!(
        wrong.trace.text.contains("not a livelock"),
        "{}",
        wrong.trace.text
    );
}

#[test]
fn without_the_cycle_check_the_livelock_is_cut_by_the_clock_unjudged() {
    let s = scenario("sequential-poll-defer", 6, 1, 0);
    for strategy in [Search::Dfs, Search::Bfs] {
        let r = explore(&s, strategy, false);
        assert!(r.failure.is_none(), "{strategy:?}: {:?}", r.failure);
        assert_eq!(r.truncated, 0);
    }
}

#[test]
fn the_correct_twin_and_the_reference_locks_pass_with_the_cycle_check_on() {
    let mut closed = 0;
    for (recipe, max_time, rounds, drops) in [
        ("sequential-poll", 6, 1, 0),
        ("sequential-poll", 4, 2, 1),
        ("sequential", 6, 2, 0),
        ("sequential", 4, 1, 1),
        ("naive", 6, 2, 0),
        ("naive", 4, 1, 1),
    ] {
        let s = scenario(recipe, max_time, rounds, drops);
        let r = explore(&s, Search::Dfs, true);
        let what = format!("{recipe} max_time {max_time} rounds {rounds} drops {drops}");
        assert!(r.failure.is_none(), "{what}: {:?}", r.failure);
        assert_eq!(r.truncated, 0, "{what}: explored whole");
        assert!(
            r.cycle_check
                .as_deref()
                .is_some_and(|c| c.starts_with("on")),
            "{what}: {:?}",
            r.cycle_check
        );
        if recipe == "sequential-poll" {
            assert!(r.cycles_dismissed > 0, "{what}: its polls close cycles");
        }
        closed += r.cycles_dismissed;
    }
    assert!(
        closed > 100,
        "the check saw cycles and dismissed them: {closed}"
    );
}

/// The deferring lock again, with client 0's answer to its listing left
/// unread while client 1 polls on: client 1's polls go round (the same
/// state after each), but only because client 0 never reads its reply.
#[test]
fn a_cycle_that_starves_a_client_is_not_a_livelock() {
    let s = scenario("sequential-poll-defer", 12, 1, 0);
    let (c0, c1) = (0, 1);
    let mut events = vec![
        Event::Request { client: c0 }, // create /lock
        Event::Request { client: c1 }, // create /lock
        Event::Receive { client: c0 }, // created: create own node
        Event::Request { client: c0 },
        Event::Receive { client: c0 }, // own node: getChildren
        Event::Receive { client: c1 }, // NodeExists: create own node
        Event::Request { client: c1 },
        Event::Request { client: c0 }, // c0's listing answered (both nodes), unread
        Event::Receive { client: c1 }, // own node: getChildren
    ];
    let from = events.len();
    events.extend([
        Event::Request { client: c1 },
        Event::Receive { client: c1 }, // two nodes: defer, poll in a tick
        Event::Tick,
        Event::Timer { client: c1 }, // getChildren again
    ]);
    let k = keys(&s, &events);
    assert_eq!(k[from].0, k[events.len()].0, "a real cycle");
    let why = lasso::judge(&s, &events, from).expect_err("starves client 0");
    assert!(why.0.contains("unfair"), "{why}");
    assert!(why.0.contains("c0 receives"), "{why}");
    // Letting client 0 read its reply makes it poll too: then the fair
    // cycle (both polling) is a livelock, as DFS reports.
    let mut fair = events[..from].to_vec();
    fair.push(Event::Receive { client: c0 });
    let k = keys(&s, &fair);
    assert_ne!(k[from].0, k[fair.len()].0);
}

#[test]
fn a_schedule_that_does_not_close_or_does_not_fit_is_not_a_lasso() {
    let s = scenario("sequential-poll-defer", 12, 1, 0);
    // A prefix that is not a cycle at all.
    let events = vec![Event::Request { client: 0 }, Event::Request { client: 1 }];
    let why = lasso::judge(&s, &events, 1).expect_err("not a cycle");
    assert!(why.0.contains("is not the state before"), "{why}");
    // An event that is not enabled.
    let why = lasso::judge(&s, &[Event::Receive { client: 0 }], 0).expect_err("not enabled");
    assert!(why.0.contains("not enabled"), "{why}");
}

#[test]
fn lasso_tokens_carry_the_cycle_and_refuse_a_bad_one() {
    let s = scenario("sequential-poll-defer", 4, 1, 0);
    let token = Token::new(s.clone(), vec![0, 1, 2]).with_cycle(Some(1));
    let text = token.encode();
    assert_eq!(Token::decode(&text).expect("decodes"), token);
    let plain = Token::new(s, vec![0, 1, 2]);
    assert_eq!(
        Token::decode(&plain.encode()).expect("decodes").cycle_from,
        None
    );
    let past = Token::new(plain.scenario.clone(), vec![0, 1, 2])
        .with_cycle(Some(3))
        .encode();
    let e = Token::decode(&past).expect_err("cycle past the schedule");
    assert!(e.message.contains("cycle starts at step 3"), "{e}");
}

/// The cycle check only looks: the visited set, the state counts, the end
/// states and the verdict of a DFS are the same with it on and off.
#[test]
fn the_cycle_check_changes_no_count_and_no_other_verdict() {
    for (recipe, drops) in [("sequential", 1), ("naive", 1), ("sequential-poll", 0)] {
        let s = scenario(recipe, 4, 1, drops);
        let on = explore(&s, Search::Dfs, true);
        let off = explore(&s, Search::Dfs, false);
        assert_eq!(on.distinct_states, off.distinct_states, "{recipe}");
        assert_eq!(on.schedules, off.schedules, "{recipe}");
        assert_eq!(on.events, off.events, "{recipe}");
        assert_eq!(on.failure.is_some(), off.failure.is_some(), "{recipe}");
        assert_eq!(off.cycles_dismissed, 0);
        assert!(off
            .cycle_check
            .as_deref()
            .is_some_and(|c| c.starts_with("off")));
    }
}

/// The command, both ways: `check` of the shipped scenario reports the
/// lasso (text and JSON), `--no-cycles` cannot judge it (exit 3), the twin
/// passes, and `replay` of the token judges the lasso again.
#[test]
fn the_command_reports_the_lasso_and_replays_it() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/lock-poll-defer.toml"
    );
    let ran = zk(&["check", file, "--quiet"]);
    assert_eq!(ran.exit, Exit::Violation, "{}{}", ran.out, ran.err);
    assert!(ran.out.contains("LASSO: steps"), "{}", ran.out);
    assert!(ran.out.contains(CYCLE_MARK), "{}", ran.out);
    let json = zk(&["check", file, "--quiet", "--json"]);
    assert_eq!(json.exit, Exit::Violation);
    let v: serde_json::Value = serde_json::from_str(&json.out).expect("one JSON result");
    assert_eq!(v["verdict"], "violation");
    assert!(v["cycle_check"]
        .as_str()
        .is_some_and(|c| c.starts_with("on")));
    let from = v["counterexample"]["cycle_from"].as_u64().expect("a lasso");
    let token = v["counterexample"]["token"].as_str().expect("a token");
    assert_eq!(
        Token::decode(token).expect("decodes").cycle_from,
        Some(from as usize)
    );
    let replayed = zk(&["replay", token]);
    assert_eq!(replayed.exit, Exit::Violation, "{}", replayed.out);
    assert!(replayed.out.contains("livelock"), "{}", replayed.out);

    // Without the cycle check the polls run into max_time, which cuts
    // them: liveness cannot judge those ends, so not ok (issue 35).
    let off = zk(&["check", file, "--quiet", "--no-cycles"]);
    assert_eq!(off.exit, Exit::Incomplete, "{}", off.out);
    assert!(off.out.contains("cut by the clock"), "{}", off.out);
    assert!(
        off.out.contains("cycle check off (turned off)"),
        "{}",
        off.out
    );
    let text = std::fs::read_to_string(file).expect("scenario");
    let twin = write_input(
        "lasso",
        "lock-poll.toml",
        &text.replace("\"sequential-poll-defer\"", "\"sequential-poll\""),
    );
    let ran = zk(&["check", &twin, "--quiet"]);
    assert_eq!(ran.exit, Exit::Ok, "{}", ran.out);
    assert!(
        ran.out.contains("cycles closed (no livelock)"),
        "{}",
        ran.out
    );
}
