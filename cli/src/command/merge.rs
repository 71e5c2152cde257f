//! `zkcheck merge FILE…`: read shard results ([`crate::summary`]), merge
//! them ([`crate::merge`]) and print one verdict, as a human summary or
//! (`--json`) as a result object that merges again.

use std::path::Path;

use zkcheck::limits::SHARD_FILE_BYTES;

use serde::Deserialize;

use crate::merge::{merge_for as combine, Input};
use crate::summary::{Summary, VerdictKind, FORMAT};

use super::figures::print_figures;
use super::io::{read_input, Text};
use super::{bad_input, say, Exit, Io, MergeArgs};

pub fn merge<C: zkrecipes::RecipeSet>(args: &MergeArgs, io: &mut Io) -> Exit {
    let mut inputs = Vec::new();
    let mut stdin_read = false;
    for path in &args.files {
        let origin = path.display().to_string();
        if path == Path::new("-") && std::mem::replace(&mut stdin_read, true) {
            return bad_input(io, "`-` (standard input) is given twice");
        }
        let text = match read_input(path, SHARD_FILE_BYTES, "shard file") {
            Ok(text) => text,
            Err(e) => return bad_input(io, e),
        };
        match read_results(&origin, &text) {
            Ok(results) => inputs.extend(results.into_iter().map(|summary| Input {
                origin: origin.clone(),
                summary,
            })),
            Err(e) => return bad_input(io, e),
        }
    }
    let merged = match combine::<C>(&inputs) {
        Ok(m) => m,
        Err(e) => return bad_input(io, e),
    };
    if args.json {
        say!(io, "{}", merged.to_json());
    } else {
        print_merged(&mut Text { out: &mut io.out }, &merged);
    }
    merged.verdict.into()
}

/// Every result object in `text` (one or more, whitespace between them),
/// or the first error with the file, line and column.
fn read_results(origin: &str, text: &str) -> Result<Vec<Summary>, String> {
    let mut results = Vec::new();
    let stream = serde_json::Deserializer::from_str(text).into_iter::<Summary>();
    for item in stream {
        match item {
            Ok(s) => results.push(s),
            Err(e) => return Err(format!("{origin}: {}", explain(text, e))),
        }
    }
    if results.is_empty() {
        return Err(format!(
            "{origin}: holds no result (expected the JSON that `zkcheck check --json` prints)"
        ));
    }
    Ok(results)
}

/// serde's message, or the format's when the object is of another format
/// (whose fields would otherwise be reported one by one).
fn explain(text: &str, e: serde_json::Error) -> String {
    #[derive(Deserialize)]
    struct FormatOnly {
        format: String,
    }
    if let Ok(f) = serde_json::from_str::<FormatOnly>(text) {
        if f.format != FORMAT {
            return format!(
                "format `{}` is not supported; this zkcheck reads `{FORMAT}`",
                f.format
            );
        }
    }
    format!("not a zkcheck result: {e}")
}

fn print_merged(io: &mut Text, m: &Summary) {
    let seeds = m.seeds.as_ref();
    let sweep = seeds.map(|s| s.sweep.to_string()).unwrap_or_default();
    say!(
        io,
        "merged {} shards ({}) of scenario {} ({}), recipe {}",
        m.parts.len(),
        shard_list(&m.parts),
        m.scenario.name,
        m.scenario.hash,
        m.scenario.recipe
    );
    let depth = m.options.pct_depth.map(|d| format!(", bug depth {d}"));
    say!(
        io,
        "strategy {}: seeds {sweep}{}, max_steps {}",
        m.strategy.name(),
        depth.unwrap_or_default(),
        m.options.max_steps
    );
    let mut line = format!("schedules: {}, events: {}", m.schedules, m.events);
    if m.runs_cut > 0 {
        line += &format!(", runs cut at max_steps: {}", m.runs_cut);
    }
    if m.runs_clock_cut > 0 {
        line += &format!(", runs cut by the clock at max_time: {}", m.runs_clock_cut);
    }
    say!(io, "{line}");
    print_figures(io, &m.scenario.hard, &m.figures);
    if let Some(c) = &m.counterexample {
        let part = m.parts.iter().find(|p| p.failing_seed == c.seed);
        let found = match (c.seed, part) {
            (Some(seed), Some(p)) => format!("seed {seed}, shard {} in {}", p.shard, p.origin),
            (Some(seed), None) => format!("seed {seed}"),
            (None, _) => "exhaustive search".into(),
        };
        say!(io);
        say!(
            io,
            "VIOLATION of {} (found by {found} after {} steps; shrunk to {} steps)",
            zkcheck::monitor::result_name(c.property),
            c.found_steps,
            c.steps
        );
        if let Some(line) = zkcheck::Counterexample::describe_reductions(&c.reductions) {
            say!(io, "{line}");
        }
        if let Some(line) = zkcheck::Counterexample::describe_shortest(c.steps, c.no_shorter_than) {
            say!(io, "{line}");
        }
        if let Some(reason) = &c.shrink_cut_short {
            say!(io, "(shrinking ended early: {reason})");
        }
        say!(io, "{}", c.explanation);
        for reason in &m.incomplete {
            say!(io, "note: {reason}");
        }
        if let Some(token) = &c.token {
            say!(io);
            say!(
                io,
                "(`zkcheck replay --trace <token>` prints the shrunk trace)"
            );
            say!(io, "replay: {token}");
        }
        return;
    }
    if m.verdict == VerdictKind::Ok {
        say!(
            io,
            "ok: every hard check held on a complete exploration ({} schedules in {} shards)",
            m.schedules,
            m.parts.len()
        );
        return;
    }
    for reason in &m.incomplete {
        say!(io, "INCOMPLETE: {reason}");
    }
    if let Some(s) = seeds {
        let missing: Vec<String> = s.missing.iter().map(|r| r.to_string()).collect();
        if !missing.is_empty() {
            say!(io, "INCOMPLETE: seeds not run: {}", missing.join(", "));
        }
    }
    say!(
        io,
        "not ok: no hard check failed in what was explored, but the exploration is incomplete"
    );
}

/// `0-3, 6 of 8` for shards 0, 1, 2, 3 and 6 of 8 (parts of one split), else
/// every shard as `k/n`.
fn shard_list(parts: &[crate::summary::Part]) -> String {
    let Some(n) = parts.first().map(|p| p.shard.count) else {
        return String::new();
    };
    if parts.iter().any(|p| p.shard.count != n) {
        let all: Vec<String> = parts.iter().map(|p| p.shard.to_string()).collect();
        return all.join(", ");
    }
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for k in parts.iter().map(|p| p.shard.index) {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == k => *last = k,
            _ => runs.push((k, k)),
        }
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    format!("{} of {n}", runs.join(", "))
}
