//! The judges, one module each, and which of them a [`Config`] makes
//! applicable. docs/JUDGES.md defines each.

pub mod election;
pub mod herd;
pub mod leaks;
pub mod liveness;
pub mod owner;
pub mod queue;
pub mod zk;

use crate::verdict::{Config, Judge};

/// Every judge's name, in the order verdicts are printed.
pub const NAMES: &[&str] = &[
    "session-fifo",
    "session-zxids",
    "read-applied",
    "ephemerals",
    "owner-writes",
    "owner-writes-fenced",
    "herd",
    "leaks",
    "liveness",
    "election-safety",
    "election-liveness",
    "queue",
];

/// The judge called `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Judge>> {
    Some(match name {
        "session-fifo" => Box::new(zk::SessionFifo),
        "session-zxids" => Box::new(zk::SessionZxids),
        "read-applied" => Box::new(zk::ReadApplied),
        "ephemerals" => Box::new(zk::Ephemerals),
        "owner-writes" => Box::new(owner::OwnerWrites),
        "owner-writes-fenced" => Box::new(owner::OwnerWritesFenced),
        "herd" => Box::new(herd::Herd),
        "leaks" => Box::new(leaks::Leaks),
        "liveness" => Box::new(liveness::Liveness),
        "election-safety" => Box::new(election::ElectionSafety),
        "election-liveness" => Box::new(election::ElectionLiveness),
        "queue" => Box::new(queue::Queue),
        _ => return None,
    })
}

/// What a judge needs from the flags.
pub fn needs(name: &str) -> &'static str {
    match name {
        "owner-writes" | "owner-writes-fenced" => "needs --lock and --resource",
        "herd" | "leaks" | "liveness" => "needs --lock",
        "election-safety" => "needs --leader and --resource",
        "election-liveness" => "needs --leader",
        "queue" => "needs --queue and --resource",
        _ => "needs nothing",
    }
}

fn applies(name: &str, c: &Config) -> bool {
    let (l, r, e, q) = (
        c.lock.is_some(),
        c.resource.is_some(),
        c.leader.is_some(),
        c.queue.is_some(),
    );
    match name {
        "owner-writes" | "owner-writes-fenced" => l && r,
        "herd" | "leaks" | "liveness" => l,
        "election-safety" => e && r,
        "election-liveness" => e,
        "queue" => q && r,
        _ => true,
    }
}

/// The judges the flags make applicable, in [`NAMES`] order.
pub fn applicable(config: &Config) -> Vec<Box<dyn Judge>> {
    NAMES
        .iter()
        .filter(|n| applies(n, config))
        .filter_map(|n| by_name(n))
        .collect()
}
