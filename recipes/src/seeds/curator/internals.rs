//! Curator's `LockInternals` + `StandardLockInternalsDriver` + the protected
//! `create()` and the `RetryLoop`, as one sans-IO machine shared by the
//! mutex and the leader selector ports. See [`super`] for the line table.

use zksim::{CreateMode, Cx, Op, OpId, Reply, Response, Tick, ZkError};

use super::super::app::{base_name, ms_to_ticks, Alarms};
use crate::AppEvent;

/// `ExponentialBackoffRetry(1000, 3)` from the article.
pub const MAX_RETRIES: u32 = 3;
const BASE_SLEEP_MS: i64 = 1000;
/// Curator's lock node name (`InterProcessMutex.LOCK_NAME`).
pub const LOCK_NAME: &str = "lock-";

/// `baseSleepTimeMs * max(1, random.nextInt(1 << (retryCount + 1)))`: the
/// port takes the middle of the range, `2^retryCount`, to stay deterministic.
pub fn backoff_ticks(retry_count: u32) -> Tick {
    ms_to_ticks(BASE_SLEEP_MS << retry_count.min(20))
}

/// The client's single timer, shared between the recipe and its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alarm {
    Hold,
    Think,
    /// `RetryLoop` / `allowRetry` sleep.
    Retry,
    /// `acquire(maxWait)`: `wait(millisToWait)` runs out.
    MaxWait,
}

/// Which call the retry sleep will redo.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Redo {
    /// The protected create (not the first time: look for our node first).
    Create,
    List,
    WatchPred(String),
    Release,
    /// `attemptLock`'s `allowRetry` after a `NoNode`: start over.
    Attempt,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    Idle,
    Create(OpId),
    FindProtected(OpId),
    /// `creatingParentsIfNeeded`: make the lock's parent, then create again.
    Mkdirs(OpId),
    List(OpId),
    WatchPred(OpId, String),
    /// Observer-only read of a node found by its protected id, for the fence.
    Fence(OpId),
    /// `wait()` in `internalLockLoop`.
    Waiting,
    Sleep(Redo),
    Release(OpId),
}

/// What a reply, event or timer did to the lock, for the wrapper to act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    Nothing,
    Enqueued(Option<i64>),
    /// `acquire` returned true; the fence is our node's czxid.
    Acquired(i64),
    /// `acquire(maxWait)` returned false (our node was deleted).
    TimedOut,
    /// An exception left `acquire`.
    Failed,
    /// `release()` returned or threw.
    Released,
}

/// `LockInternals` for one client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Internals {
    base: String,
    client: usize,
    /// Counts `create()` builders, to make each protected id unique.
    builders: u32,
    protected_id: String,
    our_path: Option<String>,
    fence: i64,
    step: Step,
    /// The current `RetryLoop`'s count.
    retries: u32,
    /// `attemptLock`'s own `retryCount`.
    attempt_retries: u32,
    deadline: Option<Tick>,
    max_wait: Option<Tick>,
    /// Background work that failed and waits for the next reconnect.
    guaranteed: Vec<Background>,
    background: Vec<(OpId, Background)>,
}

/// Curator's background operations the port models.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Background {
    /// `delete().guaranteed()` of a path.
    Delete(String),
    /// `FindAndDeleteProtectedNodeInBackground` (CURATOR-45/79): list the
    /// parent and delete the child carrying this protected id.
    FindAndDelete(String),
}

