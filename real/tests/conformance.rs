//! The conformance suite: the same scripts on the simulator and on a real
//! ZooKeeper, compared observation by observation (see `docs/CONFORMANCE.md`).
//!
//! A `harness = false` test binary, so that it can print one summary line
//! that `cargo test` shows without `--nocapture`:
//! `conformance: N passed, M failed (… against simulator and real ZooKeeper)`.
//! Without ZooKeeper installed it says SKIPPED (and fails under `CI=true`).

mod conformance_support;

use std::net::SocketAddr;
use std::time::Instant;

use conformance_support::bench::{Bench, Side};
use conformance_support::{
    checks, generated, herd, inflight, newer_ops, ordering, refusals, scripts,
};

fn main() {
    let started = Instant::now();
    let Some(server) = zkreal::require_server() else {
        println!("conformance: 0 passed, 0 failed (SKIPPED: no ZooKeeper)");
        return;
    };
    let addr: SocketAddr = server
        .connect_string()
        .parse()
        .expect("the test server's address");
    let real = Side::Server { name: "real", addr };
    let mut bench = Bench::new(Side::Simulator, real);
    // `CONFORMANCE_ONLY=S21` runs only the hand-written scripts whose name
    // contains `S21`, nothing else (for working on one rule); the summary
    // says so.
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
    if let Some(only) = only {
        println!(
            "conformance: FILTERED to hand-written scripts containing {only:?}: {} passed, {} failed",
            bench.passed, bench.failed
        );
        let failed = bench.failed;
        drop(bench);
        drop(server);
        if failed > 0 {
            std::process::exit(1);
        }
        return;
    }
    let refused = refusals::run(&mut bench);
    let hand = bench.passed + bench.failed - refused;
    let generated = generated::run(&mut bench);
    let herds = herd::run(&mut bench);
    let total = bench.passed + bench.failed;
    println!(
        "conformance: {total} scripts ran against simulator and real ZooKeeper \
         ({hand} hand-written, {refused} refused as unplayable, {generated} generated, \
         {herds} herd comparisons) in {:.1?}",
        started.elapsed()
    );
    print!("{}", bench.named_exceptions());
    println!(
        "conformance: {} passed, {} failed",
        bench.passed, bench.failed
    );
    let failed = bench.failed;
    // `process::exit` runs no destructors: stop the server (and remove its
    // data dir) first, or every failing run would leave a Java process behind.
    drop(bench);
    drop(server);
    if failed > 0 {
        std::process::exit(1);
    }
}
