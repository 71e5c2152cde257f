//! Port of Apache ZooKeeper's `recipes.queue.DistributedQueue` as seed 002
//! prints it (stored text lines 755-1032, HTML stripped).
//!
//! Clients: even indices produce, odd indices consume. Producer `p` offers
//! `workload.rounds` items numbered `client * 1_000_000 + k` (the number is
//! the node's data, in decimal), thinking `think_ticks` between offers. The
//! items are shared among the consumers as evenly as possible (lower ranks
//! take one more); a consumer stops after its share. Two variants:
//! `seed002-queue` consumers call `take()`; `seed002-queue-poll` consumers
//! call `peek()` and, when it saw something, `poll()`, sleeping `think_ticks`
//! (at least one) after an empty answer.
//!
//! | article line | Java | port |
//! |---|---|---|
//! | 774-785 | constructor: `exists(dir)`, null → `create(dir, PERSISTENT)`; errors logged | `Exists{dir}` (+ `Create`), any error ignored |
//! | 793-819 | `orderedChildren`: `getChildren(dir, watcher)`; keep `qn-<long>` names in a `TreeMap` | same (numeric order) |
//! | 870-898 | `element()`: list; empty → `NoSuchElementException`; `getData` heads in order, `NoNode` → next head; all gone → list again | same |
//! | 908-931 | `remove()`: as `element` but `getData` then `delete(path,-1)`; `NoNode` on either → next head | same |
//! | 958-986 | `take()`: list **with** a `LatchChildWatcher`; empty → `await()`; then as `remove` | `GetChildren{watch: true}`; empty → wait for a child event on `dir` **or any connection-state event** (the Java client hands those to every watcher: the latch opens on `Disconnected` too); `NoNode` on the list → `create(dir)` and loop |
//! | 993-1002 | `offer`: `create(dir/qn-, PERSISTENT_SEQUENTIAL)`; `NoNode` → `create(dir)`, loop | same; `Offered` when the create is confirmed |
//! | 1010-1030 | `peek` / `poll`: `element` / `remove`, `null` when empty | same |
//! | — | `ConnectionLoss` / `SessionExpired` anywhere in these methods | not caught: thrown to the program, which stops and closes its handle |
//!
//! Expected bugs (**queue** property unless said otherwise):
//! - a `ConnectionLoss` on the consumer's `delete` after it was applied: the
//!   item is gone and nobody reports `Taken` — lost (W7); the consumer stops.
//! - a `ConnectionLoss` on an `offer` whose create applied: the item is in the
//!   queue but never `Offered` (a consumer may then take an unoffered item);
//!   the producer stops and its later items are never offered.
//! - `take()` woken by `Disconnected` lists at once, gets `ConnectionLoss`
//!   and throws: a connection blip on an idle consumer kills it (**liveness**:
//!   remaining items are never taken).
//! - **herd**: every waiting consumer watches the queue node's children, so
//!   one offer wakes them all.

use zksim::{
    Client, CreateMode, Cx, Op, OpId, Reply, Response, SessionEvent, WatchedEvent, ZkError,
};

use crate::{AppEvent, Recipe, RecipeParams};

const PREFIX: &str = "qn-";

/// Which `DistributedQueue` method the consumer is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Method {
    /// `take()`
    Take,
    /// `remove()` (through `poll()`)
    Remove,
    /// `element()` (through `peek()`)
    Element,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    Idle,
    CtorExists(OpId),
    CtorCreate(OpId),
    Offer(OpId),
    OfferMkdir(OpId),
    List(OpId, Method),
    TakeMkdir(OpId),
    /// `childWatcher.await()`
    Await,
    /// Reading (or, with `data`, deleting) `heads[idx]`.
    Head {
        op: OpId,
        method: Method,
        heads: Vec<String>,
        idx: usize,
        data: Option<Vec<u8>>,
    },
    Sleeping,
    Finished,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Role {
    Producer { client: u64, offered: u32 },
    Consumer { taken: u32, share: u32 },
}

