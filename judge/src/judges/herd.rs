//! `herd`: each notification is charged to the transaction that fired it
//! (its zxid); a release — a transaction that deletes a child of the lock
//! path — should notify at most one session, unless all it wakes are
//! readers that hold together. A contender's creation should notify none
//! but, if it does, more than one is a herd too. Figures: notifications
//! per release (mean, max) and per creation.
//!
//! Any child's deletion is a release, contender or not: a naive lock is
//! one plain ephemeral node (`/L/lock`) that every waiter watches.
//!
//! Only sessions waiting in line count. When the lock path holds
//! sequential contenders just before the change, a woken session that
//! holds none of them is not waiting for this lock: its watch outlived its
//! place in line. Curator does this after an expiry — the interrupted
//! `getData(predecessor, watch)` of `InterProcessMutex` is retried on the
//! session that replaced the expired one, whose contender went with the
//! old session. Such wakeups are a figure, not a herd. With no sequential
//! contenders (one plain lock node), every woken session is a waiter.

use std::collections::{BTreeMap, BTreeSet};

use crate::contender::{self, Kind};
use crate::history::{Record, TxnRecord};
use crate::run::Run;
use crate::story;
use crate::tree::{self, is_under};
use crate::verdict::{Config, Judge, Verdict};

pub struct Herd;

/// A transaction that changed the lock path's children, and whom it woke.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub index: usize,
    pub zxid: i64,
    pub session: i64,
    pub deleted: Vec<String>,
    pub created: Vec<String>,
    /// (notified session, record index of the notification)
    pub woken: Vec<(i64, usize)>,
}

/// Every transaction that created or deleted a child of `lock`, with the
/// notifications it fired on `lock` or below; and the notifications under
/// `lock` that name no zxid (charged to nothing).
pub fn changes(run: &Run, lock: &str) -> (Vec<Change>, usize) {
    let mut by_zxid: BTreeMap<i64, Change> = BTreeMap::new();
    for (i, (_, r)) in run.records.iter().enumerate() {
        let Record::Commit {
            zxid, session, txn, ..
        } = r
        else {
            continue;
        };
        let mut change = Change {
            index: i,
            zxid: *zxid,
            session: *session,
            ..Change::default()
        };
        for leaf in tree::applied_leaves(txn) {
            match leaf {
                TxnRecord::Create { path, .. } if tree::parent_of(path) == lock => {
                    change.created.push(path.clone())
                }
                TxnRecord::Delete { path } if tree::parent_of(path) == lock => {
                    change.deleted.push(path.clone())
                }
                TxnRecord::CloseSession { ephemerals, .. } => change.deleted.extend(
                    ephemerals
                        .iter()
                        .filter(|p| tree::parent_of(p) == lock)
                        .cloned(),
                ),
                _ => {}
            }
        }
        if !change.created.is_empty() || !change.deleted.is_empty() {
            by_zxid.insert(*zxid, change);
        }
    }
    let mut uncharged = 0;
    for (i, (_, r)) in run.records.iter().enumerate() {
        let Record::Notify {
            session,
            path,
            zxid,
            ..
        } = r
        else {
            continue;
        };
        if !is_under(path, lock) {
            continue;
        }
        match zxid.and_then(|z| by_zxid.get_mut(&z)) {
            Some(change) => change.woken.push((*session, i)),
            None => uncharged += 1,
        }
    }
    (by_zxid.into_values().collect(), uncharged)
}

/// The sessions `change` woke that wait in line for the lock (see the
/// module's doc): all of them when the lock path had no sequential
/// contender just before the change, else those holding one.
fn in_line(run: &Run, config: &Config, lock: &str, change: &Change) -> BTreeSet<i64> {
    let woken = change.woken.iter().map(|(s, _)| *s);
    let before = contender::at(&run.tree, &config.rules, lock, change.zxid - 1);
    if !before.iter().any(|k| k.is_sequential()) {
        return woken.collect();
    }
    woken
        .filter(|s| before.iter().any(|k| k.session() == *s))
        .collect()
}

/// The record of the first notification to a session in `woken`.
fn first_woken(change: &Change, woken: &BTreeSet<i64>) -> usize {
    change
        .woken
        .iter()
        .find(|(s, _)| woken.contains(s))
        .map_or(change.index, |(_, i)| *i)
}

