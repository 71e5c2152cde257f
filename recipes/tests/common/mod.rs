//! Shared bits of the hand-fed recipe tests.

use zkrecipes::testkit::Harness;
use zkrecipes::{AppEvent, Recipe, RecipeParams, Workload};
use zksim::{CreateMode, Op};

pub const ME: i64 = 0x10;
pub const OTHER: i64 = 0x20;

pub fn params(client: usize, rounds: u32) -> RecipeParams {
    RecipeParams {
        group: 0,
        role: String::new(),
        session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
        client,
        clients: 3,
        root: "/lock".into(),
        workload: Workload {
            rounds,
            hold_ticks: 4,
            think_ticks: 2,
        },
    }
}

/// A started client whose root create has been answered; returns the
/// harness and what the root reply produced.
pub fn started<R: Recipe>(client: usize, rounds: u32) -> (Harness<R>, zksim::CxOutput<AppEvent>) {
    let mut h = Harness::new(R::new(&params(client, rounds)), ME);
    let out = h.start();
    assert_eq!(out.sent, [(0, create_persistent("/lock"))]);
    assert!(out.events.is_empty());
    let out = h.reply(0, Err(zksim::ZkError::NodeExists));
    (h, out)
}

pub fn create_persistent(path: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: vec![],
        mode: CreateMode::Persistent,
    }
}
pub fn create_ephemeral(path: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: vec![],
        mode: CreateMode::Ephemeral,
    }
}
pub fn create_seq(path: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: vec![],
        mode: CreateMode::EphemeralSequential,
    }
}
pub fn children_of(path: &str) -> Op {
    Op::GetChildren {
        path: path.into(),
        watch: false,
    }
}
pub fn exists_watch(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: true,
    }
}
pub fn exists_nowatch(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: false,
    }
}
pub fn sync(path: &str) -> Op {
    Op::Sync { path: path.into() }
}
pub fn delete(path: &str) -> Op {
    Op::Delete {
        path: path.into(),
        version: -1,
    }
}

pub const REQ: AppEvent = AppEvent::Requested { shared: false };
pub fn acquired(fence: i64) -> [AppEvent; 2] {
    [
        AppEvent::Acquired {
            fence,
            shared: false,
        },
        AppEvent::ResourceWrite { fence },
    ]
}
pub fn enq(seq: i64) -> AppEvent {
    AppEvent::Enqueued { seq: Some(seq) }
}
