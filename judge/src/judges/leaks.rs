//! `leaks`: at the end of a finished run (quiescence), a contender still
//! under the lock path in a live session, whose session has no watch that
//! can still fire, and that is either the holder with no act since it got
//! the lock, or an older contender of a session that queued again (the
//! classic leak: a create whose reply was lost, retried under a new name).
//! Such a node blocks everyone queued behind it until its session ends.
//!
//! An older contender that its own session's newer one must wait behind
//! (either of them exclusive) is a leak whatever watches the session has:
//! they are the newer contender's wait, and the wait can only end with
//! the older node, which nothing will delete — the session waits for
//! itself. Seen: kazoo's `Lock` under `lag=2,partitions=1`: a create whose
//! reply was lost, retried after a reconnect to a lagging follower whose
//! `getChildren` did not yet list the first node, queued again behind it,
//! and every worker waited until the app's deadline.
//!
//! [`standing`] is the end state the `liveness` judge reads too.

use crate::contender::{self, Contender, Kind};
use crate::history::Record;
use crate::run::Run;
use crate::story;
use crate::verdict::{Config, Judge, Verdict};
use crate::watches::{self, Watch, WatchKind};

pub struct Leaks;

/// A contender alive at the end, in a live session, and where it stands.
#[derive(Clone, Debug)]
pub struct Standing<'r> {
    pub contender: Contender<'r>,
    /// It holds the lock at the end.
    pub holds: bool,
    /// The record index from which it held (its creation, or the deletion
    /// of the last contender it waited behind).
    pub held_from: Option<usize>,
    /// Its session sent a request (not a ping) after it came to hold.
    pub acted: bool,
    /// Its session has a newer contender under the lock path.
    pub superseded: bool,
    /// That newer contender must wait for this one (either is exclusive):
    /// the session waits for itself.
    pub blocks_own: Option<Contender<'r>>,
    /// What it waits behind at the end (for a waiter).
    pub waits_for: Option<Contender<'r>>,
    /// Its session's watches that can still fire.
    pub live_watches: Vec<Watch>,
    /// Its session's last watch, pending or fired, and the notification
    /// that fired it (record indices).
    pub last_request: Option<usize>,
}

/// Whether `w` can still fire: on a node or parent that exists, or for the
/// creation of a path that is not a sequential contender (whose name never
/// comes back).
pub fn can_fire(run: &Run, config: &Config, w: &Watch) -> bool {
    match w.kind {
        WatchKind::Exists => {
            config.rules.parse(crate::tree::name_of(&w.path)).is_none() && w.can_fire(run)
        }
        _ => w.can_fire(run),
    }
}

/// The contenders of `lock` alive at the end in sessions still open.
pub fn standing<'r>(run: &'r Run, config: &Config, lock: &str) -> Vec<Standing<'r>> {
    let end = run.tree.last_zxid;
    let now = contender::at(&run.tree, &config.rules, lock, end);
    let holders: Vec<String> = contender::holders(&now)
        .iter()
        .map(|c| c.life.path.clone())
        .collect();
    let pending = watches::pending_at_end(run);
    let all = contender::ever(&run.tree, &config.rules, lock);
    now.iter()
        .filter(|c| run.tree.session_open_at(c.session(), end))
        .map(|c| {
            let s = c.session();
            let holds = holders.contains(&c.life.path);
            // Held from the deletion of the last contender before it that it
            // had to wait for (all before it for a writer, writers for a reader).
            let held_from = holds.then(|| {
                all.iter()
                    .filter(|o| o.seq < c.seq && (c.kind == Kind::Exclusive || o.kind == Kind::Exclusive))
                    .filter_map(|o| o.life.deleted_at)
                    .chain(std::iter::once(c.life.created_at))
                    .max()
                    .unwrap_or(c.life.created_at)
            });
            let last_request = (0..run.records.len()).rev().find(|&i| {
                matches!(run.record(i), Record::Request { session, op, .. } if *session == s && op.op != "ping")
            });
            let acted = match (held_from, last_request) {
                (Some(from), Some(last)) => last > from,
                _ => false,
            };
            let superseded = now.iter().any(|o| o.session() == s && o.seq > c.seq);
            let blocks_own = now
                .iter()
                .find(|o| {
                    o.session() == s
                        && o.seq > c.seq
                        && (o.kind == Kind::Exclusive || c.kind == Kind::Exclusive)
                })
                .cloned();
            Standing {
                holds,
                held_from,
                acted,
                superseded,
                blocks_own,
                waits_for: contender::waits_for(&now, c).cloned(),
                live_watches: pending
                    .iter()
                    .filter(|w| w.session == s && can_fire(run, config, w))
                    .cloned()
                    .collect(),
                last_request,
                contender: c.clone(),
            }
        })
        .collect()
}

