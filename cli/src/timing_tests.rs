//! The timing model both ways: what it must reproduce (a hold long enough
//! for every waiter to watch wakes N−1 at the first naive release; the
//! herd costs time and server load) and that its parameters matter (a
//! costlier notification makes the naive herd slower), deterministically.

use zksim::FaultBudget;

use crate::compare::scenario_timed;
use crate::timing::*;
use zkcheck::scenario::Timing;

fn timed(recipe: &str, clients: usize, hold: u64, timing: Timing, seed: u64) -> TimeFigures {
    let mut s = scenario_timed(recipe, clients, false, timing);
    s.workload.hold_ticks = hold;
    let (outcome, time) = run_timed(&s, seed);
    assert!(!outcome.cut, "{recipe} × {clients} was cut at max_steps");
    assert_eq!(outcome.figures.acquisitions, clients as u64);
    time
}

#[test]
fn same_seed_same_schedule_and_times() {
    let s = scenario_timed("naive", 8, false, Timing::default());
    let (a, ta) = run_timed(&s, 3);
    let (b, tb) = run_timed(&s, 3);
    assert_eq!(a.schedule, b.schedule);
    assert_eq!(ta, tb);
    let (c, _) = run_timed(&s, 4);
    assert_ne!(a.schedule, c.schedule, "the seed drives the jitter");
}

#[test]
fn a_long_hold_lets_every_waiter_watch_so_naive_wakes_all_of_them() {
    for n in [4usize, 8, 16] {
        let s = scenario_timed("naive", n, false, Timing::default());
        let (outcome, time) = run_timed(&s, 0);
        let f = &outcome.figures;
        assert_eq!(f.max_wakeups_per_release(), n as u64 - 1, "naive × {n}");
        // Every release wakes every remaining waiter: (N−1)/2 per acquisition.
        assert_eq!(f.wakeups * 2, (n as u64 - 1) * n as u64, "naive × {n}");
        assert_eq!(time.notifications, f.wakeups);
        let s = scenario_timed("sequential", n, false, Timing::default());
        let (outcome, _) = run_timed(&s, 0);
        assert_eq!(outcome.figures.max_wakeups_per_release(), 1);
        assert_eq!(outcome.figures.wakeups, n as u64 - 1);
    }
}

#[test]
fn holds_are_ticks_of_100_ms_of_model_time() {
    // One round each, hold 2 ticks: the holder releases at the second tick
    // boundary after it acquired, so N acquisitions take 2N ticks.
    let t = timed("sequential", 4, 2, Timing::default(), 0);
    assert_eq!(t.total_us.div_ceil(TICK_US), 8, "{t:?}");
}

#[test]
fn the_herd_costs_time_and_server_load() {
    let timing = Timing::default();
    let naive = timed("naive", 16, 0, timing, 1);
    let sequential = timed("sequential", 16, 0, timing, 1);
    assert!(
        naive.total_us > sequential.total_us,
        "naive {naive:?} vs sequential {sequential:?}"
    );
    assert!(naive.busy_us > sequential.busy_us);
    assert!(naive.notifications > sequential.notifications);
    assert!(naive.mean_latency_ms() > sequential.mean_latency_ms());
}

#[test]
fn a_costlier_notification_slows_the_herd_down() {
    let cheap = Timing {
        jitter_percent: 0,
        ..Timing::default()
    };
    let dear = Timing {
        notify_us: cheap.notify_us * 20,
        ..cheap
    };
    let fast = timed("naive", 16, 0, cheap, 0);
    let slow = timed("naive", 16, 0, dear, 0);
    assert!(slow.total_us > fast.total_us, "{fast:?} vs {slow:?}");
    assert!(slow.busy_us > fast.busy_us);
}

#[test]
fn faults_arrive_in_model_time() {
    let mut s = scenario_timed("sequential", 4, false, Timing::default());
    s.faults = FaultBudget {
        connection_drops: 2,
        expiries: 1,
        ..FaultBudget::default()
    };
    let faulted = (0..8)
        .map(|seed| run_timed(&s, seed).0)
        .filter(|o| {
            o.schedule
                .events
                .iter()
                .any(|e| matches!(e, zksim::Event::Fault(_)))
        })
        .count();
    assert!(faulted > 0, "no run injected a fault");
}

#[test]
fn the_documented_defaults_are_the_defaults() {
    let docs = include_str!("../../docs/SCENARIOS.md");
    let start = docs
        .find("[timing]  ")
        .expect("a [timing] example in SCENARIOS.md");
    let block: String = docs[start..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| l.split('#').next().unwrap_or("").trim_end().to_string() + "\n")
        .collect();
    #[derive(serde::Deserialize)]
    struct Doc {
        timing: Timing,
    }
    let doc: Doc = toml::from_str(&block).expect("the example parses");
    assert_eq!(doc.timing, Timing::default());
}

#[test]
fn a_timing_section_round_trips_and_bad_values_point_at_their_line() {
    let text = "name = \"t\"\nrecipe = \"naive\"\nclients = 2\n[timing]\nlatency_us = 10\n";
    let s = zkcheck::scenario::Scenario::parse(text, "t.toml").unwrap();
    assert_eq!(s.timing.latency_us, 10);
    assert_eq!(s.timing.read_us, Timing::default().read_us);
    let again = zkcheck::scenario::Scenario::parse(&s.to_canonical(), "c").unwrap();
    assert_eq!(again, s);
    let plain = zkcheck::scenario::Scenario::lock("naive", 2);
    assert!(
        !plain.to_canonical().contains("[timing]"),
        "untimed scenarios keep their canonical text (and tokens)"
    );
    let bad = "name = \"t\"\nrecipe = \"naive\"\nclients = 2\n[timing]\njitter_percent = 101\n";
    let e = zkcheck::scenario::Scenario::parse(bad, "t.toml").unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("t.toml:5:1") && shown.contains("`timing.jitter_percent` = 101"),
        "{shown}"
    );
    let unknown = "name = \"t\"\nrecipe = \"naive\"\nclients = 2\n[timing]\nlatency = 1\n";
    let shown = zkcheck::scenario::Scenario::parse(unknown, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(shown.contains("t.toml:5"), "{shown}");
}

