//! What a run on a real server takes ([`DriveConfig`]) and gives
//! ([`RealRun`], or [`DriveError`] when it cannot begin): shared by the
//! entry points in [`super::run`] and the engine in [`super::driver`], so
//! neither imports the other's module for them.

use std::collections::BTreeMap;
use std::time::Duration;

use zksim::{Client, Happening, SessionId};

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
    /// No tokio runtime could be built (for [`drive_blocking`](super::drive_blocking)).
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
