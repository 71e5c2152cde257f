//! Counterexamples a person can read: one line per thing that happened.
//!
//! ```text
//!   12 t=4   c2@s1 recv NodeDeleted /lock/lock-0000000003
//!   12 t=4   c2 Acquired fence=0x7
//! ```
//!
//! Each line starts with the step number (the position in the schedule)
//! and the simulated time after the step, then the actor (`c2` a client,
//! `@s1` the server it is connected to, `s1` a server) and what it did.

use std::fmt::Write;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{CreateMode, Delivery, Event, Fault, Happening, Op, Reply, Response};

use crate::model::Model;
use crate::monitor::Violation;
use crate::scenario::property_name;

/// Accumulates the lines of a trace while a run is replayed.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    step: usize,
    pub text: String,
}

impl Trace {
    /// Record what starting the clients did, before the first step.
    pub fn start<C: RecipeSet>(&mut self, model: &Model<C>, log: &[Happening<AppEvent>]) {
        for h in log {
            if let Some(line) = describe_happening(model, h) {
                let _ = writeln!(self.text, "start t={:<4} {line}", model.world.now());
            }
        }
    }

    /// Record one step (called after the step is applied).
    pub fn record<C: RecipeSet>(
        &mut self,
        model: &Model<C>,
        event: &Event,
        log: &[Happening<AppEvent>],
    ) {
        let prefix = format!("{:>5} t={:<4}", self.step, model.world.now());
        self.step += 1;
        let mut wrote = false;
        let describe = describe_event(model, event);
        if let Some(d) = describe {
            let _ = writeln!(self.text, "{prefix} {d}");
            wrote = true;
        }
        for h in log {
            if let Some(line) = describe_happening(model, h) {
                let _ = writeln!(self.text, "{prefix} {line}");
                wrote = true;
            }
        }
        if !wrote {
            let _ = writeln!(self.text, "{prefix} {event:?}");
        }
    }

    /// Close the trace with the violation that ended it.
    pub fn violation(&mut self, v: &Violation) {
        let _ = writeln!(
            self.text,
            "VIOLATION {}: {}",
            property_name(v.property),
            v.explanation
        );
    }
}

fn at<C: RecipeSet>(model: &Model<C>, client: usize) -> String {
    match model.world.server_of(client) {
        Some(s) => format!("c{client}@s{s}"),
        None => format!("c{client}"),
    }
}

/// A line for the chosen event itself, when its happenings do not say it.
fn describe_event<C: RecipeSet>(model: &Model<C>, event: &Event) -> Option<String> {
    Some(match event {
        Event::Tick => "tick".to_string(),
        Event::Timer { client } => format!("{} timer fires", at(model, *client)),
        Event::Connect { client, server } => format!("c{client} connects to s{server}"),
        Event::Fault(f) => format!(
            "FAULT {}",
            match f {
                Fault::DropConnection { client } => format!("connection of c{client} drops"),
                Fault::ExpireSession { client } => format!("session of c{client} expires"),
                Fault::Pause { client } => format!("c{client} pauses"),
                Fault::Crash { client } => format!("c{client} crashes"),
                Fault::Partition { server } => format!("s{server} is partitioned"),
                Fault::Heal { server } => format!("s{server} heals"),
            }
        ),
        Event::Request { .. } | Event::Apply { .. } | Event::Receive { .. } => return None,
    })
}

fn describe_happening<C: RecipeSet>(model: &Model<C>, h: &Happening<AppEvent>) -> Option<String> {
    Some(match h {
        Happening::Sent {
            client,
            op,
            request,
        } => {
            format!("c{client} send #{op} {}", describe_op(request))
        }
        Happening::Taken { client, server, op } => format!("s{server} takes #{op} of c{client}"),
        Happening::Committed { zxid, session } => {
            format!("leader commits zxid {zxid:#x} (session {session:#x})")
        }
        Happening::Applied { server, zxid } => format!("s{server} applies zxid {zxid:#x}"),
        Happening::Delivered { client, delivery } => {
            let what = match delivery {
                Delivery::Reply { op, reply } => format!("reply #{op} {}", describe_reply(reply)),
                Delivery::Watch(w) => format!("{:?} {}", w.kind, w.path),
                Delivery::Session(s) => format!("{s:?}"),
            };
            format!("{} recv {what}", at(model, *client))
        }
        Happening::App { client, event } => format!("c{client} {}", describe_app(event)),
        Happening::SessionEnded { session, expired } => format!(
            "session {session:#x} {}; its ephemerals are gone",
            if *expired { "expired" } else { "closed" }
        ),
    })
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
    }
}

fn describe_reply(reply: &Reply) -> String {
    match reply {
        Err(e) => format!("error {e:?}"),
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
        AppEvent::Acquired { fence, shared } => {
            format!(
                "Acquired{} fence={fence:#x}",
                if *shared { " (read)" } else { "" }
            )
        }
        AppEvent::ResourceWrite { fence } => format!("ResourceWrite fence={fence:#x}"),
        AppEvent::Enqueued { seq: Some(seq) } => format!("Enqueued seq={seq}"),
        other => format!("{other:?}"),
    }
}
