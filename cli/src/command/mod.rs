//! The `zkcheck` command line.
//!
//! Exit codes ([`Exit`]): 0 — every hard check held on a complete
//! exploration; 1 — a hard check failed (the counterexample and its replay
//! token are printed); 2 — bad input (scenario file, flag or token), with
//! what is wrong and where; 3 — incomplete: the exploration ended before it
//! explored what it was asked to (state cap, memory budget, time limit,
//! interrupt, runs cut at `max_steps`, by the clock where a hard check
//! judges a run's end, or at the search's depth, a replayed schedule that
//! ran out, nothing explored: `zkcheck::verdict::Coverage`), and the
//! summary says which.
//!
//! [`run`] is the whole command as a function of its arguments and two
//! writers, so tests drive it in-process exactly as the binary does.

mod check;
mod compare;
mod figures;
mod io;
mod judge;
mod list;
mod merge;
mod options;
mod replay;
mod runs;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use zkcheck::scenario::Search;
use zkrecipes::{AnyRecipe, RecipeSet};

pub(crate) use io::say;
pub use io::Io;

/// Model-check ZooKeeper recipes on a deterministic simulated ensemble.
#[derive(Debug, Parser)]
#[command(name = "zkcheck", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok (complete), 1 violation, 2 bad input, 3 incomplete (also a \
                  second signal more than 2 s after the first, which ends the process at once)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. Another crate's subcommand (a server, say) is two
/// lines: a variant holding its clap `Args` type, `Serve(zkserve::Args)`,
/// and an arm in [`dispatch`] turning its `run(args) -> ExitCode` into
/// [`Exit::Code`]: `Command::Serve(a) => Exit::Code(zkserve::run(a))`.
/// This crate (not the engine) may depend on such crates, tokio or not.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explore a scenario's schedules and judge its checks.
    ///
    /// Prints a summary; on a violation, the property, its explanation,
    /// the shrunk trace and a `replay:` token, and exits 1. Exits 3 if the
    /// exploration ended early (time limit, memory budget, state cap,
    /// Ctrl-C), some run was cut at `max_steps`, by the clock at `max_time`
    /// where a hard check judges a run's end, or a search at its depth:
    /// "ok" is only said of a complete exploration.
    Check(CheckArgs),
    /// Replay a token printed by `check`: the same run, event by event.
    Replay(ReplayArgs),
    /// Combine the `--json` results of `check --shard k/n` into one verdict.
    ///
    /// The smallest failing seed over all shards wins (its counterexample
    /// and replay token are the merged ones); schedules, events and
    /// figures are summed as one unsharded run would count them. Refuses
    /// (exit 2) results of different scenarios, strategies or options,
    /// shards given twice or overlapping, malformed JSON. A missing shard
    /// or one stopped early makes the merge incomplete (exit 3), never ok.
    /// Results of merges merge again.
    Merge(MergeArgs),
    /// Compare recipes side by side (naive vs predecessor-watch lock, …).
    Compare(CompareArgs),
    /// List every recipe this binary knows: name, family, origin, summary.
    List,
    /// Serve the simulated ensemble on ZooKeeper 3.8's wire protocol, so
    /// that unmodified clients (zkCli, Curator, kazoo, zookeeper-client)
    /// connect to it.
    ///
    /// The first stdout line is the connect string
    /// (`127.0.0.1:P1,127.0.0.1:P2,...`); logs go to stderr; Ctrl-C or
    /// SIGTERM stops it (exit 0). What is supported and what the server
    /// answers instead is in docs/SERVE.md.
    ///
    /// With `--runs N -- CMD ARGS… {connect}`: run an app N times, each
    /// against a fresh ensemble with the next seed, judge each run's
    /// history and print the violation rate (docs/RUNS.md).
    Serve(ServeCommand),
    /// Judge a history recorded by `zkcheck serve --history FILE`.
    ///
    /// Runs every judge the flags make applicable (docs/JUDGES.md): the
    /// ZooKeeper guarantees always; owner-writes with --lock and
    /// --resource; herd, leaks and liveness with --lock; election with
    /// --leader; queue with --queue and --resource. Each verdict comes with
    /// the records that prove it. Exits 1 on a violation, 2 on an
    /// unreadable history (its line named) or flag, 3 when a judge had
    /// nothing to judge or the history has no `end` record (the run was
    /// cut), 0 only when every judge held over something.
    Judge(JudgeArgs),
}

