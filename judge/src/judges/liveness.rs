//! `liveness`: at the end of a finished run, a waiter with nothing left to
//! wait for — a contender that does not hold, in a live session that queued
//! no newer one, whose session has no watch that can still fire (its
//! predecessor is gone and the notification already came, or it never set
//! a watch, or it watches a name that will never come back). Nothing will
//! wake it: it waits for ever.

use crate::contender;
use crate::history::Record;
use crate::run::Run;
use crate::story;
use crate::verdict::{Config, Judge, Verdict};
use crate::watches;

use super::leaks::{judged_lock, standing};

pub struct Liveness;

impl Judge for Liveness {
    fn name(&self) -> &'static str {
        "liveness"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let (lock, ever) = match judged_lock(self.name(), run, config) {
            Ok(judged) => judged,
            Err(not_judged) => return *not_judged,
        };
        let standing = standing(run, config, lock);
        let stuck: Vec<_> = standing
            .iter()
            .filter(|s| !s.holds && !s.superseded && s.live_watches.is_empty())
            .collect();
        let Some(first) = stuck.first() else {
            return Verdict::ok(
                self.name(),
                format!(
                    "{ever} contenders; no waiter was left with nothing to wait for ({} waiting at the end, each with a watch that can fire)",
                    standing.iter().filter(|s| !s.holds).count()
                ),
            )
            .figure("contenders", ever)
            .figure("stuck", 0);
        };
        let c = &first.contender;
        let s = c.session();
        let now = contender::at(&run.tree, &config.rules, lock, run.tree.last_zxid);
        let mut cites = vec![c.life.created_at];
        let mut story = vec![
            format!(
                "{} queued {} at zxid {} ({}) and never got the lock",
                story::session(s),
                c.life.name(),
                c.life.created,
                story::line(run, c.life.created_at)
            ),
            format!(
                "{lock}'s contenders at the end (zxid {}): {}",
                run.tree.last_zxid,
                contender::list(&now)
            ),
        ];
        if let Some(p) = &first.waits_for {
            story.push(format!(
                "it waits behind {} ({})",
                p.life.name(),
                story::session(p.session())
            ));
        }
        // Its session's last watch on the lock, and what became of it.
        let all = watches::pending_before(run, run.records.len());
        let set = (0..run.records.len()).rev().find_map(|i| {
            let watching = matches!(run.record(i), Record::Reply { session, .. } if *session == s);
            run.request(i)
                .filter(|(_, op)| {
                    watching
                        && op.watch
                        && op
                            .path
                            .as_deref()
                            .is_some_and(|p| crate::tree::is_under(p, lock))
                })
                .map(|(_, op)| (i, op))
        });
        match set {
            Some((i, op)) => {
                cites.push(i);
                let path = op.path.clone().unwrap_or_default();
                let fired = (i..run.records.len()).find(|&n| {
                    matches!(run.record(n), Record::Notify { session, path: p, .. } if *session == s && *p == path)
                });
                story.push(match fired {
                    Some(n) => {
                        cites.push(n);
                        format!(
                            "its last watch on {lock}, {} {path} ({}), fired at {}, and it set none after",
                            op.op,
                            story::line(run, i),
                            story::line(run, n)
                        )
                    }
                    None if all.iter().any(|w| w.session == s && w.path == path) => format!(
                        "its last watch, {} {path} ({}), waits for a node that will never come back",
                        op.op,
                        story::line(run, i)
                    ),
                    None => format!(
                        "its last watch, {} {path} ({}), is gone",
                        op.op,
                        story::line(run, i)
                    ),
                });
            }
            None => story.push(format!(
                "{} never set a watch under {lock}",
                story::session(s)
            )),
        }
        if let Some(q) = first.last_request {
            cites.push(q);
            story.push(format!("its last request: {}", story::line(run, q)));
        }
        story.push(match run.last_fault() {
            Some(f) => format!("the run's last fault: {}", story::fault(run, f)),
            None => "the run had no fault".into(),
        });
        Verdict::violation(
            self.name(),
            format!(
                "{} waits for ever: {} of {lock} has nothing left to wait for",
                story::session(s),
                c.life.name()
            ),
        )
        .story(story)
        .cite(run, cites)
        .figure("contenders", ever)
        .figure("stuck", stuck.len())
    }
}
