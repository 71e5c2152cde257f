//! `queue` (`--queue /Q --resource /R`): every item taken from the queue is
//! reported consumed exactly once.
//!
//! Items are /Q's children; an item's identity is its data (what kazoo's
//! and Curator's queues hand a consumer). The app's convention: a consumer
//! that took an item whose data is `D` creates `/R/D`. A second report of
//! the same item is a create of `/R/D` again (answered `NodeExists`, or
//! committed after a delete). Judged:
//! - lost: an item deleted from /Q (taken) whose data was never reported,
//!   at the end of a finished run;
//! - duplicated: data reported twice;
//! - reported without having been queued.

use std::collections::BTreeMap;

use crate::history::{Record, TxnRecord};
use crate::run::Run;
use crate::story;
use crate::tree::{self, Life};
use crate::verdict::{Config, Judge, Verdict};

pub struct Queue;

/// ZooKeeper's `NodeExists`.
const NODE_EXISTS: i32 = -110;

/// Every report of consumption: data → record indices (a committed create
/// of `/R/data`, or a create of it answered `NodeExists`).
pub fn reports(run: &Run, resource: &str) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, r)) in run.records.iter().enumerate() {
        match r {
            Record::Commit { txn, .. } => {
                for leaf in tree::applied_leaves(txn) {
                    if let TxnRecord::Create { path, .. } = leaf {
                        if tree::parent_of(path) == resource {
                            out.entry(tree::name_of(path).to_string())
                                .or_default()
                                .push(i);
                        }
                    }
                }
            }
            Record::Reply {
                err: NODE_EXISTS, ..
            } => {
                if let Some((_, op)) = run.request(i) {
                    if op.op.starts_with("create") {
                        if let Some(path) = op
                            .path
                            .as_deref()
                            .filter(|p| tree::parent_of(p) == resource)
                        {
                            out.entry(tree::name_of(path).to_string())
                                .or_default()
                                .push(i);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The data of an item, from its creating commit.
fn data_of<'r>(run: &'r Run, life: &Life) -> &'r str {
    match run.record(life.created_at) {
        Record::Commit { txn, .. } => tree::applied_leaves(txn)
            .into_iter()
            .find_map(|t| match t {
                TxnRecord::Create { path, data, .. } if *path == life.path => Some(data.as_str()),
                _ => None,
            })
            .unwrap_or(""),
        _ => "",
    }
}

impl Judge for Queue {
    fn name(&self) -> &'static str {
        "queue"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let (Some(queue), Some(resource)) = (config.queue.as_deref(), config.resource.as_deref())
        else {
            return Verdict::incomplete(self.name(), "not judged: needs --queue and --resource");
        };
        let items = run.tree.children_ever(queue);
        if items.is_empty() {
            return Verdict::incomplete(
                self.name(),
                format!("nothing to judge: nothing was ever queued under {queue}"),
            );
        }
        let reports = reports(run, resource);
        let queued: BTreeMap<&str, &Life> = items.iter().map(|l| (data_of(run, l), *l)).collect();
        let taken: Vec<&&Life> = items.iter().filter(|l| l.deleted.is_some()).collect();
        let figures = |v: Verdict| {
            v.figure("queued", items.len())
                .figure("taken", taken.len())
                .figure("reported", reports.values().map(Vec::len).sum::<usize>())
        };
        if let Some((data, at)) = reports.iter().find(|(_, at)| at.len() > 1) {
            let item = queued.get(data.as_str());
            let mut story = vec![format!(
                "{resource}/{data} was reported at {} and again at {}",
                story::line(run, at[0]),
                story::line(run, at[1])
            )];
            if let Some(l) = item {
                story.push(format!(
                    "the item was {} (queued at zxid {}, {}{})",
                    l.path,
                    l.created,
                    story::line(run, l.created_at),
                    l.deleted_at
                        .map(|d| format!(
                            "; taken by {} at {}",
                            story::session(l.deleted_by.unwrap_or(0)),
                            story::line(run, d)
                        ))
                        .unwrap_or_default()
                ));
            }
            story.push(story::fault_clause(run, at[1]));
            return figures(
                Verdict::violation(
                    self.name(),
                    format!("item {data:?} was consumed {} times", at.len()),
                )
                .story(story)
                .cite(run, at.iter().copied().chain(item.map(|l| l.created_at))),
            );
        }
        if let Some((data, at)) = reports
            .iter()
            .find(|(d, _)| !queued.contains_key(d.as_str()))
        {
            return figures(
                Verdict::violation(
                    self.name(),
                    format!("item {data:?} was reported consumed but never queued under {queue}"),
                )
                .story([format!(
                    "{resource}/{data} was created at {}",
                    story::line(run, at[0])
                )])
                .cite(run, at.iter().copied()),
            );
        }
        if !run.ended {
            return figures(Verdict::cut(self.name()));
        }
        if let Some(l) = taken
            .iter()
            .find(|l| !reports.contains_key(data_of(run, l)))
        {
            let data = data_of(run, l);
            let taker = l.deleted_by.unwrap_or(0);
            let mut story = vec![
                format!(
                    "{} (data {data:?}) was queued at zxid {} ({})",
                    l.path,
                    l.created,
                    story::line(run, l.created_at)
                ),
                format!(
                    "{} took it: deleted at zxid {} ({})",
                    story::session(taker),
                    l.deleted.unwrap_or(0),
                    l.deleted_at
                        .map(|d| story::line(run, d))
                        .unwrap_or_default()
                ),
                format!("nobody ever created {resource}/{data}: the item is lost"),
            ];
            if let Some(end) = story::session_end(run, taker) {
                story.push(end);
            }
            let events = story::session_events(run, taker, run.records.len(), 2);
            if !events.is_empty() {
                story.push(format!(
                    "{}'s last session events: {}",
                    story::session(taker),
                    events.join("; ")
                ));
            }
            story.push(story::fault_clause(run, l.deleted_at.unwrap_or(0) + 1));
            return figures(
                Verdict::violation(
                    self.name(),
                    format!("item {data:?} was taken from {queue} but never reported consumed"),
                )
                .story(story)
                .cite(run, [l.created_at].into_iter().chain(l.deleted_at)),
            );
        }
        if taken.is_empty() {
            return figures(Verdict::incomplete(
                self.name(),
                format!("nothing to judge: no item was ever taken from {queue}"),
            ));
        }
        figures(Verdict::ok(
            self.name(),
            format!(
                "{} items taken from {queue}, each reported consumed exactly once ({} left in the queue)",
                taken.len(),
                items.len() - taken.len()
            ),
        ))
    }
}
