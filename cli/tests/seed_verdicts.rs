//! The seed articles' verdicts, one test per (ported recipe × check) row of
//! `tests/verdicts/table.rs` (the table of `docs/VERDICTS.md`).
//!
//! - A **violated** row must be found by a random sweep from seed 0 within
//!   the row's bound; its shrunk counterexample is replayed through a replay
//!   token and must break the same property with the same explanation.
//! - A **holds** row must survive `CI_SCHEDULES` random schedules with the
//!   scenario's faults in the default run, and 100000 in the `--ignored` run
//!   (`cargo test --release -p zkcheck-cli --test suite seed_verdicts:: -- --ignored`).

use crate::verdicts::table::{self, Expect};
use zkcheck::monitor::Property;
use zkcheck::monitor::Property::*;

/// Schedules per "holds" row in the default (CI) run.
const CI_SCHEDULES: u64 = 300;
/// Schedules per "holds" row in the `--ignored` run.
const FULL_SCHEDULES: u64 = 100_000;

fn assert_violated(file: &str, check: Property) -> table::Found {
    let row = table::row(file, check);
    let recipe = row.recipe;
    let Expect::Violated { within } = row.expect else {
        panic!("{recipe} × {check:?} is not a violated row");
    };
    let scenario = table::scenario(&row);
    let found = table::find(&scenario, within, 2)
        .unwrap_or_else(|| panic!("{recipe} × {check:?}: no violation in {within} schedules"));
    assert_eq!(
        found.violation.property, check,
        "{}",
        found.violation.explanation
    );
    assert!(found.shrunk_steps <= found.raw_steps);
    assert!(found.shrunk_steps > 0);
    assert!(found.token.starts_with("zk1:"));
    assert!(
        found.trace.contains("VIOLATION"),
        "the replayed trace ends with the violation"
    );
    println!(
        "{recipe} × {check:?}: seed {}, {} → {} steps\n{}\nreplay: {}",
        found.seed, found.raw_steps, found.shrunk_steps, found.violation.explanation, found.token
    );
    found
}

fn assert_holds(file: &str, check: Property, schedules: u64) {
    let row = table::row(file, check);
    let recipe = row.recipe;
    assert_eq!(
        row.expect,
        Expect::Holds,
        "{recipe} × {check:?} is not a holds row"
    );
    let scenario = table::scenario(&row);
    let faults = scenario.faults;
    assert!(
        faults.connection_drops
            + faults.expiries
            + faults.pauses
            + faults.crashes
            + faults.partitions
            > 0,
        "a holds row is judged with faults"
    );
    let r = table::sweep(&scenario, schedules, 2);
    assert!(r.failure.is_none(), "{recipe} × {check:?}: {:?}", r.failure);
    assert_eq!(r.schedules, schedules);
}

/// `seed001-ouyang-lock`: MutualExclusion is violated.
#[test]
fn ouyang_lock_expiry_mutual_exclusion_violated() {
    assert_violated("ouyang-lock-expiry.toml", MutualExclusion);
}

/// `seed001-ouyang-lock`: Fifo holds (CI_SCHEDULES schedules).
#[test]
fn ouyang_lock_faults_fifo_holds() {
    assert_holds("ouyang-lock-faults.toml", Fifo, CI_SCHEDULES);
}

/// `seed001-ouyang-lock`: Fifo holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn ouyang_lock_faults_fifo_holds_100000() {
    assert_holds("ouyang-lock-faults.toml", Fifo, FULL_SCHEDULES);
}

/// `seed001-ouyang-lock`: NoHerd holds (CI_SCHEDULES schedules).
#[test]
fn ouyang_lock_faults_no_herd_holds() {
    assert_holds("ouyang-lock-faults.toml", NoHerd, CI_SCHEDULES);
}

/// `seed001-ouyang-lock`: NoHerd holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn ouyang_lock_faults_no_herd_holds_100000() {
    assert_holds("ouyang-lock-faults.toml", NoHerd, FULL_SCHEDULES);
}

/// `seed001-ouyang-lock`: NoLeaks is violated (a node left in a live
/// session after the client gave up on a lost create).
#[test]
fn ouyang_lock_faults_no_leaks_violated() {
    assert_violated("ouyang-lock-faults.toml", NoLeaks);
}

/// `seed001-ouyang-rwlock`: MutualExclusion is violated.
#[test]
fn ouyang_rwlock_expiry_mutual_exclusion_violated() {
    assert_violated("ouyang-rwlock-expiry.toml", MutualExclusion);
}

