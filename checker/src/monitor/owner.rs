//! `owner`: whenever a client believes it holds (a lock, a read or write
//! lock, leadership), the node that grants the belief exists in the leader's
//! tree and is an ephemeral of the client's *current, live* session.
//!
//! This is the check that tells a session bug from bad luck. Belief-level
//! [`super::mutex`] only fails when a second holder happens to overlap; a
//! recipe that adopts a node of a session that has ended, or keeps holding
//! after its own session expired, is wrong at once, whoever else is around.
//!
//! **Which node grants the belief.** A lock's `Acquired { fence }` names it:
//! the fence is the czxid of the granting node, which is looked up among the
//! children of the scenario's root in the leader's tree when the belief
//! starts. A leader names its epoch the same way, with the
//! `ResourceWrite { fence }` it makes in the step it is `Elected` (a
//! leader-only resource, see [`super::fenced`]). A leader that names no epoch
//! (a port that has no fence) is held to the weaker rule that its current
//! session is live.
//!
//! **When.** After every step, for every client that believes (a crashed
//! client believes nothing). A holder that learns `Disconnected` gives up
//! before the leader can expire its session (the leader waits the whole
//! timeout, the client only its read timeout), so a correct recipe keeps
//! this property under drops, expiries by silence and short pauses; a pause
//! longer than the session timeout, or a session killed by the ensemble
//! while its client is connected, breaks it for any recipe (as it breaks
//! `mutex`): `fenced-mutex` is what still holds there.

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening, SessionId, Tick, Zxid};

use super::view::{who, View};
use super::{Monitor, Property, StepLog, Violation};

/// What a client believes it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Belief {
    Lock { shared: bool },
    Leadership,
}

impl Belief {
    fn words(self) -> &'static str {
        match self {
            Belief::Lock { shared: false } => "the lock",
            Belief::Lock { shared: true } => "the read lock",
            Belief::Leadership => "leadership",
        }
    }
}

/// The node a belief rests on, as far as it is known.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Grant {
    /// No fence named (a leader without an epoch): some node of the
    /// client's session under the root must do.
    Unnamed,
    /// The fence is known but its node was not found under the root when
    /// the belief started.
    Missing { fence: i64 },
    /// The granting node.
    Node { path: String, fence: i64 },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Hold {
    belief: Belief,
    grant: Grant,
    since: Tick,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
/// The `owner` property: a client that believes it holds does so through a node
/// of its own current, live session (a holder whose node is gone or belongs to
/// an old session holds nothing).
pub struct OwnerMonitor {
    root: String,
    holds: BTreeMap<ClientId, Hold>,
    /// The view's [`View::leader_version`] when the holds were last judged
    /// (and held). A judgement reads only the holds, the leader's tree and
    /// the sessions, so while neither the holds nor that version move
    /// there is nothing new to judge. Part of the identity: after every
    /// step it is the world's own version (a function of the world), so it
    /// splits no states, and a set pooled from another world with the same
    /// holds carries that world's version, not this one's.
    judged: Option<(Zxid, SessionId)>,
}

impl OwnerMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        let hold = |h: &Hold| Hold {
            grant: match &h.grant {
                Grant::Node { path, fence } => Grant::Node {
                    path: r.text(path),
                    fence: *fence,
                },
                other => other.clone(),
            },
            ..h.clone()
        };
        OwnerMonitor {
            root: r.text(&self.root),
            holds: self
                .holds
                .iter()
                .map(|(&c, h)| (r.client(c), hold(h)))
                .collect(),
            // Zxids and the session counter are not renamed.
            judged: self.judged,
        }
    }

    /// A monitor of the holds under the recipe's root node `root`.
    pub fn new(root: &str) -> Self {
        OwnerMonitor {
            root: root.trim_end_matches('/').to_string(),
            holds: BTreeMap::new(),
            judged: None,
        }
    }

    fn grant_of(&self, view: &(impl View + ?Sized), fence: i64) -> Grant {
        match view.child_by_czxid(&self.root, fence) {
            Some(path) => Grant::Node { path, fence },
            None => Grant::Missing { fence },
        }
    }

    /// Every believer's grant, against the leader's tree after the step.
    fn judge(&self, view: &(impl View + ?Sized)) -> Result<(), Violation> {
        for (&client, hold) in &self.holds {
            let session = view.session_of(client);
            if let Some(why) = self.wrong(view, session, hold) {
                return Err(Violation {
                    property: Property::Owner,
                    explanation: format!(
                        "at tick {} {} believed it held {} (since tick {}), but {why}",
                        view.now(),
                        who(client),
                        hold.belief.words(),
                        hold.since,
                    ),
                });
            }
        }
        Ok(())
    }

    /// Why the hold is not backed by the client's live session, if it is not.
    fn wrong(
        &self,
        view: &(impl View + ?Sized),
        session: SessionId,
        hold: &Hold,
    ) -> Option<String> {
        let live = view.is_session_live(session);
        let (path, fence) = match &hold.grant {
            Grant::Missing { fence } => {
                return Some(format!(
                    "no node under {} has czxid {fence} (the fence it acquired with): it \
                     believed on a node that was already gone",
                    self.root
                ))
            }
            Grant::Unnamed => {
                return (!live).then(|| {
                    format!("its session {session:#x} has ended: nothing it owns is left")
                });
            }
            Grant::Node { path, fence } => (path, *fence),
        };
        let Some(node) = view.node(path).filter(|n| n.czxid == fence) else {
            return Some(format!(
                "the node that granted it, {path} (czxid {fence}), is gone from the leader's tree{}",
                if live {
                    String::new()
                } else {
                    format!(" and its session {session:#x} has ended")
                }
            ));
        };
        if node.owner != session {
            return Some(format!(
                "the node that grants it, {path}, belongs to session {:#x}, not to its current \
                 session {session:#x}: it holds through a node it does not own",
                node.owner
            ));
        }
        (!live).then(|| {
            format!("its session {session:#x}, which owns the granting node {path}, has ended")
        })
    }
}

