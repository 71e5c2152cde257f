//! A failure made readable: shrunk, replayed into a trace, and sealed in a
//! replay token. Its `Display` is the one rendering of a violation that the
//! CLI prints and a failing `cargo test` assertion panics with.

use std::cell::RefCell;
use std::fmt;

use zkrecipes::RecipeSet;

use crate::explore::replay::replay;
use crate::explore::Failure;
use crate::monitor::{Property, Violation};
use crate::scenario::{property_name, Scenario};
use crate::shrink::{shrink_with, Budget, Phases};
use crate::stop::StopReason;
use crate::token::Token;

/// A shrunk failure with its trace and replay token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The violation at the end of the shrunk schedule.
    pub violation: Violation,
    /// The seed that found it (seeded strategies only).
    pub seed: Option<u64>,
    /// Steps of the schedule as found, and after shrinking.
    pub found_steps: usize,
    /// Steps of the schedule after shrinking: what the trace shows and the
    /// token replays.
    pub steps: usize,
    /// Replays the shrinker tried.
    pub shrink_attempts: usize,
    /// Why shrinking ended before it was done (Ctrl-C, a time limit, the
    /// memory budget); the schedule is then the smallest failing one found
    /// by that moment.
    pub shrink_cut_short: Option<StopReason>,
    /// Replayed from a token, not found by a search: the run as the token
    /// gives it (neither a seed nor exhaustive search found it here).
    pub replayed: bool,
    /// The shrunk run, one line per thing that happened (ends with the violation).
    pub trace: String,
    /// `zk1:…`: the whole run in one line, for `zkcheck replay` or
    /// `Check::replay`. `None` only if the schedule failed to replay
    /// (an internal error, said in `trace`).
    pub token: Option<String>,
    /// A lasso ([`crate::lasso`]): the steps from this one to the end
    /// repeat for ever; the trace marks it and the token carries it.
    pub cycle_from: Option<usize>,
    /// How the shrinker made the scenario smaller ("servers 3 → 1",
    /// "clients 4 → 2"; [`crate::shrink::scenario`]); empty when the
    /// counterexample runs on the scenario checked. The trace and the
    /// token are of the smaller scenario (the token carries it whole).
    pub reductions: Vec<String>,
    /// No run of the same story (its property, explanation shape and
    /// ingredients) on the counterexample's scenario is shorter: the
    /// shrinker's search from the initial state looked at every shorter
    /// one ([`crate::shrink::Shrunk::no_shorter_than`]). Equal to
    /// `steps`: a shortest counterexample. `0`: not known (replayed, a
    /// lasso, shrinking cut short).
    pub no_shorter_than: usize,
}

impl Counterexample {
    /// Shrink `failure` and replay it into a trace and a token.
    pub fn of<C: RecipeSet>(scenario: &Scenario<C>, failure: &Failure) -> Self {
        Self::shrunk_until(scenario, failure, &|| None).0
    }

    /// [`Counterexample::of`] with a shrinker that can be stopped: `stop`
    /// is asked between replays and says why shrinking must end now (the
    /// CLI passes its Ctrl-C, time limit and memory budget). Also returns
    /// the token as a value, for the viewer.
    pub fn shrunk_until<C: RecipeSet>(
        scenario: &Scenario<C>,
        failure: &Failure,
        stop: &dyn Fn() -> Option<StopReason>,
    ) -> (Self, Option<Token<C>>) {
        Self::shrunk_with(scenario, failure, Phases::All, stop)
    }

    /// [`Counterexample::shrunk_until`] with the shrinker's `phases`
    /// ([`Phases::KeepScenario`]: on the scenario as checked).
    pub fn shrunk_with<C: RecipeSet>(
        scenario: &Scenario<C>,
        failure: &Failure,
        phases: Phases,
        stop: &dyn Fn() -> Option<StopReason>,
    ) -> (Self, Option<Token<C>>) {
        // The first reason `stop` gave, if it ever did: only then was
        // shrinking cut short.
        let cut_short = RefCell::new(None);
        let stopped = || match stop() {
            Some(reason) => {
                cut_short.borrow_mut().get_or_insert(reason);
                true
            }
            None => false,
        };
        if let Some(from) = failure.cycle_from {
            return Self::lasso(scenario, failure, from, &stopped, &cut_short);
        }
        let shrunk = shrink_with(
            scenario,
            &failure.schedule,
            &failure.violation,
            phases,
            Budget::default(),
            &stopped,
        );
        // The trace and token are of the scenario the schedule runs on.
        let scenario = &shrunk.scenario;
        let mut c = Counterexample {
            violation: shrunk.violation,
            seed: failure.seed,
            found_steps: failure.schedule.len(),
            steps: shrunk.schedule.len(),
            shrink_attempts: shrunk.attempts,
            shrink_cut_short: cut_short.into_inner(),
            replayed: false,
            trace: String::new(),
            token: None,
            cycle_from: None,
            reductions: shrunk.reductions.clone(),
            no_shorter_than: shrunk.no_shorter_than,
        };
        let Some(indices) = shrunk.schedule.to_indices(scenario) else {
            c.trace = "(internal error: the shrunk schedule does not replay)\n".into();
            return (c, None);
        };
        match replay(scenario, &indices) {
            Ok(r) => c.trace = r.trace.text,
            Err(e) => c.trace = format!("(internal error: {e})\n"),
        }
        let token = Token::new(scenario.clone(), indices);
        c.token = Some(token.encode());
        (c, Some(token))
    }

