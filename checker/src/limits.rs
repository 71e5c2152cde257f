//! The documented limits of every number a user can give zkcheck.
//!
//! One table, read the same way for a scenario file, a command-line flag and
//! the scenario inside a replay token, so that no input can ask for a world
//! the machine cannot hold (`clients = 1000000000`), a loop that never ends
//! (`--depth 18446744073709551615`) or a thread per seed (`--jobs 100000`).
//! Out of range is bad input (exit 2) with the field, the value and the
//! range; `docs/SCENARIOS.md` lists the same table (a test keeps them equal).
//!
//! The bounds are generous for what the checker is for (a handful of
//! clients and servers, runs of thousands of steps) and small enough that
//! the largest allowed scenario still fits a laptop; time and memory beyond
//! that are the job of `--time-limit` and the memory budget.

/// An inclusive range for one user-given number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The field's name in a scenario file (`ensemble.servers`) or the flag (`--jobs`).
    pub name: &'static str,
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted.
    pub max: u64,
    /// Why the bound is where it is, for the error message.
    pub why: &'static str,
}

impl Limit {
    /// `Ok` if `value` is within the range, else the message naming the field.
    pub fn check(&self, value: u64) -> Result<u64, String> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(self.refusal(&value.to_string()))
        }
    }

    /// [`Limit::check`] for a `usize` field.
    pub fn check_usize(&self, value: usize) -> Result<usize, String> {
        self.check(value as u64).map(|_| value)
    }

    /// The message for a value out of range (also used for values that do
    /// not even fit the field's type).
    pub fn refusal(&self, value: &str) -> String {
        format!(
            "`{}` = {value} is out of range: it must be between {} and {} ({})",
            self.name, self.min, self.max, self.why
        )
    }

    /// The same limit under another name (a flag setting a scenario field).
    pub const fn named(self, name: &'static str) -> Limit {
        Limit { name, ..self }
    }
}

/// How many clients a scenario runs.
pub const CLIENTS: Limit = Limit {
    name: "clients",
    min: 1,
    max: 1024,
    why: "a world holds every client; herds grow with the square of the count",
};
/// How many servers the ensemble has.
pub const SERVERS: Limit = Limit {
    name: "ensemble.servers",
    min: 1,
    max: 9,
    why: "ZooKeeper ensembles have 1 to 9 voting servers in practice",
};
/// How many times each client acquires in a run.
pub const ROUNDS: Limit = Limit {
    name: "workload.rounds",
    min: 1,
    max: 1_000,
    why: "each client acquires this many times per run",
};
/// How long a client holds the lock.
pub const HOLD_TICKS: Limit = Limit {
    name: "workload.hold_ticks",
    min: 0,
    max: 100_000,
    why: "simulated ticks",
};
/// How long a client waits between rounds.
pub const THINK_TICKS: Limit = Limit {
    name: "workload.think_ticks",
    min: 0,
    max: 100_000,
    why: "simulated ticks",
};
/// The session timeout the servers grant.
pub const SESSION_TIMEOUT: Limit = Limit {
    name: "ensemble.session_timeout",
    min: 1,
    max: 100_000,
    why: "simulated ticks",
};
/// How long a paused client process stays frozen.
pub const PAUSE_TICKS: Limit = Limit {
    name: "ensemble.pause_ticks",
    min: 0,
    max: 100_000,
    why: "simulated ticks",
};
/// The clock at which a run ends.
pub const MAX_TIME: Limit = Limit {
    name: "ensemble.max_time",
    min: 1,
    max: 1_000_000,
    why: "simulated ticks; every tick is a step of the run",
};
/// Each kind of fault in `[faults]`.
pub const FAULTS: Limit = Limit {
    name: "faults",
    min: 0,
    max: 1_000,
    why: "faults per run",
};
/// How many seeded schedules a random or PCT sweep runs.
pub const SCHEDULES: Limit = Limit {
    name: "explore.schedules",
    min: 1,
    max: 1_000_000_000_000,
    why: "seeded runs; 0 would check nothing",
};
/// The step bound of one run.
pub const MAX_STEPS: Limit = Limit {
    name: "explore.max_steps",
    min: 1,
    max: 10_000_000,
    why: "every run keeps its schedule in memory, one per worker (24 bytes a step)",
};
/// PCT's bug depth.
pub const PCT_DEPTH: Limit = Limit {
    name: "explore.pct_depth",
    min: 1,
    max: 64,
    why: "PCT's bug depth d; real bugs need d <= 3, each extra level divides the odds",
};
/// The depth bound of exhaustive search.
pub const DEPTH: Limit = Limit {
    name: "explore.depth",
    min: 1,
    max: 100_000,
    why: "the longest schedule BFS/DFS explores; 0 would explore nothing",
};
/// The memory budget of a search.
pub const MEMORY_MB: Limit = Limit {
    name: "explore.memory_mb",
    min: 16,
    max: 1 << 22,
    why: "MiB of memory exhaustive search and PCT may use before stopping as incomplete",
};
/// The cap on distinct states of exhaustive search.
pub const MAX_STATES: Limit = Limit {
    name: "explore.max_states",
    min: 1,
    max: 100_000_000_000,
    why: "distinct states BFS/DFS visits before stopping as incomplete (about 35 bytes each, more on BFS's frontier)",
};
/// Worker threads of a sweep or BFS.
pub const JOBS: Limit = Limit {
    name: "--jobs",
    min: 1,
    max: 64,
    why: "worker threads; more than the machine's cores only slows a sweep down",
};
/// `n` of `--shard k/n`: how many shards a random or PCT sweep is split into.
pub const SHARDS: Limit = Limit {
    name: "--shard",
    min: 1,
    max: 1_000_000,
    why: "n of k/n, the shards a sweep is split into; each must get at least one seed",
};
/// The wall-clock limit of a search.
pub const TIME_LIMIT: Limit = Limit {
    name: "--time-limit",
    min: 1,
    max: 7 * 24 * 3600,
    why: "seconds of wall-clock time",
};
/// `compare`: seeded runs per recipe and client count.
pub const COMPARE_SEEDS: Limit = Limit {
    name: "--seeds",
    min: 1,
    max: 100_000,
    why: "seeded runs per recipe and client count",
};
/// `compare`: how many client counts are compared.
pub const COMPARE_CLIENT_COUNTS: Limit = Limit {
    name: "--clients",
    min: 1,
    max: 16,
    why: "distinct client counts compared",
};
/// Each latency and service time in `[timing]` (model microseconds).
pub const TIMING_US: Limit = Limit {
    name: "timing.*_us",
    min: 0,
    max: 10_000_000,
    why: "model microseconds; 10 s is far beyond any message or request",
};
/// `[timing]`: how much a latency or service time varies.
pub const JITTER_PERCENT: Limit = Limit {
    name: "timing.jitter_percent",
    min: 0,
    max: 100,
    why: "a latency or service time varies within ± this share of itself",
};
/// `[timing]`: the mean time between faults in timed runs.
pub const FAULT_INTERVAL_US: Limit = Limit {
    name: "timing.fault_interval_us",
    min: 1,
    max: 3_600_000_000,
    why: "model microseconds between faults, on average",
};
/// `--real-runs` of `zkreal`'s `compare` example: the real server's runs per cell.
pub const REAL_RUNS: Limit = Limit {
    name: "--real-runs",
    min: 1,
    max: 100,
    why: "runs on the real server per recipe and client count; each takes real seconds",
};
/// `calibrate --samples`.
pub const CALIBRATE_SAMPLES: Limit = Limit {
    name: "--samples",
    min: 10,
    max: 100_000,
    why: "requests per measurement of `calibrate`",
};
/// `calibrate --repeat`.
pub const CALIBRATE_REPEAT: Limit = Limit {
    name: "--repeat",
    min: 1,
    max: 100,
    why: "measurements of `calibrate`, a few seconds each",
};
/// Characters of a scenario's `name` and `root`.
pub const TEXT_LEN: Limit = Limit {
    name: "name",
    min: 1,
    max: 200,
    why: "characters",
};
/// Bytes of a scenario file.
pub const FILE_BYTES: Limit = Limit {
    name: "scenario file",
    min: 0,
    max: 1 << 20,
    why: "bytes",
};
/// Bytes of a file (or standard input) of shard results for `merge`.
pub const SHARD_FILE_BYTES: Limit = Limit {
    name: "shard file",
    min: 0,
    max: 64 << 20,
    why: "bytes; a result is a few KiB, and its counterexample's token at most 4 MiB",
};
/// Bytes of a replay token.
pub const TOKEN_BYTES: Limit = Limit {
    name: "token",
    min: 1,
    max: 4 << 20,
    why: "bytes; a token carries a scenario and one character per step or so",
};