/// `seed001-ouyang-rwlock`: NoHerd holds (CI_SCHEDULES schedules).
#[test]
fn ouyang_rwlock_faults_no_herd_holds() {
    assert_holds("ouyang-rwlock-faults.toml", NoHerd, CI_SCHEDULES);
}

/// `seed001-ouyang-rwlock`: NoHerd holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn ouyang_rwlock_faults_no_herd_holds_100000() {
    assert_holds("ouyang-rwlock-faults.toml", NoHerd, FULL_SCHEDULES);
}

/// `seed001-ouyang-rwlock`: NoLeaks is violated (a node left in a live
/// session after the client gave up on a lost create).
#[test]
fn ouyang_rwlock_faults_no_leaks_violated() {
    assert_violated("ouyang-rwlock-faults.toml", NoLeaks);
}

/// `seed003-apache-writelock`: MutualExclusion is violated.
#[test]
fn apache_writelock_nofaults_mutual_exclusion_violated() {
    assert_violated("apache-writelock-nofaults.toml", MutualExclusion);
}

/// `seed003-apache-writelock`: Fifo is violated.
#[test]
fn apache_writelock_fifo_fifo_violated() {
    assert_violated("apache-writelock-fifo.toml", Fifo);
}

/// `seed003-apache-writelock`: Liveness is violated.
#[test]
fn apache_writelock_drop_liveness_violated() {
    assert_violated("apache-writelock-drop.toml", Liveness);
}

/// `seed003-apache-writelock`: NoHerd is violated.
#[test]
fn apache_writelock_herd_no_herd_violated() {
    assert_violated("apache-writelock-herd.toml", NoHerd);
}

/// `seed002-writelock`: Liveness is violated.
#[test]
fn writelock_nofaults_liveness_violated() {
    assert_violated("writelock-nofaults.toml", Liveness);
}

/// `seed002-writelock`: MutualExclusion is violated.
#[test]
fn writelock_expiry_mutual_exclusion_violated() {
    assert_violated("writelock-expiry.toml", MutualExclusion);
}

/// `seed002-writelock`: Fifo is violated.
#[test]
fn writelock_faults_fifo_violated() {
    assert_violated("writelock-faults.toml", Fifo);
}

/// `seed002-writelock`: NoHerd holds (CI_SCHEDULES schedules).
#[test]
fn writelock_faults_no_herd_holds() {
    assert_holds("writelock-faults.toml", NoHerd, CI_SCHEDULES);
}

/// `seed002-writelock`: NoHerd holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn writelock_faults_no_herd_holds_100000() {
    assert_holds("writelock-faults.toml", NoHerd, FULL_SCHEDULES);
}

/// `seed002-queue`: QueueSafety is violated.
#[test]
fn queue_drop_queue_safety_violated() {
    assert_violated("queue-drop.toml", QueueSafety);
}

/// `seed002-queue`: QueueSafety holds (CI_SCHEDULES schedules).
#[test]
fn queue_nofaults_queue_safety_holds() {
    assert_holds("queue-nofaults.toml", QueueSafety, CI_SCHEDULES);
}

/// `seed002-queue`: QueueSafety holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn queue_nofaults_queue_safety_holds_100000() {
    assert_holds("queue-nofaults.toml", QueueSafety, FULL_SCHEDULES);
}

/// `seed002-queue-poll`: QueueSafety is violated.
#[test]
fn queue_poll_drop_queue_safety_violated() {
    assert_violated("queue-poll-drop.toml", QueueSafety);
}

/// `seed002-queue-poll`: QueueSafety holds (CI_SCHEDULES schedules).
#[test]
fn queue_poll_nofaults_queue_safety_holds() {
    assert_holds("queue-poll-nofaults.toml", QueueSafety, CI_SCHEDULES);
}

/// `seed002-queue-poll`: QueueSafety holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn queue_poll_nofaults_queue_safety_holds_100000() {
    assert_holds("queue-poll-nofaults.toml", QueueSafety, FULL_SCHEDULES);
}

/// `seed002-curator-mutex`: MutualExclusion is violated.
#[test]
fn curator_mutex_pause_mutual_exclusion_violated() {
    assert_violated("curator-mutex-pause.toml", MutualExclusion);
}

/// `seed002-curator-mutex`: FencedExclusion holds (CI_SCHEDULES schedules).
#[test]
fn curator_mutex_pause_fenced_fenced_exclusion_holds() {
    assert_holds(
        "curator-mutex-pause-fenced.toml",
        FencedExclusion,
        CI_SCHEDULES,
    );
}