/// `DistributedQueue`; `POLL` selects the `peek`/`poll` consumers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DistributedQueue<const POLL: bool> {
    dir: String,
    role: Role,
    rounds: u32,
    think: u64,
    step: Step,
}

/// Consumers call `take()`.
pub type TakeQueue = DistributedQueue<false>;
/// Consumers call `peek()` then `poll()`.
pub type PollQueue = DistributedQueue<true>;

impl<const POLL: bool> Recipe for DistributedQueue<POLL> {
    const FAMILY: crate::Family = crate::Family::Queue;
    fn new(p: &RecipeParams) -> Self {
        let producers = p.clients.div_ceil(2) as u32;
        let consumers = (p.clients / 2) as u32;
        let role = if p.client % 2 == 0 {
            Role::Producer {
                client: p.client as u64,
                offered: 0,
            }
        } else {
            let rank = (p.client / 2) as u32;
            let total = producers * p.workload.rounds;
            let share = total / consumers + u32::from(rank < total % consumers);
            Role::Consumer { taken: 0, share }
        };
        DistributedQueue {
            dir: p.root.clone(),
            role,
            rounds: p.workload.rounds,
            think: p.workload.think_ticks,
            step: Step::Idle,
        }
    }
}

impl<const POLL: bool> DistributedQueue<POLL> {
    /// An exception reached the program: it stops and closes its handle.
    fn stop(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Finished;
        cx.close_session();
    }

    /// The program's next call, or the end.
    fn next(&mut self, cx: &mut Cx<AppEvent>) {
        match self.role {
            Role::Producer { offered, .. } if offered < self.rounds => self.offer(cx),
            Role::Consumer { taken, share } if taken < share => {
                self.list(if POLL { Method::Element } else { Method::Take }, cx)
            }
            _ => self.stop(cx),
        }
    }

    fn sleep(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Sleeping;
        cx.after(self.think.max(1));
    }

    fn offer(&mut self, cx: &mut Cx<AppEvent>) {
        let Role::Producer { client, offered } = self.role else {
            return;
        };
        let item = client * 1_000_000 + u64::from(offered);
        let op = cx.send(Op::Create {
            path: format!("{}/{}", self.dir, PREFIX),
            data: item.to_string().into_bytes(),
            mode: CreateMode::PersistentSequential,
        });
        self.step = Step::Offer(op);
    }

    fn mkdir(&self, cx: &mut Cx<AppEvent>) -> OpId {
        cx.send(Op::Create {
            path: self.dir.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        })
    }

    /// `orderedChildren(watcher)`; only `take()` passes a watcher.
    fn list(&mut self, method: Method, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::GetChildren {
            path: self.dir.clone(),
            watch: method == Method::Take,
        });
        self.step = Step::List(op, method);
    }

    /// The `qn-<long>` children in id order (the `TreeMap`).
    fn ordered(names: Vec<String>) -> Vec<String> {
        let mut ids: Vec<(i64, String)> = names
            .into_iter()
            .filter_map(|n| {
                let id = n.strip_prefix(PREFIX)?.parse::<i64>().ok()?;
                Some((id, n))
            })
            .collect();
        ids.sort();
        ids.dedup_by_key(|(id, _)| *id); // TreeMap.put keeps one per id
        ids.into_iter().map(|(_, n)| n).collect()
    }

    fn read_head(&mut self, method: Method, heads: Vec<String>, idx: usize, cx: &mut Cx<AppEvent>) {
        let Some(head) = heads.get(idx) else {
            // Every head was gone: `while (true)` lists again.
            return self.list(method, cx);
        };
        let op = cx.send(Op::GetData {
            path: format!("{}/{}", self.dir, head),
            watch: false,
        });
        self.step = Step::Head {
            op,
            method,
            heads,
            idx,
            data: None,
        };
    }

    /// The method returned `data` (or `null` for an empty queue).
    fn returned(&mut self, method: Method, data: Option<Vec<u8>>, cx: &mut Cx<AppEvent>) {
        match (method, data) {
            (Method::Element, Some(_)) => self.list(Method::Remove, cx),
            (Method::Element | Method::Remove, None) => self.sleep(cx),
            (Method::Take | Method::Remove, Some(data)) => {
                let item = String::from_utf8_lossy(&data).parse::<u64>().ok();
                if let Some(item) = item {
                    cx.emit(AppEvent::Taken { item });
                }
                if let Role::Consumer { taken, .. } = &mut self.role {
                    *taken += 1;
                }
                self.step = Step::Idle;
                self.next(cx);
            }
            (Method::Take, None) => self.step = Step::Await,
        }
    }

    fn on_head(&mut self, step: Step, reply: Reply, cx: &mut Cx<AppEvent>) {
        let Step::Head {
            method,
            heads,
            idx,
            data,
            ..
        } = step
        else {
            return;
        };
        match (reply, data) {
            (Ok(Response::Data { data, .. }), None) if method == Method::Element => {
                self.returned(method, Some(data), cx)
            }
            (Ok(Response::Data { data, .. }), None) => {
                let op = cx.send(Op::Delete {
                    path: format!("{}/{}", self.dir, heads[idx]),
                    version: -1,
                });
                self.step = Step::Head {
                    op,
                    method,
                    heads,
                    idx,
                    data: Some(data),
                };
            }
            (Ok(_), Some(data)) => self.returned(method, Some(data), cx),
            (Err(ZkError::NoNode), _) => self.read_head(method, heads, idx + 1, cx),
            _ => self.stop(cx),
        }
    }
}

