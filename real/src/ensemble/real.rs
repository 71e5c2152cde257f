//! Run an [`EnsembleScript`] on a real three-server [`Ensemble`].
//!
//! The conductor follows the one-server conductor (`conformance::real`):
//! it holds every session's `zookeeper-client` handle, performs each step
//! itself and collects replies, watch events and state changes through a
//! [`WakeSet`]. What is new is where sessions connect and the servers:
//!
//! * Session `k` has one [`FaultProxy`] per server; its connect string
//!   names all three, and all but one refuse new connections — the one of
//!   server `k % 3` at the start, the one a [`Step::Connect`] names during
//!   that step — so the library's shuffled server order decides nothing.
//!   A refusal by the server itself (S26, or a follower not serving) shows
//!   as the server closing the connection before it answers the session
//!   handshake ([`FaultProxy::refused_by_server`]).
//! * After each step the conductor waits until every follower that is
//!   neither lagged nor partitioned has applied what the leader has (`srvr`
//!   zxids), then every session connected, quiet and not silenced answers a
//!   barrier read, so that what the step caused has been delivered — as
//!   the simulator's scheduler delivers everything before the next step.
//!
//! A barrier read also moves a session's last seen zxid (the server's, in
//! the reply header), which the simulator's sessions do not see: a script
//! must not move a session that only heard of a write through barriers to
//! a lagging follower (S26 would refuse it here, not there).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use zksim::{Op, SessionId};
use zookeeper_client as zk;

use super::script::{normalize_steps, EnsembleScript, Observed, Raw, Role, ROOT};
use super::{Ensemble, ENSEMBLE_TICK_MS, MEMBERS};
use crate::conformance::real::Link;
use crate::conformance::{Seen, SETUP};
use crate::ops::{self, Answer, WatchClass};
use crate::wakeset::WakeSet;
use crate::FaultProxy;

mod steps;

/// How long one step may take before the run is declared stuck.
const STEP_LIMIT: Duration = Duration::from_secs(20);
/// How often the conductor looks at the servers' `srvr` while waiting.
const POLL: Duration = Duration::from_millis(10);

/// Why a script could not be run on the ensemble (a harness failure, never
/// a difference from the simulator).
#[derive(Debug)]
pub struct EnsembleError(pub String);

impl fmt::Display for EnsembleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for EnsembleError {}

fn fail<T>(what: impl Into<String>) -> Result<T, EnsembleError> {
    Err(EnsembleError(what.into()))
}

enum Outcome {
    Answer {
        session: usize,
        step: usize,
        answer: Answer,
    },
    Barrier {
        session: usize,
    },
    Watch {
        session: usize,
        key: u64,
        event: zk::WatchedEvent,
    },
    State {
        session: usize,
        state: zk::SessionState,
        watcher: zk::StateWatcher,
    },
}

/// What a handled outcome completed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Done {
    Answer(usize, usize),
    Barrier(usize),
    State(usize, Link),
    Watch(usize),
}

struct Slot {
    handle: Option<zk::Client>,
    /// One per role.
    proxies: Vec<FaultProxy>,
    link: Link,
    /// The role of the server it last connected to.
    at: Role,
    silenced: bool,
    /// The server's answers are held on the way.
    held: bool,
    in_flight: Vec<usize>,
    session: SessionId,
    armed: BTreeMap<u64, (String, WatchClass)>,
}

struct Conductor<'e> {
    ensemble: &'e Ensemble,
    /// Server index of each role.
    roles: [usize; MEMBERS],
    lagged: [bool; MEMBERS],
    partitioned: [bool; MEMBERS],
    slots: Vec<Slot>,
    set: WakeSet<Outcome>,
    next_key: u64,
    step: usize,
    raw: Vec<(usize, usize, Raw)>,
    last: Option<Done>,
}

