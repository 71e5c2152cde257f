//! `zkcheck check <scenario>`: explore, and on a failure shrink it, print
//! its trace and a replay token. "ok" only for a complete exploration.
//! With `--shard k/n`, only that shard's seeds ([`crate::shard`]); with
//! `--json`, the result object ([`crate::summary`]) on stdout and the
//! human summary on stderr.

use std::time::Instant;

use crate::shard::Shard;
use crate::summary::Summary;
use zkcheck::explore::{self, Exploration, Options};
use zkcheck::progress::{Display, Progress};
use zkcheck::scenario::{property_name, Scenario, Search};
use zkcheck::stop::install_signal_handler;
use zkcheck::token::Token;
use zkcheck::verdict;
use zkrecipes::RecipeSet;

use super::figures::print_figures;
use super::io::Text;
use super::{bad_input, options, say, CheckArgs, Exit, Io};
use std::io::Write as _;

pub fn check<C: RecipeSet>(args: &CheckArgs, io: &mut Io) -> Exit {
    let scenario = match Scenario::from_file_as::<C>(&args.scenario) {
        Ok(s) => s,
        Err(e) => return bad_input(io, e),
    };
    let flags = options::options(args, &scenario).and_then(|o| {
        let shard = options::shard(args, &o)?;
        Ok((o, shard, options::stop(args, &scenario)?))
    });
    let (whole, shard, stop) = match flags {
        Ok(x) => x,
        Err(e) => return bad_input(io, e),
    };
    install_signal_handler();

    let seeded = matches!(whole.strategy, Search::Random | Search::Pct);
    // A shard explores its own seeds with the whole run's every other option.
    let options = if seeded { shard.narrow(&whole) } else { whole };
    let progress = Progress::new(
        seeded.then_some(options.schedules),
        Display::for_stderr(args.quiet),
    )
    .with_stop(stop);
    let started = Instant::now(); // printed only, never decides anything
    let result = explore::explorer(&options).explore(&scenario, &progress);
    progress.finish();
    let secs = started.elapsed().as_secs_f64();

    // With --json, stdout holds the result object alone and the human
    // summary goes to stderr.
    let Io { out, err } = io;
    let mut human = Text {
        out: if args.json { err } else { out },
    };
    print_summary(&mut human, &scenario, &options, shard, &result, secs);

    // The rest of the one pipeline (`verdict::run` is the two halves):
    // shrink (Ctrl-C or the time limit also end shrinking, with what it
    // has) and judge completeness.
    let verdict = verdict::conclude(&scenario, &options, result, &progress);
    // What would make the verdict say less than it seems to, on stderr
    // whatever the output format: symmetry that had to stay off, hard
    // checks the recipe gave nothing to judge.
    for warning in warnings(&scenario, &options, &verdict) {
        let _ = writeln!(io.err, "warning: {warning}");
    }
    let Io { out, err } = io;
    let mut human = Text {
        out: if args.json { err } else { out },
    };
    let mut report_error = None;
    if let Some(c) = &verdict.counterexample {
        say!(human);
        say!(human, "{c}");
        say!(
            human,
            "(search {secs:.2}s, shrinking {:.2}s)",
            verdict.timings.shrink.as_secs_f64()
        );
        if let (Some(token), Some(dir)) = (&c.token, &args.report) {
            let written = Token::decode_as::<C>(token)
                .map_err(|e| format!("internal error: the counterexample's token: {e}"))
                .and_then(|token| {
                    crate::viewer::write_counterexample(dir, &token).map_err(|e| e.to_string())
                });
            match written {
                Ok(paths) => {
                    for p in paths {
                        say!(human, "wrote {}", p.display());
                    }
                }
                Err(e) => report_error = Some(e),
            }
        }
    } else if verdict.incomplete.is_empty() {
        let coverage = verdict::Coverage::of_exploration(&scenario, &options, &verdict.exploration);
        if let Some(note) = coverage.clock_note() {
            say!(human, "note: {note}");
        }
        say!(
            human,
            "ok: every hard check held on a complete exploration ({})",
            explored(&options, shard, &verdict.exploration)
        );
    } else {
        for reason in &verdict.incomplete {
            say!(human, "INCOMPLETE: {reason}");
        }
        say!(
            human,
            "not ok: no hard check failed in what was explored, but the exploration is incomplete"
        );
    }
    if args.json {
        let summary = Summary::of_check(&scenario, &whole, shard, &verdict);
        say!(io, "{}", summary.to_json());
    }
    match report_error {
        Some(e) => bad_input(io, e),
        None => verdict.kind().into(),
    }
}

