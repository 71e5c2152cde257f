//! The driver's state: one slot per client (its handle, session, op
//! counter, timer, armed watches) and one [`WakeSet`] of everything in
//! flight — replies, watch events, session states, timers, reconnects —
//! handled one at a time in the order they were woken. See [`super::run`]
//! for what it guarantees.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;
use zksim::{
    Client, Cx, CxOutput, Delivery, Happening, Op, OpId, Reply, SessionEvent, SessionId,
    SessionRequest, TimerRequest, ZkError, TICK_MS,
};
use zookeeper_client as zk;

use super::ops::{self, Answer, WatchClass};
use super::run_types::{DriveConfig, DriveError, RealRun};
use super::wakeset::WakeSet;

/// The run itself; see [`super::drive`].
pub(super) async fn run<C: Client>(
    clients: Vec<C>,
    config: &DriveConfig,
) -> Result<RealRun<C>, DriveError> {
    let mut driver = Driver::connect(clients, config).await?;
    for client in 0..driver.slots.len() {
        driver.feed(client, |c, cx| c.start(cx));
    }
    let deadline = driver.start + config.run_timeout;
    let finished = loop {
        if driver.all_done() {
            break true;
        }
        let outcome = tokio::select! {
            outcome = driver.set.next() => outcome,
            () = tokio::time::sleep_until(deadline) => break false,
        };
        driver.handle(outcome);
    };
    driver
        .close_all(config.session_timeout + Duration::from_secs(2))
        .await;
    Ok(driver.finish(finished))
}

/// Something one of the driver's futures produced.
enum Outcome {
    Answer {
        client: usize,
        op: OpId,
        answer: Answer,
    },
    Watch {
        client: usize,
        key: u64,
        event: zk::WatchedEvent,
    },
    State {
        client: usize,
        epoch: u32,
        session: SessionId,
        state: zk::SessionState,
        watcher: zk::StateWatcher,
    },
    Timer {
        client: usize,
        generation: u64,
    },
    Reopened {
        client: usize,
        result: Result<zk::Client, zk::Error>,
    },
    /// A `Disconnected` put behind the failures of the broken connection's requests.
    Deferred {
        client: usize,
        epoch: u32,
        event: SessionEvent,
    },
}

/// A client's connection to the server, as far as the driver is concerned.
enum Handle {
    Live(zk::Client),
    /// A new session is being opened (after `reopen_session`).
    Reopening,
    /// `close_session` was asked; the server has not confirmed yet.
    Closing,
    /// Closed or expired: every new request fails with `SessionExpired`.
    Ended,
}

struct Slot<C> {
    client: C,
    next_op: OpId,
    handle: Handle,
    session: SessionId,
    /// Bumped with every new session, so a late event of an old one is ignored.
    epoch: u32,
    in_flight: usize,
    timer_generation: u64,
    /// Watches the library holds for this client, by key: to deliver one
    /// server notification once even when several library watchers hear it.
    armed: BTreeMap<u64, (String, WatchClass)>,
    /// Ops sent while a new session was being opened.
    parked: Vec<(OpId, Op)>,
}

struct Driver<C: Client> {
    slots: Vec<Slot<C>>,
    sessions: Vec<Vec<SessionId>>,
    set: WakeSet<Outcome>,
    log: Vec<Happening<C::Event>>,
    at: Vec<Duration>,
    start: Instant,
    next_watch_key: u64,
    config: DriveConfig,
}

