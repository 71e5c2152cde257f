//! Run sans-IO [`zksim::Client`]s against a real ZooKeeper.
//!
//! The driver is thin on purpose: it turns each [`Op`] a client sends into
//! one `zookeeper-client` call, hands back replies, one-shot watch events and
//! session changes, runs each client's single timer on tokio's clock (one
//! [`Tick`](zksim::Tick) = [`zksim::TICK_MS`] ms), and writes down what it
//! saw as [`Happening`]s — the same record the simulator keeps, so the same
//! counting (`zkrecipes::figures`) runs on both. No recipe logic here.
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

use std::collections::BTreeMap;
use std::time::Duration;

use zksim::{Client, Happening, SessionId};

use super::driver;

/// How to reach the server and how long to let a run go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriveConfig {
    /// `host:port[,host:port…]`, as for any ZooKeeper client.
    pub connect_string: String,
    /// Clients that connect elsewhere (e.g. through a [`FaultProxy`](super::FaultProxy)),
    /// by client index.
    pub client_connect_strings: BTreeMap<usize, String>,
    /// Asked-for session timeout (the server clamps it to its min/max).
    pub session_timeout: Duration,
    /// The run stops here even if some client is not done (a stuck recipe).
    pub run_timeout: Duration,
}

impl DriveConfig {
    pub fn new(connect_string: impl Into<String>) -> Self {
        DriveConfig {
            connect_string: connect_string.into(),
            client_connect_strings: BTreeMap::new(),
            session_timeout: Duration::from_secs(4),
            run_timeout: Duration::from_secs(60),
        }
    }
}

impl DriveConfig {
    /// Let `client` connect to `connect_string` instead of the common one.
    pub fn with_client_server(mut self, client: usize, connect_string: impl Into<String>) -> Self {
        self.client_connect_strings
            .insert(client, connect_string.into());
        self
    }

    /// Where `client` connects.
    pub fn connect_string_for(&self, client: usize) -> &str {
        self.client_connect_strings
            .get(&client)
            .unwrap_or(&self.connect_string)
    }
}

/// What a run on a real server produced.
#[derive(Clone, Debug)]
pub struct RealRun<C: Client> {
    /// What happened, in the order the driver saw it. Only client-side
    /// happenings: `Sent`, `Delivered`, `App` and `SessionEnded` (a server's
    /// `Taken`/`Committed`/`Applied` are not observable from outside).
    pub log: Vec<Happening<C::Event>>,
    /// `at[i]` is when `log[i]` happened, from the start of the run.
    pub at: Vec<Duration>,
    /// Each client's sessions, oldest first (more than one after a reopen).
    pub sessions: Vec<Vec<SessionId>>,
    /// The clients as they ended.
    pub clients: Vec<C>,
    /// Every client was done with nothing in flight before `run_timeout`.
    pub finished: bool,
    pub elapsed: Duration,
}

/// The run could not begin.
#[derive(Debug)]
pub enum DriveError {
    /// A client's first session could not be opened.
    Connect { client: usize, reason: String },
    /// No tokio runtime could be built (for [`drive_blocking`]).
    Runtime(std::io::Error),
}

impl std::fmt::Display for DriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriveError::Connect { client, reason } => {
                write!(f, "client {client} could not connect: {reason}")
            }
            DriveError::Runtime(e) => write!(f, "could not build a tokio runtime: {e}"),
        }
    }
}

impl std::error::Error for DriveError {}

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
