//! Issue 32's acceptance: unmodified kazoo and Curator apps run many times
//! against `zkcheck serve --runs N` with faults the server injects from
//! its seeded plan, every run's history judged — each app both ways (the
//! correct one holds on every run, its buggy twin is caught).
//!
//! The runs go through the front end in process (`zkcheck_cli::command::run`,
//! exactly what the binary does) with a fast tick (`--tick-ms 50`: session
//! timeouts of 100 ms to 1 s, so an expiry costs about a second) and read
//! back `runs.jsonl`, one line per run with its judges' report. The run
//! counts, and why they are what they are, are in docs/RUNS.md
//! ("Acceptance"): the counts where CI's time allows.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use zkapps::{require, AppCommand, Curator, Kazoo};
use zkcheck_cli::command::Exit;

/// serve's tick in these runs: ZooKeeper's [2, 20]-tick clamp grants the
/// apps' 1 s session timeouts as asked, so an expired session is noticed
/// (SUSPENDED at ~2/3) and expired (LOST) within about a second.
const TICK_MS: &str = "50";
/// The apps' session timeout.
const SESSION_MS: &str = "1000";

/// One `zkcheck serve --runs` invocation, and what it printed and wrote.
struct Runs {
    exit: Exit,
    stdout: String,
    stderr: String,
    /// `runs.jsonl`: one object per run.
    lines: Vec<Value>,
}

impl Runs {
    /// Run `app` (its connect string argument being `{connect}`) `runs`
    /// times from `seed` with `flags` (faults, aim, judge paths).
    fn go(name: &str, app: &AppCommand, runs: u64, seed: u64, flags: &[&str]) -> Runs {
        let out = out_dir(name);
        let mut args: Vec<String> = ["zkcheck", "serve", "--tick-ms", TICK_MS, "--quiet"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--runs".into(), runs.to_string()]);
        args.extend(["--seed".into(), seed.to_string()]);
        args.extend(["--out".into(), out.display().to_string()]);
        args.extend(["--run-timeout".into(), "60".into()]);
        args.extend(flags.iter().map(|s| s.to_string()));
        args.push("--".into());
        args.push(app.program.display().to_string());
        args.extend(app.args.iter().cloned());
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let started = Instant::now();
        let exit = zkcheck_cli::command::run(&args, &mut stdout, &mut stderr);
        let secs = started.elapsed().as_secs_f64();
        let text = std::fs::read_to_string(out.join("runs.jsonl")).unwrap_or_default();
        let lines = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("runs.jsonl holds JSON lines"))
            .collect();
        let runs = Runs {
            exit,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            lines,
        };
        eprintln!(
            "{name}: {} runs in {:.1} s ({:.1} runs/min), exit {:?}, {} violating",
            runs.lines.len(),
            secs,
            runs.lines.len() as f64 * 60.0 / secs.max(0.001),
            runs.exit,
            runs.violating(None)
        );
        runs
    }

