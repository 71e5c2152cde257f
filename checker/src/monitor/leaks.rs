//! `leaks`: once every client has finished and closed its session, no
//! recipe znode is left under the scenario's root (the root itself may stay).
//!
//! The classic leak is the orphaned sequential node: a create whose reply
//! was lost to a connection drop succeeded anyway, and the client, not
//! knowing its name, made another. Ephemerals go with their session, so a
//! leak that survives every session's end is a persistent node, or an
//! ephemeral of a session that is somehow still alive. Runs that end before
//! every client is done and closed are not judged.

use std::collections::BTreeSet;

use zksim::{Happening, SessionId};

use super::view::{is_under, who, End, Measured, Sessions, View};
use super::{Monitor, Property, Sim, StepLog, Violation};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeakMonitor {
    root: String,
    ended: BTreeSet<SessionId>,
    sessions: Sessions,
    leaked: Measured<u64>,
}

impl LeakMonitor {
    pub fn new(root: &str) -> Self {
        LeakMonitor {
            root: root.to_string(),
            ended: BTreeSet::new(),
            sessions: Sessions::default(),
            leaked: Measured(0),
        }
    }
    pub fn leaked(&self) -> u64 {
        self.leaked.0
    }

    pub fn on_step(&mut self, view: &impl View, step: &StepLog) {
        self.sessions.refresh(view);
        for happening in step {
            if let Happening::SessionEnded { session, .. } = happening {
                self.ended.insert(*session);
            }
        }
    }

    pub fn on_finish(&mut self, end: &End) -> Result<(), Violation> {
        let all_closed =
            end.done.iter().all(|&d| d) && end.sessions.iter().all(|s| self.ended.contains(s));
        if !all_closed {
            return Ok(());
        }
        let leaks: Vec<String> = end
            .nodes
            .iter()
            .filter(|(path, _)| is_under(path, &self.root))
            .map(|(path, owner)| match *owner {
                0 => format!("{path} (persistent)"),
                s => match self.sessions.client_of(s) {
                    Some(c) => format!("{path} (ephemeral of {}'s session {s:#x})", who(c)),
                    None => format!("{path} (ephemeral of session {s:#x})"),
                },
            })
            .collect();
        self.leaked.0 = leaks.len() as u64;
        if leaks.is_empty() {
            return Ok(());
        }
        Err(Violation {
            property: Property::NoLeaks,
            explanation: format!(
                "every client finished and closed its session, yet {} recipe node{} remain{} under {}: {}",
                leaks.len(),
                if leaks.len() == 1 { "" } else { "s" },
                if leaks.len() == 1 { "s" } else { "" },
                self.root,
                leaks.join(", "),
            ),
        })
    }
}

impl<C: zksim::Client<Event = zkrecipes::AppEvent>> Monitor<C> for LeakMonitor {
    fn observe(&mut self, world: &Sim<C>, step: &StepLog) -> Result<(), Violation> {
        self.on_step(world, step);
        Ok(())
    }
    fn finish(&mut self, world: &Sim<C>) -> Result<(), Violation> {
        self.on_finish(&End::of(world))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    fn end(nodes: &[(&str, SessionId)]) -> End {
        End {
            quiescent: true,
            progress_possible: false,
            done: vec![true, true],
            sessions: vec![1000, 1001],
            nodes: nodes.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            crashed: Vec::new(),
        }
    }

    #[test]
    fn a_clean_root_passes_and_unclosed_runs_are_not_judged() {
        let mut m = LeakMonitor::new("/lock");
        m.on_step(&FakeView::new(2), &[ended(1000, false)]);
        // Client 1 has not closed: not judged even with a node left.
        assert_eq!(m.on_finish(&end(&[("/lock", 0), ("/lock/x", 0)])), Ok(()));
        m.on_step(&FakeView::new(2), &[ended(1001, false)]);
        assert_eq!(
            m.on_finish(&end(&[("/", 0), ("/lock", 0), ("/locks", 0)])),
            Ok(())
        );
    }

    #[test]
    fn leftover_nodes_are_named_with_their_owners() {
        let mut m = LeakMonitor::new("/lock");
        m.on_step(&FakeView::new(2), &[ended(1000, false), ended(1001, false)]);
        let err = m
            .on_finish(&end(&[
                ("/lock", 0),
                ("/lock/n-0000000003", 1001),
                ("/lock/n-0000000004", 0),
            ]))
            .unwrap_err();
        assert_eq!(err.property, Property::NoLeaks);
        assert!(
            err.explanation
                .contains("/lock/n-0000000003 (ephemeral of client 1's session 0x3e9)"),
            "{}",
            err.explanation
        );
        assert!(err.explanation.contains("/lock/n-0000000004 (persistent)"));
        assert_eq!(m.leaked(), 2);
    }
}
