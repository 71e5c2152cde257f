//! The load benchmark of `zkcheck serve` against the real ZooKeeper 3.8
//! (issue 31, item 6): N = 1, 16, 256 sessions each running create /
//! getData+watch / setData / getChildren+watch / delete in a closed loop
//! against each server, interleaved cell by cell on the same machine; before
//! that, on each fresh server, K znodes created and held twice to measure
//! memory per znode (then removed). Prints
//! throughput, latency percentiles per op and overall, CPU time per op of
//! the server and of the client, peak RSS and bytes per znode.
//!
//! ```text
//! cargo run --release -p zkreal --example load                       # both servers, defaults (< 1 min)
//! cargo run --release -p zkreal --example load -- --target real --markdown /tmp/load.md
//! cargo run --release -p zkreal --example load -- --connect 127.0.0.1:2181 --server-pid 1234
//! ```
//!
//! Every server is its own process on 127.0.0.1 (serve is this program
//! again, with `--serve-child`), so memory and CPU time are read from
//! `/proc/<pid>` alike. `--client raw` runs the same requests through a
//! bare `zkwire` client, to show whether `zookeeper-client` is the limit.

mod conn;
mod latency;
mod memory;
mod procfs;
mod raw_client;
mod report;
mod table;
mod targets;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use conn::{ClientKind, Conn};
use memory::MemoryResult;
use procfs::Proc;
use report::{CellReport, MemoryReport, Report};
use targets::{Target, TargetKind};
use workload::Cell;

#[derive(Parser, Debug)]
#[command(about = "Load benchmark: zkcheck serve and the real ZooKeeper 3.8 side by side")]
struct Args {
    /// The servers to measure: real, serve, or both (interleaved).
    #[arg(long, value_enum, default_value = "both")]
    target: TargetChoice,
    /// Measure the server at this connect string instead (host:port,...).
    #[arg(long, value_name = "HOST:PORT,...", conflicts_with = "target")]
    connect: Option<String>,
    /// With --connect: the server's pid, for its memory and CPU time.
    #[arg(long, requires = "connect")]
    server_pid: Option<u32>,
    /// The client: raw (zkwire on a socket, the default: it costs the least
    /// per op) or zk (the zookeeper-client crate, as an application uses).
    #[arg(long, value_enum, default_value = "raw")]
    client: ClientKind,
    /// Session counts, comma-separated (each 1 to 1024).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    connections: Vec<usize>,
    /// Counted seconds per cell (0.1 to 60).
    #[arg(long, default_value_t = 2.0)]
    secs: f64,
    /// Warm-up seconds per cell, not counted (0 to 60).
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Seconds of uncounted load (16 sessions) on each server before the
    /// first cell, so that the JVM's JIT has compiled the hot paths: a
    /// production server is warm (0 to 60).
    #[arg(long, default_value_t = 2.0)]
    server_warmup: f64,
    /// Times to repeat the whole interleaved series (1 to 20).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Bytes of data per node (0 to 1_000_000).
    #[arg(long, default_value_t = 64)]
    data_bytes: usize,
    /// Znodes per memory batch (two batches are created and held); 0 skips it.
    #[arg(long, default_value_t = 10_000)]
    znodes: usize,
    /// Client runtime threads (1 to 64).
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// Simulated servers in serve's ensemble (1 to 16).
    #[arg(long, default_value_t = 3)]
    serve_servers: u16,
    /// Also write the tables as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Internal: serve in this process and print the connect string.
    #[arg(long, hide = true)]
    serve_child: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum TargetChoice {
    Real,
    Serve,
    Both,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.serve_child {
        return targets::serve_child(args.serve_servers);
    }
    if let Err(e) = check(&args) {
        eprintln!("load: {e}");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn check(args: &Args) -> Result<(), String> {
    let in_range = |name: &str, v: f64, lo: f64, hi: f64| {
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(format!("--{name} {v}: must be between {lo} and {hi}"))
        }
    };
    in_range("secs", args.secs, 0.1, 60.0)?;
    in_range("warmup", args.warmup, 0.0, 60.0)?;
    in_range("server-warmup", args.server_warmup, 0.0, 60.0)?;
    in_range("rounds", args.rounds as f64, 1.0, 20.0)?;
    in_range("data-bytes", args.data_bytes as f64, 0.0, 1_000_000.0)?;
    in_range("znodes", args.znodes as f64, 0.0, 10_000_000.0)?;
    in_range("client-threads", args.client_threads as f64, 1.0, 64.0)?;
    in_range("serve-servers", f64::from(args.serve_servers), 1.0, 16.0)?;
    if args.connections.is_empty() {
        return Err("--connections: give at least one count".to_string());
    }
    for &n in &args.connections {
        in_range("connections", n as f64, 1.0, 1024.0)?;
    }
    Ok(())
}

fn run(args: &Args) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads)
        .enable_all()
        .build()
        .map_err(|e| format!("starting the client runtime: {e}"))?;
    let mut report = Report::new(machine(), command_line(args));
    let targets = start_targets(args)?;
    let mut memories = Vec::with_capacity(targets.len());
    for target in &targets {
        eprintln!("load: {} at {}", target.name, target.connect);
        memories.push(runtime.block_on(prepare(args, target))?);
    }
    for round in 0..args.rounds {
        for &sessions in &args.connections {
            // Alternate which server goes first, so drift in the machine's
            // load does not always favour the same one.
            let mut order: Vec<&Target> = targets.iter().collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for target in order {
                let cell = Cell {
                    client: args.client,
                    connect: target.connect.clone(),
                    sessions,
                    base: format!("/load/r{round}-n{sessions}"),
                    warmup: Duration::from_secs_f64(args.warmup),
                    window: Duration::from_secs_f64(args.secs),
                    data_bytes: args.data_bytes,
                };
                let server = target.pid.map(Proc::Pid);
                let before = Usage::now(server)?;
                let result = runtime
                    .block_on(workload::run_cell(&cell))
                    .map_err(|e| format!("{}, {sessions} sessions: {e}", target.name))?;
                let after = Usage::now(server)?;
                let row = CellReport {
                    target: target.name.clone(),
                    round,
                    sessions,
                    wall: after.at - before.at,
                    server_cpu: after.server_cpu.zip(before.server_cpu).map(|(a, b)| a - b),
                    server_wait: after
                        .server_wait
                        .zip(before.server_wait)
                        .map(|(a, b)| a.saturating_sub(b)),
                    client_cpu: after.client_cpu - before.client_cpu,
                    result,
                };
                eprintln!("load: {}", row.one_line());
                report.cells.push(row);
            }
        }
    }
    for (target, memory) in targets.iter().zip(memories) {
        let Some(pid) = target.pid else { continue };
        report.memory.push(MemoryReport {
            target: target.name.clone(),
            peak_rss: Proc::Pid(pid).peak_rss()?,
            memory,
        });
    }
    report.load_after = load_average();
    let text = report.text();
    print!("{text}");
    if let Some(path) = &args.markdown {
        std::fs::write(path, report.markdown())
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        eprintln!("load: wrote {}", path.display());
    }
    Ok(())
}

