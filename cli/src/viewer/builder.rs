//! Building a [`Timeline`] from a replay: each step's event and
//! happenings become arrows and marks, app events move each client's
//! belief, ticks in which nothing else happens are folded together.

use std::collections::BTreeMap;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Delivery, Event, EventType, Fault, Happening, Op, SessionId, ZkError};

use zkcheck::monitor::Violation;
use zkcheck::state::SystemState;

use super::labels::{app_label, op_label, reply_label, session_label, zx};
use super::timeline::{
    ArrowKind, Band, Belief, Item, Lane, LaneKind, MarkKind, Row, Timeline, ViolationMark,
};

/// Builds a [`Timeline`] while a run is replayed, step by step.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    timeline: Timeline,
    clients: usize,
    /// Requests sent and not yet taken, for the request arrow's label.
    sent: BTreeMap<(usize, u32), Op>,
    /// Each client's belief after each row, in row order.
    beliefs: Vec<Vec<Belief>>,
    /// What each client's app events say it believes (never `HoldingExpired`).
    raw: Vec<Belief>,
    /// What the last row shows (a holder with a dead session is marked).
    shown: Vec<Belief>,
    /// Where a deleted node's release is drawn, for herd counts: path →
    /// (row, item) of its latest delete's commit, and how many woke.
    releases: BTreeMap<String, (usize, usize, u32)>,
    /// Delete requests taken in the current step (client, path).
    deleting: Vec<String>,
    count_wakeups: bool,
}

impl Builder {
    pub fn new<C: RecipeSet>(title: String, model: &SystemState<C>) -> Self {
        let clients = model.world.num_clients();
        let servers = model.world.num_servers();
        let mut lanes: Vec<Lane> = (0..clients)
            .map(|c| Lane {
                name: format!("c{c}"),
                kind: LaneKind::Client,
            })
            .collect();
        lanes.extend((0..servers).map(|s| Lane {
            name: format!("s{s}"),
            kind: LaneKind::Server { leader: s == 0 },
        }));
        Builder {
            timeline: Timeline {
                title,
                lanes,
                ..Timeline::default()
            },
            clients,
            raw: vec![Belief::Idle; clients],
            shown: vec![Belief::Idle; clients],
            ..Builder::default()
        }
    }

    /// Label each release's commit with how many watch notifications for
    /// its deleted node were delivered (the herd picture).
    pub fn count_wakeups(mut self) -> Self {
        self.count_wakeups = true;
        self
    }

    fn server_lane(&self, server: usize) -> usize {
        self.clients + server
    }

    /// What starting the clients did (snapshot 0).
    pub fn start<C: RecipeSet>(&mut self, model: &SystemState<C>, log: &[Happening<AppEvent>]) {
        let mut items = Vec::new();
        for h in log {
            self.happening(model, h, &mut items);
        }
        self.push_row(model, 0, 0, items);
    }

    /// One step (snapshot `step + 1`), after it was applied.
    pub fn step<C: RecipeSet>(
        &mut self,
        step: usize,
        event: &Event,
        model: &SystemState<C>,
        log: &[Happening<AppEvent>],
    ) {
        let snapshot = step + 1;
        let mut items = Vec::new();
        self.event(model, event, &mut items);
        for h in log {
            self.happening(model, h, &mut items);
        }
        let beliefs = self.beliefs_now(model);
        if matches!(event, Event::Tick) && items.is_empty() && beliefs == self.shown {
            if let Some(last) = self.timeline.rows.last_mut() {
                if last.ticks > 0 {
                    last.ticks += 1;
                    last.last = snapshot;
                    last.time = model.world.now();
                    return;
                }
            }
            self.push_row(model, snapshot, 1, Vec::new());
            return;
        }
        self.push_row(model, snapshot, 0, items);
    }

    /// The property broken by the step of `snapshot` (or at the end of the run).
    pub fn violation(&mut self, snapshot: usize, v: &Violation, at_end: bool) {
        let mut row = self.timeline.rows.len().saturating_sub(1);
        if at_end {
            // An end-of-run check: its own row after the last step.
            let time = self.timeline.rows.last().map_or(0, |r| r.time);
            self.timeline.rows.push(Row {
                first: snapshot,
                last: snapshot,
                time,
                ticks: 0,
                items: Vec::new(),
            });
            let last = self.shown.clone();
            self.beliefs.push(last);
            row = self.timeline.rows.len() - 1;
        }
        let label = format!(
            "VIOLATION {}{}: {}",
            zkcheck::scenario::property_name(v.property),
            if at_end {
                " (judged at the end of the run)"
            } else {
                ""
            },
            v.explanation
        );
        self.timeline.rows[row].items.push(Item::Banner { label });
        let holders = (0..self.clients)
            .filter(|&c| self.beliefs[row][c].holds())
            .collect();
        self.timeline.violation = Some(ViolationMark {
            property: v.property,
            explanation: v.explanation.clone(),
            row,
            snapshot,
            holders,
        });
    }