/// Warnings about a verdict: exhaustive search without the symmetry
/// reduction it was not told to drop (and why), hard checks that judged
/// nothing ([`zkcheck::contract`]).
fn warnings<C: RecipeSet>(
    scenario: &Scenario<C>,
    options: &Options,
    verdict: &verdict::Verdict,
) -> Vec<String> {
    let mut out = Vec::new();
    if options.symmetry {
        if let Some(why) = verdict
            .exploration
            .symmetry
            .as_deref()
            .and_then(|s| s.strip_prefix("off ("))
        {
            out.push(format!(
                "symmetry reduction is off: {}",
                why.strip_suffix(')').unwrap_or(why)
            ));
        }
    }
    if verdict.counterexample.is_none() {
        out.extend(zkcheck::verdict::unjudged(
            scenario,
            &verdict.exploration.figures,
        ));
    }
    out
}

fn explored(options: &Options, shard: Shard, r: &Exploration) -> String {
    match options.strategy {
        Search::Random | Search::Pct if !shard.is_whole() => {
            format!("{} schedules of shard {shard}", r.schedules)
        }
        Search::Random | Search::Pct => format!("{} schedules", r.schedules),
        Search::Bfs | Search::Dfs => "every schedule, each to its end".to_string(),
    }
}

fn print_summary<C: RecipeSet>(
    io: &mut Text,
    scenario: &Scenario<C>,
    options: &Options,
    shard: Shard,
    r: &Exploration,
    secs: f64,
) {
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
        Search::Random | Search::Pct => {
            let pct = if options.strategy == Search::Pct {
                format!(", bug depth {}", options.pct_depth)
            } else {
                String::new()
            };
            let shard = if shard.is_whole() {
                String::new()
            } else {
                format!(" (shard {shard})")
            };
            say!(
                io,
                "strategy {}: seeds {}..{}{shard}{pct}, {} jobs, max_steps {}",
                options.strategy.name(),
                options.seed,
                options.seed.saturating_add(options.schedules),
                options.jobs,
                scenario.explore.max_steps
            )
        }
        Search::Bfs => say!(
            io,
            "strategy {}: depth {}; symmetry {}; por {}",
            options.strategy.name(),
            options.depth,
            r.symmetry.as_deref().unwrap_or("off"),
            r.por.as_deref().unwrap_or("off")
        ),
        Search::Dfs => say!(
            io,
            "strategy {}: depth {}; symmetry {}; cycle check {}; por {}",
            options.strategy.name(),
            options.depth,
            r.symmetry.as_deref().unwrap_or("off"),
            r.cycle_check.as_deref().unwrap_or("off"),
            r.por.as_deref().unwrap_or("off")
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
    if r.runs_clock_cut > 0 {
        line += &format!(", runs cut by the clock at max_time: {}", r.runs_clock_cut);
    }
    if r.cycles_dismissed > 0 {
        line += &format!(", cycles closed (no livelock): {}", r.cycles_dismissed);
    }
    line += &format!(", time: {secs:.2}s");
    if secs > 0.0 {
        line += &format!(" ({:.0} events/s)", r.events as f64 / secs);
    }
    say!(io, "{line}");
    print_figures(io, &scenario.hard, &r.figures);
}