impl Monitor for OwnerMonitor {
    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        // A new or renamed belief must be judged; an ended one cannot
        // break the rule.
        let mut believed = false;
        for happening in step {
            let Happening::App { client, event } = happening else {
                continue;
            };
            match *event {
                AppEvent::Acquired { fence, shared } => {
                    believed = true;
                    let hold = Hold {
                        belief: Belief::Lock { shared },
                        grant: self.grant_of(view, fence),
                        since: view.now(),
                    };
                    self.holds.insert(*client, hold);
                }
                AppEvent::Elected => {
                    believed = true;
                    let hold = Hold {
                        belief: Belief::Leadership,
                        grant: Grant::Unnamed,
                        since: view.now(),
                    };
                    self.holds.insert(*client, hold);
                }
                // A new leader's first write names its epoch (a lock
                // holder's writes name the node it already knows).
                AppEvent::ResourceWrite { fence }
                    if self.holds.get(client).map(|h| &h.grant) == Some(&Grant::Unnamed) =>
                {
                    believed = true;
                    let grant = self.grant_of(view, fence);
                    if let Some(hold) = self.holds.get_mut(client) {
                        hold.grant = grant;
                    }
                }
                AppEvent::Released | AppEvent::LostLock | AppEvent::Abdicated => {
                    self.holds.remove(client);
                }
                _ => {}
            }
        }
        // A crash only ends beliefs: nothing to judge anew for it.
        if self.holds.keys().any(|&c| view.is_crashed(c)) {
            self.holds.retain(|&c, _| !view.is_crashed(c));
        }
        let version = view.leader_version();
        if !believed && version.is_some() && version == self.judged {
            return Ok(());
        }
        // Only a judgement that held may be skipped next time: a broken
        // one is reported again at every step, as it was before.
        let verdict = self.judge(view);
        self.judged = version.filter(|_| verdict.is_ok());
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    fn view(nodes: &[(&str, i64, SessionId)]) -> FakeView {
        let mut v = FakeView::new(2);
        v.nodes = nodes
            .iter()
            .map(|&(p, c, s)| (p.to_string(), c, s))
            .collect();
        v
    }

