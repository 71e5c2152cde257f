//! Run a [`Script`] on a real ZooKeeper, in the script's order.
//!
//! Why not [`crate::drive`]: the driver runs sans-IO clients side by
//! side, each reacting only to its own inputs, so a client cannot wait for
//! *another* session's step without polling on a 100 ms timer. A script
//! needs one global order, so this conductor holds every session's handle
//! and performs the steps itself. It reuses the driver's translation
//! (`ops::perform`, `map_event`, `WatchClass`) and its `WakeSet`, which
//! yields each connection's replies and notifications in wire order.
//!
//! After each step, every other connected session does a *barrier* read
//! (`exists("/")`, not recorded): the server queued the step's
//! notifications on their connections before it answered the step, so
//! once a barrier is answered everything the step caused there has been
//! delivered. The simulator needs no barrier: its scheduler delivers
//! everything outstanding before the next step.
//!
//! Every session talks through its own [`FaultProxy`]. Besides breaking
//! and silencing connections it holds one direction for
//! [`Action::HoldRequests`] / [`Action::HoldReplies`], tells the conductor
//! when a [`Action::Send`] has reached the wire or been answered, and
//! decodes multi replies: a failed multi's per-op codes are taken from the
//! bytes the server sent, not from the library (which keeps only the
//! failing op).
//!
//! Paths are checked with the simulator's own validator (the Java client's
//! `PathUtils.validatePath`) before an op is sent, as the Java client does:
//! `zookeeper-client` lets `/a/.`, `/a/..` and characters outside the BMP
//! through to the server. See docs/CONFORMANCE.md.

mod error;
mod inflight;
mod newer;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use zksim::{Op, SessionEvent, SessionId};
use zookeeper_client as zk;

pub use error::ConductorError;

use super::observe::{Frame, Seen};
use super::sim::{base_zxid, strip_setup};
use super::{normalize, Action, Observations, Script, SETUP};
use crate::ops::{self, Answer, WatchClass};
use crate::wakeset::WakeSet;
use crate::{four_letter_at, FaultProxy};

/// The session timeout asked for a session the script expires: short, so
/// the server gives up on it quickly once the network is silent.
const EXPIRING_TIMEOUT: Duration = Duration::from_millis(1000);
/// Every other session's timeout: long enough never to expire by accident.
const LONG_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one step may take before the run is declared stuck.
const STEP_LIMIT: Duration = Duration::from_secs(15);

enum Outcome {
    Answer {
        session: usize,
        step: usize,
        multi: bool,
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
    /// An event of a persistent watch (S37); the watcher goes on.
    Persistent {
        session: usize,
        event: zk::WatchedEvent,
        watcher: zk::PersistentWatcher,
    },
    State {
        session: usize,
        state: zk::SessionState,
        watcher: zk::StateWatcher,
    },
}

/// A session's connection as the conductor last saw it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Link {
    Connected,
    Disconnected,
    Expired,
    Closed,
}

impl Link {
    /// What a state the library reports means for a script: the session
    /// event the Java client would hand its watcher (none for a close) and
    /// the link after it; `None` for a read-only connection, which no
    /// script asks for (the conductor only waits for the next state).
    pub fn after(state: zk::SessionState) -> Option<(Option<SessionEvent>, Link)> {
        Some(match state {
            zk::SessionState::Disconnected => {
                (Some(SessionEvent::Disconnected), Link::Disconnected)
            }
            zk::SessionState::SyncConnected => (Some(SessionEvent::SyncConnected), Link::Connected),
            zk::SessionState::Expired => (Some(SessionEvent::Expired), Link::Expired),
            zk::SessionState::Closed | zk::SessionState::AuthFailed => (None, Link::Closed),
            zk::SessionState::ConnectedReadOnly => return None,
        })
    }
}

/// What the script holds on a session's connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hold {
    Requests,
    Replies,
}

struct Slot {
    handle: Option<zk::Client>,
    proxy: FaultProxy,
    link: Link,
    held: Option<Hold>,
    /// Steps whose op was sent and not answered yet.
    in_flight: Vec<usize>,
    session: SessionId,
    armed: BTreeMap<u64, (String, WatchClass)>,
    seen: Vec<Seen>,
}

