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

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use zksim::{Op, SessionEvent, SessionId};
use zookeeper_client as zk;

use super::observe::{Frame, Seen};
use super::sim::{base_zxid, strip_setup};
use super::{normalize, Action, Observations, Script, SETUP};
use crate::ops::{self, Answer, WatchClass};
use crate::wakeset::WakeSet;
use crate::{FaultProxy, TestServer};

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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Link {
    Connected,
    Disconnected,
    Expired,
    Closed,
}

struct Slot {
    handle: Option<zk::Client>,
    proxy: Option<FaultProxy>,
    link: Link,
    session: SessionId,
    armed: BTreeMap<u64, (String, WatchClass)>,
    seen: Vec<Seen>,
}

struct Conductor<'s> {
    server: &'s TestServer,
    slots: Vec<Slot>,
    set: WakeSet<Outcome>,
    next_key: u64,
    /// What the last handled outcome was, for `until`.
    last: Option<Done>,
}

/// What a handled outcome completed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Done {
    Answer(usize, usize),
    Barrier(usize),
    State(usize, Link),
}

/// Run `script` (already rooted at `root`) on `server`.
pub async fn run(script: &Script, root: &str, server: &TestServer) -> Result<Observations, String> {
    let upstream: SocketAddr = server
        .connect_string()
        .parse()
        .map_err(|e| format!("server address: {e}"))?;
    let mut conductor = Conductor {
        server,
        slots: Vec::new(),
        set: WakeSet::default(),
        next_key: 0,
        last: None,
    };
    for k in 0..script.sessions.max(1) {
        let proxy = if script.has_faults(k) {
            Some(FaultProxy::start(upstream).map_err(|e| format!("proxy: {e}"))?)
        } else {
            None
        };
        let connect = proxy
            .as_ref()
            .map_or_else(|| server.connect_string(), FaultProxy::connect_string);
        let timeout = if script.expires(k) {
            EXPIRING_TIMEOUT
        } else {
            LONG_TIMEOUT
        };
        let handle = zk::Client::connector()
            .with_session_timeout(timeout)
            .connect(&connect)
            .await
            .map_err(|e| format!("session {k} could not connect: {e}"))?;
        let watcher = handle.state_watcher();
        conductor.push_state(k, watcher);
        conductor.slots.push(Slot {
            session: handle.session_id().0,
            handle: Some(handle),
            proxy,
            link: Link::Connected,
            armed: BTreeMap::new(),
            seen: Vec::new(),
        });
    }
    let setup = Op::Create {
        path: root.to_string(),
        data: Vec::new(),
        mode: zksim::CreateMode::Persistent,
    };
    conductor.op(0, SETUP, setup).await?;
    for (i, step) in script.steps.iter().enumerate() {
        let k = step.session;
        if k >= conductor.slots.len() {
            return Err(format!("step {i}: no session {k}"));
        }
        match &step.action {
            Action::Op(op) => conductor.op(k, i, op.clone()).await?,
            Action::Close => conductor.close(k).await?,
            Action::Expire => conductor.expire(k).await?,
            Action::Disconnect => conductor.disconnect(k).await?,
            Action::Reconnect => conductor.reconnect(k).await?,
        }
        conductor.barrier(k).await?;
    }
    let seen: Vec<Vec<Seen>> = conductor.slots.iter().map(|s| s.seen.clone()).collect();
    let sessions: Vec<Vec<SessionId>> = conductor.slots.iter().map(|s| vec![s.session]).collect();
    // Leave no sessions (and so no ephemerals) behind for the next script.
    for slot in &mut conductor.slots {
        slot.handle = None;
        if let Some(proxy) = &slot.proxy {
            proxy.resume();
        }
    }
    let base = base_zxid(&seen[0]).ok_or("setup create failed")?;
    let frame = Frame {
        base,
        sessions: &sessions,
    };
    Ok(normalize(&strip_setup(seen), &frame))
}

impl Conductor<'_> {
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
    async fn until(&mut self, done: Done) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        loop {
            let outcome = tokio::select! {
                outcome = self.set.next() => outcome,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(format!("stuck waiting for {done:?}"));
                }
            };
            self.handle(outcome);
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
                answer,
            } => {
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
                let (event, link) = match state {
                    zk::SessionState::Disconnected => {
                        (Some(SessionEvent::Disconnected), Link::Disconnected)
                    }
                    zk::SessionState::SyncConnected => {
                        (Some(SessionEvent::SyncConnected), Link::Connected)
                    }
                    zk::SessionState::Expired => (Some(SessionEvent::Expired), Link::Expired),
                    zk::SessionState::Closed | zk::SessionState::AuthFailed => (None, Link::Closed),
                    zk::SessionState::ConnectedReadOnly => {
                        self.push_state(session, watcher);
                        return;
                    }
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

    async fn op(&mut self, k: usize, step: usize, op: Op) -> Result<(), String> {
        let Some(handle) = self.slots[k].handle.clone() else {
            return Err(format!("step {step}: s{k} is closed"));
        };
        self.set.push(async move {
            Outcome::Answer {
                session: k,
                step,
                answer: ops::perform(handle, op).await,
            }
        });
        self.until(Done::Answer(k, step)).await
    }

    /// Every connected session other than `except` answers a read, so that
    /// every notification queued for it before now has been handled.
    async fn barrier(&mut self, except: usize) -> Result<(), String> {
        for j in 0..self.slots.len() {
            let slot = &self.slots[j];
            if j == except || slot.link != Link::Connected {
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

    async fn close(&mut self, k: usize) -> Result<(), String> {
        // Dropping the last handle makes the library send `closeSession`.
        self.slots[k].handle = None;
        self.until(Done::State(k, Link::Closed)).await
    }

    async fn disconnect(&mut self, k: usize) -> Result<(), String> {
        let proxy = self.slots[k].proxy.as_ref().ok_or("no proxy")?;
        proxy.pause();
        proxy.drop_connections();
        self.until(Done::State(k, Link::Disconnected)).await
    }

    async fn reconnect(&mut self, k: usize) -> Result<(), String> {
        self.slots[k].proxy.as_ref().ok_or("no proxy")?.resume();
        self.until(Done::State(k, Link::Connected)).await?;
        // Collect what `SetWatches` brought back on this connection too.
        let handle = self.slots[k].handle.clone().ok_or("closed")?;
        self.set.push(async move {
            let _ = handle.check_stat("/").await;
            Outcome::Barrier { session: k }
        });
        self.until(Done::Barrier(k)).await
    }

    async fn expire(&mut self, k: usize) -> Result<(), String> {
        let id = format!("0x{:x}", self.slots[k].session);
        self.slots[k].proxy.as_ref().ok_or("no proxy")?.pause();
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        // Wait for the server to drop the session from its tracker.
        loop {
            let dump = self
                .server
                .four_letter("dump")
                .map_err(|e| format!("dump: {e}"))?;
            if !dump.contains(&id) {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("the server never expired {id}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let proxy = self.slots[k].proxy.as_ref().ok_or("no proxy")?;
        proxy.drop_connections();
        proxy.resume();
        if self.slots[k].link != Link::Expired {
            self.until(Done::State(k, Link::Expired)).await?;
        }
        Ok(())
    }
}
