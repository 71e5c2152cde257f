//! The machine-readable result of a check (`zkcheck check --json`) or of a
//! merge of shards (`zkcheck merge --json`): one JSON object, format
//! [`FORMAT`], documented field by field in `docs/SHARDS.md`.
//!
//! It holds what a merge needs to put shards back together as one run —
//! which scenario (a hash of its canonical text, so results of different
//! scenarios are never mixed), which sweep, which seeds this result was
//! given and which it ran, the figures, why it is incomplete, and the
//! smallest-seed counterexample with its replay token — and nothing that
//! depends on the machine or the clock: the same run gives the same bytes.

use serde::{Deserialize, Serialize};

use crate::shard::Shard;
use zkcheck::explore::Options;
use zkcheck::monitor::{Property, Tally};
use zkcheck::scenario::{Scenario, Search};
pub use zkcheck::verdict::VerdictKind;
use zkcheck::verdict::{end_judges, Coverage, Verdict};
use zkcheck::Counterexample;

/// The `format` of every result this zkcheck writes and reads. A change to
/// the meaning or set of fields gets a new number.
pub const FORMAT: &str = "zkcheck-result/2";

/// One result object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Always [`FORMAT`].
    pub format: String,
    pub scenario: ScenarioId,
    pub strategy: Search,
    pub options: RunOptions,
    /// The shard a check ran (`0/1` for an unsharded random or PCT run);
    /// `None` for exhaustive search and for a merge (see `parts`).
    pub shard: Option<Shard>,
    /// Random and PCT only: the seeds asked for and run.
    pub seeds: Option<Seeds>,
    /// Complete runs (seeded) or end states reached (exhaustive).
    pub schedules: u64,
    /// Events applied in total.
    pub events: u64,
    /// Seeded: runs cut at `explore.max_steps` before their natural end.
    pub runs_cut: u64,
    /// Runs (exhaustive: end states) the clock cut at `ensemble.max_time`
    /// with work left; they make the result incomplete when a hard check
    /// judges a run's end (`zkcheck::verdict::Coverage`).
    pub runs_clock_cut: u64,
    /// Exhaustive only: distinct states and states left unexpanded at a bound.
    pub distinct_states: Option<u64>,
    pub truncated: u64,
    /// Exhaustive only: whether symmetry reduction was used (`on (…)`,
    /// `off (why)`); under it `distinct_states` counts representatives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symmetry: Option<String>,
    /// Exhaustive only: whether partial-order reduction was used (`on
    /// (…)`, `off (why)`); it changes `events`, never `distinct_states`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub por: Option<String>,
    /// DFS only: whether cycles were checked for livelocks (`on (…)`,
    /// `off (why)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_check: Option<String>,
    /// The measured figures, including `violations`: per property, the
    /// runs that broke it.
    pub figures: Tally,
    pub verdict: VerdictKind,
    /// Why the result covers less than it was asked to; empty when complete.
    pub incomplete: Vec<String>,
    /// The failure with the smallest seed, shrunk, with its replay token.
    pub counterexample: Option<FoundCounterexample>,
    /// A merge: every shard it combines, by seed (empty for a check).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
}

/// Which scenario a result is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioId {
    pub name: String,
    pub recipe: String,
    /// `fnv1a64:` and 16 hex digits: FNV-1a (64 bits) of the scenario's
    /// canonical TOML, the same text a replay token carries.
    pub hash: String,
    pub hard: Vec<Property>,
    pub report: Vec<Property>,
}

/// The options that decide what a run explores. (`--jobs` is not here:
/// results never depend on it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// Random/PCT: the whole sweep's first seed and number of seeds (of
    /// every shard together).
    pub seed: Option<u64>,
    pub schedules: Option<u64>,
    /// PCT: the bug depth.
    pub pct_depth: Option<usize>,
    /// BFS/DFS: the longest schedule.
    pub depth: Option<usize>,
    pub max_steps: usize,
    /// The scenario's `ensemble.max_time` (named by the reason a run the
    /// clock cut gives).
    pub max_time: u64,
}

