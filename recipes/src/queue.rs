//! A distributed queue that survives connection loss, in two roles that a
//! scenario mixes with `[[clients]]` groups: `queue-producer` offers
//! `workload.rounds` items, `queue-consumer` takes `workload.rounds` items.
//!
//! Layout under the root `<q>`: items are persistent sequential nodes
//! `<q>/qn-p<client>k<k>-<seq>` whose data is the item number
//! (`client * 1_000_000 + k`); a taken item leaves a receipt
//! `<q>-taken/<name>` whose data names the consumer (`c<client>`).
//!
//! Producer: `create` the item; `Offered` on the `Created` reply. When the
//! reply is lost (`ConnectionLoss`), once reconnected: `sync`, then list both
//! `<q>` and `<q>-taken`; a child carrying the item's tag means the create
//! was applied (`Offered`, with no `Created` reply — the case the `queue`
//! monitor must not misplace); otherwise create again.
//!
//! Consumer, per item: `Requested`; list `<q>` with a watch (empty → wait
//! for the child watch or a reconnection); `getData` the lowest item, then
//! take it with one multi — delete the item and create its receipt — so a
//! take is all-or-nothing and leaves evidence. `Taken` on success; a failed
//! multi (another consumer took it) → the next item. When the multi's reply
//! is lost: once reconnected, `sync` (the server reached now may lag behind
//! the leader that applied the take) and read the receipt: `c<self>` → it was taken by
//! this consumer (`Taken`); another name → the next item; none → the multi
//! was not applied: list again.
//!
//! Flaw (`queue-consumer-forget-take`): a lost multi reply is treated as
//! "not taken" — the consumer lists again without reading the receipt. When
//! the multi had been applied the item is gone and nobody ever reports it
//! taken: **queue** breaks (an item lost), and the consumer waits for an
//! item that will never come (**liveness**).

use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, WatchedEvent,
    ZkError,
};

use crate::lock::names::{child_path, sort_by_sequence};
use crate::{AppEvent, Recipe, RecipeParams, Workload};

/// What a queue client does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueRole {
    Producer,
    Consumer,
}

/// The role of a registered queue recipe, by name (for scenario checks:
/// producers must offer as many items as consumers take).
pub fn queue_role(recipe: &str) -> Option<QueueRole> {
    match recipe {
        "queue-producer" => Some(QueueRole::Producer),
        "queue-consumer" | "queue-consumer-forget-take" => Some(QueueRole::Consumer),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// Creating the roots; `last` is the last create's op.
    Roots {
        last: OpId,
    },
    /// Producer: the item's create is out.
    Offering {
        op: OpId,
    },
    /// Producer: `sync` + two listings sent to find a create whose reply
    /// was lost; the replies gathered so far.
    Finding {
        ops: [OpId; 2],
        found: bool,
        replies: u8,
    },
    /// Consumer: listing `<q>` with a watch.
    Listing {
        op: OpId,
    },
    /// Consumer: the queue was empty; waiting for the child watch.
    Empty,
    /// Consumer: reading `heads[idx]`.
    Reading {
        op: OpId,
        heads: Vec<String>,
        idx: usize,
    },
    /// Consumer: the take multi for `heads[idx]` (item `item`) is out.
    Taking {
        op: OpId,
        heads: Vec<String>,
        idx: usize,
        item: u64,
    },
    /// Consumer: reading the receipt of `name` after a lost take.
    Checking {
        op: OpId,
        name: String,
        item: u64,
    },
    /// Between items.
    Thinking,
    /// Thinking is over; the next item starts once reconnected.
    Ready,
    Done,
}

/// One queue client. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueueClient {
    role: QueueRole,
    client: usize,
    root: String,
    workload: Workload,
    /// Items offered or taken so far.
    count: u32,
    stage: Stage,
    connected: bool,
    /// Whether a reply was lost with the connection and the stage must be
    /// resumed once reconnected.
    lost: bool,
    forget_take: bool,
}

impl QueueClient {
    pub fn new(params: &RecipeParams, role: QueueRole, forget_take: bool) -> Self {
        QueueClient {
            role,
            client: params.client,
            root: params.root.trim_end_matches('/').to_string(),
            workload: params.workload,
            count: 0,
            stage: Stage::Done,
            connected: true,
            lost: false,
            forget_take,
        }
    }

    fn receipts(&self) -> String {
        format!("{}-taken", self.root)
    }
    fn tag(&self) -> String {
        format!("qn-p{}k{}-", self.client, self.count)
    }
    fn item(&self) -> u64 {
        self.client as u64 * 1_000_000 + u64::from(self.count)
    }
    fn me(&self) -> Vec<u8> {
        format!("c{}", self.client).into_bytes()
    }

