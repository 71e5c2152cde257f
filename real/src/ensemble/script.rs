//! The ensemble conformance scripts: steps over sessions *and* servers.
//!
//! Servers are named by role: `0` is the leader, `1` and `2` the
//! followers (the simulator's server 0 leads; on the real ensemble the
//! roles are read from `srvr` when it has started). Session `k` starts on
//! server `k % 3`. A session connects elsewhere only at a
//! [`Step::Connect`]: on the real side every proxy of a session refuses
//! new connections except during such a step, so the client library's own
//! (shuffled) choice of server never decides anything.
//!
//! Each step completes before the next begins, and everything it causes
//! is delivered before the next too; what the sessions observe is recorded
//! with the step it happened in, so the comparison also checks the order
//! of things *across* sessions that time decides: a client's read timeout
//! (its `Disconnected`) in one step, the leader's expiry (another session's
//! `NodeDeleted`) in a later one.

use std::fmt;

use zksim::{Op, SessionEvent, Tick};

use crate::conformance::{normalize, Frame, Obs, Seen};

/// A server, by role: 0 the leader, 1 and 2 the followers.
pub type Role = usize;

/// One step of an ensemble script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The session sends `op` and waits for its reply.
    Op(usize, Op),
    /// The session sends `op` without waiting: its reply comes in a later
    /// step (a `sync` on a lagging follower is answered when it catches up).
    Send(usize, Op),
    /// The follower stops applying (real: the transactions the leader
    /// sends it are held — proposals, commits, syncs — while pings and
    /// session revalidations pass; sim: no `Apply` for it). Must end
    /// within `syncLimit`.
    Lag(Role),
    /// The follower applies everything committed (real: waits until its
    /// `srvr` zxid is the leader's).
    Unlag(Role),
    /// The follower is cut off from the leader both ways (S22a).
    Partition(Role),
    /// The partition ends; the follower catches up (rejoining first if it
    /// had given up on the leader).
    Heal(Role),
    /// The session's network goes silent both ways until it reconnects
    /// (real: its proxies hold every byte and refuse new connections; sim:
    /// `Fault::Silence`) — a client that stops pinging (S21a).
    Silence(usize),
    /// From now until its connection breaks, nothing the session's server
    /// sends reaches it (real: its proxy holds server→client bytes; sim: no
    /// `Receive`): a `Send` then ends once the server has answered (applied)
    /// the op, and the answer is lost at the next `Drop`.
    HoldReplies(usize),
    /// The session's connection breaks (`Fault::DropConnection`).
    Drop(usize),
    /// A disconnected session tries server `role`: it connects (its
    /// session lives on, or it learns `Expired`), or the server refuses it
    /// ([`What::Refused`]: a server behind the client, S26, or one that is
    /// not serving, S22a).
    Connect(usize, Role),
    /// Time passes: this many ticks (real: `tickTime` each).
    Sleep(Tick),
    /// Time passes until the session sees this session event.
    AwaitSession(usize, SessionEvent),
    /// Time passes until the session sees a watch event.
    AwaitWatch(usize),
}

/// A named ensemble script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnsembleScript {
    /// Named after the rule it shows.
    pub name: String,
    pub sessions: usize,
    /// Every session's session timeout, in ticks (the simulator has one
    /// for all clients). Both sides clamp it to [2, 20] ticks (S20).
    pub timeout: Tick,
    /// `syncLimit`, in ticks: how long a follower may lag, and when a
    /// partitioned one gives up on its leader.
    pub sync_limit: Tick,
    pub steps: Vec<Step>,
}

