//! Scripts that cannot be played: both runners must refuse them (the real
//! conductor with a typed error that names the step and session) rather
//! than observe something and let the comparison decide.
//!
//! Not here: an op on a session the script closed. The simulator plays it
//! (`SessionExpired`, as the Java client answers on a closed handle), but
//! the real conductor closes a session by dropping its only
//! `zookeeper-client` handle, so it has nothing to send the op on and
//! refuses with `ConductorError::Closed`; see docs/CONFORMANCE.md.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use zkreal::conformance::real::ConductorError;
use zkreal::conformance::{self, Script};

use super::bench::Bench;
use super::ops::*;

/// Run the refusal scripts; returns how many ran.
pub fn run(bench: &mut Bench) -> usize {
    // Step 1 names session 1 of a one-session script.
    let no_session = Script::new("refuse_missing_session", 1)
        .op(0, create("/@/a", P))
        .op(1, exists("/@/a", false));
    let result = refuse(bench, &no_session, |e| {
        matches!(
            e,
            ConductorError::NoSession {
                step: 1,
                session: 1
            }
        )
    });
    bench.record(&no_session.name, result);
    1
}

/// `Ok` when the simulator refuses `script` and the conductor refuses it
/// on every server side with an error `expected` accepts.
fn refuse(
    bench: &Bench,
    script: &Script,
    expected: fn(&ConductorError) -> bool,
) -> Result<(), String> {
    let root = bench.fresh_root();
    let rooted = script.rooted(&root);
    if let Ok(seen) = conformance::sim::run(&rooted, &root) {
        return Err(format!("the simulator played it: {seen:?}"));
    }
    for (name, addr) in bench.servers() {
        match bench.run_server(addr, &rooted, &root) {
            Ok(seen) => return Err(format!("the conductor played it on {name}: {seen:?}")),
            Err(e) if expected(&e) => left_no_session(name, addr)?,
            Err(e) => {
                return Err(format!(
                    "the conductor refused it on {name} for another reason: {e}"
                ))
            }
        }
    }
    Ok(())
}

/// `Ok` once the server at `addr` lists no live session (`dump`): a
/// refused script closes what it opened. A session left open expires
/// seconds later, during another script, and shifts that script's zxids
/// by one on one side only.
fn left_no_session(name: &str, addr: SocketAddr) -> Result<(), String> {
    // The conductor waits for each close to be answered; the wait here
    // only covers a server that lists a session a moment after that.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let dump =
            zkreal::four_letter_at(addr, "dump").map_err(|e| format!("`dump` on {name}: {e}"))?;
        let open = live_sessions(&dump);
        if open.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the conductor refused it on {name} but left sessions open: {open:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The session ids a `dump` lists as live (its session tracker part: one
/// id per line, tab-indented, before the ephemeral nodes).
fn live_sessions(dump: &str) -> Vec<&str> {
    dump.lines()
        .take_while(|line| !line.starts_with("ephemeral nodes dump"))
        .filter_map(|line| line.strip_prefix('\t'))
        .map(|id| id.split_whitespace().next().unwrap_or(id))
        .filter(|id| id.starts_with("0x"))
        .collect()
}
