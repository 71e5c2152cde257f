//! `owner-writes` and `owner-writes-fenced`: a write to the resource
//! (`--resource /R`: a create, delete or setData of /R or below) by session
//! S at zxid z requires S to own the lowest contender under the lock path
//! (`--lock /L`) at z−1, the leader's state just before the write.
//!
//! A write by a non-owner is *fenced* when ZooKeeper itself would have
//! refused it had the lock moved on: a `check` of S's own contender in the
//! same multi, or an expected version (not −1) that S read from a reply
//! while it held the lock. `owner-writes` counts every non-owner write;
//! `owner-writes-fenced` reports fenced ones apart ("fenced, harmless") and
//! only unfenced ones as violations.

use crate::contender::{self, Contender};
use crate::history::{Record, TxnRecord};
use crate::run::Run;
use crate::story;
use crate::tree::{self, is_under, Write};
use crate::verdict::{Config, Judge, Verdict};

/// `owner-writes`: every write to /R by the lock's owner.
pub struct OwnerWrites;
/// `owner-writes-fenced`: every write to /R by the owner, or fenced.
pub struct OwnerWritesFenced;

/// How a non-owner write was guarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fence {
    /// A `check` of the writer's own contender in the same multi.
    Check(String),
    /// The expected version, and the record index of the reply in which
    /// the writer read it while holding.
    Version(i32, usize),
}

/// One write to the resource, judged.
#[derive(Clone, Debug)]
pub struct Judged<'r> {
    pub write: Write<'r>,
    pub path: &'r str,
    /// Whether the writer owned the lock at z−1.
    pub by_owner: bool,
    pub fence: Option<Fence>,
}

/// Every write to `resource`, judged against `lock`.
pub fn judge_writes<'r>(
    run: &'r Run,
    config: &Config,
    lock: &str,
    resource: &str,
) -> Vec<Judged<'r>> {
    tree::writes(&run.records)
        .into_iter()
        .filter_map(|w| {
            let path = tree::write_path(w.txn)?;
            if !is_under(path, resource) {
                return None;
            }
            let before = contender::at(&run.tree, &config.rules, lock, w.zxid - 1);
            let by_owner = contender::writer(&before).is_some_and(|c| c.session() == w.session);
            let fence = if by_owner {
                None
            } else {
                fence_of(run, config, lock, &w, path)
            };
            Some(Judged {
                path,
                by_owner,
                fence,
                write: w,
            })
        })
        .collect()
}

fn fence_of(run: &Run, config: &Config, lock: &str, w: &Write<'_>, path: &str) -> Option<Fence> {
    for sibling in w.siblings {
        if let TxnRecord::Check { path: checked } = sibling {
            let own = run
                .tree
                .node_at(checked, w.zxid - 1)
                .filter(|_| tree::parent_of(checked) == lock)
                .and_then(|life| contender::contender(&config.rules, life))
                .is_some_and(|c| c.session() == w.session);
            if own {
                return Some(Fence::Check(checked.clone()));
            }
        }
    }
    // The expected version of this write, from its request.
    let (_, op) = run.request_before(w.index, w.session, w.xid?)?;
    let version = if op.op == "multi" {
        op.ops
            .iter()
            .find(|o| o.path.as_deref() == Some(path) && o.op != "check")
            .and_then(|o| o.version)
    } else {
        op.version
    }?;
    if version == -1 || !matches!(w.txn, TxnRecord::SetData { .. } | TxnRecord::Delete { .. }) {
        return None;
    }
    // A reply to the writer that showed it this version while it held.
    (0..w.index).rev().find_map(|i| {
        let Record::Reply {
            session,
            zxid,
            err: 0,
            result,
            ..
        } = run.record(i)
        else {
            return None;
        };
        if *session != w.session || result.stat.is_none_or(|s| s.version != version) {
            return None;
        }
        let (_, read) = run.request(i)?;
        if read.path.as_deref() != Some(path) {
            return None;
        }
        let then = contender::at(&run.tree, &config.rules, lock, *zxid);
        contender::writer(&then)
            .is_some_and(|c| c.session() == w.session)
            .then_some(Fence::Version(version, i))
    })
}