    /// Runs whose outcome is a violation (found by `judge`, if named).
    fn violating(&self, judge: Option<&str>) -> usize {
        self.lines
            .iter()
            .filter(|l| l["outcome"] == "violation")
            .filter(|l| {
                judge.is_none_or(|j| {
                    l["violated"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|x| x == j))
                })
            })
            .count()
    }

    fn story(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.exit, self.stdout, self.stderr
        )
    }

    /// Every run complete and every judge held.
    fn assert_all_ok(&self, runs: usize) {
        assert_eq!(self.lines.len(), runs, "{}", self.story());
        let bad: Vec<&Value> = self.lines.iter().filter(|l| l["outcome"] != "ok").collect();
        assert!(
            bad.is_empty(),
            "{} runs not ok: {bad:#?}\n{}",
            bad.len(),
            self.story()
        );
        assert_eq!(self.exit, Exit::Ok, "{}", self.story());
    }

    /// No run violated any judge, and at least `complete` of `runs` ran to
    /// their end (the rest incomplete, which the runner never calls ok).
    fn assert_no_violation_and_mostly_complete(&self, runs: usize, complete: usize) {
        assert_eq!(self.lines.len(), runs, "{}", self.story());
        assert_eq!(self.violating(None), 0, "{}", self.story());
        let ok = self.lines.iter().filter(|l| l["outcome"] == "ok").count();
        assert!(
            ok >= complete,
            "{ok} of {runs} runs complete\n{}",
            self.story()
        );
        let expected = if ok == runs {
            Exit::Ok
        } else {
            Exit::Incomplete
        };
        assert_eq!(self.exit, expected, "{}", self.story());
    }

    /// A violation found by `judge`; the runner stopped at it.
    fn assert_caught(&self, judge: &str) {
        assert_eq!(self.exit, Exit::Violation, "{}", self.story());
        assert!(self.violating(Some(judge)) >= 1, "{}", self.story());
        assert!(
            self.stdout.contains("first violation: seed"),
            "{}",
            self.story()
        );
    }

    /// The first violating run's verdict of `judge`: its summary and story.
    fn first_story(&self, judge: &str) -> String {
        let verdict = self
            .lines
            .iter()
            .filter(|l| l["outcome"] == "violation")
            .filter_map(|l| l["report"]["verdicts"].as_array())
            .flatten()
            .find(|v| v["judge"] == judge && v["status"] == "violation")
            .unwrap_or_else(|| panic!("no {judge} violation\n{}", self.story()));
        let mut text = verdict["summary"].as_str().unwrap_or("").to_string();
        for line in verdict["story"].as_array().into_iter().flatten() {
            text.push_str("\n  - ");
            text.push_str(line.as_str().unwrap_or(""));
        }
        text
    }

    /// The first violating run's history, offline: `zkcheck judge` gives
    /// the report the runner gave live, bit for bit, and `zkcheck serve
    /// --replay-input` re-runs the server from its inputs to the same trace.
    fn assert_rejudged_and_replayed(&self, judge_flags: &[&str]) {
        let line = self
            .lines
            .iter()
            .find(|l| l["outcome"] == "violation")
            .unwrap_or_else(|| panic!("no violating run\n{}", self.story()));
        let history = line["history"].as_str().expect("a run names its history");
        let mut argv = vec!["zkcheck", "judge", history, "--json"];
        argv.extend_from_slice(judge_flags);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = zkcheck_cli::command::run(argv, &mut out, &mut err);
        assert_eq!(exit, Exit::Violation, "{}", String::from_utf8_lossy(&err));
        let offline: Value = serde_json::from_slice(&out).expect("judge --json prints JSON");
        assert_eq!(offline, line["report"], "offline and live verdicts differ");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let argv = ["zkcheck", "serve", "--replay-input", history];
        let exit = zkcheck_cli::command::run(argv, &mut out, &mut err);
        // serve says its own exit code (`Exit::Code`): 0 when the replay
        // reached the recorded trace hash, 1 when it did not.
        assert_eq!(
            exit,
            Exit::Code(std::process::ExitCode::SUCCESS),
            "{}{}",
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err)
        );
    }

    /// A figure of `judge` in each run's report.
    fn figures(&self, judge: &str, figure: &str) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|l| {
                let verdicts = l["report"]["verdicts"].as_array()?;
                let v = verdicts.iter().find(|v| v["judge"] == judge)?;
                let pair = v["figures"].as_array()?.iter().find(|f| f[0] == figure)?;
                Some(pair[1].as_str()?.to_string())
            })
            .collect()
    }
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("acceptance-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn kazoo(script: &str, args: &[&str]) -> Option<AppCommand> {
    let kazoo = require(Kazoo::find())?;
    Some(
        kazoo
            .app(script, "{connect}")
            .args(["--session-timeout-ms", SESSION_MS])
            .args(args.iter().copied()),
    )
}

fn curator(class: &str, args: &[&str]) -> Option<AppCommand> {
    let curator = require(Curator::find(Path::new(env!("CARGO_TARGET_TMPDIR"))))?;
    Some(
        curator
            .app(class, "{connect}")
            .args(["--session-timeout-ms", SESSION_MS])
            .args(args.iter().copied()),
    )
}

const LOCK: [&str; 4] = ["--lock", "/L", "--resource", "/R"];

// kazoo `Lock`: 5 workers × 20 version-checked increments of /R.

#[test]
fn kazoo_lock_stopping_work_on_suspended_and_lost_holds_under_drops_and_an_expiry() {
    let Some(app) = kazoo("lock.py", &["--threads", "5", "--increments", "20"]) else {
        return;
    };
    let runs = 50;
    let r = Runs::go(
        "kazoo-lock",
        &app,
        runs,
        0,
        &[&["--faults", "drops=2,expiries=1"], &LOCK[..]].concat(),
    );
    r.assert_all_ok(runs as usize);
}

