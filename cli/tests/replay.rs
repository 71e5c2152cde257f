//! Replay reproduces a run bit for bit: the same trace, the same violation,
//! the same final state, from the token alone — through the library and
//! through the `zkcheck` command.

use std::path::PathBuf;
use std::process::{Command, Output};

use zkcheck::explore::random::run_random;
use zkcheck::explore::replay::replay;
use zkcheck::explore::{self, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::Scenario;
use zkcheck::shrink;
use zkcheck::token::Token;

fn zkcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(args)
        .output()
        .expect("the zkcheck binary runs")
}

/// A scenario where the herd-making variant fails quickly.
fn herd_scenario() -> Scenario {
    let mut s = Scenario::lock("sequential-watch-lowest", 3);
    s.hard = vec![Property::NoHerd];
    s.report = Vec::new();
    s.explore.schedules = 500;
    s.explore.max_steps = 20_000;
    s
}

#[test]
fn a_passing_run_replays_to_the_same_trace_and_state() {
    let mut scenario = Scenario::lock("sequential", 3);
    scenario.faults.connection_drops = 1;
    scenario.faults.expiries = 1;
    for seed in 0..5 {
        let run = run_random(&scenario, seed);
        assert!(run.violation.is_none());
        let indices = run.schedule.to_indices(&scenario).unwrap();
        let token = Token::decode(&Token::new(scenario.clone(), indices).encode()).unwrap();
        let a = replay(&token.scenario, &token.indices).unwrap();
        let b = replay(&token.scenario, &token.indices).unwrap();
        assert_eq!(a.run.schedule, run.schedule);
        assert_eq!(a.trace.text, b.trace.text);
        assert_eq!(a.run.model, b.run.model);
        assert_eq!(a.run.model.fingerprint(), b.run.model.fingerprint());
        assert_eq!(a.unused, 0);
    }
}

#[test]
fn a_failure_replays_from_its_token_to_the_same_violation() {
    let scenario = herd_scenario();
    let options = Options::from_scenario(&scenario);
    let found = explore::explorer(&options)
        .explore(&scenario, &Progress::hidden())
        .failure
        .expect("watch-lowest makes a herd");
    let shrunk = shrink(&scenario, &found.schedule, &found.violation);
    let indices = shrunk.schedule.to_indices(&shrunk.scenario).unwrap();
    let text = Token::new(shrunk.scenario.clone(), indices).encode();
    let first = {
        let t = Token::decode(&text).unwrap();
        replay(&t.scenario, &t.indices).unwrap()
    };
    assert_eq!(first.run.violation.as_ref(), Some(&shrunk.violation));
    assert!(
        first.trace.text.contains("VIOLATION herd"),
        "{}",
        first.trace.text
    );
    for _ in 0..3 {
        let t = Token::decode(&text).unwrap();
        let again = replay(&t.scenario, &t.indices).unwrap();
        assert_eq!(again.trace.text, first.trace.text);
        assert_eq!(again.run.violation, first.run.violation);
    }
}

#[test]
fn check_prints_a_token_that_replay_reproduces_exactly() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("herd.toml");
    std::fs::write(&path, herd_scenario().to_canonical()).unwrap();

    let check = zkcheck(&["check", path.to_str().unwrap(), "--jobs", "2"]);
    let out = String::from_utf8_lossy(&check.stdout).into_owned();
    assert_eq!(check.status.code(), Some(1), "{out}");
    assert!(out.contains("VIOLATION of herd"), "{out}");
    let token = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    let trace: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "trace:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(trace.len() > 3, "{out}");

    let r1 = zkcheck(&["replay", token, "--trace"]);
    let r2 = zkcheck(&["replay", token, "--trace"]);
    assert_eq!(r1.status.code(), Some(1));
    assert_eq!(r1.stdout, r2.stdout, "replay is deterministic");
    let replayed = String::from_utf8_lossy(&r1.stdout);
    for line in &trace {
        assert!(
            replayed.contains(line),
            "{line:?} missing from replay:\n{replayed}"
        );
    }
}

#[test]
fn a_schedule_that_does_not_fit_is_bad_input() {
    let scenario = Scenario::lock("sequential", 2);
    let token = Token::new(scenario, vec![0, 0, 60]).encode();
    let o = zkcheck(&["replay", &token]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("step 2 chooses event #60"), "{err}");
}