/// Seeds `start .. end` (end excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRange {
    pub start: u64,
    pub end: u64,
}

impl SeedRange {
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Display for SeedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// The seeds of a random or PCT result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seeds {
    /// The whole unsharded sweep.
    pub sweep: SeedRange,
    /// The seeds this result was given: its shard's (a merge: its shards').
    pub assigned: Vec<SeedRange>,
    /// The seeds run and counted. A sweep stops at its first failing seed,
    /// so with a counterexample nothing past its seed is counted.
    pub completed: Vec<SeedRange>,
    /// Seeds the verdict needs that were not run: of `assigned` for a
    /// check, of the sweep (up to the failing seed, if any) for a merge.
    pub missing: Vec<SeedRange>,
}

/// A counterexample as a result carries it (its trace is one `zkcheck
/// replay --trace TOKEN` away).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundCounterexample {
    /// The seed that found it (`None` for exhaustive search).
    pub seed: Option<u64>,
    pub property: Property,
    pub explanation: String,
    /// Steps as found and after shrinking.
    pub found_steps: usize,
    pub steps: usize,
    /// Why shrinking ended early (then the token is the smallest failing
    /// schedule found by that moment).
    pub shrink_cut_short: Option<String>,
    /// `zk1:…`, for `zkcheck replay`.
    pub token: Option<String>,
    /// A lasso (exhaustive search's cycle check): the steps from this one
    /// to the end repeat for ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_from: Option<usize>,
    /// How the shrinker made the scenario smaller ("servers 3 → 1", …):
    /// the token's scenario is the result's scenario so reduced. Left out
    /// when empty (the token's scenario is the result's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<String>,
    /// No run of the same story is shorter than this many steps (the
    /// shrinker searched every shorter one); equal to `steps` for a
    /// shortest counterexample. Left out when not known.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub no_shorter_than: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One shard inside a merge: what it was given, ran and found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub shard: Shard,
    /// The file (or `-`) the shard's result was read from.
    pub origin: String,
    pub assigned: SeedRange,
    pub completed: SeedRange,
    pub schedules: u64,
    pub events: u64,
    pub runs_cut: u64,
    pub runs_clock_cut: u64,
    pub figures: Tally,
    pub incomplete: Vec<String>,
    pub failing_seed: Option<u64>,
}

/// FNV-1a, 64 bits: stable on every machine and in every release.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl ScenarioId {
    pub fn of<C: zkrecipes::RecipeSet>(scenario: &Scenario<C>) -> Self {
        ScenarioId {
            name: scenario.name.clone(),
            recipe: scenario.recipe.clone(),
            hash: format!(
                "fnv1a64:{:016x}",
                fnv1a64(scenario.to_canonical().as_bytes())
            ),
            hard: scenario.hard.clone(),
            report: scenario.report.clone(),
        }
    }
}

fn seeded(strategy: Search) -> bool {
    matches!(strategy, Search::Random | Search::Pct)
}

impl RunOptions {
    /// The options of the whole run (`options` before a shard narrowed them).
    pub fn of<C: zksim::Client>(scenario: &Scenario<C>, options: &Options) -> Self {
        let s = seeded(options.strategy);
        RunOptions {
            seed: s.then_some(options.seed),
            schedules: s.then_some(options.schedules),
            pct_depth: (options.strategy == Search::Pct).then_some(options.pct_depth),
            depth: (!s).then_some(options.depth),
            max_steps: scenario.explore.max_steps,
            max_time: scenario.ensemble.max_time,
        }
    }
}

impl FoundCounterexample {
    pub fn of(c: &Counterexample) -> Self {
        FoundCounterexample {
            seed: c.seed,
            property: c.violation.property,
            explanation: c.violation.explanation.clone(),
            found_steps: c.found_steps,
            steps: c.steps,
            shrink_cut_short: c.shrink_cut_short.as_ref().map(|r| r.to_string()),
            token: c.token.clone(),
            cycle_from: c.cycle_from,
            reductions: c.reductions.clone(),
            no_shorter_than: c.no_shorter_than,
        }
    }
}