    /// The finished timeline, with belief bands merged from the rows.
    pub fn finish(mut self) -> Timeline {
        let rows = self.timeline.rows.len();
        for c in 0..self.clients {
            let mut r = 0;
            while r < rows {
                let belief = self.beliefs[r][c];
                let mut end = r;
                while end + 1 < rows && self.beliefs[end + 1][c] == belief {
                    end += 1;
                }
                if belief != Belief::Idle {
                    self.timeline.bands.push(Band {
                        lane: c,
                        from: r,
                        to: end,
                        belief,
                    });
                }
                r = end + 1;
            }
        }
        self.timeline
    }

    /// Each client's belief as the last row shows it.
    pub fn beliefs_shown(&self) -> Vec<Belief> {
        self.shown.clone()
    }

    fn push_row<C: RecipeSet>(
        &mut self,
        model: &SystemState<C>,
        snapshot: usize,
        ticks: u32,
        items: Vec<Item>,
    ) {
        self.shown = self.beliefs_now(model);
        self.beliefs.push(self.shown.clone());
        let row = self.timeline.rows.len();
        // Remember where each delete's commit is drawn, for herd counts.
        if self.count_wakeups && !self.deleting.is_empty() {
            if let Some(i) = items.iter().position(|it| {
                matches!(
                    it,
                    Item::Mark {
                        kind: MarkKind::Commit,
                        ..
                    }
                )
            }) {
                for path in std::mem::take(&mut self.deleting) {
                    self.releases.insert(path, (row, i, 0));
                }
            }
        }
        self.deleting.clear();
        self.timeline.rows.push(Row {
            first: snapshot,
            last: snapshot,
            time: model.world.now(),
            ticks,
            items,
        });
    }

    /// Beliefs after the step: app events already folded into `raw` by
    /// [`Builder::happening`]; a holder whose session is gone is marked.
    fn beliefs_now<C: RecipeSet>(&self, model: &SystemState<C>) -> Vec<Belief> {
        (0..self.clients)
            .map(|c| {
                let b = self.raw[c];
                if b == Belief::Holding && !model.world.is_session_live(model.world.session_of(c)) {
                    Belief::HoldingExpired
                } else {
                    b
                }
            })
            .collect()
    }

    fn event<C: RecipeSet>(
        &mut self,
        model: &SystemState<C>,
        event: &Event,
        items: &mut Vec<Item>,
    ) {
        let fault = |lane: usize, label: String| Item::Mark {
            lane,
            kind: MarkKind::Fault,
            label,
        };
        match event {
            Event::Timer { client } => items.push(Item::Mark {
                lane: *client,
                kind: MarkKind::Timer,
                label: "timer fires".into(),
            }),
            Event::Connect { client, server } => items.push(Item::Arrow {
                from: *client,
                to: self.server_lane(*server),
                kind: ArrowKind::Connect,
                label: "connect".into(),
            }),
            Event::Fault(f) => items.push(match f {
                Fault::DropConnection { client } => fault(*client, "⚡ connection drops".into()),
                Fault::Silence { client } => fault(
                    *client,
                    format!(
                        "⚡ cut off from every server until session {} expires",
                        session_label(model.world.session_of(*client))
                    ),
                ),
                Fault::KillSession { client } => fault(
                    self.server_lane(0),
                    format!(
                        "⚡ the ensemble kills c{client}'s session {}",
                        session_label(model.world.session_of(*client))
                    ),
                ),
                Fault::Pause { client } => fault(
                    *client,
                    format!("⚡ pauses ({} ticks)", model.world.config().pause_ticks),
                ),
                Fault::Crash { client } => fault(*client, "⚡ crashes".into()),
                Fault::Partition { server } => {
                    fault(self.server_lane(*server), "⚡ partitioned".into())
                }
                Fault::Heal { server } => fault(self.server_lane(*server), "heals".into()),
            }),
            Event::Request { .. } | Event::Apply { .. } | Event::Receive { .. } | Event::Tick => {}
        }
    }

