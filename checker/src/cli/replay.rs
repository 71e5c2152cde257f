//! `zkcheck replay <token>`: the same run, event by event.

use std::process::ExitCode;

use crate::explore::replay::replay as replay_run;
use crate::run::Ending;
use crate::scenario::property_name;
use crate::token::Token;

use super::{bad_input, ReplayArgs};

pub fn replay(args: &ReplayArgs) -> ExitCode {
    let token = match Token::decode(&args.token) {
        Ok(t) => t,
        Err(e) => return bad_input(e),
    };
    let replayed = match replay_run(&token.scenario, &token.indices) {
        Ok(r) => r,
        Err(e) => {
            return bad_input(format!(
                "the token's schedule does not fit its scenario: {e}"
            ))
        }
    };
    if let Some(path) = &args.html {
        match crate::viewer::write_html(path, &token) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(e) => return bad_input(e),
        }
    }
    let run = &replayed.run;
    println!(
        "scenario {}: recipe {}, {} clients; {} steps replayed",
        token.scenario.name,
        token.scenario.recipe,
        token.scenario.clients,
        run.schedule.len()
    );
    if args.trace {
        print!("{}", replayed.trace.text);
    }
    println!("final state fingerprint: {:#018x}", run.model.fingerprint());
    if replayed.unused > 0 {
        println!(
            "note: {} choices of the token were not used (the run ended first)",
            replayed.unused
        );
    }
    match &run.violation {
        Some(v) => {
            if !args.trace {
                println!("VIOLATION {}: {}", property_name(v.property), v.explanation);
            }
            ExitCode::from(1)
        }
        None => {
            match run.ending {
                Ending::Stopped => println!("no violation: the schedule ended before the run did"),
                _ => println!("no violation: the run finished and its end-of-run checks passed"),
            }
            ExitCode::SUCCESS
        }
    }
}