/// Every limit, in the order `docs/SCENARIOS.md` lists them.
pub const ALL: [Limit; 31] = [
    CLIENTS,
    SERVERS,
    ROUNDS,
    HOLD_TICKS,
    THINK_TICKS,
    SESSION_TIMEOUT,
    PAUSE_TICKS,
    MAX_TIME,
    FAULTS,
    SCHEDULES,
    MAX_STEPS,
    PCT_DEPTH,
    DEPTH,
    MEMORY_MB,
    MAX_STATES,
    JOBS,
    SHARDS,
    TIME_LIMIT,
    COMPARE_SEEDS,
    COMPARE_CLIENT_COUNTS,
    REAL_RUNS,
    CALIBRATE_SAMPLES,
    CALIBRATE_REPEAT,
    TIMING_US,
    JITTER_PERCENT,
    FAULT_INTERVAL_US,
    TEXT_LEN,
    TEXT_LEN.named("root"),
    FILE_BYTES,
    SHARD_FILE_BYTES,
    TOKEN_BYTES,
];

/// Seeds `seed .. seed + schedules` must all be `u64`s: a sweep that would
/// wrap around is refused rather than silently cut short.
pub fn check_seed_range(seed: u64, schedules: u64, seed_name: &str) -> Result<(), String> {
    if seed.checked_add(schedules).is_none() {
        return Err(format!(
            "`{seed_name}` = {seed} with {schedules} schedules runs past the last seed \
             (18446744073709551615): the first seed must be at most {}",
            u64::MAX - schedules
        ));
    }
    Ok(())
}

/// The number of worker threads used when `--jobs` is not given: the
/// machine's cores, within [`JOBS`].
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(JOBS.min as usize, JOBS.max as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_out_of_range_names_the_field_and_the_range() {
        let e = CLIENTS.check(1_000_000_000).unwrap_err();
        assert!(e.contains("`clients` = 1000000000"), "{e}");
        assert!(e.contains("between 1 and 1024"), "{e}");
        assert_eq!(CLIENTS.check(1024), Ok(1024));
        assert!(CLIENTS.check(0).is_err());
    }

    #[test]
    fn a_seed_range_that_wraps_is_refused() {
        assert!(check_seed_range(u64::MAX, 1, "--seed").is_err());
        assert!(check_seed_range(u64::MAX - 1000, 1000, "--seed").is_ok());
    }

    #[test]
    fn docs_list_every_limit() {
        let docs = include_str!("../../docs/SCENARIOS.md");
        for l in ALL {
            let row = format!("| `{}` | {} | {} |", l.name, l.min, l.max);
            assert!(docs.contains(&row), "docs/SCENARIOS.md lacks the row {row}");
        }
    }
}
