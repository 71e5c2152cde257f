//! A progress bar on a terminal, nothing otherwise. Progress is only shown,
//! never read back: it cannot change what a run decides.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress of an exploration (seeds done, or states seen).
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `total` schedules (`None`: a spinner counting states), drawn
    /// on stderr only if stderr is a terminal.
    pub fn new(total: Option<u64>) -> Self {
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} schedules ({per_sec}, eta {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        if std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        } else {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        Progress { bar }
    }

    /// A progress that never draws (library use, tests).
    pub fn hidden() -> Self {
        Progress {
            bar: ProgressBar::hidden(),
        }
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Exhaustive search: distinct states so far.
    pub fn set_states(&self, states: u64) {
        if states % 1024 == 0 {
            self.bar.set_message(format!("{states} distinct states"));
            self.bar.tick();
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
