//! Cues for replaying a checker counterexample with real recipes on the
//! real ensemble: the recipes run unchanged under the async driver
//! ([`crate::drive`]), each wrapped in a [`Cued`] that
//!
//! * holds its `start` until a test opens its **gate** (so that the clients
//!   act in the order the counterexample needs, e.g. the victim first);
//! * records every op it sends, where a conducting thread can wait for it
//!   ([`Cue::wait_sent`]);
//! * runs **hooks** at the moment the recipe sends a given op, *before* the
//!   driver puts it on the wire — the only way to, say, hold the reply of
//!   exactly the create whose answer the counterexample loses, or lag a
//!   follower exactly before that create commits.
//!
//! A [`Witness`] is one more client, gated too: once let go it lists a
//! directory and reads each child's `Stat` (its ephemeral owner), so that a
//! judge can see, in the run's own log and order, which nodes a stuck run
//! left and whose they are — before the driver closes the sessions.
//!
//! Everything the hooks do must be quick and non-blocking (flags on proxies
//! or links): they run inside a client's handler on the driver's thread.
//! Waiting (for a reply to be read, a follower to catch up) is the
//! conducting thread's job.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zksim::{Client, Cx, Op, OpId, Reply, Response, SessionEvent, WatchedEvent};

/// What a hook reacts to: an op a client sends.
pub type OpFilter = Box<dyn Fn(&Op) -> bool + Send + Sync>;
/// What a hook does (quick, non-blocking).
pub type Action = Box<dyn Fn() + Send + Sync>;

struct Hook {
    client: usize,
    filter: OpFilter,
    /// Fires on the `nth` matching op of that client (0-based).
    nth: usize,
    seen: usize,
    action: Action,
}

#[derive(Default)]
struct Shared {
    gates: Vec<AtomicBool>,
    started: AtomicUsize,
    sent: Mutex<Vec<(usize, Op)>>,
    replies: Mutex<Vec<(usize, Reply)>>,
    hooks: Mutex<Vec<Hook>>,
}

/// The cues of one run, shared by its [`Cued`] clients and the test that
/// conducts it.
#[derive(Clone)]
pub struct Cue(Arc<Shared>);

impl fmt::Debug for Cue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cue")
            .field("started", &self.0.started.load(Ordering::SeqCst))
            .finish()
    }
}

/// How often a gated client looks at its gate, in ticks.
const GATE_POLL_TICKS: u64 = 1;
/// How often the conducting thread looks at what was sent.
const POLL: Duration = Duration::from_millis(5);

impl Cue {
    /// Cues for `clients` clients, every gate closed.
    pub fn new(clients: usize) -> Self {
        Cue(Arc::new(Shared {
            gates: (0..clients).map(|_| AtomicBool::new(false)).collect(),
            ..Shared::default()
        }))
    }

    /// Let client `k` start (at its next look, within a tick).
    pub fn open(&self, k: usize) {
        self.0.gates[k].store(true, Ordering::SeqCst);
    }

    fn is_open(&self, k: usize) -> bool {
        self.0.gates[k].load(Ordering::SeqCst)
    }

    /// How many clients the driver has started (gated or not): all of them
    /// once every session is connected.
    pub fn started(&self) -> usize {
        self.0.started.load(Ordering::SeqCst)
    }

    /// Run `action` when client `client` sends its `nth` (0-based) op that
    /// `filter` accepts, before the op reaches the wire.
    pub fn on_send(&self, client: usize, nth: usize, filter: OpFilter, action: Action) {
        self.lock_hooks().push(Hook {
            client,
            filter,
            nth,
            seen: 0,
            action,
        });
    }

    /// Drop every hook (and what it holds: proxies, the ensemble), so
    /// that nothing of a finished run keeps the servers alive.
    pub fn clear_hooks(&self) {
        self.lock_hooks().clear();
    }

    fn lock_hooks(&self) -> std::sync::MutexGuard<'_, Vec<Hook>> {
        self.0
            .hooks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_sent(&self) -> std::sync::MutexGuard<'_, Vec<(usize, Op)>> {
        self.0
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every op sent so far, `(client, op)`, in the order sent.
    pub fn sent(&self) -> Vec<(usize, Op)> {
        self.lock_sent().clone()
    }