impl Summary {
    /// The result of one check: `whole` are the options of the whole run,
    /// `shard` the part of its seeds explored (for random and PCT) and
    /// `verdict` what the pipeline ([`zkcheck::verdict::run`]) made of it.
    pub fn of_check<C: zkrecipes::RecipeSet>(
        scenario: &Scenario<C>,
        whole: &Options,
        shard: Shard,
        verdict: &Verdict,
    ) -> Self {
        let result = &verdict.exploration;
        let is_seeded = seeded(whole.strategy);
        let explored = if is_seeded {
            shard.narrow(whole)
        } else {
            *whole
        };
        let seeds = is_seeded.then(|| {
            let assigned = SeedRange {
                start: explored.seed,
                end: explored.seed + explored.schedules,
            };
            let completed = SeedRange {
                start: assigned.start,
                end: assigned.start + result.schedules,
            };
            // Up to the failing seed, or the whole shard.
            let needed = if result.failure.is_some() {
                completed.end
            } else {
                assigned.end
            };
            Seeds {
                sweep: SeedRange {
                    start: whole.seed,
                    end: whole.seed + whole.schedules,
                },
                assigned: vec![assigned],
                completed: non_empty(completed),
                missing: non_empty(SeedRange {
                    start: completed.end,
                    end: needed,
                }),
            }
        });
        Summary {
            format: FORMAT.to_string(),
            scenario: ScenarioId::of(scenario),
            strategy: whole.strategy,
            options: RunOptions::of(scenario, whole),
            shard: is_seeded.then_some(shard),
            seeds,
            schedules: result.schedules,
            events: result.events,
            runs_cut: result.runs_cut,
            runs_clock_cut: result.runs_clock_cut,
            distinct_states: result.distinct_states,
            truncated: result.truncated,
            symmetry: result.symmetry.clone(),
            por: result.por.clone(),
            cycle_check: result.cycle_check.clone(),
            figures: result.figures.clone(),
            verdict: verdict.kind(),
            incomplete: verdict.incomplete.clone(),
            counterexample: verdict.counterexample.as_ref().map(FoundCounterexample::of),
            parts: Vec::new(),
        }
    }

    /// The result as one line of JSON.
    pub fn to_json(&self) -> String {
        // Every field is plain data with string map keys: cannot fail.
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

impl Summary {
    /// The facts the one rule ([`Coverage::reasons`]) reads, as this result
    /// states them in its figures: what `merge` re-derives a result's
    /// verdict from instead of trusting its `verdict` and `incomplete`.
    pub fn coverage(&self) -> Coverage {
        let seeded = seeded(self.strategy);
        let missing = self
            .seeds
            .as_ref()
            .map_or(0, |s| s.missing.iter().map(SeedRange::len).sum::<u64>());
        Coverage {
            unit: if seeded { "runs" } else { "end states" },
            schedules: self.schedules,
            events: self.events,
            step_cut: self.runs_cut,
            max_steps: self.options.max_steps,
            clock_cut: self.runs_clock_cut,
            max_time: self.options.max_time,
            end_judges: end_judges(&self.scenario.hard, 0),
            schedules_short: (seeded && self.counterexample.is_none() && missing > 0)
                .then(|| (self.schedules, self.schedules.saturating_add(missing))),
            ..Coverage::default()
        }
    }

    /// Runs this result counts as breaking a hard check.
    pub fn hard_violations(&self) -> u64 {
        hard_violations(&self.scenario.hard, &self.figures)
    }
}

/// Runs `figures` counts as breaking one of the `hard` checks.
pub fn hard_violations(hard: &[Property], figures: &Tally) -> u64 {
    figures
        .violations
        .iter()
        .filter(|(p, _)| hard.contains(p))
        .fold(0, |sum, (_, &n)| sum.saturating_add(n))
}

fn non_empty(r: SeedRange) -> Vec<SeedRange> {
    if r.is_empty() {
        Vec::new()
    } else {
        vec![r]
    }
}
