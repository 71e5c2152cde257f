//! Running loom models the same way everywhere: the preemption bound, a
//! fresh trace per execution, and models that are expected to fail.

#![allow(dead_code)] // each test binary uses its own subset

use std::process::Command;
use std::sync::Once;

use zkhandle::trace;

/// The preemption bound when `LOOM_MAX_PREEMPTIONS` is not set. Every bug
/// these models catch needs at most one preemption (the lost notify: one
/// switch between a check and a sleep); 2 leaves a margin and keeps the
/// suite within CI's budget (see the README for run times at 2 and 3).
pub const DEFAULT_PREEMPTIONS: usize = 2;

/// Set in the child process that runs a model expected to fail.
const CHILD_ENV: &str = "ZKHANDLE_LOOM_EXPECT_FAILURE";
/// What the panic hook prints before the failing interleaving.
const TRACE_HEADER: &str = "the failing interleaving (recorded steps):";

fn builder() -> loom::model::Builder {
    let mut b = loom::model::Builder::new(); // reads LOOM_MAX_PREEMPTIONS, LOOM_LOG, …
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(DEFAULT_PREEMPTIONS);
    }
    b
}

/// On the first panic of a thread, print the model's recorded steps after
/// the usual message: loom stops at the first failing execution, so they
/// are that execution's interleaving. (A failing loom model often aborts
/// while unwinding, so this cannot wait for `catch_unwind`.)
fn print_trace_on_panic() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default(info);
            let steps = trace::take();
            if !steps.is_empty() {
                eprintln!("{TRACE_HEADER}\n{}", trace::render(&steps));
            }
        }));
    });
}

fn run(model: impl Fn() + Sync + Send + 'static) {
    print_trace_on_panic();
    builder().check(move || {
        trace::reset();
        model();
    });
}

/// Check `model` under every interleaving (up to the preemption bound);
/// panics on the first failing one, printing its recorded steps.
pub fn check(model: impl Fn() + Sync + Send + 'static) {
    run(model);
}

/// Check `model` (the body of test `test_name`), expecting loom to find a
/// failing interleaving whose message contains one of `expected` (e.g.
/// "deadlock" for a lost wakeup). The model runs in a child process (this
/// test binary, filtered to this test): loom cannot always unwind cleanly
/// from a failure. Prints the child's report — loom's message and the
/// interleaving — and returns it.
pub fn check_fails(
    test_name: &str,
    model: impl Fn() + Sync + Send + 'static,
    expected: &[&str],
) -> String {
    if std::env::var(CHILD_ENV).as_deref() == Ok(test_name) {
        run(model);
        println!("loom explored every interleaving and found no failure");
        std::process::exit(0);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, test_name)
        .output()
        .expect("run the model in a child process");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Keep the report readable: loom's message and the recorded steps, not
    // the backtraces of the unwinding that follows.
    let shown: String = report
        .lines()
        .filter(|l| {
            l.contains("panicked at")
                || expected.iter().any(|e| l.contains(e))
                || l.starts_with(TRACE_HEADER)
                || l.trim_start().split('.').next().is_some_and(|n| {
                    !n.trim().is_empty() && n.trim().chars().all(|c| c.is_ascii_digit())
                }) && l.starts_with("  ")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    eprintln!("--- {test_name}: loom's report ---\n{shown}---");
    assert!(
        !output.status.success(),
        "loom explored every interleaving of `{test_name}` and found no failure (expected one of {expected:?})"
    );
    assert!(
        expected.iter().any(|e| report.contains(e)),
        "`{test_name}` failed, but not as expected (wanted one of {expected:?}):\n{report}"
    );
    assert!(
        report.contains(TRACE_HEADER),
        "`{test_name}` failed without printing its interleaving:\n{report}"
    );
    shown
}

/// The recorded steps in a report of [`check_fails`], in order.
pub fn steps_of(report: &str) -> Vec<String> {
    report
        .lines()
        .skip_while(|l| !l.starts_with(TRACE_HEADER))
        .skip(1)
        .filter_map(|l| l.trim_start().split_once(". ").map(|(_, s)| s.to_string()))
        .collect()
}
