//! Why a script could not be run on the real server (harness failures,
//! never differences from the simulator).

use std::fmt;
use std::io;

use zksim::SessionId;
use zookeeper_client as zk;

use super::{Done, STEP_LIMIT};
use crate::wire::MultiReply;

/// Why a script could not be run to its end on the real server. Each is a
/// harness failure (the server, the network, a script the conductor cannot
/// play), never a difference from the simulator: those are observations.
#[derive(Debug)]
pub enum ConductorError {
    /// The fault proxy of a session could not start.
    Proxy { session: usize, source: io::Error },
    /// A session could not connect.
    Connect { session: usize, source: zk::Error },
    /// A step names a session the script does not have.
    NoSession { step: usize, session: usize },
    /// A step sends an op on a session the script already closed.
    Closed { step: usize, session: usize },
    /// Nothing completed what a step waits for within the step limit.
    Stuck { waiting_for: Done },
    /// A held `Send` never reached the wire (or the server never answered it).
    NeverOnWire { step: usize, session: usize },
    /// The proxy passed on no multi reply for a multi the library
    /// answered, or one that disagrees with it (failed vs succeeded, or
    /// another number of ops).
    MultiWire {
        step: usize,
        session: usize,
        wire: Option<MultiReply>,
    },
    /// The server's `dump` (to watch for an expiry) failed.
    Dump(io::Error),
    /// The server kept a silenced session past the step limit.
    NeverExpired { session: usize, id: SessionId },
    /// The hidden setup create (the script's root) did not succeed.
    SetupFailed,
    /// The server's container reaper did not delete a container within
    /// the step limit (is the test server's `znode.container.checkIntervalMs` short?).
    NeverReaped { step: usize, path: String },
}

impl fmt::Display for ConductorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConductorError::Proxy { session, source } => {
                write!(f, "s{session}'s fault proxy did not start: {source}")
            }
            ConductorError::Connect { session, source } => {
                write!(f, "s{session} could not connect: {source}")
            }
            ConductorError::NoSession { step, session } => {
                write!(f, "step {step}: no session {session}")
            }
            ConductorError::Closed { step, session } => {
                write!(f, "step {step}: s{session} is closed")
            }
            ConductorError::NeverOnWire { step, session } => write!(
                f,
                "step {step}: s{session}'s held op never showed on the wire"
            ),
            ConductorError::MultiWire {
                step,
                session,
                wire,
            } => write!(
                f,
                "step {step}: s{session}'s multi reply on the wire does not match the library's: {wire:?}"
            ),
            ConductorError::Stuck { waiting_for } => {
                write!(f, "stuck: waited {STEP_LIMIT:?} for {waiting_for}")
            }
            ConductorError::Dump(e) => write!(f, "the server's `dump` failed: {e}"),
            ConductorError::NeverExpired { session, id } => {
                write!(f, "the server never expired s{session} (0x{id:x})")
            }
            ConductorError::SetupFailed => write!(f, "the setup create failed"),
            ConductorError::NeverReaped { step, path } => write!(
                f,
                "step {step}: the server's container reaper never deleted {path}"
            ),
        }
    }
}

impl std::error::Error for ConductorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConductorError::Proxy { source, .. } | ConductorError::Dump(source) => Some(source),
            ConductorError::Connect { source, .. } => Some(source),
            _ => None,
        }
    }
}
