//! Passing monitors over steps they do not read changes nothing.
//!
//! The set shows a step only to the monitors that read one of its kinds of
//! happening ([`Monitor::READS`]) and passes the others over it
//! ([`Monitor::pass`]); a step no monitor reads and that starts no session
//! is not shown to the set at all ([`MonitorSet::concerns`]). Both are
//! speed-ups that must not change a verdict or a figure: here every
//! monitor, present or not in the scenario's own set, is run along random
//! runs of every shipped scenario, and on each step it does not read it
//! is both shown the step and passed over it — the two must end equal,
//! what is only measured included (compared through `Debug`).

use std::any::type_name;
use std::path::Path;
use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::model::Model;
use crate::scenario::Scenario;
use zksim::Happening;

/// Steps per run, and runs per scenario.
const STEPS: usize = 300;
const SEEDS: u64 = 12;

/// What the runs exercised, so that the test cannot pass by seeing nothing.
#[derive(Default)]
struct Seen {
    /// Monitors passed over a step (and compared).
    passes: usize,
    /// Of those, passes on a step that started a session.
    passes_with_new_session: usize,
    /// Steps the scenario's own set was not shown.
    skipped: usize,
}

/// `m` on `step`: when it does not read the step, shown it and passed over
/// it must end equal; otherwise it observes it as in a run.
fn pass_or_observe<M: Monitor, V: View + ?Sized>(
    m: &mut M,
    world: &V,
    step: &StepLog,
    sessions_moved: bool,
    seen: &mut Seen,
) {
    if Kinds::in_step(step).meets(M::READS) {
        let _ = m.observe(world, step);
        return;
    }
    let mut shown = m.clone();
    let verdict = shown.observe(world, step);
    m.pass(world);
    assert!(
        verdict.is_ok(),
        "{} broke its property on a step it does not read: {step:?}",
        type_name::<M>()
    );
    assert_eq!(
        format!("{shown:?}"),
        format!("{m:?}"),
        "{} shown a step it does not read ends otherwise than passed over it: {step:?}",
        type_name::<M>()
    );
    seen.passes += 1;
    seen.passes_with_new_session += usize::from(sessions_moved);
}

fn run(scenario: &Scenario, seed: u64, seen: &mut Seen) {
    let mut start = Vec::new();
    let mut model = Model::with_start_log(scenario, &mut start);
    // Every monitor, whatever the scenario asks for.
    let mut every = Monitors::of(scenario.family(), &scenario.root, |_| true);
    every.observe(&model.world, &start, Kinds::ALL, &mut Vec::new());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut events, mut log) = (Vec::new(), Vec::new());
    for _ in 0..STEPS {
        events.clear();
        model.enabled(&mut events);
        if events.is_empty() {
            break;
        }
        let event = events[rng.random_range(0..events.len())].clone();
        let before = Arc::clone(&model.monitors);
        let sessions = model.world.next_session_id();
        let verdict = model.step(&event, &mut log);
        let sessions_moved = model.world.next_session_id() != sessions;
        let world = &model.world;
        each!(&mut every, as_mut, |m| pass_or_observe(
            m,
            world,
            &log,
            sessions_moved,
            seen
        ));
        let concerned = before.concerns(&log, sessions_moved);
        // The model shows its set the steps that concern it, and only those
        // (`before` shares the set, so showing it a step copies it).
        assert_eq!(Arc::ptr_eq(&before, &model.monitors), !concerned);
        if !concerned {
            // Showing the set the step it was spared must change nothing.
            let mut shown = (*before).clone();
            assert!(shown.observe(world, &log).is_ok());
            assert_eq!(format!("{shown:?}"), format!("{before:?}"));
            seen.skipped += 1;
        }
        if verdict.is_err() {
            break;
        }
    }
}

