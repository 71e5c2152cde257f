//! Who is who in a world: client slots, servers and session ids.
//!
//! Kept apart from [`crate::world`] so that code which only renames or
//! names actors ([`crate::rename`]) need not depend on the world that
//! steps them.

use crate::proto::SessionId;

/// Index of a client in the world (stable for the run).
pub type ClientId = usize;
/// Index of a server; server 0 is the leader.
pub type ServerId = usize;

/// Session ids start here and count up: deterministic, and shaped like the
/// real ones (server id in the top byte).
pub const SESSION_ID_BASE: SessionId = 0x0100_0000_0000_0000;