#[test]
fn kazoo_lock_ignoring_lost_writes_without_the_lock_within_20_runs() {
    let Some(app) = kazoo(
        "lock.py",
        &["--threads", "5", "--increments", "20", "--ignore-lost"],
    ) else {
        return;
    };
    let r = Runs::go(
        "kazoo-lock-ignoring-lost",
        &app,
        20,
        0,
        &[
            &[
                "--faults",
                "drops=2,expiries=1",
                "--aim",
                "/R",
                "--until-violation",
            ],
            &LOCK[..],
        ]
        .concat(),
    );
    r.assert_caught("owner-writes");
    // The story names the writer's session and the expiry before it.
    let story = r.first_story("owner-writes");
    let writer = story
        .split_whitespace()
        .nth(1)
        .filter(|w| w.starts_with("0x"))
        .unwrap_or_else(|| panic!("the summary names the writer first:\n{story}"));
    assert!(
        story.contains(&format!("session {writer} wrote /R")),
        "{story}"
    );
    assert!(story.contains("expired at zxid"), "{story}");
    r.assert_rejudged_and_replayed(&LOCK);
}

/// The skip-predecessor twin's faults (why so many: in the test below).
const MANY_DROPS: [&str; 4] = ["--faults", "drops=16,within=100", "--aim", "/L"];

#[test]
fn kazoo_lock_holds_under_the_skip_predecessor_twins_drops() {
    // The twin's correct sibling, kazoo's own `Lock`, on the very faults
    // that catch the twin.
    let Some(app) = kazoo("lock.py", &["--threads", "5", "--increments", "20"]) else {
        return;
    };
    let runs = 10;
    let r = Runs::go(
        "kazoo-lock-many-drops",
        &app,
        runs,
        0,
        &[&MANY_DROPS[..], &LOCK[..]].concat(),
    );
    r.assert_all_ok(runs as usize);
}

#[test]
fn kazoo_lock_skipping_the_predecessor_check_is_flagged_within_20_runs() {
    let Some(app) = kazoo(
        "lock.py",
        &[
            "--threads",
            "5",
            "--increments",
            "20",
            "--recipe",
            "skip-predecessor",
        ],
    ) else {
        return;
    };
    // The twin trusts any wake-up, and kazoo wakes a waiter on its own
    // connection's SUSPENDED: the bug shows when a drop closes a waiter's
    // connection just after the reply to its `get(predecessor, watch)` —
    // one /L request in four or five, one side in two. With 2 drops 4 of
    // 20 runs were caught (a CI run once went 20 without), with 16 among
    // the first 100 /L requests 15 of 20 (docs/RUNS.md, "Acceptance").
    let r = Runs::go(
        "kazoo-skip-predecessor",
        &app,
        20,
        0,
        &[&MANY_DROPS[..], &["--until-violation"], &LOCK[..]].concat(),
    );
    r.assert_caught("owner-writes");
    // The two owners — whose the lock was, and the writer — and /L's
    // children just before the write.
    let story = r.first_story("owner-writes");
    assert!(story.contains("/L's contenders at zxid"), "{story}");
    assert!(story.contains("the lock was session 0x"), "{story}");
    assert!(story.contains("__lock__"), "{story}");
}

// Curator `InterProcessMutex`: with a connection-state listener, and without.

#[test]
fn curator_mutex_with_a_connection_state_listener_holds_under_drops_and_an_expiry() {
    let Some(app) = curator("CuratorMutex", &["--threads", "5", "--increments", "20"]) else {
        return;
    };
    let runs = 20;
    let r = Runs::go(
        "curator-mutex",
        &app,
        runs,
        0,
        &[&["--faults", "drops=2,expiries=1"], &LOCK[..]].concat(),
    );
    // As with LeaderLatch below: on a loaded CI machine a run was seen to
    // end by the app's own 30 s deadline (exit 1), which the runner calls
    // incomplete, never ok. The claim is no violation in any run, and
    // nearly every run complete.
    r.assert_no_violation_and_mostly_complete(runs as usize, runs as usize - 2);
}

#[test]
fn curator_mutex_without_the_listener_is_flagged_under_an_expiry() {
    let Some(app) = curator(
        "CuratorMutex",
        &["--threads", "5", "--increments", "20", "--ignore-lost"],
    ) else {
        return;
    };
    let r = Runs::go(
        "curator-mutex-ignoring-lost",
        &app,
        20,
        0,
        &[
            &["--faults", "expiries=1", "--aim", "/R", "--until-violation"],
            &LOCK[..],
        ]
        .concat(),
    );
    r.assert_caught("owner-writes");
}

// Elections: 3 candidates, the leader writing the resource while leading.

const ELECTION: [&str; 4] = ["--leader", "/E", "--resource", "/W"];
/// 3 candidates on /E, a term being 5 writes of /W `hold_ms` apart.
fn candidates(hold_ms: &'static str) -> [&'static str; 10] {
    [
        "--candidates",
        "3",
        "--path",
        "/E",
        "--resource",
        "/W",
        "--writes",
        "5",
        "--hold-ms",
        hold_ms,
    ]
}
/// The careful candidates' terms: 5 writes 20 ms apart.
const HOLD_MS: &str = "20";

