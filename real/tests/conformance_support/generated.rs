//! Property-generated scripts: random multi-session op sequences over a
//! small path alphabet, run on both sides. Besides the small tree, every
//! script has a wide directory `/@/w` whose children come from a mixed
//! name alphabet (Java-hash collisions, sequential names, one-letter names),
//! created alone or several to a multi, ephemeral or not, and listed
//! unsorted at the end: child lists past 12 names, sessions past 12
//! ephemerals and close-time deletion order are compared as the server
//! orders them. Some scripts break a session's connection with ops in
//! flight (requests held, answers held, or nothing held) and issue ops
//! while it is away (S21). A failure is shrunk by proptest
//! and printed; failing seeds persist in
//! `tests/conformance.proptest-regressions` (kept in the repo).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRng, TestRunner};
use zkreal::conformance::{Action, Script};
use zksim::{CreateMode, Op};

use super::bench::Bench;

/// Cases per run: enough to mix every op with every other on a few paths,
/// few enough to keep the whole suite well under a minute.
const CASES: u32 = 150;

const PATHS: [&str; 5] = ["/@/a", "/@/b", "/@/a/c", "/@/a/", "/@/b/d"];

/// The wide directory's child names: `Aa`/`BB` and `fO`/`g0` share a Java
/// hash, `g0`/`g@` differ by 16 (one bucket until the table has 32 slots).
const WIDE_NAMES: [&str; 16] = [
    "a", "i", "q", "m", "B", "Aa", "BB", "x1", "x10", "zeta", "g0", "g@", "f_", "fO", "lock-", "n-",
];

fn wide_path() -> impl Strategy<Value = String> {
    prop::sample::select(&WIDE_NAMES[..]).prop_map(|name| format!("/@/w/{name}"))
}

fn wide_create() -> impl Strategy<Value = Op> {
    (wide_path(), mode()).prop_map(|(path, mode)| Op::Create {
        path,
        data: Vec::new(),
        mode,
    })
}

fn path() -> impl Strategy<Value = String> {
    prop::sample::select(&PATHS[..]).prop_map(str::to_string)
}

fn mode() -> impl Strategy<Value = CreateMode> {
    prop::sample::select(vec![
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential,
    ])
}

fn version() -> impl Strategy<Value = i32> {
    prop::sample::select(vec![-1, 0, 1])
}

fn write() -> impl Strategy<Value = Op> {
    prop_oneof![
        (path(), mode(), 0..3usize).prop_map(|(path, mode, n)| Op::Create {
            path,
            data: vec![b'x'; n],
            mode
        }),
        (path(), version()).prop_map(|(path, version)| Op::Delete { path, version }),
        (path(), version(), 0..3usize).prop_map(|(path, version, n)| Op::SetData {
            path,
            data: vec![b'y'; n],
            version
        }),
    ]
}

/// What a multi may hold: writes, and `check`s of a version.
fn multi_part() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => write(),
        1 => (path(), version()).prop_map(|(path, version)| Op::Check { path, version }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => write(),
        2 => (path(), any::<bool>()).prop_map(|(path, watch)| Op::Exists { path, watch }),
        2 => (path(), any::<bool>()).prop_map(|(path, watch)| Op::GetData { path, watch }),
        2 => (path(), any::<bool>()).prop_map(|(path, watch)| Op::GetChildren { path, watch }),
        1 => prop::collection::vec(multi_part(), 1..4).prop_map(Op::Multi),
        3 => wide_create(),
        1 => prop::collection::vec(wide_create(), 2..8).prop_map(Op::Multi),
        1 => wide_path().prop_map(|path| Op::Delete { path, version: -1 }),
        1 => (wide_path(), any::<bool>()).prop_map(|(path, watch)| Op::Exists { path, watch }),
        1 => Just(Op::GetChildren { path: "/@/w".into(), watch: false }),
    ]
}

/// What a session's connection does during an [`Gen::Episode`].
#[derive(Clone, Copy, Debug)]
enum Held {
    Nothing,
    Requests,
    Replies,
}

/// A step as generated.
#[derive(Clone, Debug)]
enum Gen {
    Op(usize, Op),
    /// The session closes (rarely); it does nothing more.
    Close(usize),
    /// A broken connection with ops across it (S21): the session holds one
    /// direction (or nothing) and issues `sent` without waiting, the
    /// connection drops, other sessions do `others` while it is away, it
    /// issues `away` while disconnected, and reconnects. One generated
    /// value, so that shrinking cannot split it into steps no runner can
    /// play (a `Reconnect` without its `Disconnect`).
    Episode {
        session: usize,
        held: Held,
        sent: Vec<Op>,
        others: Vec<(usize, Op)>,
        away: Vec<Op>,
    },
}