#[test]
fn monitors_passed_over_a_step_end_as_if_shown_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<_> = [dir.clone(), dir.join("seeds")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("scenarios/ lists"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 30, "the shipped scenarios are found");
    let mut seen = Seen::default();
    for file in &files {
        let scenario = Scenario::from_file(file).expect("a shipped scenario loads");
        for seed in 0..SEEDS {
            run(&scenario, seed, &mut seen);
        }
    }
    // The comparisons above ran, on steps that started sessions too.
    assert!(seen.passes > 10_000, "{} passes", seen.passes);
    assert!(seen.passes_with_new_session > 0);
    assert!(seen.skipped > 1_000, "{} skipped steps", seen.skipped);
}

/// A monitor passed over a step in which a client's session changed
/// learns the new session as it would have had it been shown the step
/// (random runs change sessions in steps most of these monitors read, so
/// this is checked on a hand-made view too).
#[test]
fn a_monitor_passed_over_a_step_learns_new_sessions() {
    use crate::monitor::testkit::{req, FakeView};
    let mut view = FakeView::new(3);
    let mut every = Monitors::of(Family::Lock, "/lock", |_| true);
    every.observe(&view, &[req(0), req(1)], Kinds::ALL, &mut Vec::new());
    // Client 1 reopens: a session the monitors have not seen.
    view.sessions[1] = 2000;
    let mut seen = Seen::default();
    each!(&mut every, as_mut, |m| pass_or_observe(
        m,
        &view,
        &[],
        true,
        &mut seen
    ));
    // mutex, fenced, fifo, herd, leaks and liveness do not read an empty step.
    assert_eq!(seen.passes, 6);
}

/// What makes a step concern the set besides the kinds its monitors read:
/// a new session (a monitor mirroring sessions must learn it) and a
/// violation found at the start (reported by the next step shown).
#[test]
fn a_new_session_or_a_violation_at_start_concerns_the_set() {
    use crate::monitor::testkit::{req, FakeView};
    // Only FIFO is judged: it reads application events and ended sessions.
    let mut set = MonitorSet::new(Family::Lock, 3, "/lock", &[Property::Fifo], &[]).judge_only();
    let taken: Vec<Happening<zkrecipes::AppEvent>> = vec![Happening::Taken {
        client: 1,
        server: 0,
        op: 1,
    }];
    assert!(!set.concerns(&taken, false));
    assert!(set.concerns(&taken, true));
    // Why: on that step, with client 1's session new, the monitor changes.
    let mut view = FakeView::new(3);
    set.judged
        .observe(&view, &[req(0)], Kinds::ALL, &mut Vec::new());
    view.sessions[1] = 2000;
    let before = format!("{:?}", set.judged);
    set.judged
        .observe(&view, &taken, Kinds::in_step(&taken), &mut Vec::new());
    assert_ne!(format!("{:?}", set.judged), before);

    set.at_start = Some(Violation {
        property: Property::Fifo,
        explanation: "found while the world started".into(),
    });
    assert!(set.concerns(&taken, false));
}

/// A user's monitor that counts the steps it is shown.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct StepCounter(usize);

impl Monitor for StepCounter {
    fn observe<V: View + ?Sized>(&mut self, _: &V, _: &StepLog) -> Result<(), Violation> {
        self.0 += 1;
        Ok(())
    }
}

/// A user's monitor may read anything at any step (it does not say
/// otherwise): with one in the set, no step is skipped.
#[test]
fn a_users_monitor_is_shown_every_step() {
    let mut scenario = Scenario::lock("sequential", 3);
    scenario.monitors.push(Custom::new(StepCounter(0)));
    let mut model = Model::new(&scenario);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut events, mut log) = (Vec::new(), Vec::new());
    let mut steps = 0;
    while steps < STEPS {
        events.clear();
        model.enabled(&mut events);
        if events.is_empty() {
            break;
        }
        let event = events[rng.random_range(0..events.len())].clone();
        model
            .step(&event, &mut log)
            .expect("the sequential lock holds");
        steps += 1;
    }
    assert!(steps > 50);
    // Shown the start, then every step.
    let counted = format!("{:?}", model.monitors.custom[0]);
    assert!(
        counted.contains(&format!("StepCounter({})", steps + 1)),
        "{counted} after {steps} steps"
    );
}