    /// The roots (and their ancestors), persistent, pipelined.
    fn make_roots(&mut self, cx: &mut Cx<AppEvent>) {
        let mut last = None;
        for dir in [self.root.clone(), self.receipts()] {
            let mut path = String::new();
            for part in dir.split('/').filter(|p| !p.is_empty()) {
                path.push('/');
                path.push_str(part);
                last = Some(cx.send(Op::Create {
                    path: path.clone(),
                    data: Vec::new(),
                    mode: CreateMode::Persistent,
                }));
            }
        }
        self.stage = Stage::Roots {
            last: last.expect("two non-empty roots"),
        };
    }

    /// Start the next item, or finish.
    fn next(&mut self, cx: &mut Cx<AppEvent>) {
        if self.count >= self.workload.rounds {
            self.stage = Stage::Done;
            cx.cancel_timer();
            cx.close_session();
            return;
        }
        match self.role {
            QueueRole::Producer => self.offer(cx),
            QueueRole::Consumer => {
                cx.emit(AppEvent::Requested { shared: false });
                self.list(cx);
            }
        }
    }

    fn finished_one(&mut self, cx: &mut Cx<AppEvent>) {
        self.count += 1;
        if self.count >= self.workload.rounds {
            self.next(cx);
        } else {
            self.stage = Stage::Thinking;
            cx.after(self.workload.think_ticks.max(1));
        }
    }

    fn offer(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: child_path(&self.root, &self.tag()),
            data: self.item().to_string().into_bytes(),
            mode: CreateMode::PersistentSequential,
        });
        self.stage = Stage::Offering { op };
    }

    fn find(&mut self, cx: &mut Cx<AppEvent>) {
        cx.send(Op::Sync {
            path: self.root.clone(),
        });
        let a = cx.send(Op::GetChildren {
            path: self.root.clone(),
            watch: false,
        });
        let b = cx.send(Op::GetChildren {
            path: self.receipts(),
            watch: false,
        });
        self.stage = Stage::Finding {
            ops: [a, b],
            found: false,
            replies: 0,
        };
    }

    fn list(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::GetChildren {
            path: self.root.clone(),
            watch: true,
        });
        self.stage = Stage::Listing { op };
    }

    fn read(&mut self, heads: Vec<String>, idx: usize, cx: &mut Cx<AppEvent>) {
        let Some(name) = heads.get(idx) else {
            return self.list(cx);
        };
        let op = cx.send(Op::GetData {
            path: child_path(&self.root, name),
            watch: false,
        });
        self.stage = Stage::Reading { op, heads, idx };
    }

    fn take(&mut self, heads: Vec<String>, idx: usize, item: u64, cx: &mut Cx<AppEvent>) {
        let name = &heads[idx];
        let op = cx.send(Op::Multi(vec![
            Op::Delete {
                path: child_path(&self.root, name),
                version: -1,
            },
            Op::Create {
                path: child_path(&self.receipts(), name),
                data: self.me(),
                mode: CreateMode::Persistent,
            },
        ]));
        self.stage = Stage::Taking {
            op,
            heads,
            idx,
            item,
        };
    }

    /// Read the receipt of `name`, after a `sync`: the server we reach now
    /// may lag behind the leader, which may have applied the take.
    fn check(&mut self, name: String, item: u64, cx: &mut Cx<AppEvent>) {
        cx.send(Op::Sync {
            path: self.receipts(),
        });
        let op = cx.send(Op::GetData {
            path: child_path(&self.receipts(), &name),
            watch: false,
        });
        self.stage = Stage::Checking { op, name, item };
    }

    fn taken(&mut self, item: u64, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Taken { item });
        self.finished_one(cx);
    }

    /// Reconnected after a lost reply: pick the stage up again.
    fn resume(&mut self, cx: &mut Cx<AppEvent>) {
        self.lost = false;
        match self.stage.clone() {
            Stage::Roots { .. } => self.make_roots(cx),
            Stage::Offering { .. } | Stage::Finding { .. } => self.find(cx),
            Stage::Listing { .. } | Stage::Empty | Stage::Reading { .. } => self.list(cx),
            Stage::Taking {
                heads, idx, item, ..
            } => {
                if self.forget_take {
                    // The flaw: a take whose reply was lost did not happen.
                    return self.list(cx);
                }
                self.check(heads[idx].clone(), item, cx);
            }
            Stage::Checking { name, item, .. } => self.check(name, item, cx),
            Stage::Ready => self.next(cx),
            Stage::Thinking | Stage::Done => {}
        }
    }
}

