//! Counterexamples a person can read: one line per thing that happened.
//!
//! ```text
//!   12 t=4    c2@s1 recv NodeDeleted /lock/lock-0000000003
//!   12 t=4    c2 Acquired fence=0x7
//! 13-20 t=12   tick ×8 (clock 4 → 12)
//! ```
//!
//! Each line starts with the step number (the position in the schedule)
//! and the simulated time after the step, then the actor (`c2` a client,
//! `@s1` the server it is connected to, `s1` a server) and what it did.
//! Steps where only the clock ticked are folded into one line.
//!
//! One base per kind of number, everywhere (here, in the monitors'
//! explanations and in node names): zxids and fences (a fence is the czxid
//! of the node that grants the lock) in hex with `0x`, as ZooKeeper's logs
//! print them; session ids in decimal, as recipes write them into node
//! names (`x-72057594037927936-0000000001`), each with the client that
//! owns it; sequence numbers, ticks, versions and counts in decimal. No Rust
//! `Debug` text: every value is spelled out here.

use std::collections::BTreeMap;
use std::fmt::Write;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{
    ClientId, CreateMode, Delivery, Event, EventType, Happening, Op, Reply, Response, SessionEvent,
    SessionId, ZkError,
};

use crate::monitor::Violation;
use crate::scenario::property_name;
use crate::state::SystemState;
use crate::words::{event_words, fault_words};

/// Accumulates the lines of a trace while a run is replayed. Call
/// [`Trace::finish`] (replay does) before reading `text`.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    step: usize,
    /// The lines so far.
    pub text: String,
    /// Every session seen so far and the client that owns it.
    owners: BTreeMap<SessionId, ClientId>,
    /// Steps of clock ticks not written yet: (first step, last step, time before, time after).
    ticks: Option<(usize, usize, u64, u64)>,
    /// A lasso's cycle starts at this step: a line marks it.
    cycle_from: Option<usize>,
}

/// The line that marks where a lasso's cycle starts.
pub const CYCLE_MARK: &str = "----- cycle: the steps from here to the end repeat for ever -----";

impl Trace {
    /// A trace that marks where a lasso's cycle (from step `from`) starts.
    pub fn with_cycle(from: Option<usize>) -> Self {
        Trace {
            cycle_from: from,
            ..Trace::default()
        }
    }

    /// Record what starting the clients did, before the first step.
    pub fn start<C: RecipeSet>(&mut self, model: &SystemState<C>, log: &[Happening<AppEvent>]) {
        self.learn_sessions(model);
        for h in log {
            if let Some(line) = self.describe_happening(model, h) {
                let _ = writeln!(self.text, "start t={:<4} {line}", model.world.now());
            }
        }
    }

    /// Record one step (called after the step is applied).
    pub fn record<C: RecipeSet>(
        &mut self,
        model: &SystemState<C>,
        event: &Event,
        log: &[Happening<AppEvent>],
    ) {
        self.learn_sessions(model);
        let step = self.step;
        self.step += 1;
        if self.cycle_from == Some(step) {
            self.flush_ticks();
            let _ = writeln!(self.text, "{CYCLE_MARK}");
        }
        let now = model.world.now();
        let mut lines: Vec<String> = log
            .iter()
            .filter_map(|h| self.describe_happening(model, h))
            .collect();
        if *event == Event::Tick && lines.is_empty() {
            self.ticks = Some(match self.ticks {
                Some((first, _, before, _)) => (first, step, before, now),
                None => (step, step, now.saturating_sub(1), now),
            });
            return;
        }
        self.flush_ticks();
        if let Some(d) = describe_event(model, event) {
            lines.insert(0, d);
        }
        if lines.is_empty() {
            lines.push(event_words(event));
        }
        for line in lines {
            let _ = writeln!(self.text, "{step:>5} t={now:<4} {line}");
        }
    }

    /// Close the trace with the violation that ended it.
    pub fn violation(&mut self, v: &Violation) {
        self.flush_ticks();
        let _ = writeln!(
            self.text,
            "VIOLATION {}: {}",
            property_name(v.property),
            v.explanation
        );
    }

    /// Write what is still pending (a last run of ticks).
    pub fn finish(&mut self) {
        self.flush_ticks();
    }