fn op_name(txn: &TxnRecord) -> &'static str {
    match txn {
        TxnRecord::Create { .. } => "create",
        TxnRecord::Delete { .. } => "delete",
        TxnRecord::SetData { .. } => "setData",
        _ => "write",
    }
}

/// The story of a non-owner write: who wrote what when, /L's contenders
/// just before, where the writer stood, how its session fared, the fault.
pub fn story_of(
    run: &Run,
    config: &Config,
    lock: &str,
    j: &Judged<'_>,
) -> (Vec<String>, Vec<usize>) {
    let w = &j.write;
    let s = w.session;
    let before = contender::at(&run.tree, &config.rules, lock, w.zxid - 1);
    let mut cites = vec![w.index];
    let mut lines = vec![format!(
        "{} wrote {} ({}{}) at zxid {} ({})",
        story::session(s),
        j.path,
        op_name(w.txn),
        if w.siblings.is_empty() {
            ""
        } else {
            " in a multi"
        },
        w.zxid,
        story::line(run, w.index)
    )];
    lines.push(format!(
        "{lock}'s contenders at zxid {} (just before), lowest first: {}",
        w.zxid - 1,
        contender::list(&before)
    ));
    match contender::writer(&before) {
        Some(owner) => {
            cites.push(owner.life.created_at);
            lines.push(format!(
                "the lock was {}'s: {} (created at zxid {}, {})",
                story::session(owner.session()),
                owner.life.name(),
                owner.life.created,
                story::line(run, owner.life.created_at)
            ));
        }
        None if before.is_empty() => lines.push(format!("nobody held {lock}: it had no contender")),
        None => lines.push(format!(
            "nobody held {lock} for writing: its lowest contender is a reader"
        )),
    }
    let mine: Vec<&Contender<'_>> = before.iter().filter(|c| c.session() == s).collect();
    if let Some(c) = mine.first() {
        let place = before
            .iter()
            .position(|o| o.life.path == c.life.path)
            .unwrap_or(0);
        lines.push(format!(
            "{}'s own contender {} was number {} in line: it had not been granted the lock",
            story::session(s),
            c.life.name(),
            place + 1
        ));
    } else {
        let last = contender::ever(&run.tree, &config.rules, lock)
            .into_iter()
            .rfind(|c| c.session() == s && c.life.created < w.zxid);
        match last {
            Some(c) => {
                cites.extend(c.life.deleted_at);
                lines.push(format!(
                    "{} had no contender under {lock} then: its last, {}, was deleted at zxid {}{}",
                    story::session(s),
                    c.life.name(),
                    c.life.deleted.unwrap_or(0),
                    c.life
                        .deleted_at
                        .map(|i| format!(" ({})", story::line(run, i)))
                        .unwrap_or_default()
                ));
            }
            None => lines.push(format!(
                "{} never had a contender under {lock}",
                story::session(s)
            )),
        }
    }
    // The last expiry before the write that took a contender with it:
    // the usual way a lock changes hands under a client that did not notice.
    let expiry = contender::ever(&run.tree, &config.rules, lock)
        .into_iter()
        .filter_map(|c| {
            let (zxid, index, expired) = run.tree.sessions.get(&c.session())?.ended?;
            (expired && zxid < w.zxid && c.life.deleted == Some(zxid)).then_some((
                zxid,
                index,
                c.session(),
                c.life.name().to_string(),
            ))
        })
        .max();
    if let Some((zxid, index, other, name)) = expiry {
        cites.push(index);
        lines.push(format!(
            "the last expiry before it: {} expired at zxid {zxid} ({}), taking its contender {name} with it",
            story::session(other),
            story::line(run, index)
        ));
    }
    let events = story::session_events(run, s, w.index, 2);
    if !events.is_empty() {
        lines.push(format!(
            "{}'s session events before it, newest first: {}",
            story::session(s),
            events.join("; ")
        ));
    }
    if let Some(f) = run.fault_before(w.index) {
        cites.push(f);
    }
    lines.push(story::fault_clause(run, w.index));
    match &j.fence {
        Some(Fence::Check(p)) => lines.push(format!(
            "the write was fenced by a check of {p} in the same multi: ZooKeeper would have refused it had that contender gone"
        )),
        Some(Fence::Version(v, at)) => {
            cites.push(*at);
            lines.push(format!(
                "the write was fenced by expected version {v}, which {} read while it held the lock ({}): ZooKeeper would have refused it had anyone written since",
                story::session(s),
                story::line(run, *at)
            ))
        }
        None => {}
    }
    (lines, cites)
}