impl EnsembleScript {
    pub fn new(name: impl Into<String>, sessions: usize, timeout: Tick) -> Self {
        EnsembleScript {
            name: name.into(),
            sessions,
            timeout,
            sync_limit: super::ENSEMBLE_SYNC_LIMIT,
            steps: Vec::new(),
        }
    }
    /// The script with `syncLimit = ticks`.
    pub fn sync_limit(mut self, ticks: Tick) -> Self {
        self.sync_limit = ticks;
        self
    }
    pub fn then(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }
    /// The script, one step per line.
    pub fn listing(&self) -> String {
        let mut out = format!(
            "ensemble script {} ({} sessions, timeout {} ticks, syncLimit {} ticks)\n",
            self.name, self.sessions, self.timeout, self.sync_limit
        );
        for (i, step) in self.steps.iter().enumerate() {
            out.push_str(&format!("  {i:>3}: {step:?}\n"));
        }
        out
    }
}

/// The root every ensemble script works under (each script gets a fresh
/// ensemble, so one name is enough).
pub const ROOT: &str = "/t";

/// What a session saw, beyond [`Obs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    Obs(Obs),
    /// At a [`Step::Connect`], the server refused the session.
    Refused,
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            What::Obs(o) => write!(f, "{o}"),
            What::Refused => write!(f, "refused"),
        }
    }
}

/// One observation: in which step, by which session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub step: usize,
    pub session: usize,
    pub what: What,
}

/// A raw observation as a runner records it.
#[derive(Clone, Debug)]
pub enum Raw {
    Seen(Seen),
    Refused,
}

/// Normalize what the runners recorded, `(step, session, raw)` in the
/// order it happened: grouped by step, and within a step by session (the
/// order of two sessions' observations inside one step is the network's,
/// not the model's), each session's own order kept.
pub fn normalize_steps(
    raw: &[(usize, usize, Raw)],
    base: zksim::Zxid,
    sessions: &[Vec<zksim::SessionId>],
) -> Vec<Observed> {
    let frame = Frame { base, sessions };
    let mut steps: Vec<usize> = raw.iter().map(|(s, _, _)| *s).collect();
    steps.sort_unstable();
    steps.dedup();
    let mut out = Vec::new();
    for step in steps {
        for session in 0..sessions.len() {
            let mut seen = Vec::new();
            for (s, k, r) in raw {
                if *s != step || *k != session {
                    continue;
                }
                match r {
                    Raw::Seen(x) => seen.push(x.clone()),
                    Raw::Refused => {
                        flush(&mut out, step, session, &mut seen, &frame);
                        out.push(Observed {
                            step,
                            session,
                            what: What::Refused,
                        });
                    }
                }
            }
            flush(&mut out, step, session, &mut seen, &frame);
        }
    }
    out
}

fn flush(
    out: &mut Vec<Observed>,
    step: usize,
    session: usize,
    seen: &mut Vec<Seen>,
    frame: &Frame,
) {
    if seen.is_empty() {
        return;
    }
    let mut per_session = vec![Vec::new(); frame.sessions.len()];
    per_session[session] = std::mem::take(seen);
    let normalized = normalize(&per_session, frame);
    for obs in normalized.into_iter().nth(session).unwrap_or_default() {
        out.push(Observed {
            step,
            session,
            what: What::Obs(obs),
        });
    }
}

/// The script and both sides' observations side by side, differing lines
/// marked `!!`; `None` when they agree.
pub fn compare(script: &EnsembleScript, sim: &[Observed], real: &[Observed]) -> Option<String> {
    (sim != real).then(|| side_by_side(script, sim, real))
}

/// The listing and both sides' observations, one per line.
pub fn side_by_side(script: &EnsembleScript, sim: &[Observed], real: &[Observed]) -> String {
    let mut out = script.listing();
    out.push_str("step session: simulator | real\n");
    let line = |o: Option<&Observed>| {
        o.map_or("—".to_string(), |o| {
            format!("{:>3} s{}: {}", o.step, o.session, o.what)
        })
    };
    for i in 0..sim.len().max(real.len()) {
        let (left, right) = (line(sim.get(i)), line(real.get(i)));
        let mark = if left == right { "   " } else { "!! " };
        out.push_str(&format!("  {mark}{left}\n  {mark}   | {right}\n"));
    }
    out
}
