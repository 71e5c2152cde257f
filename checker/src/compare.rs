//! `zkcheck compare`: the naive lock and the predecessor-watch lock side by
//! side, at several client counts, measured over many seeded timed runs.
//!
//! Each (recipe, client count) cell runs seeds `first_seed ..
//! first_seed + seeds` through [`run_timed`] (the calibrated timing model of
//! [`crate::timing`]: a herd costs server time, and everyone waits), in
//! parallel with rayon. The cell's figures are merged in seed order; since
//! [`Figures::merge`] and [`TimeFigures::merge`] are exact (sums and
//! histograms), the table is the same on any number of threads. Runs are
//! measured, not judged: no property is hard, so a herd or a FIFO overtake
//! is counted and the run goes on to its end.
//!
//! With `--real`, every cell also runs on a real ZooKeeper (the real-server
//! example's workload through `zkrecipes::real`), and the same figures sit
//! beside the simulated ones ([`real_table`]).

use std::fmt::Write as _;

use rayon::prelude::*;
use zksim::FaultBudget;

use crate::monitor::{Figures, Property};
use crate::progress::{Display, Progress};
use crate::scenario::Scenario;
use crate::timing::{run_timed, TimeFigures, Timing};

/// The two recipes the headline compares.
pub const HEADLINE: [&str; 2] = ["naive", "sequential"];

/// What to compare and how hard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareConfig {
    pub recipes: Vec<String>,
    pub clients: Vec<usize>,
    /// Inject connection drops and session expiries.
    pub faults: bool,
    /// Seeded runs per cell.
    pub seeds: u64,
    pub first_seed: u64,
    /// The timing model of every simulated run.
    pub timing: Timing,
    /// How long a holder keeps the lock, in ticks (`--hold-ticks`).
    pub hold_ticks: u64,
}

impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            recipes: HEADLINE.iter().map(|r| r.to_string()).collect(),
            clients: vec![2, 4, 8, 16, 32, 64],
            faults: false,
            seeds: 8,
            first_seed: 0,
            timing: Timing::default(),
            hold_ticks: zkrecipes::Workload::default().hold_ticks,
        }
    }
}

/// One cell of the table: a recipe at a client count, over all its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub recipe: String,
    pub clients: usize,
    pub figures: Figures,
    /// What the runs cost in model time.
    pub time: TimeFigures,
    /// The same cell on a real server (`--real`).
    pub real: Option<RealFigures>,
}

/// A cell's figures measured on a real ZooKeeper (wall-clock times).
#[derive(Clone, Debug, PartialEq)]
pub struct RealFigures {
    pub figures: Figures,
    pub time: TimeFigures,
}

/// The scenario a compared run uses: `clients` clients, one round each,
/// bounds wide enough for every client to finish, every lock property
/// measured and none hard, on one server — the shape of the real server
/// the timing model was calibrated on and `--real` runs on.
pub fn scenario(recipe: &str, clients: usize, faults: bool) -> Scenario {
    scenario_timed(recipe, clients, faults, Timing::default())
}

/// [`scenario`] under the timing model `timing`.
pub fn scenario_timed(recipe: &str, clients: usize, faults: bool, timing: Timing) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
    s.ensemble.servers = 1;
    s.timing = timing;
    s.hard = Vec::new();
    s.report = vec![
        Property::MutualExclusion,
        Property::FencedExclusion,
        Property::Fifo,
        Property::NoHerd,
        Property::Liveness,
        Property::NoLeaks,
    ];
    s.explore.max_steps = s.explore.max_steps.max(400 * clients);
    s.ensemble.max_time = s.ensemble.max_time.max(40 * clients as u64);
    if faults {
        s.faults = FaultBudget {
            connection_drops: 2,
            expiries: 1,
            ..FaultBudget::default()
        };
    }
    s
}

/// Run every cell. Rows come out recipe-major, in the config's order.
pub fn compare(config: &CompareConfig) -> Result<Vec<Row>, String> {
    compare_with(config, &Progress::hidden()).map(|(rows, _)| rows)
}

/// [`compare`] reporting each run to `progress`, on the current rayon pool.
/// Stops early if `progress` says so; the `bool` says whether every run was made.
pub fn compare_with(
    config: &CompareConfig,
    progress: &Progress,
) -> Result<(Vec<Row>, bool), String> {
    let mut cells = Vec::new();
    for recipe in &config.recipes {
        for &clients in &config.clients {
            let mut s = scenario_timed(recipe, clients, config.faults, config.timing);
            s.workload.hold_ticks = config.hold_ticks;
            s.validate().map_err(|e| e.to_string())?;
            cells.push((recipe.clone(), clients, s));
        }
    }
    let jobs: Vec<(usize, u64)> = (0..cells.len())
        .flat_map(|cell| (0..config.seeds).map(move |i| (cell, config.first_seed.wrapping_add(i))))
        .collect();
    let figures: Vec<Option<(usize, Figures, TimeFigures)>> = jobs
        .par_iter()
        .map(|&(cell, seed)| {
            if progress.stopped().is_some() {
                return None;
            }
            let (outcome, time) = run_timed(&cells[cell].2, seed);
            progress.inc(1);
            Some((cell, outcome.figures, time))
        })
        .collect();
    let mut rows: Vec<Row> = cells
        .iter()
        .map(|(recipe, clients, _)| Row {
            recipe: recipe.clone(),
            clients: *clients,
            figures: Figures::default(),
            time: TimeFigures::default(),
            real: None,
        })
        .collect();
    let complete = figures.iter().all(Option::is_some);
    for (cell, f, t) in figures.iter().flatten() {
        rows[*cell].figures.merge(f);
        rows[*cell].time.merge(t);
    }
    Ok((rows, complete))
}

