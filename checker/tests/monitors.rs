//! Monitors end to end: real recipes on the simulated ensemble, judged by
//! the monitor set through the checker's own run loop.

use zkcheck::run::run_random;
use zkcheck::scenario::Scenario;

#[test]
fn probe() {
    for recipe in ["sequential", "naive"] {
        let s = Scenario::lock(recipe, 4);
        let out = run_random(&s, 1);
        eprintln!(
            "{recipe}: {:?} steps {} {:#?}",
            out.violation, out.steps, out.figures
        );
    }
}
