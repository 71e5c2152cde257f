//! `compare` at large client counts: one timed run of each headline recipe
//! per client count, with its steps, whether it was cut at its step bound,
//! and the CPU and wall time it took (issue 9's targets at 1,000 clients:
//! sequential < 5 s, naive complete < 60 s).
//!
//! `cargo bench -p zkcheck-cli --bench compare_scale` (1,000 clients), or with
//! client counts: `cargo bench -p zkcheck-cli --bench compare_scale -- 250 500`.
//! Not a criterion bench: one naive run at 1,000 clients takes tens of
//! seconds, so it is run once and timed.

/// The allocator the `zkcheck` binary uses, so that figures match the CLI.
#[global_allocator]
static ALLOCATOR: zkcheck_cli::allocator::Mimalloc = zkcheck_cli::allocator::Mimalloc;

use std::time::Instant;

use zkcheck_cli::compare::{scenario, HEADLINE};
use zkcheck_cli::timing::run_timed;

/// This thread's user + system CPU time in seconds (Linux), if readable:
/// steadier than wall time on a shared machine.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is
    // the 12th and stime the 13th of them, in clock ticks (100 a second).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![1000]
    } else {
        counts
    };
    println!("| recipe | clients | steps | step bound | cut | acquisitions | CPU (s) | wall (s) | steps / CPU s |");
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|");
    for &clients in &counts {
        for recipe in HEADLINE.iter().rev() {
            let s = scenario(recipe, clients, false);
            let cpu = thread_cpu_seconds();
            let wall = Instant::now();
            let (outcome, _) = run_timed(&s, 0);
            let wall = wall.elapsed().as_secs_f64();
            let cpu = match (cpu, thread_cpu_seconds()) {
                (Some(a), Some(b)) => b - a,
                _ => wall,
            };
            println!(
                "| {recipe} | {clients} | {} | {} | {} | {} | {cpu:.2} | {wall:.2} | {:.0} |",
                outcome.steps,
                s.explore.max_steps,
                if outcome.cut { "CUT" } else { "no" },
                outcome.figures.acquisitions,
                outcome.steps as f64 / cpu.max(0.01),
            );
        }
    }
}