/// What leaks and liveness both need before judging a lock at a run's end:
/// a `--lock`, a run that ended (not cut), and a lock that ever had a
/// contender — with how many it ever had — else the verdict that says why
/// nothing was judged.
pub fn judged_lock<'c>(
    name: &'static str,
    run: &Run,
    config: &'c Config,
) -> Result<(&'c str, usize), Box<Verdict>> {
    let Some(lock) = config.lock.as_deref() else {
        return Err(Box::new(Verdict::incomplete(
            name,
            "not judged: needs --lock",
        )));
    };
    if !run.ended {
        return Err(Box::new(Verdict::cut(name)));
    }
    let ever = contender::ever(&run.tree, &config.rules, lock).len();
    if ever == 0 {
        return Err(Box::new(Verdict::incomplete(
            name,
            format!("nothing to judge: {lock} never had a contender"),
        )));
    }
    Ok((lock, ever))
}

impl Judge for Leaks {
    fn name(&self) -> &'static str {
        "leaks"
    }

    fn judge(&self, run: &Run, config: &Config) -> Verdict {
        let (lock, ever) = match judged_lock(self.name(), run, config) {
            Ok(judged) => judged,
            Err(not_judged) => return *not_judged,
        };
        let standing = standing(run, config, lock);
        let leaked: Vec<&Standing<'_>> = standing
            .iter()
            .filter(|s| {
                s.blocks_own.is_some()
                    || (s.live_watches.is_empty() && ((s.holds && !s.acted) || s.superseded))
            })
            .collect();
        let Some(first) = leaked.first() else {
            return Verdict::ok(
                self.name(),
                format!(
                    "{ever} contenders; at the end none was left behind ({} still standing, each waiting or acting)",
                    standing.len()
                ),
            )
            .figure("contenders", ever)
            .figure("leaked", 0);
        };
        let c = &first.contender;
        let s = c.session();
        let mut story = vec![format!(
            "{} (created by {} at zxid {}, {}) was still under {lock} at the end, its session open",
            c.life.path,
            story::session(s),
            c.life.created,
            story::line(run, c.life.created_at)
        )];
        let mut cites = vec![c.life.created_at];
        if first.superseded {
            story.push(format!(
                "{} queued again with a newer contender and forgot this one",
                story::session(s)
            ));
        }
        if let Some(from) = first.held_from.filter(|_| first.holds) {
            cites.push(from);
            story.push(format!(
                "it held the lock from {} on, and {} sent nothing after that",
                story::line(run, from),
                story::session(s)
            ));
        }
        story.push(match first.last_request {
            Some(i) => {
                cites.push(i);
                format!(
                    "{}'s last request: {}",
                    story::session(s),
                    story::line(run, i)
                )
            }
            None => format!("{} never sent a request", story::session(s)),
        });
        story.push(match &first.blocks_own {
            Some(newer) => format!(
                "{}'s newer contender {} waits behind it: the session waits for itself, and nothing will make it delete the node, so it and whoever queues behind it wait until the session ends",
                story::session(s),
                newer.life.name()
            ),
            None => format!(
                "{} has no watch that can still fire: nothing will make it delete the node, so whoever queues behind it waits until the session ends",
                story::session(s)
            ),
        });
        story.push(story::fault_clause(run, c.life.created_at + 1));
        Verdict::violation(
            self.name(),
            format!(
                "{} contender{} left behind under {lock} at the end (first: {} of {})",
                leaked.len(),
                if leaked.len() == 1 { "" } else { "s" },
                c.life.name(),
                story::session(s)
            ),
        )
        .story(story)
        .cite(run, cites)
        .figure("contenders", ever)
        .figure("leaked", leaked.len())
    }
}