    /// A lasso's counterexample: the prefix shrunk while the cycle stays a
    /// livelock ([`crate::lasso::shrink_prefix`]; the cycle is kept as
    /// found), the trace with the cycle marked, a token that carries it.
    fn lasso<C: RecipeSet>(
        scenario: &Scenario<C>,
        failure: &Failure,
        from: usize,
        stopped: &dyn Fn() -> bool,
        cut_short: &RefCell<Option<StopReason>>,
    ) -> (Self, Option<Token<C>>) {
        let (events, from, violation, attempts) =
            crate::lasso::shrink_prefix(scenario, &failure.schedule.events, from, stopped);
        let schedule = crate::schedule::Schedule { events };
        let mut c = Counterexample {
            violation,
            seed: failure.seed,
            found_steps: failure.schedule.len(),
            steps: schedule.len(),
            shrink_attempts: attempts,
            shrink_cut_short: cut_short.borrow().clone(),
            replayed: false,
            trace: String::new(),
            token: None,
            cycle_from: Some(from),
            reductions: Vec::new(),
            no_shorter_than: 0,
        };
        let Some(indices) = schedule.to_indices(scenario) else {
            c.trace = "(internal error: the lasso does not replay)\n".into();
            return (c, None);
        };
        match crate::explore::replay::replay_lasso(scenario, &indices, Some(from)) {
            Ok(r) => c.trace = r.trace.text,
            Err(e) => c.trace = format!("(internal error: {e})\n"),
        }
        let token = Token::new(scenario.clone(), indices).with_cycle(Some(from));
        c.token = Some(token.encode());
        (c, Some(token))
    }

    /// The property that broke.
    pub fn property(&self) -> Property {
        self.violation.property
    }

    /// The line that says the counterexample runs on a smaller scenario
    /// than the one checked (`None` when it does not).
    pub fn reductions_line(&self) -> Option<String> {
        Self::describe_reductions(&self.reductions)
    }

    /// The line that says how short the counterexample is known to be
    /// (`None` when nothing is known).
    pub fn shortest_line(&self) -> Option<String> {
        Self::describe_shortest(self.steps, self.no_shorter_than)
    }

    /// "the shortest of its story: …" or "no run of its story is shorter
    /// than N steps" for a counterexample of `steps` steps that no run of
    /// fewer than `bound` steps tells (`0`: unknown): the one wording of
    /// every summary.
    pub fn describe_shortest(steps: usize, bound: usize) -> Option<String> {
        if bound == 0 {
            None
        } else if bound >= steps {
            Some(
                "the shortest of its story: no run of fewer steps breaks the property with the \
                 same kind of explanation and faults (searched)"
                    .to_string(),
            )
        } else {
            Some(format!(
                "no run of fewer than {bound} steps breaks the property with the same kind of \
                 explanation and faults (searched)"
            ))
        }
    }

    /// "shrunk on a smaller scenario: servers 3 → 1, clients 4 → 2 (the
    /// token carries it)" for the reductions a shrinker made (`None` if
    /// none): the one wording of every summary (a check's, a merge's).
    pub fn describe_reductions(reductions: &[String]) -> Option<String> {
        (!reductions.is_empty()).then(|| {
            format!(
                "shrunk on a smaller scenario: {} (the token carries it)",
                reductions.join(", ")
            )
        })
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", property_name(self.property), self.explanation)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let found = match self.seed {
            Some(seed) => format!("seed {seed}"),
            None => "exhaustive search".to_string(),
        };
        write!(
            f,
            "{} (found by {found} after {} steps)",
            self.violation,
            self.schedule.len()
        )
    }
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.replayed {
            writeln!(
                f,
                "VIOLATION of {} (replayed from a token: {} steps)",
                property_name(self.violation.property),
                self.steps
            )?;
        } else {
            let found = match self.seed {
                Some(seed) => format!("seed {seed}"),
                None => "exhaustive search".to_string(),
            };
            writeln!(
                f,
                "VIOLATION of {} (found by {found} after {} steps; shrunk to {} steps in {} replays)",
                property_name(self.violation.property),
                self.found_steps,
                self.steps,
                self.shrink_attempts
            )?;
        }
        if let Some(line) = self.reductions_line() {
            writeln!(f, "{line}")?;
        }
        if let Some(line) = self.shortest_line() {
            writeln!(f, "{line}")?;
        }
        if let Some(reason) = &self.shrink_cut_short {
            writeln!(f, "(shrinking ended early: {reason})")?;
        }
        if let Some(from) = self.cycle_from {
            writeln!(
                f,
                "LASSO: steps {from}-{} repeat for ever (the trace marks where the cycle starts)",
                self.steps.saturating_sub(1)
            )?;
        }
        writeln!(f, "{}", self.violation.explanation)?;
        writeln!(f)?;
        writeln!(f, "trace:")?;
        write!(f, "{}", self.trace)?;
        if let Some(token) = &self.token {
            writeln!(f)?;
            write!(f, "replay: {token}")?;
        }
        Ok(())
    }
}