    /// How many ops client `k` sent that `filter` accepts.
    pub fn count_sent(&self, k: usize, filter: &dyn Fn(&Op) -> bool) -> usize {
        self.lock_sent()
            .iter()
            .filter(|(c, op)| *c == k && filter(op))
            .count()
    }

    /// Every reply the clients received so far, `(client, reply)`.
    pub fn replies(&self) -> Vec<(usize, Reply)> {
        self.0
            .replies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn note_reply(&self, k: usize, reply: &Reply) {
        self.0
            .replies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((k, reply.clone()));
    }

    /// Wait until client `k` has sent `n` ops that `filter` accepts.
    pub fn wait_sent(
        &self,
        k: usize,
        n: usize,
        filter: &dyn Fn(&Op) -> bool,
        limit: Duration,
    ) -> Result<(), String> {
        wait_until(limit, &format!("client {k} to send {n} such ops"), || {
            self.count_sent(k, filter) >= n
        })
    }

    fn note_sent(&self, k: usize, ops: &[(OpId, Op)]) {
        if ops.is_empty() {
            return;
        }
        self.lock_sent()
            .extend(ops.iter().map(|(_, op)| (k, op.clone())));
        let mut hooks = self.lock_hooks();
        for (_, op) in ops {
            for hook in hooks.iter_mut() {
                if hook.client != k || !(hook.filter)(op) {
                    continue;
                }
                if hook.seen == hook.nth {
                    (hook.action)();
                }
                hook.seen += 1;
            }
        }
    }
}

/// Poll `ready` every few milliseconds until it holds, or fail after `limit`.
pub fn wait_until(
    limit: Duration,
    what: &str,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let started = Instant::now();
    while !ready() {
        if started.elapsed() > limit {
            return Err(format!("waited {limit:?} for {what}"));
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

/// The witness: lists `dir` and reads each child's `Stat`, once let go.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Witness {
    dir: String,
    /// Children whose `exists` is not answered yet.
    waiting: usize,
    listed: bool,
}

impl Witness {
    pub fn new(dir: impl Into<String>) -> Self {
        Witness {
            dir: dir.into(),
            waiting: 0,
            listed: false,
        }
    }

    fn start<E>(&mut self, cx: &mut Cx<E>) {
        cx.send(Op::GetChildren {
            path: self.dir.clone(),
            watch: false,
        });
    }

    fn on_reply<E>(&mut self, reply: Reply, cx: &mut Cx<E>) {
        match reply {
            Ok(Response::Children { mut names, .. }) if !self.listed => {
                self.listed = true;
                names.sort();
                self.waiting = names.len();
                for name in names {
                    cx.send(Op::Exists {
                        path: format!("{}/{name}", self.dir),
                        watch: false,
                    });
                }
            }
            _ if !self.listed => self.listed = true,
            _ => self.waiting = self.waiting.saturating_sub(1),
        }
    }

    fn is_done(&self) -> bool {
        self.listed && self.waiting == 0
    }
}

/// What a [`Cued`] wraps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role<C> {
    Recipe(C),
    Witness(Witness),
}

/// A client behind a gate, whose sends are recorded and may fire hooks.
#[derive(Clone, Debug)]
pub struct Cued<C> {
    pub role: Role<C>,
    index: usize,
    started: bool,
    cue: Cue,
}

impl<C: PartialEq> PartialEq for Cued<C> {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role
            && self.index == other.index
            && self.started == other.started
            && Arc::ptr_eq(&self.cue.0, &other.cue.0)
    }
}

impl<C: Eq> Eq for Cued<C> {}

impl<C: Hash> Hash for Cued<C> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.role.hash(state);
        self.index.hash(state);
        self.started.hash(state);
    }
}

impl<C> Cued<C> {
    /// Client `index` of the run, playing `role`, behind its gate in `cue`.
    pub fn new(index: usize, role: Role<C>, cue: &Cue) -> Self {
        Cued {
            role,
            index,
            started: false,
            cue: cue.clone(),
        }
    }
}

