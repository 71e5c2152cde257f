//! What a recipe client does with the lock: how often, for how long.

use zksim::Tick;

/// One client's work: `rounds` times acquire, hold `hold_ticks`, release,
/// then think `think_ticks` before the next round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Workload {
    pub rounds: u32,
    pub hold_ticks: Tick,
    pub think_ticks: Tick,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            rounds: 1,
            hold_ticks: 2,
            think_ticks: 1,
        }
    }
}
