//! A bounded fuzz of every door (issue 35): mutated scenario files, replay
//! tokens and shard files, run in-process through the command's entry
//! point from one fixed seed (the same cases on every run and in CI).
//!
//! Each case asserts two things. Nothing panics (a panic anywhere in the
//! command fails the test, naming the input). And the command never says
//! "ok" (exit 0) on an input that judges nothing or was not judged whole:
//! a hard check set that is empty or cannot fail for its recipe and client
//! count, a fault aimed at a role the recipe never plays, a result that
//! says it is incomplete or cut. Which checks cannot fail is written here
//! again from the issue's own cases, not taken from the checker's rule,
//! so that a rule that went lax would be caught.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cli_kit::{write_input, zk, Ran};
use zkcheck::monitor::Property;
use zkcheck::scenario::{property_by_name, Scenario};
use zkcheck::scenario::{Role, Target};
use zkcheck::token::Token;
use zkcheck_cli::command::Exit;
use zkcheck_cli::summary::{Summary, VerdictKind};
use zkrecipes::Family;

/// The fuzz's one seed.
const SEED: u64 = 0x3536_d002;
const SCENARIO_CASES: usize = 90;
const TOKEN_CASES: usize = 60;
const SHARD_CASES: usize = 40;

/// SplitMix64: a fixed stream, no dependency, no global state.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn shipped(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../scenarios/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const BASES: [&str; 8] = [
    "lock-sequential-small.toml",
    "lock-naive.toml",
    "lock-sequential-ignore-session.toml",
    "election.toml",
    "queue.toml",
    "rwlock.toml",
    "lock-sequential-adopt-any.toml",
    "seeds/zklock-nofaults.toml",
];

const CHECKS: [&str; 10] = [
    "mutex",
    "fifo",
    "herd",
    "liveness",
    "leaks",
    "queue",
    "election",
    "owner",
    "fenced-mutex",
    "asked",
];
const ROLES: [&str; 5] = ["holder", "waiter", "leader", "releaser", "queued"];
const RECIPES: [&str; 5] = [
    "naive",
    "sequential",
    "election",
    "naive-no-rewatch",
    "rwlock",
];