/// The election twins' runs: the expiry silences the first leader within
/// its first four requests under /W, and each term lasts 1.5 s (5 writes
/// 300 ms apart). Why: the twin is caught only if its write on the session
/// that replaced the expired one comes while another candidate still
/// stands in /E — once the others have resigned, its new latch node is the
/// lowest and the write is a leader's. A client hears of the expiry only
/// when it reconnects (Curator 0.7 s after the server expired the session,
/// kazoo 0.05 s, in two runs looked at); with 20 ms terms Curator's
/// `LeaderLatch` twin was caught in 5 of 20 runs here and in none of 20 on
/// a faster CI machine, with these in 20 of 20 (docs/RUNS.md,
/// "Acceptance").
const TWIN_HOLD_MS: &str = "300";
const TWIN_EXPIRY: [&str; 4] = ["--faults", "expiries=1,within=4", "--aim", "/W"];

#[test]
fn kazoo_election_never_has_two_leaders_acting_under_drops_and_an_expiry() {
    let Some(app) = kazoo("election.py", &candidates(HOLD_MS)) else {
        return;
    };
    let runs = 20;
    let r = Runs::go(
        "kazoo-election",
        &app,
        runs,
        0,
        &[&["--faults", "drops=2,expiries=1"], &ELECTION[..]].concat(),
    );
    r.assert_all_ok(runs as usize);
}

#[test]
fn kazoo_election_leader_ignoring_lost_is_caught_acting_beside_the_next() {
    let Some(app) = kazoo(
        "election.py",
        &[&candidates(TWIN_HOLD_MS)[..], &["--ignore-lost"]].concat(),
    ) else {
        return;
    };
    let r = Runs::go(
        "kazoo-election-ignoring-lost",
        &app,
        20,
        0,
        &[&TWIN_EXPIRY[..], &["--until-violation"], &ELECTION[..]].concat(),
    );
    r.assert_caught("election-safety");
}

#[test]
fn curator_leader_latch_never_has_two_leaders_acting_under_drops_and_an_expiry() {
    let Some(app) = curator("CuratorLeader", &candidates(HOLD_MS)) else {
        return;
    };
    let runs = 10;
    let r = Runs::go(
        "curator-leader",
        &app,
        runs,
        0,
        &[&["--faults", "drops=2,expiries=1"], &ELECTION[..]].concat(),
    );
    // On a loaded CI machine one run in ten was seen to end by the app's
    // own 30 s deadline (a candidate LOST, RECONNECTED, not yet leader):
    // the runner calls it incomplete, never ok. The claim here is the
    // issue's: no run has two leaders acting, and nearly every run ends.
    r.assert_no_violation_and_mostly_complete(runs as usize, runs as usize - 2);
}

#[test]
fn curator_leader_latch_ignoring_lost_is_caught_acting_beside_the_next() {
    let Some(app) = curator(
        "CuratorLeader",
        &[&candidates(TWIN_HOLD_MS)[..], &["--ignore-lost"]].concat(),
    ) else {
        return;
    };
    let r = Runs::go(
        "curator-leader-ignoring-lost",
        &app,
        20,
        0,
        &[&TWIN_EXPIRY[..], &["--until-violation"], &ELECTION[..]].concat(),
    );
    r.assert_caught("election-safety");
}

#[test]
fn careful_leaders_hold_in_the_ignoring_lost_twins_runs() {
    // The twins' correct siblings on the very faults and terms that catch
    // the twins: the expiry early in the first term, 300 ms between writes.
    let careful = candidates(TWIN_HOLD_MS);
    let (Some(kazoo_app), Some(curator_app)) = (
        kazoo("election.py", &careful),
        curator("CuratorLeader", &careful),
    ) else {
        return;
    };
    let runs = 5;
    let flags = [&TWIN_EXPIRY[..], &ELECTION[..]].concat();
    for (name, app) in [
        ("kazoo-election-twin-runs", kazoo_app),
        ("curator-leader-twin-runs", curator_app),
    ] {
        let r = Runs::go(name, &app, runs, 0, &flags);
        // As for the careful leaders above: no violation, nearly every run
        // complete (an app may end by its own deadline: incomplete).
        r.assert_no_violation_and_mostly_complete(runs as usize, runs as usize - 1);
    }
}

// Queues: consumers report each item as /R/<item>.

