//! Leader election (`--leader /E`), candidates being /E's children:
//!
//! - `election-safety` (with `--resource /R`): a session acts as leader
//!   when it writes the resource; it must then own the lowest candidate at
//!   z−1. A write by another session while a leader exists is two leaders
//!   acting at once (the story names both); a write while nobody leads is a
//!   session acting without being elected.
//! - `election-liveness`: after the last fault (or from the start, without
//!   faults), at some commit the lowest candidate belongs to a session
//!   still open: the group had a leader again. Unless the election was
//!   over before that fault: nobody stood at it or after it, and the last
//!   candidate to leave resigned (deleted its own node, rather than going
//!   with its session). A lag healed after the last term (seen: kazoo's
//!   election under `lag=2`) leaves nobody to elect, not a leaderless
//!   group.

use crate::contender::{self, Contender};
use crate::history::{Record, TxnRecord};
use crate::run::Run;
use crate::story;
use crate::verdict::{Config, Judge, Verdict};

use super::owner;

pub struct ElectionSafety;
pub struct ElectionLiveness;

impl Judge for ElectionSafety {
    fn name(&self) -> &'static str {
        "election-safety"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let (Some(leader), Some(resource)) = (config.leader.as_deref(), config.resource.as_deref())
        else {
            return Verdict::incomplete(self.name(), "not judged: needs --leader and --resource");
        };
        let judged = owner::judge_writes(run, config, leader, resource);
        if judged.is_empty() {
            return Verdict::incomplete(
                self.name(),
                format!("nothing to judge: no session acted as leader (no write to {resource})"),
            );
        }
        let bad: Vec<_> = judged.iter().filter(|j| !j.by_owner).collect();
        let Some(j) = bad.first() else {
            return Verdict::ok(
                self.name(),
                format!(
                    "{} writes to {resource}, each by the session leading {leader}",
                    judged.len()
                ),
            )
            .figure("leader writes", judged.len());
        };
        let before = contender::at(&run.tree, &config.rules, leader, j.write.zxid - 1);
        let summary = match contender::writer(&before) {
            Some(l) => format!(
                "two leaders acting at once: {} wrote {} at zxid {} while {} led {leader}",
                story::session(j.write.session),
                j.path,
                j.write.zxid,
                story::session(l.session())
            ),
            None => format!(
                "{} acted as leader (wrote {} at zxid {}) while nobody led {leader}",
                story::session(j.write.session),
                j.path,
                j.write.zxid
            ),
        };
        let (story, cites) = owner::story_of(run, config, leader, j);
        Verdict::violation(self.name(), summary)
            .story(story)
            .cite(run, cites)
            .figure("leader writes", judged.len())
            .figure("writes by a non-leader", bad.len())
    }
}

impl Judge for ElectionLiveness {
    fn name(&self) -> &'static str {
        "election-liveness"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let Some(leader) = config.leader.as_deref() else {
            return Verdict::incomplete(self.name(), "not judged: needs --leader");
        };
        if !run.ended {
            return Verdict::cut(self.name());
        }
        if contender::ever(&run.tree, &config.rules, leader).is_empty() {
            return Verdict::incomplete(
                self.name(),
                format!("nothing to judge: {leader} never had a candidate"),
            );
        }
        let fault = run.last_fault();
        let from = fault.map_or(0, |f| f + 1);
        let elected = (from..run.records.len()).find_map(|i| {
            let Record::Commit { zxid, .. } = run.record(i) else {
                return None;
            };
            let now = contender::at(&run.tree, &config.rules, leader, *zxid);
            contender::writer(&now)
                .filter(|c| run.tree.session_open_at(c.session(), *zxid))
                .map(|c| (i, *zxid, c.session(), c.life.name().to_string()))
        });
        let after = match fault {
            Some(f) => format!("after the last fault ({})", story::fault(run, f)),
            None => "in a run without faults".to_string(),
        };
        if let (None, Some(f)) = (&elected, fault) {
            if let Some(last) = over_before(run, config, leader, f) {
                return Verdict::ok(
                    self.name(),
                    format!(
                        "the election was over before the last fault ({}): its last candidate, {} of {}, resigned at zxid {} ({}), and nobody stood after",
                        story::fault(run, f),
                        last.life.name(),
                        story::session(last.session()),
                        last.life.deleted.unwrap_or_default(),
                        story::line(run, last.life.deleted_at.unwrap_or_default())
                    ),
                );
            }
        }
        match elected {
            Some((i, zxid, s, name)) => Verdict::ok(
                self.name(),
                format!(
                    "{after}, {} led {leader} at zxid {zxid} ({}) with {name}",
                    story::session(s),
                    story::line(run, i)
                ),
            ),
            None => {
                let end = contender::at(&run.tree, &config.rules, leader, run.tree.last_zxid);
                Verdict::violation(
                    self.name(),
                    format!("no leader {after}"),
                )
                .story([
                    format!(
                        "no commit after it left a candidate of an open session lowest under {leader}"
                    ),
                    format!("{leader}'s candidates at the end: {}", contender::list(&end)),
                ])
                .cite(run, fault)
            }
        }
    }
}

/// The candidate whose resignation ended the election before fault `f`, if
/// it was over: no candidate of an open session stood at `f`, none was
/// created after it, and the last to leave deleted its own node (not gone
/// with its session's close or expiry, which liveness must still judge).
fn over_before<'t>(run: &'t Run, config: &Config, leader: &str, f: usize) -> Option<Contender<'t>> {
    let at = run.zxid_before(f);
    let ever = contender::ever(&run.tree, &config.rules, leader);
    let standing = ever.iter().any(|c| {
        c.life.created > at || (c.life.exists_at(at) && run.tree.session_open_at(c.session(), at))
    });
    if standing {
        return None;
    }
    let last = ever
        .into_iter()
        .filter(|c| c.life.deleted.is_some_and(|d| d <= at))
        .max_by_key(|c| c.life.deleted)?;
    let Record::Commit { txn, .. } = run.record(last.life.deleted_at?) else {
        return None;
    };
    let resigned = !matches!(txn, TxnRecord::CloseSession { .. })
        && last.life.deleted_by == Some(last.session());
    resigned.then_some(last)
}