/// Run `script` on `ensemble` (fresh: no script ran on it before, started
/// with the script's `syncLimit`).
pub async fn run(
    script: &EnsembleScript,
    ensemble: &Ensemble,
) -> Result<Vec<Observed>, EnsembleError> {
    if ensemble.sync_limit() != script.sync_limit {
        return fail(format!(
            "the ensemble's syncLimit is {}, the script's {}",
            ensemble.sync_limit(),
            script.sync_limit
        ));
    }
    let roles = ensemble
        .roles()
        .ok_or_else(|| EnsembleError("no leader and two followers".into()))?;
    let mut c = Conductor {
        ensemble,
        roles,
        lagged: [false; MEMBERS],
        partitioned: [false; MEMBERS],
        slots: Vec::new(),
        set: WakeSet::default(),
        next_key: 0,
        step: SETUP,
        raw: Vec::new(),
        last: None,
    };
    let timeout = Duration::from_millis(script.timeout * ENSEMBLE_TICK_MS);
    for k in 0..script.sessions.max(1) {
        c.open(k, timeout).await?;
    }
    let setup = Op::Create {
        path: ROOT.to_string(),
        data: Vec::new(),
        mode: zksim::CreateMode::Persistent,
    };
    c.issue(0, SETUP, setup)?;
    c.until(Done::Answer(0, SETUP)).await?;
    c.servers_settle().await?;
    for (i, step) in script.steps.iter().enumerate() {
        c.step = i;
        c.play(i, step)
            .await
            .map_err(|e| EnsembleError(format!("step {i} ({step:?}): {e}")))?;
        c.servers_settle().await?;
        c.barriers().await?;
    }
    let mut raw = std::mem::take(&mut c.raw);
    let base = raw
        .iter()
        .find_map(|(_, _, s)| match s {
            Raw::Seen(Seen::Reply {
                step: SETUP,
                reply: Ok(zksim::Response::Created { stat, .. }),
            }) => Some(stat.czxid),
            _ => None,
        })
        .ok_or_else(|| EnsembleError("the setup create failed".into()))?;
    raw.retain(|(step, _, _)| *step != SETUP);
    let ids: Vec<Vec<SessionId>> = c.slots.iter().map(|s| vec![s.session]).collect();
    // Dropping the handles closes the sessions; the ensemble goes with the test.
    for slot in &mut c.slots {
        slot.handle = None;
    }
    Ok(normalize_steps(&raw, base, &ids))
}

