//! Run a [`Script`] on the simulator: one server, and a scheduler that
//! mirrors the script's order exactly.
//!
//! Each session is a [`Player`] that acts only when its timer fires; its
//! timer is always due while it has actions left, and only the scheduler
//! decides when to fire it. For each step the scheduler fires the player's
//! timer (it sends its op or asks to close), lets the server take what the
//! player queued, then delivers every message waiting for any client
//! before the next step. Faults are the world's own (`KillSession`,
//! `DropConnection`) followed, where the script says so, by `Connect`.
//!
//! Holding a connection uses the world's own queues: under `HoldRequests`
//! the scheduler lets the server take nothing from that client (its
//! requests wait in the connection's outbound queue), under `HoldReplies`
//! it delivers nothing to it (answers wait in the inbound queue). A later
//! `DropConnection` fails both kinds with `ConnectionLoss` (S21) — the
//! first never applied, the second applied.

use zksim::{
    Client, Config, Cx, Event, Fault, FaultBudget, Op, OpId, Reply, Response, SessionEvent,
    WatchedEvent, World,
};

use super::observe::{Frame, Seen};
use super::{normalize, Action, Observations, Script, SETUP};

/// What a player does when its timer fires.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Act {
    Send { step: usize, op: Op },
    Close,
}

/// One script session as a sans-IO client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Player {
    acts: Vec<Act>,
    next: usize,
    /// Which step each op id belongs to.
    sent: Vec<(OpId, usize)>,
    seen: Vec<Seen>,
}

impl Player {
    fn new(acts: Vec<Act>) -> Self {
        Player {
            acts,
            next: 0,
            sent: Vec::new(),
            seen: Vec::new(),
        }
    }
    fn arm(&self, cx: &mut Cx<()>) {
        if self.next < self.acts.len() {
            cx.after(0);
        }
    }
}

impl Client for Player {
    type Event = ();
    fn start(&mut self, cx: &mut Cx<()>) {
        self.arm(cx);
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, _: &mut Cx<()>) {
        let step = self
            .sent
            .iter()
            .find(|(id, _)| *id == op)
            .map_or(SETUP - 1, |(_, s)| *s);
        self.seen.push(Seen::Reply { step, reply });
    }
    fn on_watch(&mut self, event: WatchedEvent, _: &mut Cx<()>) {
        self.seen.push(Seen::Watch(event));
    }
    fn on_session(&mut self, event: SessionEvent, _: &mut Cx<()>) {
        self.seen.push(Seen::Session(event));
    }
    fn on_timer(&mut self, cx: &mut Cx<()>) {
        let Some(act) = self.acts.get(self.next).cloned() else {
            return;
        };
        self.next += 1;
        match act {
            Act::Send { step, op } => {
                let id = cx.send(op);
                self.sent.push((id, step));
            }
            Act::Close => cx.close_session(),
        }
        self.arm(cx);
    }
    fn is_done(&self) -> bool {
        self.next >= self.acts.len()
    }
}

/// What went wrong running a script on the simulator (a script the world
/// cannot play, e.g. `Reconnect` of a connected session).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unplayable(pub String);

impl std::fmt::Display for Unplayable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the simulator cannot play the script: {}", self.0)
    }
}

impl std::error::Error for Unplayable {}

