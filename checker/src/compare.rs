//! `zkcheck compare`: the naive lock and the predecessor-watch lock side by
//! side, at several client counts, measured over many seeded random runs.
//!
//! Each (recipe, client count) cell runs seeds `first_seed ..
//! first_seed + seeds` through [`run_random`], in parallel with rayon. The
//! cell's figures are merged in seed order; since [`Figures::merge`] is exact
//! (sums and histograms), the table is the same on any number of threads.
//! Runs are measured, not judged: no property is hard, so a herd or a FIFO
//! overtake is counted and the run goes on to its end.

use std::fmt::Write as _;

use rayon::prelude::*;
use zksim::FaultBudget;

use crate::monitor::{Figures, Property};
use crate::run::run_random;
use crate::scenario::Scenario;

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
}

impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            recipes: HEADLINE.iter().map(|r| r.to_string()).collect(),
            clients: vec![2, 4, 8, 16, 32, 64],
            faults: false,
            seeds: 8,
            first_seed: 0,
        }
    }
}

/// One cell of the table: a recipe at a client count, over all its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub recipe: String,
    pub clients: usize,
    pub figures: Figures,
}

/// The scenario a compared run uses: `clients` clients, one round each,
/// bounds wide enough for every client to finish, every lock property
/// measured and none hard.
pub fn scenario(recipe: &str, clients: usize, faults: bool) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
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
    let mut cells = Vec::new();
    for recipe in &config.recipes {
        for &clients in &config.clients {
            let s = scenario(recipe, clients, config.faults);
            s.validate().map_err(|e| e.to_string())?;
            cells.push((recipe.clone(), clients, s));
        }
    }
    let jobs: Vec<(usize, u64)> = (0..cells.len())
        .flat_map(|cell| (0..config.seeds).map(move |i| (cell, config.first_seed + i)))
        .collect();
    let figures: Vec<(usize, Figures)> = jobs
        .par_iter()
        .map(|&(cell, seed)| (cell, run_random(&cells[cell].2, seed).figures))
        .collect();
    let mut rows: Vec<Row> = cells
        .iter()
        .map(|(recipe, clients, _)| Row {
            recipe: recipe.clone(),
            clients: *clients,
            figures: Figures::default(),
        })
        .collect();
    for (cell, f) in &figures {
        rows[*cell].figures.merge(f);
    }
    Ok(rows)
}

/// `zkcheck compare`: print the table; with `--report DIR`, write the report too.
pub fn cli(args: &crate::cli::CompareArgs) -> std::process::ExitCode {
    if args.clients.is_empty() || args.clients.contains(&0) {
        return crate::cli::bad_input("`--clients` needs client counts of at least 1");
    }
    if args.seeds == 0 {
        return crate::cli::bad_input("`--seeds` must be at least 1");
    }
    let config = CompareConfig {
        clients: args.clients.clone(),
        faults: args.faults == crate::cli::FaultsPreset::Default,
        seeds: args.seeds,
        first_seed: args.seed,
        ..CompareConfig::default()
    };
    let rows = match compare(&config) {
        Ok(rows) => rows,
        Err(e) => return crate::cli::bad_input(e),
    };
    print!("{}", table(&rows));
    if let Some(dir) = &args.report {
        match crate::report::write_compare(dir, &config, &rows) {
            Ok(paths) => {
                for p in paths {
                    println!("wrote {}", p.display());
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    std::process::ExitCode::SUCCESS
}

/// The comparison as a Markdown table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| recipe | clients | runs | acquisitions | wakeups / acquisition | wakeups / release (max) | \
         wakeups / release (mean) | wasted wakeups | requests / acquisition | latency mean (ticks) | \
         latency p99 (ticks) | FIFO violations | stuck runs |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let f = &r.figures;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {:.2} | {:.1} | {} | {} | {} |",
            r.recipe,
            r.clients,
            f.runs,
            f.acquisitions,
            f.wakeups_per_acquisition(),
            f.max_wakeups_per_release(),
            f.mean_wakeups_per_release(),
            f.wasted_wakeups,
            f.requests_per_acquisition(),
            f.mean_latency(),
            f.p99_latency(),
            f.fifo_violations,
            f.stuck_runs,
        );
    }
    out
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
        }];
        let t = table(&rows);
        assert!(t.contains("| naive | 4 | 2 | 4 | 1.50 | 3 | 3.00 |"), "{t}");
    }
}