fn paths(config: &Config) -> Option<(&str, &str)> {
    Some((config.lock.as_deref()?, config.resource.as_deref()?))
}

fn verdict(name: &'static str, run: &Run, config: &Config, fenced_ok: bool) -> Verdict {
    let Some((lock, resource)) = paths(config) else {
        return Verdict::incomplete(name, "not judged: needs --lock and --resource");
    };
    let judged = judge_writes(run, config, lock, resource);
    if judged.is_empty() {
        return Verdict::incomplete(
            name,
            format!("nothing to judge: no committed write to {resource} or below in the history"),
        );
    }
    let by_owner = judged.iter().filter(|j| j.by_owner).count();
    let fenced: Vec<&Judged<'_>> = judged
        .iter()
        .filter(|j| !j.by_owner && j.fence.is_some())
        .collect();
    let unfenced = judged
        .iter()
        .filter(|j| !j.by_owner && j.fence.is_none())
        .count();
    let bad = judged
        .iter()
        .find(|j| !j.by_owner && (!fenced_ok || j.fence.is_none()));
    let mut v = match bad {
        None => Verdict::ok(
            name,
            format!(
                "all {} writes to {resource} were made by the owner of {lock}{}",
                judged.len(),
                if fenced.is_empty() {
                    String::new()
                } else {
                    format!(" or fenced ({} fenced, harmless)", fenced.len())
                }
            ),
        ),
        Some(j) => {
            let (story, cites) = story_of(run, config, lock, j);
            let bad_count = if fenced_ok {
                unfenced
            } else {
                unfenced + fenced.len()
            };
            Verdict::violation(
                name,
                format!(
                    "{} wrote {} at zxid {} without owning the lowest contender of {lock} ({} such write{} of {})",
                    story::session(j.write.session),
                    j.path,
                    j.write.zxid,
                    bad_count,
                    if bad_count == 1 { "" } else { "s" },
                    judged.len()
                ),
            )
            .story(story)
            .cite(run, cites)
        }
    };
    if fenced_ok {
        v.notes = fenced
            .iter()
            .take(5)
            .map(|j| {
                format!(
                    "fenced, harmless: {} wrote {} at zxid {} ({}) without owning {lock}, guarded by {}",
                    story::session(j.write.session),
                    j.path,
                    j.write.zxid,
                    story::line(run, j.write.index),
                    match &j.fence {
                        Some(Fence::Check(p)) => format!("a check of {p}"),
                        Some(Fence::Version(ver, _)) => format!("expected version {ver}"),
                        None => String::new(),
                    }
                )
            })
            .collect();
    }
    v.figure("writes", judged.len())
        .figure("by owner", by_owner)
        .figure("fenced, not by owner", fenced.len())
        .figure("unfenced, not by owner", unfenced)
}

impl Judge for OwnerWrites {
    fn name(&self) -> &'static str {
        "owner-writes"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        verdict(self.name(), run, config, false)
    }
}

impl Judge for OwnerWritesFenced {
    fn name(&self) -> &'static str {
        "owner-writes-fenced"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        verdict(self.name(), run, config, true)
    }
}