impl<C: Client> Driver<C> {
    async fn connect(clients: Vec<C>, config: &DriveConfig) -> Result<Self, DriveError> {
        let mut driver = Driver {
            slots: Vec::with_capacity(clients.len()),
            sessions: Vec::with_capacity(clients.len()),
            set: WakeSet::default(),
            log: Vec::new(),
            at: Vec::new(),
            start: Instant::now(),
            next_watch_key: 0,
            config: config.clone(),
        };
        for (index, client) in clients.into_iter().enumerate() {
            let connect_string = config.connect_string_for(index).to_string();
            let handle = open_session(connect_string, config.session_timeout)
                .await
                .map_err(|e| DriveError::Connect {
                    client: index,
                    reason: e.to_string(),
                })?;
            let session = handle.session_id().0;
            driver.sessions.push(vec![session]);
            driver.slots.push(Slot {
                client,
                next_op: 0,
                handle: Handle::Reopening,
                session,
                epoch: 0,
                in_flight: 0,
                timer_generation: 0,
                armed: BTreeMap::new(),
                parked: Vec::new(),
            });
            driver.watch_state(index, &handle);
            driver.slots[index].handle = Handle::Live(handle);
        }
        // Runs are timed from the first `start`, not from connecting.
        driver.start = Instant::now();
        Ok(driver)
    }

    fn now_ticks(&self) -> u64 {
        (self.start.elapsed().as_millis() / TICK_MS as u128) as u64
    }

    fn record(&mut self, happening: Happening<C::Event>) {
        self.at.push(self.start.elapsed());
        self.log.push(happening);
    }

    fn deliver(&mut self, client: usize, delivery: Delivery) {
        self.record(Happening::Delivered { client, delivery });
    }

    fn all_done(&self) -> bool {
        self.slots.iter().all(|s| {
            s.client.is_done() && s.in_flight == 0 && !matches!(s.handle, Handle::Reopening)
        })
    }

    /// Call one of the client's handlers and carry out what it asked.
    fn feed(&mut self, client: usize, handler: impl FnOnce(&mut C, &mut Cx<C::Event>)) {
        let now = self.now_ticks();
        let slot = &mut self.slots[client];
        let mut cx = Cx::new(now, slot.session, slot.next_op);
        handler(&mut slot.client, &mut cx);
        self.apply(client, cx.into_parts());
    }

    fn apply(&mut self, client: usize, output: CxOutput<C::Event>) {
        let CxOutput {
            next_op,
            sent,
            events,
            timer,
            session_request,
            ..
        } = output;
        self.slots[client].next_op = next_op;
        // Ops sent along with a reopen belong to the new session; ops sent
        // along with a close go out before it (as `close()` after calls would).
        if session_request == Some(SessionRequest::Reopen) {
            self.reopen(client);
        }
        for (op, request) in sent {
            self.record(Happening::Sent {
                client,
                op,
                request: request.clone(),
            });
            self.dispatch(client, op, request);
        }
        // Same order as the simulator's log: a handler's `Sent`s, then its `App`s.
        for event in events {
            self.record(Happening::App { client, event });
        }
        if session_request == Some(SessionRequest::Close) {
            let slot = &mut self.slots[client];
            if matches!(slot.handle, Handle::Live(_)) {
                // Dropping the last handle makes the library send
                // `closeSession` once the requests in flight are answered.
                slot.handle = Handle::Closing;
            }
        }
        match timer {
            TimerRequest::Keep => {}
            TimerRequest::Cancel => self.slots[client].timer_generation += 1,
            TimerRequest::At(tick) => {
                let slot = &mut self.slots[client];
                slot.timer_generation += 1;
                let generation = slot.timer_generation;
                let due = self.start + Duration::from_millis(tick * TICK_MS as u64);
                self.set.push(async move {
                    tokio::time::sleep_until(due).await;
                    Outcome::Timer { client, generation }
                });
            }
        }
    }

    fn reopen(&mut self, client: usize) {
        self.reopen_after(client, Duration::ZERO);
    }

    fn reopen_after(&mut self, client: usize, delay: Duration) {
        self.slots[client].handle = Handle::Reopening;
        let connect_string = self.config.connect_string_for(client).to_string();
        let timeout = self.config.session_timeout;
        self.set.push(async move {
            tokio::time::sleep(delay).await;
            Outcome::Reopened {
                client,
                result: open_session(connect_string, timeout).await,
            }
        });
    }

