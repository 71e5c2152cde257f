//! `zkcheck compare`: the naive lock and the predecessor-watch lock side by
//! side, at several client counts, measured over many seeded timed runs.
//!
//! Each (recipe, client count) cell runs seeds `first_seed ..
//! first_seed + seeds` through [`run_timed`] (the calibrated timing model of
//! [`crate::timing`]: a herd costs server time, and everyone waits), in
//! parallel with rayon. The cell's figures are merged in seed order; since
//! [`Tally::merge`] and [`TimeFigures::merge`] are exact (sums and
//! histograms), the table is the same on any number of threads. Runs are
//! measured, not judged: no property is hard, so a herd or a FIFO overtake
//! is counted and the run goes on to its end.
//!
//! A [`Row`] may also carry the same figures measured on a real ZooKeeper
//! ([`RealFigures`], shown by [`real_table`]): the checker itself never
//! talks to a server (it builds without tokio); `zkreal`'s `compare`
//! example runs the real cells and writes the report with both.

use std::fmt::Write as _;

use rayon::prelude::*;
use zksim::FaultBudget;

use zkcheck::monitor::Tally;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Invalid, Scenario, Timing};

use crate::timing::{run_timed_until, TimeFigures, TICK_US};

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
    /// A step bound to use instead of the derived [`step_bound`] (tests
    /// use it to cut runs short on purpose); `None`: derived.
    pub max_steps: Option<usize>,
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
            max_steps: None,
        }
    }
}

/// One cell of the table: a recipe at a client count, over all its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub recipe: String,
    pub clients: usize,
    pub figures: Tally,
    /// What the runs cost in model time.
    pub time: TimeFigures,
    /// The same cell on a real server (`zkreal`'s `compare` example).
    pub real: Option<RealFigures>,
    /// Runs cut at `explore.max_steps` before their natural end: their
    /// figures describe unfinished runs, and every table, report and chart
    /// that shows the cell says so ([`run_bounds`] makes this rare).
    pub cut_runs: u64,
    /// Runs the clock cut at `ensemble.max_time` with work left (a holder
    /// still holding, a waiter still waiting): not every client finished
    /// its rounds, so these figures, too, describe unfinished runs.
    pub clock_cut_runs: u64,
}

impl Row {
    /// The runs column: the count, and how many of them were cut short.
    pub fn runs_text(&self) -> String {
        let mut cut = Vec::new();
        if self.cut_runs > 0 {
            cut.push(format!("{} cut at max_steps", self.cut_runs));
        }
        if self.clock_cut_runs > 0 {
            cut.push(format!("{} cut by the clock", self.clock_cut_runs));
        }
        if cut.is_empty() {
            self.figures.runs.to_string()
        } else {
            format!("{} ({})", self.figures.runs, cut.join(", "))
        }
    }

    /// Runs of this cell that did not reach their end.
    pub fn unfinished_runs(&self) -> u64 {
        self.cut_runs.saturating_add(self.clock_cut_runs)
    }
}

/// Whether any cell has a run that was cut short.
pub fn any_cut(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.unfinished_runs() > 0)
}

