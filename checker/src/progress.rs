//! What the outside world sees of an exploration, and how it can end one.
//!
//! On a terminal, an indicatif bar on stderr; on anything else (a CI log, a
//! file), one plain line on stderr every few seconds; with `--quiet`,
//! nothing. Progress is only shown, never read back: it cannot change what
//! a run decides. It also carries the exploration's [`Stop`] conditions, so
//! every strategy, which already reports progress, can be ended cleanly.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::stop::{Stop, StopReason};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    /// An indicatif bar (stderr is a terminal).
    Bar,
    /// A plain line every `LINE_EVERY` (stderr is not a terminal).
    Lines,
    /// Nothing (`--quiet`, library use, tests).
    Hidden,
}

impl Display {
    /// A bar on a terminal, lines otherwise; nothing if `quiet`.
    pub fn for_stderr(quiet: bool) -> Self {
        if quiet {
            Display::Hidden
        } else if std::io::stderr().is_terminal() {
            Display::Bar
        } else {
            Display::Lines
        }
    }
}

/// How often a progress line is printed when stderr is not a terminal.
pub(crate) const LINE_EVERY: Duration = Duration::from_secs(5);

/// Progress of an exploration (seeds done, or states seen) and its stop conditions.
pub struct Progress {
    bar: ProgressBar,
    display: Display,
    total: Option<u64>,
    /// What is counted, for progress lines (`schedules`, `runs`).
    unit: &'static str,
    started: Instant,
    /// Milliseconds after `started` of the last progress line.
    last_line: AtomicU64,
    states: AtomicU64,
    stop: Stop,
}

impl Progress {
    /// Progress of `total` schedules (`None`: distinct states of an
    /// exhaustive search), shown on stderr as `display` says.
    pub fn new(total: Option<u64>, display: Display) -> Self {
        Self::counting(total, "schedules", display)
    }

    /// [`Progress::new`] counting some other `unit` (`runs` for compare).
    pub fn counting(total: Option<u64>, unit: &'static str, display: Display) -> Self {
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}})"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_draw_target(match display {
            Display::Bar => ProgressDrawTarget::stderr(),
            _ => ProgressDrawTarget::hidden(),
        });
        Progress {
            bar,
            display,
            total,
            unit,
            started: Instant::now(),
            last_line: AtomicU64::new(0),
            states: AtomicU64::new(0),
            stop: Stop::default(),
        }
    }

    /// A progress that never draws (library use, tests), with the default
    /// stop conditions (no time limit, the machine's memory budget).
    pub fn hidden() -> Self {
        Self::new(None, Display::Hidden)
    }

    /// The same progress, ended by `stop`'s conditions.
    pub fn with_stop(mut self, stop: Stop) -> Self {
        self.stop = stop;
        self
    }

    /// The stop conditions.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Whether the exploration should end now, and why (see [`Stop::check`]).
    pub fn stopped(&self) -> Option<StopReason> {
        self.stop.check()
    }

    /// Count `n` more runs (or states) done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.maybe_line();
    }

    /// Exhaustive search: distinct states so far.
    pub(crate) fn set_states(&self, states: u64) {
        self.states.store(states, Ordering::Relaxed);
        if states % 1024 == 0 {
            self.bar.set_message(format!("{states} distinct states"));
            self.bar.tick();
            self.maybe_line();
        }
    }

    /// On a non-terminal, a line every [`LINE_EVERY`].
    fn maybe_line(&self) {
        if self.display != Display::Lines {
            return;
        }
        let now = self.started.elapsed();
        let now_ms = now.as_millis() as u64;
        let last = self.last_line.load(Ordering::Relaxed);
        if now_ms < last + LINE_EVERY.as_millis() as u64
            || self
                .last_line
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let secs = now.as_secs_f64().max(1e-3);
        let line = match self.total {
            Some(total) => {
                let done = self.bar.position();
                format!(
                    "progress: {done}/{total} {} ({:.0}%), {:.0}/s, {:.0}s elapsed",
                    self.unit,
                    100.0 * done as f64 / total.max(1) as f64,
                    done as f64 / secs,
                    secs
                )
            }
            None => format!(
                "progress: {} distinct states, {:.0}s elapsed",
                self.states.load(Ordering::Relaxed),
                secs
            ),
        };
        let _ = writeln!(std::io::stderr(), "{line}");
    }

    /// Clear the bar: the search is over and its result is about to be printed.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