struct Conductor {
    /// The server every session's proxy relays to; it answers `dump`.
    upstream: SocketAddr,
    slots: Vec<Slot>,
    set: WakeSet<Outcome>,
    next_key: u64,
    /// What the last handled outcome was, for `until`.
    last: Option<Done>,
    /// A harness failure found while handling an outcome.
    broken: Option<ConductorError>,
}

/// What a handled outcome completed; what a step waits for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Done {
    /// Session's reply to the op of step.
    Answer(usize, usize),
    /// Session answered its barrier read.
    Barrier(usize),
    /// Session's connection reached this state.
    State(usize, Link),
}

impl fmt::Display for Done {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Done::Answer(k, SETUP) => write!(f, "s{k}'s reply to the setup create"),
            Done::Answer(k, step) => write!(f, "s{k}'s reply at step {step}"),
            Done::Barrier(k) => write!(f, "s{k}'s barrier read"),
            Done::State(k, link) => write!(f, "s{k} to become {link:?}"),
        }
    }
}

/// Run `script` (already rooted at `root`) on the server at `upstream`:
/// the real one (`TestServer`) or any other that speaks ZooKeeper 3.8's
/// protocol and answers the four-letter word `dump` on the same port
/// (`zkserve`). One server, not an ensemble: every session's proxy relays
/// to it.
pub async fn run(
    script: &Script,
    root: &str,
    upstream: SocketAddr,
) -> Result<Observations, ConductorError> {
    let mut conductor = Conductor {
        upstream,
        slots: Vec::new(),
        set: WakeSet::default(),
        next_key: 0,
        last: None,
        broken: None,
    };
    let played = conductor.play(script, root).await;
    if played.is_err() {
        // A refused or stuck script must not leave its sessions open: the
        // server would expire them some seconds later, in the middle of
        // another script, whose zxids would then be one off.
        conductor.close_all_quietly().await;
    }
    let seen = played?;
    let sessions: Vec<Vec<SessionId>> = conductor.slots.iter().map(|s| vec![s.session]).collect();
    conductor.close_all().await?;
    let base = base_zxid(&seen[0]).ok_or(ConductorError::SetupFailed)?;
    let frame = Frame {
        base,
        sessions: &sessions,
    };
    Ok(normalize(&strip_setup(seen), &frame))
}

impl Conductor {
    /// Connect the script's sessions and perform its steps; what each
    /// session saw.
    async fn play(
        &mut self,
        script: &Script,
        root: &str,
    ) -> Result<Vec<Vec<Seen>>, ConductorError> {
        for k in 0..script.sessions.max(1) {
            let proxy = FaultProxy::start(self.upstream)
                .map_err(|source| ConductorError::Proxy { session: k, source })?;
            let connect = proxy.connect_string();
            let timeout = if script.expires(k) {
                EXPIRING_TIMEOUT
            } else {
                LONG_TIMEOUT
            };
            let handle = zk::Client::connector()
                .with_session_timeout(timeout)
                .connect(&connect)
                .await
                .map_err(|source| ConductorError::Connect { session: k, source })?;
            let watcher = handle.state_watcher();
            self.push_state(k, watcher);
            self.slots.push(Slot {
                session: handle.session_id().0,
                handle: Some(handle),
                proxy,
                link: Link::Connected,
                held: None,
                in_flight: Vec::new(),
                armed: BTreeMap::new(),
                seen: Vec::new(),
            });
        }
        let setup = Op::Create {
            path: root.to_string(),
            data: Vec::new(),
            mode: zksim::CreateMode::Persistent,
        };
        self.op(0, SETUP, setup).await?;
        for (i, step) in script.steps.iter().enumerate() {
            let k = step.session;
            if k >= self.slots.len() {
                return Err(ConductorError::NoSession {
                    step: i,
                    session: k,
                });
            }
            match &step.action {
                Action::Op(op) => self.op(k, i, op.clone()).await?,
                Action::Send(op) => self.send(k, i, op.clone()).await?,
                Action::HoldRequests => self.hold(k, Hold::Requests),
                Action::HoldReplies => self.hold(k, Hold::Replies),
                Action::Close => self.close(k).await?,
                Action::Expire => self.expire(k).await?,
                Action::Disconnect => self.disconnect(k).await?,
                Action::Reconnect => self.reconnect(k, i).await?,
                Action::AwaitReaped(path) => self.await_reaped(k, i, path).await?,
            }
            self.barrier(k).await?;
        }
        Ok(self.slots.iter().map(|s| s.seen.clone()).collect())
    }

