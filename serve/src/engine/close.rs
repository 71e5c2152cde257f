//! Why the engine closes a connection: each reason is logged by the driver
//! and counted by kind ([`super::Stats::closed`]).

use std::fmt;

use zkwire::{DecodeError, FrameError};

/// Why a connection was closed by the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The client closed its session (`closeSession` answered).
    SessionClosed,
    /// The session ended at the leader (expired): ZooKeeper closes the
    /// connection of a session it ends.
    SessionEnded,
    /// A re-attach named a session the leader does not know (expired,
    /// closed, never existed) or the wrong password: answered with
    /// timeOut 0, then closed.
    SessionInvalid,
    /// S26: the client has seen a newer zxid than this server applied.
    ClientAhead { seen: i64, applied: i64 },
    /// The server cannot take sessions (partitioned from the leader).
    ServerUnavailable,
    /// The same session connected again on another connection.
    Replaced,
    /// More connections than `Limits::max_connections`.
    TooManyConnections,
    /// The session would hold more watches than `Limits::max_watches`.
    TooManyWatches { held: usize, max: usize },
    /// A frame's length prefix was negative or past the frame limit.
    BadFrame(FrameError),
    /// A frame's body did not decode (truncated, garbage, trailing bytes).
    Garbage(DecodeError),
    /// An opcode this server does not answer; `Unimplemented` was sent.
    Unsupported(i32),
    /// A path that breaks ZooKeeper's path rules.
    BadPath(String),
    /// `setAuth` with a scheme other than digest or ip: `AuthFailed` was sent.
    AuthFailed(String),
    /// The connection was already closing.
    Closing,
    /// A four-letter word was answered (ZooKeeper closes after its text).
    FourLetterWord(&'static str),
    /// The fault plan dropped the connection (`--faults drops=N`), before
    /// or after the reply to the request it fired at.
    FaultDrop { before_reply: bool },
}

impl CloseReason {
    /// The counter this reason is counted under.
    pub fn kind(&self) -> &'static str {
        match self {
            CloseReason::SessionClosed => "session-closed",
            CloseReason::SessionEnded => "session-ended",
            CloseReason::SessionInvalid => "session-invalid",
            CloseReason::ClientAhead { .. } => "client-ahead",
            CloseReason::ServerUnavailable => "server-unavailable",
            CloseReason::Replaced => "replaced",
            CloseReason::TooManyConnections => "too-many-connections",
            CloseReason::TooManyWatches { .. } => "too-many-watches",
            CloseReason::BadFrame(FrameError::TooLarge { .. }) => "frame-too-large",
            CloseReason::BadFrame(FrameError::Negative { .. }) => "frame-negative-length",
            CloseReason::Garbage(_) => "garbage",
            CloseReason::Unsupported(_) => "unsupported-op",
            CloseReason::BadPath(_) => "bad-path",
            CloseReason::AuthFailed(_) => "auth-failed",
            CloseReason::Closing => "closing",
            CloseReason::FourLetterWord(_) => "four-letter-word",
            CloseReason::FaultDrop { .. } => "fault-drop",
        }
    }

    /// Whether the client did something wrong (hostile or broken input),
    /// as opposed to the ordinary end of a session or connection.
    pub fn is_hostile(&self) -> bool {
        matches!(
            self,
            CloseReason::BadFrame(_)
                | CloseReason::Garbage(_)
                | CloseReason::Unsupported(_)
                | CloseReason::BadPath(_)
                | CloseReason::TooManyWatches { .. }
        )
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::SessionClosed => write!(f, "the client closed its session"),
            CloseReason::SessionEnded => write!(f, "the session ended at the leader"),
            CloseReason::SessionInvalid => {
                write!(f, "unknown or expired session, or wrong password")
            }
            CloseReason::ClientAhead { seen, applied } => write!(
                f,
                "the client has seen zxid {seen:#x}, this server applied only {applied:#x} (S26)"
            ),
            CloseReason::ServerUnavailable => write!(f, "this server cannot take sessions now"),
            CloseReason::Replaced => write!(f, "the session connected again elsewhere"),
            CloseReason::TooManyConnections => write!(f, "too many connections"),
            CloseReason::TooManyWatches { held, max } => {
                write!(
                    f,
                    "the session would hold {held} watches, past the limit {max}"
                )
            }
            CloseReason::BadFrame(e) => write!(f, "{e}"),
            CloseReason::Garbage(e) => write!(f, "undecodable frame: {e}"),
            CloseReason::Unsupported(op) => write!(
                f,
                "opcode {op} ({}) is not supported; answered Unimplemented",
                zkwire::opcode::name(*op).unwrap_or("unknown")
            ),
            CloseReason::BadPath(path) => write!(f, "invalid path {path:?}"),
            CloseReason::AuthFailed(scheme) => {
                write!(
                    f,
                    "auth scheme {scheme:?} is not supported; answered AuthFailed"
                )
            }
            CloseReason::Closing => write!(f, "the connection was closing"),
            CloseReason::FourLetterWord(word) => write!(f, "four-letter word {word} answered"),
            CloseReason::FaultDrop { before_reply: true } => {
                write!(f, "dropped by the fault plan before the reply")
            }
            CloseReason::FaultDrop {
                before_reply: false,
            } => {
                write!(f, "dropped by the fault plan after the reply")
            }
        }
    }
}
