//! The one pipeline from a scenario to a verdict: explore → shrink →
//! judge completeness → token. The library's `Check` and every command of
//! the CLI (`check`, `replay`, `merge`, `compare`) decide ok / violation /
//! incomplete here and only here, so the two front doors cannot disagree:
//! a run that covered less than it was asked to is never "ok", whoever
//! asks.

use serde::{Deserialize, Serialize};
use zkrecipes::RecipeSet;

use crate::counterexample::Counterexample;
use crate::explore::replay::Replayed;
use crate::explore::{self, Exploration, Failure, Options};
use crate::progress::Progress;
use crate::scenario::{Scenario, StrategyKind};
use crate::token::Token;

/// `ok`, `violation` or `incomplete` (exit codes 0, 1, 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictKind {
    /// Every hard check held on an exploration that covered what it was asked to.
    Ok,
    /// A hard check failed.
    Violation,
    /// Nothing failed in what was explored, but the exploration covered
    /// less than it was asked to.
    Incomplete,
}

impl VerdictKind {
    /// The rule, the same for every front door: a violation wins (it is
    /// real whatever else was not explored); otherwise any reason for
    /// being incomplete makes the verdict incomplete.
    pub fn judge(violated: bool, incomplete: &[String]) -> Self {
        if violated {
            VerdictKind::Violation
        } else if incomplete.is_empty() {
            VerdictKind::Ok
        } else {
            VerdictKind::Incomplete
        }
    }

    /// The process exit code the CLI gives this verdict (0, 1 or 3).
    pub fn exit_code(self) -> u8 {
        match self {
            VerdictKind::Ok => 0,
            VerdictKind::Violation => 1,
            VerdictKind::Incomplete => 3,
        }
    }
}

/// What a check found: how much was explored, the shrunk failure if a hard
/// property or invariant broke, and why the exploration covered less than
/// it was asked to (empty when it covered it all).
#[derive(Clone, Debug)]
pub struct Verdict {
    /// How much was explored (one schedule for a replay).
    pub exploration: Exploration,
    /// The shrunk failure with its trace and replay token.
    pub counterexample: Option<Counterexample>,
    /// Why the exploration covered less than asked, one sentence each;
    /// such a verdict is never [`VerdictKind::Ok`].
    pub incomplete: Vec<String>,
    /// How long the search and the shrinking took, apart (wall clock:
    /// printed only, never part of a decision).
    pub timings: Timings,
}

/// Wall-clock time of a check's two halves. Measured for the reader only:
/// nothing is decided by it, so results stay deterministic.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Exploring (a replay: running the one schedule).
    pub search: std::time::Duration,
    /// Shrinking the failure into its counterexample (zero without one).
    pub shrink: std::time::Duration,
}

impl Verdict {
    /// Ok, violation or incomplete, by [`VerdictKind::judge`].
    pub fn kind(&self) -> VerdictKind {
        VerdictKind::judge(self.counterexample.is_some(), &self.incomplete)
    }
}

/// The whole pipeline: explore `scenario` as `options` say, shrink a
/// failure into a counterexample with its token, judge completeness.
/// `progress` sees the exploration and can stop it (and the shrinking).
pub fn run<C: RecipeSet>(
    scenario: &Scenario<C>,
    options: &Options,
    progress: &Progress,
) -> Verdict {
    let started = std::time::Instant::now(); // printed only, never decides anything
    let exploration = explore::strategy::<C>(options).explore(scenario, progress);
    let search = started.elapsed();
    let mut verdict = conclude(scenario, options, exploration, progress);
    verdict.timings.search = search;
    verdict
}

/// The pipeline after exploring: shrink the failure (timed into
/// [`Timings::shrink`]; the caller who explored sets [`Timings::search`]) (stopped when
/// `progress` says so, keeping the smallest failing schedule found by
/// then) and judge completeness. [`run`] is `explore` then this; the CLI
/// calls the two halves itself only to print its summary in between.
pub fn conclude<C: RecipeSet>(
    scenario: &Scenario<C>,
    options: &Options,
    exploration: Exploration,
    progress: &Progress,
) -> Verdict {
    let started = std::time::Instant::now(); // printed only, never decides anything
    let counterexample = exploration
        .failure
        .as_ref()
        .map(|f| Counterexample::shrunk_until(scenario, f, &|| progress.stopped()).0);
    let shrink = if exploration.failure.is_some() {
        started.elapsed()
    } else {
        std::time::Duration::ZERO
    };
    let incomplete = incompleteness(scenario, options, &exploration);
    Verdict {
        exploration,
        counterexample,
        incomplete,
        timings: Timings {
            search: std::time::Duration::ZERO,
            shrink,
        },
    }
}

/// The verdict of a replayed token: one schedule, judged as it ran. A
/// replay is complete by definition (it ran the one schedule it was
/// given, to the token's end or the run's), so `incomplete` is empty.
pub fn of_replay<C: RecipeSet>(
    scenario: &Scenario<C>,
    indices: &[u32],
    cycle_from: Option<usize>,
    replayed: &Replayed<C>,
) -> Verdict {
    let run = &replayed.run;
    let counterexample = run.violation.clone().map(|violation| Counterexample {
        violation,
        seed: None,
        found_steps: run.schedule.len(),
        steps: run.schedule.len(),
        shrink_attempts: 0,
        shrink_cut_short: None,
        replayed: true,
        trace: replayed.trace.text.clone(),
        token: Some(
            Token::new(scenario.clone(), indices.to_vec())
                .with_cycle(cycle_from)
                .encode(),
        ),
        cycle_from,
    });
    let exploration = Exploration {
        schedules: 1,
        events: run.schedule.len() as u64,
        failure: run.violation.clone().map(|violation| Failure {
            seed: None,
            violation,
            schedule: run.schedule.clone(),
            cycle_from,
        }),
        figures: run.model.monitors.figures(),
        ..Exploration::default()
    };
    Verdict {
        exploration,
        counterexample,
        incomplete: Vec::new(),
        timings: Timings::default(),
    }
}

fn seeded(strategy: StrategyKind) -> bool {
    matches!(strategy, StrategyKind::Random | StrategyKind::Pct)
}

/// Why `r` covers less than `options` asked (empty: it covers it all).
/// `options` are the ones explored (a shard's, for a shard). A violation
/// is judged on what was run before it, so the seeds after the failing
/// one are not missing. A depth bound of exhaustive search is not a
/// reason: the depth is what was asked for.
pub fn incompleteness<C: zksim::Client>(
    scenario: &Scenario<C>,
    options: &Options,
    r: &Exploration,
) -> Vec<String> {
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
    if seeded(options.strategy)
        && r.ended_by.is_none()
        && r.failure.is_none()
        && r.schedules < options.schedules
    {
        reasons.push(format!(
            "{} of {} schedules were run",
            r.schedules, options.schedules
        ));
    }
    reasons
}
