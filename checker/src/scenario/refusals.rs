//! The load-time refusals of issue 35 (items 3, 4, 5 and 13) and 36 (item
//! 1), each both ways: the bad scenario refused with its message and
//! place, its good neighbour accepted. The rules themselves live in
//! [`super::judged`], [`super::groups`] and [`super::Scenario::validate`].

use super::*;
use crate::token::Token;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "f.toml")
}

#[track_caller]
fn refused(text: &str, line: usize, needles: &[&str]) -> ScenarioError {
    let e = parse(text).expect_err("refused");
    assert_eq!(e.position.map(|p| p.0), Some(line), "{e}");
    for n in needles {
        assert!(e.message.contains(n), "expected {n:?} in {e}");
    }
    e
}

#[track_caller]
fn accepted(text: &str) -> Scenario {
    parse(text).unwrap_or_else(|e| panic!("refused: {e}\n{text}"))
}

const GROUPS: &str = r#"name = "g"
root = "/lock"
[[clients]]
recipe = "sequential-no-recheck"
count = 2
workload = { rounds = 1, hold_ticks = 3 }
[[clients]]
recipe = "sequential-no-recheck"
count = 1
role = "late"
"#;

#[test]
fn a_group_field_out_of_range_is_refused() {
    accepted(GROUPS);
    for (from, to, needle) in [
        (
            "rounds = 1,",
            "rounds = 0,",
            "`workload.rounds` = 0 is out of range",
        ),
        (
            "rounds = 1,",
            "rounds = 1000000000,",
            "`workload.rounds` = 1000000000",
        ),
        (
            "hold_ticks = 3",
            "hold_ticks = 1000000000",
            "`workload.hold_ticks` = 1000000000",
        ),
        ("count = 2", "count = 5000", "`count` = 5000"),
    ] {
        let e = parse(&GROUPS.replace(from, to)).unwrap_err();
        assert!(e.message.contains(needle), "{to}: {e}");
    }
}

#[test]
fn group_limits_point_at_the_field() {
    let e = parse(&GROUPS.replace("rounds = 1,", "rounds = 0,")).unwrap_err();
    assert_eq!(e.position, Some((6, 23)), "{e}");
    assert!(e.message.starts_with("[[clients]] group 1: "), "{e}");
    let e = parse(&GROUPS.replace("hold_ticks = 3", "hold_ticks = 1000000000")).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(6), "{e}");
    assert!(e.message.contains("between 0 and 100000"), "{e}");
    // A group without a workload of its own takes `[workload]`'s, and its
    // limits: the error points at `[workload]`'s field.
    let text = format!("{GROUPS}[workload]\nrounds = 0\n");
    let e = parse(&text).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(12), "{e}");
    // The limits themselves are accepted.
    accepted(&GROUPS.replace("rounds = 1,", "rounds = 1000,"));
}

const LOCK: &str = r#"name = "t"
recipe = "sequential"
clients = 3
[faults]
expiries = 1
[faults.aim]
expiries = "holder"
[checks]
hard = ["mutex"]
report = ["fifo", "herd"]
"#;

#[test]
fn a_fault_aimed_at_a_role_the_recipe_never_plays_is_refused() {
    accepted(LOCK);
    let e = refused(
        &LOCK.replace("expiries = \"holder\"", "expiries = \"leader\""),
        7,
        &[
            "`faults.aim.expiries` = \"leader\" aims at a role recipe `sequential`",
            "never plays",
            "roles it plays: holder, waiter, releaser, queued",
        ],
    );
    assert_eq!(e.position, Some((7, 12)), "{e}");
    // The naive lock's clients never stand in line: no `queued`.
    let naive = LOCK.replace("\"sequential\"", "\"naive\"");
    accepted(&naive.replace("\"holder\"", "\"waiter\""));
    refused(
        &naive.replace("\"holder\"", "\"queued\""),
        7,
        &["roles it plays: holder, waiter, releaser"],
    );
    // An election has a leader, and no releaser.
    let election = LOCK.replace("\"sequential\"", "\"election\"").replace(
        "hard = [\"mutex\"]\nreport = [\"fifo\", \"herd\"]",
        "hard = [\"election\"]",
    );
    accepted(&election.replace("\"holder\"", "\"leader\""));
    refused(
        &election.replace("\"holder\"", "\"releaser\""),
        7,
        &["roles it plays: holder, waiter, leader, queued"],
    );
    // A partition aimed at the leader's follower, on a lock.
    let partition = LOCK.replace(
        "expiries = 1\n[faults.aim]\nexpiries = \"holder\"",
        "partitions = 1\n[faults.aim]\npartitions = \"leader\"",
    );
    refused(&partition, 7, &["`faults.aim.partitions` = \"leader\""]);
    accepted(&partition.replace("\"leader\"", "\"holder\""));
}

