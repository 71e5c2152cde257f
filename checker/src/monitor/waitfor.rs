//! The wait-for graph of a stuck run: which client waits on which node, and
//! whose session owns that node. Built with petgraph so that cycles (two
//! clients each watching a node the other owns) are found, not guessed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, SessionId};

use super::view::{who, End, Sessions};

/// The watches each client's library holds, as the history shows them:
/// a read sent with `watch: true` registers its watch when its successful
/// reply is handled; a delivered event consumes it (one-shot); the end of the
/// session forgets them all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WatchBook {
    /// Reads with a watch in flight: (client, op) → (children?, path).
    asked: BTreeMap<(ClientId, OpId), (bool, String)>,
    /// Registered watches: client → (children?, path).
    held: BTreeMap<ClientId, BTreeSet<(bool, String)>>,
}

impl WatchBook {
    /// The same watches under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        WatchBook {
            asked: self
                .asked
                .iter()
                .map(|(&(c, op), (children, path))| ((r.client(c), op), (*children, r.text(path))))
                .collect(),
            held: self
                .held
                .iter()
                .map(|(&c, set)| {
                    let set = set
                        .iter()
                        .map(|(children, path)| (*children, r.text(path)))
                        .collect();
                    (r.client(c), set)
                })
                .collect(),
        }
    }

    pub fn observe(&mut self, happening: &Happening<zkrecipes::AppEvent>, sessions: &Sessions) {
        match happening {
            Happening::Sent {
                client,
                op,
                request,
            } => match request {
                Op::Exists { path, watch: true } | Op::GetData { path, watch: true } => {
                    self.asked.insert((*client, *op), (false, path.clone()));
                }
                Op::GetChildren { path, watch: true } => {
                    self.asked.insert((*client, *op), (true, path.clone()));
                }
                _ => {}
            },
            Happening::Delivered {
                client,
                delivery: Delivery::Reply { op, reply },
            } => {
                if let Some(watch) = self.asked.remove(&(*client, *op)) {
                    // A successful reply registers the watch; `exists` on a
                    // missing node succeeds (with no Stat) and so watches too.
                    if reply.is_ok() {
                        self.held.entry(*client).or_default().insert(watch);
                    }
                }
            }
            Happening::Delivered {
                client,
                delivery: Delivery::Watch(event),
            } => {
                if let Some(held) = self.held.get_mut(client) {
                    held.retain(|(children, path)| {
                        let consumed = path == &event.path
                            && match event.kind {
                                EventType::NodeDeleted => true,
                                EventType::NodeChildrenChanged => *children,
                                _ => !*children,
                            };
                        !consumed
                    });
                }
            }
            Happening::SessionEnded { session, .. } => {
                if let Some(client) = sessions.client_of(*session) {
                    self.held.remove(&client);
                    self.asked.retain(|(c, _), _| *c != client);
                }
            }
            _ => {}
        }
    }

    /// The watches `client` holds: (children?, path).
    pub fn of(&self, client: ClientId) -> impl Iterator<Item = &(bool, String)> {
        self.held.get(&client).into_iter().flatten()
    }
}

/// Render the wait-for graph of `waiters` at the end of a run, naming cycles.
pub fn explain(waiters: &[ClientId], book: &WatchBook, end: &End, sessions: &Sessions) -> String {
    let mut graph: DiGraph<String, ()> = DiGraph::new();
    let mut index: BTreeMap<String, NodeIndex> = BTreeMap::new();
    let mut node = |graph: &mut DiGraph<String, ()>, label: String| {
        *index
            .entry(label.clone())
            .or_insert_with(|| graph.add_node(label))
    };
    let owner_label = |session: SessionId| -> String {
        match sessions.client_of(session) {
            Some(c) if end.sessions.get(c) == Some(&session) => who(c),
            Some(c) => format!("an old session {session} of {}", who(c)),
            None => format!("session {session}"),
        }
    };
    let mut text = String::from("wait-for graph (client → node it watches → owner):");
    for &waiter in waiters {
        let from = node(&mut graph, who(waiter));
        let watches: Vec<&(bool, String)> = book.of(waiter).collect();
        if watches.is_empty() {
            let _ = write!(
                text,
                "\n  {} waits but holds no watch: nothing will ever wake it",
                who(waiter)
            );
        }
        for (children, path) in watches {
            let znode = node(&mut graph, path.clone());
            graph.add_edge(from, znode, ());
            let owners: Vec<(String, SessionId)> = if *children {
                end.children_of(path).cloned().collect()
            } else {
                end.owner_of(path)
                    .map(|o| (path.clone(), o))
                    .into_iter()
                    .collect()
            };
            let what = if *children { "the children of " } else { "" };
            if owners.is_empty() {
                let _ = write!(
                    text,
                    "\n  {} watches {what}{path}, which {}: the watch can only fire if someone changes it",
                    who(waiter),
                    if *children { "has no children" } else { "does not exist" },
                );
            }
            for (child, session) in owners {
                if session == 0 {
                    let _ = write!(
                        text,
                        "\n  {} watches {what}{path}: {child} is persistent and nobody will delete it",
                        who(waiter)
                    );
                    continue;
                }
                let label = owner_label(session);
                if let Some(c) = sessions.client_of(session) {
                    let owner = node(&mut graph, who(c));
                    graph.add_edge(znode, owner, ());
                }
                let _ = write!(
                    text,
                    "\n  {} watches {what}{path}: {child} is owned by {label}",
                    who(waiter)
                );
            }
        }
    }
    let cycles: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1 || graph.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let mut names: Vec<String> = scc.iter().map(|&i| graph[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    for cycle in cycles {
        let _ = write!(text, "\n  cycle: {}", cycle.join(" ↔ "));
    }
    text
}