fn held() -> impl Strategy<Value = Held> {
    prop::sample::select(vec![Held::Nothing, Held::Requests, Held::Replies])
}

fn episode() -> impl Strategy<Value = Gen> {
    (
        0..3usize,
        held(),
        prop::collection::vec(op(), 0..3),
        prop::collection::vec((0..3usize, op()), 0..3),
        prop::collection::vec(op(), 1..3),
    )
        .prop_map(|(session, held, sent, others, away)| Gen::Episode {
            session,
            held,
            sent,
            others,
            away,
        })
}

fn step() -> impl Strategy<Value = Gen> {
    prop_oneof![
        12 => (0..3usize, op()).prop_map(|(session, op)| Gen::Op(session, op)),
        1 => (0..3usize).prop_map(Gen::Close),
        1 => episode(),
    ]
}

/// Build a script; a closed session does nothing more. Session 3 only
/// observes: it makes the wide directory, watches its children, and lists
/// them (unsorted) once the others are done.
fn script(steps: &[Gen]) -> Script {
    let wide = "/@/w";
    let mut script = Script::new("generated", 4)
        .op(
            3,
            Op::Create {
                path: wide.into(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
            },
        )
        .op(
            3,
            Op::GetChildren {
                path: wide.into(),
                watch: true,
            },
        );
    let mut closed = [false; 3];
    for step in steps {
        script = match step {
            Gen::Op(session, op) if !closed[*session] => script.op(*session, op.clone()),
            Gen::Close(session) if !closed[*session] => {
                closed[*session] = true;
                script.act(*session, Action::Close)
            }
            Gen::Episode {
                session,
                held,
                sent,
                others,
                away,
            } if !closed[*session] => {
                episode_steps(script, *session, *held, sent, others, away, &closed)
            }
            _ => script,
        };
    }
    script.op(
        3,
        Op::GetChildren {
            path: wide.into(),
            watch: false,
        },
    )
}

fn episode_steps(
    mut script: Script,
    k: usize,
    held: Held,
    sent: &[Op],
    others: &[(usize, Op)],
    away: &[Op],
    closed: &[bool; 3],
) -> Script {
    // Ops the client library refuses before sending are answered at once,
    // held or not: they have nothing to hold, so the episode sends none.
    let valid = |op: &&Op| zksim::path::validate_request(op).is_ok();
    match held {
        Held::Nothing => {}
        Held::Requests => script = script.act(k, Action::HoldRequests),
        Held::Replies => script = script.act(k, Action::HoldReplies),
    }
    for op in sent.iter().filter(valid) {
        script = script.act(k, Action::Send(op.clone()));
    }
    script = script.act(k, Action::Disconnect);
    for (other, op) in others {
        if *other != k && !closed[*other] {
            script = script.op(*other, op.clone());
        }
    }
    // At least one op while away keeps the session busy at the drop (the
    // simulator drops only a busy client's connection).
    let mut queued = away.iter().filter(valid).peekable();
    if queued.peek().is_none() {
        script = script.act(
            k,
            Action::Send(Op::Exists {
                path: "/@/a".into(),
                watch: false,
            }),
        );
    }
    for op in queued {
        script = script.act(k, Action::Send(op.clone()));
    }
    script.act(k, Action::Reconnect)
}

/// Run the generated cases; returns how many scripts ran.
pub fn run(bench: &mut Bench) -> usize {
    let config = Config {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/conformance.proptest-regressions"
        )))),
        ..Config::default()
    };
    // A fixed seed: every run (and CI) compares the same scripts, so a
    // difference is reproducible; regressions found earlier run first.
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let ran = std::cell::Cell::new(0);
    let checker = &*bench;
    let result = runner.run(&prop::collection::vec(step(), 1..24), |steps| {
        ran.set(ran.get() + 1);
        let script = script(&steps);
        checker.check(&script).map_err(TestCaseError::fail)
    });
    // Shrinking reruns cases; count each distinct script once as passed or
    // the whole property once as failed.
    match result {
        Ok(()) => bench.passed += CASES as usize,
        Err(e) => {
            bench.failed += 1;
            eprintln!("conformance FAILED: generated scripts (minimal failing case below)\n{e}");
        }
    }
    ran.get()
}
