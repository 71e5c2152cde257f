//! `check --shard k/n --json` and `merge`: n shards merged give exactly the
//! unsharded run — the same verdict, the same smallest failing seed and
//! replay token, the same summed figures — for a correct recipe (ok) and a
//! broken one (violation), with random and PCT; and a merge refuses what
//! cannot be one run, and never says "ok" of a run it does not fully have.
//!
//! Most shards run in-process through the library (and the command's
//! entry point [`zkcheck::cli::run`]); one test drives the built binary.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use zkcheck::cli::{run, Exit};
use zkcheck::counterexample::Counterexample;
use zkcheck::explore::{self, Options};
use zkcheck::merge::{merge, Input};
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, StrategyKind};
use zkcheck::shard::Shard;
use zkcheck::stop::Stop;
use zkcheck::summary::{SeedRange, Summary, VerdictKind};

fn shipped(name: &str) -> String {
    format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A correct recipe under faults, and its twin that ignores its session.
const CORRECT: &str = "lock-sequential-faults.toml";
const BROKEN: &str = "lock-sequential-ignore-session.toml";

fn whole(file: &str, strategy: StrategyKind, seed: u64, schedules: u64) -> (Scenario, Options) {
    let scenario = Scenario::from_file(std::path::Path::new(&shipped(file))).unwrap();
    let mut options = Options::from_scenario(&scenario);
    options.strategy = strategy;
    options.seed = seed;
    options.schedules = schedules;
    options.jobs = 2;
    (scenario, options)
}

/// One shard through the library, as `check --shard k/n --json` runs it.
fn run_shard(scenario: &Scenario, whole: &Options, shard: Shard, progress: &Progress) -> Summary {
    let explored = shard.narrow(whole);
    let result = explore::strategy(&explored).explore(scenario, progress);
    let counterexample = result
        .failure
        .as_ref()
        .map(|f| Counterexample::of(scenario, f));
    Summary::of_check(scenario, whole, shard, &result, counterexample.as_ref())
}

fn shards(scenario: &Scenario, whole: &Options, n: u64) -> Vec<Input> {
    (0..n)
        .map(|index| Input {
            origin: format!("shard-{index}.json"),
            summary: run_shard(
                scenario,
                whole,
                Shard { index, count: n },
                &Progress::hidden(),
            ),
        })
        .collect()
}

/// The merge describes the same run as `one`, field by field.
#[track_caller]
fn assert_same_run(merged: &Summary, one: &Summary) {
    assert_eq!(merged.verdict, one.verdict);
    assert_eq!(merged.counterexample, one.counterexample);
    assert_eq!(merged.schedules, one.schedules);
    assert_eq!(merged.events, one.events);
    assert_eq!(merged.runs_cut, one.runs_cut);
    assert_eq!(merged.figures, one.figures);
    let (m, o) = (merged.seeds.as_ref().unwrap(), one.seeds.as_ref().unwrap());
    assert_eq!(
        (m.sweep, &m.completed, &m.missing),
        (o.sweep, &o.completed, &o.missing)
    );
    assert_eq!(merged.scenario, one.scenario);
    assert_eq!(merged.options, one.options);
}

#[test]
fn merged_shards_of_a_correct_recipe_equal_one_run() {
    for strategy in [StrategyKind::Random, StrategyKind::Pct] {
        let (scenario, options) = whole(CORRECT, strategy, 7, 90);
        let one = run_shard(&scenario, &options, Shard::WHOLE, &Progress::hidden());
        assert_eq!(one.verdict, VerdictKind::Ok, "{:?}", one.incomplete);
        assert_eq!(one.schedules, 90);
        assert!(one.figures.acquisitions > 0);
        for n in [1, 2, 7] {
            let merged = merge(&shards(&scenario, &options, n)).unwrap();
            assert_same_run(&merged, &one);
            assert_eq!(merged.parts.len() as u64, n);
        }
    }
}

#[test]
fn merged_shards_of_a_broken_recipe_report_the_smallest_failing_seed_of_one_run() {
    for strategy in [StrategyKind::Random, StrategyKind::Pct] {
        let (scenario, options) = whole(BROKEN, strategy, 10, 100);
        let one = run_shard(&scenario, &options, Shard::WHOLE, &Progress::hidden());
        assert_eq!(one.verdict, VerdictKind::Violation);
        let first = one.counterexample.as_ref().and_then(|c| c.seed).unwrap();
        assert!(one.counterexample.as_ref().unwrap().token.is_some());
        for n in [5, 10] {
            let inputs = shards(&scenario, &options, n);
            let failing: Vec<u64> = inputs
                .iter()
                .filter_map(|i| i.summary.counterexample.as_ref()?.seed)
                .collect();
            // Meaningful only if some later shard fails too and the
            // smallest failure is not simply the first shard's.
            assert!(
                failing.len() >= 2,
                "{strategy:?} n={n}: failing seeds {failing:?}"
            );
            assert_eq!(failing.iter().min(), Some(&first));
            if strategy == StrategyKind::Random {
                // Seeds 10.. first fail at 32: not in the first shard.
                assert_eq!(first, 32);
                assert_eq!(inputs[0].summary.verdict, VerdictKind::Ok);
            }
            let merged = merge(&inputs).unwrap();
            assert_same_run(&merged, &one);
            // The shards after the failing one ran, but are not counted.
            let ran: u64 = inputs.iter().map(|i| i.summary.schedules).sum();
            assert!(ran > merged.schedules);
            // Given in any order, the merge is the same.
            let mut reversed = inputs.clone();
            reversed.reverse();
            assert_eq!(merge(&reversed).unwrap().counterexample, one.counterexample);
        }
    }
}

#[test]
fn merges_compose() {
    let (scenario, options) = whole(BROKEN, StrategyKind::Random, 10, 100);
    let inputs = shards(&scenario, &options, 4);
    let all = merge(&inputs).unwrap();
    let low = merge(&[inputs[0].clone(), inputs[2].clone()]).unwrap();
    let high = merge(&[inputs[3].clone(), inputs[1].clone()]).unwrap();
    // Each half alone misses the other's seeds.
    assert_ne!(low.verdict, VerdictKind::Ok);
    let again = merge(&[
        Input {
            origin: "low.json".into(),
            summary: low,
        },
        Input {
            origin: "high.json".into(),
            summary: high,
        },
    ])
    .unwrap();
    assert_eq!(again.counterexample, all.counterexample);
    assert_eq!(again.figures, all.figures);
    assert_eq!((again.schedules, again.events), (all.schedules, all.events));
    assert_eq!(again.verdict, all.verdict);
    // The result survives its own JSON.
    let text = again.to_json();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(back, again);
}

#[test]
fn a_missing_shard_makes_the_merge_incomplete_not_ok() {
    let (scenario, options) = whole(CORRECT, StrategyKind::Random, 0, 40);
    let mut inputs = shards(&scenario, &options, 4);
    let gone = inputs.remove(2);
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Incomplete);
    let seeds = merged.seeds.unwrap();
    assert_eq!(seeds.missing, vec![SeedRange { start: 20, end: 30 }]);
    assert!(
        merged
            .incomplete
            .iter()
            .any(|r| r.contains("seeds 20..30") && r.contains("shard 2/4")),
        "{:?}",
        merged.incomplete
    );
    assert_eq!(gone.summary.verdict, VerdictKind::Ok);
}

