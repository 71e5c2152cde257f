//! Shared helpers for the world's integration tests: a world of scripted
//! clients, explicit stepping, and op constructors.
#![allow(dead_code)]

use zksim::script::{Observed, Scripted, Step};
use zksim::{Config, CreateMode, Event, Fault, FaultBudget, Happening, Op, World};

pub type W = World<Scripted>;
pub type Log = Vec<Happening<Observed>>;

/// A world plus the history it produced so far.
pub struct Sim {
    pub world: W,
    pub log: Log,
}

pub fn config(servers: usize) -> Config {
    Config {
        servers,
        faults: FaultBudget::default(),
        ..Config::default()
    }
}

pub fn budget_all(n: u32) -> FaultBudget {
    FaultBudget {
        connection_drops: n,
        expiries: n,
        pauses: n,
        crashes: n,
        partitions: n,
        kills: n,
    }
}

impl Sim {
    pub fn new(config: Config, clients: Vec<Scripted>) -> Self {
        let mut log = Vec::new();
        let world = World::new_with_log(config, clients, &mut log);
        Sim { world, log }
    }

    /// `servers` servers, no faults, clients given as step lists.
    pub fn scripts(servers: usize, scripts: Vec<Vec<Step>>) -> Self {
        Self::new(
            config(servers),
            scripts.into_iter().map(Scripted::new).collect(),
        )
    }

    pub fn enabled(&self) -> Vec<Event> {
        let mut out = Vec::new();
        self.world.enabled(&mut out);
        out
    }

    pub fn is_enabled(&self, event: &Event) -> bool {
        self.enabled().contains(event)
    }

    /// Take one step, which must be enabled; returns what it did.
    pub fn step(&mut self, event: Event) -> Log {
        assert!(
            self.is_enabled(&event),
            "{event:?} not enabled; enabled: {:?}",
            self.enabled()
        );
        let mut log = Vec::new();
        self.world.step(&event, &mut log);
        self.log.extend(log.iter().cloned());
        log
    }

    pub fn fault(&mut self, fault: Fault) -> Log {
        self.step(Event::Fault(fault))
    }

    pub fn request(&mut self, client: usize) -> Log {
        self.step(Event::Request { client })
    }

    pub fn receive(&mut self, client: usize) -> Log {
        self.step(Event::Receive { client })
    }

    pub fn apply(&mut self, server: usize) -> Log {
        self.step(Event::Apply { server })
    }

    pub fn connect(&mut self, client: usize, server: usize) -> Log {
        self.step(Event::Connect { client, server })
    }

    pub fn ticks(&mut self, n: u64) {
        for _ in 0..n {
            self.step(Event::Tick);
        }
    }

    /// Run the first enabled event that `pick` accepts until there is none.
    pub fn run_while(&mut self, pick: impl Fn(&Event) -> bool) {
        for _ in 0..100_000 {
            let Some(event) = self.enabled().into_iter().find(|e| pick(e)) else {
                return;
            };
            self.step(event);
        }
        panic!("run_while did not settle");
    }

    /// Let requests, applies, receives and due timers run out (no time, no
    /// reconnects, no faults).
    pub fn settle(&mut self) {
        self.run_while(|e| {
            matches!(
                e,
                Event::Request { .. }
                    | Event::Apply { .. }
                    | Event::Receive { .. }
                    | Event::Timer { .. }
            )
        });
    }

    /// Deliver everything waiting for `client`.
    pub fn drain(&mut self, client: usize) {
        self.run_while(|e| *e == Event::Receive { client });
    }

    pub fn client(&self, id: usize) -> &Scripted {
        self.world.client(id)
    }

    pub fn seen(&self, id: usize) -> Vec<Observed> {
        self.client(id).seen().to_vec()
    }
}

pub fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: Vec::new(),
        mode,
    }
}
pub fn persistent(path: &str) -> Op {
    create(path, CreateMode::Persistent)
}
pub fn ephemeral(path: &str) -> Op {
    create(path, CreateMode::Ephemeral)
}
pub fn get_data(path: &str, watch: bool) -> Op {
    Op::GetData {
        path: path.into(),
        watch,
    }
}
pub fn exists(path: &str, watch: bool) -> Op {
    Op::Exists {
        path: path.into(),
        watch,
    }
}
pub fn children(path: &str, watch: bool) -> Op {
    Op::GetChildren {
        path: path.into(),
        watch,
    }
}
pub fn set_data(path: &str, data: &[u8]) -> Op {
    Op::SetData {
        path: path.into(),
        data: data.to_vec(),
        version: -1,
    }
}
pub fn delete(path: &str) -> Op {
    Op::Delete {
        path: path.into(),
        version: -1,
    }
}
pub fn sync(path: &str) -> Op {
    Op::Sync { path: path.into() }
}
