//! The two front doors — the library's `Check` and the `zkcheck check`
//! command — give one verdict for one scenario, seed and strategy: the
//! same kind (ok / violation / incomplete), the same counts, the same
//! reasons for being incomplete and the same replay token. Both go through
//! `zkcheck::verdict`; this test is what catches a door that judges
//! completeness by a rule of its own (the library once called a run whose
//! every schedule was cut at `max_steps` "ok", where the CLI exits 3).

use zkcheck::check::{Check, VerdictKind};
use zkcheck::scenario::Scenario;
use zkcheck_cli::command::Exit;
use zkcheck_cli::summary::Summary;
use zkrecipes::lock::SequentialLock;

use crate::cli_kit::{write_input, zk};

fn shipped(name: &str) -> String {
    format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The shipped scenario `name`, with `[explore] max_steps` set to
/// `max_steps` when given, written where the CLI can read it.
fn scenario_file(name: &str, max_steps: Option<usize>) -> String {
    let text = std::fs::read_to_string(shipped(name)).unwrap();
    let Some(steps) = max_steps else {
        return shipped(name);
    };
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("max_steps") {
                format!("max_steps = {steps}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(text.contains(&format!("max_steps = {steps}")), "{name}");
    write_input("two_doors", &format!("{steps}-{name}"), &text)
}

/// Both doors on one file, random strategy, seeds `0..schedules`, and
/// the checks that they agree; the verdict kind they agree on.
fn both_doors(file: &str, schedules: u64) -> VerdictKind {
    let scenario = Scenario::from_file(std::path::Path::new(file)).unwrap();
    let library = Check::from_scenario(scenario)
        .seed(0)
        .random(schedules)
        .jobs(2)
        .run();
    let cli = zk(&[
        "check",
        file,
        "--strategy",
        "random",
        "--seed",
        "0",
        "--schedules",
        &schedules.to_string(),
        "--jobs",
        "2",
        "--quiet",
        "--json",
    ]);
    let summary: Summary = serde_json::from_str(cli.out.trim()).unwrap();

    assert_eq!(library.kind(), summary.verdict, "{file}: {}", cli.err);
    assert_eq!(cli.exit, Exit::from(library.kind()), "{file}");
    assert_eq!(library.incomplete, summary.incomplete, "{file}");
    let e = &library.exploration;
    assert_eq!(
        (e.schedules, e.events, e.runs_cut),
        (summary.schedules, summary.events, summary.runs_cut),
        "{file}"
    );
    assert_eq!(e.figures, summary.figures, "{file}");
    let library_token = library
        .counterexample
        .as_ref()
        .and_then(|c| c.token.clone());
    let cli_token = summary
        .counterexample
        .as_ref()
        .and_then(|c| c.token.clone());
    assert_eq!(library_token, cli_token, "{file}");
    library.kind()
}

#[test]
fn two_doors_agree_on_an_ok_run() {
    let file = scenario_file("lock-sequential-faults.toml", None);
    assert_eq!(both_doors(&file, 40), VerdictKind::Ok);
}

#[test]
fn two_doors_agree_on_a_violation_and_its_token() {
    let file = scenario_file("lock-sequential-ignore-session.toml", None);
    assert_eq!(both_doors(&file, 400), VerdictKind::Violation);
}

#[test]
fn two_doors_agree_that_runs_cut_at_max_steps_are_incomplete() {
    let file = scenario_file("lock-sequential-faults.toml", Some(15));
    assert_eq!(both_doors(&file, 20), VerdictKind::Incomplete);
}

/// The example: a library user's check whose every run is cut at
/// 15 steps checked nothing, and `assert_holds` says so with the reason.
#[test]
fn two_doors_assert_holds_fails_on_an_incomplete_run_with_the_reason() {
    let check = Check::<SequentialLock>::new(3)
        .max_steps(15)
        .random(20)
        .jobs(1);
    let verdict = check.run();
    assert_eq!(verdict.exploration.runs_cut, 20);
    assert_eq!(verdict.kind(), VerdictKind::Incomplete);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.assert_holds()))
        .unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("not checked completely")
            && message.contains("20 of 20 runs were cut at explore.max_steps = 15"),
        "{message}"
    );
    // The same recipe with room to finish holds: the rule is not "always fail".
    Check::<SequentialLock>::new(3)
        .random(20)
        .jobs(1)
        .assert_holds();
}