/// One sentence naming every cell with runs cut short (empty if none).
pub fn truncation_note(rows: &[Row]) -> String {
    let cells: Vec<String> = rows
        .iter()
        .filter(|r| r.unfinished_runs() > 0)
        .map(|r| {
            format!(
                "{} at {} clients ({} of {} runs)",
                r.recipe,
                r.clients,
                r.unfinished_runs(),
                r.figures.runs
            )
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    format!(
        "TRUNCATED: runs were cut before every client finished its rounds (at \
         explore.max_steps or by the clock at ensemble.max_time) in {}; the figures of those \
         cells describe unfinished runs",
        cells.join(", ")
    )
}

/// A cell's figures measured on a real ZooKeeper (wall-clock times).
#[derive(Clone, Debug, PartialEq)]
pub struct RealFigures {
    pub figures: Tally,
    pub time: TimeFigures,
}

/// The scenario a compared run uses: `clients` clients, one round each,
/// bounds wide enough for every client to finish, every lock property
/// measured and none hard, on one server — the shape of the real server
/// the timing model was calibrated on and the real cells run on.
pub fn scenario(recipe: &str, clients: usize, faults: bool) -> Scenario {
    scenario_timed(recipe, clients, faults, Timing::default())
}

/// [`scenario`] under the timing model `timing`.
pub fn scenario_timed(recipe: &str, clients: usize, faults: bool, timing: Timing) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
    s.ensemble.servers = 1;
    s.timing = timing;
    s.hard = Vec::new();
    // Every property a lock can be judged on that counts something
    // (mutex, fenced-mutex, fifo, herd, liveness, leaks), in catalogue order.
    s.report = zkcheck::monitor::catalogue::measured(zkrecipes::Family::Lock);
    run_bounds(&mut s);
    if faults {
        s.faults = FaultBudget {
            connection_drops: 2,
            expiries: 1,
            ..FaultBudget::default()
        };
    }
    s
}

/// Steps a compared run takes at most for one acquisition besides its
/// herd: a create, a listing or two, watches, replies, the hold's ticks,
/// faults and reconnects (the sequential lock takes about 6 requests and
/// 12 steps; the margin covers retries after faults).
pub const STEPS_PER_ACQUISITION: usize = 400;
/// Steps one release can cost per other client: a herd wakes every waiter,
/// and each woken waiter handles the notification, sends a create, handles
/// its failure, sends an `exists` and handles that reply (5 steps, one
/// request taken per send; 8 leaves room for reconnects under faults).
pub const STEPS_PER_WOKEN_WAITER: usize = 8;

/// The step bound of a compared run, derived from its workload: `clients ×
/// rounds` acquisitions, each costing at most [`STEPS_PER_ACQUISITION`]
/// plus [`STEPS_PER_WOKEN_WAITER`] for every other client a herd may wake
/// (the naive lock's release is O(N), so its run is O(N²) steps). A fixed
/// bound would silently cut large runs short: the naive lock at 1,000
/// clients takes about 2.5 million steps.
pub fn step_bound(clients: usize, rounds: u32) -> usize {
    let per_acquisition =
        STEPS_PER_ACQUISITION.saturating_add(STEPS_PER_WOKEN_WAITER.saturating_mul(clients));
    clients
        .saturating_mul(rounds as usize)
        .saturating_mul(per_acquisition)
}

/// Ticks a compared run needs at most besides its holds and thinks: the
/// model time of every step [`step_bound`] allows, each costing at most
/// every latency and service time of the timing model once (stretched by
/// its jitter), in whole ticks; and never less than the former 40 ticks
/// per client.
pub fn work_ticks(clients: usize, rounds: u32, timing: &Timing) -> u64 {
    let t = timing;
    let per_step_us = [
        t.latency_us.saturating_mul(2),
        t.peer_latency_us.saturating_mul(2),
        t.read_us,
        t.write_us,
        t.commit_delay_us,
        t.notify_us,
        t.apply_us,
        t.client_us,
    ]
    .iter()
    .fold(0u64, |sum, &us| sum.saturating_add(us))
    .saturating_mul(100 + t.jitter_percent)
        / 100;
    let steps = step_bound(clients, rounds) as u64;
    let us = steps.saturating_mul(per_step_us.max(1));
    (us / TICK_US + 1).max(40u64.saturating_mul(clients as u64))
}

/// Set a compared scenario's run-length bounds from its workload and
/// timing model, so that every client can finish its rounds: the holds
/// and thinks run one after another (a lock has one holder), each tick a
/// step of the run, on top of the work [`step_bound`] and [`work_ticks`]
/// bound. Both are kept within their documented limits; a workload past
/// them is cut (and the comparison says so, exit 3) rather than refused.
pub fn run_bounds(s: &mut Scenario) {
    use zkcheck::limits as l;
    let clients = s.clients;
    let rounds = s.workload.rounds;
    let acquisitions = (clients as u64).saturating_mul(u64::from(rounds));
    let idle = acquisitions.saturating_mul(
        s.workload
            .hold_ticks
            .saturating_add(s.workload.think_ticks)
            .saturating_add(1),
    );
    let ticks = idle.saturating_add(work_ticks(clients, rounds, &s.timing));
    s.ensemble.max_time = s.ensemble.max_time.max(ticks).min(l::MAX_TIME.max);
    let steps = (step_bound(clients, rounds) as u64).saturating_add(s.ensemble.max_time);
    let steps = usize::try_from(steps.min(l::MAX_STEPS.max)).unwrap_or(usize::MAX);
    s.explore.max_steps = s.explore.max_steps.max(steps);
}

/// A cell the comparison cannot run: its scenario is refused (a client
/// count past the limits, a recipe that is not registered, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareError {
    pub recipe: String,
    pub clients: usize,
    pub invalid: Invalid,
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot compare {} at {} clients: {}",
            self.recipe, self.clients, self.invalid
        )
    }
}