#[derive(Debug, clap::Args)]
pub struct JudgeArgs {
    /// The history file (JSON lines, written by `zkcheck serve --history`).
    pub history: PathBuf,
    /// The lock path: its children are the contenders.
    #[arg(long, value_name = "/L")]
    pub lock: Option<String>,
    /// The resource path: writes to it or below must be the lock owner's
    /// (the leader's, with --leader); consumers report under it (--queue).
    #[arg(long, value_name = "/R")]
    pub resource: Option<String>,
    /// The election path: its children are the leader candidates.
    #[arg(long, value_name = "/E")]
    pub leader: Option<String>,
    /// The queue path: its children are the items.
    #[arg(long, value_name = "/Q")]
    pub queue: Option<String>,
    /// Print the verdicts as one JSON object (format `zkjudge-verdicts/1`).
    #[arg(long)]
    pub json: bool,
    /// Also write the history as a self-contained HTML page: a swimlane per
    /// session and per server, the cited records marked.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Run only these judges (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Another exclusive contender marker (the name's part before the
    /// 10-digit sequence), besides Curator's, kazoo's and `lock-`.
    #[arg(long, value_name = "TEXT")]
    pub marker: Vec<String>,
    /// Another shared (read) contender marker, besides `__rlock__`, `__READ__`, `read-`.
    #[arg(long, value_name = "TEXT")]
    pub shared_marker: Vec<String>,
}