/// `seed002-curator-mutex`: FencedExclusion holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_mutex_pause_fenced_fenced_exclusion_holds_100000() {
    assert_holds(
        "curator-mutex-pause-fenced.toml",
        FencedExclusion,
        FULL_SCHEDULES,
    );
}

/// `seed002-curator-mutex`: Fifo holds (CI_SCHEDULES schedules).
#[test]
fn curator_mutex_faults_fifo_holds() {
    assert_holds("curator-mutex-faults.toml", Fifo, CI_SCHEDULES);
}

/// `seed002-curator-mutex`: Fifo holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_mutex_faults_fifo_holds_100000() {
    assert_holds("curator-mutex-faults.toml", Fifo, FULL_SCHEDULES);
}

/// `seed002-curator-mutex`: NoHerd holds (CI_SCHEDULES schedules).
#[test]
fn curator_mutex_faults_no_herd_holds() {
    assert_holds("curator-mutex-faults.toml", NoHerd, CI_SCHEDULES);
}

/// `seed002-curator-mutex`: NoHerd holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_mutex_faults_no_herd_holds_100000() {
    assert_holds("curator-mutex-faults.toml", NoHerd, FULL_SCHEDULES);
}

/// `seed002-curator-mutex`: Liveness holds (CI_SCHEDULES schedules).
#[test]
fn curator_mutex_faults_liveness_holds() {
    assert_holds("curator-mutex-faults.toml", Liveness, CI_SCHEDULES);
}

/// `seed002-curator-mutex`: Liveness holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_mutex_faults_liveness_holds_100000() {
    assert_holds("curator-mutex-faults.toml", Liveness, FULL_SCHEDULES);
}

/// `seed002-curator-mutex`: NoLeaks holds (CI_SCHEDULES schedules).
#[test]
fn curator_mutex_faults_no_leaks_holds() {
    assert_holds("curator-mutex-faults.toml", NoLeaks, CI_SCHEDULES);
}

/// `seed002-curator-mutex`: NoLeaks holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_mutex_faults_no_leaks_holds_100000() {
    assert_holds("curator-mutex-faults.toml", NoLeaks, FULL_SCHEDULES);
}

/// `seed002-curator-leader`: Election is violated.
#[test]
fn curator_leader_pause_election_violated() {
    assert_violated("curator-leader-pause.toml", Election);
}

/// `seed002-curator-leader`: Election is violated (no leader emerges).
#[test]
fn curator_leader_faults_election_violated() {
    assert_violated("curator-leader-faults.toml", Election);
}

/// `seed002-curator-leader`: Election holds (CI_SCHEDULES schedules).
#[test]
fn curator_leader_drops_election_holds() {
    assert_holds("curator-leader-drops.toml", Election, CI_SCHEDULES);
}

/// `seed002-curator-leader`: Election holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_leader_drops_election_holds_100000() {
    assert_holds("curator-leader-drops.toml", Election, FULL_SCHEDULES);
}

/// `seed002-curator-leader`: Election holds under an expiry on ZooKeeper's
/// timeline and a lagging follower (CI_SCHEDULES schedules).
#[test]
fn curator_leader_expiry_election_holds() {
    assert_holds("curator-leader-expiry.toml", Election, CI_SCHEDULES);
}

/// `seed002-curator-leader`: Election holds under expiry (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn curator_leader_expiry_election_holds_100000() {
    assert_holds("curator-leader-expiry.toml", Election, FULL_SCHEDULES);
}

/// `seed004-zklock`: MutualExclusion is violated.
#[test]
fn zklock_expiry_mutual_exclusion_violated() {
    assert_violated("zklock-expiry.toml", MutualExclusion);
}

/// `seed004-zklock`: Liveness is violated with no faults: a predecessor
/// gone before `exists` (line 34) leaves a watch on a node that does not
/// exist (the business root is made beforehand, so the root race of
/// `zklock-root-race` does not stand in for it).
#[test]
fn zklock_nofaults_liveness_violated() {
    let found = assert_violated("zklock-nofaults.toml", Liveness);
    let e = &found.violation.explanation;
    assert!(e.contains("which does not exist"), "{e}");
}

/// `seed004-zklock`: Liveness is violated with no faults by the race on the
/// business root (line 32): the loser's `NodeExists` makes `getLock` return
/// false, and it never gets the lock.
#[test]
fn zklock_root_race_liveness_violated() {
    let found = assert_violated("zklock-root-race.toml", Liveness);
    let e = &found.violation.explanation;
    assert!(e.contains("given up for good"), "{e}");
    assert!(found.trace.contains("error NodeExists"), "{}", found.trace);
}