/// Run `script` (already rooted at `root`) and return what each session saw.
pub fn run(script: &Script, root: &str) -> Result<Observations, Unplayable> {
    let mut acts: Vec<Vec<Act>> = vec![Vec::new(); script.sessions.max(1)];
    acts[0].push(Act::Send {
        step: SETUP,
        op: Op::Create {
            path: root.to_string(),
            data: Vec::new(),
            mode: zksim::CreateMode::Persistent,
        },
    });
    let mut faults = FaultBudget::default();
    for (i, step) in script.steps.iter().enumerate() {
        let Some(list) = acts.get_mut(step.session) else {
            return Err(Unplayable(format!("step {i}: no session {}", step.session)));
        };
        match &step.action {
            Action::Op(op) | Action::Send(op) => list.push(Act::Send {
                step: i,
                op: op.clone(),
            }),
            Action::Close => list.push(Act::Close),
            Action::Expire => faults.kills += 1,
            Action::Disconnect => faults.connection_drops += 1,
            Action::Reconnect
            | Action::HoldRequests
            | Action::HoldReplies
            | Action::AwaitReaped(_) => {}
        }
    }
    let config = Config {
        servers: 1,
        faults,
        ..Config::default()
    };
    let players = acts.into_iter().map(Player::new).collect();
    let mut world = World::new(config, players);
    let mut conductor = Conductor {
        world: &mut world,
        log: Vec::new(),
        held: vec![None; script.sessions.max(1)],
    };
    conductor.act(0)?;
    for (i, step) in script.steps.iter().enumerate() {
        let k = step.session;
        let fail = |what: &str| Unplayable(format!("step {i}: s{k} cannot {what} now"));
        match step.action {
            Action::Op(_) | Action::Send(_) | Action::Close => conductor.act(k)?,
            Action::HoldRequests => conductor.held[k] = Some(Hold::Requests),
            Action::HoldReplies => conductor.held[k] = Some(Hold::Replies),
            Action::Expire => {
                conductor.held[k] = None;
                conductor.try_step(&Event::Fault(Fault::KillSession { client: k }), || {
                    fail("expire")
                })?;
                conductor.drain();
                conductor.try_step(
                    &Event::Connect {
                        client: k,
                        server: 0,
                    },
                    || fail("reconnect after expiry"),
                )?;
            }
            Action::Disconnect => {
                // A hold lasts as long as the connection it holds.
                conductor.held[k] = None;
                conductor.try_step(&Event::Fault(Fault::DropConnection { client: k }), || {
                    fail("drop its connection")
                })?;
            }
            Action::Reconnect => {
                conductor.try_step(
                    &Event::Connect {
                        client: k,
                        server: 0,
                    },
                    || fail("reconnect"),
                )?;
                // What the client queued while away goes out now.
                conductor.take_requests(k);
            }
            Action::AwaitReaped(ref path) => conductor.await_reaped(path, i)?,
        }
        conductor.drain();
    }
    let seen: Vec<Vec<Seen>> = (0..world.num_clients())
        .map(|k| world.client(k).seen.clone())
        .collect();
    let base = base_zxid(&seen[0]).ok_or_else(|| Unplayable("setup create failed".into()))?;
    let sessions: Vec<Vec<i64>> = (0..world.num_clients())
        .map(|k| vec![world.session_of(k)])
        .collect();
    let frame = Frame {
        base,
        sessions: &sessions,
    };
    Ok(normalize(&strip_setup(seen), &frame))
}

/// The czxid of the script's root node, from the setup op's reply.
pub(crate) fn base_zxid(seen: &[Seen]) -> Option<i64> {
    seen.iter().find_map(|s| match s {
        Seen::Reply {
            step: SETUP,
            reply: Ok(Response::Created { stat, .. }),
        } => Some(stat.czxid),
        _ => None,
    })
}

/// The observations without the setup op's reply.
pub(crate) fn strip_setup(seen: Vec<Vec<Seen>>) -> Vec<Vec<Seen>> {
    seen.into_iter()
        .map(|s| {
            s.into_iter()
                .filter(|o| !matches!(o, Seen::Reply { step: SETUP, .. }))
                .collect()
        })
        .collect()
}

/// What the script holds on one session's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    Requests,
    Replies,
}

struct Conductor<'w> {
    world: &'w mut World<Player>,
    log: Vec<zksim::Happening<()>>,
    held: Vec<Option<Hold>>,
}

