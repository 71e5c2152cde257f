//! Shards back into one run: the results of `zkcheck check --shard k/n
//! --json` (or of earlier merges) combined into the result the unsharded
//! sweep would have given.
//!
//! The unsharded sweep runs seeds in order and stops at its first failing
//! seed `F`, counting every seed up to `F`. Shards are contiguous ranges
//! ([`crate::shard`]), each run the same way, so the merge takes the
//! smallest failing seed over all shards as `F` (its counterexample and
//! token are the merged ones), sums the figures of the shards that start
//! at or before `F` (those below it ran completely, the failing one ran up
//! to `F`), and leaves out the shards above it. Without a failure every
//! shard counts. Seeds the verdict needs that no result ran — a missing
//! shard, a shard stopped early — make the merge incomplete, never ok.
//!
//! Results that cannot describe one run are refused: another format,
//! scenario, strategy or option, exhaustive search, two results claiming
//! the same seeds.

use crate::shard::Shard;
use crate::summary::{Part, SeedRange, Seeds, Summary, VerdictKind, FORMAT};
use zkcheck::monitor::Tally;
use zkcheck::scenario::Search;

/// One result to merge and where it was read from (a file name or `-`).
#[derive(Clone, Debug)]
pub struct Input {
    pub origin: String,
    pub summary: Summary,
}

/// Merge `inputs` into one result, or say (naming the input) why they
/// cannot be merged: results of the registered recipes.
pub fn merge(inputs: &[Input]) -> Result<Summary, String> {
    merge_for::<zkrecipes::AnyRecipe>(inputs)
}