    fn dispatch(&mut self, client: usize, op: OpId, request: Op) {
        let slot = &mut self.slots[client];
        match &slot.handle {
            Handle::Live(handle) => {
                slot.in_flight += 1;
                let handle = handle.clone();
                self.set.push(async move {
                    let answer = ops::perform(handle, request).await;
                    Outcome::Answer { client, op, answer }
                });
            }
            Handle::Reopening => slot.parked.push((op, request)),
            // As the Java client answers without sending: `ConnectionLoss`
            // while a close is under way, `SessionExpired` once the handle is dead.
            Handle::Closing | Handle::Ended => {
                let error = if matches!(slot.handle, Handle::Closing) {
                    ZkError::ConnectionLoss
                } else {
                    ZkError::SessionExpired
                };
                slot.in_flight += 1;
                self.set.push(std::future::ready(Outcome::Answer {
                    client,
                    op,
                    answer: Answer::plain(Err(error)),
                }));
            }
        }
    }

    fn watch_state(&mut self, client: usize, handle: &zk::Client) {
        let epoch = self.slots[client].epoch;
        let session = handle.session_id().0;
        self.push_state_watcher(client, epoch, session, handle.state_watcher());
    }

    fn push_state_watcher(
        &mut self,
        client: usize,
        epoch: u32,
        session: SessionId,
        mut watcher: zk::StateWatcher,
    ) {
        self.set.push(async move {
            let state = watcher.changed().await;
            Outcome::State {
                client,
                epoch,
                session,
                state,
                watcher,
            }
        });
    }

