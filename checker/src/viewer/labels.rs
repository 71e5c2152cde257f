//! Short labels for the diagram: requests, replies, app events, ids.

use zkrecipes::AppEvent;
use zksim::{CreateMode, Op, Reply, SessionId, Zxid};

/// A zxid as traces print it.
pub fn zx(zxid: Zxid) -> String {
    format!("{zxid:#x}")
}

/// A session id as traces print it (decimal, as inside node names).
pub fn session_label(session: SessionId) -> String {
    session.to_string()
}

/// A request, short enough for an arrow.
pub fn op_label(op: &Op) -> String {
    let watch = |w: &bool| if *w { " +watch" } else { "" };
    match op {
        Op::Create { path, mode, .. } => {
            let mode = match mode {
                CreateMode::Persistent => "",
                CreateMode::Ephemeral => " (eph)",
                CreateMode::PersistentSequential => " (seq)",
                CreateMode::EphemeralSequential => " (eph-seq)",
                _ => " (other)",
            };
            format!("create {path}{mode}")
        }
        Op::Delete { path, .. } => format!("delete {path}"),
        Op::Exists { path, watch: w } => format!("exists {path}{}", watch(w)),
        Op::GetData { path, watch: w } => format!("getData {path}{}", watch(w)),
        Op::SetData { path, .. } => format!("setData {path}"),
        Op::GetChildren { path, watch: w } => format!("getChildren {path}{}", watch(w)),
        Op::Sync { path } => format!("sync {path}"),
        Op::Check { path, version } => format!("check {path} version={version}"),
        Op::Multi(ops) => format!(
            "multi [{}]",
            ops.iter().map(op_label).collect::<Vec<_>>().join("; ")
        ),
        // The newer ops (S32–S38), which no recipe here sends.
        other => format!("{other:?}"),
    }
}

/// A reply, in the trace's words (error names, not Rust `Debug` text).
pub fn reply_label(reply: &Reply) -> String {
    crate::trace::describe_reply(reply)
}

pub fn app_label(e: &AppEvent) -> String {
    match e {
        AppEvent::Acquired { fence, shared } => format!(
            "Acquired{} fence={fence:#x}",
            if *shared { " (read)" } else { "" }
        ),
        AppEvent::ResourceWrite { fence } => format!("ResourceWrite fence={fence:#x}"),
        AppEvent::Enqueued { seq: Some(seq) } => format!("Enqueued seq={seq}"),
        AppEvent::Enqueued { seq: None } => "Enqueued".into(),
        AppEvent::Requested { shared: true } => "Requested (read)".into(),
        AppEvent::Requested { shared: false } => "Requested".into(),
        other => format!("{other:?}"),
    }
}
