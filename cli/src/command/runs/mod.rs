//! `zkcheck serve --runs N [--faults …] [--lock …] -- CMD ARGS… {connect}`:
//! an unmodified app run N times, each time against a fresh simulated
//! ensemble with the next seed (so the next fault plan), each run's
//! history kept and judged, and the violation rate printed with the first
//! violating run's seed, history, story and viewer page (docs/RUNS.md).
//!
//! Why a rate: the server's choices and its fault plan are fixed by the
//! seed, but the app's threads are not — the same seed may or may not
//! lose the race that breaks the app. Many runs turn that into a
//! frequency; each violating run's history proves its violation exactly
//! and re-judges offline (`zkcheck judge FILE`) to the same verdict.
//!
//! [`tally`] holds the rule (a run whose app crashed or timed out is never
//! ok) and the counts; [`app`] runs the command once with a bound;
//! [`judging`] is the one door to zkjudge.

mod app;
mod judging;
mod tally;

use std::fs::{self, File};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use judging::Config;
use zkserve::cli::ServeArgs;
use zkserve::driver;

use super::{bad_input, say, Exit, Io};
use tally::{Outcome, Tally};

/// The most runs one command does.
const MAX_RUNS: u64 = 1_000_000;

/// `serve`'s flags for running an app many times.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Running an app many times (--runs N -- CMD ARGS… {connect})")]
pub struct RunsArgs {
    /// Run the command after `--` N times, each against a fresh ensemble
    /// with the next seed (--seed, --seed+1, …), judge each run's history
    /// and print the violation rate. `{connect}` in the command becomes
    /// the run's connect string.
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// Where each run's history (`seed-S.jsonl`), the app's output
    /// (`seed-S.out`, `.err`), one line per run (`runs.jsonl`) and the
    /// first violation's viewer page (`seed-S.html`) go [default: a new
    /// directory under the system's temp directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seconds one run's app may take before it is killed (the run is
    /// then incomplete), 1 to 86400.
    #[arg(long, value_name = "SECS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub run_timeout: u64,
    /// The lock path to judge: its children are the contenders.
    #[arg(long, value_name = "/L")]
    pub lock: Option<String>,
    /// The resource path: writes to it must be the lock owner's (the
    /// leader's, with --leader); consumers report under it (--queue).
    #[arg(long, value_name = "/R")]
    pub resource: Option<String>,
    /// The election path: its children are the candidates.
    #[arg(long, value_name = "/E")]
    pub leader: Option<String>,
    /// The queue path: its children are the items.
    #[arg(long, value_name = "/Q")]
    pub queue: Option<String>,
    /// Another exclusive contender marker (as `zkcheck judge --marker`).
    #[arg(long, value_name = "TEXT")]
    pub marker: Vec<String>,
    /// Another shared contender marker (as `zkcheck judge --shared-marker`).
    #[arg(long, value_name = "TEXT")]
    pub shared_marker: Vec<String>,
    /// Stop after the first violating run (a bug hunt: "is it within N
    /// runs?"); the summary counts the runs done.
    #[arg(long)]
    pub until_violation: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// The app: a program and its arguments, one of them holding `{connect}`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl RunsArgs {
    /// Whether `serve` was asked to run an app rather than to serve.
    pub fn wanted(&self) -> bool {
        self.runs.is_some() || !self.command.is_empty()
    }
}

/// One finished run.
struct Finished {
    seed: u64,
    history: PathBuf,
    outcome: Outcome,
    /// The judges' verdicts, when the history could be read.
    judged: Option<judging::Judged>,
    secs: f64,
}