/// The other direction for both seed 004 liveness rows: the reference
/// lock (`sequential`) stays live on the same scenarios.
#[test]
fn zklock_liveness_scenarios_hold_for_the_reference_lock() {
    for file in ["zklock-nofaults.toml", "zklock-root-race.toml"] {
        let mut scenario = table::scenario_with_recipe(file, "sequential");
        scenario.hard = vec![Liveness];
        let r = table::sweep(&scenario, CI_SCHEDULES, 2);
        assert!(r.failure.is_none(), "{file}: {:?}", r.failure);
        assert_eq!(r.schedules, CI_SCHEDULES);
    }
}

/// `seed004-zklock`: NoHerd holds (CI_SCHEDULES schedules).
#[test]
fn zklock_faults_no_herd_holds() {
    assert_holds("zklock-faults.toml", NoHerd, CI_SCHEDULES);
}

/// `seed004-zklock`: NoHerd holds (100000 schedules).
#[test]
#[ignore = "100000 schedules: run with --release -- --ignored"]
fn zklock_faults_no_herd_holds_100000() {
    assert_holds("zklock-faults.toml", NoHerd, FULL_SCHEDULES);
}

/// `zkcheck list` shows every seed port on one line with the seed it comes
/// from, and the seed ports registered are exactly the seed recipes the
/// verdict table judges: a new port needs its rows (and no count to edit
/// here), and a row cannot outlive its port.
#[test]
fn list_names_each_seed_port_with_its_seed_and_each_has_a_verdict() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .arg("list")
        .output()
        .expect("the zkcheck binary runs");
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let seeds: Vec<_> = zkrecipes::RECIPES
        .iter()
        .filter(|r| r.origin.starts_with("seed"))
        .collect();
    let registered: std::collections::BTreeSet<&str> = seeds.iter().map(|r| r.name).collect();
    let judged: std::collections::BTreeSet<&str> = table::ROWS
        .iter()
        .map(|row| row.recipe)
        .filter(|name| name.starts_with("seed"))
        .collect();
    assert_eq!(
        registered, judged,
        "the seed ports registered (left) and those with verdict rows (right)"
    );
    assert!(!registered.is_empty(), "no seed port is registered");
    for r in seeds {
        let number = r.name.get(4..7).expect("seed names start with seedNNN");
        assert_eq!(r.origin, format!("seed {number}"), "{}", r.name);
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(r.name))
            .unwrap_or_else(|| panic!("{} missing from: {out}", r.name));
        assert!(line.contains(r.origin), "{line}");
        assert!(
            table::ROWS.iter().any(|row| row.recipe == r.name),
            "{} has no verdict row",
            r.name
        );
    }
}

/// `seed001-ouyang-lock-keep` (the program keeps its session): Liveness is violated.
#[test]
fn ouyang_lock_keep_faults_liveness_violated() {
    assert_violated("ouyang-lock-keep-faults.toml", Liveness);
}

/// `seed002-writelock`: AcquiredOnlyWhenAsked is violated.
#[test]
fn writelock_asked_acquired_only_when_asked_violated() {
    assert_violated("writelock-asked.toml", AcquiredOnlyWhenAsked);
}

/// `seed002-queue-retry` (the programs retry): QueueSafety is violated by a
/// duplicate — the producer's offer applied with its reply lost is offered
/// again (the drop is aimed at the producer).
#[test]
fn queue_retry_drop_queue_safety_violated() {
    let found = assert_violated("queue-retry-drop.toml", QueueSafety);
    let e = &found.violation.explanation;
    assert!(e.contains("handed out twice"), "{e}");
}

/// `seed004-zklock`: MutualExclusion is violated with connection drops only.
#[test]
fn zklock_drop_mutual_exclusion_violated() {
    assert_violated("zklock-drop.toml", MutualExclusion);
}

/// `seed002-writelock-keep` (the program keeps its session): Liveness is
/// violated by the article's `unlock()` — its one `delete` lost with the
/// connection (the drop is aimed at the releasing client), the node left in
/// the live session, the waiter queued behind a node that is *there*, not
/// the vanished-predecessor hang of `writelock-nofaults`.
#[test]
fn writelock_keep_drop_liveness_violated() {
    let found = assert_violated("writelock-keep-drop.toml", Liveness);
    let e = &found.violation.explanation;
    assert!(e.contains("is owned by client"), "{e}");
    assert!(!e.contains("does not exist"), "{e}");
    assert!(
        found.trace.contains("error ConnectionLoss"),
        "the release's delete was lost"
    );
}