impl Internals {
    pub fn new(base: &str, client: usize, max_wait: Option<Tick>) -> Self {
        Internals {
            base: base.to_string(),
            client,
            builders: 0,
            protected_id: String::new(),
            our_path: None,
            fence: 0,
            step: Step::Idle,
            retries: 0,
            attempt_retries: 0,
            deadline: None,
            max_wait,
            guaranteed: Vec::new(),
            background: Vec::new(),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.step == Step::Idle
    }

    /// `acquire()`: `attemptLock`.
    pub fn acquire(&mut self, cx: &mut Cx<AppEvent>, alarms: &mut Alarms<Alarm>) {
        self.attempt_retries = 0;
        self.deadline = None;
        if let Some(wait) = self.max_wait {
            self.deadline = Some(cx.now() + wait);
            alarms.set(Alarm::MaxWait, wait, cx);
        }
        self.attempt(cx);
    }

    /// One pass of `attemptLock`'s loop: a fresh protected create.
    fn attempt(&mut self, cx: &mut Cx<AppEvent>) {
        self.builders += 1;
        // UUID.randomUUID(), made deterministic.
        self.protected_id = format!(
            "_c_{:08x}-0000-4000-8000-{:012x}-",
            self.client, self.builders
        );
        self.our_path = None;
        self.retries = 0;
        self.create(cx);
    }

    fn create(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: format!("{}/{}{}", self.base, self.protected_id, LOCK_NAME),
            data: format!("client-{}", self.client).into_bytes(),
            mode: CreateMode::EphemeralSequential,
        });
        self.step = Step::Create(op);
    }

    fn list(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::GetChildren {
            path: self.base.clone(),
            watch: false,
        });
        self.step = Step::List(op);
    }

    fn watch_pred(&mut self, pred: String, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::GetData {
            path: pred.clone(),
            watch: true,
        });
        self.step = Step::WatchPred(op, pred);
    }

    /// `RetryLoop.takeException`: retry after a sleep, or give up.
    fn retry_or(
        &mut self,
        err: ZkError,
        redo: Redo,
        cx: &mut Cx<AppEvent>,
        alarms: &mut Alarms<Alarm>,
    ) -> bool {
        let retryable = matches!(
            err,
            ZkError::ConnectionLoss
                | ZkError::OperationTimeout
                | ZkError::SessionMoved
                | ZkError::SessionExpired
        );
        if !retryable || self.retries >= MAX_RETRIES {
            return false;
        }
        alarms.set(Alarm::Retry, backoff_ticks(self.retries), cx);
        self.retries += 1;
        self.step = Step::Sleep(redo);
        true
    }

    /// An exception leaves `internalLockLoop`: `deleteOurPath`, rethrow.
    fn fail(&mut self, cx: &mut Cx<AppEvent>, alarms: &mut Alarms<Alarm>) -> Progress {
        self.abort(cx, alarms);
        Progress::Failed
    }

    /// Stop acquiring (exception, interrupt or timeout) and delete our node.
    pub fn abort(&mut self, cx: &mut Cx<AppEvent>, alarms: &mut Alarms<Alarm>) {
        alarms.clear(&Alarm::MaxWait, cx);
        alarms.clear(&Alarm::Retry, cx);
        let creating = matches!(
            self.step,
            Step::Create(_) | Step::FindProtected(_) | Step::Mkdirs(_) | Step::Sleep(Redo::Create)
        );
        self.step = Step::Idle;
        if let Some(path) = self.our_path.take() {
            self.start_background(Background::Delete(path), cx);
        } else if creating {
            // protectedPathInForeground's catch: the create may have made a node.
            let id = self.protected_id.clone();
            self.start_background(Background::FindAndDelete(id), cx);
        }
    }

    fn start_background(&mut self, work: Background, cx: &mut Cx<AppEvent>) {
        let op = match &work {
            Background::Delete(path) => cx.send(Op::Delete {
                path: path.clone(),
                version: -1,
            }),
            Background::FindAndDelete(_) => cx.send(Op::GetChildren {
                path: self.base.clone(),
                watch: false,
            }),
        };
        self.background.push((op, work));
    }

    /// `release()`: `deleteOurPath` in the foreground with retries.
    pub fn release(&mut self, cx: &mut Cx<AppEvent>) {
        self.retries = 0;
        match self.our_path.clone() {
            Some(path) => {
                let op = cx.send(Op::Delete { path, version: -1 });
                self.step = Step::Release(op);
            }
            None => self.step = Step::Idle,
        }
    }

    /// The reconnect (`RECONNECTED`) retries failed guaranteed deletes.
    pub fn reconnected(&mut self, cx: &mut Cx<AppEvent>) {
        for work in std::mem::take(&mut self.guaranteed) {
            self.start_background(work, cx);
        }
    }

    /// The watcher's `notifyAll()` (any event, connection-state ones included).
    pub fn notify(&mut self, cx: &mut Cx<AppEvent>) {
        if self.step == Step::Waiting {
            self.list(cx);
        }
    }

    pub fn on_timer(&mut self, alarm: Alarm, cx: &mut Cx<AppEvent>) {
        match (alarm, self.step.clone()) {
            (Alarm::Retry, Step::Sleep(redo)) => match redo {
                Redo::Create => {
                    // Not the first time through: look for our protected node.
                    let op = cx.send(Op::GetChildren {
                        path: self.base.clone(),
                        watch: false,
                    });
                    self.step = Step::FindProtected(op);
                }
                Redo::List => self.list(cx),
                Redo::WatchPred(pred) => self.watch_pred(pred, cx),
                Redo::Release => self.release_again(cx),
                Redo::Attempt => self.attempt(cx),
            },
            // wait(millisToWait) returned: go round the loop.
            (Alarm::MaxWait, Step::Waiting) => self.list(cx),
            _ => {}
        }
    }

    fn release_again(&mut self, cx: &mut Cx<AppEvent>) {
        let retries = self.retries;
        self.release(cx);
        self.retries = retries;
    }

    pub fn on_reply(
        &mut self,
        op: OpId,
        reply: Reply,
        cx: &mut Cx<AppEvent>,
        alarms: &mut Alarms<Alarm>,
    ) -> Progress {
        if let Some(i) = self.background.iter().position(|(id, _)| *id == op) {
            let (_, work) = self.background.remove(i);
            match (work, reply) {
                (Background::FindAndDelete(id), Ok(Response::Children { names, .. })) => {
                    for name in names.iter().filter(|n| n.starts_with(&id)) {
                        let path = format!("{}/{}", self.base, name);
                        self.start_background(Background::Delete(path), cx);
                    }
                }
                (_, Ok(_) | Err(ZkError::NoNode)) => {}
                (work, Err(_)) => self.guaranteed.push(work),
            }
            return Progress::Nothing;
        }
        match (self.step.clone(), reply) {
            (Step::Create(id), Ok(Response::Created { path, stat })) if id == op => {
                self.fence = stat.czxid;
                let seq = path
                    .rsplit(LOCK_NAME)
                    .next()
                    .and_then(|s| s.parse::<i64>().ok());
                self.our_path = Some(path);
                self.list(cx);
                Progress::Enqueued(seq)
            }
            (Step::Create(id), Err(ZkError::NoNode)) if id == op => {
                let op = cx.send(Op::Create {
                    path: self.base.clone(),
                    data: Vec::new(),
                    mode: CreateMode::Persistent,
                });
                self.step = Step::Mkdirs(op);
                Progress::Nothing
            }
            (Step::Mkdirs(id), Ok(_) | Err(ZkError::NodeExists)) if id == op => {
                self.create(cx);
                Progress::Nothing
            }
            (Step::FindProtected(id), Ok(Response::Children { names, .. })) if id == op => {
                match names.iter().find(|n| n.starts_with(&self.protected_id)) {
                    Some(name) => {
                        let path = format!("{}/{}", self.base, name);
                        self.our_path = Some(path.clone());
                        // Curator goes on with the path; the port first reads the
                        // node's czxid (observer-only) to have a fence.
                        let op = cx.send(Op::Exists { path, watch: false });
                        self.step = Step::Fence(op);
                        Progress::Enqueued(
                            name.rsplit(LOCK_NAME).next().and_then(|s| s.parse().ok()),
                        )
                    }
                    None => {
                        self.create(cx);
                        Progress::Nothing
                    }
                }
            }
            (Step::Fence(id), reply) if id == op => {
                if let Ok(Response::Exists(Some(stat))) = reply {
                    self.fence = stat.czxid;
                }
                self.list(cx);
                Progress::Nothing
            }
            (Step::List(id), Ok(Response::Children { names, .. })) if id == op => {
                self.lock_loop(names, cx, alarms)
            }
            (Step::WatchPred(id, _), Ok(_)) if id == op => {
                if self.deadline.is_some_and(|d| cx.now() >= d) {
                    // millisToWait <= 0: doDelete, break → false.
                    self.abort(cx, alarms);
                    return Progress::TimedOut;
                }
                self.step = Step::Waiting;
                Progress::Nothing
            }
            // The predecessor is already gone: go round again.
            (Step::WatchPred(id, _), Err(ZkError::NoNode)) if id == op => {
                self.retries = 0;
                self.list(cx);
                Progress::Nothing
            }
            (Step::Release(id), Ok(_) | Err(ZkError::NoNode)) if id == op => {
                self.our_path = None;
                self.step = Step::Idle;
                Progress::Released
            }
            (Step::Release(id), Err(err)) if id == op => {
                if self.retry_or(err, Redo::Release, cx, alarms) {
                    return Progress::Nothing;
                }
                // guaranteed(): keep trying in the background; the caller sees the throw.
                if let Some(path) = self.our_path.take() {
                    self.guaranteed.push(Background::Delete(path));
                }
                self.step = Step::Idle;
                Progress::Released
            }
            (Step::Create(id) | Step::FindProtected(id) | Step::Mkdirs(id), Err(err))
                if id == op =>
            {
                if self.retry_or(err, Redo::Create, cx, alarms) {
                    return Progress::Nothing;
                }
                self.fail(cx, alarms)
            }
            (Step::List(id), Err(err)) if id == op => {
                if self.retry_or(err, Redo::List, cx, alarms) {
                    return Progress::Nothing;
                }
                self.fail(cx, alarms)
            }
            (Step::WatchPred(id, pred), Err(err)) if id == op => {
                if self.retry_or(err, Redo::WatchPred(pred), cx, alarms) {
                    return Progress::Nothing;
                }
                self.fail(cx, alarms)
            }
            _ => Progress::Nothing,
        }
    }

    /// One turn of `internalLockLoop` after `getSortedChildren`.
    fn lock_loop(
        &mut self,
        mut names: Vec<String>,
        cx: &mut Cx<AppEvent>,
        alarms: &mut Alarms<Alarm>,
    ) -> Progress {
        self.retries = 0;
        // fixForSorting: the text after the last "lock-", compared as a string.
        names.sort_by(|a, b| fix_for_sorting(a).cmp(fix_for_sorting(b)));
        let ours = self.our_path.as_deref().map(base_name).unwrap_or("");
        let Some(index) = names.iter().position(|n| n == ours) else {
            // validateOurIndex: NoNodeException("Sequential path not found").
            self.abort(cx, alarms);
            if self.attempt_retries < MAX_RETRIES {
                alarms.set(Alarm::Retry, backoff_ticks(self.attempt_retries), cx);
                self.attempt_retries += 1;
                self.step = Step::Sleep(Redo::Attempt);
                return Progress::Nothing;
            }
            return Progress::Failed;
        };
        if index == 0 {
            alarms.clear(&Alarm::MaxWait, cx);
            self.step = Step::Idle;
            return Progress::Acquired(self.fence);
        }
        let pred = format!("{}/{}", self.base, names[index - 1]);
        self.watch_pred(pred, cx);
        Progress::Nothing
    }
}

/// `StandardLockInternalsDriver.standardFixForSorting(str, "lock-")`.
pub fn fix_for_sorting(name: &str) -> &str {
    match name.rfind(LOCK_NAME) {
        Some(i) => &name[i + LOCK_NAME.len()..],
        None => name,
    }
}
