//! Bad input, generated: proptest mutates every shipped scenario and real
//! replay tokens (byte flips, deletions, huge and negative numbers, swapped
//! and repeated lines) and feeds each to the command's entry point
//! in-process. Whatever the input, the command must end with 0, 1, 2 or 3 —
//! never a panic — within a time and a memory bound.
//!
//! The proptest RNG is seeded so that CI judges the same inputs every run;
//! a failure prints the input that broke the command.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use zkcheck::explore::random::run_random;
use zkcheck::scenario::Scenario;
use zkcheck::token::Token;
use zkcheck_cli::command::{run, Exit};

use crate::shipped::scenario_files;

const RNG_SEED: u64 = 10;
/// A generous wall-clock bound per input (the command runs with a 2 s time limit).
const TIME_BOUND: Duration = Duration::from_secs(60);
/// Resident memory the test process may reach (a mutated scenario's `check`
/// runs with a budget of `COMMAND_MB` on top of what the process holds).
const MEMORY_BOUND: u64 = 3 << 30;
/// The memory budget a mutated scenario's `check` runs with, in MiB, on top
/// of what the process already holds: the budget is judged on the resident
/// memory of the whole process, which the tests of the other files share.
const COMMAND_MB: u64 = 512;

/// Real tokens: a run of each shipped scenario (cut to its first 200 steps).
fn tokens() -> &'static [String] {
    static TOKENS: OnceLock<Vec<String>> = OnceLock::new();
    TOKENS.get_or_init(|| {
        scenario_files()
            .iter()
            .map(|(name, text)| {
                let s = Scenario::parse(text, name).unwrap();
                let mut schedule = run_random(&s, 1).schedule;
                schedule.events.truncate(200);
                let indices = schedule.to_indices(&s).unwrap();
                Token::new(s, indices).encode()
            })
            .collect()
    })
}

/// Numbers a careless or hostile user writes.
const NASTY: [&str; 12] = [
    "-1",
    "0",
    "1",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999999",
    "1000000000",
    "-9223372036854775808",
    "1e9",
    "\"3\"",
    "0x10",
];

#[derive(Clone, Debug)]
enum Mutation {
    FlipByte {
        at: usize,
        to: u8,
    },
    Delete {
        at: usize,
        len: usize,
    },
    /// Replace the n-th number in the text.
    Number {
        nth: usize,
        with: usize,
    },
    SwapLines {
        a: usize,
        b: usize,
    },
    RepeatLine {
        at: usize,
    },
    DeleteLine {
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, to)| Mutation::FlipByte { at, to }),
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..NASTY.len()).prop_map(|(nth, with)| Mutation::Number { nth, with }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        any::<usize>().prop_map(|at| Mutation::RepeatLine { at }),
        any::<usize>().prop_map(|at| Mutation::DeleteLine { at }),
    ]
}

fn apply(text: &str, m: &Mutation) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    let n = bytes.len().max(1);
    match *m {
        Mutation::FlipByte { at, to } => {
            if !bytes.is_empty() {
                bytes[at % n] = to;
            }
        }
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(bytes.len());
            bytes.drain(at.min(end)..end);
        }
        Mutation::Number { nth, with } => {
            let spans = numbers(text);
            if !spans.is_empty() {
                let (a, b) = spans[nth % spans.len()];
                bytes.splice(a..b, NASTY[with].bytes());
            }
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let len = lines.len();
                lines.swap(a % len, b % len);
            }
            bytes = lines.join("\n").into_bytes();
        }
        Mutation::RepeatLine { at } | Mutation::DeleteLine { at } => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = at % lines.len();
                if matches!(m, Mutation::RepeatLine { .. }) {
                    lines.insert(i, lines[i]);
                } else {
                    lines.remove(i);
                }
            }
            bytes = lines.join("\n").into_bytes();
        }
    }
    bytes
}

