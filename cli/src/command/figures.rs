//! The measured figures of a run, as `check` and `merge` print them.

use zkcheck::monitor::{Property, Tally};
use zkcheck::scenario::property_name;

use super::io::Text;
use super::say;

/// The measured figures in two lines (the full set is in `compare`'s report).
pub(super) fn print_figures(io: &mut Text, hard: &[Property], f: &Tally) {
    if f.acquisitions > 0 {
        say!(
            io,
            "figures: {} acquisitions; wakeups per lock write max {} mean {:.2}; wasted per release max {} mean {:.2}; wait mean {:.1} p99 {} ticks",
            f.acquisitions,
            f.max_wakeups_per_write(),
            f.mean_wakeups_per_write(),
            f.max_wasted_per_release(),
            f.mean_wasted_per_release(),
            f.mean_latency(),
            f.p99_latency()
        );
    }
    // Hard properties fail the run and are reported below; only the
    // measured ones are listed here.
    let measured: Vec<String> = f
        .violations
        .iter()
        .filter(|(p, _)| !hard.contains(p))
        .map(|(&p, n)| format!("{} in {n} runs", property_name(p)))
        .collect();
    if !measured.is_empty() {
        say!(
            io,
            "measured (not failing) violations: {}",
            measured.join(", ")
        );
    }
}
