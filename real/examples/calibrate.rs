//! Measure a real ZooKeeper for the checker's timing model and print the
//! `[timing]` section that makes `zkcheck compare`'s model match it
//! (`zkreal::calibrate` measures; `zkcheck::scenario::Timing::calibrated`
//! turns the figures into parameters; each parameter is the median of
//! `--repeat` measurements). The defaults in `zkcheck::scenario::Timing`
//! come from a run of this.
//!
//! ```text
//! cargo run --release -p zkreal --example calibrate
//! cargo run --release -p zkreal --example calibrate -- --out timing.toml   # then: zkcheck compare --timing timing.toml
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use zkcheck::limits;
use zkcheck::scenario::Timing;
use zkreal::calibrate::calibrate;
use zkreal::{TestServer, Unavailable};

/// How many sessions watch the node of the notification burst.
const WATCHERS: usize = 32;

#[derive(Parser, Debug)]
#[command(about = "Measure a ZooKeeper and print the [timing] section for zkcheck compare")]
struct Args {
    /// The server to measure (host:port) instead of a private one on loopback.
    #[arg(long, value_name = "HOST:PORT")]
    server: Option<String>,
    /// Also write the `[timing]` section to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Requests per measurement, 10 to 100000.
    #[arg(long, default_value_t = 4000)]
    samples: u64,
    /// Measurements, 1 to 100; each parameter is their median.
    #[arg(long, default_value_t = 5)]
    repeat: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let checks = [
        limits::CALIBRATE_SAMPLES.check(args.samples).err(),
        limits::CALIBRATE_REPEAT.check(args.repeat).err(),
    ];
    if let Some(e) = checks.into_iter().flatten().next() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let (server, connect_string) = match &args.server {
        Some(address) => (None, address.clone()),
        None => match TestServer::start() {
            Ok(server) => {
                let cs = server.connect_string();
                (Some(server), cs)
            }
            Err(e @ Unavailable::NotInstalled { .. }) => {
                println!(
                    "INCOMPLETE: nothing measured: {e} (install Debian's `zookeeper` or set {})",
                    zkreal::CLASSPATH_ENV
                );
                return ExitCode::from(3);
            }
            Err(e) => {
                println!("INCOMPLETE: nothing measured: {e}");
                return ExitCode::from(3);
            }
        },
    };
    println!(
        "# calibrate on {connect_string}: {} requests per figure, a burst to {WATCHERS} \
         watchers, {} measurement(s), the median of each parameter",
        args.samples, args.repeat
    );
    let mut timings = Vec::new();
    for _ in 0..args.repeat {
        let c = match calibrate(&connect_string, args.samples as usize, WATCHERS) {
            Ok(c) => c,
            Err(e) => {
                println!("INCOMPLETE: {e}");
                return ExitCode::from(3);
            }
        };
        println!(
            "# idle round trip: read {:.0} µs, write {:.0} µs; saturated: read {:.1} µs, \
             write {:.1} µs; notification {:.1} µs",
            c.round_trip_read_us, c.round_trip_write_us, c.read_us, c.write_us, c.notify_us
        );
        timings.push(Timing::calibrated(
            c.round_trip_read_us,
            c.round_trip_write_us,
            c.read_us,
            c.write_us,
            c.notify_us,
        ));
    }
    drop(server);
    let section = Timing::median(&timings).to_toml_section();
    print!("{section}");
    if let Some(path) = &args.out {
        if let Err(e) = std::fs::write(path, &section) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
