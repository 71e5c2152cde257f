//! Regenerates the figures of `docs/VERDICTS.md`: for every (seed recipe ×
//! check) row, the verdict the checker reaches on the row's scenario in
//! `scenarios/seeds/`.
//!
//! ```text
//! cargo run --release -p zkcheck-cli --example verdicts -- [HOLDS_SCHEDULES] [JOBS]
//! ```
//!
//! A "violated" row is swept from seed 0 until its first failure (at most
//! the row's bound), shrunk and replayed through its token; a "holds" row
//! runs `HOLDS_SCHEDULES` seeds (default 3000). Wall times are printed for
//! the reader and never decide a verdict.

use std::time::Instant;

use zkcheck::scenario::property_name;

#[path = "../tests/verdicts/table.rs"]
mod table;

use table::{Expect, ROWS};

fn main() {
    let mut args = std::env::args().skip(1);
    let holds_schedules: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3000);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);

    println!("| recipe | check | scenario | verdict | first failing seed | steps (raw → shrunk) | time |");
    println!("|---|---|---|---|---|---|---|");
    let mut tokens = Vec::new();
    for row in ROWS {
        let scenario = table::scenario(row);
        let check = property_name(row.check);
        let started = Instant::now();
        let (verdict, seed, steps) = match row.expect {
            Expect::Violated { within } => match table::find(&scenario, within, jobs) {
                Some(found) => {
                    tokens.push((row.recipe, check, found.clone()));
                    (
                        "**violated**".to_string(),
                        found.seed.to_string(),
                        format!("{} → **{}**", found.raw_steps, found.shrunk_steps),
                    )
                }
                None => (
                    format!("not found in {within} schedules"),
                    "—".into(),
                    "—".into(),
                ),
            },
            Expect::Holds => {
                let r = table::sweep(&scenario, holds_schedules, jobs);
                match r.failure {
                    None => (
                        format!("holds ({} schedules)", r.schedules),
                        "—".into(),
                        "—".into(),
                    ),
                    Some(f) => (
                        format!(
                            "**VIOLATED** (expected to hold): {}",
                            f.violation.explanation
                        ),
                        f.seed.map_or("—".into(), |s| s.to_string()),
                        f.schedule.len().to_string(),
                    ),
                }
            }
        };
        let secs = started.elapsed().as_secs_f64();
        println!(
            "| `{}` | {check} | `{}` | {verdict} | {seed} | {steps} | {secs:.2}s |",
            row.recipe, row.scenario
        );
    }
    println!();
    for (recipe, check, found) in tokens {
        println!("### {recipe} × {check}");
        println!();
        println!("{}", found.violation.explanation);
        println!();
        println!("```text\nzkcheck replay {} --trace\n```", found.token);
        println!();
        println!("```text\n{}```", found.trace);
        println!();
    }
}
