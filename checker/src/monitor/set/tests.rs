//! Passing monitors over steps they do not read changes nothing.
//!
//! The set shows a step only to the monitors that read one of its kinds of
//! happening ([`Monitor::READS`]) and passes the others over it
//! ([`Monitor::pass`]); a step no monitor reads and that starts no session
//! is not shown to the set at all ([`MonitorSet::concerns`]). Both are
//! speed-ups that must not change a verdict or a figure: every monitor,
//! present or not in a scenario's own set ([`EveryMonitor`]), is shown
//! each step it does not read and passed over it too — the two must end
//! equal, what is only measured included (compared through `Debug`).
//! Here on hand-made views; along random runs of every shipped scenario in
//! the model's tests (`crate::state`), which build worlds from scenarios
//! (the monitors sit below the scenario layer and do not).

use std::any::type_name;

use super::*;
use zksim::Happening;

/// What the runs exercised, so that a test cannot pass by seeing nothing.
#[derive(Default)]
pub(crate) struct Seen {
    /// Monitors passed over a step (and compared).
    pub passes: usize,
    /// Of those, passes on a step that started a session.
    pub passes_with_new_session: usize,
    /// Steps the scenario's own set was not shown.
    pub skipped: usize,
}

/// Every built-in monitor, whatever a scenario asks for.
pub(crate) struct EveryMonitor(Monitors);

impl EveryMonitor {
    pub fn new(family: Family, root: &str) -> Self {
        EveryMonitor(Monitors::of(family, root, |_| true))
    }

    /// Show every monitor the step (the world's start, say).
    pub fn observe<V: View + ?Sized>(&mut self, world: &V, step: &StepLog) {
        self.0.observe(world, step, Kinds::ALL, &mut Vec::new());
    }

    /// [`pass_or_observe`] for each monitor.
    pub fn pass_or_observe<V: View + ?Sized>(
        &mut self,
        world: &V,
        step: &StepLog,
        sessions_moved: bool,
        seen: &mut Seen,
    ) {
        each!(&mut self.0, as_mut, |m| pass_or_observe(
            m,
            world,
            step,
            sessions_moved,
            seen
        ));
    }
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

/// A monitor passed over a step in which a client's session changed
/// learns the new session as it would have had it been shown the step
/// (random runs change sessions in steps most of these monitors read, so
/// this is checked on a hand-made view too).
#[test]
fn a_monitor_passed_over_a_step_learns_new_sessions() {
    use crate::monitor::testkit::{req, FakeView};
    let mut view = FakeView::new(3);
    let mut every = EveryMonitor::new(Family::Lock, "/lock");
    every.observe(&view, &[req(0), req(1)]);
    // Client 1 reopens: a session the monitors have not seen.
    view.sessions[1] = 2000;
    let mut seen = Seen::default();
    every.pass_or_observe(&view, &[], true, &mut seen);
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