#[test]
fn a_shard_stopped_early_makes_the_merge_incomplete_and_a_violation_after_it_is_still_reported() {
    let (scenario, options) = whole(CORRECT, StrategyKind::Random, 0, 40);
    let mut inputs = shards(&scenario, &options, 4);
    let stop = Stop::default();
    stop.request(); // as Ctrl-C before the first seed
    let stopped = run_shard(
        &scenario,
        &options,
        Shard { index: 1, count: 4 },
        &Progress::hidden().with_stop(stop),
    );
    assert_eq!(stopped.verdict, VerdictKind::Incomplete);
    inputs[1].summary = stopped;
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Incomplete);
    assert!(merged
        .incomplete
        .iter()
        .any(|r| r.contains("shard 1/4") && r.contains("stopped early")));
    assert_eq!(
        merged.seeds.unwrap().missing,
        vec![SeedRange { start: 10, end: 20 }]
    );

    // A violation found past seeds nobody ran is still a violation, with a warning.
    let (scenario, options) = whole(BROKEN, StrategyKind::Random, 10, 100);
    let mut inputs = shards(&scenario, &options, 5);
    inputs.remove(0);
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Violation);
    assert!(merged
        .incomplete
        .iter()
        .any(|r| r.contains("smaller failing seed may exist")));
}

