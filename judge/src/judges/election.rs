//! Leader election (`--leader /E`), candidates being /E's children:
//!
//! - `election-safety` (with `--resource /R`): a session acts as leader
//!   when it writes the resource; it must then own the lowest candidate at
//!   z−1. A write by another session while a leader exists is two leaders
//!   acting at once (the story names both); a write while nobody leads is a
//!   session acting without being elected.
//! - `election-liveness`: after the last fault (or from the start, without
//!   faults), at some commit the lowest candidate belongs to a session
//!   still open: the group had a leader again.

use crate::contender;
use crate::history::Record;
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
