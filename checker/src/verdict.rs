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
use crate::explore::run::Ending;
use crate::explore::{self, Exploration, Failure, Options};
use crate::monitor::Property;
use crate::progress::Progress;
use crate::scenario::{property_name, Scenario, Search};
use crate::shrink::Phases;
use crate::token::Token;

pub use crate::contract::unjudged;

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
    let exploration = explore::explorer::<C>(options).explore(scenario, progress);
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
    let counterexample = exploration.failure.as_ref().map(|f| {
        let phases = if options.keep_scenario {
            Phases::KeepScenario
        } else {
            Phases::All
        };
        Counterexample::shrunk_with(scenario, f, phases, &|| progress.stopped()).0
    });
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

/// The verdict of a replayed token: one schedule, judged as it ran, by
/// the same rule as a check ([`Coverage::reasons`]): a replay whose run
/// was cut at `max_steps`, cut by the clock where a hard check judges the
/// end, or whose schedule ran out before the run ended is incomplete,
/// as `check` would call it.
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
        reductions: Vec::new(),
        no_shorter_than: 0,
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
    let coverage = Coverage {
        unit: "runs",
        schedules: 1,
        events: run.schedule.len() as u64,
        step_cut: u64::from(run.ending == Ending::StepBound),
        max_steps: scenario.explore.max_steps,
        clock_cut: u64::from(run.ending == Ending::ClockBound),
        max_time: scenario.ensemble.max_time,
        end_judges: end_judges(&scenario.hard, scenario.monitors.len()),
        schedule_ran_out: run.ending == Ending::Stopped,
        ..Coverage::default()
    };
    let exploration = Exploration {
        runs_cut: coverage.step_cut,
        runs_clock_cut: coverage.clock_cut,
        ..exploration
    };
    Verdict {
        exploration,
        counterexample,
        incomplete: coverage.reasons(),
        timings: Timings::default(),
    }
}

fn seeded(strategy: Search) -> bool {
    matches!(strategy, Search::Random | Search::Pct)
}

/// Whether property `p` judges a run's *end* (what can only be judged
/// once nothing more will happen) rather than each step: `liveness` (every
/// asker acquires), `leaks` (nothing left behind), `queue` (every offered
/// item taken), `election` (a leader emerges). A run the clock cut was
/// never at its end, so these checks judged nothing there. The catalogue
/// says which ([`crate::monitor::catalogue::PropertySpec::judges_end`]).
pub fn judges_end(p: Property) -> bool {
    crate::monitor::catalogue::judges_end(p)
}

/// The hard checks that judge a run's end (by their scenario names), for
/// a scenario hard on `hard` with `own_monitors` monitors of the user's
/// own (which may judge the end: their `finish` is theirs).
pub fn end_judges(hard: &[Property], own_monitors: usize) -> Vec<String> {
    let mut names: Vec<String> = hard
        .iter()
        .filter(|&&p| judges_end(p))
        .map(|&p| property_name(p).to_string())
        .collect();
    if own_monitors > 0 {
        names.push("your own monitors".to_string());
    }
    names
}

/// The facts the one rule reads: how far the runs of a check, a replay,
/// a merge or a comparison got. Each front door fills one from what it
/// ran (or, for `merge`, from the figures a result file carries) and asks
/// [`Coverage::reasons`]; none judges completeness by a rule of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// What a run is called in the sentences: `runs` (seeded, replay,
    /// compare) or `end states` (exhaustive search).
    pub unit: &'static str,
    /// Runs (or end states) judged, and events applied.
    pub schedules: u64,
    /// Events applied, over all runs.
    pub events: u64,
    /// What stopped the exploration early (a signal, `--time-limit`, the
    /// memory budget, the state cap), as a sentence.
    pub stopped: Option<String>,
    /// Runs cut at `explore.max_steps`, and that bound.
    pub step_cut: u64,
    /// The step bound, for the sentence.
    pub max_steps: usize,
    /// Runs the clock cut at `ensemble.max_time` (work was left), and that bound.
    pub clock_cut: u64,
    /// The clock bound, for the sentence.
    pub max_time: u64,
    /// The hard checks that judge a run's end ([`end_judges`]): with none,
    /// a run the clock cut is a complete check of what was asked (every
    /// step was judged, and the scenario's world ends at `max_time`).
    pub end_judges: Vec<String>,
    /// Exhaustive search: states left unexpanded at the depth bound, and the bound.
    pub depth_cut: u64,
    /// The depth bound, for the sentence.
    pub depth: usize,
    /// Seeded: schedules run of those asked (`None`: not a seeded sweep,
    /// or one that stopped at a failing seed or early).
    pub schedules_short: Option<(u64, u64)>,
    /// A replay: the token's schedule ran out before the run ended.
    pub schedule_ran_out: bool,
    /// DFS with its cycle check on: liveness is judged by cycles (lassos,
    /// states keyed up to a shift of the clock, [`crate::lasso`]), which
    /// find a livelock whatever `max_time` is; an end the clock cut is the
    /// schedule that held everything back until the clock stopped, and
    /// exhaustive search has one at every `max_time`. Such ends are then
    /// counted and named, not a reason.
    pub clock_judged_by_cycles: bool,
}

