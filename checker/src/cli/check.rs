//! `zkcheck check <scenario>`: explore, and on a failure shrink it, print
//! its trace and a replay token.

use std::process::ExitCode;
use std::time::Instant;

use crate::counterexample::Counterexample;
use crate::explore::{self, Exploration, Failure, Options};
use crate::monitor::Figures;
use crate::progress::Progress;
use crate::scenario::{property_name, Scenario, StrategyKind};
use crate::token::Token;

use super::{bad_input, CheckArgs};

pub fn check(args: &CheckArgs) -> ExitCode {
    let scenario = match Scenario::from_file(&args.scenario) {
        Ok(s) => s,
        Err(e) => return bad_input(e),
    };
    if args.jobs == 0 {
        return bad_input("--jobs must be at least 1");
    }
    let mut options = Options::from_scenario(&scenario);
    options.jobs = args.jobs;
    if let Some(s) = args.strategy {
        options.strategy = s.into();
    }
    if let Some(n) = args.schedules {
        options.schedules = n;
    }
    if let Some(seed) = args.seed {
        options.seed = seed;
    }
    if let Some(d) = args.depth {
        match options.strategy {
            StrategyKind::Pct => options.pct_depth = d,
            _ => options.depth = d,
        }
    }

    let seeded = matches!(options.strategy, StrategyKind::Random | StrategyKind::Pct);
    let progress = Progress::new(seeded.then_some(options.schedules));
    let started = Instant::now(); // printed only, never decides anything
    let result = explore::strategy(&options).explore(&scenario, &progress);
    progress.finish();
    print_summary(
        &scenario,
        &options,
        &result,
        started.elapsed().as_secs_f64(),
    );

    match &result.failure {
        None => {
            println!("ok: no hard check failed");
            ExitCode::SUCCESS
        }
        Some(failure) => match (print_failure(&scenario, failure), &args.report) {
            (Some(token), Some(dir)) => match crate::viewer::write_counterexample(dir, &token) {
                Ok(paths) => {
                    for p in paths {
                        println!("wrote {}", p.display());
                    }
                    ExitCode::from(1)
                }
                Err(e) => bad_input(e),
            },
            _ => ExitCode::from(1),
        },
    }
}

fn print_summary(scenario: &Scenario, options: &Options, r: &Exploration, secs: f64) {
    let checks: Vec<_> = scenario.hard.iter().map(|&p| property_name(p)).collect();
    println!(
        "scenario {}: recipe {}, {} clients, {} servers; hard checks: {}",
        scenario.name,
        scenario.recipe,
        scenario.clients,
        scenario.ensemble.servers,
        checks.join(", ")
    );
    match options.strategy {
        StrategyKind::Random | StrategyKind::Pct => println!(
            "strategy {}: seeds {}..{}, {} jobs",
            options.strategy.name(),
            options.seed,
            options.seed.saturating_add(options.schedules),
            options.jobs
        ),
        StrategyKind::Bfs | StrategyKind::Dfs => {
            println!(
                "strategy {}: depth {}",
                options.strategy.name(),
                options.depth
            )
        }
    }
    let mut line = format!("schedules: {}, events: {}", r.schedules, r.events);
    if let Some(states) = r.distinct_states {
        line += &format!(
            ", distinct states: {states}, cut at depth bound: {}",
            r.truncated
        );
    }
    line += &format!(", time: {secs:.2}s");
    if secs > 0.0 {
        line += &format!(" ({:.0} events/s)", r.events as f64 / secs);
    }
    println!("{line}");
    print_figures(&r.figures);
}

/// The measured figures in two lines (the full set is in `compare`'s report).
fn print_figures(f: &Figures) {
    if f.acquisitions > 0 {
        println!(
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
    if !f.violations.is_empty() {
        let broken: Vec<String> = f
            .violations
            .iter()
            .map(|(&p, n)| format!("{} in {n} runs", property_name(p)))
            .collect();
        println!("measured (not failing) violations: {}", broken.join(", "));
    }
}

/// Print the shrunk counterexample; returns its replay token.
fn print_failure(scenario: &Scenario, failure: &Failure) -> Option<Token> {
    let counterexample = Counterexample::of(scenario, failure);
    println!();
    println!("{counterexample}");
    Token::decode(counterexample.token.as_deref()?).ok()
}