    fn proxy(&self, k: usize) -> &FaultProxy {
        &self.slots[k].proxy
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

    /// Handle outcomes until one completes `done`.
    async fn until(&mut self, done: Done) -> Result<(), ConductorError> {
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        loop {
            let outcome = tokio::select! {
                outcome = self.set.next() => outcome,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(ConductorError::Stuck { waiting_for: done });
                }
            };
            self.handle(outcome);
            if let Some(broken) = self.broken.take() {
                return Err(broken);
            }
            if self.last.take() == Some(done) {
                return Ok(());
            }
        }
    }

    fn handle(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Answer {
                session,
                step,
                multi,
                mut answer,
            } => {
                self.slots[session].in_flight.retain(|s| *s != step);
                if multi {
                    self.read_multi_from_wire(session, step, &mut answer.reply);
                }
                if let Some(armed) = answer.persistent {
                    self.push_persistent(session, armed.watcher);
                }
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
                self.slots[session].seen.push(Seen::Reply {
                    step,
                    reply: answer.reply,
                });
                self.last = Some(Done::Answer(session, step));
            }
            Outcome::Barrier { session } => self.last = Some(Done::Barrier(session)),
            Outcome::Persistent {
                session,
                event,
                watcher,
            } => {
                // The watcher panics if polled after its session ended.
                if event.session_state.is_terminated() {
                    return;
                }
                self.push_persistent(session, watcher);
                if let Some(event) = ops::map_event(&event) {
                    self.slots[session].seen.push(Seen::Watch(event));
                }
            }
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
                slot.seen.push(Seen::Watch(event));
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
                let slot = &mut self.slots[session];
                if let Some(event) = event {
                    slot.seen.push(Seen::Session(event));
                }
                slot.link = link;
                if matches!(link, Link::Connected | Link::Disconnected) {
                    self.push_state(session, watcher);
                }
                self.last = Some(Done::State(session, link));
            }
        }
    }

    /// Send `op` without waiting for its answer. A path the Java client
    /// would refuse is answered here, as the Java client does, unsent.
    fn issue(&mut self, k: usize, step: usize, op: Op) -> Result<(), ConductorError> {
        let Some(handle) = self.slots[k].handle.clone() else {
            return Err(ConductorError::Closed { step, session: k });
        };
        self.slots[k].in_flight.push(step);
        if let Err(refused) = zksim::path::validate_request(&op) {
            let answer = Answer::plain(Err(refused));
            self.set.push(async move {
                Outcome::Answer {
                    session: k,
                    step,
                    multi: false,
                    answer,
                }
            });
            return Ok(());
        }
        let multi = matches!(op, Op::Multi(_));
        self.set.push(async move {
            Outcome::Answer {
                session: k,
                step,
                multi,
                answer: ops::perform(handle, op).await,
            }
        });
        Ok(())
    }

    async fn op(&mut self, k: usize, step: usize, op: Op) -> Result<(), ConductorError> {
        self.issue(k, step, op)?;
        self.until(Done::Answer(k, step)).await
    }

    /// Every connected session other than `except` answers a read, so that
    /// every notification queued for it before now has been handled.
    async fn barrier(&mut self, except: usize) -> Result<(), ConductorError> {
        for j in 0..self.slots.len() {
            let slot = &self.slots[j];
            if j == except || slot.link != Link::Connected || slot.held.is_some() {
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

    /// Leave no sessions (and so no ephemerals) behind for the next
    /// script, and wait until the server has ended each: a `closeSession`
    /// still in flight (or a session left to expire, had its proxy gone
    /// first) would take a zxid in the middle of the next script.
    async fn close_all(&mut self) -> Result<(), ConductorError> {
        for k in 0..self.slots.len() {
            self.close_slot(k).await?;
        }
        Ok(())
    }

    /// [`Conductor::close_all`] after a failed step: every session is
    /// tried, whatever an earlier one did.
    async fn close_all_quietly(&mut self) {
        self.broken = None;
        for k in 0..self.slots.len() {
            let _ = self.close_slot(k).await;
            self.broken = None;
        }
    }

    /// Close session `k` if it is open, waiting for a broken connection to
    /// come back first (a session dropped unclosed lives on at the server).
    async fn close_slot(&mut self, k: usize) -> Result<(), ConductorError> {
        self.slots[k].proxy.resume();
        self.slots[k].held = None;
        let closing = if self.slots[k].link == Link::Disconnected {
            self.until(Done::State(k, Link::Connected)).await
        } else {
            Ok(())
        };
        let closed = if closing.is_ok() && self.slots[k].link == Link::Connected {
            self.close(k).await
        } else {
            closing
        };
        self.slots[k].handle = None;
        closed
    }

    async fn close(&mut self, k: usize) -> Result<(), ConductorError> {
        // Dropping the last handle makes the library send `closeSession`.
        self.slots[k].handle = None;
        self.until(Done::State(k, Link::Closed)).await
    }

    async fn disconnect(&mut self, k: usize) -> Result<(), ConductorError> {
        let proxy = self.proxy(k);
        proxy.pause();
        proxy.drop_connections();
        self.slots[k].held = None;
        let from = self.slots[k].seen.len();
        self.until(Done::State(k, Link::Disconnected)).await?;
        // What was in flight fails with ConnectionLoss.
        self.settle(k).await?;
        self.in_java_order(k, from);
        Ok(())
    }

    /// Record what session `k` saw since `from` (a broken connection: ops
    /// failing with `ConnectionLoss`, session events) as the Java client
    /// delivers it, and the simulator: its `cleanup()` fails the ops in
    /// the order they were sent (pending, then outgoing queue) before it
    /// queues `Disconnected`. `zookeeper-client` reports the state on its
    /// own channel first, and fails sent ops in `HashMap` order
    /// (`Depot::error`), so its order carries no information. Session
    /// events keep their own order.
    fn in_java_order(&mut self, k: usize, from: usize) {
        self.slots[k].seen[from..].sort_by_key(|s| match s {
            Seen::Reply { step, .. } => (0, *step),
            Seen::Watch(_) => (1, 0),
            Seen::Session(_) => (2, 0),
        });
    }

    async fn reconnect(&mut self, k: usize, step: usize) -> Result<(), ConductorError> {
        self.proxy(k).resume();
        self.until(Done::State(k, Link::Connected)).await?;
        // Collect what `SetWatches` brought back on this connection too.
        let handle = self.slots[k]
            .handle
            .clone()
            .ok_or(ConductorError::Closed { step, session: k })?;
        self.set.push(async move {
            let _ = handle.check_stat("/").await;
            Outcome::Barrier { session: k }
        });
        self.until(Done::Barrier(k)).await
    }

    async fn expire(&mut self, k: usize) -> Result<(), ConductorError> {
        let session = self.slots[k].session;
        let id = format!("0x{session:x}");
        self.proxy(k).pause();
        self.slots[k].held = None;
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        // Wait for the server to drop the session from its tracker.
        loop {
            let dump = four_letter_at(self.upstream, "dump").map_err(ConductorError::Dump)?;
            // A server that does not know the word closes the connection
            // unanswered: that must not read as "the session is gone".
            if dump.trim().is_empty() {
                return Err(ConductorError::Dump(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "no answer to `dump` (does the server know four-letter words?)",
                )));
            }
            if !dump.contains(&id) {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(ConductorError::NeverExpired {
                    session: k,
                    id: session,
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let from = self.slots[k].seen.len();
        let proxy = self.proxy(k);
        proxy.drop_connections();
        proxy.resume();
        if self.slots[k].link != Link::Expired {
            self.until(Done::State(k, Link::Expired)).await?;
        }
        // Held ops failed when the connection broke.
        self.settle(k).await?;
        self.in_java_order(k, from);
        Ok(())
    }
}