#[test]
fn merges_refuse_what_is_not_one_run() {
    let (scenario, options) = whole(CORRECT, StrategyKind::Random, 0, 40);
    let inputs = shards(&scenario, &options, 4);

    // The same shard twice.
    let mut twice = inputs.clone();
    twice.push(Input {
        origin: "again.json".into(),
        ..inputs[3].clone()
    });
    let e = merge(&twice).unwrap_err();
    assert!(e.contains("overlap") && e.contains("again.json"), "{e}");

    // Shards of two different splits overlap too.
    let other = run_shard(
        &scenario,
        &options,
        Shard { index: 0, count: 2 },
        &Progress::hidden(),
    );
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "half.json".into(),
            summary: other,
        },
    ])
    .unwrap_err();
    assert!(e.contains("overlap") && e.contains("half.json"), "{e}");

    // Another scenario.
    let (broken, broken_options) = whole(BROKEN, StrategyKind::Random, 0, 40);
    let foreign = run_shard(
        &broken,
        &broken_options,
        Shard { index: 1, count: 4 },
        &Progress::hidden(),
    );
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "foreign.json".into(),
            summary: foreign,
        },
    ])
    .unwrap_err();
    assert!(
        e.contains("foreign.json") && e.contains("different scenarios"),
        "{e}"
    );

    // Other options (another sweep; another strategy).
    let (_, mut wider) = whole(CORRECT, StrategyKind::Random, 0, 80);
    wider.jobs = 1;
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "wider.json".into(),
            summary: run_shard(
                &scenario,
                &wider,
                Shard { index: 3, count: 4 },
                &Progress::hidden(),
            ),
        },
    ])
    .unwrap_err();
    assert!(
        e.contains("wider.json") && e.contains("schedules 80"),
        "{e}"
    );
    let (_, pct) = whole(CORRECT, StrategyKind::Pct, 0, 40);
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "pct.json".into(),
            summary: run_shard(
                &scenario,
                &pct,
                Shard { index: 1, count: 4 },
                &Progress::hidden(),
            ),
        },
    ])
    .unwrap_err();
    assert!(e.contains("pct.json") && e.contains("strategy pct"), "{e}");

    // A result whose seeds were edited.
    let mut edited = inputs[1].clone();
    edited.summary.seeds.as_mut().unwrap().assigned[0].end += 1;
    let e = merge(&[inputs[0].clone(), edited]).unwrap_err();
    assert!(e.contains("shard-1.json") && e.contains("edited"), "{e}");

    // Nothing.
    assert!(merge(&[]).is_err());

    // A run of --jobs 1 merges with shards of --jobs 2: results never depend on it.
    let (_, mut one_job) = whole(CORRECT, StrategyKind::Random, 0, 40);
    one_job.jobs = 1;
    let mut mixed = inputs.clone();
    mixed[2].summary = run_shard(
        &scenario,
        &one_job,
        Shard { index: 2, count: 4 },
        &Progress::hidden(),
    );
    assert_eq!(merge(&mixed).unwrap().verdict, VerdictKind::Ok);
}

// --- the command ---------------------------------------------------------

struct Ran {
    exit: Exit,
    out: String,
    err: String,
}

fn zk(args: &[&str]) -> Ran {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("zkcheck").chain(args.iter().copied());
    let exit = run(argv, &mut out, &mut err);
    Ran {
        exit,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
    }
}