impl std::error::Error for CompareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.invalid)
    }
}

/// One run of a cell: the cell's index, its figures and times, and
/// whether it was cut at its step bound or by the clock.
type CellRun = (usize, Tally, TimeFigures, bool, bool);

/// Run every cell. Rows come out recipe-major, in the config's order.
pub fn compare(config: &CompareConfig) -> Result<Vec<Row>, CompareError> {
    compare_with(config, &Progress::hidden()).map(|(rows, _)| rows)
}

/// [`compare`] reporting each run to `progress`, on the current rayon pool.
/// Stops early if `progress` says so; the `bool` says whether every run was made.
pub fn compare_with(
    config: &CompareConfig,
    progress: &Progress,
) -> Result<(Vec<Row>, bool), CompareError> {
    let mut cells = Vec::new();
    for recipe in &config.recipes {
        for &clients in &config.clients {
            let mut s = scenario_timed(recipe, clients, config.faults, config.timing);
            s.workload.hold_ticks = config.hold_ticks;
            run_bounds(&mut s);
            if let Some(steps) = config.max_steps {
                s.explore.max_steps = steps;
            }
            // Measured, never judged (no check is hard): every rule but
            // the one that a judged scenario must be able to fail.
            s.validate_for_figures().map_err(|invalid| CompareError {
                recipe: recipe.clone(),
                clients,
                invalid,
            })?;
            cells.push((recipe.clone(), clients, s));
        }
    }
    let jobs: Vec<(usize, u64)> = (0..cells.len())
        .flat_map(|cell| (0..config.seeds).map(move |i| (cell, config.first_seed.wrapping_add(i))))
        .collect();
    // Read inside each run too: one run of a thousand clients takes
    // seconds, and a signal must end the comparison well within one.
    let stop = || progress.stopped().is_some();
    let figures: Vec<Option<CellRun>> = jobs
        .par_iter()
        .map(|&(cell, seed)| {
            if stop() {
                return None;
            }
            let ((outcome, time), stopped) = run_timed_until(&cells[cell].2, seed, &stop);
            if stopped {
                return None;
            }
            progress.inc(1);
            Some((cell, outcome.figures, time, outcome.cut, outcome.clock_cut))
        })
        .collect();
    let mut rows: Vec<Row> = cells
        .iter()
        .map(|(recipe, clients, _)| Row {
            recipe: recipe.clone(),
            clients: *clients,
            figures: Tally::default(),
            time: TimeFigures::default(),
            real: None,
            cut_runs: 0,
            clock_cut_runs: 0,
        })
        .collect();
    let complete = figures.iter().all(Option::is_some);
    for (cell, f, t, cut, clock_cut) in figures.iter().flatten() {
        rows[*cell].figures.merge(f);
        rows[*cell].time.merge(t);
        rows[*cell].cut_runs += u64::from(*cut);
        rows[*cell].clock_cut_runs += u64::from(*clock_cut);
    }
    Ok((rows, complete))
}