/// Replace the value of the first line starting with `key =`, or append it.
fn set_key(text: &str, key: &str, value: &str) -> String {
    let mut done = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if !done && l.trim_start().starts_with(&format!("{key} =")) {
                done = true;
                format!("{key} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    let mut out = lines.join("\n") + "\n";
    if !done {
        out = format!("{key} = {value}\n{out}");
    }
    out
}

/// One mutation of a scenario's text (bytes: some make invalid UTF-8).
fn mutate_scenario(rng: &mut Rng, text: &str) -> Vec<u8> {
    match rng.below(11) {
        0 => set_key(text, "clients", rng.pick(&["1", "2", "3"])).into_bytes(),
        1 => {
            let n = rng.below(3);
            let hard: Vec<String> = (0..n).map(|_| format!("\"{}\"", rng.pick(&CHECKS))).collect();
            set_key(text, "hard", &format!("[{}]", hard.join(", "))).into_bytes()
        }
        2 if text.contains("\nrecipe =") || text.starts_with("recipe =") => {
            set_key(text, "recipe", &format!("\"{}\"", rng.pick(&RECIPES))).into_bytes()
        }
        3 if !text.contains("[faults") => {
            let kind = rng.pick(&["expiries", "connection_drops", "kills", "partitions"]);
            format!(
                "{text}\n[faults]\n{kind} = 1\n[faults.aim]\n{kind} = \"{}\"\n",
                rng.pick(&ROLES)
            )
            .into_bytes()
        }
        4 => {
            // A number somewhere replaced by an edge value.
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|(i, c)| c.is_ascii_digit() && (*i == 0 || !text[..*i].ends_with(|c: char| c.is_ascii_digit())))
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                return text.as_bytes().to_vec();
            }
            let at = rng.pick(&digits);
            let end = text[at..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(text.len(), |e| at + e);
            let value = rng.pick(&["0", "1", "2", "-1", "4294967296", "99999999999"]);
            format!("{}{value}{}", &text[..at], &text[end..]).into_bytes()
        }
        5 => text
            .replacen("name = \"", "name = \"\\u001b[2J", 1)
            .into_bytes(),
        6 => {
            let mut b = text.as_bytes().to_vec();
            b.truncate(rng.below(b.len() + 1));
            b
        }
        7 => {
            let mut b = text.as_bytes().to_vec();
            let at = rng.below(b.len() + 1);
            b.insert(at, rng.pick(&[0xff, 0xc3, b'"', b'[', b'.', b'\n', 0]));
            b
        }
        8 => set_key(text, "root", "\"/zookeeper\"").into_bytes(),
        9 => format!("{text}\n[[parent]]\npath = \"/p\"\ncounter = -1\n").into_bytes(),
        _ => format!(
            "{text}\n[[clients]]\nrecipe = \"sequential\"\ncount = 2\nworkload = {{ rounds = {} }}\n",
            rng.pick(&["0", "1", "1000000000"])
        )
        .into_bytes(),
    }
}

/// Why `s` judges nothing, by the issue's own cases (`None`: it judges).
fn judges_nothing(s: &Scenario) -> Option<String> {
    let user = s.always.len() + s.monitors.len();
    if s.hard.is_empty() && user == 0 {
        return Some("no hard check".into());
    }
    let no_line = s.recipe.starts_with("naive") || s.recipe == "idle";
    for &p in &s.hard {
        let vacuous = match p {
            Property::MutualExclusion => s.clients < 2,
            Property::Fifo => s.clients < 2 || (no_line && s.groups.is_empty()),
            Property::NoHerd => s.clients < 3,
            _ => false,
        };
        if vacuous {
            return Some(format!(
                "hard {p:?} with {} clients of {}",
                s.clients, s.recipe
            ));
        }
    }
    let family = s.family();
    let aims = &s.aims;
    for aim in [
        aims.connection_drops,
        aims.expiries,
        aims.kills,
        aims.pauses,
        aims.crashes,
        aims.partitions,
    ]
    .into_iter()
    .flatten()
    {
        let Target::Role(role) = aim else { continue };
        let never = match family {
            Family::Lock | Family::RwLock => {
                role == Role::Leader || (role == Role::Queued && no_line)
            }
            Family::Election => role == Role::Releaser,
            Family::Queue => role != Role::Waiter,
        };
        if never {
            return Some(format!("a fault aimed at {} on {}", role.name(), s.recipe));
        }
    }
    None
}

/// Run the command, turning a panic into a failure that names the input.
fn run(args: &[&str], input: &str) -> Ran {
    match catch_unwind(AssertUnwindSafe(|| zk(args))) {
        Ok(r) => r,
        Err(_) => panic!("zkcheck {args:?} panicked on:\n{input}"),
    }
}

/// The summary a `--json` run printed, when it printed one.
fn summary_of(r: &Ran) -> Option<Summary> {
    serde_json::from_str(r.out.trim()).ok()
}

#[track_caller]
fn assert_ok_is_earned(r: &Ran, scenario: Option<&Scenario>, input: &str) {
    if r.exit != Exit::Ok {
        return;
    }
    if let Some(s) = scenario {
        if let Some(why) = judges_nothing(s) {
            panic!(
                "exit 0 on a scenario that judges nothing ({why}):\n{input}\n{}",
                r.out
            );
        }
    }
    if let Some(summary) = summary_of(r) {
        assert_eq!(summary.verdict, VerdictKind::Ok, "{input}");
        assert!(
            summary.incomplete.is_empty(),
            "{input}: {:?}",
            summary.incomplete
        );
        assert_eq!(summary.runs_cut, 0, "exit 0 with runs cut:\n{input}");
        assert!(!summary.scenario.hard.is_empty(), "{input}");
    }
}

#[test]
fn fuzz_doors_mutated_scenarios_never_pass_unjudged() {
    let mut rng = Rng(SEED);
    let mut exits = std::collections::BTreeMap::<String, usize>::new();
    for case in 0..SCENARIO_CASES {
        let base = shipped(rng.pick(&BASES));
        let mut bytes = base.into_bytes();
        for _ in 0..1 + rng.below(3) {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            bytes = mutate_scenario(&mut rng, &text);
        }
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-doors");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("case-{case}.toml"));
        std::fs::write(&path, &bytes).unwrap();
        let path = path.to_string_lossy().into_owned();
        let shown = String::from_utf8_lossy(&bytes).into_owned();
        let r = run(
            &[
                "check",
                &path,
                "--json",
                "--quiet",
                "--strategy",
                "random",
                "--schedules",
                "6",
                "--jobs",
                "1",
            ],
            &shown,
        );
        *exits.entry(format!("{:?}", r.exit)).or_default() += 1;
        let parsed = Scenario::from_file(std::path::Path::new(&path)).ok();
        if r.exit == Exit::Ok {
            assert!(
                parsed.is_some(),
                "exit 0 on a file the parser refuses:\n{shown}"
            );
        }
        assert_ok_is_earned(&r, parsed.as_ref(), &shown);
    }
    // The mutations reach both sides: refusals and runs that pass.
    assert!(
        exits.get("BadInput").copied().unwrap_or(0) > 10,
        "{exits:?}"
    );
    assert!(exits.get("Ok").copied().unwrap_or(0) > 3, "{exits:?}");
}

/// A scenario's fields set as no file would: the token door alone checks them.
fn mutate_fields(rng: &mut Rng, s: &mut Scenario) {
    match rng.below(4) {
        0 => s.clients = 1 + rng.below(3),
        1 => {
            s.hard = (0..rng.below(3))
                .filter_map(|_| property_by_name(rng.pick(&CHECKS)))
                .collect();
            s.report.retain(|p| !s.hard.contains(p));
        }
        2 => {
            s.faults.expiries = 1;
            s.aims.expiries = Role::by_name(rng.pick(&ROLES)).map(Target::Role);
        }
        _ => s.name = format!("{}\u{1b}[2J", s.name),
    }
}

#[test]
fn fuzz_doors_mutated_tokens_never_pass_unjudged() {
    let mut rng = Rng(SEED ^ 1);
    for _ in 0..TOKEN_CASES {
        let base = Scenario::parse(&shipped(rng.pick(&BASES)), "base").unwrap();
        let mut s = base.clone();
        for _ in 0..1 + rng.below(2) {
            mutate_fields(&mut rng, &mut s);
        }
        s.explore.max_steps = s.explore.max_steps.min(3000);
        let indices: Vec<u32> = (0..rng.below(40)).map(|_| rng.below(4) as u32).collect();
        let mut token = Token::new(s.clone(), indices).encode();
        if rng.below(3) == 0 {
            // Damage it: a changed character or a cut.
            let at = rng.below(token.len());
            if rng.below(2) == 0 {
                token.truncate(at);
            } else {
                token.replace_range(at..at + 1, rng.pick(&["A", "0", ":", "é", "\u{0}"]));
            }
        }
        let r = run(&["replay", &token], &token);
        if r.exit == Exit::Ok {
            let decoded = Token::decode(&token).unwrap_or_else(|e| {
                panic!("exit 0 on a token that does not decode ({e}): {token}")
            });
            assert_ok_is_earned(&r, Some(&decoded.scenario), &token);
        }
    }
}

fn shard_results() -> Vec<String> {
    let path = write_input(
        "fuzz-doors",
        "shards.toml",
        &shipped("lock-sequential-small.toml"),
    );
    ["0/2", "1/2"]
        .iter()
        .map(|k| {
            let r = zk(&[
                "check",
                &path,
                "--json",
                "--quiet",
                "--strategy",
                "random",
                "--schedules",
                "10",
                "--shard",
                k,
            ]);
            assert_eq!(r.exit, Exit::Ok, "{}", r.err);
            r.out.trim().to_string()
        })
        .collect()
}

#[test]
fn fuzz_doors_mutated_shard_files_never_pass_unjudged() {
    let shards = shard_results();
    let mut rng = Rng(SEED ^ 2);
    let mut passed = 0;
    for case in 0..SHARD_CASES {
        let mut texts = shards.clone();
        let which = rng.below(texts.len());
        let t = &mut texts[which];
        match rng.below(6) {
            0 => {
                *t = t.replacen(
                    "\"incomplete\":[]",
                    "\"incomplete\":[\"interrupted (Ctrl-C or a termination signal)\"]",
                    1,
                )
            }
            1 => t.truncate(rng.below(t.len())),
            2 => {
                let at = rng.below(t.len());
                t.replace_range(at..at + 1, rng.pick(&["}", "\"", "9", "-", "x"]));
            }
            3 => {
                texts.remove(which);
            }
            4 => *t = t.replacen("\"hard\":[\"mutex\",\"fenced-mutex\"]", "\"hard\":[]", 1),
            _ => {} // unchanged: the pair must merge to ok
        }
        let files: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| write_input("fuzz-doors", &format!("shard-{case}-{i}.json"), text))
            .collect();
        let mut args = vec!["merge", "--json"];
        args.extend(files.iter().map(String::as_str));
        let shown = texts.join("\n");
        let r = run(&args, &shown);
        if r.exit == Exit::Ok {
            passed += 1;
            assert_eq!(texts.len(), 2, "exit 0 with a shard missing");
            for text in &texts {
                let s: Summary = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("exit 0 on a damaged shard file ({e}):\n{text}"));
                assert!(
                    s.incomplete.is_empty(),
                    "exit 0 over an incomplete shard:\n{text}"
                );
                assert_eq!(s.runs_cut, 0, "{text}");
                assert!(
                    !s.scenario.hard.is_empty(),
                    "exit 0 judging nothing:\n{text}"
                );
            }
            assert_ok_is_earned(&r, None, &shown);
        }
    }
    assert!(passed > 0, "the unchanged pair merges to ok");
}
