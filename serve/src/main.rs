//! `zkserve`: the same as `zkcheck serve`, on its own.

use clap::Parser;

/// Serve the simulated ZooKeeper ensemble on ZooKeeper 3.8's protocol.
#[derive(Parser)]
#[command(name = "zkserve", version)]
struct Cli {
    #[command(flatten)]
    serve: zkserve::cli::ServeArgs,
}

fn main() -> std::process::ExitCode {
    zkserve::cli::run(Cli::parse().serve)
}