/// The other direction: ZooKeeper's reference lock (`sequential`, which
/// retries a lost delete) keeps the same scenario live — same ensemble, same
/// drop aimed at the releasing client.
#[test]
fn writelock_keep_drop_scenario_holds_for_the_reference_lock() {
    let mut scenario = table::scenario_with_recipe("writelock-keep-drop.toml", "sequential");
    scenario.hard = vec![Liveness];
    let r = table::sweep(&scenario, CI_SCHEDULES, 2);
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(r.schedules, CI_SCHEDULES);
}

/// `seed002-queue-retry`: QueueSafety is violated by a *lost* item —
/// `take()`'s delete applied, its reply lost, the retried `take()` never
/// sees the item again — with the drop aimed at the consumer, so neither a
/// duplicate offer nor a dead consumer stands in for it.
#[test]
fn queue_retry_lost_queue_safety_violated() {
    let found = assert_violated("queue-retry-lost.toml", QueueSafety);
    let e = &found.violation.explanation;
    assert!(e.contains("— lost"), "{e}");
    assert!(!e.contains("handed out twice"), "{e}");
}

/// The other direction for both retry rows: a correct producer
/// (`queue-producer`: finds its item by tag after a lost create reply) and
/// consumer (`queue-consumer`: the take is a multi with a receipt it reads
/// after a lost reply) under the same ensemble and faults, the drop aimed at
/// the producer (`queue-retry-drop`) or the consumer (`queue-retry-lost`),
/// neither duplicate nor lose anything.
#[test]
fn queue_retry_scenarios_hold_for_a_correct_producer_and_consumer() {
    let text = r#"
name = "queue-retry-lost-twin"
root = "/queue"

[[clients]]
recipe = "queue-producer"
role = "producer"

[[clients]]
recipe = "queue-consumer"
role = "consumer"

[workload]
rounds = 2
hold_ticks = 2
think_ticks = 1

[ensemble]
servers = 1
session_timeout = 10
pause_ticks = 4
max_time = 120

[faults]
connection_drops = 1

[faults.aim]
connection_drops = 1

[checks]
hard = ["queue"]
report = []
"#;
    for aim in ["connection_drops = 0", "connection_drops = 1"] {
        let text = text.replace(
            "connection_drops = 1\n\n[checks]",
            &format!("{aim}\n\n[checks]"),
        );
        assert!(text.contains(&format!("[faults.aim]\n{aim}")), "{text}");
        let scenario = zkcheck::scenario::Scenario::parse(&text, "twin").expect("the twin parses");
        let r = table::sweep(&scenario, CI_SCHEDULES, 2);
        assert!(r.failure.is_none(), "{aim}: {:?}", r.failure);
        assert_eq!(r.schedules, CI_SCHEDULES);
    }
}

/// The other direction for the expiry row: the same scenario (one expiry on
/// ZooKeeper's timeline, no drops, no partitions) catches an election that
/// ignores its session (`election-ignore-session`), so the expiry is really
/// struck in these runs and the row's "holds" says something.
#[test]
fn curator_leader_expiry_scenario_catches_an_election_that_ignores_its_session() {
    let mut scenario =
        table::scenario_with_recipe("curator-leader-expiry.toml", "election-ignore-session");
    scenario.hard = vec![Election];
    let found = table::find(&scenario, 1000, 2).expect("the broken election is caught");
    assert_eq!(found.violation.property, Election);
    assert!(found.trace.contains("expire"), "{}", found.trace);
}

/// `seed001-ouyang-lock`: Liveness is violated by an expired *waiter*: the
/// expiry (on ZooKeeper's timeline, aimed at a client in line) finds it
/// blocked in `watchAndWait`, which never looks at session events.
#[test]
fn ouyang_lock_waiter_expiry_liveness_violated() {
    let found = assert_violated("ouyang-lock-waiter-expiry.toml", Liveness);
    let e = &found.violation.explanation;
    assert!(e.contains("its session ended"), "{e}");
    assert!(found.trace.contains("recv Expired"), "{}", found.trace);
}

/// The other direction: the reference lock, which opens a new session and
/// asks again after `Expired`, stays live on the same scenario.
#[test]
fn ouyang_lock_waiter_expiry_scenario_holds_for_the_reference_lock() {
    let mut scenario = table::scenario_with_recipe("ouyang-lock-waiter-expiry.toml", "sequential");
    scenario.hard = vec![Liveness];
    let r = table::sweep(&scenario, CI_SCHEDULES, 2);
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(r.schedules, CI_SCHEDULES);
}
