//! The conformance suite's machinery: one multi-session script, run on the
//! simulator and on a real ZooKeeper, observed the same way on both.
//!
//! A [`Script`] is a list of [`ScriptStep`]s in one global order: "session 1
//! creates `/a`", "session 0 closes", "session 2's session expires". Each
//! step completes (its reply, or the fault's visible effect) before the next
//! one begins, and everything a step causes elsewhere (watch events to other
//! sessions) is delivered before the next step too. Both runners enforce
//! that order, so what each session observes is deterministic on both
//! sides and can be compared item by item.
//!
//! The one exception is deliberate: [`Action::Send`] issues an op without
//! waiting, on a connection whose requests or replies the script holds
//! ([`Action::HoldRequests`], [`Action::HoldReplies`]) or while the session
//! is disconnected. Its reply (or `ConnectionLoss`) comes at the fault or
//! the reconnection that settles it: that is how the suite compares ops in
//! flight across a broken connection (S21) and ops issued while away.
//!
//! Paths starting with `/@` are relative to the script's own fresh root
//! node (created, unobserved, before the first step), so scripts can share
//! one real server without seeing each other and every parent they touch
//! starts with fresh counters. See `docs/CONFORMANCE.md`.

mod observe;
pub mod real;
pub mod sim;

pub use observe::{normalize, Frame, Obs, Outcome, Owner, Seen, StatView, ZxidView};

/// The step index of the hidden setup op (creating the script's root).
pub const SETUP: usize = usize::MAX;

use zksim::Op;

/// What one session does at one step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Send the op and wait for its reply.
    Op(Op),
    /// Issue the op without waiting for its reply. On a connection nothing
    /// holds this is [`Action::Op`]. Under [`Action::HoldRequests`] the step
    /// ends once the request is on the wire (read by the proxy, not yet at
    /// the server); under [`Action::HoldReplies`] once the server answered
    /// (applied) it, the answer held; while disconnected, once the client
    /// library has queued it. Its reply is observed when the connection is
    /// dropped (`ConnectionLoss`) or comes back (the answer).
    Send(Op),
    /// From now until the connection breaks, the session's requests stay on
    /// the wire: the server never gets them (real: the proxy holds
    /// client→server bytes; sim: the server takes no `Request` from it).
    HoldRequests,
    /// From now until the connection breaks, the server takes and answers
    /// the session's requests but nothing it sends reaches the client
    /// (real: the proxy holds server→client bytes; sim: no `Receive`).
    HoldReplies,
    /// `close()` the session and wait until the server ended it.
    Close,
    /// The server expires the session (real: the network goes silent until
    /// the server gives up on it; sim: `Fault::KillSession`, which ends it
    /// at once — what the script observes is the same: `Disconnected`, then
    /// `Expired` on reconnect). The client then reconnects and learns `Expired`.
    Expire,
    /// The connection breaks and stays down (real: the proxy holds every
    /// byte and drops the connection; sim: `Fault::DropConnection`).
    Disconnect,
    /// A disconnected session reconnects (same session: `SetWatches`).
    Reconnect,
    /// Wait until the server's container reaper has deleted `path` (S35),
    /// observing nothing (real: the session polls `exists` until the node
    /// is gone — the test server runs its reaper every 100 ms; sim: ticks
    /// until the leader's reaper pass). The step that emptied the
    /// container must come right before it, so that no other step takes a
    /// zxid while the real reaper's delete is pending.
    AwaitReaped(String),
}

/// One step of a script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScriptStep {
    pub session: usize,
    pub action: Action,
}

/// A named multi-session script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Script {
    /// Named after the rule it shows (`S5_suffix_skips_deletes`).
    pub name: String,
    pub sessions: usize,
    pub steps: Vec<ScriptStep>,
}