/// `serve`'s flags: the server's, and those for running an app many times.
#[derive(Debug, clap::Args)]
pub struct ServeCommand {
    #[command(flatten)]
    pub serve: zkserve::cli::ServeArgs,
    #[command(flatten)]
    pub runs: runs::RunsArgs,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenario file (TOML; see docs/SCENARIOS.md); `-` reads standard
    /// input. A regular file or `-`: a FIFO or a device is refused.
    pub scenario: PathBuf,
    /// Exploration strategy [default: the scenario's `explore.strategy`].
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Random/PCT: how many seeded schedules to run, 1 to 10^12 [default: `explore.schedules`].
    #[arg(long)]
    pub schedules: Option<u64>,
    /// Random/PCT: the first seed; seeds S, S+1, … are run [default: `explore.seed`].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads for random/PCT, 1 to 64. Results do not depend on it
    /// [default: the machine's cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// PCT: the bug depth d, 1 to 64; BFS/DFS: the longest schedule
    /// explored, 1 to 100000 [default: `explore.pct_depth` / `explore.depth`].
    /// Random has no depth: giving one is an error.
    #[arg(long)]
    pub depth: Option<usize>,
    /// BFS/DFS: no symmetry reduction — explore every permutation of
    /// interchangeable clients (to compare state counts) [default:
    /// `explore.symmetry`, on where sound].
    #[arg(long)]
    pub no_symmetry: bool,
    /// BFS/DFS: no partial-order reduction — take every interleaving of
    /// steps that commute (to compare event counts) [default:
    /// `explore.por`, on where sound].
    #[arg(long)]
    pub no_por: bool,
    /// DFS: no cycle check — a polling loop that never makes progress is
    /// then not judged (it runs into `max_time`, which cuts it: incomplete,
    /// exit 3, where liveness is hard)
    /// [default: `explore.cycles`, on where liveness is hard].
    #[arg(long)]
    pub no_cycles: bool,
    /// Shrink a counterexample on the scenario as written. By default the
    /// shrinker may also make the scenario smaller (one server, fewer
    /// clients, fewer rounds, shorter hold, think and session times) when
    /// the failure tells the same story there, for a shorter trace (the
    /// token carries the smaller scenario); keep it to see the failure on
    /// your exact topology.
    #[arg(long)]
    pub keep_scenario: bool,
    /// Stop after this long and report what was explored (exit 3): `90`,
    /// `90s`, `15m`, `2h`.
    #[arg(long, value_name = "DURATION")]
    pub time_limit: Option<String>,
    /// BFS/DFS and PCT: stop (exit 3) once the process uses this many MiB
    /// [default: `explore.memory_mb`, else half the machine's available memory].
    #[arg(long, value_name = "MIB")]
    pub memory_mb: Option<u64>,
    /// BFS/DFS: stop (exit 3) after this many distinct states, 1 to 10^11
    /// [default: `explore.max_states`, else 20000000]. The memory budget
    /// still applies: a visited state costs about 35 bytes, the frontier more.
    #[arg(long, value_name = "N")]
    pub max_states: Option<u64>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Random/PCT: run only shard K of N of the seeds (K from 0 to N-1):
    /// the seeds are cut into N contiguous ranges in order, so the N shards
    /// together run exactly the seeds of the unsharded run. Combine their
    /// `--json` results with `zkcheck merge` (see docs/SHARDS.md).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Print the result as one JSON object on stdout (format
    /// `zkcheck-result/1`, docs/SHARDS.md); the human summary goes to stderr.
    #[arg(long)]
    pub json: bool,
    /// On a violation, also write the counterexample into this directory:
    /// a self-contained HTML viewer, an SVG sequence diagram and a Markdown page.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Result files written by `check --json` or `merge --json`; `-` reads
    /// standard input. Each may hold several results, one after another.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the merged result as one JSON object (it merges again).
    #[arg(long)]
    pub json: bool,
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
    /// Client counts to compare at, comma-separated; sorted and deduplicated.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32,64")]
    pub clients: Vec<usize>,
    /// Which faults the compared runs inject.
    #[arg(long, value_enum, default_value_t = FaultsPreset::None)]
    pub faults: FaultsPreset,
    /// Seeded random runs per recipe and client count, 1 to 100000.
    #[arg(long, default_value_t = 8)]
    pub seeds: u64,
    /// The first seed; seeds S, S+1, … are run.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Also write `compare.md` and SVG charts into this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Worker threads, 1 to 64. Results do not depend on it [default: the machine's cores].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// How long each holder keeps the lock, in ticks of 100 ms (the hold
    /// timer fires at the tick boundary: 1 tick holds up to 100 ms, 0
    /// releases at once).
    #[arg(long, default_value_t = 2)]
    pub hold_ticks: u64,
    /// The timing model: a TOML file with a `[timing]` section (what
    /// `zkreal`'s `calibrate` example writes with `--out`) [default: the calibrated defaults].
    #[arg(long, value_name = "FILE")]
    pub timing: Option<PathBuf>,
}

/// `--strategy` values: the CLI's own type, so that the library's
/// [`Search`] does not depend on clap.
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

impl From<StrategyArg> for Search {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Random => Search::Random,
            StrategyArg::Pct => Search::Pct,
            StrategyArg::Bfs => Search::Bfs,
            StrategyArg::Dfs => Search::Dfs,
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

/// How a command ended; the process exit code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exit {
    /// 0: every hard check held, on a complete exploration (or the command had nothing to judge).
    Ok,
    /// 1: a hard check failed.
    Violation,
    /// 2: the input was refused.
    BadInput,
    /// 3: the exploration ended before it explored what it was asked to.
    Incomplete,
    /// The exit code of a subcommand that says its own (one from another
    /// crate, see [`Command`]).
    Code(ExitCode),
}

impl From<zkcheck::verdict::VerdictKind> for Exit {
    /// The one rule's verdict as the process says it (0, 1 or 3).
    fn from(v: zkcheck::verdict::VerdictKind) -> Self {
        match v {
            zkcheck::verdict::VerdictKind::Ok => Exit::Ok,
            zkcheck::verdict::VerdictKind::Violation => Exit::Violation,
            zkcheck::verdict::VerdictKind::Incomplete => Exit::Incomplete,
        }
    }
}

