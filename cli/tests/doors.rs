//! Refused at every door (issue 35, items 3, 4, 5, 7, 8 and 13; issue 36,
//! item 1), each both ways through the command or the library a user
//! reaches: the bad input refused (exit 2) with what is wrong and where,
//! its good neighbour run. The rules' own tests are next to them in
//! `checker/src/scenario/` and `checker/src/input.rs`.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_kit::{write_input, zk, Ran};
use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkcheck_cli::command::Exit;
use zkrecipes::{AppEvent, Family, Recipe, RecipeParams};
use zksim::{Client, Cx, OpId, Reply, SessionEvent, WatchedEvent};

fn file(name: &str, text: &str) -> String {
    write_input("doors", name, text)
}

#[track_caller]
fn assert_bad(r: &Ran, needles: &[&str]) {
    assert_eq!(r.exit, Exit::BadInput, "out: {}\nerr: {}", r.out, r.err);
    for n in needles {
        assert!(r.err.contains(n), "expected {n:?} in: {}", r.err);
    }
}

#[track_caller]
fn assert_runs(r: &Ran) {
    assert_ne!(r.exit, Exit::BadInput, "out: {}\nerr: {}", r.out, r.err);
}

fn binary(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zkcheck"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Wait for `child` at most `limit`; kill it and fail past that.
fn wait_bounded(mut child: Child, limit: Duration) -> std::process::Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("the command did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

// --- 35.3: groups keep the limits ------------------------------------------

const GROUPS: &str = r#"name = "g"
[[clients]]
recipe = "sequential-no-recheck"
count = 3
workload = { rounds = 1 }
[checks]
hard = ["mutex"]
"#;

#[test]
fn doors_a_group_out_of_range_is_refused_with_its_line() {
    for (to, needle) in [
        (
            "rounds = 0",
            "g.toml:5:23: [[clients]] group 1: `workload.rounds` = 0",
        ),
        ("rounds = 1000000000", "`workload.rounds` = 1000000000"),
        (
            "hold_ticks = 1000000000",
            "`workload.hold_ticks` = 1000000000",
        ),
    ] {
        let path = file("g.toml", &GROUPS.replace("rounds = 1", to));
        assert_bad(&zk(&["check", &path]), &[needle]);
    }
    let path = file("g-ok.toml", GROUPS);
    assert_runs(&zk(&["check", &path, "--schedules", "5", "--quiet"]));
}

// --- 35.4: aims at roles the recipe plays -------------------------------------

const AIMED: &str = r#"name = "a"
recipe = "sequential-no-recheck"
clients = 3
[faults]
expiries = 1
[faults.aim]
expiries = "holder"
[checks]
hard = ["mutex"]
"#;

#[test]
fn doors_a_fault_aimed_at_a_role_never_played_is_refused() {
    let path = file("a.toml", &AIMED.replace("\"holder\"", "\"leader\""));
    assert_bad(
        &zk(&["check", &path]),
        &[
            "a.toml:7:12: `faults.aim.expiries` = \"leader\"",
            "never plays",
            "holder, waiter, releaser, queued",
        ],
    );
    let path = file("a-ok.toml", AIMED);
    assert_runs(&zk(&["check", &path, "--schedules", "5", "--quiet"]));
}

// --- 35.5: hard checks that cannot fail -----------------------------------

#[test]
fn doors_hard_checks_that_cannot_fail_are_refused_naming_why() {
    let text = |recipe: &str, clients: usize, hard: &str| {
        format!(
            "name = \"c\"\nrecipe = \"{recipe}\"\nclients = {clients}\n[checks]\nhard = [{hard}]\n"
        )
    };
    for (recipe, clients, hard, needle) in [
        ("naive", 3, "\"fifo\"", "`naive` never waits in a line"),
        (
            "sequential",
            1,
            "\"mutex\"",
            "`mutex` needs at least 2 clients",
        ),
        (
            "sequential",
            1,
            "\"fifo\"",
            "`fifo` needs at least 2 clients",
        ),
        (
            "sequential",
            1,
            "\"herd\"",
            "`herd` needs at least 3 clients",
        ),
        (
            "sequential",
            2,
            "\"herd\"",
            "`herd` needs at least 3 clients",
        ),
    ] {
        let path = file("c.toml", &text(recipe, clients, hard));
        assert_bad(&zk(&["check", &path]), &["c.toml:5:9: ", needle]);
    }
    for (recipe, clients, hard) in [
        ("naive", 3, "\"herd\""),
        ("sequential", 2, "\"fifo\""),
        ("sequential", 3, "\"herd\""),
    ] {
        let path = file("c-ok.toml", &text(recipe, clients, hard));
        assert_runs(&zk(&["check", &path, "--schedules", "5", "--quiet"]));
    }
}

// --- 36.1: the library's door ----------------------------------------------

/// A user's election in which every candidate leads at once: two leaders
/// in the first step of every schedule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Candidate {
    leads: bool,
    started: bool,
}

impl Client for Candidate {
    type Event = AppEvent;
    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.started = true;
        if self.leads {
            cx.emit(AppEvent::Elected);
        }
    }
    fn on_reply(&mut self, _: OpId, _: Reply, _: &mut Cx<AppEvent>) {}
    fn on_watch(&mut self, _: WatchedEvent, _: &mut Cx<AppEvent>) {}
    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {}
    fn on_timer(&mut self, _: &mut Cx<AppEvent>) {}
    fn is_done(&self) -> bool {
        self.started
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EveryoneLeads(Candidate);
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FirstLeads(Candidate);

macro_rules! candidate_recipe {
    ($name:ident, |$p:ident| $leads:expr) => {
        impl Recipe for $name {
            const FAMILY: Family = Family::Election;
            fn new($p: &RecipeParams) -> Self {
                $name(Candidate {
                    leads: $leads,
                    started: false,
                })
            }
        }
        impl Client for $name {
            type Event = AppEvent;
            fn start(&mut self, cx: &mut Cx<AppEvent>) {
                self.0.start(cx)
            }
            fn on_reply(&mut self, op: OpId, r: Reply, cx: &mut Cx<AppEvent>) {
                self.0.on_reply(op, r, cx)
            }
            fn on_watch(&mut self, e: WatchedEvent, cx: &mut Cx<AppEvent>) {
                self.0.on_watch(e, cx)
            }
            fn on_session(&mut self, e: SessionEvent, cx: &mut Cx<AppEvent>) {
                self.0.on_session(e, cx)
            }
            fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
                self.0.on_timer(cx)
            }
            fn is_done(&self) -> bool {
                self.0.is_done()
            }
        }
    };
}
candidate_recipe!(EveryoneLeads, |_p| true);
candidate_recipe!(FirstLeads, |p| p.client == 0);

/// The panic message of `f`, which must panic.
fn panic_of(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).expect_err("refused with a panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn doors_check_new_judges_an_elections_family_by_default() {
    // The old false "ok": two leaders, no hard check. Now `election` is
    // judged from `Check::new` on, and the bug is caught.
    let c = Check::<EveryoneLeads>::new(3).random(20).assert_fails();
    assert_eq!(c.property(), Property::Election);
    // Its twin holds.
    Check::<FirstLeads>::new(3).random(20).assert_holds();
    // Emptied, or left with a check that cannot fail: refused, naming why.
    let e = panic_of(|| {
        Check::<EveryoneLeads>::new(3)
            .hard([])
            .random(20)
            .assert_holds();
    });
    assert!(e.contains("`checks.hard` is empty"), "{e}");
    let e = panic_of(|| {
        Check::<zkrecipes::lock::NaiveLock>::new(3)
            .hard([Property::Fifo])
            .random(20)
            .assert_holds();
    });
    assert!(e.contains("never waits in a line"), "{e}");
    let e = panic_of(|| {
        Check::<zkrecipes::lock::SequentialLock>::new(1)
            .random(20)
            .assert_holds();
    });
    assert!(e.contains("`mutex` needs at least 2 clients"), "{e}");
    // A user's invariant alone is a check that can fail; its token (which
    // carries no code) replays with the invariant given back, and is
    // refused without it, at the library's door and the command's.
    let c = Check::<FirstLeads>::new(3)
        .hard([])
        .always("an-invariant-that-breaks", |_| false)
        .random(5)
        .assert_fails();
    let token = c.token.expect("a token");
    Check::<FirstLeads>::replay(&token)
        .always("an-invariant-that-breaks", |_| false)
        .assert_fails();
    let e = panic_of(|| {
        Check::<FirstLeads>::replay(&token).assert_holds();
    });
    assert!(e.contains("`checks.hard` is empty"), "{e}");
    let e = zkcheck::token::Token::decode_as::<FirstLeads>(&token)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`checks.hard` is empty"), "{e}");
}

// --- 35.7: two SIGTERMs microseconds apart ----------------------------------

#[test]
fn doors_two_sigterms_at_once_keep_the_summary_and_the_json() {
    let path = format!(
        "{}/../scenarios/lock-sequential.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let child = binary(&[
        "check",
        &path,
        "--schedules",
        "100000000",
        "--jobs",
        "1",
        "--json",
        "--quiet",
    ])
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // What GNU `timeout` does: two SIGTERMs, microseconds apart.
    let pid = child.id().to_string();
    let killed = Command::new("sh")
        .args(["-c", &format!("kill -TERM {pid}; kill -TERM {pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = wait_bounded(child, Duration::from_secs(30));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "out: {out}\nerr: {err}");
    assert!(out.contains("\"verdict\":\"incomplete\""), "{out}");
    assert!(err.contains("interrupted"), "{err}");
}

#[test]
fn doors_gnu_timeout_keeps_the_result() {
    let path = format!(
        "{}/../scenarios/lock-sequential.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut c = Command::new("timeout");
    c.args(["--preserve-status", "-s", "TERM", "2"])
        .arg(env!("CARGO_BIN_EXE_zkcheck"))
        .args([
            "check",
            &path,
            "--schedules",
            "100000000",
            "--json",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let Ok(child) = c.spawn() else {
        panic!("GNU timeout (coreutils) is needed for this test");
    };
    let o = wait_bounded(child, Duration::from_secs(30));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("\"verdict\":\"incomplete\""), "{out}");
}

// --- 35.8: bounded reading of every input -----------------------------------

#[test]
fn doors_devices_are_refused_at_once_for_every_input() {
    let started = Instant::now();
    assert_bad(
        &zk(&["check", "/dev/zero"]),
        &["/dev/zero: cannot read scenario file: it is a character device"],
    );
    assert_bad(&zk(&["check", "/dev/urandom"]), &["character device"]);
    assert_bad(
        &zk(&["compare", "--timing", "/dev/zero", "--seeds", "1"]),
        &["/dev/zero: cannot read timing file"],
    );
    assert_bad(
        &zk(&["merge", "/dev/zero"]),
        &["/dev/zero: cannot read shard file: it is a character device"],
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn doors_an_endless_standard_input_is_cut_at_its_limit() {
    let mut child = binary(&["merge", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // `yes | zkcheck merge -`: write until the command stops reading.
    let writer = std::thread::spawn(move || {
        let chunk = "y\n".repeat(1 << 15);
        while stdin.write_all(chunk.as_bytes()).is_ok() {}
    });
    let o = wait_bounded(child, Duration::from_secs(30));
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`shard file` = more than 67108864 bytes is out of range"),
        "{err}"
    );
}

#[test]
fn doors_a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doors");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("scenario.fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo = fifo.to_string_lossy().into_owned();
    for args in [vec!["check", &fifo], vec!["merge", &fifo]] {
        let child = binary(&args).spawn().unwrap();
        let o = wait_bounded(child, Duration::from_secs(20));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("it is a FIFO (named pipe), not a regular file"),
            "{err}"
        );
        assert!(err.contains("`-`"), "{err}");
    }
}

#[test]
fn doors_a_scenario_piped_in_as_dash_runs() {
    let text = std::fs::read_to_string(format!(
        "{}/../scenarios/lock-sequential-small.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut child = binary(&["check", "-", "--schedules", "5", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = wait_bounded(child, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("ok"), "{out}");
}

// --- 35.13: names, roots, counters, bytes -----------------------------------

#[test]
fn doors_control_characters_are_refused_and_printed_escaped() {
    let path = file(
        "n.toml",
        "name = \"x\\u001b[2Jok\"\nrecipe = \"sequential\"\nclients = 2\n",
    );
    let r = zk(&["check", &path]);
    assert_bad(
        &r,
        &["n.toml:1:1: `name` = \"x\\u{1b}[2Jok\" holds a control character"],
    );
    assert!(!r.err.contains('\u{1b}'), "printed raw: {:?}", r.err);
    let path = file(
        "n-ok.toml",
        "name = \"x ünï\"\nrecipe = \"sequential\"\nclients = 2\n",
    );
    assert_runs(&zk(&["check", &path, "--schedules", "3", "--quiet"]));
}

#[test]
fn doors_invalid_utf8_is_located() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doors");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("utf8.toml");
    std::fs::write(
        &path,
        b"name = \"t\"\nrecipe = \"seq\xffuential\"\nclients = 2\n",
    )
    .unwrap();
    let path = path.to_string_lossy().into_owned();
    assert_bad(
        &zk(&["check", &path]),
        &["utf8.toml:2:14: invalid UTF-8 at byte 24 (0xff)"],
    );
}

// --- merge: a result that judged nothing -------------------------------------

#[test]
fn doors_merge_refuses_results_that_judged_nothing() {
    let path = format!(
        "{}/../scenarios/lock-sequential-small.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let shards: Vec<String> = ["0/2", "1/2"]
        .iter()
        .map(|k| {
            let r = zk(&[
                "check",
                &path,
                "--json",
                "--quiet",
                "--strategy",
                "random",
                "--schedules",
                "6",
                "--shard",
                k,
            ]);
            assert_eq!(r.exit, Exit::Ok, "{}", r.err);
            r.out.trim().to_string()
        })
        .collect();
    let files = |texts: &[String], tag: &str| -> Vec<String> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| file(&format!("{tag}-{i}.json"), t))
            .collect()
    };
    let good = files(&shards, "good");
    let r = zk(&["merge", &good[0], &good[1]]);
    assert_eq!(r.exit, Exit::Ok, "{}", r.err);
    let emptied: Vec<String> = shards
        .iter()
        .map(|t| t.replacen("\"hard\":[\"mutex\",\"fenced-mutex\"]", "\"hard\":[]", 1))
        .collect();
    assert_ne!(emptied, shards);
    let bad = files(&emptied, "emptied");
    assert_bad(
        &zk(&["merge", &bad[0], &bad[1]]),
        &["`scenario.hard` is empty"],
    );
    let one = [shards[0].clone(), emptied[1].clone()];
    let bad = files(&one, "one-emptied");
    assert_bad(&zk(&["merge", &bad[0], &bad[1]]), &["was a result edited?"]);
}
