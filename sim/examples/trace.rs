//! Run the demo workload under a seed and print one line per step, then
//! `trace-hash: <16 hex digits>` as the last line. Same seed, same output.
//!
//! ```text
//! cargo run --release -p zksim --example trace -- --seed 42
//! ```

use std::process::ExitCode;

use zksim::world::Happening;

const USAGE: &str = "usage: trace --seed <u64> [--max-steps <n>]";

struct Args {
    seed: u64,
    max_steps: usize,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut seed = None;
    let mut max_steps = 10_000;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seed" => {
                let value = args.next().ok_or("--seed needs a value")?;
                seed =
                    Some(value.parse().map_err(|_| {
                        format!("--seed: not an unsigned 64-bit integer: {value:?}")
                    })?);
            }
            "--max-steps" => {
                let value = args.next().ok_or("--max-steps needs a value")?;
                max_steps = value
                    .parse()
                    .map_err(|_| format!("--max-steps: not a number: {value:?}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let seed = seed.ok_or("--seed is required")?;
    Ok(Args { seed, max_steps })
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("trace: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let summary = zksim::demo::run(args.seed, args.max_steps, |i, world, event, log| {
        let what: Vec<String> = log.iter().map(brief).collect();
        println!(
            "{i:>5} t={:<3} {event:?} => [{}]",
            world.now(),
            what.join("; ")
        );
    });
    println!("steps: {}", summary.steps);
    println!("trace-hash: {:016x}", summary.trace_hash);
    ExitCode::SUCCESS
}

/// A one-line rendering of a happening.
fn brief<E: std::fmt::Debug>(h: &Happening<E>) -> String {
    match h {
        Happening::Sent {
            client,
            op,
            request,
        } => format!("c{client} sent #{op} {request:?}"),
        Happening::Taken { client, server, op } => format!("s{server} took c{client}#{op}"),
        Happening::Committed { zxid, session } => format!("commit z{zxid} (session {session:x})"),
        Happening::Applied { server, zxid } => format!("s{server} applied z{zxid}"),
        Happening::Delivered { client, delivery } => format!("c{client} got {delivery:?}"),
        Happening::App { client, event } => format!("c{client} app {event:?}"),
        Happening::SessionEnded { session, expired } => {
            format!(
                "session {session:x} {}",
                if *expired { "expired" } else { "closed" }
            )
        }
    }
}