impl Conductor<'_> {
    fn is_enabled(&self, event: &Event) -> bool {
        let mut enabled = Vec::new();
        self.world.enabled(&mut enabled);
        enabled.contains(event)
    }
    fn try_step(
        &mut self,
        event: &Event,
        fail: impl FnOnce() -> Unplayable,
    ) -> Result<(), Unplayable> {
        if !self.is_enabled(event) {
            return Err(fail());
        }
        self.world.step(event, &mut self.log);
        self.log.clear();
        Ok(())
    }
    /// Session `k`'s next action: fire its timer, let the server take what
    /// it queued, deliver everything.
    fn act(&mut self, k: usize) -> Result<(), Unplayable> {
        self.try_step(&Event::Timer { client: k }, || {
            Unplayable(format!("s{k} has no action ready"))
        })?;
        self.take_requests(k);
        Ok(())
    }
    /// The server takes everything session `k` sent (unless the script
    /// holds its requests); then everything is delivered.
    fn take_requests(&mut self, k: usize) {
        if self.held[k] != Some(Hold::Requests) {
            while self.is_enabled(&Event::Request { client: k }) {
                self.world
                    .step(&Event::Request { client: k }, &mut self.log);
            }
        }
        self.drain();
    }
    /// Let time pass until the leader's container reaper (a pass every
    /// `CONTAINER_CHECK_TICKS` ticks, S35) has deleted `path`, delivering
    /// what it causes.
    fn await_reaped(&mut self, path: &str, step: usize) -> Result<(), Unplayable> {
        for _ in 0..=zksim::world::CONTAINER_CHECK_TICKS {
            if self.world.leader_tree().get(path).is_none() {
                return Ok(());
            }
            self.try_step(&Event::Tick, || {
                Unplayable(format!("step {step}: time cannot pass"))
            })?;
            self.drain();
        }
        match self.world.leader_tree().get(path) {
            None => Ok(()),
            Some(_) => Err(Unplayable(format!(
                "step {step}: the reaper did not delete {path}"
            ))),
        }
    }
    /// Deliver every message waiting for any client whose replies the
    /// script does not hold.
    fn drain(&mut self) {
        let mut enabled = Vec::new();
        loop {
            enabled.clear();
            self.world.enabled(&mut enabled);
            let Some(event) = enabled
                .iter()
                .find(|e| match e {
                    Event::Receive { client } => self.held[*client] != Some(Hold::Replies),
                    Event::Apply { .. } => true,
                    _ => false,
                })
                .cloned()
            else {
                break;
            };
            self.world.step(&event, &mut self.log);
        }
        self.log.clear();
    }
}

#[cfg(test)]
mod tests {
    //! The simulator runner's holds on their own (no real server needed):
    //! what the conformance scripts of S21 expect the simulator to say.

    use super::*;
    use zksim::CreateMode;

    fn create(path: &str) -> Op {
        Op::Create {
            path: path.into(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        }
    }

    fn exists(path: &str) -> Op {
        Op::Exists {
            path: path.into(),
            watch: false,
        }
    }

    /// Each session's observations, one line each.
    fn lines(script: &Script) -> Vec<Vec<String>> {
        let root = "/t";
        run(&script.rooted(root), root)
            .expect("playable")
            .iter()
            .map(|s| s.iter().map(|o| o.to_string()).collect())
            .collect()
    }

    fn in_flight(hold: Action) -> Script {
        Script::new("held", 2)
            .act(0, hold)
            .act(0, Action::Send(create("/@/x")))
            .op(1, exists("/@/x"))
            .act(0, Action::Disconnect)
            .act(0, Action::Reconnect)
            .op(0, exists("/@/x"))
    }

    #[test]
    fn a_held_request_fails_and_is_not_applied() {
        let seen = lines(&in_flight(Action::HoldRequests));
        assert_eq!(
            seen[0],
            [
                "#1 ConnectionLoss",
                "session Disconnected",
                "session SyncConnected",
                "#5 Exists(none)"
            ]
        );
        assert_eq!(seen[1], ["#2 Exists(none)"]);
    }

    #[test]
    fn a_held_answer_fails_but_the_op_was_applied() {
        let seen = lines(&in_flight(Action::HoldReplies));
        assert_eq!(
            seen[0][..3],
            [
                "#1 ConnectionLoss",
                "session Disconnected",
                "session SyncConnected"
            ]
        );
        assert!(seen[0][3].starts_with("#5 Exists [cz+1"), "{:?}", seen[0]);
        assert!(seen[1][0].starts_with("#2 Exists [cz+1"), "{:?}", seen[1]);
    }

    #[test]
    fn ops_issued_while_away_go_out_after_the_reconnection() {
        let script = Script::new("away", 2)
            .act(0, Action::Disconnect)
            .act(0, Action::Send(create("/@/q")))
            .op(1, exists("/@/q"))
            .act(0, Action::Reconnect);
        let seen = lines(&script);
        assert_eq!(seen[1], ["#2 Exists(none)"]);
        assert_eq!(
            seen[0][..2],
            ["session Disconnected", "session SyncConnected"]
        );
        assert!(
            seen[0][2].starts_with("#1 Created /t/q [cz+1"),
            "{:?}",
            seen[0]
        );
    }
}
