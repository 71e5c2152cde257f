//! `my-zkcheck` (src/bin): zkcheck's command line over this crate's
//! recipes, driven as a user drives it: the token a failing `cargo test`
//! prints replays there and writes the viewer page; scenario files of the
//! crate's recipes are checked, split into shards and merged; a recipe the
//! binary does not know is refused with the names it does know; the
//! shipped scenario of the timed lock holds and names its flawed variants'
//! violation.

use std::path::PathBuf;
use std::process::{Command, Output};

use own_recipe::BrokenLock;
use zkcheck::check::Check;
use zkcheck::monitor::Property;

fn my_zkcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_my-zkcheck"))
        .args(args)
        .output()
        .expect("my-zkcheck runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("own-recipe-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn the_token_of_a_failing_cargo_test_replays_in_my_zkcheck_and_writes_the_viewer() {
    // What `cargo test` printed after `replay:` (tests/check.rs).
    let c = Check::<BrokenLock>::new(3)
        .rounds(2)
        .random(500)
        .assert_fails();
    let token = c.token.expect("a token");

    let dir = scratch("viewer");
    let page = dir.join("cx.html");
    let out = my_zkcheck(&[
        "replay",
        &token,
        "--trace",
        "--html",
        page.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("recipe own-broken-lock"), "{stdout}");
    assert!(stdout.contains("Acquired"), "the trace: {stdout}");
    let html = std::fs::read_to_string(&page).expect("the viewer page was written");
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(html.contains("own-broken-lock"));
    assert!(html.contains(property_name(c.violation.property)));

    // The replay names the same violation the test found.
    let out = my_zkcheck(&["replay", &token]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "VIOLATION {}",
            property_name(c.violation.property)
        )),
        "{stdout}"
    );
    std::fs::remove_dir_all(dir).ok();
}

fn property_name(p: Property) -> &'static str {
    zkcheck::scenario::property_name(p)
}

#[test]
fn an_unknown_recipe_is_refused_with_the_users_names() {
    let dir = scratch("unknown");
    let file = dir.join("seq.toml");
    std::fs::write(
        &file,
        "name = \"seq\"\nrecipe = \"sequential\"\nclients = 2\n",
    )
    .unwrap();
    let out = my_zkcheck(&["check", file.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown recipe `sequential`"), "{stderr}");
    assert!(
        stderr.contains("known recipes: own-lock, own-broken-lock"),
        "{stderr}"
    );

    // A token of zkcheck's own recipes, too (one `zkcheck` replays).
    let theirs =
        zkcheck::token::Token::new(zkcheck::scenario::Scenario::lock("sequential", 2), vec![]);
    let out = my_zkcheck(&["replay", &theirs.encode()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown recipe `sequential`"), "{stderr}");
    assert!(stderr.contains("own-lock, own-broken-lock"), "{stderr}");
    std::fs::remove_dir_all(dir).ok();
}

const SCENARIO: &str =
    "name = \"mine\"\nrecipe = \"RECIPE\"\nclients = 3\n\n[workload]\nrounds = 2\n\n\
[checks]\nhard = [\"mutex\", \"fenced-mutex\", \"liveness\"]\n\n[explore]\nschedules = 200\n";

#[test]
fn scenario_files_of_my_recipes_check_shard_and_merge() {
    let dir = scratch("shards");
    let write = |recipe: &str| {
        let file = dir.join(format!("{recipe}.toml"));
        std::fs::write(&file, SCENARIO.replace("RECIPE", recipe)).unwrap();
        file
    };
    let good = write("own-lock");
    let out = my_zkcheck(&["check", good.to_str().unwrap(), "--quiet"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("ok: every hard check held"), "{stdout}");

    let bad = write("own-broken-lock");
    let mut shards = Vec::new();
    for k in 0..2 {
        let shard = format!("{k}/2");
        let out = my_zkcheck(&[
            "check",
            bad.to_str().unwrap(),
            "--quiet",
            "--shard",
            &shard,
            "--json",
        ]);
        let path = dir.join(format!("shard-{k}.json"));
        std::fs::write(&path, &out.stdout).unwrap();
        shards.push(path);
    }
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    let out = my_zkcheck(&args);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("recipe own-broken-lock"), "{stdout}");
    let token = stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("the merged counterexample's token");
    // The merged token replays, and the library takes it back too.
    assert_eq!(my_zkcheck(&["replay", token]).status.code(), Some(1));
    Check::<BrokenLock>::replay(token).assert_fails();

    let out = my_zkcheck(&["list"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("own-lock") && stdout.contains("own-broken-lock"),
        "{stdout}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// The shipped scenario of the lock that reads its session timeout:
/// `my-zkcheck` finds it holds, and names the flawed variants' violation
/// when the file names them instead.
#[test]
fn the_timed_lock_scenario_holds_and_its_flawed_variants_are_caught() {
    let shipped =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/timed-lock.toml");
    let out = my_zkcheck(&["check", shipped.to_str().unwrap(), "--quiet"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("ok: every hard check held"), "{stdout}");

    let toml = std::fs::read_to_string(&shipped).expect("the scenario reads");
    let dir = scratch("timed");
    for flawed in ["own-suspended-holder-lock", "own-guessed-timeout-lock"] {
        let file = dir.join(format!("{flawed}.toml"));
        let named = toml.replace(
            "recipe = \"own-timed-lock\"",
            &format!("recipe = \"{flawed}\""),
        );
        assert_ne!(named, toml, "the scenario names own-timed-lock");
        std::fs::write(&file, named).unwrap();
        let out = my_zkcheck(&["check", file.to_str().unwrap(), "--quiet"]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
        assert!(stdout.contains("VIOLATION of owner"), "{flawed}: {stdout}");
    }
    std::fs::remove_dir_all(dir).ok();
}