impl<C: Client> Cued<C> {
    /// Call the wrapped client's handler (when started), then note and hook
    /// what it sent.
    fn forward(
        &mut self,
        cx: &mut Cx<C::Event>,
        recipe: impl FnOnce(&mut C, &mut Cx<C::Event>),
        witness: impl FnOnce(&mut Witness, &mut Cx<C::Event>),
    ) {
        if !self.started {
            return;
        }
        let before = cx.sent().len();
        match &mut self.role {
            Role::Recipe(c) => recipe(c, cx),
            Role::Witness(w) => witness(w, cx),
        }
        self.cue.note_sent(self.index, &cx.sent()[before..]);
    }

    fn try_start(&mut self, cx: &mut Cx<C::Event>) {
        if self.cue.is_open(self.index) {
            self.started = true;
            self.forward(cx, |c, cx| c.start(cx), |w, cx| w.start(cx));
        } else {
            cx.after(GATE_POLL_TICKS);
        }
    }
}

impl<C: Client> Client for Cued<C> {
    type Event = C::Event;

    fn start(&mut self, cx: &mut Cx<C::Event>) {
        self.cue.0.started.fetch_add(1, Ordering::SeqCst);
        self.try_start(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<C::Event>) {
        self.cue.note_reply(self.index, &reply);
        let copy = reply.clone();
        self.forward(
            cx,
            |c, cx| c.on_reply(op, reply, cx),
            |w, cx| w.on_reply(copy, cx),
        );
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<C::Event>) {
        self.forward(cx, |c, cx| c.on_watch(event, cx), |_, _| {});
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<C::Event>) {
        self.forward(cx, |c, cx| c.on_session(event, cx), |_, _| {});
    }

    fn on_timer(&mut self, cx: &mut Cx<C::Event>) {
        if self.started {
            self.forward(cx, |c, cx| c.on_timer(cx), |_, _| {});
        } else {
            self.try_start(cx);
        }
    }

    fn is_done(&self) -> bool {
        match &self.role {
            Role::Recipe(c) => self.started && c.is_done(),
            Role::Witness(w) => w.is_done(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zksim::CreateMode;

    /// A client that sends two creates at start.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Two;
    impl Client for Two {
        type Event = ();
        fn start(&mut self, cx: &mut Cx<()>) {
            for _ in 0..2 {
                cx.send(Op::Create {
                    path: "/a".into(),
                    data: Vec::new(),
                    mode: CreateMode::Persistent,
                });
            }
        }
        fn on_reply(&mut self, _: OpId, _: Reply, _: &mut Cx<()>) {}
        fn on_watch(&mut self, _: WatchedEvent, _: &mut Cx<()>) {}
        fn on_session(&mut self, _: SessionEvent, _: &mut Cx<()>) {}
        fn on_timer(&mut self, _: &mut Cx<()>) {}
        fn is_done(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_gate_holds_the_start_and_a_hook_fires_on_the_nth_matching_send() {
        let cue = Cue::new(1);
        let fired = Arc::new(AtomicUsize::new(0));
        let count = fired.clone();
        cue.on_send(
            0,
            1,
            Box::new(|op| matches!(op, Op::Create { .. })),
            Box::new(move || {
                count.fetch_add(1, Ordering::SeqCst);
            }),
        );
        let mut c = Cued::new(0, Role::Recipe(Two), &cue);
        let mut cx = Cx::new(0, 1, 0);
        c.start(&mut cx);
        assert!(cx.sent().is_empty(), "gated");
        assert!(!c.is_done(), "a gated client has not done its work");
        cue.open(0);
        let mut cx = Cx::new(1, 1, 0);
        c.on_timer(&mut cx);
        assert_eq!(cx.sent().len(), 2);
        assert_eq!(fired.load(Ordering::SeqCst), 1, "the second create only");
        assert_eq!(cue.count_sent(0, &|op| matches!(op, Op::Create { .. })), 2);
    }
}