/// `zkcheck compare`: print the table; with `--report DIR`, write the report too.
pub fn cli(args: &crate::cli::CompareArgs, io: &mut crate::cli::Io) -> crate::cli::Exit {
    use crate::cli::{bad_input, Exit};
    use crate::limits as l;
    let mut clients = args.clients.clone();
    clients.sort_unstable();
    clients.dedup();
    let checked = (|| -> Result<usize, String> {
        for &c in &clients {
            l::CLIENTS.named("--clients").check_usize(c)?;
        }
        l::COMPARE_CLIENT_COUNTS.check_usize(clients.len())?;
        l::COMPARE_SEEDS.check(args.seeds)?;
        l::check_seed_range(args.seed, args.seeds, "--seed")?;
        match args.jobs {
            Some(j) => l::JOBS.check_usize(j),
            None => Ok(l::default_jobs()),
        }
    })();
    let jobs = match checked {
        Ok(j) => j,
        Err(e) => return bad_input(io, e),
    };
    if let Some(dir) = &args.report {
        if let Err(e) = crate::report::check_dir(dir) {
            return bad_input(io, e);
        }
    }
    if args.real && args.faults == crate::cli::FaultsPreset::Default {
        return bad_input(
            io,
            "`--real` compares fault-free runs only (the real server's runs inject no faults); \
             drop `--faults default` or `--real`",
        );
    }
    if let Err(e) = l::HOLD_TICKS.named("--hold-ticks").check(args.hold_ticks) {
        return bad_input(io, e);
    }
    if let Err(e) = l::REAL_RUNS.check(args.real_runs) {
        return bad_input(io, e);
    }
    let timing = match &args.timing {
        None => Timing::default(),
        Some(path) => match crate::scenario::timing_from_file(path) {
            Ok(t) => t,
            Err(e) => return bad_input(io, e),
        },
    };
    let config = CompareConfig {
        clients,
        faults: args.faults == crate::cli::FaultsPreset::Default,
        seeds: args.seeds,
        first_seed: args.seed,
        timing,
        hold_ticks: args.hold_ticks,
        ..CompareConfig::default()
    };
    crate::stop::install_signal_handler();
    let total = (config.recipes.len() * config.clients.len()) as u64 * config.seeds;
    let progress = Progress::counting(Some(total), "runs", Display::for_stderr(args.quiet));
    let run = || compare_with(&config, &progress);
    let result = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    progress.finish();
    let (mut rows, complete) = match result {
        Ok(r) => r,
        Err(e) => return bad_input(io, e),
    };
    if !complete {
        let why = progress
            .stop()
            .reason()
            .map_or_else(|| "stopped".to_string(), |r| r.to_string());
        crate::cli::say!(io, "{}", table(&rows));
        crate::cli::say!(
            io,
            "INCOMPLETE: {why}; the table above counts only the runs made (see its runs column)"
        );
        return Exit::Incomplete;
    }
    let mut real_missing = None;
    if args.real {
        if let Err(why) = real_columns(args, &mut rows, io) {
            real_missing = Some(why);
        }
    }
    let _ = std::io::Write::write_all(&mut io.out, table(&rows).as_bytes());
    if rows.iter().any(|r| r.real.is_some()) {
        let _ = std::io::Write::write_all(&mut io.out, b"\nSimulated vs real server:\n\n");
        let _ = std::io::Write::write_all(&mut io.out, real_table(&rows).as_bytes());
    }
    if let Some(dir) = &args.report {
        match crate::report::write_compare(dir, &config, &rows) {
            Ok(paths) => {
                for p in paths {
                    crate::cli::say!(io, "wrote {}", p.display());
                }
            }
            Err(e) => return bad_input(io, e),
        }
    }
    if let Some(why) = real_missing {
        crate::cli::say!(io, "INCOMPLETE: `--real` asked for, but {why}");
        return Exit::Incomplete;
    }
    Exit::Ok
}

