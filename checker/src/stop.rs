//! Why an exploration may end before it has explored what it was asked to:
//! Ctrl-C or SIGTERM, `--time-limit`, the memory budget, the state cap.
//!
//! These are the only places where the wall clock and the machine enter a
//! check, and they only ever *end* a search early: what was explored up to
//! that point is the same as in an unbounded run, and the command reports
//! the run as incomplete (exit 3) with the reason, never as "ok".

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What ended a search early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// `--time-limit` passed.
    TimeLimit(Duration),
    /// The process grew past its memory budget.
    MemoryBudget {
        /// Resident memory when the search stopped, in MiB.
        used_mb: u64,
        /// The budget it passed, in MiB.
        budget_mb: u64,
    },
    /// Exhaustive search reached its cap of distinct states.
    StateCap(usize),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Interrupted => write!(f, "interrupted (Ctrl-C or a termination signal)"),
            StopReason::TimeLimit(d) => write!(f, "the time limit of {}s was reached", d.as_secs()),
            StopReason::MemoryBudget { used_mb, budget_mb } => write!(
                f,
                "the memory budget was reached ({used_mb} MiB used of {budget_mb} MiB; \
                 raise it with --memory-mb or `explore.memory_mb`)"
            ),
            StopReason::StateCap(n) => {
                write!(
                    f,
                    "the state cap of {n} distinct states was reached (raise it with \
                     --max-states or `explore.max_states`)"
                )
            }
        }
    }
}

/// Set by the signal handler; read by every [`Stop`].
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How long after the first signal a second one is taken as part of the
/// same request to stop. GNU `timeout` sends SIGTERM to the command and to
/// its process group, microseconds apart; a shell's Ctrl-C may reach the
/// process twice the same way. Within the grace a second signal changes
/// nothing, so the command still prints its summary and JSON.
pub(crate) const SECOND_SIGNAL_GRACE: Duration = Duration::from_secs(2);

/// The exit code of a process ended at once by a second signal after the
/// grace: 3, incomplete, like every other run cut short — never the
/// shell's 130, which no zkcheck command documents.
pub(crate) const EXIT_STOPPED_AT_ONCE: i32 = 3;

/// What a signal asks for, given when the first one came (sans-IO: the
/// handler below only carries it out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnSignal {
    /// The first signal: stop the search, print what was found.
    StopCleanly,
    /// A second one within [`SECOND_SIGNAL_GRACE`]: the same request.
    AlreadyStopping,
    /// A second one after the grace: the search is not looking at its stop
    /// flag; end the process now (without a summary).
    EndNow,
}

/// The decision for a signal arriving at `now`, the first having come at
/// `first` (`None`: this is the first).
pub(crate) fn on_signal(first: Option<Instant>, now: Instant) -> OnSignal {
    match first {
        None => OnSignal::StopCleanly,
        Some(at) if now.saturating_duration_since(at) < SECOND_SIGNAL_GRACE => {
            OnSignal::AlreadyStopping
        }
        Some(_) => OnSignal::EndNow,
    }
}

/// Make Ctrl-C, SIGTERM and SIGHUP end the search cleanly (the command then
/// prints what it has). A second signal more than `SECOND_SIGNAL_GRACE`
/// after the first ends the process at once with exit code 3
/// (`EXIT_STOPPED_AT_ONCE`), for a search that does not look at its stop
/// flag often enough; one within the grace is ignored. Installed once per
/// process; later calls do nothing.
pub fn install_signal_handler() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    static FIRST: Mutex<Option<Instant>> = Mutex::new(None);
    INSTALLED.get_or_init(|| {
        // ctrlc runs this on a thread of its own, not in the signal
        // handler: locking and printing are allowed.
        let _ = ctrlc::set_handler(|| {
            let now = Instant::now();
            let Ok(mut first) = FIRST.lock() else {
                return;
            };
            match on_signal(*first, now) {
                OnSignal::StopCleanly => {
                    *first = Some(now);
                    INTERRUPTED.store(true, Ordering::SeqCst);
                }
                OnSignal::AlreadyStopping => {}
                OnSignal::EndNow => {
                    eprintln!(
                        "zkcheck: a second signal: stopped at once, without a summary \
                         (incomplete, exit {EXIT_STOPPED_AT_ONCE})"
                    );
                    std::process::exit(EXIT_STOPPED_AT_ONCE);
                }
            }
        });
    });
}

/// Whether a signal asked the process to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The stop conditions of one exploration.
#[derive(Debug)]
pub struct Stop {
    deadline: Option<(Instant, Duration)>,
    memory_budget: u64,
    /// A stop asked for by code (tests, a caller that has seen enough).
    requested: AtomicBool,
    /// Calls to [`Stop::check`], to sample memory only every so often.
    calls: AtomicU64,
    /// Whether `reason` is set (read without locking on every check).
    stopped: AtomicBool,
    reason: Mutex<Option<StopReason>>,
}