/// [`merge`] for results of the recipe set `C` (a user's own `zkcheck`,
/// `zkcheck_cli::command::main_for`): their replay tokens name `C`'s recipes.
pub fn merge_for<C: zkrecipes::RecipeSet>(inputs: &[Input]) -> Result<Summary, String> {
    let Some(first) = inputs.first() else {
        return Err("nothing to merge: no result was given".into());
    };
    for input in inputs {
        accept(input, first)?;
        check_claims::<C>(input)?;
    }
    let reference = &first.summary;
    let (Some(seed), Some(schedules)) = (reference.options.seed, reference.options.schedules)
    else {
        return Err(format!(
            "{}: a random or PCT result names its seeds",
            first.origin
        ));
    };
    let sweep = SeedRange {
        start: seed,
        end: seed.saturating_add(schedules),
    };

    let mut parts = Vec::new();
    for input in inputs {
        parts.extend(parts_of(input, sweep)?);
    }
    parts.sort_by_key(|p| (p.assigned.start, p.assigned.end));
    for pair in parts.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.assigned.end > b.assigned.start {
            return Err(format!(
                "{} (shard {}, seeds {}) and {} (shard {}, seeds {}) overlap: the same seeds \
                 would be counted twice; merge each shard once",
                a.origin, a.shard, a.assigned, b.origin, b.shard, b.assigned
            ));
        }
    }

    // The smallest failing seed decides; nothing after it counts.
    let failing = parts.iter().filter_map(|p| p.failing_seed).min();
    let counterexample = failing.and_then(|f| {
        inputs
            .iter()
            .filter_map(|i| i.summary.counterexample.as_ref())
            .find(|c| c.seed == Some(f))
            .cloned()
    });
    if let (Some(f), None) = (failing, &counterexample) {
        return Err(format!(
            "seed {f} is said to fail, but no result carries its counterexample; was a result edited?"
        ));
    }
    let limit = failing.map_or(sweep.end, |f| f + 1);
    let needed = SeedRange {
        start: sweep.start,
        end: limit,
    };
    let counted: Vec<&Part> = parts.iter().filter(|p| p.assigned.start < limit).collect();

    let mut figures = Tally::default();
    let (mut schedules_run, mut events, mut runs_cut, mut runs_clock_cut) = (0, 0, 0, 0);
    let mut incomplete = Vec::new();
    for p in &counted {
        // Saturating: an edited count must not wrap (or panic in a debug build).
        schedules_run += p.schedules; // ≤ the sweep's size: checked in `parts_of`
        events = u64::saturating_add(events, p.events);
        runs_cut = u64::saturating_add(runs_cut, p.runs_cut);
        runs_clock_cut = u64::saturating_add(runs_clock_cut, p.runs_clock_cut);
        figures.merge(&p.figures);
        for reason in &p.incomplete {
            incomplete.push(format!("shard {} ({}): {reason}", p.shard, p.origin));
        }
    }
    let completed = coalesce(counted.iter().map(|p| clip(p.completed, needed)).collect());
    let assigned = coalesce(parts.iter().map(|p| p.assigned).collect());
    let missing = gaps(needed, &completed);
    for gap in gaps(needed, &assigned) {
        incomplete.push(format!(
            "seeds {gap} were not run: no result for {}",
            missing_shards(gap, sweep, &parts)
        ));
    }
    if failing.is_some() && !missing.is_empty() {
        incomplete.push(format!(
            "{} seeds below the failing seed were not run: a smaller failing seed may exist",
            missing.iter().map(SeedRange::len).sum::<u64>()
        ));
    }
    // A gap that no sentence above explains (an edited result can claim
    // fewer completed seeds than its reasons admit) still gets one: the
    // one rule judges from the reasons alone.
    if failing.is_none() && !missing.is_empty() && incomplete.is_empty() {
        incomplete.push(format!(
            "seeds {} were not run",
            missing
                .iter()
                .map(SeedRange::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut merged = Summary {
        format: FORMAT.to_string(),
        scenario: reference.scenario.clone(),
        strategy: reference.strategy,
        options: reference.options,
        shard: None,
        seeds: Some(Seeds {
            sweep,
            assigned,
            completed,
            missing,
        }),
        schedules: schedules_run,
        events,
        runs_cut,
        runs_clock_cut,
        distinct_states: None,
        truncated: 0,
        symmetry: None,
        por: None,
        cycle_check: None,
        figures,
        incomplete,
        counterexample,
        parts,
        verdict: VerdictKind::Ok,
    };
    // The merged figures are judged by the one rule too: a reason they
    // give that no shard's sentence gave (none, for results that passed
    // `check_claims`) is added rather than lost.
    if merged.incomplete.is_empty() {
        merged.incomplete = merged.coverage().reasons();
    }
    merged.verdict = VerdictKind::judge(failing.is_some(), &merged.incomplete);
    Ok(merged)
}

/// Re-derive what a result claims from the figures it carries, and refuse
/// (naming the file and the field) a result whose claims disagree with
/// them: a `verdict` that is not what its counterexample and its reasons
/// make it, reasons for being incomplete its figures give but its
/// `incomplete` leaves out (runs cut at `max_steps`, runs the clock cut
/// where a hard check judges the end, seeds not run), hard violations
/// counted without a counterexample, a replay token that is not a token
/// of this scenario. A merge is only as honest as its inputs; this is how
/// it knows an edited one.
fn check_claims<C: zkrecipes::RecipeSet>(input: &Input) -> Result<(), String> {
    let s = &input.summary;
    let name = &input.origin;
    let edited = "was the result edited?";
    let hard = s.hard_violations();
    if hard > 0 && s.counterexample.is_none() {
        return Err(format!(
            "{name}: field `figures.violations` counts {hard} runs breaking a hard check, but \
             the result carries no counterexample; {edited}"
        ));
    }
    if let Some(c) = s
        .counterexample
        .as_ref()
        .filter(|c| c.no_shorter_than > c.steps)
    {
        // The counterexample itself is a run of `steps` steps.
        return Err(format!(
            "{name}: field `counterexample.no_shorter_than` says no run of the story is shorter              than {} steps, but the counterexample has {}; {edited}",
            c.no_shorter_than, c.steps
        ));
    }
    if let Some(token) = s.counterexample.as_ref().and_then(|c| c.token.as_deref()) {
        let decoded = zkcheck::token::Token::decode_as::<C>(token).map_err(|e| {
            format!("{name}: field `counterexample.token` is not a replay token: {e}")
        })?;
        let of = crate::summary::ScenarioId::of(&decoded.scenario);
        let reduced = s
            .counterexample
            .as_ref()
            .is_some_and(|c| !c.reductions.is_empty());
        // A counterexample shrunk on a smaller scenario carries that one:
        // its text (and hash) differ, but its name, recipe and checks are
        // the result's (a reduction changes only sizes and times).
        let same = if reduced {
            (&of.name, &of.recipe, &of.hard, &of.report)
                == (
                    &s.scenario.name,
                    &s.scenario.recipe,
                    &s.scenario.hard,
                    &s.scenario.report,
                )
        } else {
            of.hash == s.scenario.hash
        };
        if !same {
            return Err(format!(
                "{name}: field `counterexample.token` replays scenario `{}` ({}), not this \
                 result's `{}` ({}); {edited}",
                of.name, of.hash, s.scenario.name, s.scenario.hash
            ));
        }
    }
    let derived = s.coverage().reasons();
    if let Some(reason) = derived.first() {
        if s.incomplete.is_empty() {
            return Err(format!(
                "{name}: field `incomplete` is empty, but the result's figures say: {reason}; \
                 {edited}"
            ));
        }
    }
    let expected = VerdictKind::judge(s.counterexample.is_some(), &s.incomplete);
    if s.verdict != expected {
        return Err(format!(
            "{name}: field `verdict` says {}, but its counterexample and reasons make it {}; \
             {edited}",
            verdict_name(s.verdict),
            verdict_name(expected)
        ));
    }
    for (i, p) in s.parts.iter().enumerate() {
        let part = Summary {
            shard: Some(p.shard),
            schedules: p.schedules,
            events: p.events,
            runs_cut: p.runs_cut,
            runs_clock_cut: p.runs_clock_cut,
            figures: p.figures.clone(),
            incomplete: p.incomplete.clone(),
            seeds: None,
            counterexample: None,
            parts: Vec::new(),
            ..s.clone()
        };
        if part.hard_violations() > 0 && p.failing_seed.is_none() {
            return Err(format!(
                "{name}: field `parts[{i}].figures.violations` counts runs breaking a hard \
                 check, but the part names no failing seed; {edited}"
            ));
        }
        if let Some(reason) = part.coverage().reasons().first() {
            if p.incomplete.is_empty() {
                return Err(format!(
                    "{name}: field `parts[{i}].incomplete` is empty, but the part's figures \
                     say: {reason}; {edited}"
                ));
            }
        }
    }
    Ok(())
}

fn verdict_name(v: VerdictKind) -> &'static str {
    match v {
        VerdictKind::Ok => "ok",
        VerdictKind::Violation => "violation",
        VerdictKind::Incomplete => "incomplete",
    }
}

/// Refuse an input that is not a random or PCT result of the same run as `first`.
fn accept(input: &Input, first: &Input) -> Result<(), String> {
    let (s, r) = (&input.summary, &first.summary);
    let name = &input.origin;
    if s.format != FORMAT {
        return Err(format!(
            "{name}: format `{}` is not supported; this zkcheck reads `{FORMAT}`",
            s.format
        ));
    }
    if !matches!(s.strategy, Search::Random | Search::Pct) {
        return Err(format!(
            "{name}: a {} result cannot be merged: only random and PCT sweeps are sharded",
            s.strategy.name()
        ));
    }
    if s.scenario.hash != r.scenario.hash {
        return Err(format!(
            "{name}: scenario `{}` ({}) is not the scenario of {} (`{}`, {}): results of \
             different scenarios cannot be merged",
            s.scenario.name, s.scenario.hash, first.origin, r.scenario.name, r.scenario.hash
        ));
    }
    // The hash is of the scenario's text, which holds its checks: the same
    // hash with other checks listed, or none, is an edited result.
    if s.scenario != r.scenario {
        return Err(format!(
            "{name}: scenario `{}` lists other checks (hard {:?}) than {} (hard {:?}) under the \
             same hash {}: was a result edited?",
            s.scenario.name, s.scenario.hard, first.origin, r.scenario.hard, s.scenario.hash
        ));
    }
    if s.scenario.hard.is_empty() {
        return Err(format!(
            "{name}: `scenario.hard` is empty: a result with no hard check judged nothing and \
             cannot merge to ok (zkcheck never writes one; was it edited?)"
        ));
    }
    if s.strategy != r.strategy || s.options != r.options {
        return Err(format!(
            "{name}: strategy {} with {} differs from {}'s strategy {} with {}: shards of \
             one run share the strategy, --seed, --schedules and --depth",
            s.strategy.name(),
            describe(&s.options),
            first.origin,
            r.strategy.name(),
            describe(&r.options)
        ));
    }
    Ok(())
}

fn describe(o: &crate::summary::RunOptions) -> String {
    let mut s = format!(
        "seed {}, schedules {}, max_steps {}",
        o.seed.map_or("-".into(), |v| v.to_string()),
        o.schedules.map_or("-".into(), |v| v.to_string()),
        o.max_steps
    );
    if let Some(d) = o.pct_depth {
        s += &format!(", depth {d}");
    }
    s
}

/// The shards one input holds: its parts (a merge), or itself (a check).
fn parts_of(input: &Input, sweep: SeedRange) -> Result<Vec<Part>, String> {
    let s = &input.summary;
    let name = &input.origin;
    let parts = if s.parts.is_empty() {
        let (Some(shard), Some(seeds)) = (s.shard, &s.seeds) else {
            return Err(format!(
                "{name}: a check result of a sweep names its shard and seeds"
            ));
        };
        let [assigned] = seeds.assigned[..] else {
            return Err(format!(
                "{name}: a shard's result has one range of assigned seeds"
            ));
        };
        let completed = match seeds.completed[..] {
            [] => SeedRange {
                start: assigned.start,
                end: assigned.start,
            },
            [c] => c,
            _ => return Err(format!("{name}: a shard runs one range of seeds")),
        };
        vec![Part {
            shard,
            origin: name.clone(),
            assigned,
            completed,
            schedules: s.schedules,
            events: s.events,
            runs_cut: s.runs_cut,
            runs_clock_cut: s.runs_clock_cut,
            figures: s.figures.clone(),
            incomplete: s.incomplete.clone(),
            failing_seed: s.counterexample.as_ref().and_then(|c| c.seed),
        }]
    } else {
        s.parts.clone()
    };
    for p in &parts {
        // Checked in this order so that no edited number can overflow or divide by 0.
        let in_sweep = p.shard.index < p.shard.count && p.shard.count <= sweep.len();
        let expected = if in_sweep {
            p.shard.seeds(sweep.start, sweep.len())
        } else {
            0..0
        };
        let consistent = in_sweep
            && p.assigned.start == expected.start
            && p.assigned.end == expected.end
            && p.completed.start == p.assigned.start
            && p.completed.end <= p.assigned.end
            && p.schedules == p.completed.len()
            && p.failing_seed
                .is_none_or(|f| f.checked_add(1) == Some(p.completed.end));
        if !consistent {
            return Err(format!(
                "{name}: shard {} claims seeds {} (run: {}), which is not what shard {} of the \
                 sweep {sweep} is given; was the result edited?",
                p.shard, p.assigned, p.completed, p.shard
            ));
        }
    }
    Ok(parts)
}

/// `r` cut to `within`.
fn clip(r: SeedRange, within: SeedRange) -> SeedRange {
    let start = r.start.max(within.start);
    SeedRange {
        start,
        end: r.end.min(within.end).max(start),
    }
}

/// Sorted, non-empty, with touching ranges joined.
fn coalesce(mut ranges: Vec<SeedRange>) -> Vec<SeedRange> {
    ranges.retain(|r| !r.is_empty());
    ranges.sort();
    let mut out: Vec<SeedRange> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The parts of `within` that `covered` (coalesced) leaves out.
fn gaps(within: SeedRange, covered: &[SeedRange]) -> Vec<SeedRange> {
    let mut out = Vec::new();
    let mut at = within.start;
    for r in covered {
        if r.start > at {
            out.push(clip(
                SeedRange {
                    start: at,
                    end: r.start,
                },
                within,
            ));
        }
        at = at.max(r.end);
    }
    out.push(clip(
        SeedRange {
            start: at,
            end: within.end,
        },
        within,
    ));
    out.retain(|r| !r.is_empty());
    out
}

/// Which shards a gap of seeds belongs to, when every part counts alike.
fn missing_shards(gap: SeedRange, sweep: SeedRange, parts: &[Part]) -> String {
    let count = parts.first().map(|p| p.shard.count);
    let Some(count) = count.filter(|&n| parts.iter().all(|p| p.shard.count == n)) else {
        return "them".to_string();
    };
    let schedules = sweep.end - sweep.start;
    // The shard holding `seed`: the last whose range starts at or before it.
    let shard_of = |seed: u64| -> u64 {
        let (mut lo, mut hi) = (0, count);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let shard = Shard { index: mid, count };
            if shard.seeds(sweep.start, schedules).start <= seed {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let (a, b) = (shard_of(gap.start), shard_of(gap.end - 1));
    if a == b {
        format!("shard {a}/{count}")
    } else {
        format!("shards {a}/{count} to {b}/{count}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, end: u64) -> SeedRange {
        SeedRange { start, end }
    }

    #[test]
    fn ranges_coalesce_and_gaps_are_what_is_left() {
        assert_eq!(
            coalesce(vec![r(5, 7), r(0, 2), r(2, 3), r(4, 4)]),
            vec![r(0, 3), r(5, 7)]
        );
        assert_eq!(gaps(r(0, 10), &[r(0, 3), r(5, 7)]), vec![r(3, 5), r(7, 10)]);
        assert_eq!(gaps(r(0, 10), &[r(0, 10)]), vec![]);
        assert_eq!(gaps(r(2, 6), &[]), vec![r(2, 6)]);
    }
}
