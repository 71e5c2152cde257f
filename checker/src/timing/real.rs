//! The same figures measured on a real ZooKeeper: the clients of a
//! registered recipe run through `zkrecipes::real`'s driver (the real-server
//! example's workload), their history counted by the same code as the
//! simulator's (`LockFigures`, [`TimeLedger`]), times in wall-clock µs
//! from the run's start.

use std::time::Duration;

use zkrecipes::figures::LockFigures;
use zkrecipes::real::{drive_blocking, DriveConfig};
use zkrecipes::{registry, RecipeParams, Workload};

use super::figures::{TimeFigures, TimeLedger};
use crate::monitor::Figures;

/// One run of `clients` clients of `recipe` on the server at
/// `connect_string`, under `root` (which must not exist yet).
///
/// Errors: an unknown recipe, a client that could not connect, or a run
/// that did not finish within `timeout` (a stuck recipe or a sick server).
pub fn run_real(
    connect_string: &str,
    recipe: &str,
    clients: usize,
    workload: Workload,
    root: &str,
    timeout: Duration,
) -> Result<(Figures, TimeFigures), String> {
    let info = registry::find(recipe).ok_or_else(|| format!("no recipe named `{recipe}`"))?;
    let recipe_clients = (0..clients)
        .map(|client| {
            (info.build)(&RecipeParams {
                client,
                clients,
                root: root.to_string(),
                workload,
            })
        })
        .collect();
    let config = DriveConfig {
        run_timeout: timeout,
        ..DriveConfig::new(connect_string)
    };
    let run = drive_blocking(recipe_clients, &config).map_err(|e| e.to_string())?;
    if !run.finished {
        return Err(format!(
            "`{recipe}` with {clients} clients did not finish within {} s on the real server",
            timeout.as_secs()
        ));
    }
    let lock = LockFigures::from_log(&run.log);
    let mut figures = Figures {
        runs: 1,
        acquisitions: lock.acquisitions as u64,
        releases: lock.releases as u64,
        requests: lock.requests as u64,
        wakeups: lock.wakeups as u64,
        wasted_wakeups: lock.wasted_wakeups as u64,
        ..Figures::default()
    };
    for &w in &lock.wakeups_per_release {
        figures.wakeups_per_release.record(w as u64);
    }
    for &w in &lock.wasted_per_release {
        figures.wasted_per_release.record(w as u64);
    }
    let mut ledger = TimeLedger::new(clients);
    for (happening, at) in run.log.iter().zip(&run.at) {
        ledger.observe(at.as_micros() as u64, happening);
    }
    Ok((figures, ledger.into_figures(None, None)))
}