impl Default for Stop {
    fn default() -> Self {
        Stop::new(None, default_memory_budget())
    }
}

/// Read the resident memory once every this many checks (reading
/// `/proc/self/status` costs tens of microseconds).
const MEMORY_SAMPLE: u64 = 256;

impl Stop {
    /// Stop after `time_limit` (if any) or past `memory_budget` bytes.
    pub fn new(time_limit: Option<Duration>, memory_budget: u64) -> Self {
        Stop {
            deadline: time_limit.map(|d| (Instant::now() + d, d)),
            memory_budget,
            requested: AtomicBool::new(false),
            calls: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            reason: Mutex::new(None),
        }
    }

    /// Ask the exploration to stop as if interrupted.
    pub fn request(&self) {
        self.requested.store(true, Ordering::Relaxed);
    }

    /// The memory budget in bytes.
    pub fn memory_budget(&self) -> u64 {
        self.memory_budget
    }

    /// Whether the exploration should stop now, and why. Cheap enough to
    /// call once per run or per expanded state; the first reason sticks.
    pub fn check(&self) -> Option<StopReason> {
        if self.stopped.load(Ordering::Relaxed) {
            return self.reason();
        }
        let reason = if interrupted() || self.requested.load(Ordering::Relaxed) {
            Some(StopReason::Interrupted)
        } else if self.deadline.is_some_and(|(at, _)| Instant::now() >= at) {
            self.deadline.map(|(_, d)| StopReason::TimeLimit(d))
        } else if self.calls.fetch_add(1, Ordering::Relaxed) % MEMORY_SAMPLE == 0 {
            self.memory_exceeded()
        } else {
            None
        };
        reason.inspect(|r| self.record(r.clone()))
    }

    /// Record a reason found elsewhere (the state cap).
    pub fn record(&self, reason: StopReason) {
        if let Ok(mut r) = self.reason.lock() {
            r.get_or_insert(reason);
            self.stopped.store(true, Ordering::Relaxed);
        }
    }

    /// The reason the exploration stopped, if it did.
    pub fn reason(&self) -> Option<StopReason> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }

    fn memory_exceeded(&self) -> Option<StopReason> {
        let used = resident_bytes()?;
        (used > self.memory_budget).then_some(StopReason::MemoryBudget {
            used_mb: used >> 20,
            budget_mb: self.memory_budget >> 20,
        })
    }
}

/// The process's resident memory, from `/proc/self/status` (Linux); `None`
/// elsewhere, where only the state cap and the time limit bound a search.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, "VmRSS:").map(|kib| kib << 10)
}

/// The default memory budget: half the memory available when the command
/// starts (what the process already uses included), at least 256 MiB; 4 GiB
/// where `/proc/meminfo` cannot be read.
pub fn default_memory_budget() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| kib_field(&m, "MemAvailable:").or_else(|| kib_field(&m, "MemTotal:")))
        .map(|kib| kib << 10);
    match available {
        Some(bytes) => (bytes / 2 + resident_bytes().unwrap_or(0)).max(256 << 20),
        None => 4 << 30,
    }
}

/// A `Name:   1234 kB` line of a `/proc` file, in KiB.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_within_the_grace_keeps_the_clean_stop() {
        let t0 = Instant::now();
        assert_eq!(on_signal(None, t0), OnSignal::StopCleanly);
        // GNU timeout's two SIGTERMs, microseconds apart.
        let soon = t0 + Duration::from_micros(30);
        assert_eq!(on_signal(Some(t0), soon), OnSignal::AlreadyStopping);
        let late = t0 + SECOND_SIGNAL_GRACE;
        assert_eq!(on_signal(Some(t0), late), OnSignal::EndNow);
        assert_ne!(EXIT_STOPPED_AT_ONCE, 130);
    }

    #[test]
    fn a_requested_stop_is_seen_and_sticks() {
        let stop = Stop::new(None, u64::MAX);
        assert_eq!(stop.check(), None);
        stop.request();
        assert_eq!(stop.check(), Some(StopReason::Interrupted));
        assert_eq!(stop.reason(), Some(StopReason::Interrupted));
    }

    #[test]
    fn a_passed_deadline_stops() {
        let stop = Stop::new(Some(Duration::ZERO), u64::MAX);
        assert_eq!(stop.check(), Some(StopReason::TimeLimit(Duration::ZERO)));
    }

    #[test]
    fn a_tiny_memory_budget_stops_on_linux() {
        let stop = Stop::new(None, 1);
        if resident_bytes().is_some() {
            assert!(matches!(
                stop.check(),
                Some(StopReason::MemoryBudget { .. })
            ));
        }
    }

    #[test]
    fn the_default_budget_is_sane() {
        let b = default_memory_budget();
        assert!(b >= 256 << 20, "{b}");
    }
}