impl Coverage {
    /// The facts of an exploration of `scenario` with `options` (the ones
    /// explored: a shard's, for a shard).
    pub fn of_exploration<C: zksim::Client>(
        scenario: &Scenario<C>,
        options: &Options,
        r: &Exploration,
    ) -> Self {
        let seeded = seeded(options.strategy);
        let short = seeded && r.ended_by.is_none() && r.failure.is_none();
        Coverage {
            unit: if seeded { "runs" } else { "end states" },
            schedules: r.schedules,
            events: r.events,
            stopped: r.ended_by.as_ref().map(|s| s.to_string()),
            step_cut: r.runs_cut,
            max_steps: scenario.explore.max_steps,
            clock_cut: r.runs_clock_cut,
            max_time: scenario.ensemble.max_time,
            end_judges: end_judges(&scenario.hard, scenario.monitors.len()),
            // Unexpanded states of a stopped search are the stop's; the
            // state cap is a stop too.
            depth_cut: if seeded || r.ended_by.is_some() {
                0
            } else {
                r.truncated
            },
            depth: options.depth,
            schedules_short: (short && r.schedules < options.schedules)
                .then_some((r.schedules, options.schedules)),
            schedule_ran_out: false,
            clock_judged_by_cycles: options.strategy == Search::Dfs
                && r.cycle_check
                    .as_deref()
                    .is_some_and(|c| c.starts_with("on")),
        }
    }

    /// Whether runs the clock cut make these runs incomplete.
    fn clock_is_a_reason(&self) -> bool {
        self.clock_cut > 0 && !self.end_judges.is_empty() && !self.clock_judged_by_cycles
    }

    /// The one rule: why these runs cover less than was asked, one
    /// sentence each (empty: they cover it all). A run is judged on what
    /// it claims only if it reached its end — not cut by a signal, a time
    /// limit, a memory budget or a state cap, not cut at `max_steps`, not
    /// cut at the search's depth, not cut by the clock where a hard check
    /// judges the end (unless DFS's cycle check judged it), not a replayed
    /// schedule that ran out.
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        let unit = if self.unit.is_empty() {
            "runs"
        } else {
            self.unit
        };
        if let Some(stop) = &self.stopped {
            reasons.push(format!("the exploration stopped early: {stop}"));
        }
        if self.schedules == 0 && self.events == 0 {
            reasons.push("nothing was explored".to_string());
        }
        if self.step_cut > 0 {
            reasons.push(format!(
                "{} of {} {unit} were cut at explore.max_steps = {} before their natural end \
                 (their end-of-run checks saw unfinished runs); raise explore.max_steps",
                self.step_cut, self.schedules, self.max_steps
            ));
        }
        if self.clock_is_a_reason() {
            reasons.push(format!(
                "{} of {} {unit} were cut by the clock at ensemble.max_time = {} with work left \
                 (a timer, a pause or a session expiry pending), and {} {} a run's end: \
                 not judged there; raise ensemble.max_time",
                self.clock_cut,
                self.schedules,
                self.max_time,
                self.end_judges.join(", "),
                if self.end_judges.len() == 1 {
                    "judges"
                } else {
                    "judge"
                }
            ));
        }
        if self.depth_cut > 0 {
            reasons.push(format!(
                "{} states were cut at depth {} before their runs ended (nothing past that \
                 depth was checked); raise --depth or explore.depth",
                self.depth_cut, self.depth
            ));
        }
        if let Some((run, asked)) = self.schedules_short {
            reasons.push(format!("{run} of {asked} schedules were run"));
        }
        if self.schedule_ran_out {
            reasons.push(
                "the token's schedule ended before the run did: the run's end was not judged"
                    .to_string(),
            );
        }
        reasons
    }

    /// What the summary says of runs the clock cut that do not make the
    /// check incomplete (no hard check judges a run's end, or DFS's cycle
    /// check judged them), so that the count is never silent.
    pub fn clock_note(&self) -> Option<String> {
        let unit = if self.unit.is_empty() {
            "runs"
        } else {
            self.unit
        };
        if self.clock_cut == 0 || self.clock_is_a_reason() {
            return None;
        }
        Some(if self.end_judges.is_empty() {
            format!(
                "{} {unit} ended at ensemble.max_time = {} with work left; judged as they ran \
                 (no hard check here judges a run's end: every step was judged)",
                self.clock_cut, self.max_time
            )
        } else {
            format!(
                "{} {unit} ended at ensemble.max_time = {} with work left; {} judged by the \
                 cycle check there (a livelock is a cycle, found whatever max_time is; a stuck \
                 run ends before the clock)",
                self.clock_cut,
                self.max_time,
                self.end_judges.join(", ")
            )
        })
    }
}

