//! A real three-server ensemble as oracle for the simulator's
//! multi-server rules (S19, S21a, S22a, S26, S28): the harness
//! ([`Ensemble`]) and the ensemble conformance scripts' model and runners.
//! See docs/CONFORMANCE.md, "Ensemble".

mod cluster;
pub mod cue;
pub mod real;
pub mod script;
pub mod sim;

pub use cluster::{
    parse_srvr, require_ensemble, Ensemble, Mode, ServerState, ENSEMBLE_MAX_TIMEOUT_TICKS,
    ENSEMBLE_SYNC_LIMIT, ENSEMBLE_TICK_MS, MEMBERS,
};
