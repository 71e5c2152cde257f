//! The `zkcheck` command's answers to bad input: exit code 2 and a message
//! that says what is wrong and where. Never a panic.

use std::path::PathBuf;
use std::process::{Command, Output};

fn zkcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(args)
        .output()
        .expect("the zkcheck binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Write a scenario file under the test's temp dir.
fn scenario_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-scenarios");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn check_file(name: &str, text: &str) -> Output {
    let path = scenario_file(name, text);
    zkcheck(&["check", path.to_str().unwrap()])
}

fn assert_bad_input(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "expected {n:?} in: {err}");
    }
}

#[test]
fn missing_scenario_file_is_bad_input() {
    let o = zkcheck(&["check", "/nonexistent/zkcheck/nope.toml"]);
    assert_bad_input(&o, &["/nonexistent/zkcheck/nope.toml", "cannot read"]);
}

#[test]
fn toml_syntax_error_names_file_line_and_column() {
    let o = check_file(
        "syntax.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = = 2\n",
    );
    assert_bad_input(&o, &["syntax.toml:3:"]);
}

#[test]
fn unknown_recipe_is_named_and_known_ones_listed() {
    let o = check_file(
        "recipe.toml",
        "name = \"x\"\nrecipe = \"nope\"\nclients = 2\n",
    );
    assert_bad_input(&o, &["recipe.toml:2:10", "unknown recipe `nope`", "idle"]);
}

#[test]
fn unknown_field_is_named_with_its_line() {
    let o = check_file(
        "field.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = 2\n\n[ensemble]\nservrs = 3\n",
    );
    assert_bad_input(&o, &["field.toml:6:", "servrs"]);
}

#[test]
fn unknown_check_is_named_with_its_position() {
    let o = check_file(
        "check.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = 2\n[checks]\nhard = [\"mutexx\"]\n",
    );
    assert_bad_input(
        &o,
        &["check.toml:5:9", "unknown check `mutexx`", "fenced-mutex"],
    );
}

#[test]
fn wrong_value_type_is_bad_input() {
    let o = check_file(
        "type.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = \"two\"\n",
    );
    assert_bad_input(&o, &["type.toml:3:"]);
}

#[test]
fn zero_jobs_is_bad_input() {
    let path = scenario_file(
        "jobs.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = 2\n",
    );
    let o = zkcheck(&["check", path.to_str().unwrap(), "--jobs", "0"]);
    assert_bad_input(&o, &["--jobs"]);
}

#[test]
fn unknown_strategy_flag_is_refused_by_clap_with_exit_2() {
    let path = scenario_file(
        "strategy.toml",
        "name = \"x\"\nrecipe = \"idle\"\nclients = 1\n",
    );
    let o = zkcheck(&["check", path.to_str().unwrap(), "--strategy", "magic"]);
    assert_bad_input(&o, &["magic"]);
}

#[test]
fn token_without_prefix_is_refused() {
    let o = zkcheck(&["replay", "hello"]);
    assert_bad_input(&o, &["malformed token at byte 0", "zk1:"]);
}

#[test]
fn token_of_another_version_is_refused() {
    let o = zkcheck(&["replay", "zk9:AAAA:A:00000000"]);
    assert_bad_input(&o, &["byte 2", "zk9", "zk1"]);
}

#[test]
fn token_with_missing_fields_is_refused() {
    let o = zkcheck(&["replay", "zk1:AAAA"]);
    assert_bad_input(&o, &["expected 3 fields", "found 1"]);
}

#[test]
fn token_with_a_foreign_character_names_its_byte() {
    let o = zkcheck(&["replay", "zk1:AB!D:A:00000000"]);
    assert_bad_input(&o, &["byte 6", "`!`", "scenario field"]);
}

#[test]
fn token_with_a_wrong_checksum_is_refused() {
    let o = zkcheck(&["replay", "zk1:AAAA:A:00000000"]);
    assert_bad_input(&o, &["checksum mismatch", "byte 11"]);
}

#[test]
fn list_prints_every_registered_recipe() {
    let o = zkcheck(&["list"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for r in zkrecipes::RECIPES {
        assert!(out.contains(r.name), "{} missing from: {out}", r.name);
        assert!(out.contains(r.origin), "{out}");
    }
}

#[test]
fn help_explains_every_command() {
    let o = zkcheck(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for cmd in ["check", "replay", "compare", "list"] {
        assert!(out.contains(cmd), "{cmd} missing from: {out}");
    }
    let o = zkcheck(&["check", "--help"]);
    let out = stdout(&o);
    for flag in ["--strategy", "--schedules", "--seed", "--jobs", "--depth"] {
        assert!(out.contains(flag), "{flag} missing from: {out}");
    }
}