/// `--real`: start (or reach) the server and measure every cell on it.
/// `Err` says why there are no real columns (no ZooKeeper here, a server
/// that did not start, a run that failed).
fn real_columns(
    args: &crate::cli::CompareArgs,
    rows: &mut [Row],
    io: &mut crate::cli::Io,
) -> Result<(), String> {
    use zkrecipes::real::{TestServer, Unavailable};
    let (server, connect_string) = match &args.real_server {
        Some(address) => (None, address.clone()),
        None => match TestServer::start() {
            Ok(server) => {
                let cs = server.connect_string();
                (Some(server), cs)
            }
            Err(e @ Unavailable::NotInstalled { .. }) => {
                let why = format!(
                    "SKIPPED the real server: {e} (install Debian's `zookeeper` or set {})",
                    zkrecipes::real::CLASSPATH_ENV
                );
                crate::cli::say!(io, "{why}");
                return Err(why);
            }
            Err(e) => return Err(e.to_string()),
        },
    };
    let quiet = args.quiet;
    let result = measure_real(
        rows,
        &connect_string,
        args.real_runs,
        args.hold_ticks,
        |line| {
            if !quiet {
                eprintln!("{line}");
            }
        },
    );
    drop(server);
    result
}

/// The comparison as a Markdown table: the herd's cost in wakeups,
/// requests and notifications, and in model time (acquisition latency, the
/// run's total time, the busiest server's busy share).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| recipe | clients | runs | acquisitions | wakeups / acquisition | wakeups / release (max) | \
         wakeups / release (mean) | wasted wakeups | requests / acquisition | notifications / run | \
         latency mean (ms) | latency p99 (ms) | total time (ms) | server busy | FIFO violations | \
         stuck runs |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let f = &r.figures;
        let t = &r.time;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {:.2} | {:.1} | {:.1} | {:.1} | {:.0} | {} | {} | {} |",
            r.recipe,
            r.clients,
            f.runs,
            f.acquisitions,
            f.wakeups_per_acquisition(),
            f.max_wakeups_per_release(),
            f.mean_wakeups_per_release(),
            f.wasted_wakeups,
            f.requests_per_acquisition(),
            t.notifications_per_run(),
            t.mean_latency_ms(),
            t.p99_latency_ms(),
            t.mean_total_ms(),
            percent(t.busy_fraction()),
            f.fifo_violations,
            f.stuck_runs,
        );
    }
    out
}

fn percent(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "—".to_string(), |f| format!("{:.0} %", 100.0 * f))
}

/// How far `sim` is from `real`, relative to `real`, in percent.
pub fn gap_percent(sim: f64, real: f64) -> f64 {
    if real == 0.0 {
        if sim == 0.0 {
            0.0
        } else {
            100.0
        }
    } else {
        100.0 * (sim - real) / real
    }
}

/// Simulated and real figures of the cells that have both, side by side;
/// the gaps of the two discrete figures (wakeups and requests per
/// acquisition) in percent of the real value.
pub fn real_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| recipe | clients | real runs | wakeups / acq: sim | real | gap | requests / acq: sim | real | gap | \
         wakeups / release (mean): sim | real | notifications / run: sim | real | \
         latency mean (ms): sim | real | latency p99 (ms): sim | real | total time (ms): sim | real | \
         server busy: sim | real |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let Some(real) = &r.real else { continue };
        let (f, t, rf, rt) = (&r.figures, &r.time, &real.figures, &real.time);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} | {:.2} | {:+.1} % | {:.2} | {:.2} | {:+.1} % | {:.2} | {:.2} | {:.1} | {:.1} | \
             {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0} | {} | {} |",
            r.recipe,
            r.clients,
            rf.runs,
            f.wakeups_per_acquisition(),
            rf.wakeups_per_acquisition(),
            gap_percent(f.wakeups_per_acquisition(), rf.wakeups_per_acquisition()),
            f.requests_per_acquisition(),
            rf.requests_per_acquisition(),
            gap_percent(f.requests_per_acquisition(), rf.requests_per_acquisition()),
            f.mean_wakeups_per_release(),
            rf.mean_wakeups_per_release(),
            t.notifications_per_run(),
            rt.notifications_per_run(),
            t.mean_latency_ms(),
            rt.mean_latency_ms(),
            t.p99_latency_ms(),
            rt.p99_latency_ms(),
            t.mean_total_ms(),
            rt.mean_total_ms(),
            percent(t.busy_fraction()),
            percent(rt.busy_fraction()),
        );
    }
    out
}

/// Run every row's cell `runs` times on the real server at
/// `connect_string` (fault-free, the scenario's workload), one run at a
/// time, and attach the figures. `say` hears one line per run.
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
            figures: Figures::default(),
            time: TimeFigures::default(),
        };
        for run in 0..runs {
            let root = format!(
                "/zkcheck-compare-{stamp}-{}-{}-{run}",
                row.recipe, row.clients
            );
            let timeout = std::time::Duration::from_secs(60 + 2 * row.clients as u64);
            let (f, t) = crate::timing::real::run_real(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_cell() {
        let mut f = Figures {
            runs: 2,
            acquisitions: 4,
            wakeups: 6,
            ..Figures::default()
        };
        f.wakeups_per_release.record(3);
        let rows = [Row {
            recipe: "naive".into(),
            clients: 4,
            figures: f,
            time: TimeFigures::default(),
            real: None,
        }];
        let t = table(&rows);
        assert!(t.contains("| naive | 4 | 2 | 4 | 1.50 | 3 | 3.00 |"), "{t}");
    }
}
