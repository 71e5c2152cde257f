//! Run N clients of a registered lock recipe on a real ZooKeeper and print
//! what the herd costs: wakeups per acquisition, wakeups per release and
//! per lock write (max and mean; a create fires watches too) and server
//! requests per acquisition (see `zkcheck::monitor::herd::figures`).
//!
//! ```text
//! cargo run --release -p zkreal --example lock -- --server 127.0.0.1:2181 --clients 8 --recipe sequential
//! cargo run --release -p zkreal --example lock -- --start-server --clients 8 --recipe naive
//! ```

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use zkcheck::monitor::herd::LockFigures;
use zkreal::{drive_blocking, DriveConfig, TestServer};
use zkrecipes::{registry, Family, RecipeParams, Workload};

#[derive(Parser, Debug)]
#[command(about = "Run a lock recipe's clients on a real ZooKeeper and count the herd")]
struct Args {
    /// The server to use, host:port (loopback or not; nothing else is touched).
    #[arg(
        long,
        required_unless_present = "start_server",
        conflicts_with = "start_server"
    )]
    server: Option<String>,
    /// Start a throw-away server on loopback (needs ZooKeeper installed).
    #[arg(long)]
    start_server: bool,
    /// How many clients compete.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    clients: u32,
    /// A registered recipe (`zkcheck list`).
    #[arg(long, default_value = "sequential")]
    recipe: String,
    /// Acquisitions per client.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// How long a holder keeps the lock, in ticks of 100 ms.
    #[arg(long, default_value_t = 1)]
    hold_ticks: u64,
    /// Pause between a client's rounds, in ticks of 100 ms.
    #[arg(long, default_value_t = 0)]
    think_ticks: u64,
    /// The lock's root znode (default: a fresh `/zkcheck-lock-<time>`).
    #[arg(long)]
    root: Option<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60)]
    timeout_secs: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(info) = registry::find(&args.recipe) else {
        let names: Vec<&str> = zkrecipes::RECIPES.iter().map(|r| r.name).collect();
        eprintln!(
            "error: no recipe named `{}`; registered: {}",
            args.recipe,
            names.join(", ")
        );
        return ExitCode::from(2);
    };
    if !matches!(info.family, Family::Lock | Family::RwLock) {
        eprintln!(
            "error: `{}` is a {:?} recipe; this example counts lock figures",
            info.name, info.family
        );
        return ExitCode::from(2);
    }
    let root = args.root.clone().unwrap_or_else(|| {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("/zkcheck-lock-{millis}")
    });

    // Keep the harness alive for the whole run; dropping it stops the server.
    let (server, connect_string) = if args.start_server {
        match TestServer::start() {
            Ok(server) => {
                println!(
                    "started ZooKeeper on {} in {:.2} s",
                    server.connect_string(),
                    server.startup_time().as_secs_f64()
                );
                let cs = server.connect_string();
                (Some(server), cs)
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        (None, args.server.clone().unwrap_or_default())
    };

    let clients = args.clients as usize;
    let workload = Workload {
        rounds: args.rounds,
        hold_ticks: args.hold_ticks,
        think_ticks: args.think_ticks,
    };
    let recipe_clients = (0..clients)
        .map(|client| {
            (info.build)(&RecipeParams {
                group: 0,
                role: info.name.into(),
                session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
                client,
                clients,
                root: root.clone(),
                workload,
            })
        })
        .collect();
    let config = DriveConfig {
        run_timeout: Duration::from_secs(args.timeout_secs),
        ..DriveConfig::new(connect_string.clone())
    };
    println!(
        "recipe `{}`: {clients} clients × {} rounds on {connect_string}, root {root}",
        info.name, args.rounds
    );
    let run = match drive_blocking(recipe_clients, &config) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    drop(server);

    let f = LockFigures::from_log(&run.log);
    println!(
        "ran {:.2} s, {} happenings",
        run.elapsed.as_secs_f64(),
        run.log.len()
    );
    println!("acquisitions              {}", f.acquisitions);
    println!("releases                  {}", f.releases);
    println!(
        "wakeups per acquisition   {:.2}",
        f.wakeups_per_acquisition()
    );
    println!(
        "wakeups per release       max {}, mean {:.2}",
        f.max_wakeups_per_release(),
        f.mean_wakeups_per_release()
    );
    println!(
        "wakeups per lock write    max {}, mean {:.2} (a release or a create)",
        f.max_wakeups_per_write(),
        f.mean_wakeups_per_write()
    );
    println!(
        "wasted wakeups            {} of {}",
        f.wasted_wakeups, f.wakeups
    );
    println!(
        "requests per acquisition  {:.2}",
        f.requests_per_acquisition()
    );
    if !run.finished {
        eprintln!(
            "error: not every client finished within {} s (a stuck recipe?)",
            args.timeout_secs
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