/// The comparison as a Markdown table: the herd's cost in wakeups,
/// requests and notifications, and in model time (acquisition latency, the
/// run's total time, the busiest server's busy share).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| recipe | clients | runs | acquisitions | wakeups / acquisition | wakeups / lock write (max) | \
         wakeups / lock write (mean) | wasted wakeups | requests / acquisition | notifications / run | \
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
            r.runs_text(),
            f.acquisitions,
            f.wakeups_per_acquisition(),
            f.max_wakeups_per_write(),
            f.mean_wakeups_per_write(),
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
         wakeups / lock write (mean): sim | real | notifications / run: sim | real | \
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
            f.mean_wakeups_per_write(),
            rf.mean_wakeups_per_write(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_cell() {
        let mut f = Tally {
            runs: 2,
            acquisitions: 4,
            wakeups: 6,
            ..Tally::default()
        };
        f.wakeups_per_release.record(1);
        f.wakeups_per_write.record(1);
        f.wakeups_per_write.record(3);
        let rows = [Row {
            recipe: "naive".into(),
            clients: 4,
            figures: f,
            time: TimeFigures::default(),
            real: None,
            cut_runs: 0,
            clock_cut_runs: 0,
        }];
        let t = table(&rows);
        assert!(t.contains("| naive | 4 | 2 | 4 | 1.50 | 3 | 2.00 |"), "{t}");
        assert!(t.contains("wakeups / lock write (max)"), "{t}");
    }

    fn naive(clients: usize, max_steps: Option<usize>) -> Row {
        let config = CompareConfig {
            recipes: vec!["naive".into()],
            clients: vec![clients],
            seeds: 1,
            max_steps,
            ..CompareConfig::default()
        };
        compare(&config).unwrap().remove(0)
    }

    #[test]
    fn a_run_cut_at_its_step_bound_is_reported_truncated_everywhere() {
        let row = naive(8, Some(60));
        assert_eq!(row.cut_runs, 1);
        assert!(row.figures.acquisitions < 8, "{:?}", row.figures);
        let rows = [row];
        assert!(any_cut(&rows));
        assert!(table(&rows).contains("| naive | 8 | 1 (1 cut at max_steps) |"));
        let note = truncation_note(&rows);
        assert!(note.starts_with("TRUNCATED") && note.contains("naive at 8 clients (1 of 1 runs)"));
        let md = crate::report::markdown(&CompareConfig::default(), &rows);
        assert!(md.contains(&note), "{md}");
    }

    #[test]
    fn the_derived_step_bound_lets_the_naive_herd_finish_where_400_per_client_did_not() {
        // The naive lock's run is O(N²) steps: at 200 clients the former
        // fixed bound of 400 steps per client cut it short, silently.
        let n = 200;
        let old = naive(n, Some(400 * n));
        assert_eq!(old.cut_runs, 1);
        assert!(old.figures.acquisitions < n as u64);
        let scaled = naive(n, None);
        assert_eq!(scaled.cut_runs, 0);
        assert_eq!(scaled.figures.acquisitions, n as u64);
        assert!(!any_cut(&[scaled]));
        assert!(step_bound(n, 1) > 400 * n);
    }

    #[test]
    fn a_cell_the_limits_refuse_is_a_typed_error_naming_it() {
        let config = CompareConfig {
            clients: vec![0],
            seeds: 1,
            ..CompareConfig::default()
        };
        let err = compare(&config).unwrap_err();
        assert_eq!((err.recipe.as_str(), err.clients), ("naive", 0));
        assert!(
            matches!(&err.invalid, Invalid::Limits(m) if m.contains("`clients` = 0")),
            "{err:?}"
        );
        assert!(err.to_string().contains("naive at 0 clients"), "{err}");
        assert!(std::error::Error::source(&err).is_some());
    }
}
