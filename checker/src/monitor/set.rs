//! CONTRACT STUB (checker-core): replaced by the monitors helper's real set.

use super::{Property, Sim, StepLog, Violation};
use crate::monitor::figures::Figures;

/// Every monitor a scenario asked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MonitorSet {
    hard: Vec<Property>,
    report: Vec<Property>,
}

impl MonitorSet {
    /// `hard`: properties whose violation fails the run; `report`: only measured.
    pub fn new(
        _family: zkrecipes::Family,
        _clients: usize,
        _root: &str,
        hard: &[Property],
        report: &[Property],
    ) -> Self {
        MonitorSet {
            hard: hard.to_vec(),
            report: report.to_vec(),
        }
    }
    pub fn observe(&mut self, _world: &Sim, _step: &StepLog) -> Result<(), Violation> {
        Ok(())
    }
    pub fn finish(&mut self, _world: &Sim) -> Result<(), Violation> {
        Ok(())
    }
    pub fn figures(&self) -> Figures {
        Figures::default()
    }
}