    #[test]
    fn a_holder_on_its_own_live_node_passes() {
        let mut m = OwnerMonitor::new("/lock");
        let v = view(&[("/lock", 1, 0), ("/lock/n-1", 7, 1000)]);
        assert_eq!(m.observe(&v, &[acq(0, 7), write(0, 7)]), Ok(()));
        assert_eq!(m.observe(&v, &[]), Ok(()));
        // Released: the node may go.
        assert_eq!(m.observe(&view(&[("/lock", 1, 0)]), &[rel(0)]), Ok(()));
    }

    #[test]
    fn a_holder_whose_node_went_is_caught() {
        let mut m = OwnerMonitor::new("/lock");
        let v = view(&[("/lock", 1, 0), ("/lock/n-1", 7, 1000)]);
        assert_eq!(m.observe(&v, &[acq(0, 7)]), Ok(()));
        let mut gone = view(&[("/lock", 1, 0)]);
        gone.ended.push(1000);
        let err = m.observe(&gone, &[ended(1000, true)]).unwrap_err();
        assert_eq!(err.property, Property::Owner);
        assert!(
            err.explanation
                .contains("client 0 believed it held the lock (since tick 0)"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("/lock/n-1 (czxid 7), is gone")
                && err.explanation.contains("session 0x3e8 has ended"),
            "{}",
            err.explanation
        );
    }

    #[test]
    fn adopting_another_sessions_node_is_caught() {
        let mut m = OwnerMonitor::new("/lock");
        // Client 0 is in session 1000; the node it acquired through is 1001's.
        let v = view(&[("/lock", 1, 0), ("/lock/n-1", 7, 1001)]);
        let err = m.observe(&v, &[acq(0, 7)]).unwrap_err();
        assert!(
            err.explanation
                .contains("belongs to session 0x3e9, not to its current session 0x3e8"),
            "{}",
            err.explanation
        );
        // A fence that names no node at all.
        let mut m = OwnerMonitor::new("/lock");
        let err = m.observe(&v, &[acq(1, 99)]).unwrap_err();
        assert!(
            err.explanation.contains("no node under /lock has czxid 99"),
            "{}",
            err.explanation
        );
    }

    #[test]
    fn a_leader_is_held_to_its_epoch_node() {
        let mut m = OwnerMonitor::new("/lock");
        let v = view(&[("/lock", 1, 0), ("/lock/n-1", 7, 1001)]);
        assert_eq!(m.observe(&v, &[elected(1), write(1, 7)]), Ok(()));
        let mut gone = view(&[("/lock", 1, 0)]);
        gone.ended.push(1001);
        let err = m.observe(&gone, &[]).unwrap_err();
        assert!(
            err.explanation.contains("believed it held leadership"),
            "{}",
            err.explanation
        );
        // Abdicating ends the belief; a crashed client believes nothing.
        let mut m = OwnerMonitor::new("/lock");
        assert_eq!(
            m.observe(&v, &[elected(1), write(1, 7), abdicated(1)]),
            Ok(())
        );
        assert_eq!(m.observe(&gone, &[]), Ok(()));
        let mut m = OwnerMonitor::new("/lock");
        assert_eq!(m.observe(&v, &[acq(1, 7)]), Ok(()));
        gone.crashed.push(1);
        assert_eq!(m.observe(&gone, &[]), Ok(()));
    }

    #[test]
    fn a_leader_without_an_epoch_needs_a_live_session() {
        let mut m = OwnerMonitor::new("/lock");
        let mut v = view(&[("/lock", 1, 0)]);
        assert_eq!(m.observe(&v, &[elected(0)]), Ok(()));
        v.ended.push(1000);
        let err = m.observe(&v, &[]).unwrap_err();
        assert!(
            err.explanation.contains("session 0x3e8 has ended"),
            "{}",
            err.explanation
        );
    }
}
