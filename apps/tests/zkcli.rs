//! `zkCli.sh`'s client (`ZooKeeperMain`) running `apps/zkcli/session.txt`
//! prints, once normalised, exactly `apps/zkcli/session.expected` — against
//! the real ZooKeeper 3.8 server (`real::…`) and against `zkcheck serve`
//! (`serve::…`). `ZKAPPS_BLESS=1` rewrites the file from the real server.

mod common;

use std::time::Duration;

use common::*;
use zkapps::{apps_dir, require, zkcli, ZkCli};

const LIMIT: Duration = Duration::from_secs(30);

fn session_script_prints_what_the_real_server_printed(target: &Target) {
    let Some(cli) = require(ZkCli::find()) else {
        return;
    };
    let dir = apps_dir().join("zkcli");
    let run = cli
        .run_script(&dir.join("session.txt"), &target.connect_string(), LIMIT)
        .unwrap();
    // ZooKeeperMain exits with its last command's code: the script ends
    // with commands that succeed.
    assert!(run.success, "zkCli failed:\n{}", run.output);
    let normalised = zkcli::normalise(&run.output);
    let expected_path = dir.join("session.expected");
    if !target.is_serve() && std::env::var("ZKAPPS_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&expected_path, &normalised).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    assert_eq!(
        normalised,
        expected,
        "normalised zkCli output differs from {}; raw output:\n{}",
        expected_path.display(),
        run.output
    );
    // The script ran to its end (its last answers are there).
    assert!(
        normalised.contains("Created /zkcli\nlast\n# watch events"),
        "{normalised}"
    );
}

on_both_servers!(session_script_prints_what_the_real_server_printed);
