//! Run sans-IO [`zksim::Client`]s against a real ZooKeeper.
//!
//! The driver is thin on purpose: it turns each [`Op`] a client sends into
//! one `zookeeper-client` call, hands back replies, one-shot watch events and
//! session changes, runs each client's single timer on tokio's clock (one
//! [`Tick`](zksim::Tick) = [`zksim::TICK_MS`] ms), and writes down what it
//! saw as [`Happening`]s — the same record the simulator keeps, so the same
//! counting (`zkcheck::monitor::herd::figures`) runs on both. No recipe logic here.
//!
//! # Ordering
//! Every client has its own session (its own TCP connection). For each
//! client the driver feeds replies and watch events in the order the
//! connection delivered them: `zookeeper-client` dispatches each reply and
//! each notification through its own channel from one task reading the
//! socket in order, and the driver's `WakeSet` yields outputs in wake
//! order (see `wakeset.rs`). One server notification that reaches several of the library's
//! watchers (say `exists` and `getData` on one path) is delivered once, as
//! the Java client's single default watcher would see it.
//!
//! Session states come through the library's state watcher, which keeps
//! only the newest state: a `Disconnected` followed at once by
//! `SyncConnected` could arrive as `SyncConnected` alone (reconnecting takes
//! a round trip, so in practice the driver sees both). When a connection
//! breaks, the requests it had outstanding fail with `ConnectionLoss`
//! *before* `Disconnected` is delivered, as in the Java client.
//!
//! # Where it differs from the Java client (and the simulator)
//! * `reopen_session` while the old session is still alive closes the old
//!   one (the library sends `closeSession` when its last handle is dropped,
//!   so its ephemerals go at once) instead of abandoning it to expire, and
//!   the old handle's outstanding ops are answered normally.
//! * The library declares a session `Expired` by itself after 7/5 of the
//!   negotiated timeout without reaching any server; the Java client keeps
//!   trying and learns of the expiry from the server.
//! * Calls on a closing handle fail with `ConnectionLoss`, on a closed or
//!   expired one with `SessionExpired`, as in the Java client; a reopening
//!   handle holds them and sends them, in order, once connected.
//!
//! Run it on a current-thread runtime ([`drive_blocking`] does): the
//! reordering of `Disconnected` relies on the library failing a broken
//! connection's requests in the same turn of its task as it reports the state.

use zksim::Client;

use super::driver;
use super::run_types::{DriveConfig, DriveError, RealRun};

/// [`drive`] on a fresh current-thread tokio runtime.
pub fn drive_blocking<C: Client>(
    clients: Vec<C>,
    config: &DriveConfig,
) -> Result<RealRun<C>, DriveError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(DriveError::Runtime)?;
    runtime.block_on(drive(clients, config))
}

/// Run `clients` (each with its own session) until every one is done with
/// nothing in flight, or `run_timeout` passes. Connects every client first,
/// then calls `start` on each in index order. Closes every session at the
/// end (waiting, bounded, for the server to confirm) so that the next run
/// starts with no ephemerals left over. Needs a tokio runtime with time.
pub async fn drive<C: Client>(
    clients: Vec<C>,
    config: &DriveConfig,
) -> Result<RealRun<C>, DriveError> {
    driver::run(clients, config).await
}
