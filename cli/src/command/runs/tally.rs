//! What one run came to, and what many runs add up to — plain data, no I/O,
//! so that the rule "a run whose app crashed or timed out is never ok" is
//! written once and tested on its own.

use std::time::Duration;

/// How the app of one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppEnd {
    /// It exited by itself with this code.
    Exited(i32),
    /// It was ended by a signal it did not ask for (a crash).
    Signalled,
    /// It ran past the per-run timeout and was killed.
    TimedOut(Duration),
    /// It could not be started at all.
    NotStarted(String),
    /// The command was interrupted (Ctrl-C, SIGTERM) while it ran: killed.
    Interrupted,
}

impl AppEnd {
    /// Why the run is not a clean one, in words, or `None` if it is.
    pub fn trouble(&self) -> Option<String> {
        match self {
            AppEnd::Exited(0) => None,
            AppEnd::Exited(code) => Some(format!("the app exited with code {code}")),
            AppEnd::Signalled => Some("the app was killed by a signal".into()),
            AppEnd::TimedOut(limit) => Some(format!(
                "the app was still running after {} s and was killed",
                limit.as_secs_f64()
            )),
            AppEnd::NotStarted(why) => Some(format!("the app could not be started: {why}")),
            AppEnd::Interrupted => {
                Some("zkcheck was interrupted while the app ran: the app was killed".into())
            }
        }
    }
}

/// One run's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The app finished cleanly and every judge held.
    Ok,
    /// A judge found a violation: the history proves it, whatever became
    /// of the app afterwards. The names of the judges that found one.
    Violation(Vec<String>),
    /// Nothing proven either way: why.
    Incomplete(String),
}

impl Outcome {
    /// The rule. `judged` is the judges' exit code (0 ok, 1 violation, 3
    /// incomplete) with the violating judges' names, or why the history
    /// could not be judged.
    pub fn of(app: &AppEnd, judged: Result<(u8, Vec<String>), String>) -> Outcome {
        match judged {
            Ok((1, violated)) => Outcome::Violation(violated),
            Err(why) => Outcome::Incomplete(match app.trouble() {
                Some(trouble) => format!("{trouble}; the history was not judged: {why}"),
                None => format!("the history was not judged: {why}"),
            }),
            Ok((code, _)) => match app.trouble() {
                Some(trouble) => Outcome::Incomplete(trouble),
                None if code == 0 => Outcome::Ok,
                None => Outcome::Incomplete(
                    "a judge had nothing to judge, or the history was cut".into(),
                ),
            },
        }
    }

    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Violation(_) => "violation",
            Outcome::Incomplete(_) => "incomplete",
        }
    }
}

/// The runs so far: counts, the first violating run, the exit code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub runs: u64,
    pub ok: u64,
    pub violations: u64,
    pub incomplete: u64,
    /// The first run (in run order) that violated: its seed.
    pub first_violation: Option<u64>,
    /// The first incomplete run: its seed and why.
    pub first_incomplete: Option<(u64, String)>,
    /// Why fewer runs were done than asked (Ctrl-C), if so: never ok.
    pub cut_short: Option<String>,
}

impl Tally {
    pub fn add(&mut self, seed: u64, outcome: &Outcome) {
        self.runs += 1;
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Violation(_) => {
                self.violations += 1;
                self.first_violation.get_or_insert(seed);
            }
            Outcome::Incomplete(why) => {
                self.incomplete += 1;
                self.first_incomplete.get_or_insert((seed, why.clone()));
            }
        }
    }

    /// Violating runs over all runs: the app's threads are not replayable,
    /// so a rate, not a single run, is the answer (docs/RUNS.md).
    pub fn rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.violations as f64 / self.runs as f64
        }
    }

    /// 1 if any run violated; else 3 if any was incomplete, none ran, or
    /// fewer ran than asked; else 0.
    pub fn exit(&self) -> u8 {
        if self.violations > 0 {
            1
        } else if self.incomplete > 0 || self.runs == 0 || self.cut_short.is_some() {
            3
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crashed_or_timed_out_app_is_never_ok() {
        for app in [
            AppEnd::Exited(1),
            AppEnd::Signalled,
            AppEnd::TimedOut(Duration::from_secs(5)),
            AppEnd::NotStarted("no such file".into()),
            AppEnd::Interrupted,
        ] {
            let outcome = Outcome::of(&app, Ok((0, vec![])));
            assert!(
                matches!(outcome, Outcome::Incomplete(_)),
                "{app:?}: {outcome:?}"
            );
        }
        assert_eq!(
            Outcome::of(&AppEnd::Exited(0), Ok((0, vec![]))),
            Outcome::Ok
        );
    }

    #[test]
    fn a_violation_stands_whatever_became_of_the_app() {
        let v = Outcome::of(&AppEnd::Signalled, Ok((1, vec!["owner-writes".into()])));
        assert_eq!(v, Outcome::Violation(vec!["owner-writes".into()]));
    }

    #[test]
    fn an_unjudged_or_incomplete_history_is_incomplete() {
        let o = Outcome::of(&AppEnd::Exited(0), Err("line 3: bad".into()));
        assert!(
            matches!(o, Outcome::Incomplete(ref w) if w.contains("line 3")),
            "{o:?}"
        );
        let o = Outcome::of(&AppEnd::Exited(0), Ok((3, vec![])));
        assert!(matches!(o, Outcome::Incomplete(_)), "{o:?}");
    }

    #[test]
    fn the_tally_counts_and_exits_as_everywhere() {
        let mut t = Tally::default();
        assert_eq!(t.exit(), 3, "no run is not ok");
        t.add(7, &Outcome::Ok);
        assert_eq!(t.exit(), 0);
        t.add(8, &Outcome::Incomplete("timed out".into()));
        assert_eq!(t.exit(), 3);
        t.add(9, &Outcome::Violation(vec!["election".into()]));
        t.add(10, &Outcome::Violation(vec!["election".into()]));
        assert_eq!(t.exit(), 1);
        assert_eq!((t.runs, t.ok, t.violations, t.incomplete), (4, 1, 2, 1));
        assert_eq!(t.first_violation, Some(9));
        assert_eq!(t.rate(), 0.5);
        let mut short = Tally::default();
        short.add(7, &Outcome::Ok);
        assert_eq!(short.exit(), 0);
        short.cut_short = Some("interrupted after 1 of 5 runs".into());
        assert_eq!(short.exit(), 3, "fewer runs than asked is never ok");
    }
}
