//! `zkcheck judge FILE`: the front end's door to zkjudge — exit codes,
//! stories, JSON, the viewer page, and the same output for the same history.
//! (The judges themselves are tested both ways in `judge/tests`.)

use zkcheck_cli::command::Exit;
use zkjudge::build::Build;

use crate::cli_kit::{write_input, zk};

/// Two sessions; 0x2 writes /R while 0x1 holds /L.
fn skipped_predecessor(end: bool) -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let first = h.lock(1, "/L", "_c_a-lock-");
    h.lock(2, "/L", "_c_b-lock-");
    h.set(2, "/R", -1);
    h.delete(1, &first);
    h.close(1);
    h.close(2);
    if end {
        h.end();
    }
    h
}

fn taking_turns() -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "_c_a-lock-");
    let b = h.lock(2, "/L", "_c_b-lock-");
    h.set(1, "/R", -1);
    h.delete(1, &a);
    h.set(2, "/R", -1);
    h.delete(2, &b);
    h.close(1);
    h.close(2);
    h.end();
    h
}

#[test]
fn judge_exits_1_with_the_story_and_says_it_again_byte_for_byte() {
    let file = write_input("judge", "skip.jsonl", &skipped_predecessor(true).text());
    let args = ["judge", &file, "--lock", "/L", "--resource", "/R"];
    let first = zk(&args);
    assert_eq!(first.exit, Exit::Violation, "{}{}", first.out, first.err);
    assert!(
        first
            .out
            .contains("owner-writes: VIOLATION: session 0x2 wrote /R"),
        "{}",
        first.out
    );
    assert!(
        first.out.contains("the lock was session 0x1's"),
        "{}",
        first.out
    );
    assert!(
        first.out.contains("verdict: violation (exit 1)"),
        "{}",
        first.out
    );
    let again = zk(&args);
    assert_eq!(first.out, again.out, "the same history, the same verdict");
    let json = zk(&["judge", &file, "--lock", "/L", "--resource", "/R", "--json"]);
    assert_eq!(json.exit, Exit::Violation);
    let v: serde_json::Value = serde_json::from_str(json.out.trim()).expect("one JSON object");
    assert_eq!(v["format"], "zkjudge-verdicts/1");
    assert_eq!(v["exit"], 1);
    assert_eq!(v["verdicts"][0]["judge"], "owner-writes");
    assert_eq!(v["verdicts"][0]["status"], "violation");
}

#[test]
fn judge_exits_0_only_when_every_judge_held_over_something() {
    let file = write_input("judge", "turns.jsonl", &taking_turns().text());
    let ran = zk(&[
        "judge",
        &file,
        "--lock",
        "/L",
        "--resource",
        "/R",
        "--only",
        "owner-writes",
    ]);
    assert_eq!(ran.exit, Exit::Ok, "{}{}", ran.out, ran.err);
    // Nothing written under the resource named: nothing judged, not ok.
    let ran = zk(&[
        "judge",
        &file,
        "--lock",
        "/L",
        "--resource",
        "/X",
        "--only",
        "owner-writes",
    ]);
    assert_eq!(ran.exit, Exit::Incomplete, "{}", ran.out);
    assert!(ran.out.contains("no committed write to /X"), "{}", ran.out);
}

#[test]
fn judge_exits_3_on_a_cut_history_unless_it_found_a_violation() {
    let text = taking_turns().text();
    let without_end: String = text
        .lines()
        .filter(|l| !l.contains("\"k\":\"end\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = write_input("judge", "cut.jsonl", &without_end);
    let ran = zk(&["judge", &file, "--lock", "/L", "--resource", "/R"]);
    assert_eq!(ran.exit, Exit::Incomplete, "{}", ran.out);
    assert!(ran.out.contains("no `end` record"), "{}", ran.out);
    let file = write_input("judge", "cut-bad.jsonl", &skipped_predecessor(false).text());
    let ran = zk(&["judge", &file, "--lock", "/L", "--resource", "/R"]);
    assert_eq!(
        ran.exit,
        Exit::Violation,
        "a violation stands in a cut run: {}",
        ran.out
    );
}

#[test]
fn judge_refuses_bad_input_naming_the_line_or_the_flag() {
    let mut text = taking_turns().text();
    let at = text.match_indices('\n').nth(2).map(|(i, _)| i).unwrap();
    text.insert_str(at + 1, "{\"k\":\"commit\",\"zxid\":\"x\"}\n");
    let file = write_input("judge", "bad.jsonl", &text);
    let ran = zk(&["judge", &file]);
    assert_eq!(ran.exit, Exit::BadInput);
    assert!(ran.err.contains("line 4:"), "{}", ran.err);
    let ran = zk(&["judge", "/nonexistent/history.jsonl"]);
    assert_eq!(ran.exit, Exit::BadInput);
    assert!(
        ran.err.contains("cannot read /nonexistent/history.jsonl"),
        "{}",
        ran.err
    );
    let good = write_input("judge", "good.jsonl", &taking_turns().text());
    for flags in [
        &["--lock", "L"][..],
        &["--resource", "/R/"],
        &["--queue", "/Q//x"],
        &["--only", "no-such-judge"],
        &["--marker", "a/b"],
    ] {
        let mut args = vec!["judge", good.as_str()];
        args.extend_from_slice(flags);
        let ran = zk(&args);
        assert_eq!(ran.exit, Exit::BadInput, "{flags:?}: {}", ran.err);
        assert!(ran.err.starts_with("error: "), "{flags:?}: {}", ran.err);
    }
}

#[test]
fn judge_writes_the_history_as_a_page_with_the_cited_records_marked() {
    let file = write_input("judge", "page.jsonl", &skipped_predecessor(true).text());
    let html = write_input("judge", "page.html", "");
    let ran = zk(&[
        "judge",
        &file,
        "--lock",
        "/L",
        "--resource",
        "/R",
        "--html",
        &html,
    ]);
    assert_eq!(ran.exit, Exit::Violation);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script"),
        "no script: it opens from disk as it is"
    );
    assert!(
        page.contains("owner-writes: VIOLATION"),
        "the verdict on top"
    );
    assert!(
        page.contains("<a href=\"#line-13\">line 13</a>"),
        "story lines link to rows"
    );
    assert!(page.contains("<g id=\"line-13\">"), "the write's row");
    assert!(
        page.contains(">0x1</text>")
            && page.contains(">0x2</text>")
            && page.contains(">s0 (leader)</text>"),
        "a lane per session and server"
    );
}
