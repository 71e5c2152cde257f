//! The timing model both ways: what it must reproduce (a hold long enough
//! for every waiter to watch wakes N−1 at the first naive release; the
//! herd costs time and server load) and that its parameters matter (a
//! costlier notification makes the naive herd slower), deterministically.

use zksim::FaultBudget;

use super::*;
use crate::compare::scenario_timed;

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
    let docs = include_str!("../../../docs/SCENARIOS.md");
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
    let s = crate::scenario::Scenario::parse(text, "t.toml").unwrap();
    assert_eq!(s.timing.latency_us, 10);
    assert_eq!(s.timing.read_us, Timing::default().read_us);
    let again = crate::scenario::Scenario::parse(&s.to_canonical(), "c").unwrap();
    assert_eq!(again, s);
    let plain = crate::scenario::Scenario::lock("naive", 2);
    assert!(
        !plain.to_canonical().contains("[timing]"),
        "untimed scenarios keep their canonical text (and tokens)"
    );
    let bad = "name = \"t\"\nrecipe = \"naive\"\nclients = 2\n[timing]\njitter_percent = 101\n";
    let e = crate::scenario::Scenario::parse(bad, "t.toml").unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("t.toml:5:1") && shown.contains("`timing.jitter_percent` = 101"),
        "{shown}"
    );
    let unknown = "name = \"t\"\nrecipe = \"naive\"\nclients = 2\n[timing]\nlatency = 1\n";
    let shown = crate::scenario::Scenario::parse(unknown, "t.toml")
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
