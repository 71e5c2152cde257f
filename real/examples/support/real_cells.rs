//! Shared by the `compare` example and `tests/timing_real.rs`: one cell of
//! `zkcheck compare` run on a real ZooKeeper — the clients of a registered
//! recipe driven by [`zkreal::drive_blocking`] (the `lock` example's
//! workload), their history counted by the simulator's own code
//! (`LockFigures`, `zkcheck_cli::timing::figures::TimeLedger`), times in
//! wall-clock µs from the run's start.

use std::time::Duration;

use zkcheck::monitor::herd::LockFigures;
use zkcheck::monitor::Tally;
use zkcheck_cli::compare::{scenario, RealFigures, Row};
use zkcheck_cli::timing::figures::{TimeFigures, TimeLedger};
use zkreal::{drive_blocking, DriveConfig};
use zkrecipes::{registry, RecipeParams, Workload};

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
) -> Result<(Tally, TimeFigures), String> {
    let info = registry::find(recipe).ok_or_else(|| format!("no recipe named `{recipe}`"))?;
    let recipe_clients = (0..clients)
        .map(|client| {
            (info.build)(&RecipeParams {
                group: 0,
                role: info.name.into(),
                session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
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
    let mut figures = Tally {
        runs: 1,
        acquisitions: lock.acquisitions as u64,
        releases: lock.releases as u64,
        requests: lock.requests as u64,
        wakeups: lock.wakeups as u64,
        wasted_wakeups: lock.wasted_wakeups as u64,
        ..Tally::default()
    };
    for &w in &lock.wakeups_per_release {
        figures.wakeups_per_release.record(w as u64);
    }
    for &w in &lock.wasted_per_release {
        figures.wasted_per_release.record(w as u64);
    }
    for w in lock.wakeups_per_write() {
        figures.wakeups_per_write.record(w as u64);
    }
    let mut ledger = TimeLedger::new(clients);
    for (happening, at) in run.log.iter().zip(&run.at) {
        ledger.observe(at.as_micros() as u64, happening);
    }
    Ok((figures, ledger.into_figures(None, None)))
}

/// Run every row's cell `runs` times on the real server at
/// `connect_string` (fault-free, `compare`'s workload with `hold_ticks`),
/// one run at a time, and attach the figures. `say` hears one line per run.
pub fn measure_real(
    rows: &mut [Row],
    connect_string: &str,
    runs: u64,
    hold_ticks: u64,
    mut say: impl FnMut(&str),
) -> Result<(), String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for row in rows.iter_mut() {
        let mut workload = scenario(&row.recipe, row.clients, false).workload;
        workload.hold_ticks = hold_ticks;
        let mut real = RealFigures {
            figures: Tally::default(),
            time: TimeFigures::default(),
        };
        for run in 0..runs {
            let root = format!(
                "/zkcheck-compare-{stamp}-{}-{}-{run}",
                row.recipe, row.clients
            );
            let timeout = Duration::from_secs(60 + 2 * row.clients as u64);
            let (f, t) = run_real(
                connect_string,
                &row.recipe,
                row.clients,
                workload,
                &root,
                timeout,
            )?;
            say(&format!(
                "real: {} × {} run {}: {:.2} wakeups/acq, {:.2} requests/acq, {:.0} ms",
                row.recipe,
                row.clients,
                run + 1,
                f.wakeups_per_acquisition(),
                f.requests_per_acquisition(),
                t.mean_total_ms()
            ));
            real.figures.merge(&f);
            real.time.merge(&t);
        }
        row.real = Some(real);
    }
    Ok(())
}
