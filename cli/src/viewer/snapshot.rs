//! The world after each step, as the viewer's state panel shows it, and
//! the compact form it travels in.
//!
//! A snapshot is four sections — `nodes`, `sessions`, `servers`,
//! `clients` — each a map from a name to a small JSON value. The page gets
//! the first snapshot whole and every later one as a diff per section (the
//! entries set and the names deleted), so a 400-step run whose steps each
//! change one or two entries costs a few bytes per step, not a copy of the
//! world. `serde_json`'s map is ordered, so the output is deterministic.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use zksim::SessionId;

use zkcheck::state::SystemState;
use zkrecipes::RecipeSet;

use super::labels::{session_label, zx};
use super::timeline::Belief;

/// The sections of a snapshot, in the order the page shows them.
pub const SECTIONS: [&str; 4] = ["clients", "servers", "sessions", "nodes"];

/// One world, flattened.
pub type Snapshot = BTreeMap<&'static str, Map<String, Value>>;

/// Flatten the world after a step. `beliefs` are the timeline's, `ended`
/// the sessions that ended so far (`true` if by expiry).
pub fn snapshot<C: RecipeSet>(
    model: &SystemState<C>,
    beliefs: &[Belief],
    ended: &BTreeMap<SessionId, bool>,
    owners: &BTreeMap<SessionId, usize>,
) -> Snapshot {
    let w = &model.world;
    let who = |s: SessionId| match owners.get(&s) {
        Some(c) => format!("c{c} {}", session_label(s)),
        None => session_label(s),
    };

    let mut clients = Map::new();
    for c in 0..w.num_clients() {
        let link = if w.is_crashed(c) {
            "crashed".to_string()
        } else if w.is_handle_dead(c) {
            "handle dead".to_string()
        } else if w.is_paused(c) {
            "paused".to_string()
        } else {
            match w.server_of(c) {
                Some(s) => format!("connected to s{s}"),
                None => "disconnected".to_string(),
            }
        };
        clients.insert(
            format!("c{c}"),
            json!({
                "belief": beliefs.get(c).map_or("idle", |b| b.name()),
                "link": link,
                "session": session_label(w.session_of(c)),
                "timer": w.timer_of(c),
                "recipe": format!("{:?}", w.client(c)),
            }),
        );
    }

    let mut servers = Map::new();
    for s in 0..w.num_servers() {
        let watches = w.server_watches(s);
        let list: Vec<String> = watches
            .data_watches()
            .map(|(p, sess)| format!("data {p} ← {}", who(sess)))
            .chain(
                watches
                    .child_watches()
                    .map(|(p, sess)| format!("child {p} ← {}", who(sess))),
            )
            .collect();
        servers.insert(
            format!("s{s}"),
            json!({
                "role": if s == 0 { "leader" } else { "follower" },
                "applied": zx(w.applied_zxid(s)),
                "partitioned": w.is_partitioned(s),
                "watches": list,
            }),
        );
    }

    let mut sessions = Map::new();
    for (&s, &c) in owners {
        let state = if w.is_session_live(s) {
            "live"
        } else {
            match ended.get(&s) {
                Some(true) => "expired",
                Some(false) => "closed",
                None => "unknown to the leader",
            }
        };
        sessions.insert(
            session_label(s),
            json!({ "client": format!("c{c}"), "state": state }),
        );
    }

    // The union of every server's tree: a node a lagging follower lacks
    // (or still has) shows which servers hold it.
    let mut nodes: BTreeMap<String, (Value, Vec<String>)> = BTreeMap::new();
    for s in 0..w.num_servers() {
        for (path, node) in w.server_tree(s).nodes() {
            if path == "/" || path == "/zookeeper" || path.starts_with("/zookeeper/") {
                continue;
            }
            let entry = nodes.entry(path.to_string()).or_insert_with(|| {
                let owner = node.stat.ephemeral_owner;
                (
                    json!({
                        "czxid": zx(node.stat.czxid),
                        "owner": if owner == 0 { String::new() } else { who(owner) },
                        "seq": sequence_of(path),
                    }),
                    Vec::new(),
                )
            });
            entry.1.push(format!("s{s}"));
        }
    }
    let all = w.num_servers();
    let nodes: Map<String, Value> = nodes
        .into_iter()
        .map(|(path, (mut v, on))| {
            if on.len() < all {
                v["on"] = json!(on.join(" "));
            }
            (path, v)
        })
        .collect();

    BTreeMap::from([
        ("clients", clients),
        ("servers", servers),
        ("sessions", sessions),
        ("nodes", nodes),
    ])
}

/// The sequence number ZooKeeper appended to a sequential node's name
/// (its last ten characters, when they are digits).
fn sequence_of(path: &str) -> Option<i64> {
    let name = path.rsplit('/').next()?;
    let tail = name.get(name.len().checked_sub(10)?..)?;
    if tail.bytes().all(|b| b.is_ascii_digit()) {
        tail.parse().ok()
    } else {
        None
    }
}

/// What changed from `before` to `after`, per section:
/// `{"nodes": {"set": {...}, "del": [...]}}`; unchanged sections are left out.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Value {
    let empty = Map::new();
    let mut out = Map::new();
    for section in SECTIONS {
        let b = before.get(section).unwrap_or(&empty);
        let a = after.get(section).unwrap_or(&empty);
        let set: Map<String, Value> = a
            .iter()
            .filter(|(k, v)| b.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let del: Vec<&String> = b.keys().filter(|k| !a.contains_key(*k)).collect();
        if set.is_empty() && del.is_empty() {
            continue;
        }
        let mut d = Map::new();
        if !set.is_empty() {
            d.insert("set".into(), Value::Object(set));
        }
        if !del.is_empty() {
            d.insert("del".into(), json!(del));
        }
        out.insert(section.into(), Value::Object(d));
    }
    Value::Object(out)
}

/// Apply a [`diff`] (what the page's script does), for tests.
pub fn apply(before: &Snapshot, d: &Value) -> Snapshot {
    let mut out = before.clone();
    for section in SECTIONS {
        let Some(change) = d.get(section) else {
            continue;
        };
        let map = out.entry(section).or_default();
        if let Some(Value::Object(set)) = change.get("set") {
            for (k, v) in set {
                map.insert(k.clone(), v.clone());
            }
        }
        if let Some(Value::Array(del)) = change.get("del") {
            for k in del.iter().filter_map(Value::as_str) {
                map.remove(k);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_are_the_last_ten_digits() {
        assert_eq!(sequence_of("/lock/x-0000000012"), Some(12));
        assert_eq!(sequence_of("/lock/lock"), None);
        assert_eq!(sequence_of("/lock/abc"), None);
    }

    #[test]
    fn a_diff_applied_gives_the_later_snapshot() {
        let mut a = Snapshot::new();
        a.entry("nodes")
            .or_default()
            .insert("/lock/a".into(), json!({"czxid": "0x1"}));
        a.entry("nodes")
            .or_default()
            .insert("/lock/b".into(), json!({"czxid": "0x2"}));
        let mut b = a.clone();
        b.get_mut("nodes").unwrap().remove("/lock/a");
        b.get_mut("nodes")
            .unwrap()
            .insert("/lock/c".into(), json!({"czxid": "0x3"}));
        let d = diff(&a, &b);
        assert_eq!(d["nodes"]["del"], json!(["/lock/a"]));
        assert!(
            d["nodes"]["set"].get("/lock/b").is_none(),
            "unchanged entries are left out"
        );
        assert_eq!(apply(&a, &d)["nodes"], b["nodes"]);
        assert_eq!(diff(&b, &b), json!({}));
    }
}
