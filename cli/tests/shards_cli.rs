//! The command side of shards: `check --shard k/n` refuses bad input
//! naming the flag, `check --json` prints one object on stdout, `merge`
//! reads files and stdin, refuses malformed and foreign input naming the
//! file, and the built binary does it all as a cluster would run it.

use std::process::{Command, Stdio};

use crate::cli_kit::{write_input, zk, Ran};
use crate::shard_kit::*;
use zkcheck::scenario::Search;
use zkcheck_cli::command::Exit;
use zkcheck_cli::merge::{merge, Input};
use zkcheck_cli::shard::Shard;
use zkcheck_cli::summary::{SeedRange, Summary, VerdictKind};

fn temp(name: &str, text: &str) -> String {
    write_input("shards", name, text)
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
    // A bound beyond the counterexample's own length is a claim no shard
    // makes: refused, naming the file and the field (the same file
    // unedited merged above).
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&paths[1]).unwrap()).unwrap();
    let steps = value["counterexample"]["steps"].as_u64().unwrap();
    value["counterexample"]["no_shorter_than"] = (steps + 1).into();
    let forged = temp("cli-forged.json", &value.to_string());
    assert_bad(
        &zk(&["merge", &paths[0], &forged, &paths[2]]),
        &[
            "cli-forged.json",
            "counterexample.no_shorter_than",
            "was the result edited?",
        ],
    );

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
    assert_eq!(summary.strategy, Search::Bfs);
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