/// Byte ranges of the decimal numbers in `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Run the command in-process and judge how it ended.
fn judge(args: &[String], what: &str) -> Result<Exit, TestCaseError> {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let started = Instant::now();
    let argv = std::iter::once("zkcheck".to_string()).chain(args.iter().cloned());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(argv, &mut out, &mut err)
    }));
    let elapsed = started.elapsed();
    let err = String::from_utf8_lossy(&err);
    let exit = caught.map_err(|_| TestCaseError::fail(format!("{what}: the command panicked")))?;
    prop_assert!(elapsed < TIME_BOUND, "{what}: took {elapsed:?}");
    if let Some(rss) = zkcheck::stop::resident_bytes() {
        prop_assert!(rss < MEMORY_BOUND, "{what}: {} MiB resident", rss >> 20);
    }
    if exit == Exit::BadInput {
        prop_assert!(err.starts_with("error: "), "{what}: no message: {err}");
    }
    Ok(exit)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        rng_seed: RngSeed::Fixed(RNG_SEED),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad-input");
    std::fs::create_dir_all(&d).unwrap();
    d
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_tokens_end_with_a_verdict(
        which in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let tokens = tokens();
        let token = &tokens[which.index(tokens.len())];
        let mut bytes = token.as_bytes().to_vec();
        for m in &mutations {
            bytes = apply(&String::from_utf8_lossy(&bytes), m);
        }
        let mutated = String::from_utf8_lossy(&bytes).into_owned();
        let args = vec!["replay".to_string(), mutated.clone(), "--trace".to_string()];
        judge(&args, &format!("token after {mutations:?}: {mutated}"))?;
    }

    /// Mutations inside the token's scenario, with the checksum recomputed:
    /// the checksum is no defence, the scenario's own checks are.
    #[test]
    fn tokens_with_a_mutated_scenario_and_a_fresh_checksum_end_with_a_verdict(
        which in any::<prop::sample::Index>(),
        mutation in mutation(),
    ) {
        let files = scenario_files();
        let (name, text) = &files[which.index(files.len())];
        let s = Scenario::parse(text, name).unwrap();
        let canonical = s.to_canonical();
        let mutated = String::from_utf8_lossy(&apply(&canonical, &mutation)).into_owned();
        let token = resigned(&mutated);
        let args = vec!["replay".to_string(), token.clone()];
        judge(&args, &format!("{name} token after {mutation:?}:\n{mutated}"))?;
    }
}

/// One mutated scenario file through `check`.
fn check_mutated(
    which: prop::sample::Index,
    mutations: &[Mutation],
) -> Result<Exit, TestCaseError> {
    let files = scenario_files();
    let (name, text) = &files[which.index(files.len())];
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        bytes = apply(&String::from_utf8_lossy(&bytes), m);
    }
    // Sometimes the bytes are not even UTF-8 (a flipped byte).
    if let Mutation::FlipByte { to, .. } = mutations[0] {
        if to >= 0x80 {
            bytes.push(to);
        }
    }
    let path = dir().join(format!("{}-{name}", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let held_mb = zkcheck::stop::resident_bytes().unwrap_or(0) >> 20;
    let budget_mb = (held_mb + COMMAND_MB).to_string();
    let args: Vec<String> = [
        "check",
        path.to_str().unwrap(),
        "--quiet",
        "--time-limit",
        "2",
        "--memory-mb",
        &budget_mb,
        "--schedules",
        "20",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let what = format!(
        "{name} after {mutations:?}:\n{}",
        String::from_utf8_lossy(&bytes)
    );
    judge(&args, &what)
}

/// Mutated shipped scenarios: every one ends with a verdict, and the
/// mutations are varied enough to reach ok, violation, bad input and
/// incomplete (so the property is not passing on refusals alone).
#[test]
fn mutated_scenarios_end_with_a_verdict() {
    use proptest::test_runner::TestRunner;
    let seen = std::sync::Mutex::new(std::collections::BTreeMap::<u8, u32>::new());
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 96,
        ..config()
    });
    let strategy = (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 1..4),
    );
    let result = runner.run(&strategy, |(which, mutations)| {
        let exit = check_mutated(which, &mutations)?;
        *seen
            .lock()
            .unwrap()
            .entry(exit.number().expect("a zkcheck command says 0 to 3"))
            .or_default() += 1;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = seen.into_inner().unwrap();
    eprintln!("exit codes of mutated scenarios: {seen:?}");
    for code in [0, 1, 2] {
        assert!(
            seen.contains_key(&code),
            "no input ended with {code}: {seen:?}"
        );
    }
}

/// A token of `scenario_text` with an empty schedule and a valid checksum.
fn resigned(scenario_text: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::from("zk1:");
    for chunk in scenario_text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out.push(':');
    let sum = out.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{out}:{sum:08x}")
}

#[test]
fn every_shipped_scenario_and_token_is_accepted_unmutated() {
    for (name, text) in scenario_files() {
        Scenario::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
    }
    for t in tokens() {
        Token::decode(t).unwrap();
    }
}
