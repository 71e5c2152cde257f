//! Support for `ensemble_verdicts`: the replay plans and the judges.

pub mod judge;
pub mod replay;
