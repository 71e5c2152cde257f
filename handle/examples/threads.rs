//! Several OS threads take a registered lock recipe on a real ZooKeeper
//! through blocking [`LockHandle`]s: `--handles` sessions, `--threads`
//! threads on each, `--rounds` acquisitions per thread. Checks that no two
//! threads were ever inside at once and that the fences grew; exits 1 if not.
//!
//! ```text
//! cargo run --release -p zkhandle --example threads -- --start-server --handles 3 --threads 2 --rounds 3
//! cargo run --release -p zkhandle --example threads -- --server 127.0.0.1:2181 --recipe naive
//! ```

#[cfg(zkcheck_loom)]
fn main() {}

#[cfg(not(zkcheck_loom))]
fn main() -> std::process::ExitCode {
    real::main()
}

#[cfg(not(zkcheck_loom))]
mod real {
    use std::process::ExitCode;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use clap::Parser;
    use zkhandle::contend::contend;
    use zkhandle::LockHandle;
    use zkreal::TestServer;

    #[derive(Parser, Debug)]
    #[command(about = "OS threads sharing a ZooKeeper lock through blocking handles")]
    struct Args {
        /// The server, host:port.
        #[arg(
            long,
            required_unless_present = "start_server",
            conflicts_with = "start_server"
        )]
        server: Option<String>,
        /// Start a throw-away server on loopback (needs ZooKeeper installed).
        #[arg(long)]
        start_server: bool,
        /// A registered exclusive-lock recipe (`zkcheck list`).
        #[arg(long, default_value = "sequential")]
        recipe: String,
        /// Handles (sessions) competing through ZooKeeper.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        handles: u32,
        /// Threads sharing each handle.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
        threads: u32,
        /// Acquisitions per thread.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10000))]
        rounds: u32,
        /// How long each holder keeps the lock, in ms.
        #[arg(long, default_value_t = 20)]
        hold_ms: u64,
        /// Give up an acquire after this many seconds.
        #[arg(long, default_value_t = 60)]
        timeout_secs: u64,
    }

    pub fn main() -> ExitCode {
        let args = Args::parse();
        let (_server, connect_string) = if args.start_server {
            match TestServer::start() {
                Ok(server) => {
                    let cs = server.connect_string();
                    println!("started ZooKeeper on {cs}");
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
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let root = format!("/zkhandle-{millis}");
        let mut handles = Vec::new();
        for _ in 0..args.handles {
            match LockHandle::connect(&connect_string, &args.recipe, &root) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        println!(
            "recipe `{}`: {} handles × {} threads × {} rounds on {connect_string}, root {root}",
            args.recipe, args.handles, args.threads, args.rounds
        );
        let report = contend(
            &handles,
            args.threads as usize,
            args.rounds as usize,
            Duration::from_millis(args.hold_ms),
            Duration::from_secs(args.timeout_secs),
        );
        for handle in handles {
            if let Some(why) = handle.close() {
                eprintln!("error: a handle's driver failed: {why}");
                return ExitCode::FAILURE;
            }
        }
        let expected = (args.handles * args.threads * args.rounds) as usize;
        println!("acquisitions      {} of {expected}", report.acquisitions);
        println!("failed acquires   {:?}", report.failures);
        println!("max inside        {}", report.max_inside);
        println!("fences increase   {}", report.fences_increase());
        println!("lost guards       {}", report.lost);
        println!(
            "wait for the lock mean {:.1} ms, max {:.1} ms",
            report.mean_wait.as_secs_f64() * 1e3,
            report.max_wait.as_secs_f64() * 1e3
        );
        println!("elapsed           {:.2} s", report.elapsed.as_secs_f64());
        let ok =
            report.acquisitions == expected && report.max_inside == 1 && report.fences_increase();
        if ok {
            ExitCode::SUCCESS
        } else {
            eprintln!("FAILED: exclusion or progress did not hold");
            ExitCode::FAILURE
        }
    }
}
