//! Run an [`EnsembleScript`] on the simulator: three servers (server 0
//! leads), session `k` starting on server `k % 3`, one session timeout,
//! `sync_limit` as the real ensemble's, and a scheduler that follows the
//! script: a step's own event, then every delivery, request and apply
//! (except on a lagged follower) before the next step; time passes only
//! in `Sleep` and `Await…` steps, one `Tick` at a time with everything
//! delivered between ticks.

use zksim::{
    Client, Config, CreateMode, Cx, Event, Fault, FaultBudget, Op, OpId, Reply, SessionEvent,
    WatchedEvent, World,
};

use super::script::{normalize_steps, EnsembleScript, Observed, Raw, Step, ROOT};
use crate::conformance::{Seen, SETUP};

/// How many ticks an `Await…` step may take before the script is
/// declared unplayable (the longest timeout is 20·tickTime… 300 ticks).
const AWAIT_LIMIT: u64 = 1000;

/// One script session as a sans-IO client: it sends its next op when the
/// scheduler fires its timer, and records everything it receives (the
/// runner notes after each step which of it is new).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Player {
    ops: Vec<(usize, Op)>,
    next: usize,
    sent: Vec<(OpId, usize)>,
    seen: Vec<Seen>,
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
        let Some((step, op)) = self.ops.get(self.next).cloned() else {
            return;
        };
        self.next += 1;
        let id = cx.send(op);
        self.sent.push((id, step));
        self.arm(cx);
    }
    fn is_done(&self) -> bool {
        self.next >= self.ops.len()
    }
}

impl Player {
    fn arm(&self, cx: &mut Cx<()>) {
        if self.next < self.ops.len() {
            cx.after(0);
        }
    }
}

/// Why the simulator cannot play a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unplayable(pub String);

impl std::fmt::Display for Unplayable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the simulator cannot play the ensemble script: {}",
            self.0
        )
    }
}

impl std::error::Error for Unplayable {}

/// The simulator's configuration for `script`.
pub fn config(script: &EnsembleScript) -> Config {
    let mut faults = FaultBudget::default();
    for step in &script.steps {
        match step {
            Step::Partition(_) => faults.partitions += 1,
            Step::Silence(_) => faults.expiries += 1,
            Step::Drop(_) => faults.connection_drops += 1,
            _ => {}
        }
    }
    Config {
        servers: 3,
        session_timeout: script.timeout,
        sync_limit: script.sync_limit,
        max_time: 100_000,
        faults,
        ..Config::default()
    }
}

/// Run `script` on the simulator.
pub fn run(script: &EnsembleScript) -> Result<Vec<Observed>, Unplayable> {
    run_with(script, config(script))
}