const QUEUE: &str = r#"name = "q"
root = "/q"
[[clients]]
recipe = "queue-producer"
count = 2
[[clients]]
recipe = "queue-consumer"
count = 2
[faults]
expiries = 1
[faults.aim]
expiries = "waiter"
[checks]
hard = ["queue"]
"#;

#[test]
fn a_queue_plays_no_leader_and_no_holder() {
    accepted(QUEUE);
    for role in ["leader", "holder"] {
        refused(
            &QUEUE.replace("\"waiter\"", &format!("\"{role}\"")),
            12,
            &[
                "recipe `queue-producer` and `queue-consumer` (a queue recipe) never plays",
                "roles it plays: waiter",
            ],
        );
    }
    // A group's role is always played by its clients.
    accepted(&QUEUE.replace("\"waiter\"", "\"queue-consumer\""));
}

fn checks(recipe: &str, clients: usize, hard: &str) -> String {
    format!("name = \"t\"\nrecipe = \"{recipe}\"\nclients = {clients}\n[checks]\nhard = [{hard}]\n")
}

#[test]
fn hard_checks_that_cannot_fail_are_refused_naming_why() {
    let cases = [
        (
            "naive",
            3,
            "\"mutex\", \"fifo\"",
            "`naive` never waits in a line",
            (5, 18),
        ),
        (
            "sequential",
            1,
            "\"mutex\"",
            "`mutex` needs at least 2 clients",
            (5, 9),
        ),
        (
            "sequential",
            1,
            "\"liveness\", \"fifo\"",
            "`fifo` needs at least 2 clients",
            (5, 21),
        ),
        (
            "sequential",
            2,
            "\"herd\"",
            "`herd` needs at least 3 clients",
            (5, 9),
        ),
        (
            "sequential",
            1,
            "\"herd\"",
            "`herd` needs at least 3 clients",
            (5, 9),
        ),
    ];
    for (recipe, clients, hard, needle, at) in cases {
        let text = checks(recipe, clients, hard);
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains(needle), "{text}: {e}");
        assert!(e.message.contains("cannot fail here"), "{e}");
        assert_eq!(e.position, Some(at), "{text}: {e}");
    }
    // The neighbours: the same checks where they can fail, and the vacuous
    // ones only measured.
    accepted(&checks("naive", 3, "\"mutex\", \"herd\""));
    accepted(&checks("sequential", 2, "\"mutex\", \"fifo\""));
    accepted(&checks("sequential", 3, "\"herd\""));
    accepted(&checks("sequential", 1, "\"liveness\", \"leaks\""));
    accepted(&format!(
        "{}report = [\"fifo\"]\n",
        checks("naive", 3, "\"mutex\"")
    ));
    // The default check (`mutex`) with one client: named though not written.
    let e = parse("name = \"t\"\nrecipe = \"sequential\"\nclients = 1\n").unwrap_err();
    assert!(e.message.contains("`checks.hard` names `mutex`"), "{e}");
}

#[test]
fn an_empty_check_set_is_refused_at_every_door() {
    let e = refused(&checks("sequential", 3, ""), 5, &["`checks.hard` is empty"]);
    assert_eq!(e.position, Some((5, 1)), "{e}");
    // A token carries a scenario: the same rule.
    let mut s = Scenario::lock("sequential", 3);
    s.hard = Vec::new();
    let token = Token::new(s.clone(), vec![0]).encode();
    let e = Token::decode(&token).unwrap_err().to_string();
    assert!(e.contains("`checks.hard` is empty"), "{e}");
    // A hand-built scenario (the builder's door): `validate`.
    assert!(matches!(s.validate(), Err(Invalid::Checks(_))));
    s.hard = vec![Property::NoLeaks];
    assert_eq!(s.validate(), Ok(()));
    let good = Token::new(s, vec![0]).encode();
    assert!(Token::decode(&good).is_ok());
    // A token whose check cannot fail.
    let mut one = Scenario::lock("sequential", 1);
    let e = Token::decode(&Token::new(one.clone(), vec![0]).encode())
        .unwrap_err()
        .to_string();
    assert!(e.contains("`mutex` needs at least 2 clients"), "{e}");
    one.hard = vec![Property::NoLeaks];
    assert!(Token::decode(&Token::new(one, vec![0]).encode()).is_ok());
}

