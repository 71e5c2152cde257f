//! The differential fuzzer of the ensemble rules: random ensemble scripts
//! of ops, lags, partitions (healed before or after `syncLimit`), silences
//! and reconnects, played on the simulator and on a real three-server
//! ensemble and compared step by step, as the one-server generator
//! (`conformance_support/generated.rs`) does for one server. A difference
//! is shrunk by proptest (each shrink step on a fresh ensemble) and its seed
//! kept in `tests/ensemble.proptest-regressions`.
//!
//! The generator writes only scripts whose real run is deterministic step
//! by step — the limits of the real side in docs/CONFORMANCE.md
//! ("Ensemble"):
//!
//! * a lag lasts a few steps (well within `syncLimit`, 5 s); sessions on the
//!   lagging follower only read (stale, S28) or `Send` a `sync` (answered
//!   when it catches up, S29), and nothing after a pending `sync`: a write
//!   forwarded from a lagging follower commits at a moment no step marks;
//! * a partition is either short (heal within 4 ticks, far below
//!   `syncLimit` 50 and the session timeout; its sessions read only) or,
//!   in scripts with `syncLimit` 5, long (10 ticks: the follower drops its
//!   clients, each reconnects elsewhere) — never both in one script, and
//!   no lag in the scripts with `syncLimit` 5;
//! * a session reconnects only to a server that neither lags nor is cut
//!   off (barrier reads move its last zxid on the real side only);
//! * a silenced session owns an ephemeral another session watches, and the
//!   script waits for that watch (the leader's expiry) before the silent
//!   client reaches a server again: `zookeeper-client` would declare the
//!   session expired by itself at 7/5·T.

use proptest::prelude::*;
use zkreal::ensemble::script::{EnsembleScript, Step};
use zksim::{CreateMode, Op, SessionEvent};

/// The script's sessions: s0 on the leader, s1 and s2 on the followers.
const SESSIONS: usize = 3;
/// The longest session timeout (S20): the widest margins.
const TIMEOUT: u64 = 20;
const PATHS: [&str; 3] = ["/t/a", "/t/b", "/t/a/c"];

fn path() -> impl Strategy<Value = String> {
    prop::sample::select(&PATHS[..]).prop_map(str::to_string)
}

fn read() -> impl Strategy<Value = Op> {
    prop_oneof![
        (path(), any::<bool>()).prop_map(|(path, watch)| Op::Exists { path, watch }),
        (path(), any::<bool>()).prop_map(|(path, watch)| Op::GetData { path, watch }),
        (prop::sample::select(vec!["/t", "/t/a"]), any::<bool>()).prop_map(|(path, watch)| {
            Op::GetChildren {
                path: path.to_string(),
                watch,
            }
        }),
    ]
}