impl Script {
    pub fn new(name: impl Into<String>, sessions: usize) -> Self {
        Script {
            name: name.into(),
            sessions,
            steps: Vec::new(),
        }
    }
    /// Session `session` does `op` and waits for its reply.
    pub fn op(mut self, session: usize, op: Op) -> Self {
        self.steps.push(ScriptStep {
            session,
            action: Action::Op(op),
        });
        self
    }
    pub fn act(mut self, session: usize, action: Action) -> Self {
        self.steps.push(ScriptStep { session, action });
        self
    }
    pub fn expires(&self, session: usize) -> bool {
        self.steps
            .iter()
            .any(|s| s.session == session && s.action == Action::Expire)
    }
    /// The script with every `/@` path prefix replaced by `root`.
    pub fn rooted(&self, root: &str) -> Script {
        let mut out = self.clone();
        for step in &mut out.steps {
            match &mut step.action {
                Action::Op(op) | Action::Send(op) => root_op(op, root),
                Action::AwaitReaped(path) => root_path(path, root),
                _ => {}
            }
        }
        out
    }
    /// The script, one step per line.
    pub fn listing(&self) -> String {
        let mut out = format!("script {} ({} sessions)\n", self.name, self.sessions);
        for (i, step) in self.steps.iter().enumerate() {
            let what = match &step.action {
                Action::Op(op) => format!("{op:?}"),
                Action::Send(op) => format!("Send {op:?}"),
                other => format!("{other:?}"),
            };
            out.push_str(&format!("  {i:>3}: s{} {what}\n", step.session));
        }
        out
    }
}

fn root_op(op: &mut Op, root: &str) {
    let path = match op {
        Op::Create { path, .. }
        | Op::Delete { path, .. }
        | Op::Exists { path, .. }
        | Op::GetData { path, .. }
        | Op::SetData { path, .. }
        | Op::GetChildren { path, .. }
        | Op::Sync { path }
        | Op::Check { path, .. }
        | Op::GetAllChildrenNumber { path }
        | Op::AddWatch { path, .. }
        | Op::RemoveWatches { path, .. }
        | Op::CheckWatches { path, .. } => path,
        Op::GetEphemerals { prefix } => prefix,
        Op::Multi(ops) | Op::MultiRead(ops) => {
            ops.iter_mut().for_each(|op| root_op(op, root));
            return;
        }
    };
    root_path(path, root);
}

fn root_path(path: &mut String, root: &str) {
    if let Some(rest) = path.strip_prefix("/@") {
        *path = format!("{root}{rest}");
    }
}

/// What every session observed, per session, normalized.
pub type Observations = Vec<Vec<Obs>>;

/// The first difference, rendered side by side with the script; `None` when equal.
pub fn compare(script: &Script, sim: &Observations, real: &Observations) -> Option<String> {
    if sim == real {
        return None;
    }
    Some(side_by_side(script, sim, real))
}

/// The script and both sides' observations, differing lines marked `!!`.
pub fn side_by_side(script: &Script, sim: &Observations, real: &Observations) -> String {
    columns(script, &[("simulator", sim), ("real", real)])
}

/// The script and any number of sides' observations (name, observations),
/// one line per side and observation; `!!` marks the observations on which
/// the sides do not all agree, `—` a side that has none there.
pub fn columns(script: &Script, sides: &[(&str, &Observations)]) -> String {
    let mut out = script.listing();
    let names: Vec<&str> = sides.iter().map(|(name, _)| *name).collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    let sessions = sides.iter().map(|(_, o)| o.len()).max().unwrap_or(0);
    let empty = Vec::new();
    for session in 0..sessions {
        out.push_str(&format!("session {session}: {}\n", names.join(" | ")));
        let lists: Vec<&Vec<Obs>> = sides
            .iter()
            .map(|(_, o)| o.get(session).unwrap_or(&empty))
            .collect();
        let rows = lists.iter().map(|l| l.len()).max().unwrap_or(0);
        for i in 0..rows {
            let cells: Vec<String> = lists
                .iter()
                .map(|l| l.get(i).map_or("—".to_string(), |o| format!("{o}")))
                .collect();
            let mark = if cells.iter().all(|c| *c == cells[0]) {
                "   "
            } else {
                "!! "
            };
            for (name, cell) in names.iter().zip(&cells) {
                out.push_str(&format!("  {mark}{name:>width$}: {cell}\n"));
            }
        }
    }
    out
}
