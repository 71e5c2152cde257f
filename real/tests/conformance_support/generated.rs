//! Property-generated scripts: random multi-session op sequences over a
//! small path alphabet, run on both sides. Besides the small tree, every
//! script has a wide directory `/@/w` whose children come from a mixed
//! name alphabet (Java-hash collisions, sequential names, one-letter names),
//! created alone or several to a multi, ephemeral or not, and listed
//! unsorted at the end: child lists past 12 names, sessions past 12
//! ephemerals and close-time deletion order are compared as the server
//! orders them. A failure is shrunk by proptest
//! and printed; failing seeds persist in
//! `tests/conformance.proptest-regressions` (kept in the repo).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRng, TestRunner};
use zkreal::conformance::{Action, Script};
use zksim::{CreateMode, Op};

use crate::Bench;

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

/// A step as generated: an op, or (rarely) the session closing.
fn step() -> impl Strategy<Value = (usize, Option<Op>)> {
    (
        0..3usize,
        prop_oneof![12 => op().prop_map(Some), 1 => Just(None)],
    )
}

/// Build a script; a closed session does nothing more. Session 3 only
/// observes: it makes the wide directory, watches its children, and lists
/// them (unsorted) once the others are done.
fn script(steps: &[(usize, Option<Op>)]) -> Script {
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
    for (session, op) in steps {
        if closed[*session] {
            continue;
        }
        script = match op {
            Some(op) => script.op(*session, op.clone()),
            None => {
                closed[*session] = true;
                script.act(*session, Action::Close)
            }
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

/// Run the generated cases; returns how many scripts ran.
pub fn run(bench: &mut Bench<'_>) -> usize {
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