    fn happening<C: RecipeSet>(
        &mut self,
        model: &SystemState<C>,
        h: &Happening<AppEvent>,
        items: &mut Vec<Item>,
    ) {
        match h {
            Happening::Sent {
                client,
                op,
                request,
            } => {
                self.sent.insert((*client, *op), request.clone());
            }
            Happening::Taken { client, server, op } => {
                let request = self.sent.remove(&(*client, *op));
                if let Some(Op::Delete { path, .. }) = &request {
                    self.deleting.push(path.clone());
                }
                let label = match &request {
                    Some(r) => format!("#{op} {}", op_label(r)),
                    None => format!("#{op}"),
                };
                items.push(Item::Arrow {
                    from: *client,
                    to: self.server_lane(*server),
                    kind: ArrowKind::Request,
                    label,
                });
            }
            Happening::Committed { zxid, .. } => items.push(Item::Mark {
                lane: self.server_lane(0),
                kind: MarkKind::Commit,
                label: format!("commit {}", zx(*zxid)),
            }),
            // The leader applies what it commits at once: the commit mark says it.
            Happening::Applied { server: 0, .. } => {}
            Happening::Applied { server, zxid } => items.push(Item::Mark {
                lane: self.server_lane(*server),
                kind: MarkKind::Apply,
                label: format!("apply {}", zx(*zxid)),
            }),
            Happening::Delivered { client, delivery } => {
                let server = model.world.server_of(*client);
                match delivery {
                    Delivery::Reply { op, reply } => {
                        let label = format!("#{op} {}", reply_label(reply));
                        let made_up = matches!(
                            reply,
                            Err(ZkError::ConnectionLoss | ZkError::SessionExpired)
                        );
                        match server {
                            Some(s) if !made_up => items.push(Item::Arrow {
                                from: self.server_lane(s),
                                to: *client,
                                kind: ArrowKind::Reply,
                                label,
                            }),
                            _ => items.push(Item::Mark {
                                lane: *client,
                                kind: MarkKind::Session,
                                label,
                            }),
                        }
                    }
                    Delivery::Watch(w) => {
                        let mut label = format!("{:?} {}", w.kind, w.path);
                        if self.count_wakeups && w.kind == EventType::NodeDeleted {
                            if let Some(entry) = self.releases.get_mut(&w.path) {
                                entry.2 += 1;
                                label = format!("wakeup {} · {label}", entry.2);
                                let (row, i, n) = *entry;
                                if let Some(Item::Mark { label: l, .. }) =
                                    self.timeline.rows[row].items.get_mut(i)
                                {
                                    let base = l.split(" → ").next().unwrap_or("").to_string();
                                    *l = format!(
                                        "{base} → woke {n} waiter{}",
                                        if n == 1 { "" } else { "s" }
                                    );
                                }
                            }
                        }
                        items.push(match server {
                            Some(s) => Item::Arrow {
                                from: self.server_lane(s),
                                to: *client,
                                kind: ArrowKind::Watch,
                                label,
                            },
                            None => Item::Mark {
                                lane: *client,
                                kind: MarkKind::Session,
                                label,
                            },
                        })
                    }
                    Delivery::Session(s) => items.push(Item::Mark {
                        lane: *client,
                        kind: MarkKind::Session,
                        label: format!("{s:?}"),
                    }),
                }
            }
            Happening::App { client, event } => {
                let c = *client;
                let (kind, next) = match event {
                    AppEvent::Requested { .. } => (MarkKind::App, Some(Belief::Waiting)),
                    AppEvent::Acquired { .. } | AppEvent::Elected => {
                        (MarkKind::Acquired, Some(Belief::Holding))
                    }
                    AppEvent::Released | AppEvent::Abdicated => (MarkKind::App, Some(Belief::Idle)),
                    AppEvent::LostLock | AppEvent::GaveUp => (MarkKind::Lost, Some(Belief::Lost)),
                    _ => (MarkKind::App, None),
                };
                if let Some(b) = next {
                    self.raw[c] = b;
                }
                items.push(Item::Mark {
                    lane: c,
                    kind,
                    label: app_label(event),
                });
            }
            Happening::SessionEnded { session, expired } => items.push(Item::Mark {
                lane: self.server_lane(0),
                kind: MarkKind::SessionEnded,
                label: format!(
                    "{} {}: ephemerals gone",
                    owner(model, *session),
                    if *expired { "expired" } else { "closed" }
                ),
            }),
        }
    }
}

/// "c1's session" when a client owns it now, else "session 0x…".
fn owner<C: RecipeSet>(model: &SystemState<C>, session: SessionId) -> String {
    match (0..model.world.num_clients()).find(|&c| model.world.session_of(c) == session) {
        Some(c) => format!("c{c}'s session"),
        None => format!("session {}", session_label(session)),
    }
}