/// Run `script` on a simulator configured by `config` (a test breaks a
/// rule on purpose through it).
pub fn run_with(script: &EnsembleScript, config: Config) -> Result<Vec<Observed>, Unplayable> {
    let sessions = script.sessions.max(1);
    let mut ops: Vec<Vec<(usize, Op)>> = vec![Vec::new(); sessions];
    ops[0].push((
        SETUP,
        Op::Create {
            path: ROOT.to_string(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        },
    ));
    for (i, step) in script.steps.iter().enumerate() {
        if let Step::Op(k, op) | Step::Send(k, op) = step {
            ops.get_mut(*k)
                .ok_or_else(|| Unplayable(format!("step {i}: no session {k}")))?
                .push((i, op.clone()));
        }
    }
    let players = ops
        .into_iter()
        .map(|ops| Player {
            ops,
            next: 0,
            sent: Vec::new(),
            seen: Vec::new(),
        })
        .collect();
    let mut runner = Runner {
        world: World::new(config, players),
        log: Vec::new(),
        lagged: [false; 3],
        held: vec![false; sessions],
        raw: Vec::new(),
        noted: vec![0; sessions],
    };
    runner.act(0)?;
    runner.note(SETUP);
    for (i, step) in script.steps.iter().enumerate() {
        runner.play(i, step)?;
        runner.drain();
        runner.note(i);
    }
    let mut raw = runner.raw;
    let base = raw
        .iter()
        .find_map(|(_, _, s)| match s {
            Raw::Seen(Seen::Reply {
                step: SETUP,
                reply: Ok(zksim::Response::Created { stat, .. }),
            }) => Some(stat.czxid),
            _ => None,
        })
        .ok_or_else(|| Unplayable("the setup create failed".into()))?;
    raw.retain(|(step, _, _)| *step != SETUP);
    let ids: Vec<Vec<i64>> = (0..runner.world.num_clients())
        .map(|k| vec![runner.world.session_of(k)])
        .collect();
    Ok(normalize_steps(&raw, base, &ids))
}

struct Runner {
    world: World<Player>,
    log: Vec<zksim::Happening<()>>,
    lagged: [bool; 3],
    /// Sessions whose replies the script holds.
    held: Vec<bool>,
    /// `(step, session, what)` in the order noted.
    raw: Vec<(usize, usize, Raw)>,
    /// How much of each player's record is in `raw` already.
    noted: Vec<usize>,
}

impl Runner {
    /// Everything the players received since the last note happened in `step`.
    fn note(&mut self, step: usize) {
        for k in 0..self.world.num_clients() {
            let seen = &self.world.client(k).seen;
            for s in &seen[self.noted[k]..] {
                self.raw.push((step, k, Raw::Seen(s.clone())));
            }
            self.noted[k] = seen.len();
        }
    }

    /// Session `k` received something matching `wanted` since the last note.
    fn received(&self, k: usize, wanted: impl Fn(&Seen) -> bool) -> bool {
        self.world.client(k).seen[self.noted[k]..]
            .iter()
            .any(wanted)
    }

    fn enabled(&self, event: &Event) -> bool {
        let mut out = Vec::new();
        self.world.enabled(&mut out);
        out.contains(event)
    }

    fn step(&mut self, event: &Event) -> bool {
        if !self.enabled(event) {
            return false;
        }
        self.world.step(event, &mut self.log);
        self.log.clear();
        true
    }

    fn must(&mut self, i: usize, event: Event) -> Result<(), Unplayable> {
        if self.step(&event) {
            Ok(())
        } else {
            Err(Unplayable(format!("step {i}: {event:?} is not enabled")))
        }
    }

    /// Session `k` sends its next op; the server takes what it can.
    fn act(&mut self, k: usize) -> Result<(), Unplayable> {
        if !self.step(&Event::Timer { client: k }) {
            return Err(Unplayable(format!("s{k} has no op ready")));
        }
        self.drain();
        Ok(())
    }

    /// Every request, delivery and apply (not on a lagged follower) until
    /// none is left.
    fn drain(&mut self) {
        let mut enabled = Vec::new();
        loop {
            enabled.clear();
            self.world.enabled(&mut enabled);
            let next = enabled.iter().find(|e| match e {
                Event::Request { .. } => true,
                Event::Receive { client } => !self.held[*client],
                Event::Apply { server } => !self.lagged[*server],
                _ => false,
            });
            let Some(event) = next.cloned() else { break };
            self.world.step(&event, &mut self.log);
        }
        self.log.clear();
    }

    fn tick(&mut self, i: usize) -> Result<(), Unplayable> {
        self.must(i, Event::Tick)?;
        self.drain();
        Ok(())
    }

    fn play(&mut self, i: usize, step: &Step) -> Result<(), Unplayable> {
        match *step {
            Step::Op(k, _) | Step::Send(k, _) => self.act(k)?,
            Step::Lag(r) => self.lagged[r] = true,
            Step::Unlag(r) => self.lagged[r] = false,
            Step::Partition(r) => self.must(i, Event::Fault(Fault::Partition { server: r }))?,
            Step::Heal(r) => self.must(i, Event::Fault(Fault::Heal { server: r }))?,
            Step::Silence(k) => {
                self.must(i, Event::Fault(Fault::Silence { client: k }))?;
            }
            Step::HoldReplies(k) => self.held[k] = true,
            Step::Drop(k) => {
                // A hold lasts as long as the connection it holds.
                self.held[k] = false;
                self.must(i, Event::Fault(Fault::DropConnection { client: k }))?;
            }
            Step::Connect(k, r) => {
                if !self.world.client_readiness(k).connecting {
                    return Err(Unplayable(format!(
                        "step {i}: s{k} is not looking for a server"
                    )));
                }
                if !self.step(&Event::Connect {
                    client: k,
                    server: r,
                }) {
                    self.note(i);
                    self.raw.push((i, k, Raw::Refused));
                }
            }
            Step::Sleep(n) => {
                for _ in 0..n {
                    self.tick(i)?;
                }
            }
            Step::AwaitSession(k, event) => {
                self.await_until(i, |r| r.received(k, |x| *x == Seen::Session(event)))?;
            }
            Step::AwaitWatch(k) => {
                self.await_until(i, |r| r.received(k, |x| matches!(x, Seen::Watch(_))))?;
            }
        }
        Ok(())
    }

    fn await_until(&mut self, i: usize, done: impl Fn(&Runner) -> bool) -> Result<(), Unplayable> {
        self.drain();
        for _ in 0..AWAIT_LIMIT {
            if done(self) {
                return Ok(());
            }
            self.tick(i)?;
        }
        Err(Unplayable(format!(
            "step {i}: not seen within {AWAIT_LIMIT} ticks"
        )))
    }
}

#[cfg(test)]
mod tests {
    //! The simulator runner on its own (no Java needed): a lag, a refused
    //! and an accepted connection, a step-tagged stale read.

    use super::*;
    use crate::ensemble::script::What;

    fn lines(script: &EnsembleScript) -> Vec<String> {
        run(script)
            .expect("playable")
            .iter()
            .map(|o| format!("{} s{} {}", o.step, o.session, o.what))
            .collect()
    }

    fn exists(path: &str) -> Op {
        Op::Exists {
            path: path.into(),
            watch: false,
        }
    }

    fn script(lag: bool) -> EnsembleScript {
        let mut s = EnsembleScript::new("t", 3, 20);
        if lag {
            s = s.then(Step::Lag(1));
        }
        s.then(Step::Op(
            0,
            Op::Create {
                path: "/t/y".into(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
            },
        ))
        .then(Step::Op(2, exists("/t/y")))
        .then(Step::Op(1, exists("/t/y")))
        .then(Step::Drop(2))
        .then(Step::Connect(2, 1))
    }

    fn finish(script: EnsembleScript) -> EnsembleScript {
        script.then(Step::Op(2, exists("/t/y")))
    }

    #[test]
    fn a_lagging_follower_reads_stale_and_refuses_a_client_ahead_of_it() {
        let seen = lines(&finish(script(true).then(Step::Connect(2, 0))));
        assert!(
            seen.contains(&"3 s1 #3 Exists(none)".to_string()),
            "{seen:?}"
        );
        assert!(seen.contains(&"5 s2 refused".to_string()), "{seen:?}");
        assert!(seen.contains(&"6 s2 session SyncConnected".to_string()));
    }

    #[test]
    fn a_caught_up_follower_takes_the_client() {
        let seen = lines(&finish(script(false)));
        assert!(seen[2].starts_with("2 s1 #2 Exists [cz+1"), "{seen:?}");
        assert!(
            seen.contains(&"4 s2 session SyncConnected".to_string()),
            "{seen:?}"
        );
        assert!(!run(&finish(script(false)))
            .unwrap()
            .iter()
            .any(|o| o.what == What::Refused));
        // A connected session cannot be sent elsewhere: no made-up refusal.
        let again = finish(script(false).then(Step::Connect(2, 0)));
        assert!(run(&again).is_err());
    }
}
