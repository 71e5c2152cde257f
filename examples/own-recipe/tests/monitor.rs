//! A monitor of the user's own, plugged into the checker through
//! `zkcheck::monitor::Monitor` and `Check::monitor`, checked both ways: the
//! lock keeps it, the broken twin breaks it (with the built-in `mutex`
//! check switched off, so the user's monitor is what catches it), and the
//! counterexample's token replays to the same violation.

use own_recipe::{BrokenLock, MyLock};
use zkcheck::check::Check;
use zkcheck::monitor::{Monitor, Property, StepLog, View, Violation};
use zkrecipes::AppEvent;
use zksim::Happening;

const NAME: &str = "fence-is-the-lock-node";

/// Every `Acquired { fence }` is granted by the lock node: at that step
/// `/lock/lock` exists, was created at zxid `fence`, and belongs to the
/// acquiring client's session. (Stateless; a monitor that remembers keeps
/// that memory in its own fields, which become part of the explored state.)
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct FenceIsTheLockNode;

impl Monitor for FenceIsTheLockNode {
    fn observe<V: View + ?Sized>(&mut self, world: &V, step: &StepLog) -> Result<(), Violation> {
        for happening in step {
            let Happening::App {
                client,
                event: AppEvent::Acquired { fence, .. },
            } = happening
            else {
                continue;
            };
            let node = world.node("/lock/lock");
            let session = world.session_of(*client);
            if node.is_none_or(|n| n.czxid != *fence || n.owner != session) {
                return Err(Violation {
                    property: Property::Custom(NAME),
                    explanation: format!(
                        "client {client} acquired with fence {fence:#x}, but the lock node is \
                         {node:?} (its session is {session:#x})"
                    ),
                });
            }
        }
        Ok(())
    }
}

#[test]
fn my_lock_keeps_its_own_monitor() {
    let r = Check::<MyLock>::new(3)
        .rounds(2)
        .monitor(FenceIsTheLockNode)
        .random(300)
        .assert_holds();
    assert_eq!(r.schedules, 300);
}

#[test]
fn the_broken_twin_breaks_the_users_monitor_and_the_token_replays_it() {
    let check = Check::<BrokenLock>::new(3)
        .rounds(2)
        .hard([Property::Liveness])
        .monitor(FenceIsTheLockNode);
    let c = check.clone().random(500).assert_fails();
    assert_eq!(c.property(), Property::Custom(NAME));
    assert!(
        c.violation.explanation.contains("but the lock node is"),
        "{c}"
    );
    assert!(
        c.to_string().starts_with(&format!("VIOLATION of {NAME}")),
        "{c}"
    );

    let token = c.token.clone().expect("a token");
    let again = Check::<BrokenLock>::replay(&token)
        .monitor(FenceIsTheLockNode)
        .assert_fails();
    assert_eq!(again.violation, c.violation);
    // Without the monitor (and with `mutex` off) the same run breaks
    // nothing: the user's monitor is what judged it. It is not "ok"
    // either: the shrunk schedule ends before the run does, so its end
    // (which `liveness` judges) was never reached.
    let without = Check::<BrokenLock>::replay(&token).run();
    assert!(without.counterexample.is_none(), "{without:?}");
    assert_eq!(without.kind(), zkcheck::check::VerdictKind::Incomplete);
}
