//! zkserve: the simulated ZooKeeper ensemble (`zksim::World`) behind TCP
//! sockets, speaking ZooKeeper 3.8's client protocol, so that unmodified
//! clients — the Java client and `zkCli.sh`, Curator, kazoo,
//! `zookeeper-client` — connect to it.
//!
//! - [`engine`]: the server's logic, sans-IO and deterministic: inputs
//!   (a connection accepted, bytes, a close, a tick) in, frames to send and
//!   connections to close out.
//! - [`driver`]: the thin tokio driver: one listening port per simulated
//!   server, a task per socket, a wall-clock tick.
//! - [`cli`]: `ServeArgs` and `run`, for `zkcheck serve` and the `zkserve`
//!   binary.
//! - [`replay`]: `--replay-input`, the engine re-run from a recorded
//!   history's inputs (sans-IO, like the engine).
//!
//! What the server supports, and what it answers instead for the rest, is
//! in docs/WIRE.md ("The server").

pub mod cli;
pub mod driver;
pub mod engine;
pub mod replay;

pub use engine::{CloseReason, ConnId, Engine, Input, Limits, Output, Stats, Whitelist};
