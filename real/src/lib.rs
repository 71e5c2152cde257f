//! The real ZooKeeper as oracle: everything in zkcheck that talks to a
//! Java server lives here, so that the simulator (`zksim`), the recipes
//! (`zkrecipes`) and the checker (`zkcheck`) build without tokio or a
//! ZooKeeper client.
//!
//! * [`TestServer`] starts a throw-away standalone Java server on loopback;
//!   [`require_server`] is how a test asks for one and skips loudly (or, on
//!   CI, fails) when ZooKeeper is not installed.
//! * [`drive`] runs any sans-IO [`zksim::Client`]s against a server and
//!   returns what happened as [`zksim::Happening`]s, the simulator's own
//!   record, so the same counting and checks run on both.
//! * [`calibrate`] measures a server for the checker's timing model
//!   (`examples/calibrate.rs` prints the `[timing]` section).
//! * [`FaultProxy`] sits between clients and the server to break or
//!   silence connections: `ConnectionLoss`, `Disconnected` and session
//!   expiry on the real server.
//! * [`conformance`] runs one multi-session script on the simulator and on
//!   a real server and compares what each session observed: it tests the
//!   simulator against ZooKeeper (see `docs/CONFORMANCE.md`).
//! * [`ensemble`] starts a real three-server ensemble with a fault proxy on
//!   every quorum link (lag, partition a follower) and runs ensemble
//!   scripts on it and on a three-server simulator (S19, S21a, S22a, S26,
//!   S28; `docs/CONFORMANCE.md`, "Ensemble"); `ensemble::cue` lets a test
//!   drive real recipes there through a counterexample's fault sequence
//!   (`docs/VERDICTS.md`, "Replayed on a real three-server ensemble").

pub mod calibrate;
pub mod conformance;
mod driver;
pub mod ensemble;
mod ops;
mod proxy;
mod quorum_wire;
mod run;
mod run_types;
mod server;
mod wakeset;
pub mod wire;

pub use proxy::FaultProxy;
pub use run::{drive, drive_blocking};
pub use run_types::{DriveConfig, DriveError, RealRun};
pub use server::{
    four_letter_at, TestServer, Unavailable, CLASSPATH_ENV, MAX_SESSION_TIMEOUT,
    MIN_SESSION_TIMEOUT, SERVER_TICK_MS,
};

/// A server for a test, or `None` (after saying so loudly) when ZooKeeper
/// is not installed. On CI (`CI=true`) a missing server fails the test
/// instead: CI must not pass by skipping. A server that is installed but
/// does not start always fails the test.
pub fn require_server() -> Option<TestServer> {
    let classpath = std::env::var(CLASSPATH_ENV).ok();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    require_server_with(classpath.as_deref(), ci)
}

/// [`require_server`] with its inputs spelled out, so that it can be tested
/// without touching the process environment.
pub fn require_server_with(classpath: Option<&str>, ci: bool) -> Option<TestServer> {
    match TestServer::start_with(classpath) {
        Ok(server) => Some(server),
        Err(Unavailable::NotInstalled { reason }) if !ci => {
            let test = std::thread::current()
                .name()
                .unwrap_or("<unnamed test>")
                .to_string();
            eprintln!(
                "SKIPPED: {test} — no ZooKeeper found (install Debian package `zookeeper` \
                 or set {CLASSPATH_ENV}): {reason}"
            );
            None
        }
        Err(e @ Unavailable::NotInstalled { .. }) => {
            panic!("CI=true and {e} (install Debian package `zookeeper` or set {CLASSPATH_ENV})")
        }
        Err(e) => panic!("{e}"),
    }
}
