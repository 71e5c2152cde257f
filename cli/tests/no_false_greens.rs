//! Issue 35's one rule, "this run was judged on what it claims", at every
//! front door (`check`, `replay`, `merge`, `compare`), each reproducer
//! both ways: the run that was cut (by the clock, the step bound, the
//! depth, a signal) or is unfinished exits 3 — never 0, and never a false
//! 1 — and the same scenario given enough time, steps or depth exits 0.
//! The library's door is held to the same rule in `zkcheck::verdict`'s
//! own tests.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_kit::{write_input, zk, Ran};
use zkcheck::explore::random::run_random;
use zkcheck::scenario::Scenario;
use zkcheck::token::Token;
use zkcheck_cli::command::Exit;

fn shipped(name: &str) -> String {
    format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The shipped scenario `name` with each `(key, value)` line replaced
/// (the line starting with `key =`), written under this file's folder.
fn edited(name: &str, tag: &str, edits: &[(&str, &str)]) -> String {
    let text = std::fs::read_to_string(shipped(name)).unwrap();
    let mut out = String::new();
    let mut done = vec![false; edits.len()];
    for line in text.lines() {
        let hit = edits
            .iter()
            .position(|(k, _)| line.starts_with(&format!("{k} =")));
        match hit {
            Some(i) => {
                out += &format!("{} = {}\n", edits[i].0, edits[i].1);
                done[i] = true;
            }
            None => out += &format!("{line}\n"),
        }
    }
    assert!(done.iter().all(|&d| d), "{name}: {edits:?}");
    write_input("no_false_greens", &format!("{tag}-{name}"), &out)
}

#[track_caller]
fn assert_exit(r: &Ran, exit: Exit, needles: &[&str]) {
    assert_eq!(r.exit, exit, "out: {}\nerr: {}", r.out, r.err);
    for n in needles {
        assert!(
            r.out.contains(n) || r.err.contains(n),
            "expected {n:?} in:\n{}\n{}",
            r.out,
            r.err
        );
    }
}

fn check(file: &str, extra: &[&str]) -> Ran {
    let mut args = vec!["check", file, "--quiet", "--jobs", "2"];
    args.extend_from_slice(extra);
    zk(&args)
}

// --- item 1: runs the clock cuts ------------------------------------------

/// The shipped livelock with `liveness` hard: random and BFS runs are cut
/// by `max_time` (the polls never stop), so neither may say ok; DFS's cycle
/// check finds the livelock (exit 1).
#[test]
fn no_false_greens_a_livelock_cut_by_the_clock_is_incomplete() {
    let file = shipped("lock-poll-defer.toml");
    let random = check(&file, &["--strategy", "random", "--schedules", "300"]);
    assert_exit(
        &random,
        Exit::Incomplete,
        &[
            "runs cut by the clock at max_time: ",
            "were cut by the clock at ensemble.max_time = 12",
            "liveness judges a run's end",
        ],
    );
    let dfs = check(&file, &[]);
    assert_exit(&dfs, Exit::Violation, &["livelock"]);
}

/// A correct queue (`queue` and `liveness` hard) with `max_time` 4: most
/// runs are cut by the clock. Item 6: never the false "took item 0, which
/// no client ever offered" (exit 1) — the producer was paused with its
/// create's reply in flight; item 1: exit 3, naming the clock. With the
/// shipped `max_time` the same check is ok.
#[test]
fn no_false_greens_a_queue_cut_by_the_clock_is_incomplete_not_violated() {
    for t in ["2", "4", "8"] {
        let cut = edited("queue.toml", &format!("t{t}"), &[("max_time", t)]);
        let r = check(&cut, &["--schedules", "2000"]);
        assert_exit(
            &r,
            Exit::Incomplete,
            &[&format!("cut by the clock at ensemble.max_time = {t}")],
        );
        assert!(!r.out.contains("never offered"), "{}", r.out);
    }
    let enough = check(&shipped("queue.toml"), &["--schedules", "300"]);
    assert_exit(&enough, Exit::Ok, &["ok: every hard check held"]);
}

/// An election with `max_time = 2` elects nobody: incomplete, not ok;
/// with the shipped 300 ticks it is ok.
#[test]
fn no_false_greens_an_election_the_clock_stops_is_incomplete() {
    let cut = edited("election.toml", "t2", &[("max_time", "2")]);
    let r = check(&cut, &["--schedules", "100"]);
    assert_exit(
        &r,
        Exit::Incomplete,
        &["cut by the clock at ensemble.max_time = 2", "election"],
    );
    let enough = check(&shipped("election.toml"), &["--schedules", "100"]);
    assert_exit(&enough, Exit::Ok, &[]);
}

/// The documented exception: where no hard check judges a run's end
/// (mutual exclusion, judged at every step), a run the clock cut was
/// judged on every step it took, in a world that ends at `max_time`: ok,
/// and the summary still says how many runs the clock ended. The same
/// file with `liveness` hard is incomplete.
#[test]
fn no_false_greens_safety_alone_judges_a_clock_cut_prefix_and_says_so() {
    let safety = edited(
        "lock-sequential.toml",
        "safety",
        &[("max_time", "3"), ("hard", "[\"mutex\"]")],
    );
    let r = check(&safety, &["--schedules", "200"]);
    assert_exit(
        &r,
        Exit::Ok,
        &["runs cut by the clock at max_time: ", "judged as they ran"],
    );
    let live = edited(
        "lock-sequential.toml",
        "live",
        &[("max_time", "3"), ("hard", "[\"mutex\", \"liveness\"]")],
    );
    let r = check(&live, &["--schedules", "200"]);
    assert_exit(&r, Exit::Incomplete, &["liveness judges a run's end"]);
}

// --- item 12: a depth-bounded search -------------------------------------

#[test]
fn no_false_greens_a_search_cut_at_its_depth_is_incomplete() {
    let file = shipped("lock-sequential-small.toml");
    let shallow = check(&file, &["--depth", "1"]);
    assert_exit(
        &shallow,
        Exit::Incomplete,
        &["states were cut at depth 1", "raise --depth"],
    );
    assert!(!shallow.out.contains("ok: every"), "{}", shallow.out);
    let deep = check(&file, &[]);
    assert_exit(&deep, Exit::Ok, &["each to its end"]);
}

// --- item 9: replay --------------------------------------------------------

fn token_of_random_run(scenario: &Scenario, seed: u64) -> (String, bool) {
    let outcome = run_random(scenario, seed);
    assert!(outcome.violation.is_none());
    let indices = outcome.schedule.to_indices(scenario).unwrap();
    (Token::new(scenario.clone(), indices).encode(), outcome.cut)
}

#[test]
fn no_false_greens_replay_of_an_unfinished_run_is_incomplete() {
    let mut scenario =
        Scenario::from_file(std::path::Path::new(&shipped("lock-sequential.toml"))).unwrap();
    let (whole, cut) = token_of_random_run(&scenario, 0);
    assert!(!cut);
    assert_exit(&zk(&["replay", &whole]), Exit::Ok, &["the run finished"]);

    // The same schedule, its last half dropped: the run did not end.
    let decoded = Token::decode(&whole).unwrap();
    let half = decoded.indices[..decoded.indices.len() / 2].to_vec();
    let short = Token::new(scenario.clone(), half).encode();
    assert_exit(
        &zk(&["replay", &short]),
        Exit::Incomplete,
        &["the token's schedule ended before the run did"],
    );

    // A run cut at max_steps replays as cut: exit 3, as `check` says.
    scenario.explore.max_steps = 12;
    let (cut_token, cut) = token_of_random_run(&scenario, 0);
    assert!(cut);
    assert_exit(
        &zk(&["replay", &cut_token]),
        Exit::Incomplete,
        &["cut at explore.max_steps = 12"],
    );
}

// --- item 11: merge re-derives verdicts ----------------------------------

fn shard_json(file: &str, k: u64) -> String {
    let r = zk(&[
        "check",
        file,
        "--schedules",
        "40",
        "--shard",
        &format!("{k}/2"),
        "--json",
        "--quiet",
        "--jobs",
        "1",
    ]);
    assert!(r.out.trim_start().starts_with('{'), "{}", r.err);
    r.out
}

fn merged(name: &str, shards: &[String]) -> Ran {
    let files: Vec<String> = shards
        .iter()
        .enumerate()
        .map(|(i, text)| write_input("no_false_greens", &format!("{name}-{i}.json"), text))
        .collect();
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    zk(&args)
}

fn edit_json(text: &str, f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn no_false_greens_merge_rederives_verdicts_from_the_figures() {
    // Honest shards whose runs were cut at max_steps: the merge is incomplete.
    let cut = edited("lock-sequential.toml", "steps", &[("max_steps", "30")]);
    let shards = [shard_json(&cut, 0), shard_json(&cut, 1)];
    assert_exit(
        &merged("cut", &shards),
        Exit::Incomplete,
        &["runs cut at max_steps: 40", "INCOMPLETE"],
    );
    // The same shards edited to say ok: refused, naming the file and field.
    let lying = edit_json(&shards[1], |v| {
        v["verdict"] = "ok".into();
        v["incomplete"] = serde_json::json!([]);
    });
    let r = merged("lying", &[shards[0].clone(), lying]);
    assert_exit(
        &r,
        Exit::BadInput,
        &[
            "lying-1.json",
            "field `incomplete`",
            "cut at explore.max_steps",
        ],
    );
    let verdict_only = edit_json(&shards[1], |v| v["verdict"] = "ok".into());
    let r = merged("verdict", &[shards[0].clone(), verdict_only]);
    assert_exit(&r, Exit::BadInput, &["verdict-1.json", "field `verdict`"]);

    // Complete shards merge ok; a hidden hard violation is refused.
    let good = [
        shard_json(&shipped("lock-sequential.toml"), 0),
        shard_json(&shipped("lock-sequential.toml"), 1),
    ];
    assert_exit(
        &merged("good", &good),
        Exit::Ok,
        &["ok: every hard check held"],
    );
    let hidden = edit_json(&good[0], |v| {
        v["figures"]["violations"] = serde_json::json!({"mutex": 1});
    });
    let r = merged("hidden", &[hidden, good[1].clone()]);
    assert_exit(
        &r,
        Exit::BadInput,
        &["hidden-0.json", "field `figures.violations`"],
    );

    // A counterexample's token must be a token of the result's scenario.
    let broken = shipped("lock-sequential-ignore-session.toml");
    let failing = [shard_json(&broken, 0), shard_json(&broken, 1)];
    let honest = merged("failing", &failing);
    assert_exit(&honest, Exit::Violation, &["replay: zk1:"]);
    let which = if failing[0].contains("\"token\":\"zk1:") {
        0
    } else {
        1
    };
    let garbage = edit_json(&failing[which], |v| {
        v["counterexample"]["token"] = "zk1:garbage".into();
    });
    let mut edited_set = failing.clone();
    edited_set[which] = garbage;
    let r = merged("garbage", &edited_set);
    assert_exit(
        &r,
        Exit::BadInput,
        &[
            &format!("garbage-{which}.json"),
            "field `counterexample.token`",
        ],
    );
    let foreign = edit_json(&failing[which], |v| {
        let (token, _) = token_of_random_run(
            &Scenario::from_file(std::path::Path::new(&shipped("lock-sequential.toml"))).unwrap(),
            0,
        );
        v["counterexample"]["token"] = token.into();
    });
    let mut edited_set = failing.clone();
    edited_set[which] = foreign;
    let r = merged("foreign", &edited_set);
    assert_exit(
        &r,
        Exit::BadInput,
        &["field `counterexample.token` replays scenario `lock-sequential`"],
    );
}

// --- item 2: compare on unfinished runs ----------------------------------

#[test]
fn no_false_greens_compare_bounds_its_runs_by_the_holds_and_says_when_cut() {
    // Holds of 200 ticks at 4 clients: every client acquires once now that
    // the run-length bound counts the holds (it used to stop at 160 ticks).
    let r = zk(&[
        "compare",
        "--clients",
        "4",
        "--seeds",
        "1",
        "--hold-ticks",
        "200",
        "--quiet",
    ]);
    assert_exit(
        &r,
        Exit::Ok,
        &["| naive | 4 | 1 | 4 |", "| sequential | 4 | 1 | 4 |"],
    );
    // Holds past the limit of max_time (11 × 100,000 ticks > 10^6): the
    // runs are cut by the clock, and the comparison says so (exit 3).
    let r = zk(&[
        "compare",
        "--clients",
        "11",
        "--seeds",
        "1",
        "--hold-ticks",
        "100000",
        "--quiet",
    ]);
    assert_exit(
        &r,
        Exit::Incomplete,
        &["1 (1 cut by the clock)", "TRUNCATED", "naive at 11 clients"],
    );
}

// --- item 10: a signal ends `compare` inside one run ---------------------

/// Ignored in the shared suite run: while it ran beside the in-process
/// tests, explorations of other tests stopped as if interrupted (a
/// process-wide stop flag set; the cause is not pinned down yet). Run it
/// alone: `cargo test --release -p zkcheck-cli --test suite -- --ignored
/// no_false_greens_compare_stops`.
#[test]
#[ignore = "sends a signal; run alone with --ignored (see its doc)"]
fn no_false_greens_compare_stops_within_a_second_of_a_signal_inside_one_run() {
    let child = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args([
            "compare",
            "--clients",
            "1024",
            "--seeds",
            "1",
            "--jobs",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One naive run at 1,024 clients takes many seconds: the signal lands
    // inside it.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("interrupted"), "{out}");
    // ~0.1 s on an idle machine; the bound leaves room for a busy one.
    assert!(took < Duration::from_secs(3), "took {took:?}");
}