pub fn runs(serve: &ServeArgs, args: &RunsArgs, io: &mut Io) -> Exit {
    let plan = match Plan::new(serve, args) {
        Ok(p) => p,
        Err(e) => return bad_input(io, e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return bad_input(io, format!("cannot start the server's runtime: {e}")),
    };
    // Ctrl-C or SIGTERM: the running app is killed, the runs done are
    // summed up (exit 3 unless one violated), nothing is lost.
    zkcheck::stop::install_signal_handler();
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut first: Option<Finished> = None;
    let mut lines = match File::create(plan.dir.join("runs.jsonl")) {
        Ok(f) => f,
        Err(e) => return bad_input(io, format!("cannot write in {}: {e}", plan.dir.display())),
    };
    if !args.quiet {
        let _ = writeln!(
            io.err,
            "zkcheck serve: {} runs of `{}`, seeds {}..={}, faults `{}`; histories in {}",
            plan.runs,
            args.command.join(" "),
            serve.seed,
            plan.last_seed,
            faults_text(serve),
            plan.dir.display()
        );
    }
    for i in 0..plan.runs {
        if zkcheck::stop::interrupted() {
            tally.cut_short = Some(format!(
                "interrupted (Ctrl-C or a termination signal) after {i} of {} runs",
                plan.runs
            ));
            break;
        }
        let seed = serve.seed + i;
        let run = match one_run(&runtime, serve, args, &plan, seed) {
            Ok(r) => r,
            Err(e) => return bad_input(io, e),
        };
        tally.add(seed, &run.outcome);
        let _ = writeln!(lines, "{}", run_line(&run));
        if !args.quiet {
            let _ = writeln!(
                io.err,
                "run {}/{} (seed {seed}): {} ({:.1} s)",
                i + 1,
                plan.runs,
                describe(&run.outcome),
                run.secs
            );
        }
        if matches!(run.outcome, Outcome::Violation(_)) && first.is_none() {
            first = Some(run);
            if args.until_violation {
                break;
            }
        }
    }
    print_summary(io, serve, args, &plan, &tally, first, started.elapsed());
    match tally.exit() {
        0 => Exit::Ok,
        1 => Exit::Violation,
        _ => Exit::Incomplete,
    }
}

/// The checked flags: how many runs, where their files go, what to judge.
struct Plan {
    runs: u64,
    last_seed: u64,
    dir: PathBuf,
    config: Config,
    timeout: Duration,
}

impl Plan {
    fn new(serve: &ServeArgs, args: &RunsArgs) -> Result<Plan, String> {
        let runs = args
            .runs
            .ok_or("a command after `--` needs --runs N (how many times to run it)")?;
        if !(1..=MAX_RUNS).contains(&runs) {
            return Err(format!("--runs {runs}: from 1 to {MAX_RUNS}"));
        }
        if args.command.is_empty() {
            return Err("--runs needs the app after `--`: `zkcheck serve --runs 50 -- python3 app.py {connect}`".into());
        }
        if app::with_connect(&args.command, "").is_none() {
            return Err(format!(
                "the command `{}` has no `{}`: the app would not know where the server is",
                args.command.join(" "),
                app::CONNECT
            ));
        }
        if serve.history.is_some() {
            return Err("--history with --runs: each run's history goes into --out DIR".into());
        }
        if serve.replay_input.is_some() {
            return Err("--replay-input replays one history; it does not run an app".into());
        }
        serve
            .faults
            .check_servers(usize::from(serve.servers))
            .map_err(|e| format!("--faults: {e}"))?;
        let last_seed = serve
            .seed
            .checked_add(runs - 1)
            .ok_or_else(|| format!("--seed {} + --runs {runs} passes 2^64", serve.seed))?;
        let dir = match &args.out {
            Some(d) => d.clone(),
            None => std::env::temp_dir().join(format!(
                "zkcheck-runs-{}-{}",
                std::process::id(),
                serve.seed
            )),
        };
        fs::create_dir_all(&dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
        Ok(Plan {
            runs,
            last_seed,
            dir,
            config: judging::config(args)?,
            timeout: Duration::from_secs(args.run_timeout),
        })
    }

    fn file(&self, seed: u64, ext: &str) -> PathBuf {
        self.dir.join(format!("seed-{seed}.{ext}"))
    }
}

/// One run: a fresh ensemble with `seed`, the app against it, the server
/// stopped (its history finished), the history judged. `Err` only when the
/// server cannot listen (bad input, as for `serve` itself).
fn one_run(
    runtime: &tokio::runtime::Runtime,
    serve: &ServeArgs,
    args: &RunsArgs,
    plan: &Plan,
    seed: u64,
) -> Result<Finished, String> {
    let history = plan.file(seed, "jsonl");
    let mut options = serve.options();
    options.limits.seed = seed;
    let started = Instant::now();
    let recording = driver::start_recording(options, Some(history.clone()));
    let running = runtime.block_on(recording).map_err(|e| {
        format!(
            "cannot listen on {} from port {} ({} servers), or write {}: {e}",
            serve.bind,
            serve.port,
            serve.servers,
            history.display()
        )
    })?;
    let connect = running.connect_string();
    let argv = app::with_connect(&args.command, &connect).unwrap_or_default();
    let app_end = app::run(
        &argv,
        &plan.file(seed, "out"),
        &plan.file(seed, "err"),
        plan.timeout,
        &zkcheck::stop::interrupted,
    );
    runtime.block_on(running.stop());
    let judged = judging::judge_file(&history, &plan.config);
    let verdict = match &judged {
        Ok(j) => Ok((j.exit, j.violated.clone())),
        Err(e) => Err(e.clone()),
    };
    Ok(Finished {
        seed,
        history,
        outcome: Outcome::of(&app_end, verdict),
        judged: judged.ok(),
        secs: started.elapsed().as_secs_f64(),
    })
}

fn faults_text(serve: &ServeArgs) -> String {
    let text = serve.faults.to_string();
    if text.is_empty() {
        "none".into()
    } else {
        text
    }
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ok => "ok".into(),
        Outcome::Violation(judges) => format!("VIOLATION ({})", judges.join(", ")),
        Outcome::Incomplete(why) => format!("incomplete: {why}"),
    }
}

/// One line of `runs.jsonl`: the run's outcome and its judges' report.
fn run_line(run: &Finished) -> String {
    let why = match &run.outcome {
        Outcome::Incomplete(why) => Some(why.clone()),
        _ => None,
    };
    let line = serde_json::json!({
        "seed": run.seed,
        "outcome": run.outcome.word(),
        "why": why,
        "violated": match &run.outcome { Outcome::Violation(j) => j.clone(), _ => vec![] },
        "history": run.history.display().to_string(),
        "secs": (run.secs * 1000.0).round() / 1000.0,
        "report": run.judged.as_ref().map(|j| j.json.clone()),
    });
    line.to_string()
}

fn print_summary(
    io: &mut Io,
    serve: &ServeArgs,
    args: &RunsArgs,
    plan: &Plan,
    tally: &Tally,
    first: Option<Finished>,
    elapsed: Duration,
) {
    let minutes = elapsed.as_secs_f64() / 60.0;
    say!(
        io,
        "runs: {} (seeds {}..={}), faults `{}`: {} ok, {} violating, {} incomplete",
        tally.runs,
        serve.seed,
        serve.seed + tally.runs.saturating_sub(1),
        faults_text(serve),
        tally.ok,
        tally.violations,
        tally.incomplete
    );
    say!(
        io,
        "violation rate: {}/{} = {:.1}%",
        tally.violations,
        tally.runs,
        100.0 * tally.rate()
    );
    say!(
        io,
        "time: {:.1} s, {:.1} runs per minute",
        elapsed.as_secs_f64(),
        if minutes > 0.0 {
            tally.runs as f64 / minutes
        } else {
            0.0
        }
    );
    if let Some(why) = &tally.cut_short {
        say!(io, "stopped early: {why}: incomplete");
    }
    if let Some((seed, why)) = &tally.first_incomplete {
        say!(io, "first incomplete run: seed {seed}: {why}");
        say!(
            io,
            "  its app's output: {}",
            plan.file(*seed, "out").display()
        );
    }
    if let Some(run) = first {
        say!(io, "first violation: seed {}", run.seed);
        say!(io, "  history: {}", run.history.display());
        if let Some(judged) = &run.judged {
            for line in judged.text.lines() {
                say!(io, "  {line}");
            }
            let page = plan.file(run.seed, "html");
            let written = judging::page(&run.history, &plan.config)
                .and_then(|html| fs::write(&page, html).map_err(|e| e.to_string()));
            match written {
                Ok(()) => say!(io, "  viewer: {}", page.display()),
                Err(e) => say!(io, "  viewer: cannot write {}: {e}", page.display()),
            }
        }
        say!(
            io,
            "  judge it again: zkcheck judge {}{}",
            run.history.display(),
            judge_flags(args)
        );
        say!(
            io,
            "  the server's run again: zkcheck serve --replay-input {}",
            run.history.display()
        );
        let aim = serve.aim.to_string();
        say!(
            io,
            "  this seed's fault plan again: zkcheck serve --runs 1 --tick-ms {} --seed {} --faults '{}'{}{} -- {}",
            serve.tick_ms,
            run.seed,
            serve.faults,
            if aim.is_empty() { String::new() } else { format!(" --aim {aim}") },
            judge_flags(args),
            args.command.join(" ")
        );
    }
    say!(io, "verdict: {}", verdict_word(tally.exit()));
}

fn judge_flags(args: &RunsArgs) -> String {
    let mut flags = String::new();
    for (name, value) in [
        ("--lock", &args.lock),
        ("--resource", &args.resource),
        ("--leader", &args.leader),
        ("--queue", &args.queue),
    ] {
        if let Some(v) = value {
            flags.push_str(&format!(" {name} {v}"));
        }
    }
    for m in &args.marker {
        flags.push_str(&format!(" --marker {m}"));
    }
    for m in &args.shared_marker {
        flags.push_str(&format!(" --shared-marker {m}"));
    }
    flags
}

fn verdict_word(exit: u8) -> &'static str {
    match exit {
        0 => "ok (exit 0)",
        1 => "violation (exit 1)",
        _ => "incomplete (exit 3)",
    }
}
