//! `zkcheck replay <token>`: the same run, event by event.

use zkcheck::explore::replay::replay_lasso as replay_run;
use zkcheck::run::Ending;
use zkcheck::scenario::property_name;
use zkcheck::token::Token;
use zkrecipes::RecipeSet;

use super::{bad_input, say, Exit, Io, ReplayArgs};

pub fn replay<C: RecipeSet>(args: &ReplayArgs, io: &mut Io) -> Exit {
    let token = match Token::decode_as::<C>(&args.token) {
        Ok(t) => t,
        Err(e) => return bad_input(io, e),
    };
    let replayed = match replay_run(&token.scenario, &token.indices, token.cycle_from) {
        Ok(r) => r,
        Err(e) => {
            return bad_input(
                io,
                format!("the token's schedule does not fit its scenario: {e}"),
            )
        }
    };
    if let Some(path) = &args.html {
        match crate::viewer::write_html(path, &token) {
            Ok(()) => {
                let _ = std::io::Write::write_fmt(
                    &mut io.err,
                    format_args!("wrote {}\n", path.display()),
                );
            }
            Err(e) => return bad_input(io, e),
        }
    }
    let run = &replayed.run;
    say!(
        io,
        "scenario {}: recipe {}, {} clients; {} steps replayed",
        token.scenario.name,
        token.scenario.recipe,
        token.scenario.clients,
        run.schedule.len()
    );
    if args.trace {
        let _ = std::io::Write::write_all(&mut io.out, replayed.trace.text.as_bytes());
    }
    say!(
        io,
        "final state fingerprint: {:#018x}",
        run.model.fingerprint()
    );
    if replayed.unused > 0 {
        say!(
            io,
            "note: {} choices of the token were not used (the run ended first)",
            replayed.unused
        );
    }
    let verdict =
        zkcheck::verdict::of_replay(&token.scenario, &token.indices, token.cycle_from, &replayed);
    match &verdict.exploration.failure {
        Some(f) => {
            let v = &f.violation;
            if !args.trace {
                say!(
                    io,
                    "VIOLATION {}: {}",
                    property_name(v.property),
                    v.explanation
                );
            }
        }
        None => match run.ending {
            Ending::Stopped => say!(io, "no violation: the schedule ended before the run did"),
            Ending::StepBound => say!(
                io,
                "no violation: the run was cut at explore.max_steps; its end was not judged"
            ),
            Ending::ClockBound => say!(
                io,
                "no violation: the run was cut by the clock at ensemble.max_time with work left; \
                 its end was not judged"
            ),
            _ => say!(
                io,
                "no violation: the run finished and its end-of-run checks passed"
            ),
        },
    }
    if verdict.counterexample.is_none() {
        for reason in &verdict.incomplete {
            say!(io, "INCOMPLETE: {reason}");
        }
        if !verdict.incomplete.is_empty() {
            say!(
                io,
                "not ok: no hard check failed in what was replayed, but the run did not reach its end"
            );
        }
    }
    verdict.kind().into()
}
