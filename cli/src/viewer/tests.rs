//! The timeline tells the truth about a run: both directions (a broken
//! recipe's overlap is marked, a correct run shows none), faults and the
//! expired holder's belief drawn, tick runs folded without losing a step.

use std::path::Path;

use zkcheck::explore::random::run_random;
use zkcheck::monitor::Property;
use zkcheck::scenario::Scenario;

use super::record::{record, Options, Recording};
use super::timeline::{Belief, Item, MarkKind, Timeline};

fn seed_scenario(file: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/seeds")
        .join(file);
    Scenario::from_file(&path).unwrap()
}

/// The first failing seed's run, recorded with snapshots.
fn first_failure(s: &Scenario) -> Recording {
    let outcome = (0..3000)
        .map(|seed| run_random(s, seed))
        .find(|o| o.violation.is_some())
        .expect("the seed recipe fails within 3000 seeds");
    let indices = outcome.schedule.to_indices(s).unwrap();
    let options = Options {
        snapshots: true,
        count_wakeups: false,
        cycle_from: None,
    };
    record(s, &indices, s.name.clone(), options).unwrap()
}

/// Every step is in exactly one row, in order; one snapshot per step.
fn assert_rows_partition_the_steps(rec: &Recording) {
    let t = &rec.timeline;
    assert_eq!(rec.snapshots.len(), rec.lines.len());
    assert_eq!(t.rows[0].first, 0);
    for i in 1..t.rows.len() {
        let (before, row) = (&t.rows[i - 1], &t.rows[i]);
        assert!(row.first <= row.last);
        // An end-of-run check gets its own row after the last step.
        let judged_at_end = i == t.rows.len() - 1
            && t.violation.as_ref().is_some_and(|v| v.row == i)
            && row.first == before.last;
        if !judged_at_end {
            assert_eq!(row.first, before.last + 1, "rows are contiguous at row {i}");
        }
    }
    assert_eq!(t.rows.last().unwrap().last, rec.lines.len() - 1);
}

fn holders_at(t: &Timeline, row: usize) -> Vec<usize> {
    t.bands
        .iter()
        .filter(|b| b.from <= row && row <= b.to && b.belief.holds())
        .map(|b| b.lane)
        .collect()
}

#[test]
fn a_mutex_counterexample_marks_both_holders() {
    let rec = first_failure(&seed_scenario("apache-writelock-nofaults.toml"));
    let t = &rec.timeline;
    let v = t.violation.as_ref().expect("the violation is marked");
    assert_eq!(v.property, Property::MutualExclusion);
    assert_eq!(
        v.holders,
        vec![0, 1],
        "both clients hold at the violating row"
    );
    assert_eq!(holders_at(t, v.row), vec![0, 1], "the bands overlap there");
    assert!(t.rows[v.row]
        .items
        .iter()
        .any(|i| matches!(i, Item::Banner { label } if label.starts_with("VIOLATION mutex"))));
    assert_eq!(
        v.snapshot,
        rec.lines.len() - 1,
        "the run stops at the violating step"
    );
    assert_rows_partition_the_steps(&rec);
}

#[test]
fn a_correct_run_shows_no_overlap() {
    let s = Scenario::lock("sequential", 3);
    let outcome = run_random(&s, 7);
    assert!(outcome.violation.is_none());
    let indices = outcome.schedule.to_indices(&s).unwrap();
    let rec = record(&s, &indices, String::new(), Options::default()).unwrap();
    let t = &rec.timeline;
    assert!(t.violation.is_none());
    let holding = t
        .bands
        .iter()
        .filter(|b| b.belief == Belief::Holding)
        .count();
    assert_eq!(holding, 3, "each client holds once");
    for r in 0..t.rows.len() {
        assert!(holders_at(t, r).len() <= 1, "row {r}: one holder at most");
    }
    assert!(rec.snapshots.is_empty(), "snapshots only when asked for");
    assert_rows_partition_the_steps(&Recording {
        snapshots: vec![serde_json::Value::Null; rec.lines.len()],
        ..rec
    });
}

#[test]
fn a_pause_fault_and_the_expired_holders_belief_are_drawn() {
    let rec = first_failure(&seed_scenario("curator-mutex-pause.toml"));
    let t = &rec.timeline;
    assert!(t.rows.iter().flat_map(|r| &r.items).any(|i| matches!(
        i,
        Item::Mark { kind: MarkKind::Fault, label, .. } if label.contains("pauses")
    )));
    assert!(
        t.bands.iter().any(|b| b.belief == Belief::HoldingExpired),
        "the paused holder keeps believing after its session expired"
    );
    let v = t.violation.as_ref().unwrap();
    assert_eq!(v.holders.len(), 2);
    // Ticks in which nothing happens are folded, and no step is lost.
    assert!(
        t.rows.iter().any(|r| r.ticks >= 2),
        "a run of ticks is one row"
    );
    assert!(t.rows.len() < rec.lines.len());
    assert_rows_partition_the_steps(&rec);
}

#[test]
fn an_end_of_run_violation_gets_its_own_row() {
    let rec = first_failure(&seed_scenario("writelock-nofaults.toml"));
    let t = &rec.timeline;
    let v = t.violation.as_ref().unwrap();
    assert_eq!(v.property, Property::Liveness);
    assert_eq!(v.row, t.rows.len() - 1);
    assert!(matches!(
        &t.rows[v.row].items[..],
        [Item::Banner { label }] if label.contains("judged at the end of the run")
    ));
    assert_rows_partition_the_steps(&rec);
}