impl Conductor<'_> {
    async fn open(&mut self, k: usize, timeout: Duration) -> Result<(), EnsembleError> {
        let mut proxies = Vec::new();
        for role in 0..MEMBERS {
            let proxy = FaultProxy::start(self.ensemble.client_addr(self.roles[role]))
                .map_err(|e| EnsembleError(format!("s{k}'s proxy: {e}")))?;
            if role != k % MEMBERS {
                proxy.refuse();
            }
            proxies.push(proxy);
        }
        let connect: Vec<String> = proxies.iter().map(FaultProxy::connect_string).collect();
        let handle = zk::Client::connector()
            .with_session_timeout(timeout)
            .connect(&connect.join(","))
            .await
            .map_err(|e| EnsembleError(format!("s{k} could not connect: {e}")))?;
        proxies.iter().for_each(FaultProxy::refuse);
        self.push_state(k, handle.state_watcher());
        self.slots.push(Slot {
            session: handle.session_id().0,
            handle: Some(handle),
            proxies,
            link: Link::Connected,
            at: k % MEMBERS,
            silenced: false,
            held: false,
            in_flight: Vec::new(),
            armed: BTreeMap::new(),
        });
        Ok(())
    }

    fn record(&mut self, session: usize, seen: Seen) {
        self.raw.push((self.step, session, Raw::Seen(seen)));
    }

    fn push_state(&mut self, session: usize, mut watcher: zk::StateWatcher) {
        self.set.push(async move {
            let state = watcher.changed().await;
            Outcome::State {
                session,
                state,
                watcher,
            }
        });
    }

    /// Handle one outcome, or return after `wait` if none comes.
    async fn handle_next(&mut self, wait: Duration) {
        tokio::select! {
            outcome = self.set.next() => self.handle(outcome),
            () = tokio::time::sleep(wait) => {}
        }
    }

    /// Handle outcomes until one completes `done`.
    async fn until(&mut self, done: Done) -> Result<(), EnsembleError> {
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        loop {
            let outcome = tokio::select! {
                outcome = self.set.next() => outcome,
                () = tokio::time::sleep_until(deadline) => {
                    return fail(format!("stuck: waited {STEP_LIMIT:?} for {done:?}"));
                }
            };
            self.handle(outcome);
            if self.last.take() == Some(done) {
                return Ok(());
            }
        }
    }

    /// Handle outcomes until `ready` holds (checked every [`POLL`]).
    async fn until_ready(
        &mut self,
        what: &str,
        mut ready: impl FnMut(&mut Self) -> bool,
    ) -> Result<(), EnsembleError> {
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        while !ready(self) {
            if tokio::time::Instant::now() > deadline {
                return fail(format!("stuck: waited {STEP_LIMIT:?} for {what}"));
            }
            self.handle_next(POLL).await;
        }
        Ok(())
    }

    fn handle(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Answer {
                session,
                step,
                answer,
            } => {
                self.slots[session].in_flight.retain(|s| *s != step);
                if let Some(armed) = answer.watch {
                    let key = self.next_key;
                    self.next_key += 1;
                    self.slots[session]
                        .armed
                        .insert(key, (armed.path, armed.class));
                    let watcher = armed.watcher;
                    self.set.push(async move {
                        Outcome::Watch {
                            session,
                            key,
                            event: watcher.changed().await,
                        }
                    });
                }
                self.record(
                    session,
                    Seen::Reply {
                        step,
                        reply: answer.reply,
                    },
                );
                self.last = Some(Done::Answer(session, step));
            }
            Outcome::Barrier { session } => self.last = Some(Done::Barrier(session)),
            Outcome::Watch {
                session,
                key,
                event,
            } => {
                let slot = &mut self.slots[session];
                if slot.armed.remove(&key).is_none() {
                    return;
                }
                let Some(event) = ops::map_event(&event) else {
                    return;
                };
                // One notification reaches every library watcher of this
                // path and class: the Java client delivers it once.
                slot.armed
                    .retain(|_, (path, class)| !(path == &event.path && class.hears(event.kind)));
                self.record(session, Seen::Watch(event));
                self.last = Some(Done::Watch(session));
            }
            Outcome::State {
                session,
                state,
                watcher,
            } => {
                let Some((event, link)) = Link::after(state) else {
                    self.push_state(session, watcher);
                    return;
                };
                if let Some(event) = event {
                    self.record(session, Seen::Session(event));
                }
                self.slots[session].link = link;
                if matches!(link, Link::Connected | Link::Disconnected) {
                    self.push_state(session, watcher);
                }
                self.last = Some(Done::State(session, link));
            }
        }
    }

    fn issue(&mut self, k: usize, step: usize, op: Op) -> Result<(), EnsembleError> {
        let Some(handle) = self.slots[k].handle.clone() else {
            return fail(format!("s{k} is closed"));
        };
        self.slots[k].in_flight.push(step);
        self.set.push(async move {
            Outcome::Answer {
                session: k,
                step,
                answer: ops::perform(handle, op).await,
            }
        });
        Ok(())
    }

    fn caught_up(&self, role: Role) -> bool {
        self.ensemble.is_caught_up(self.roles[role], self.roles[0])
    }

    /// Every follower that is neither lagged nor partitioned has applied
    /// what the leader has.
    async fn servers_settle(&mut self) -> Result<(), EnsembleError> {
        for role in 1..MEMBERS {
            if !self.lagged[role] && !self.partitioned[role] {
                self.until_ready(&format!("follower {role} to catch up"), |c| {
                    c.caught_up(role)
                })
                .await?;
            }
        }
        Ok(())
    }

    /// Every connected, quiet, audible session answers a read: what the
    /// step sent it has been delivered.
    async fn barriers(&mut self) -> Result<(), EnsembleError> {
        for j in 0..self.slots.len() {
            let slot = &self.slots[j];
            if slot.link != Link::Connected
                || slot.silenced
                || slot.held
                || !slot.in_flight.is_empty()
            {
                continue;
            }
            let Some(handle) = slot.handle.clone() else {
                continue;
            };
            self.set.push(async move {
                let _ = handle.check_stat("/").await;
                Outcome::Barrier { session: j }
            });
            self.until(Done::Barrier(j)).await?;
        }
        Ok(())
    }

    /// Handle outcomes until every session at `role` has nothing in flight.
    async fn settle_at(&mut self, role: Role) -> Result<(), EnsembleError> {
        for k in 0..self.slots.len() {
            if self.slots[k].at == role && self.slots[k].link == Link::Connected {
                while let Some(&step) = self.slots[k].in_flight.first() {
                    self.until(Done::Answer(k, step)).await?;
                }
            }
        }
        Ok(())
    }
}