    fn flush_ticks(&mut self) {
        let Some((first, last, before, after)) = self.ticks.take() else {
            return;
        };
        if first == last {
            let _ = writeln!(self.text, "{first:>5} t={after:<4} tick");
        } else {
            let steps = format!("{first}-{last}");
            let _ = writeln!(
                self.text,
                "{steps:>5} t={after:<4} tick ×{} (clock {before} → {after})",
                last - first + 1
            );
        }
    }

    fn learn_sessions<C: RecipeSet>(&mut self, model: &SystemState<C>) {
        for c in 0..model.world.num_clients() {
            self.owners.insert(model.world.session_of(c), c);
        }
    }

    /// `session 72057594037927936 of c0`.
    fn session(&self, session: SessionId) -> String {
        match self.owners.get(&session) {
            Some(c) => format!("session {session} of c{c}"),
            None => format!("session {session}"),
        }
    }

    fn describe_happening<C: RecipeSet>(
        &self,
        model: &SystemState<C>,
        h: &Happening<AppEvent>,
    ) -> Option<String> {
        Some(match h {
            Happening::Sent {
                client,
                op,
                request,
            } => {
                format!("c{client} send #{op} {}", describe_op(request))
            }
            Happening::Taken { client, server, op } => {
                format!("s{server} takes #{op} of c{client}")
            }
            Happening::Committed { zxid, session } => {
                format!("leader commits zxid {zxid:#x} ({})", self.session(*session))
            }
            Happening::Applied { server, zxid } => format!("s{server} applies zxid {zxid:#x}"),
            Happening::Delivered { client, delivery } => {
                let what = match delivery {
                    Delivery::Reply { op, reply } => {
                        format!("reply #{op} {}", describe_reply(reply))
                    }
                    Delivery::Watch(w) => format!("{} {}", watch_kind(w.kind), w.path),
                    Delivery::Session(s) => session_event(*s).to_string(),
                };
                format!("{} recv {what}", at(model, *client))
            }
            Happening::App { client, event } => format!("c{client} {}", describe_app(event)),
            Happening::SessionEnded { session, expired } => format!(
                "{} {}; its ephemerals are gone",
                self.session(*session),
                if *expired { "expired" } else { "closed" }
            ),
        })
    }
}

fn at<C: RecipeSet>(model: &SystemState<C>, client: usize) -> String {
    match model.world.server_of(client) {
        Some(s) => format!("c{client}@s{s}"),
        None => format!("c{client}"),
    }
}

/// A line for the chosen event itself, when its happenings do not say it.
fn describe_event<C: RecipeSet>(model: &SystemState<C>, event: &Event) -> Option<String> {
    Some(match event {
        Event::Tick => "tick".to_string(),
        Event::Timer { client } => format!("{} timer fires", at(model, *client)),
        Event::Connect { client, server } => format!("c{client} connects to s{server}"),
        Event::Fault(f) => format!("FAULT {}", fault_words(f)),
        Event::Request { .. } | Event::Apply { .. } | Event::Receive { .. } => return None,
    })
}

/// `Watcher.Event.EventType`'s names.
fn watch_kind(kind: EventType) -> &'static str {
    match kind {
        EventType::NodeCreated => "NodeCreated",
        EventType::NodeDeleted => "NodeDeleted",
        EventType::NodeDataChanged => "NodeDataChanged",
        EventType::NodeChildrenChanged => "NodeChildrenChanged",
    }
}

/// `Watcher.Event.KeeperState`'s names.
fn session_event(e: SessionEvent) -> &'static str {
    match e {
        SessionEvent::SyncConnected => "SyncConnected",
        SessionEvent::Disconnected => "Disconnected",
        SessionEvent::Expired => "Expired",
    }
}

