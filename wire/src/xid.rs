//! The reserved xids (`ClientCnxn`): the library's own traffic, told apart
//! from numbered requests by a negative xid.

/// A watch notification from the server (`WatcherEvent` body).
pub const NOTIFICATION: i32 = -1;
/// A ping and its reply.
pub const PING: i32 = -2;
/// An `AuthPacket` (setAuth) and its reply.
pub const AUTH: i32 = -4;
/// `SetWatches` / `SetWatches2` after a reconnect, and its reply.
pub const SET_WATCHES: i32 = -8;
