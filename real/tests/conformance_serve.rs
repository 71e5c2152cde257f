//! The conformance suite through the wire: every script of the suite
//! (hand-written, refused, generated, herd) played by the same
//! `zookeeper-client` conductor on the real ZooKeeper 3.8 and on `zkserve`
//! (the simulator behind ZooKeeper's protocol), and the two compared
//! observation by observation. The claim tested: a client cannot tell
//! `zkserve` from the real server. When the two differ, the simulator's
//! own observations are shown beside them, so the listing says whether
//! serve's wire layer or the simulator is wrong.
//!
//! A `harness = false` test binary printing one summary line:
//! `conformance_serve: N passed, M failed`. Without ZooKeeper installed it
//! says SKIPPED (and fails under `CI=true`). See docs/CONFORMANCE.md
//! ("Through the wire: zkserve").

mod conformance_support;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use conformance_support::bench::{Bench, Limitation, Side};
use conformance_support::{
    checks, generated, herd, inflight, newer_ops, ordering, refusals, scripts,
};
use zkserve::driver::{self, Options, Running};
use zkserve::{Limits, Stats, Whitelist};

/// Wall milliseconds per serve tick. A session timeout is clamped to
/// [2, 20] ticks, so 500 ms grants the conductor both of its timeouts as
/// asked: 1 s for a session the script expires, 10 s for the others (the
/// real test server, `tickTime=100` with a widened maximum, grants both too).
const SERVE_TICK_MS: u64 = 500;

/// Differences between serve and the real server that are documented
/// (docs/CONFORMANCE.md) rather than fixed; each script here is still
/// played and must still differ.
const LIMITATIONS: &[Limitation] = &[];

/// `zkserve` on its own thread and runtime, so that it serves while the
/// conductor's runtime blocks (the conductor's `dump` is a blocking read).
struct Serve {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<std::io::Result<Stats>>,
}

impl Serve {
    fn start() -> std::io::Result<Serve> {
        let options = Options {
            limits: Limits {
                // One server, as the real test server and the simulator side.
                servers: 1,
                tick_ms: SERVE_TICK_MS,
                // The conductor reads `dump` to see an expired session gone.
                four_letter_words: Whitelist::all(),
                ..Limits::default()
            },
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            verbose: false,
        };
        // `CONFORMANCE_SERVE_HISTORY=<file>`: serve records what it did
        // (docs/HISTORY.md), to read a difference from the server's side.
        let history = std::env::var_os("CONFORMANCE_SERVE_HISTORY").map(std::path::PathBuf::from);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (started_tx, started) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("zkserve".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    let running: Running = match driver::start_recording(options, history).await {
                        Ok(running) => running,
                        Err(e) => {
                            let _ = started_tx.send(Err(e.to_string()));
                            return Err(e);
                        }
                    };
                    let _ = started_tx.send(Ok(running.addrs[0]));
                    let _ = stopped.await;
                    Ok(running.stop().await)
                })
            })?;
        let addr = started
            .recv()
            .map_err(|_| std::io::Error::other("zkserve's thread ended before serving"))?
            .map_err(std::io::Error::other)?;
        Ok(Serve { addr, stop, thread })
    }

    /// Stop serving; serve's counters.
    fn stop(self) -> std::io::Result<Stats> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| std::io::Error::other("zkserve's thread panicked"))?
    }
}

fn main() {
    let started = Instant::now();
    let Some(server) = zkreal::require_server() else {
        println!("conformance_serve: 0 passed, 0 failed (SKIPPED: no ZooKeeper)");
        return;
    };
    let real: SocketAddr = server
        .connect_string()
        .parse()
        .expect("the test server's address");
    let serve = Serve::start().expect("zkserve starts on 127.0.0.1");
    let mut bench = Bench::new(
        Side::Server {
            name: "real",
            addr: real,
        },
        Side::Server {
            name: "serve",
            addr: serve.addr,
        },
    );
    bench.witness = Some(Side::Simulator);
    bench.limitations = LIMITATIONS.to_vec();
    // `CONFORMANCE_ONLY=S21`: only the hand-written scripts whose name
    // contains `S21` (the summary says FILTERED).
    let only = std::env::var("CONFORMANCE_ONLY").ok();
    for script in scripts::all()
        .into_iter()
        .chain(ordering::all())
        .chain(checks::all())
        .chain(inflight::all())
        .chain(newer_ops::all())
        .filter(|s| only.as_ref().is_none_or(|o| s.name.contains(o.as_str())))
    {
        bench.play(&script);
    }
    let (mut refused, mut generated, mut herds) = (0, 0, 0);
    if only.is_none() {
        refused = refusals::run(&mut bench);
        generated = generated::run(&mut bench);
        herds = herd::run(&mut bench);
    }
    let stats = serve.stop().expect("zkserve stops");
    // Every script's ops are valid requests: serve closing a connection
    // as hostile is a difference even if no observation showed it.
    if stats.hostile() > 0 {
        bench.record(
            "serve's hostile-input closes",
            Err(format!(
                "serve closed {} connections as hostile: {:?}",
                stats.hostile(),
                stats.closed
            )),
        );
    }
    let played = bench.passed + bench.failed + bench.known.len();
    if let Some(only) = &only {
        println!("conformance_serve: FILTERED to hand-written scripts containing {only:?}");
    }
    println!(
        "conformance_serve: {played} scripts played through the wire on the real ZooKeeper and \
         zkserve ({refused} refused as unplayable, {generated} generated, {herds} herd \
         comparisons; {} known limitations, {} skipped) in {:.1?}",
        bench.known.len(),
        bench.skipped.len(),
        started.elapsed()
    );
    print!("{}", bench.named_exceptions());
    println!(
        "conformance_serve: {} passed, {} failed",
        bench.passed, bench.failed
    );
    let failed = bench.failed;
    // `process::exit` runs no destructors: stop the Java server first.
    drop(bench);
    drop(server);
    if failed > 0 {
        std::process::exit(1);
    }
}
