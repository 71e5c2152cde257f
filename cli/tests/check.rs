//! The `Check` builder from a test's point of view, both ways: the
//! reference lock holds under random, PCT and BFS; a broken twin fails with
//! a panic carrying the explanation, trace and token; the token replays the
//! same violation; a user invariant is judged after every step (a false one
//! is caught, a true one passes).

use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkrecipes::lock::flaws::SequentialStringSort;
use zkrecipes::lock::SequentialLock;
use zksim::{FaultBudget, World};

/// Lock nodes (children of `/lock`) on the leader.
fn lock_nodes<C: zksim::Client>(w: &World<C>) -> usize {
    w.leader_tree()
        .nodes()
        .filter(|(p, _)| p.starts_with("/lock/"))
        .count()
}

#[test]
fn the_reference_lock_holds_under_each_strategy() {
    let check = Check::<SequentialLock>::new(3)
        .rounds(2)
        .faults(FaultBudget {
            connection_drops: 1,
            ..FaultBudget::default()
        })
        .hard([Property::FencedExclusion, Property::Liveness])
        .always("lock nodes are ephemeral", |w| {
            w.leader_tree()
                .nodes()
                .filter(|(p, _)| p.starts_with("/lock/"))
                .all(|(_, n)| n.stat.ephemeral_owner != 0)
        });
    let r = check.clone().random(200).assert_holds();
    assert_eq!(r.schedules, 200);
    check.clone().pct(3, 100).assert_holds();
    // Exhaustive search must reach every run's end (a search cut at its
    // depth is incomplete, issue 35): a clock of one tick keeps it small.
    let bfs = Check::<SequentialLock>::new(2)
        .hard([Property::MutualExclusion])
        .configure(|s| s.ensemble.max_time = 1);
    let b = bfs.clone().bfs(400).assert_holds();
    assert!(b.distinct_states.unwrap() > 10);
    assert_eq!(b.truncated, 0);
    let cut = bfs.bfs(10).run();
    assert_eq!(cut.kind(), zkcheck::check::VerdictKind::Incomplete);
    assert!(cut.incomplete[0].contains("cut at depth 10"), "{cut:?}");
}

#[test]
fn a_broken_twin_fails_with_its_token_and_the_token_replays() {
    let c = Check::<SequentialStringSort>::new(3)
        .rounds(2)
        .random(2000)
        .assert_fails();
    assert_eq!(c.property(), Property::MutualExclusion);
    assert!(c.steps <= c.found_steps);
    let token = c.token.clone().expect("a token");
    let text = c.to_string();
    assert!(text.starts_with("VIOLATION of mutex"), "{text}");
    assert!(text.contains("\ntrace:\n"), "{text}");
    assert!(text.ends_with(&format!("replay: {token}")), "{text}");

    let again = Check::<SequentialStringSort>::replay(&token).assert_fails();
    assert_eq!(again.violation, c.violation);
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
    // The same run on the fixed recipe type is refused: the token names its type.
    assert!(Check::<SequentialLock>::try_replay(&token).is_err());
}

#[test]
fn assert_holds_panics_with_the_counterexample() {
    let panic = std::panic::catch_unwind(|| {
        Check::<SequentialStringSort>::new(3)
            .rounds(2)
            .random(2000)
            .assert_holds();
    })
    .expect_err("the broken lock must fail");
    let message = panic.downcast_ref::<String>().expect("a formatted panic");
    assert!(message.contains("VIOLATION of mutex"), "{message}");
    assert!(message.contains("replay: zk1:"), "{message}");
}

#[test]
fn a_false_invariant_is_caught_at_its_step_and_a_true_one_passes() {
    let c = Check::<SequentialLock>::new(2)
        .always("at most one lock node", |w| lock_nodes(w) <= 1)
        .random(100)
        .assert_fails();
    assert_eq!(c.property(), Property::Always("at most one lock node"));
    assert!(c.to_string().contains("VIOLATION of at most one lock node"));
    // Replaying needs the invariant again; with it the token reproduces.
    let token = c.token.unwrap();
    let again = Check::<SequentialLock>::replay(&token)
        .always("at most one lock node", |w| lock_nodes(w) <= 1)
        .assert_fails();
    assert_eq!(again.property(), Property::Always("at most one lock node"));
    // Without it nothing fails, but the token's schedule (cut at the
    // violating step) ends before the run does: not "ok" (issue 35).
    let without = Check::<SequentialLock>::replay(&token).run();
    assert!(without.counterexample.is_none());
    assert_eq!(without.kind(), zkcheck::check::VerdictKind::Incomplete);
    assert!(
        without.incomplete[0].contains("schedule ended before the run did"),
        "{without:?}"
    );
}

#[test]
fn the_cli_prints_the_counterexample_a_failing_check_panics_with() {
    use zkcheck::scenario::Scenario;
    use zkcheck_cli::command::{run, Exit};
    use zkrecipes::AnyRecipe;

    let check = Check::<AnyRecipe>::from_scenario(Scenario::lock("sequential-string-sort", 3))
        .rounds(2)
        .random(300)
        .seed(0);
    let c = check.assert_fails();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("string-sort.toml");
    std::fs::write(&path, check.scenario().to_canonical()).unwrap();
    let argv = [
        "zkcheck",
        "check",
        path.to_str().unwrap(),
        "--strategy",
        "random",
        "--schedules",
        "300",
        "--seed",
        "0",
        "--quiet",
    ];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(run(argv, &mut out, &mut err), Exit::Violation);
    let out = String::from_utf8(out).unwrap();
    // One rendering: the CLI's report of the failure is the counterexample's
    // `Display`, byte for byte, from the header to the token.
    assert!(out.contains(&format!("\n{c}\n")), "{out}\n---\n{c}");
}
