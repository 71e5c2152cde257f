//! CONTRACT STUB (checker-core): replaced by the monitors helper's real figures.

/// Measured figures of one or many runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub runs: u64,
}

impl Figures {
    pub fn merge(&mut self, other: &Figures) {
        self.runs += other.runs;
    }
}