impl<const POLL: bool> Client for DistributedQueue<POLL> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Exists {
            path: self.dir.clone(),
            watch: false,
        });
        self.step = Step::CtorExists(op);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        let step = self.step.clone();
        match step {
            Step::CtorExists(id) if id == op => match reply {
                Ok(Response::Exists(None)) => {
                    let op = self.mkdir(cx);
                    self.step = Step::CtorCreate(op);
                }
                _ => self.next(cx),
            },
            Step::CtorCreate(id) if id == op => self.next(cx),
            Step::Offer(id) if id == op => match reply {
                Ok(_) => {
                    if let Role::Producer { client, offered } = &mut self.role {
                        let item = *client * 1_000_000 + u64::from(*offered);
                        cx.emit(AppEvent::Offered { item });
                        *offered += 1;
                    }
                    if matches!(self.role, Role::Producer { offered, .. } if offered < self.rounds)
                    {
                        self.sleep(cx);
                    } else {
                        self.stop(cx);
                    }
                }
                Err(ZkError::NoNode) => {
                    let op = self.mkdir(cx);
                    self.step = Step::OfferMkdir(op);
                }
                Err(_) => self.stop(cx),
            },
            Step::OfferMkdir(id) if id == op => match reply {
                Ok(_) => self.offer(cx),
                Err(_) => self.stop(cx),
            },
            Step::List(id, method) if id == op => match reply {
                Ok(Response::Children { names, .. }) => {
                    let heads = Self::ordered(names);
                    if heads.is_empty() {
                        self.returned(method, None, cx);
                    } else {
                        self.read_head(method, heads, 0, cx);
                    }
                }
                Err(ZkError::NoNode) if method == Method::Take => {
                    let op = self.mkdir(cx);
                    self.step = Step::TakeMkdir(op);
                }
                Err(ZkError::NoNode) => self.returned(method, None, cx),
                _ => self.stop(cx),
            },
            Step::TakeMkdir(id) if id == op => match reply {
                Ok(_) => self.list(Method::Take, cx),
                Err(_) => self.stop(cx),
            },
            Step::Head { op: id, .. } if id == op => self.on_head(step, reply, cx),
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.step == Step::Await && event.path == self.dir {
            self.list(Method::Take, cx);
        }
    }

    fn on_session(&mut self, _: SessionEvent, cx: &mut Cx<AppEvent>) {
        // LatchChildWatcher.process counts down on any event, None included.
        if self.step == Step::Await {
            self.list(Method::Take, cx);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        if self.step == Step::Sleeping {
            self.step = Step::Idle;
            self.next(cx);
        }
    }

    fn is_done(&self) -> bool {
        self.step == Step::Finished
    }
}