#[test]
fn calibration_figures_become_parameters_and_medians() {
    // Idle read 120 µs with a 20 µs service: 50 µs each way. An idle write
    // 200 µs with a 30 µs service: 70 µs more than a read beyond the
    // 10 µs service difference is the commit delay.
    let t = Timing::calibrated(120.0, 200.0, 20.0, 30.0, 15.0);
    assert_eq!(
        (
            t.latency_us,
            t.read_us,
            t.write_us,
            t.commit_delay_us,
            t.notify_us
        ),
        (50, 20, 30, 70, 15)
    );
    // A round trip shorter than its service time gives no negative latency.
    assert_eq!(
        Timing::calibrated(10.0, 10.0, 20.0, 20.0, 0.0).latency_us,
        0
    );
    let slow = Timing {
        latency_us: 90,
        ..t
    };
    let fast = Timing {
        latency_us: 10,
        ..t
    };
    assert_eq!(Timing::median(&[slow, t, fast]).latency_us, 50);
    assert_eq!(Timing::median(&[]), Timing::default());
}

/// `drive_timed` (the ready-time index, revisiting only the clients a step
/// wrote) must make the run the timed chooser makes from the whole
/// enabled list: the same events at every step, the same end, the same
/// figures. Over scenarios that exercise what the index keeps apart:
/// faults of every kind striking often, three servers (applies,
/// partitions, reconnects), one shared client thread with a client cost,
/// recipes that break a hard property (a violation ends the run), faults
/// aimed at a role, a herd.
#[test]
fn the_ready_index_makes_the_chooser_s_run_step_for_step() {
    use zkcheck::run::drive;
    use zkcheck::scenario::Scenario;

    let often = Timing {
        fault_interval_us: 700,
        ..Timing::default()
    };
    let shared = Timing {
        client_us: 9,
        shared_client_cpu: true,
        fault_interval_us: 1500,
        ..Timing::default()
    };
    let mut cases: Vec<(String, Scenario)> = Vec::new();
    for (recipe, timing) in [
        ("naive", often),
        ("sequential", often),
        ("sequential", shared),
    ] {
        let mut s = scenario_timed(recipe, 7, true, timing);
        s.faults = FaultBudget {
            connection_drops: 3,
            expiries: 2,
            pauses: 2,
            crashes: 1,
            kills: 1,
            partitions: 0,
        };
        cases.push((format!("{recipe}, 1 server, {timing:?}"), s.clone()));
        s.ensemble.servers = 3;
        s.faults.partitions = 2;
        cases.push((format!("{recipe}, 3 servers, {timing:?}"), s));
    }
    // A herd of 40: many receives and requests ready at once.
    cases.push((
        "naive × 40".to_string(),
        scenario_timed("naive", 40, false, Timing::default()),
    ));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    for name in [
        "lock-sequential-faults",
        "lock-sequential-partition-window",
        "lock-sequential-ignore-session",
        "lock-sequential-long-pause",
        "rwlock-faults",
        "lock-sequential-forget-release",
        "lock-sequential-adopt-any",
        "lock-poll-defer",
        "election",
        "election-ignore-session",
        "queue",
    ] {
        let mut s = Scenario::from_file(&dir.join(format!("{name}.toml"))).expect(name);
        s.timing.fault_interval_us = 2000;
        cases.push((name.to_string(), s));
    }

    let (mut faults, mut applies, mut violations, mut connects) = (0, 0, 0, 0);
    for (name, s) in &cases {
        for seed in 0..6 {
            let mut reference = TimedChooser::new(s.timing, seed);
            let mut ref_clock = Vec::new();
            let clock = reference.clock();
            let a = drive(s, &mut reference, |_, _, _| ref_clock.push(clock.get()));
            reference.finish(&a.model.world);
            let mut fast = TimedChooser::new(s.timing, seed);
            let mut fast_clock = Vec::new();
            let clock = fast.clock();
            let b = drive_timed(s, &mut fast, |_, _, _| fast_clock.push(clock.get()));
            fast.finish(&b.model.world);
            let first_difference = a
                .schedule
                .events
                .iter()
                .zip(&b.schedule.events)
                .position(|(x, y)| x != y);
            assert_eq!(
                a.schedule, b.schedule,
                "{name}, seed {seed}: the runs part at step {first_difference:?}"
            );
            assert_eq!(ref_clock, fast_clock, "{name}, seed {seed}: model times");
            assert_eq!(a.ending, b.ending, "{name}, seed {seed}");
            assert_eq!(a.violation, b.violation, "{name}, seed {seed}");
            assert_eq!(reference.busy_us(), fast.busy_us(), "{name}, seed {seed}");
            assert_eq!(reference.notifications(), fast.notifications());
            for event in &a.schedule.events {
                match event {
                    zksim::Event::Fault(_) => faults += 1,
                    zksim::Event::Apply { .. } => applies += 1,
                    zksim::Event::Connect { .. } => connects += 1,
                    _ => {}
                }
            }
            violations += usize::from(a.violation.is_some());
        }
    }
    // What the comparison covered (else it would prove little).
    assert!(faults > 100, "{faults} faults struck");
    assert!(applies > 100, "{applies} applies");
    assert!(connects > 20, "{connects} connects");
    assert!(violations > 0, "no run broke a hard property");
}