/// `KeeperException.Code`'s names, as the Java client's exceptions spell them.
fn error_name(e: ZkError) -> &'static str {
    match e {
        ZkError::RolledBack => "RolledBack",
        ZkError::RuntimeInconsistency => "RuntimeInconsistency",
        ZkError::DataInconsistency => "DataInconsistency",
        ZkError::ConnectionLoss => "ConnectionLoss",
        ZkError::MarshallingError => "MarshallingError",
        ZkError::Unimplemented => "Unimplemented",
        ZkError::OperationTimeout => "OperationTimeout",
        ZkError::BadArguments => "BadArguments",
        ZkError::NoNode => "NoNode",
        ZkError::NoAuth => "NoAuth",
        ZkError::BadVersion => "BadVersion",
        ZkError::NoChildrenForEphemerals => "NoChildrenForEphemerals",
        ZkError::NodeExists => "NodeExists",
        ZkError::NotEmpty => "NotEmpty",
        ZkError::SessionExpired => "SessionExpired",
        ZkError::InvalidCallback => "InvalidCallback",
        ZkError::InvalidAcl => "InvalidACL",
        ZkError::AuthFailed => "AuthFailed",
        ZkError::SessionMoved => "SessionMoved",
        ZkError::NotReadOnly => "NotReadOnly",
        ZkError::NoWatcher => "NoWatcher",
    }
}

fn describe_op(op: &Op) -> String {
    match op {
        Op::Create { path, mode, .. } => {
            let mode = match mode {
                CreateMode::Persistent => "persistent",
                CreateMode::Ephemeral => "ephemeral",
                CreateMode::PersistentSequential => "persistent-sequential",
                CreateMode::EphemeralSequential => "ephemeral-sequential",
                _ => "other",
            };
            format!("create {path} ({mode})")
        }
        Op::Delete { path, version } => format!("delete {path} version={version}"),
        Op::Exists { path, watch } => {
            format!("exists {path}{}", if *watch { " +watch" } else { "" })
        }
        Op::GetData { path, watch } => {
            format!("getData {path}{}", if *watch { " +watch" } else { "" })
        }
        Op::SetData { path, version, .. } => format!("setData {path} version={version}"),
        Op::GetChildren { path, watch } => {
            format!("getChildren {path}{}", if *watch { " +watch" } else { "" })
        }
        Op::Sync { path } => format!("sync {path}"),
        Op::Check { path, version } => format!("check {path} version={version}"),
        Op::Multi(ops) => format!(
            "multi [{}]",
            ops.iter().map(describe_op).collect::<Vec<_>>().join("; ")
        ),
        // The newer ops (S32–S38), which no recipe here sends.
        other => format!("{other:?}"),
    }
}

/// A reply in words (also the viewer's arrow label: one wording for both).
pub fn describe_reply(reply: &Reply) -> String {
    match reply {
        Err(e) => format!("error {}", error_name(*e)),
        Ok(r) => match r {
            Response::Created { path, stat } => format!("created {path} czxid={:#x}", stat.czxid),
            Response::Deleted => "deleted".into(),
            Response::Exists(Some(stat)) => format!("exists czxid={:#x}", stat.czxid),
            Response::Exists(None) => "no node".into(),
            Response::Data { data, stat } => {
                format!("data ({} bytes) version={}", data.len(), stat.version)
            }
            Response::SetData(stat) => format!("set version={}", stat.version),
            Response::Children { names, .. } => format!("children [{}]", names.join(", ")),
            Response::Synced => "synced".into(),
            Response::Checked => "checked".into(),
            other @ (Response::Ephemerals(_) | Response::AllChildrenNumber(_) | Response::Done) => {
                format!("{other:?}")
            }
            Response::Multi(results) => format!(
                "multi [{}]",
                results
                    .iter()
                    .map(|r| describe_reply(&r.clone()))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        },
    }
}

fn describe_app(e: &AppEvent) -> String {
    match e {
        AppEvent::Requested { shared } => {
            format!("Requested{}", if *shared { " (read)" } else { "" })
        }
        AppEvent::Enqueued { seq: Some(seq) } => format!("Enqueued seq={seq}"),
        AppEvent::Enqueued { seq: None } => "Enqueued".to_string(),
        AppEvent::Acquired { fence, shared } => {
            format!(
                "Acquired{} fence={fence:#x}",
                if *shared { " (read)" } else { "" }
            )
        }
        AppEvent::ResourceWrite { fence } => format!("ResourceWrite fence={fence:#x}"),
        AppEvent::Released => "Released".to_string(),
        AppEvent::LostLock => "LostLock".to_string(),
        AppEvent::GaveUp => "GaveUp".to_string(),
        AppEvent::Offered { item } => format!("Offered item={item}"),
        AppEvent::Taken { item } => format!("Taken item={item}"),
        AppEvent::Elected => "Elected".to_string(),
        AppEvent::Abdicated => "Abdicated".to_string(),
    }
}