fn mean_max(counts: &[usize]) -> (String, usize) {
    let total: usize = counts.iter().sum();
    let mean = if counts.is_empty() {
        0.0
    } else {
        total as f64 / counts.len() as f64
    };
    (
        format!("{mean:.2}"),
        counts.iter().copied().max().unwrap_or(0),
    )
}

impl Judge for Herd {
    fn name(&self) -> &'static str {
        "herd"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let Some(lock) = config.lock.as_deref() else {
            return Verdict::incomplete(self.name(), "not judged: needs --lock");
        };
        let (changes, uncharged) = changes(run, lock);
        let releases: Vec<&Change> = changes.iter().filter(|c| !c.deleted.is_empty()).collect();
        let creations: Vec<&Change> = changes
            .iter()
            .filter(|c| c.deleted.is_empty() && !c.created.is_empty())
            .collect();
        if releases.is_empty() {
            return Verdict::incomplete(
                self.name(),
                format!("nothing to judge: no child of {lock} was ever deleted"),
            );
        }
        let per_release: Vec<usize> = releases.iter().map(|c| c.woken.len()).collect();
        let per_creation: Vec<usize> = creations.iter().map(|c| c.woken.len()).collect();
        let (mean, max) = mean_max(&per_release);
        let (cmean, cmax) = mean_max(&per_creation);
        // Each change's waiting sessions, once: the herd test, the story
        // and the stale-wakeup figure all read them.
        let waiting: Vec<BTreeSet<i64>> = changes
            .iter()
            .map(|c| in_line(run, config, lock, c))
            .collect();
        let stale: usize = changes
            .iter()
            .zip(&waiting)
            .map(|(c, w)| {
                let woken: BTreeSet<i64> = c.woken.iter().map(|(s, _)| *s).collect();
                woken.difference(w).count()
            })
            .sum();
        let herd = changes.iter().zip(&waiting).find(|(c, woken)| {
            if woken.len() <= 1 {
                return false;
            }
            // Readers woken together share the lock: not a herd.
            let now = contender::at(&run.tree, &config.rules, lock, c.zxid);
            !woken.iter().all(|s| {
                now.iter()
                    .any(|k| k.session() == *s && k.kind == Kind::Shared)
            })
        });
        let v = match herd {
            None => Verdict::ok(
                self.name(),
                format!(
                    "{} releases, each notified at most one waiter (or readers together)",
                    releases.len()
                ),
            ),
            Some((c, woken)) => {
                let names: Vec<String> = woken.iter().take(6).map(|s| format!("{s:#x}")).collect();
                let what = if c.deleted.is_empty() {
                    format!("created {}", c.created.join(", "))
                } else {
                    format!("deleted {}", c.deleted.join(", "))
                };
                let before = contender::at(&run.tree, &config.rules, lock, c.zxid - 1);
                Verdict::violation(
                    self.name(),
                    format!(
                        "one change of {lock} at zxid {} woke {} sessions",
                        c.zxid,
                        woken.len()
                    ),
                )
                .story([
                    format!(
                        "{} {what} at zxid {} ({})",
                        story::session(c.session),
                        c.zxid,
                        story::line(run, c.index)
                    ),
                    format!(
                        "{lock}'s contenders just before: {}",
                        contender::list(&before)
                    ),
                    format!(
                        "it fired {} notifications to {} waiting sessions ({}{}; the first at {}): at most one of them can take the lock next, the others wake only to watch again",
                        c.woken.iter().filter(|(s, _)| woken.contains(s)).count(),
                        woken.len(),
                        names.join(", "),
                        if woken.len() > 6 { ", …" } else { "" },
                        story::line(run, first_woken(c, woken))
                    ),
                ])
                .cite(
                    run,
                    std::iter::once(c.index).chain(
                        c.woken
                            .iter()
                            .filter(|(s, _)| woken.contains(s))
                            .map(|(_, i)| *i)
                            .take(6),
                    ),
                )
            }
        };
        v.figure("releases", releases.len())
            .figure("notifications per release (mean)", mean)
            .figure("notifications per release (max)", max)
            .figure("contender creations", creations.len())
            .figure("notifications per creation (mean)", cmean)
            .figure("notifications per creation (max)", cmax)
            .figure("notifications charged to no zxid", uncharged)
            .figure("woken sessions holding no contender", stale)
    }
}
