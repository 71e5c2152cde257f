//! One test per class of input from issue 10, run through the command's
//! entry point in-process ([`zkcheck_cli::command::run`]) unless a real process is
//! needed (signals, a non-terminal stderr): each ends with a clear message
//! and the right exit code — 0 ok, 1 violation, 2 bad input, 3 incomplete.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_kit::{write_input, zk, Ran};
use zkcheck_cli::command::{run, Exit};

fn file(name: &str, text: &str) -> String {
    write_input("exit-codes", name, text)
}

fn shipped(name: &str) -> String {
    format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn shipped_text(name: &str) -> String {
    std::fs::read_to_string(shipped(name)).unwrap()
}

#[track_caller]
fn assert_bad(r: &Ran, needles: &[&str]) {
    assert_eq!(r.exit, Exit::BadInput, "out: {}\nerr: {}", r.out, r.err);
    for n in needles {
        assert!(r.err.contains(n), "expected {n:?} in: {}", r.err);
    }
}

#[track_caller]
fn assert_incomplete(r: &Ran, needles: &[&str]) {
    assert_eq!(r.exit, Exit::Incomplete, "out: {}\nerr: {}", r.out, r.err);
    assert!(!r.out.contains("\nok"), "{}", r.out);
    for n in needles {
        assert!(r.out.contains(n), "expected {n:?} in: {}", r.out);
    }
}

const LOCK: &str = "name = \"t\"\nrecipe = \"sequential\"\n";

fn lock_with(rest: &str) -> String {
    format!("{LOCK}{rest}")
}

// --- numbers that used to panic, abort or hang -------------------------

#[test]
fn huge_client_counts_are_refused_with_the_field_and_its_line() {
    for (value, needle) in [
        ("18446744073709551615", "t.toml:3:"),
        ("9223372036854775807", "`clients` = 9223372036854775807"),
        ("1000000000", "between 1 and 1024"),
        ("10000", "`clients` = 10000"),
        ("-1", "t.toml:3:"),
    ] {
        let path = file("t.toml", &lock_with(&format!("clients = {value}\n")));
        assert_bad(&zk(&["check", &path]), &[needle]);
    }
    // A naive lock with 2000 clients: refused before anything runs.
    let path = file(
        "naive.toml",
        "name = \"n\"\nrecipe = \"naive\"\nclients = 2000\n",
    );
    assert_bad(
        &zk(&["check", &path]),
        &["naive.toml:3:11", "`clients` = 2000"],
    );
}

#[test]
fn huge_server_counts_are_refused_at_their_line() {
    for value in ["9223372036854775807", "4294967296", "1000"] {
        let path = file(
            "servers.toml",
            &lock_with(&format!("clients = 2\n[ensemble]\nservers = {value}\n")),
        );
        assert_bad(
            &zk(&["check", &path]),
            &["servers.toml:5:1", "`ensemble.servers`", "between 1 and 9"],
        );
    }
}

#[test]
fn every_limited_field_is_checked_in_files() {
    for (section, key, value) in [
        ("workload", "rounds", "0"),
        ("workload", "hold_ticks", "100001"),
        ("ensemble", "max_time", "2000000"),
        ("faults", "expiries", "1001"),
        ("explore", "schedules", "0"),
        ("explore", "max_steps", "0"),
        ("explore", "pct_depth", "1000000000"),
        ("explore", "depth", "0"),
        ("explore", "memory_mb", "1"),
        ("explore", "max_states", "0"),
    ] {
        let path = file(
            "field.toml",
            &lock_with(&format!("clients = 2\n[{section}]\n{key} = {value}\n")),
        );
        let r = zk(&["check", &path]);
        assert_bad(
            &r,
            &[&format!("`{section}.{key}` = {value}"), "field.toml:5:1"],
        );
    }
}

#[test]
fn flags_out_of_range_are_refused() {
    let path = shipped("lock-sequential.toml");
    for (args, needle) in [
        (
            &["--strategy", "pct", "--depth", "18446744073709551615"][..],
            "`--depth`",
        ),
        (
            &["--strategy", "pct", "--depth", "1000000000"],
            "between 1 and 64",
        ),
        (&["--strategy", "bfs", "--depth", "0"], "`--depth` = 0"),
        (&["--jobs", "100000"], "`--jobs` = 100000"),
        (&["--jobs", "0"], "`--jobs` = 0"),
        (&["--schedules", "0"], "`--schedules` = 0"),
        (
            &["--seed", "18446744073709551615"],
            "runs past the last seed",
        ),
        (&["--time-limit", "0"], "`--time-limit` = 0"),
        (&["--time-limit", "soon"], "not a duration"),
        (&["--memory-mb", "1"], "`--memory-mb` = 1"),
        (&["--max-states", "0"], "`--max-states` = 0"),
        (
            &["--max-states", "100000000001"],
            "`--max-states` = 100000000001",
        ),
        (&["--depth", "5"], "does not apply to the random strategy"),
        (&["--schedules", "-1"], "-1"),
    ] {
        let mut all = vec!["check", path.as_str()];
        all.extend_from_slice(args);
        assert_bad(&zk(&all), &[needle]);
    }
}

#[test]
fn compare_numbers_are_refused() {
    for (args, needle) in [
        (&["--clients", "18446744073709551615"][..], "`--clients`"),
        (&["--clients", "1000000000"], "between 1 and 1024"),
        (&["--clients", "100000"], "`--clients` = 100000"),
        (&["--clients", "0"], "`--clients` = 0"),
        (&["--seeds", "0"], "`--seeds` = 0"),
        (&["--jobs", "100000"], "`--jobs`"),
        (
            &["--clients", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"],
            "distinct client counts",
        ),
    ] {
        let mut all = vec!["compare", "-q"];
        all.extend_from_slice(args);
        assert_bad(&zk(&all), &[needle]);
    }
}

#[test]
fn compare_timing_inputs_are_refused() {
    let bad_value = file(
        "timing-bad.toml",
        "[timing]\nlatency_us = 10\nnotify_us = 99999999999\n",
    );
    assert_bad(
        &zk(&[
            "compare",
            "-q",
            "--clients",
            "2",
            "--seeds",
            "1",
            "--timing",
            &bad_value,
        ]),
        &["timing-bad.toml:3:1", "`timing.notify_us` = 99999999999"],
    );
    let unknown = file("timing-unknown.toml", "[timing]\nlatency = 10\n");
    assert_bad(
        &zk(&[
            "compare",
            "-q",
            "--clients",
            "2",
            "--seeds",
            "1",
            "--timing",
            &unknown,
        ]),
        &["timing-unknown.toml:2:1", "unknown field"],
    );
    let good = file("timing-good.toml", "[timing]\nlatency_us = 10\n");
    let r = zk(&[
        "compare",
        "-q",
        "--clients",
        "2",
        "--seeds",
        "1",
        "--timing",
        &good,
    ]);
    assert_eq!(r.exit, Exit::Ok, "{}", r.err);
    assert_bad(
        &zk(&["compare", "-q", "--hold-ticks", "100001"]),
        &["`--hold-ticks` = 100001"],
    );
}

// --- tokens: the checksum is no defence against an edited token ----------

/// A valid token of `scenario_text` (schedule empty), checksum recomputed.
fn forged_token(scenario_text: &str) -> String {
    // Encode with the token module's own rules: base64url, empty schedule,
    // FNV-1a of the rest.
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::from("zk1:");
    for chunk in scenario_text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out.push(':');
    let sum = out.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{out}:{sum:08x}")
}

#[test]
fn an_edited_token_is_checked_like_a_file() {
    // An empty schedule: the run did not even start, so the replay is
    // incomplete (exit 3), not ok and not bad input.
    let good = forged_token(&lock_with("clients = 2\n"));
    assert_eq!(zk(&["replay", &good]).exit, Exit::Incomplete);
    let huge = forged_token(&lock_with("clients = 9223372036854775807\n"));
    assert_bad(
        &zk(&["replay", &huge]),
        &["`clients` = 9223372036854775807"],
    );
    let servers = forged_token(&lock_with("clients = 2\n[ensemble]\nservers = 1000\n"));
    assert_bad(&zk(&["replay", &servers]), &["`ensemble.servers` = 1000"]);
    let too_long = "A".repeat(5 << 20);
    assert_bad(&zk(&["replay", &too_long]), &["`token`"]);
}

// --- "ok" after checking nothing ----------------------------------------

#[test]
fn invalid_roots_are_refused_by_the_simulators_path_rules() {
    for root in [
        "/a//b",
        "/.",
        "/a/./b",
        "/a/../b",
        "/a/",
        "lock",
        "/",
        "/a\\u0000b",
    ] {
        let path = file(
            "root.toml",
            &lock_with(&format!("clients = 2\nroot = \"{root}\"\n")),
        );
        assert_bad(&zk(&["check", &path]), &["`root`", "root.toml:4:8"]);
    }
}

#[test]
fn checks_must_fit_the_family_be_named_once_and_exist() {
    for (checks, needle, at) in [
        (
            "hard = [\"queue\", \"election\"]",
            "does not apply to recipe `sequential`",
            "checks.toml:5:1",
        ),
        ("hard = []", "`checks.hard` is empty", "checks.toml:5:1"),
        (
            "hard = [\"mutex\", \"mutex\"]",
            "names `mutex` again",
            "checks.toml:5:1",
        ),
        (
            "hard = [\"mutex\"]\nreport = [\"mutex\"]",
            "names `mutex` again",
            "checks.toml:6:1",
        ),
        (
            "hard = [\"mutex\"]\nreport = [\"election\"]",
            "`checks.report`",
            "checks.toml:6:1",
        ),
    ] {
        let path = file(
            "checks.toml",
            &lock_with(&format!("clients = 2\n[checks]\n{checks}\n")),
        );
        assert_bad(&zk(&["check", &path]), &[needle, at]);
    }
    let queue = file(
        "queue.toml",
        "name = \"q\"\nrecipe = \"seed002-queue\"\nclients = 2\nroot = \"/q\"\n[checks]\nhard = [\"mutex\"]\n",
    );
    assert_bad(
        &zk(&["check", &queue]),
        &["a queue recipe", "liveness, leaks, queue"],
    );
}

#[test]
fn runs_cut_at_max_steps_are_incomplete_not_ok() {
    let path = file(
        "cut.toml",
        &lock_with(
            "clients = 3\n[checks]\nhard = [\"liveness\"]\n[explore]\nmax_steps = 10\nschedules = 20\n",
        ),
    );
    let r = zk(&["check", &path, "-q"]);
    assert_incomplete(&r, &["20 of 20 runs were cut at explore.max_steps = 10"]);
    // With room to finish, the same scenario is complete and ok.
    let path = file(
        "uncut.toml",
        &lock_with("clients = 3\n[checks]\nhard = [\"liveness\"]\n[explore]\nschedules = 20\n"),
    );
    let r = zk(&["check", &path, "-q"]);
    assert_eq!(r.exit, Exit::Ok, "{}", r.out);
    assert!(r
        .out
        .contains("ok: every hard check held on a complete exploration"));
}

#[test]
fn the_memory_budget_ends_exhaustive_search_as_incomplete() {
    // bfs on the faults scenario used to take 5.5 GB: the state cap is not a memory cap.
    let r = zk(&[
        "check",
        &shipped("lock-sequential-faults.toml"),
        "--strategy",
        "bfs",
        "--depth",
        "100000",
        "--memory-mb",
        "16",
        "-q",
    ]);
    assert_incomplete(&r, &["memory budget was reached", "--memory-mb"]);
}

#[test]
fn a_scenario_too_big_for_bfs_stops_at_the_time_limit() {
    // lock-sequential-small with its `servers = 1` line deleted (3 servers).
    let text = shipped_text("lock-sequential-small.toml").replace("servers = 1\n", "");
    let path = file("small-3-servers.toml", &text);
    let started = Instant::now();
    let r = zk(&["check", &path, "--time-limit", "1", "-q"]);
    assert_incomplete(&r, &["the time limit of 1s was reached"]);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn the_state_cap_is_reported_as_the_reason() {
    use zkcheck::explore::exhaustive::Exhaustive;
    use zkcheck::explore::Explorer;
    use zkcheck::progress::Progress;
    use zkcheck::scenario::Scenario;
    let s =
        Scenario::from_file(std::path::Path::new(&shipped("lock-sequential-small.toml"))).unwrap();
    let mut bfs = Exhaustive::bfs(200);
    bfs.max_states = 500;
    let r = bfs.explore(&s, &Progress::hidden());
    assert!(r.state_cap_hit);
    assert_eq!(r.ended_by, Some(zkcheck::stop::StopReason::StateCap(500)));
}

/// The cap is the user's to set, from the command line or the file, and a
/// cap the search stays under changes nothing.
#[test]
fn the_state_cap_is_set_by_flag_or_file_and_a_cap_not_reached_is_ok() {
    let small = shipped("lock-sequential-small.toml");
    for strategy in ["bfs", "dfs"] {
        let r = zk(&[
            "check",
            &small,
            "--strategy",
            strategy,
            "--max-states",
            "500",
        ]);
        assert_incomplete(&r, &["state cap of 500 distinct states", "--max-states"]);
        let r = zk(&[
            "check",
            &small,
            "--strategy",
            strategy,
            "--max-states",
            "10000000",
        ]);
        assert_eq!(r.exit, Exit::Ok, "{strategy}: {}{}", r.out, r.err);
        assert!(r.out.contains("ok: every hard check held"), "{}", r.out);
    }
    let capped = file(
        "capped.toml",
        &shipped_text("lock-sequential-small.toml")
            .replace("[explore]\n", "[explore]\nmax_states = 700\n"),
    );
    assert_incomplete(&zk(&["check", &capped]), &["state cap of 700"]);
}

// --- a recipe panic is a violation with seed, trace and token -----------

#[test]
fn a_recipe_panic_is_a_no_panic_violation_that_replays() {
    let path = file(
        "unwrap.toml",
        "name = \"u\"\nrecipe = \"sequential-unwrap\"\nclients = 3\n[faults]\nconnection_drops = 2\n[explore]\nschedules = 200\n",
    );
    let r = zk(&["check", &path, "-q"]);
    assert_eq!(r.exit, Exit::Violation, "{}{}", r.out, r.err);
    assert!(
        r.out.contains("VIOLATION of no-panic (found by seed"),
        "{}",
        r.out
    );
    assert!(r
        .out
        .contains("called `Result::unwrap()` on an `Err` value: ConnectionLoss"));
    assert!(r.out.contains("recipes/src/lock/flaws.rs:"), "{}", r.out);
    assert!(r.out.contains("FAULT connection of"), "{}", r.out);
    assert!(
        !r.err.contains("panicked"),
        "the default hook stayed quiet: {}",
        r.err
    );
    let token = r
        .out
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .unwrap();
    let again = zk(&["replay", token, "--trace"]);
    assert_eq!(again.exit, Exit::Violation);
    assert!(again.out.contains("VIOLATION no-panic"), "{}", again.out);
    // The reference recipe under the same schedules does not panic.
    let path = file(
        "no-unwrap.toml",
        "name = \"u\"\nrecipe = \"sequential\"\nclients = 3\n[faults]\nconnection_drops = 2\n[explore]\nschedules = 200\n",
    );
    assert_eq!(zk(&["check", &path, "-q"]).exit, Exit::Ok);
}

// --- output and friction --------------------------------------------------

/// A writer whose reader went away.
struct ClosedPipe;
impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
}

#[test]
fn a_closed_stdout_ends_quietly_with_the_verdict() {
    let path = shipped("lock-sequential.toml");
    let mut err = Vec::new();
    let argv = ["zkcheck", "check", &path, "--schedules", "20", "-q"];
    assert_eq!(run(argv, &mut ClosedPipe, &mut err), Exit::Ok);
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    let nofaults = shipped("seeds/apache-writelock-nofaults.toml");
    let argv = ["zkcheck", "check", &nofaults, "-q"];
    assert_eq!(run(argv, &mut ClosedPipe, &mut err), Exit::Violation);
}

#[test]
fn a_hard_violation_is_not_also_listed_as_measured() {
    let r = zk(&[
        "check",
        &shipped("seeds/apache-writelock-nofaults.toml"),
        "-q",
    ]);
    assert_eq!(r.exit, Exit::Violation);
    assert!(
        !r.out.contains("measured (not failing) violations: mutex"),
        "{}",
        r.out
    );
}

#[test]
fn compare_sorts_and_dedups_client_counts_and_refuses_a_file_as_report_dir() {
    let r = zk(&["compare", "--clients", "16,4,4,2,8", "--seeds", "1", "-q"]);
    assert_eq!(r.exit, Exit::Ok, "{}", r.err);
    let naive: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with("| naive |"))
        .collect();
    let counts: Vec<&str> = naive
        .iter()
        .map(|l| l.split('|').nth(2).unwrap().trim())
        .collect();
    assert_eq!(counts, ["2", "4", "8", "16"]);
    let not_a_dir = file("report-file.md", "x");
    assert_bad(
        &zk(&[
            "compare",
            "--clients",
            "2",
            "--seeds",
            "1",
            "--report",
            &not_a_dir,
        ]),
        &["is not a directory"],
    );
    let help = zk(&["compare", "--help"]);
    assert_eq!(help.exit, Exit::Ok);
    assert!(
        help.out.contains("[default: 2,4,8,16,32,64]"),
        "{}",
        help.out
    );
}

#[test]
fn usage_errors_are_bad_input_and_help_is_ok() {
    assert_eq!(zk(&["--help"]).exit, Exit::Ok);
    assert_eq!(zk(&["--version"]).exit, Exit::Ok);
    assert_bad(&zk(&["frobnicate"]), &["frobnicate"]);
    assert_bad(&zk(&[]), &["Usage"]);
}

// --- signals, time limit and progress need a real process ----------------

fn binary(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zkcheck"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

#[test]
fn sigterm_stops_cleanly_with_the_summary_so_far() {
    let path = shipped("lock-sequential.toml");
    let child = binary(&["check", &path, "--schedules", "100000000", "--jobs", "1"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("interrupted"), "{out}");
    assert!(out.contains("schedules: "), "{out}");
}

#[test]
fn a_time_limit_ends_with_the_summary_and_progress_lines_reach_a_non_terminal() {
    let path = shipped("lock-sequential.toml");
    let o = binary(&[
        "check",
        &path,
        "--schedules",
        "100000000",
        "--time-limit",
        "6",
    ])
    .output()
    .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("the time limit of 6s was reached"), "{out}");
    assert!(
        err.contains("progress: "),
        "a line every 5 s on a pipe: {err}"
    );
    let quiet = binary(&["check", &path, "--schedules", "10", "--quiet"])
        .output()
        .unwrap();
    assert!(quiet.stderr.is_empty());
}