impl Exit {
    /// The exit code as a number, for the four codes zkcheck's own
    /// commands give (`None` for another crate's [`Exit::Code`], which
    /// `std` keeps opaque).
    pub fn number(self) -> Option<u8> {
        match self {
            Exit::Ok => Some(0),
            Exit::Violation => Some(1),
            Exit::BadInput => Some(2),
            Exit::Incomplete => Some(3),
            Exit::Code(_) => None,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        match (e, e.number()) {
            (Exit::Code(code), _) => code,
            (_, n) => ExitCode::from(n.unwrap_or(2)),
        }
    }
}

/// The binary: the process's arguments, stdout and stderr, over the
/// registered recipes.
pub fn main() -> ExitCode {
    main_for::<AnyRecipe>()
}

/// A `zkcheck` of your own over the recipe set `C` (one [`zkrecipes::Recipe`]
/// type, or an enum of yours written by [`zkrecipes::recipe_set!`]): the
/// same commands, flags, output and exit codes, with scenarios and replay
/// tokens naming `C`'s recipes. A token printed by a failing `cargo test`
/// (`zkcheck::check::Check<C>`) replays here, `--trace` and `--html`
/// included; `--shard` and `merge` split and join its sweeps.
///
/// ```no_run
/// zkrecipes::recipe_set! {
///     pub enum MyRecipes { Lock(zkrecipes::lock::SequentialLock) }
/// }
///
/// fn main() -> std::process::ExitCode {
///     zkcheck_cli::command::main_for::<MyRecipes>()
/// }
/// ```
///
/// Invariants and monitors added with `Check::always` and `Check::monitor`
/// are code, which neither a scenario file nor a token carries: this
/// binary judges the scenario's named checks only.
pub fn main_for<C: RecipeSet>() -> ExitCode {
    // Unlocked handles: progress lines are written to stderr from worker
    // threads while the command runs, so the command must not hold its lock.
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    run_for::<C, _, _>(std::env::args_os(), &mut out, &mut err).into()
}

/// Run `zkcheck` with `args` (the first is the program name), writing to
/// `out` and `err`. Never panics on any input; a closed output (`| head`)
/// ends the printing quietly and the exit code stays the verdict's.
pub fn run<I, T>(args: I, out: &mut dyn std::io::Write, err: &mut dyn std::io::Write) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_for::<AnyRecipe, I, T>(args, out, err)
}

/// [`run`] over the recipe set `C` (what [`main_for`] runs).
pub fn run_for<C: RecipeSet, I, T>(
    args: I,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut io = Io::new(out, err);
    let exit = match Cli::try_parse_from(args) {
        Ok(cli) => dispatch::<C>(cli, &mut io),
        Err(e) => {
            // clap's own verdicts: help and version go to stdout (exit 0),
            // a usage error to stderr (exit 2).
            let text = e.render().to_string();
            if e.use_stderr() {
                let _ = write!(io.err, "{text}");
            } else {
                let _ = write!(io.out, "{text}");
            }
            if e.exit_code() == 0 {
                Exit::Ok
            } else {
                Exit::BadInput
            }
        }
    };
    io.finish();
    exit
}

/// Run one parsed command over the recipe set `C`. `compare` and `serve`
/// run the registered recipes whatever `C` is (they name their own).
fn dispatch<C: RecipeSet>(cli: Cli, io: &mut Io) -> Exit {
    match cli.command {
        Command::Check(args) => check::check::<C>(&args, io),
        Command::Replay(args) => replay::replay::<C>(&args, io),
        Command::Merge(args) => merge::merge::<C>(&args, io),
        Command::Compare(args) => compare::compare(&args, io),
        Command::List => list::list::<C>(io),
        // The server writes its connect string and logs to the process's
        // own stdout and stderr: it runs until a signal, not into a buffer.
        Command::Serve(args) if args.runs.wanted() => runs::runs(&args.serve, &args.runs, io),
        Command::Serve(args) => Exit::Code(zkserve::cli::run(args.serve)),
        Command::Judge(args) => judge::judge(&args, io),
    }
}

/// Print an input error and return [`Exit::BadInput`].
pub(crate) fn bad_input(io: &mut Io, message: impl std::fmt::Display) -> Exit {
    let _ = writeln!(io.err, "error: {message}");
    Exit::BadInput
}

use std::io::Write as _;
