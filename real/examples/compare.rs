//! `zkcheck compare` with the real server beside it: every cell runs in the
//! checker's calibrated timed simulation (`zkcheck_cli::compare`) and on a real
//! ZooKeeper (the `lock` example's workload), and the table — and, with
//! `--report DIR`, the report — sets the same figures side by side
//! (wakeups and requests per acquisition with their gaps, notifications,
//! latency, total time).
//!
//! ```text
//! cargo run --release -p zkreal --example compare -- --clients 8,16,32 --report reports/real
//! cargo run --release -p zkreal --example compare -- --clients 2,4,8,16,32,64 --hold-ticks 0 --real-runs 3 --report reports/back-to-back
//! ```
//!
//! Without ZooKeeper installed it says so and exits 3 (nothing real was
//! measured); bad numbers exit 2.

#[path = "support/real_cells.rs"]
mod real_cells;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use zkcheck::limits;
use zkcheck_cli::compare::{compare, real_table, table, CompareConfig};
use zkreal::{TestServer, Unavailable};

#[derive(Parser, Debug)]
#[command(about = "zkcheck compare, with the same cells measured on a real ZooKeeper beside it")]
struct Args {
    /// Client counts, comma-separated; sorted and deduplicated.
    #[arg(long, value_delimiter = ',', default_value = "8,16,32")]
    clients: Vec<usize>,
    /// Seeded timed runs per simulated cell.
    #[arg(long, default_value_t = 8)]
    seeds: u64,
    /// Ticks (100 ms) each holder keeps the lock; 0 releases at once.
    #[arg(long, default_value_t = 2)]
    hold_ticks: u64,
    /// Runs per cell on the real server, 1 to 100.
    #[arg(long, default_value_t = 1)]
    real_runs: u64,
    /// Use this server (host:port) instead of starting a private one.
    #[arg(long, value_name = "HOST:PORT")]
    server: Option<String>,
    /// The timing model: a file with a `[timing]` section (what the
    /// `calibrate` example's `--out` writes) [default: the calibrated defaults].
    #[arg(long, value_name = "FILE")]
    timing: Option<PathBuf>,
    /// Also write `compare.md` (both tables) and the charts here.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
}

fn bad(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut clients = args.clients.clone();
    clients.sort_unstable();
    clients.dedup();
    for &c in &clients {
        if let Err(e) = limits::CLIENTS.named("--clients").check_usize(c) {
            return bad(e);
        }
    }
    let checks = [
        limits::COMPARE_CLIENT_COUNTS
            .check_usize(clients.len())
            .err(),
        limits::COMPARE_SEEDS.check(args.seeds).err(),
        limits::HOLD_TICKS
            .named("--hold-ticks")
            .check(args.hold_ticks)
            .err(),
        limits::REAL_RUNS.check(args.real_runs).err(),
    ];
    if let Some(e) = checks.into_iter().flatten().next() {
        return bad(e);
    }
    let timing = match &args.timing {
        None => zkcheck::scenario::Timing::default(),
        Some(path) => match zkcheck::scenario::timing_from_file(path) {
            Ok(t) => t,
            Err(e) => return bad(e),
        },
    };
    if let Some(dir) = &args.report {
        if let Err(e) = zkcheck_cli::files::check_dir(dir) {
            return bad(e);
        }
    }
    let config = CompareConfig {
        clients,
        seeds: args.seeds,
        hold_ticks: args.hold_ticks,
        timing,
        ..CompareConfig::default()
    };
    let mut rows = match compare(&config) {
        Ok(rows) => rows,
        Err(e) => return bad(e),
    };
    let (server, connect_string) = match &args.server {
        Some(address) => (None, address.clone()),
        None => match TestServer::start() {
            Ok(server) => {
                let cs = server.connect_string();
                (Some(server), cs)
            }
            Err(e @ Unavailable::NotInstalled { .. }) => {
                print!("{}", table(&rows));
                println!(
                    "INCOMPLETE: the simulated table only: {e} (install Debian's `zookeeper` \
                     or set {})",
                    zkreal::CLASSPATH_ENV
                );
                return ExitCode::from(3);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(3);
            }
        },
    };
    let measured = real_cells::measure_real(
        &mut rows,
        &connect_string,
        args.real_runs,
        args.hold_ticks,
        |line| eprintln!("{line}"),
    );
    drop(server);
    if let Err(e) = measured {
        print!("{}", table(&rows));
        println!("INCOMPLETE: the real cells did not all run: {e}");
        return ExitCode::from(3);
    }
    print!("{}", table(&rows));
    println!("\nSimulated vs real server:\n");
    print!("{}", real_table(&rows));
    if let Some(dir) = &args.report {
        match zkcheck_cli::report::write_compare(dir, &config, &rows) {
            Ok(paths) => {
                for p in paths {
                    println!("wrote {}", p.display());
                }
            }
            Err(e) => return bad(e),
        }
    }
    ExitCode::SUCCESS
}
