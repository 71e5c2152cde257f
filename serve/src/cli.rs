//! `zkcheck serve` / `zkserve`: flags and the blocking entry point.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::driver::{self, Options};
use crate::engine::faults::{Aim, FaultSpec};
use crate::engine::{Limits, Whitelist};
use crate::replay;

/// Serve the simulated ensemble on ZooKeeper 3.8's protocol. The first
/// line on stdout is the connect string (`127.0.0.1:P1,127.0.0.1:P2,...`);
/// logs go to stderr. Ctrl-C or SIGTERM stops it.
#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    /// Simulated servers, one port each (server 0 leads; 1 to 16).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub servers: u16,
    /// Port of server 0; server i listens on PORT+i. 0: ports chosen by the OS.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to listen on. Loopback unless you say otherwise: the server
    /// has no authentication at all.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Wall milliseconds per simulated tick (ZooKeeper's tickTime). Session
    /// timeouts are negotiated into [2, 20] ticks, as a stock server does:
    /// the default 2000 gives [4 s, 40 s], so clients get the timeouts they
    /// get in production.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub tick_ms: u64,
    /// Largest frame accepted, in bytes (jute.maxbuffer; 1..=16 MiB).
    #[arg(long, default_value_t = zkwire::DEFAULT_MAX_FRAME as u64,
          value_parser = clap::value_parser!(u64).range(1..=16 * 1024 * 1024))]
    pub max_frame: u64,
    /// Open connections at once, over all servers.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub max_connections: u64,
    /// Watches one session may hold.
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pub max_watches: u64,
    /// Seed of the session passwords and of the fault plan: the same seed
    /// gives the same faults at the same requests.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Faults the server injects, placed by --seed at counted requests:
    /// `drops=2,expiries=1,lag=1,partitions=1` (and `within=N`: faults fire
    /// at the first N counted requests, default 50). docs/SERVE.md, "Faults".
    #[arg(long, default_value = "", value_parser = FaultSpec::parse)]
    pub faults: FaultSpec,
    /// Which requests the fault plan counts: a path prefix (`/L`: the
    /// requests on /L and below) or a session (`session:0x...`); all
    /// data requests by default.
    #[arg(long, default_value = "", value_parser = Aim::parse)]
    pub aim: Aim,
    /// Record the run's history to FILE, as JSON lines (docs/HISTORY.md).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Re-run the engine from the inputs recorded in FILE (a --history),
    /// without sockets, and check it does the same and reaches the same
    /// trace hash. Exit 0: the same; 1: a difference (the first is shown);
    /// 2: FILE unreadable.
    #[arg(long, value_name = "FILE", conflicts_with = "history")]
    pub replay_input: Option<PathBuf>,
    /// The four-letter words answered on the client ports, as ZooKeeper's
    /// `4lw.commands.whitelist`: words separated by commas, or `*`. 3.8's
    /// default is `srvr` alone; `*` gives `dump`, `ruok`, `mntr`...
    #[arg(long = "4lw-whitelist", default_value = "srvr", value_parser = Whitelist::parse)]
    pub four_letter_words: Whitelist,
    /// Log every connection the server closes, not only hostile ones.
    #[arg(long, short)]
    pub verbose: bool,
}

impl ServeArgs {
    pub fn options(&self) -> Options {
        Options {
            limits: Limits {
                servers: usize::from(self.servers),
                tick_ms: self.tick_ms,
                max_frame: usize::try_from(self.max_frame).unwrap_or(usize::MAX),
                max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
                max_watches: usize::try_from(self.max_watches).unwrap_or(usize::MAX),
                seed: self.seed,
                four_letter_words: self.four_letter_words.clone(),
                // Set by the driver when it starts.
                epoch_ms: 0,
                faults: self.faults.clone(),
                aim: self.aim.clone(),
            },
            bind: self.bind,
            port: self.port,
            verbose: self.verbose,
        }
    }
}

/// Serve until Ctrl-C or SIGTERM. Exit code 0 after a clean stop, 2 when
/// the ports cannot be bound (bad input, as everywhere in zkcheck).
pub fn run(args: ServeArgs) -> ExitCode {
    if let Some(file) = &args.replay_input {
        return replay::run(file);
    }
    if let Err(e) = args.faults.check_servers(usize::from(args.servers)) {
        eprintln!("zkserve: --faults: {e}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zkserve: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> ExitCode {
    let options = args.options();
    let running = match driver::start_recording(options.clone(), args.history.clone()).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "zkserve: cannot listen on {} from port {} ({} servers), or write --history: {e}",
                options.bind, options.port, args.servers
            );
            return ExitCode::from(2);
        }
    };
    println!("{}", running.connect_string());
    eprintln!(
        "zkserve: {} simulated servers, tick {} ms, session timeouts {}..{} ms; Ctrl-C stops",
        args.servers,
        args.tick_ms,
        2 * args.tick_ms,
        20 * args.tick_ms
    );
    let stopped = stop_signal().await;
    let stats = running.stop().await;
    eprintln!(
        "zkserve: stopped ({stopped}); {} connections, {} sessions created, {} re-attached, \
         {} frames in, {} out, {} notifications, {} faults ({} skipped); closed: {:?}",
        stats.accepted,
        stats.sessions_created,
        stats.sessions_reattached,
        stats.frames_in,
        stats.frames_out,
        stats.notifications,
        stats.faults,
        stats.faults_skipped,
        stats.closed
    );
    ExitCode::SUCCESS
}

/// Waits for Ctrl-C or SIGTERM; says which.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "interrupted",
                _ = term.recv() => "terminated",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "interrupted"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "interrupted"
    }
}
