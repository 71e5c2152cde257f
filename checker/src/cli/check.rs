//! `zkcheck check <scenario>`: explore, and on a failure shrink it, print
//! its trace and a replay token. "ok" only for a complete exploration.

use std::time::Instant;

use crate::counterexample::Counterexample;
use crate::explore::{self, Exploration, Failure, Options};
use crate::monitor::Tally;
use crate::progress::{Display, Progress};
use crate::scenario::{property_name, Scenario, StrategyKind};
use crate::stop::install_signal_handler;
use crate::token::Token;

use super::{bad_input, options, say, CheckArgs, Exit, Io};

pub fn check(args: &CheckArgs, io: &mut Io) -> Exit {
    let scenario = match Scenario::from_file(&args.scenario) {
        Ok(s) => s,
        Err(e) => return bad_input(io, e),
    };
    let (options, stop) = match options::options(args, &scenario)
        .and_then(|o| Ok((o, options::stop(args, &scenario)?)))
    {
        Ok(x) => x,
        Err(e) => return bad_input(io, e),
    };
    install_signal_handler();

    let seeded = matches!(options.strategy, StrategyKind::Random | StrategyKind::Pct);
    let progress = Progress::new(
        seeded.then_some(options.schedules),
        Display::for_stderr(args.quiet),
    )
    .with_stop(stop);
    let started = Instant::now(); // printed only, never decides anything
    let result = explore::strategy(&options).explore(&scenario, &progress);
    progress.finish();
    let secs = started.elapsed().as_secs_f64();
    print_summary(io, &scenario, &options, &result, secs);

    if let Some(failure) = &result.failure {
        let token = print_failure(io, &scenario, failure, &progress);
        if let (Some(token), Some(dir)) = (token, &args.report) {
            match crate::viewer::write_counterexample(dir, &token) {
                Ok(paths) => {
                    for p in paths {
                        say!(io, "wrote {}", p.display());
                    }
                }
                Err(e) => return bad_input(io, e),
            }
        }
        return Exit::Violation;
    }
    let incomplete = incompleteness(&scenario, &options, &result);
    if incomplete.is_empty() {
        say!(
            io,
            "ok: every hard check held on a complete exploration ({})",
            explored(&options, &result)
        );
        return Exit::Ok;
    }
    for reason in &incomplete {
        say!(io, "INCOMPLETE: {reason}");
    }
    say!(
        io,
        "not ok: no hard check failed in what was explored, but the exploration is incomplete"
    );
    Exit::Incomplete
}

/// Why the exploration did not cover what it was asked to (empty: it did).
fn incompleteness(scenario: &Scenario, options: &Options, r: &Exploration) -> Vec<String> {
    let mut reasons = Vec::new();
    if let Some(stop) = &r.ended_by {
        reasons.push(format!("the exploration stopped early: {stop}"));
    }
    if r.schedules == 0 && r.events == 0 {
        reasons.push("nothing was explored".to_string());
    }
    if r.runs_cut > 0 {
        reasons.push(format!(
            "{} of {} runs were cut at explore.max_steps = {} before their natural end \
             (their end-of-run checks saw unfinished runs); raise explore.max_steps",
            r.runs_cut, r.schedules, scenario.explore.max_steps
        ));
    }
    let seeded = matches!(options.strategy, StrategyKind::Random | StrategyKind::Pct);
    if seeded && r.ended_by.is_none() && r.schedules < options.schedules {
        reasons.push(format!(
            "{} of {} schedules were run",
            r.schedules, options.schedules
        ));
    }
    reasons
}

fn explored(options: &Options, r: &Exploration) -> String {
    match options.strategy {
        StrategyKind::Random | StrategyKind::Pct => format!("{} schedules", r.schedules),
        StrategyKind::Bfs | StrategyKind::Dfs if r.truncated > 0 => format!(
            "every schedule up to depth {}; {} states were cut at that depth",
            options.depth, r.truncated
        ),
        StrategyKind::Bfs | StrategyKind::Dfs => "every schedule, each to its end".to_string(),
    }
}

fn print_summary(io: &mut Io, scenario: &Scenario, options: &Options, r: &Exploration, secs: f64) {
    let checks: Vec<_> = scenario.hard.iter().map(|&p| property_name(p)).collect();
    say!(
        io,
        "scenario {}: recipe {}, {} clients, {} servers; hard checks: {} (and no-panic, always)",
        scenario.name,
        scenario.recipe,
        scenario.clients,
        scenario.ensemble.servers,
        checks.join(", ")
    );
    match options.strategy {
        StrategyKind::Random | StrategyKind::Pct => {
            let pct = if options.strategy == StrategyKind::Pct {
                format!(", bug depth {}", options.pct_depth)
            } else {
                String::new()
            };
            say!(
                io,
                "strategy {}: seeds {}..{}{pct}, {} jobs, max_steps {}",
                options.strategy.name(),
                options.seed,
                options.seed.saturating_add(options.schedules),
                options.jobs,
                scenario.explore.max_steps
            )
        }
        StrategyKind::Bfs | StrategyKind::Dfs => say!(
            io,
            "strategy {}: depth {}; symmetry {}",
            options.strategy.name(),
            options.depth,
            r.symmetry.as_deref().unwrap_or("off")
        ),
    }
    let mut line = format!("schedules: {}, events: {}", r.schedules, r.events);
    if let Some(states) = r.distinct_states {
        line += &format!(
            ", distinct states: {states}, unexpanded at a bound: {}",
            r.truncated
        );
    }
    if r.runs_cut > 0 {
        line += &format!(", runs cut at max_steps: {}", r.runs_cut);
    }
    line += &format!(", time: {secs:.2}s");
    if secs > 0.0 {
        line += &format!(" ({:.0} events/s)", r.events as f64 / secs);
    }
    say!(io, "{line}");
    print_figures(io, scenario, &r.figures);
}

/// The measured figures in two lines (the full set is in `compare`'s report).
fn print_figures(io: &mut Io, scenario: &Scenario, f: &Tally) {
    if f.acquisitions > 0 {
        say!(
            io,
            "figures: {} acquisitions; wakeups per release max {} mean {:.2}; wasted max {} mean {:.2}; wait mean {:.1} p99 {} ticks",
            f.acquisitions,
            f.max_wakeups_per_release(),
            f.mean_wakeups_per_release(),
            f.max_wasted_per_release(),
            f.mean_wasted_per_release(),
            f.mean_latency(),
            f.p99_latency()
        );
    }
    // Hard properties fail the run and are reported below; only the
    // measured ones are listed here.
    let measured: Vec<String> = f
        .violations
        .iter()
        .filter(|(p, _)| !scenario.hard.contains(p))
        .map(|(&p, n)| format!("{} in {n} runs", property_name(p)))
        .collect();
    if !measured.is_empty() {
        say!(
            io,
            "measured (not failing) violations: {}",
            measured.join(", ")
        );
    }
}

/// Print the shrunk counterexample (its `Display`, the same text a failing
/// `Check` assertion panics with); returns its replay token.
fn print_failure(
    io: &mut Io,
    scenario: &Scenario,
    failure: &Failure,
    progress: &Progress,
) -> Option<Token> {
    // Ctrl-C or the time limit also end shrinking, with what it has.
    let (counterexample, token) =
        Counterexample::shrunk_until(scenario, failure, &|| progress.stopped());
    say!(io);
    say!(io, "{counterexample}");
    token
}