fn temp(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shards");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[track_caller]
fn assert_bad(r: &Ran, needles: &[&str]) {
    assert_eq!(r.exit, Exit::BadInput, "out: {}\nerr: {}", r.out, r.err);
    assert!(!r.err.contains("panicked"), "{}", r.err);
    for n in needles {
        assert!(r.err.contains(n), "expected {n:?} in: {}", r.err);
    }
}

#[test]
fn bad_shards_are_refused_naming_the_flag() {
    let file = shipped(CORRECT);
    for (shard, needle) in [
        ("3/", "not k/n"),
        ("a/b", "not k/n"),
        ("/4", "not k/n"),
        ("4/4", "below the number of shards"),
        ("7/4", "below the number of shards"),
        ("0/0", "between 1 and 1000000"),
        ("0/2000000", "between 1 and 1000000"),
        ("0/400", "some shard"),
    ] {
        let r = zk(&["check", &file, "--shard", shard, "--quiet"]);
        assert_bad(&r, &["`--shard`", needle]);
    }
    for strategy in ["bfs", "dfs"] {
        let r = zk(&[
            "check",
            &file,
            "--strategy",
            strategy,
            "--shard",
            "0/2",
            "--quiet",
        ]);
        assert_bad(&r, &["`--shard`", strategy]);
    }
    let r = zk(&["replay", "zk1:x:y:00000000", "--shard", "0/2"]);
    assert_bad(&r, &["--shard"]);
}

#[test]
fn check_json_is_one_object_on_stdout_and_merge_reads_it_back() {
    let file = shipped(BROKEN);
    let mut paths = Vec::new();
    let mut exits = Vec::new();
    for k in 0..3 {
        let shard = format!("{k}/3");
        let r = zk(&[
            "check",
            &file,
            "--seed",
            "10",
            "--schedules",
            "60",
            "--shard",
            &shard,
            "--json",
            "--quiet",
        ]);
        // stdout holds the object alone; the human summary went to stderr.
        assert_eq!(r.out.lines().count(), 1, "{}", r.out);
        assert!(r.err.contains(&format!("(shard {shard})")), "{}", r.err);
        let summary: Summary = serde_json::from_str(&r.out).unwrap();
        assert_eq!(summary.shard, Some(Shard { index: k, count: 3 }));
        exits.push(r.exit);
        paths.push(temp(&format!("cli-{k}.json"), &r.out));
    }
    assert!(exits.contains(&Exit::Violation), "{exits:?}");
    let whole = zk(&[
        "check",
        &file,
        "--seed",
        "10",
        "--schedules",
        "60",
        "--json",
        "--quiet",
        "--jobs",
        "1",
    ]);
    let one: Summary = serde_json::from_str(&whole.out).unwrap();

    let args: Vec<&str> = std::iter::once("merge")
        .chain(paths.iter().map(String::as_str))
        .collect();
    let human = zk(&args);
    assert_eq!(human.exit, Exit::Violation, "{}", human.err);
    let token = one.counterexample.as_ref().unwrap().token.clone().unwrap();
    assert!(
        human.out.contains(&format!("replay: {token}")),
        "{}",
        human.out
    );

    let mut json_args = args.clone();
    json_args.push("--json");
    let merged: Summary = serde_json::from_str(&zk(&json_args).out).unwrap();
    assert_same_run(&merged, &one);

    // Without the failing shard (1/3: seed 32), the others are no verdict
    // of the whole sweep: incomplete, exit 3, never ok.
    assert_eq!(exits, [Exit::Ok, Exit::Violation, Exit::Ok]);
    let r = zk(&["merge", &paths[0], &paths[2]]);
    assert_eq!(r.exit, Exit::Incomplete, "{}", r.out);
    assert!(
        r.out
            .contains("seeds 30..50 were not run: no result for shard 1/3"),
        "{}",
        r.out
    );
    let ok_file = shipped(CORRECT);
    let part = zk(&[
        "check",
        &ok_file,
        "--schedules",
        "20",
        "--shard",
        "1/2",
        "--json",
        "--quiet",
    ]);
    assert_eq!(part.exit, Exit::Ok, "{}", part.err);
    let r = zk(&["merge", &temp("half.json", &part.out)]);
    assert_eq!(r.exit, Exit::Incomplete, "{}", r.out);
    assert!(
        r.out
            .contains("INCOMPLETE: seeds 0..10 were not run: no result for shard 0/2"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("\nok"), "{}", r.out);
}

#[test]
fn merge_refuses_malformed_and_foreign_input_naming_the_file() {
    let r = zk(&[
        "merge",
        &temp("cut.json", "{\"format\":\"zkcheck-result/1\",\"scen"),
    ]);
    assert_bad(&r, &["cut.json", "line 1 column"]);
    let r = zk(&["merge", &temp("empty.json", "  \n")]);
    assert_bad(&r, &["empty.json", "no result"]);
    let r = zk(&[
        "merge",
        &temp("future.json", "{\"format\":\"zkcheck-result/9\",\"x\":1}"),
    ]);
    assert_bad(&r, &["future.json", "zkcheck-result/9", "not supported"]);
    let r = zk(&["merge", "/nonexistent/zkcheck/shard.json"]);
    assert_bad(&r, &["/nonexistent/zkcheck/shard.json", "cannot read"]);
    let r = zk(&["merge"]);
    assert_eq!(r.exit, Exit::BadInput);

    // Exhaustive results are one whole run: nothing to merge.
    let small = shipped("lock-sequential-small.toml");
    let bfs = zk(&["check", &small, "--depth", "8", "--json", "--quiet"]);
    let summary: Summary = serde_json::from_str(&bfs.out).unwrap();
    assert_eq!(summary.strategy, StrategyKind::Bfs);
    assert!(summary.distinct_states.unwrap() > 0 && summary.seeds.is_none());
    let r = zk(&["merge", &temp("bfs.json", &bfs.out)]);
    assert_bad(&r, &["bfs.json", "bfs result cannot be merged"]);
}

/// The built binary, as a cluster runs it: shards to files, then `merge`
/// of the files and of the same results on standard input.
#[test]
fn the_binary_runs_shards_and_merges_them_from_files_and_stdin() {
    let bin = env!("CARGO_BIN_EXE_zkcheck");
    let file = shipped(BROKEN);
    let mut texts = String::new();
    let mut paths = Vec::new();
    for k in 0..4 {
        let o = Command::new(bin)
            .args([
                "check",
                &file,
                "--seed",
                "10",
                "--schedules",
                "100",
                "--json",
                "--quiet",
            ])
            .args(["--shard", &format!("{k}/4")])
            .output()
            .unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{o:?}");
        let text = String::from_utf8(o.stdout).unwrap();
        texts += &text;
        paths.push(temp(&format!("bin-{k}.json"), &text));
    }
    let o = Command::new(bin)
        .arg("merge")
        .args(&paths)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let from_files = String::from_utf8(o.stdout).unwrap();
    assert!(
        from_files.contains("VIOLATION of owner (found by seed 32, shard 0/4"),
        "{from_files}"
    );

    let mut child = Command::new(bin)
        .args(["merge", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), texts.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let from_stdin = String::from_utf8(o.stdout).unwrap();
    // Same verdict and token; only the origin names differ.
    let tail = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("shard 0/4 in"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(tail(&from_stdin), tail(&from_files));
}

#[test]
fn a_shard_ended_by_its_time_limit_says_incomplete_in_its_json() {
    // Far more seeds than a second holds: the time limit ends the shard.
    let r = zk(&[
        "check",
        &shipped(CORRECT),
        "--schedules",
        "1000000000",
        "--shard",
        "1/2",
        "--time-limit",
        "1",
        "--json",
        "--quiet",
    ]);
    assert_eq!(r.exit, Exit::Incomplete, "{}", r.err);
    let s: Summary = serde_json::from_str(&r.out).unwrap();
    assert_eq!(s.verdict, VerdictKind::Incomplete);
    assert!(
        s.incomplete.iter().any(|x| x.contains("time limit")),
        "{:?}",
        s.incomplete
    );
    let seeds = s.seeds.clone().unwrap();
    assert_eq!(
        seeds.assigned,
        vec![SeedRange {
            start: 500_000_000,
            end: 1_000_000_000
        }]
    );
    assert_eq!(seeds.missing[0].end, 1_000_000_000);
    assert_eq!(seeds.missing[0].start, 500_000_000 + s.schedules);
    let merged = merge(&[Input {
        origin: "slow.json".into(),
        summary: s,
    }])
    .unwrap();
    assert_eq!(merged.verdict, VerdictKind::Incomplete);
}

mod edited {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// Two shards' results as JSON values, run once.
    fn results() -> &'static (serde_json::Value, serde_json::Value) {
        static R: OnceLock<(serde_json::Value, serde_json::Value)> = OnceLock::new();
        R.get_or_init(|| {
            let (scenario, options) = whole(BROKEN, StrategyKind::Random, 30, 10);
            let mut v = shards(&scenario, &options, 2)
                .into_iter()
                .map(|i| serde_json::to_value(&i.summary).unwrap());
            (v.next().unwrap(), v.next().unwrap())
        })
    }

    /// The JSON pointer of every number in `v`.
    fn numbers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Number(_) => out.push(at),
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    numbers(x, format!("{at}/{i}"), out);
                }
            }
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    numbers(
                        x,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            _ => {}
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Whatever number an edit puts anywhere in a result, `merge` answers
        /// (a merge or a refusal) and never panics.
        #[test]
        fn merge_never_panics_on_edited_numbers(which in any::<prop::sample::Index>(), value in prop_oneof![Just(0u64), Just(u64::MAX), Just(1u64), any::<u64>()], second in any::<bool>()) {
            let (mut a, mut b) = results().clone();
            let target = if second { &mut b } else { &mut a };
            let mut slots = Vec::new();
            numbers(target, String::new(), &mut slots);
            // Figures are summed like every `Tally` (wrapping in a release
            // build, checked in a debug one); every other number is checked.
            slots.retain(|p| !p.contains("/figures"));
            let slot = &slots[which.index(slots.len())];
            *target.pointer_mut(slot).unwrap() = serde_json::Value::from(value);
            let read = |v: serde_json::Value| serde_json::from_value::<Summary>(v);
            if let (Ok(a), Ok(b)) = (read(a), read(b)) {
                let _ = merge(&[
                    Input { origin: "a.json".into(), summary: a },
                    Input { origin: "b.json".into(), summary: b },
                ]);
            }
        }
    }
}