impl Client for QueueClient {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        if self.workload.rounds == 0 {
            return self.next(cx);
        }
        self.make_roots(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        if reply == Err(ZkError::ConnectionLoss) {
            // Whatever the stage waits for is lost; resumed on reconnection.
            self.lost = true;
            return;
        }
        match self.stage.clone() {
            Stage::Roots { last } if last == op => match reply {
                Ok(_) | Err(ZkError::NodeExists) => self.next(cx),
                Err(_) => self.make_roots(cx),
            },
            Stage::Offering { op: want } if want == op => {
                if let Ok(Response::Created { .. }) = reply {
                    cx.emit(AppEvent::Offered { item: self.item() });
                    self.finished_one(cx);
                }
            }
            Stage::Finding {
                ops,
                found,
                replies,
            } if ops.contains(&op) => {
                let tag = self.tag();
                let here = matches!(&reply, Ok(Response::Children { names, .. })
                    if names.iter().any(|n| n.starts_with(&tag)));
                let (found, replies) = (found || here, replies + 1);
                if replies < 2 {
                    self.stage = Stage::Finding {
                        ops,
                        found,
                        replies,
                    };
                } else if found {
                    cx.emit(AppEvent::Offered { item: self.item() });
                    self.finished_one(cx);
                } else {
                    self.offer(cx);
                }
            }
            Stage::Listing { op: want } if want == op => match reply {
                Ok(Response::Children { names, .. }) => {
                    let heads: Vec<String> = sort_by_sequence(&names)
                        .into_iter()
                        .map(|s| s.name)
                        .collect();
                    if heads.is_empty() {
                        self.stage = Stage::Empty;
                    } else {
                        self.read(heads, 0, cx);
                    }
                }
                _ => self.stage = Stage::Empty,
            },
            Stage::Reading {
                op: want,
                heads,
                idx,
            } if want == op => match reply {
                Ok(Response::Data { data, .. }) => {
                    match String::from_utf8_lossy(&data).parse::<u64>() {
                        Ok(item) => self.take(heads, idx, item, cx),
                        Err(_) => self.read(heads, idx + 1, cx),
                    }
                }
                _ => self.read(heads, idx + 1, cx),
            },
            Stage::Taking {
                op: want,
                heads,
                idx,
                item,
            } if want == op => match reply {
                Ok(Response::Multi(results)) if results.iter().all(Result::is_ok) => {
                    self.taken(item, cx)
                }
                _ => self.read(heads, idx + 1, cx),
            },
            Stage::Checking { op: want, item, .. } if want == op => match reply {
                Ok(Response::Data { data, .. }) if data == self.me() => self.taken(item, cx),
                // Taken by someone else, or never: look at the queue again.
                _ => self.list(cx),
            },
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Empty
            && event.kind == EventType::NodeChildrenChanged
            && event.path == self.root
        {
            self.list(cx);
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Done {
            return;
        }
        match event {
            SessionEvent::Disconnected => {
                self.connected = false;
                self.lost = true;
            }
            SessionEvent::Expired => {
                // Items and receipts are persistent: a new session carries on.
                self.connected = false;
                self.lost = true;
                cx.reopen_session();
            }
            SessionEvent::SyncConnected => {
                self.connected = true;
                if self.lost || self.stage == Stage::Ready {
                    self.resume(cx);
                }
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Thinking {
            if self.connected {
                self.next(cx);
            } else {
                self.stage = Stage::Ready;
            }
        }
    }

    fn is_done(&self) -> bool {
        self.stage == Stage::Done
    }
}

macro_rules! queue_recipe {
    ($(#[$doc:meta])* $name:ident = $role:expr, $forget:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name(pub QueueClient);

        impl Recipe for $name {
            const FAMILY: crate::Family = crate::Family::Queue;
            fn new(params: &RecipeParams) -> Self {
                $name(QueueClient::new(params, $role, $forget))
            }
        }

        impl Client for $name {
            type Event = AppEvent;
            fn start(&mut self, cx: &mut Cx<AppEvent>) {
                self.0.start(cx)
            }
            fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
                self.0.on_reply(op, reply, cx)
            }
            fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
                self.0.on_watch(event, cx)
            }
            fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
                self.0.on_session(event, cx)
            }
            fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
                self.0.on_timer(cx)
            }
            fn is_done(&self) -> bool {
                self.0.is_done()
            }
        }
    };
}

queue_recipe! {
    /// `queue-producer`: offers `rounds` items; see the module docs.
    QueueProducer = QueueRole::Producer, false
}
queue_recipe! {
    /// `queue-consumer`: takes `rounds` items; see the module docs.
    QueueConsumer = QueueRole::Consumer, false
}
queue_recipe! {
    /// `queue-consumer-forget-take`: a consumer that treats a take whose
    /// reply was lost as not taken; see the module docs.
    QueueConsumerForgetTake = QueueRole::Consumer, true
}