/// kazoo's `Queue` keeps its items under /Q, `LockingQueue` under /Q/entries.
const QUEUE: [&str; 4] = ["--queue", "/Q", "--resource", "/R"];
const LOCKING_QUEUE: [&str; 4] = ["--queue", "/Q/entries", "--resource", "/R"];
/// Drops spread over the first 90 requests under /Q: the producer's 20
/// puts, then the consumers' reads and deletes.
const QUEUE_DROPS: [&str; 4] = ["--faults", "drops=8,within=90", "--aim", "/Q"];

#[test]
fn kazoo_queue_loses_an_item_under_drops() {
    let Some(app) = kazoo("work_queue.py", &["--recipe", "queue", "--items", "20"]) else {
        return;
    };
    let r = Runs::go(
        "kazoo-queue",
        &app,
        20,
        0,
        &[&QUEUE_DROPS[..], &["--until-violation"], &QUEUE[..]].concat(),
    );
    r.assert_caught("queue");
}

#[test]
fn kazoo_locking_queue_loses_nothing_under_drops() {
    let Some(app) = kazoo("work_queue.py", &["--recipe", "locking", "--items", "20"]) else {
        return;
    };
    let runs = 20;
    let r = Runs::go(
        "kazoo-locking-queue",
        &app,
        runs,
        0,
        &[&QUEUE_DROPS[..], &LOCKING_QUEUE[..]].concat(),
    );
    r.assert_all_ok(runs as usize);
}

// The herd: 16 clients, one increment each.

#[test]
fn herd_kazoo_lock_wakes_one_waiter_per_release_the_naive_lock_all() {
    let herd = |recipe: &str| {
        let app = kazoo(
            "lock.py",
            &[
                "--threads",
                "16",
                "--increments",
                "1",
                "--hold-ms",
                "200",
                "--recipe",
                recipe,
            ],
        )?;
        Some(Runs::go(&format!("herd-{recipe}"), &app, 1, 0, &LOCK))
    };
    let (Some(kazoo_lock), Some(naive)) = (herd("kazoo"), herd("naive")) else {
        return;
    };
    kazoo_lock.assert_all_ok(1);
    naive.assert_caught("herd");
    // The naive lock is a correct mutex: its plain /L/lock makes its
    // creator the owner, so the herd is all the judges find.
    assert_eq!(
        naive.lines[0]["violated"],
        serde_json::json!(["herd"]),
        "{}",
        naive.story()
    );
    let max = |r: &Runs| r.figures("herd", "notifications per release (max)");
    assert_eq!(max(&kazoo_lock), ["1"], "{}", kazoo_lock.story());
    assert_eq!(max(&naive), ["15"], "{}", naive.story());
}

// The runner itself, with no client library: what is never ok.

fn zkcheck(args: &[&str]) -> (Exit, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["zkcheck", "serve"];
    argv.extend_from_slice(args);
    let exit = zkcheck_cli::command::run(argv, &mut out, &mut err);
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (exit, text(out), text(err))
}

#[cfg(unix)]
#[test]
fn runs_refuse_a_command_without_connect_and_never_call_a_failed_or_idle_app_ok() {
    let (exit, _, err) = zkcheck(&["--runs", "1", "--", "sh", "-c", "exit 0"]);
    assert_eq!(exit, Exit::BadInput, "{err}");
    assert!(err.contains("{connect}"), "{err}");
    let (exit, _, err) = zkcheck(&["--runs", "0", "--", "sh", "{connect}"]);
    assert_eq!(exit, Exit::BadInput, "{err}");
    let (exit, _, err) = zkcheck(&["--", "sh", "{connect}"]);
    assert_eq!(exit, Exit::BadInput, "{err}");
    for (name, script, why) in [
        ("crash", "exit 4", "exited with code 4"),
        ("idle", "exit 0", "nothing to judge"),
        ("hang", "exec sleep 30", "was killed"),
    ] {
        let dir = out_dir(&format!("runner-{name}"));
        let dir_arg = dir.display().to_string();
        let (exit, out, err) = zkcheck(&[
            "--runs",
            "2",
            "--tick-ms",
            "50",
            "--run-timeout",
            "1",
            "--quiet",
            "--out",
            &dir_arg,
            "--",
            "sh",
            "-c",
            script,
            "sh",
            "{connect}",
        ]);
        assert_eq!(exit, Exit::Incomplete, "{name}: {out}{err}");
        assert!(
            out.contains("0 ok, 0 violating, 2 incomplete"),
            "{name}: {out}"
        );
        assert!(out.contains(why), "{name}: {out}");
        let lines = std::fs::read_to_string(dir.join("runs.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 2, "{lines}");
        assert!(dir.join("seed-1.jsonl").is_file());
    }
}