/// Before the cells, on a fresh server: the memory run (its nodes removed
/// afterwards, so it measures a server that has not yet served the load,
/// and the load runs on an empty tree), then the server's warm-up.
async fn prepare(args: &Args, target: &Target) -> Result<Option<MemoryResult>, String> {
    let mut admin = Conn::open(args.client, &target.connect, 0).await?;
    admin.ensure("/load").await?;
    admin.close().await?;
    let memory = match target.pid {
        Some(pid) if args.znodes > 0 => {
            let run = memory::MemoryRun {
                client: args.client,
                connect: target.connect.clone(),
                pid,
                is_jvm: target.is_jvm,
                znodes: args.znodes,
                data_bytes: args.data_bytes,
            };
            let measured = memory::measure(&run)
                .await
                .map_err(|e| format!("{}, memory: {e}", target.name))?;
            memory::remove(&run)
                .await
                .map_err(|e| format!("{}, removing the memory run's nodes: {e}", target.name))?;
            Some(measured)
        }
        _ => None,
    };
    if args.server_warmup > 0.0 {
        let cell = Cell {
            client: args.client,
            connect: target.connect.clone(),
            sessions: 16,
            base: "/load/server-warmup".to_string(),
            warmup: Duration::from_secs_f64(args.server_warmup),
            window: Duration::ZERO,
            data_bytes: args.data_bytes,
        };
        workload::run_cell(&cell)
            .await
            .map_err(|e| format!("{}, warming up: {e}", target.name))?;
    }
    Ok(memory)
}

fn start_targets(args: &Args) -> Result<Vec<Target>, String> {
    if let Some(connect) = &args.connect {
        return Ok(vec![Target::external(connect.clone(), args.server_pid)]);
    }
    let kinds: &[TargetKind] = match args.target {
        TargetChoice::Real => &[TargetKind::Real],
        TargetChoice::Serve => &[TargetKind::Serve],
        TargetChoice::Both => &[TargetKind::Real, TargetKind::Serve],
    };
    kinds
        .iter()
        .map(|&kind| {
            Target::start(kind, args.serve_servers)
                .map_err(|e| format!("starting {}: {e}", kind.name()))
        })
        .collect()
}

/// CPU used and CPU waited for so far, read before and after a cell.
struct Usage {
    at: std::time::Instant,
    server_cpu: Option<Duration>,
    server_wait: Option<Duration>,
    client_cpu: Duration,
}

impl Usage {
    fn now(server: Option<Proc>) -> Result<Usage, String> {
        Ok(Usage {
            at: std::time::Instant::now(),
            server_cpu: server.map(Proc::cpu_time).transpose()?,
            server_wait: server.map(Proc::run_queue_wait).transpose()?,
            client_cpu: Proc::Myself.cpu_time()?,
        })
    }
}

/// CPU model, cores and load average: what the figures were measured on.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown CPU")
        .to_string();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{model}, {cores} cores; load average before: {}",
        load_average()
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

fn command_line(args: &Args) -> String {
    let connections: Vec<String> = args.connections.iter().map(|n| n.to_string()).collect();
    format!(
        "client {}, sessions {}, {} s counted after {} s warm-up per cell (each server warmed \
         up {} s first), {} round(s), {} data bytes, {} znodes per memory batch, serve with \
         {} simulated servers",
        args.client.name(),
        connections.join("/"),
        args.secs,
        args.warmup,
        args.server_warmup,
        args.rounds,
        args.data_bytes,
        args.znodes,
        args.serve_servers
    )
}