fn write() -> impl Strategy<Value = Op> {
    let mode = prop::sample::select(vec![
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::PersistentSequential,
    ]);
    prop_oneof![
        3 => (path(), mode).prop_map(|(path, mode)| Op::Create {
            path,
            data: b"x".to_vec(),
            mode
        }),
        2 => path().prop_map(|path| Op::Delete { path, version: -1 }),
        1 => path().prop_map(|path| Op::SetData {
            path,
            data: b"y".to_vec(),
            version: -1
        }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => read(),
        3 => write(),
        1 => Just(Op::Sync { path: "/t".into() }),
    ]
}

/// The write made while a follower is cut off: half of the time one that
/// always succeeds (a new sequential node), so that its stale reads show.
fn cut_off_write() -> impl Strategy<Value = Op> {
    prop_oneof![
        write(),
        Just(Op::Create {
            path: "/t/w-".into(),
            data: b"w".to_vec(),
            mode: CreateMode::PersistentSequential,
        }),
    ]
}

/// A read that sets a watch.
fn watched() -> impl Strategy<Value = Op> {
    read().prop_map(|op| match op {
        Op::Exists { path, .. } => Op::Exists { path, watch: true },
        Op::GetData { path, .. } => Op::GetData { path, watch: true },
        Op::GetChildren { path, .. } => Op::GetChildren { path, watch: true },
        other => other,
    })
}

fn is_read(op: &Op) -> bool {
    matches!(
        op,
        Op::Exists { .. } | Op::GetData { .. } | Op::GetChildren { .. }
    )
}

/// One generated episode; indices are taken modulo what exists when the
/// script is built, and an episode that does not fit is left out.
#[derive(Clone, Debug)]
pub enum Gen {
    Op(usize, Op),
    /// Follower `1 + r % 2` lags: a session there may set a watch with
    /// `watch`, a session elsewhere makes `write`, then `ops` run (stale
    /// reads and `sync`s there), and the follower catches up.
    Lag {
        r: usize,
        watch: Option<Op>,
        write: Op,
        ops: Vec<(usize, Op)>,
    },
    /// A partition healed after `sleep` ticks, with `watch`, `write` and
    /// `ops` as in a lag (scripts with `syncLimit` 50), or past `syncLimit`
    /// with every session there moving to `to` (scripts with `syncLimit` 5).
    Partition {
        r: usize,
        watch: Option<Op>,
        write: Op,
        ops: Vec<(usize, Op)>,
        sleep: u64,
        to: usize,
    },
    /// The session's connection breaks (with a write whose answer is lost,
    /// or with nothing in flight) and it reconnects to server `to`.
    Move {
        k: usize,
        to: usize,
        lost: Option<Op>,
    },
    /// The session goes silent until the leader expires it (a watcher's
    /// `NodeDeleted` on its ephemeral), then learns `Expired` at `to`.
    Silence {
        k: usize,
        w: usize,
        to: usize,
    },
}

fn gen() -> impl Strategy<Value = Gen> {
    let ops = || prop::collection::vec((0..SESSIONS, op()), 1..4);
    prop_oneof![
        6 => (0..SESSIONS, op()).prop_map(|(k, op)| Gen::Op(k, op)),
        2 => (0..2usize, prop::option::of(watched()), cut_off_write(), ops())
            .prop_map(|(r, watch, write, ops)| Gen::Lag { r, watch, write, ops }),
        2 => (0..2usize, prop::option::of(watched()), cut_off_write(), ops(), 0..5u64, 0..3usize)
            .prop_map(|(r, watch, write, ops, sleep, to)| Gen::Partition {
                r, watch, write, ops, sleep, to
            }),
        2 => (0..SESSIONS, 0..3usize, prop::option::of(write()))
            .prop_map(|(k, to, lost)| Gen::Move { k, to, lost }),
        1 => (0..SESSIONS, 1..SESSIONS, 0..3usize)
            .prop_map(|(k, w, to)| Gen::Silence { k, w, to }),
    ]
}

/// A generated script: `long` picks `syncLimit` 5 (long partitions, no
/// lags) over 50 (lags, short partitions).
pub fn scripts() -> impl Strategy<Value = (bool, Vec<Gen>)> {
    (
        prop::bool::weighted(0.3),
        prop::collection::vec(gen(), 2..9),
    )
}

struct Builder {
    script: EnsembleScript,
    /// The role of the server each session is at.
    at: [usize; SESSIONS],
    alive: [bool; SESSIONS],
    long: bool,
    silences: usize,
}

impl Builder {
    fn push(&mut self, step: Step) {
        self.script.steps.push(step);
    }

    fn live(&self, k: usize) -> Option<usize> {
        let k = k % SESSIONS;
        self.alive[k].then_some(k)
    }

    /// Before a long partition of follower `r`: each live session there
    /// reads, and a tick passes, so that the follower's next ping has told
    /// the leader. Without it the leader may last have heard from such a
    /// session at its previous idle ping, up to a third of the timeout
    /// before the cut; with the 10-tick cut and the reconnect after it, a
    /// loaded CI machine once went past the 20-tick timeout and the real
    /// leader expired a session the simulator (rightly, by its steps) kept.
    fn touch_sessions_on(&mut self, r: usize) {
        let on_r: Vec<usize> = (0..SESSIONS)
            .filter(|&k| self.alive[k] && self.at[k] == r)
            .collect();
        for &k in &on_r {
            self.push(Step::Op(
                k,
                Op::Exists {
                    path: "/t".into(),
                    watch: false,
                },
            ));
        }
        if !on_r.is_empty() {
            self.push(Step::Sleep(1));
        }
    }

    /// The start of a lag or short partition of follower `r`: a session
    /// there sets `watch` (it fires when `r` applies, S19), and a session
    /// elsewhere makes `write`, which `r` does not have yet (S28).
    fn cut_off_episode(&mut self, r: usize, watch: &Option<Op>, write: &Op) {
        let there = (0..SESSIONS).find(|&k| self.alive[k] && self.at[k] == r);
        let elsewhere = (0..SESSIONS).find(|&k| self.alive[k] && self.at[k] != r);
        if let (Some(k), Some(watch)) = (there, watch) {
            self.push(Step::Op(k, watch.clone()));
        }
        if let Some(k) = elsewhere {
            self.push(Step::Op(k, write.clone()));
        }
        // What the cut-off follower answers now: its own, older state.
        if let (
            Some(k),
            Op::Create { path, .. } | Op::Delete { path, .. } | Op::SetData { path, .. },
        ) = (there, write)
        {
            self.push(Step::Op(
                k,
                Op::GetData {
                    path: path.clone(),
                    watch: false,
                },
            ));
            self.push(Step::Op(
                k,
                Op::GetChildren {
                    path: "/t".into(),
                    watch: false,
                },
            ));
        }
    }

    fn episode(&mut self, gen: &Gen) {
        match gen {
            Gen::Op(k, op) => {
                if let Some(k) = self.live(*k) {
                    self.push(Step::Op(k, op.clone()));
                }
            }
            Gen::Lag {
                r,
                watch,
                write,
                ops,
            } if !self.long => {
                let r = 1 + r % 2;
                self.push(Step::Lag(r));
                self.cut_off_episode(r, watch, write);
                let mut pending = [false; SESSIONS];
                for (k, op) in ops {
                    let Some(k) = self.live(*k) else { continue };
                    if self.at[k] != r {
                        self.push(Step::Op(k, op.clone()));
                    } else if pending[k] {
                    } else if is_read(op) {
                        self.push(Step::Op(k, op.clone()));
                    } else if matches!(op, Op::Sync { .. }) {
                        self.push(Step::Send(k, op.clone()));
                        pending[k] = true;
                    }
                }
                self.push(Step::Unlag(r));
            }
            Gen::Partition {
                r,
                watch,
                write,
                ops,
                sleep,
                to,
            } => {
                let r = 1 + r % 2;
                if self.long {
                    self.touch_sessions_on(r);
                }
                self.push(Step::Partition(r));
                if self.long {
                    self.push(Step::Sleep(10));
                    let to = if to % 3 == r { 0 } else { to % 3 };
                    for k in 0..SESSIONS {
                        if self.alive[k] && self.at[k] == r {
                            self.push(Step::Connect(k, to));
                            self.at[k] = to;
                        }
                    }
                } else {
                    self.cut_off_episode(r, watch, write);
                    for (k, op) in ops {
                        let Some(k) = self.live(*k) else { continue };
                        if self.at[k] != r || is_read(op) {
                            self.push(Step::Op(k, op.clone()));
                        }
                    }
                    if *sleep > 0 {
                        self.push(Step::Sleep(*sleep));
                    }
                }
                self.push(Step::Heal(r));
            }
            Gen::Move { k, to, lost } => {
                let Some(k) = self.live(*k) else { return };
                if let Some(write) = lost {
                    self.push(Step::HoldReplies(k));
                    self.push(Step::Send(k, write.clone()));
                }
                self.push(Step::Drop(k));
                self.push(Step::Connect(k, to % 3));
                self.at[k] = to % 3;
            }
            Gen::Silence { k, w, to } if self.silences == 0 => {
                let Some(k) = self.live(*k) else { return };
                let Some(w) = self.live(k + w) else { return };
                if w == k {
                    return;
                }
                let path = format!("/t/s{k}");
                self.push(Step::Op(
                    k,
                    Op::Create {
                        path: path.clone(),
                        data: Vec::new(),
                        mode: CreateMode::Ephemeral,
                    },
                ));
                self.push(Step::Op(w, Op::Exists { path, watch: true }));
                self.push(Step::Silence(k));
                self.push(Step::AwaitSession(k, SessionEvent::Disconnected));
                self.push(Step::AwaitWatch(w));
                self.push(Step::Connect(k, to % 3));
                self.alive[k] = false;
                self.silences += 1;
            }
            _ => {}
        }
    }
}

/// The script of a generated case.
pub fn script(long: bool, gens: &[Gen]) -> EnsembleScript {
    let sync_limit = if long { 5 } else { 50 };
    let mut b = Builder {
        script: EnsembleScript::new("fuzz", SESSIONS, TIMEOUT).sync_limit(sync_limit),
        at: [0, 1, 2],
        alive: [true; SESSIONS],
        long,
        silences: 0,
    };
    // Some nodes to read, watch, change and delete.
    for path in ["/t/a", "/t/b"] {
        b.push(Step::Op(
            0,
            Op::Create {
                path: path.into(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
            },
        ));
    }
    for gen in gens {
        b.episode(gen);
    }
    // Every live session lists the root at the end: the trees agree too.
    for k in 0..SESSIONS {
        if b.alive[k] {
            b.push(Step::Op(
                k,
                Op::GetChildren {
                    path: "/t".into(),
                    watch: false,
                },
            ));
        }
    }
    b.script
}
