//! zkcheck: explore schedules of a recipe's clients on the simulated
//! ensemble and judge them with property monitors.

pub mod monitor;
