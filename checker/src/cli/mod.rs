//! The `zkcheck` command line.
//!
//! Exit codes: 0 — no hard property failed; 1 — a hard property failed
//! (the counterexample and its replay token are printed); 2 — bad input
//! (scenario file, flag or token), with what is wrong and where.

mod check;
mod list;
mod replay;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::scenario::StrategyKind;

/// Model-check ZooKeeper recipes on a deterministic simulated ensemble.
#[derive(Debug, Parser)]
#[command(name = "zkcheck", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explore a scenario's schedules and judge its checks.
    ///
    /// Prints a summary; on a violation, the property, its explanation,
    /// the shrunk trace and a `replay:` token, and exits 1.
    Check(CheckArgs),
    /// Replay a token printed by `check`: the same run, event by event.
    Replay(ReplayArgs),
    /// Compare recipes side by side (naive vs predecessor-watch lock, …).
    Compare(CompareArgs),
    /// List every registered recipe: name, family, origin, summary.
    List,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenario file (TOML; see docs/SCENARIOS.md).
    pub scenario: PathBuf,
    /// Exploration strategy [default: the scenario's `explore.strategy`].
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Random/PCT: how many seeded schedules to run [default: `explore.schedules`].
    #[arg(long)]
    pub schedules: Option<u64>,
    /// Random/PCT: the first seed; seeds S, S+1, … are run [default: `explore.seed`].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads for random/PCT. Results do not depend on it.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// PCT: the bug depth d; BFS/DFS: the longest schedule explored
    /// [default: `explore.pct_depth` / `explore.depth`].
    #[arg(long)]
    pub depth: Option<usize>,
    /// On a violation, also write the counterexample into this directory:
    /// a self-contained HTML viewer, an SVG sequence diagram and a Markdown page.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The token printed after `replay:` by `check`.
    pub token: String,
    /// Print the run's trace, one line per thing that happened.
    #[arg(long)]
    pub trace: bool,
    /// Also write the run as a self-contained HTML viewer (sequence diagram
    /// and the world after each step) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Client counts to compare at, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [2usize, 4, 8, 16, 32, 64])]
    pub clients: Vec<usize>,
    /// Which faults the compared runs inject.
    #[arg(long, value_enum, default_value_t = FaultsPreset::None)]
    pub faults: FaultsPreset,
    /// Seeded random runs per recipe and client count.
    #[arg(long, default_value_t = 8)]
    pub seeds: u64,
    /// The first seed; seeds S, S+1, … are run.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Also write `compare.md` and SVG charts into this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// `--strategy` values: the CLI's own type, so that the library's
/// [`StrategyKind`] does not depend on clap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StrategyArg {
    /// Seeded random schedules with swarm-chosen fault kinds.
    Random,
    /// Probabilistic concurrency testing: random priorities, d−1 change points.
    Pct,
    /// Exhaustive breadth-first search (shortest counterexample).
    Bfs,
    /// Exhaustive depth-first search.
    Dfs,
}

impl From<StrategyArg> for StrategyKind {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Random => StrategyKind::Random,
            StrategyArg::Pct => StrategyKind::Pct,
            StrategyArg::Bfs => StrategyKind::Bfs,
            StrategyArg::Dfs => StrategyKind::Dfs,
        }
    }
}

/// Fault presets for `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaultsPreset {
    /// No faults: the recipes' behaviour on a healthy ensemble.
    None,
    /// Connection losses and session expiries.
    Default,
}

/// Parse the command line, run the command, and map its result to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    run(cli)
}

/// Run a parsed command.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check(args) => check::check(&args),
        Command::Replay(args) => replay::replay(&args),
        Command::Compare(args) => compare(&args),
        Command::List => list::list(),
    }
}

fn compare(args: &CompareArgs) -> ExitCode {
    crate::compare::cli(args)
}

/// Print an input error and return exit code 2.
pub(crate) fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