/// Why `r` covers less than `options` asked (empty: it covers it all):
/// [`Coverage::reasons`] of the exploration. `options` are the ones
/// explored (a shard's, for a shard). A violation is judged on what was
/// run before it, so the seeds after the failing one are not missing.
pub(crate) fn incompleteness<C: zksim::Client>(
    scenario: &Scenario<C>,
    options: &Options,
    r: &Exploration,
) -> Vec<String> {
    Coverage::of_exploration(scenario, options, r).reasons()
}

#[cfg(test)]
mod tests {
    //! The library's door (`Check::assert_holds`) under the one rule, each
    //! case both ways: cut runs fail the assertion (the CLI exits 3 on the
    //! same scenario), the same check given enough steps or time passes.

    use std::panic::{catch_unwind, AssertUnwindSafe};

    use zkrecipes::lock::SequentialLock;

    use crate::check::Check;
    use crate::monitor::Property;

    fn panic_text(f: impl FnOnce()) -> Option<String> {
        let err = catch_unwind(AssertUnwindSafe(f)).err()?;
        Some(
            err.downcast_ref::<String>()
                .cloned()
                .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        )
    }

    fn lock() -> Check<SequentialLock> {
        Check::<SequentialLock>::new(2)
            .hard([Property::MutualExclusion, Property::Liveness])
            .seed(0)
            .jobs(1)
            .random(20)
    }

    #[test]
    fn assert_holds_fails_when_every_run_was_cut_at_max_steps() {
        let cut = lock().max_steps(15);
        assert_eq!(cut.run().exploration.runs_cut, 20);
        let text = panic_text(|| {
            cut.assert_holds();
        })
        .expect("a check of cut runs must not pass");
        assert!(text.contains("not checked completely"), "{text}");
        assert!(text.contains("cut at explore.max_steps = 15"), "{text}");
        let enough = lock().assert_holds();
        assert_eq!((enough.runs_cut, enough.schedules), (0, 20));
    }

    #[test]
    fn assert_holds_fails_when_the_clock_cut_the_runs_liveness_judges() {
        let cut = lock().configure(|s| s.ensemble.max_time = 2);
        let verdict = cut.run();
        assert!(verdict.exploration.runs_clock_cut > 0, "{verdict:?}");
        let text = panic_text(|| {
            cut.assert_holds();
        })
        .expect("a check of clock-cut runs must not pass where liveness is hard");
        assert!(
            text.contains("cut by the clock at ensemble.max_time = 2"),
            "{text}"
        );
        assert!(text.contains("liveness"), "{text}");
        // Mutual exclusion alone is judged at every step: the same runs pass.
        let safety = Check::<SequentialLock>::new(2)
            .hard([Property::MutualExclusion])
            .seed(0)
            .jobs(1)
            .random(20)
            .configure(|s| s.ensemble.max_time = 2);
        assert!(safety.assert_holds().runs_clock_cut > 0);
        // With the default clock the liveness check passes.
        assert_eq!(lock().assert_holds().runs_clock_cut, 0);
    }

    #[test]
    fn assert_holds_fails_when_a_search_is_cut_at_its_depth() {
        let shallow = Check::<SequentialLock>::new(2)
            .hard([Property::MutualExclusion])
            .configure(|s| s.ensemble.max_time = 1)
            .bfs(2);
        let text = panic_text(|| {
            shallow.assert_holds();
        })
        .expect("a depth-cut search must not pass");
        assert!(text.contains("cut at depth 2"), "{text}");
        let deep = Check::<SequentialLock>::new(2)
            .hard([Property::MutualExclusion])
            .configure(|s| s.ensemble.max_time = 1)
            .bfs(400);
        assert_eq!(deep.assert_holds().truncated, 0);
    }

    #[test]
    fn a_replay_that_ran_out_or_was_cut_is_incomplete() {
        let scenario = lock().scenario().clone();
        let outcome = crate::explore::random::run_random(&scenario, 0);
        let indices = outcome.schedule.to_indices(&scenario).unwrap();
        let replay = |indices: &[u32], s: &crate::scenario::Scenario<SequentialLock>| {
            let replayed = crate::explore::replay::replay_lasso(s, indices, None).unwrap();
            super::of_replay(s, indices, None, &replayed)
        };
        assert_eq!(replay(&indices, &scenario).kind(), super::VerdictKind::Ok);
        let short = replay(&indices[..indices.len() / 2], &scenario);
        assert_eq!(short.kind(), super::VerdictKind::Incomplete);
        assert!(short.incomplete[0].contains("schedule ended"), "{short:?}");
    }
}