#[test]
fn a_recipe_types_defaults_judge_its_family() {
    use zkrecipes::election::Election;
    use zkrecipes::queue::QueueConsumer;
    let e = Scenario::<Election>::of_recipe(3);
    assert_eq!(e.hard, vec![Property::Election]);
    assert_eq!(e.validate(), Ok(()));
    let q = Scenario::<QueueConsumer>::of_recipe(3);
    assert_eq!(q.hard, vec![Property::QueueSafety]);
    let l = Scenario::<zkrecipes::lock::SequentialLock>::of_recipe(3);
    assert_eq!(l.hard, vec![Property::MutualExclusion]);
    assert_eq!(l.validate(), Ok(()));
    // One lock client: the default `mutex` cannot fail, and says so.
    let one = Scenario::<zkrecipes::lock::SequentialLock>::of_recipe(1);
    let e = one.validate().unwrap_err().to_string();
    assert!(e.contains("`mutex` needs at least 2 clients"), "{e}");
}

const PLAIN: &str = "name = \"t\"\nrecipe = \"sequential\"\nclients = 2\n";

#[test]
fn names_and_roles_with_control_characters_are_refused() {
    accepted(PLAIN);
    accepted(&PLAIN.replace("\"t\"", "\"lock ünïcode\""));
    refused(
        &PLAIN.replace("\"t\"", "\"t\\u001b[2J\""),
        1,
        &["`name` = \"t\\u{1b}[2J\" holds a control character (character 2)"],
    );
    refused(
        &PLAIN.replace("\"t\"", "\"a\\nok\""),
        1,
        &["control character"],
    );
    let e = refused(
        &GROUPS.replace("role = \"late\"", "role = \"late\\r\""),
        10,
        &["`role` = \"late\\r\" holds a control character"],
    );
    assert_eq!(e.position, Some((10, 8)), "{e}");
}

#[test]
fn roots_and_parents_under_zookeeper_are_refused_alike() {
    for root in ["/zookeeper", "/zookeeper/lock"] {
        refused(
            &format!("{PLAIN}root = \"{root}\"\n"),
            4,
            &["is under `/zookeeper`"],
        );
        refused(
            &format!("{PLAIN}[[parent]]\npath = \"{root}\"\n"),
            4,
            &["outside `/zookeeper`"],
        );
    }
    accepted(&format!("{PLAIN}root = \"/zookeeperish\"\n"));
    accepted(&format!("{PLAIN}[[parent]]\npath = \"/zookeeperish\"\n"));
}

#[test]
fn a_negative_parent_counter_is_refused() {
    let text = format!("{PLAIN}[[parent]]\npath = \"/lock\"\ncounter = -1\n");
    refused(&text, 4, &["`counter` = -1 is negative"]);
    accepted(&text.replace("-1", "0"));
}

#[test]
fn invalid_utf8_and_an_overlong_dotted_key_are_located() {
    let dir = std::env::temp_dir().join(format!("zkcheck-refusals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    let mut bytes = PLAIN.as_bytes().to_vec();
    bytes.extend_from_slice(b"root = \"/l\xc3\x28\"\n");
    std::fs::write(&path, &bytes).unwrap();
    let e = Scenario::from_file(&path).unwrap_err();
    assert_eq!(e.position, Some((4, 11)), "{e}");
    assert!(e.message.contains("invalid UTF-8 at byte"), "{e}");
    std::fs::write(&path, format!("{PLAIN}root = \"/lï\"\n")).unwrap();
    assert!(Scenario::from_file(&path).is_ok());
    let _ = std::fs::remove_dir_all(&dir);

    let key = vec!["a"; 100].join(".");
    let e = parse(&format!("{PLAIN}{key} = 1\n")).unwrap_err();
    assert_eq!(e.position, Some((4, 1)), "{e}");
    assert!(e.message.contains("a dotted key of 100 parts"), "{e}");
    // A short unknown dotted key is located by the parser itself.
    let e = parse(&format!("{PLAIN}a.b = 1\n")).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(4), "{e}");
}

#[test]
fn a_scenario_built_for_a_named_recipe_starts_from_its_familys_checks() {
    // `Check::groups` builds through `for_set`: an election or a queue of
    // a user's set must not start with no hard check (issue 36.1).
    let election = Scenario::<AnyRecipe>::for_set("election", 3);
    assert_eq!(election.hard, vec![Property::Election]);
    assert!(election.judges_something().is_ok());
    let queue = Scenario::<AnyRecipe>::for_set("queue-consumer", 3);
    assert_eq!(queue.hard, vec![Property::QueueSafety]);
    let lock = Scenario::<AnyRecipe>::for_set("sequential", 3);
    assert_eq!(lock.hard, vec![Property::MutualExclusion]);
    // An unknown name judges nothing, and validation says so.
    assert!(Scenario::<AnyRecipe>::for_set("no-such", 3).hard.is_empty());
}