    fn handle(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Answer { client, op, answer } => self.on_answer(client, op, answer),
            Outcome::Watch { client, key, event } => self.on_watch(client, key, &event),
            Outcome::State {
                client,
                epoch,
                session,
                state,
                watcher,
            } => self.on_state(client, epoch, session, state, watcher),
            Outcome::Timer { client, generation } => {
                if self.slots[client].timer_generation == generation {
                    self.feed(client, |c, cx| c.on_timer(cx));
                }
            }
            Outcome::Reopened { client, result } => self.on_reopened(client, result),
            Outcome::Deferred {
                client,
                epoch,
                event,
            } => {
                if self.slots[client].epoch == epoch {
                    self.deliver(client, Delivery::Session(event));
                    self.feed(client, |c, cx| c.on_session(event, cx));
                }
            }
        }
    }

    fn on_answer(&mut self, client: usize, op: OpId, answer: Answer) {
        self.slots[client].in_flight -= 1;
        if let Some(armed) = answer.watch {
            let key = self.next_watch_key;
            self.next_watch_key += 1;
            self.slots[client]
                .armed
                .insert(key, (armed.path, armed.class));
            let watcher = armed.watcher;
            self.set.push(async move {
                Outcome::Watch {
                    client,
                    key,
                    event: watcher.changed().await,
                }
            });
        }
        // No recipe sends `addWatch` (S37); the driver does not carry its
        // persistent watcher, and dropping it makes the library remove the
        // watch at the server. The conformance conductor does carry them.
        drop(answer.persistent);
        let reply: Reply = answer.reply;
        self.deliver(
            client,
            Delivery::Reply {
                op,
                reply: reply.clone(),
            },
        );
        self.feed(client, |c, cx| c.on_reply(op, reply, cx));
    }

    fn on_watch(&mut self, client: usize, key: u64, event: &zk::WatchedEvent) {
        let slot = &mut self.slots[client];
        if slot.armed.remove(&key).is_none() {
            return; // the same notification, already delivered through another watcher
        }
        let Some(event) = ops::map_event(event) else {
            return; // a session's end, reported by the state watcher
        };
        // Every other armed watcher on this path that hears this kind got the
        // very same notification in the same dispatch: drop them.
        slot.armed
            .retain(|_, (path, class)| !(path == &event.path && class.hears(event.kind)));
        self.deliver(client, Delivery::Watch(event.clone()));
        self.feed(client, |c, cx| c.on_watch(event, cx));
    }

    fn on_state(
        &mut self,
        client: usize,
        epoch: u32,
        session: SessionId,
        state: zk::SessionState,
        watcher: zk::StateWatcher,
    ) {
        let current = self.slots[client].epoch == epoch;
        let event = match state {
            zk::SessionState::Disconnected => SessionEvent::Disconnected,
            zk::SessionState::SyncConnected => SessionEvent::SyncConnected,
            zk::SessionState::Expired => SessionEvent::Expired,
            zk::SessionState::Closed | zk::SessionState::AuthFailed => {
                self.record(Happening::SessionEnded {
                    session,
                    expired: false,
                });
                if current {
                    self.slots[client].handle = Handle::Ended;
                }
                return;
            }
            zk::SessionState::ConnectedReadOnly => {
                self.push_state_watcher(client, epoch, session, watcher);
                return;
            }
        };
        if event == SessionEvent::Expired {
            self.record(Happening::SessionEnded {
                session,
                expired: true,
            });
        } else {
            self.push_state_watcher(client, epoch, session, watcher);
        }
        if !current {
            return;
        }
        if event == SessionEvent::Expired {
            self.slots[client].handle = Handle::Ended;
        }
        if event == SessionEvent::Disconnected {
            // The library reports the state first and then fails the
            // connection's outstanding requests, all in one go; the Java
            // client (`ClientCnxn.cleanAndNotifyState`) fails them first.
            // Queueing the event behind those failures restores Java's order.
            self.set.push(std::future::ready(Outcome::Deferred {
                client,
                epoch,
                event,
            }));
            return;
        }
        self.deliver(client, Delivery::Session(event));
        self.feed(client, |c, cx| c.on_session(event, cx));
    }

    fn on_reopened(&mut self, client: usize, result: Result<zk::Client, zk::Error>) {
        let Ok(handle) = result else {
            // Like a fresh Java handle, keep trying until the run ends.
            self.reopen_after(client, Duration::from_millis(100));
            return;
        };
        let session = handle.session_id().0;
        self.sessions[client].push(session);
        let slot = &mut self.slots[client];
        slot.epoch += 1;
        slot.session = session;
        slot.armed.clear();
        self.watch_state(client, &handle);
        self.slots[client].handle = Handle::Live(handle);
        // Ops sent while reconnecting go out first, in their order; the
        // client hears `SyncConnected` before any of their replies.
        for (op, request) in std::mem::take(&mut self.slots[client].parked) {
            self.dispatch(client, op, request);
        }
        let event = SessionEvent::SyncConnected;
        self.deliver(client, Delivery::Session(event));
        self.feed(client, |c, cx| c.on_session(event, cx));
    }

    /// Close every live session and wait (up to `patience`) for the server
    /// to confirm each, recording `SessionEnded`.
    async fn close_all(&mut self, patience: Duration) {
        for slot in &mut self.slots {
            if matches!(slot.handle, Handle::Live(_)) {
                slot.handle = Handle::Closing;
            }
        }
        let deadline = Instant::now() + patience;
        while self
            .slots
            .iter()
            .any(|s| matches!(s.handle, Handle::Closing))
        {
            let outcome = tokio::select! {
                outcome = self.set.next() => outcome,
                () = tokio::time::sleep_until(deadline) => return,
            };
            // Clients are no longer fed; only the end of sessions matters now.
            if let Outcome::State {
                client,
                epoch,
                session,
                state,
                watcher,
            } = outcome
            {
                match state {
                    zk::SessionState::Closed | zk::SessionState::Expired => {
                        self.record(Happening::SessionEnded {
                            session,
                            expired: state == zk::SessionState::Expired,
                        });
                        if self.slots[client].epoch == epoch {
                            self.slots[client].handle = Handle::Ended;
                        }
                    }
                    _ => self.push_state_watcher(client, epoch, session, watcher),
                }
            }
        }
    }

    fn finish(self, finished: bool) -> RealRun<C> {
        RealRun {
            log: self.log,
            at: self.at,
            sessions: self.sessions,
            clients: self.slots.into_iter().map(|s| s.client).collect(),
            finished,
            elapsed: self.start.elapsed(),
        }
    }
}

async fn open_session(
    connect_string: String,
    session_timeout: Duration,
) -> Result<zk::Client, zk::Error> {
    zk::Client::connector()
        .with_session_timeout(session_timeout)
        .connect(&connect_string)
        .await
}
