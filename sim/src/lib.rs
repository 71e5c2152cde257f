//! zksim: a deterministic, in-memory ZooKeeper ensemble.
//!
//! The whole ensemble — data trees of a leader and its followers, the
//! committed log, sessions, connections with their in-flight messages, the
//! clients' own state, simulated time and the fault budget — is one value,
//! [`World`], that is `Clone + Hash + Eq`. It lists the events enabled in its
//! current state in a deterministic order and applies the one a scheduler
//! picks. Nothing here knows about locks or properties: recipes plug in
//! through [`Client`], checkers drive [`World::enabled`] and [`World::step`].
//!
//! The rules it follows are ZooKeeper 3.8's, listed with ids (S1…) in
//! `docs/ZK-SEMANTICS.md`; `tests/rules_tree.rs`, `tests/rules_world.rs`
//! and `tests/rules_ops.rs` (S32–S38: the newer ops) have tests named after
//! the rules.

pub mod client;
mod cow_mut;
pub mod decimal;
pub mod demo;
pub mod fingerprint;
pub mod ids;
pub mod path;
pub mod proto;
pub mod remote;
pub mod rename;
pub mod script;
pub mod tree;
pub mod watch;
pub mod world;

pub use client::{Client, Cx, CxOutput, OpId, SessionRequest, TimerRequest};
pub use proto::{
    AddWatchMode, CreateMode, EventType, Op, Reply, Response, SessionEvent, SessionId, Stat, Tick,
    WatchedEvent, WatcherType, ZkError, Zxid,
};
pub use remote::Remote;
pub use tree::DataTree;
pub use world::{
    ClientId, ClientReadiness, CommittedTxn, Config, Delivery, Event, Fault, FaultBudget,
    Happening, Refusal, ServerId, SetWatches, Shared, SharedServer, SharedSlot, World,
};

/// Simulated milliseconds per tick (ZooKeeper's `tickTime` in our tests is 100 ms).
pub const TICK_MS: i64 = 100;
