//! Several recipe types and roles in one run, without a hand-written
//! enum: `OwnRecipes` comes from `zkrecipes::recipe_set!`, and each
//! client's `RecipeParams` carries its group, role and the session timeout
//! the ensemble grants. Both ways: a trusting client among careful ones is
//! caught; careful clients in two roles hold.

use own_recipe::OwnRecipes;
use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkcheck::scenario::ClientGroup;
use zksim::World;

fn roles_match(w: &World<OwnRecipes>) -> bool {
    (0..w.num_clients()).all(|c| {
        let role = match w.client(c) {
            OwnRecipes::Lock(l) => l.role(),
            OwnRecipes::Broken(l) => l.role(),
            // Not in this test's groups: no role, so the invariant fails.
            _ => "",
        };
        role == if c < 2 { "careful" } else { "late" }
    })
}

#[test]
fn careful_clients_in_two_roles_hold_and_know_their_roles() {
    let check = Check::<OwnRecipes>::groups([
        ClientGroup::new("own-lock", 2).role("careful"),
        ClientGroup::new("own-lock", 1).role("late"),
    ])
    .rounds(2)
    .hard([
        Property::MutualExclusion,
        Property::FencedExclusion,
        Property::Liveness,
    ])
    .always("each client was built in its group's role", roles_match)
    .configure(|s| s.ensemble.session_timeout = 50);
    let p = check.scenario().params(2);
    assert_eq!((p.group, p.role.as_str()), (1, "late"));
    // 50 ticks asked, 20 granted: a 3.8 server caps it at 20 ticks.
    assert_eq!(p.session_timeout, 20);
    check.random(300).assert_holds();
}

#[test]
fn a_trusting_client_among_careful_ones_is_caught() {
    let c = Check::<OwnRecipes>::groups([
        ClientGroup::new("own-lock", 2).role("careful"),
        ClientGroup::new("own-broken-lock", 1).role("late"),
    ])
    .rounds(2)
    .hard([Property::FencedExclusion])
    .always("each client was built in its group's role", roles_match)
    .random(500)
    .assert_fails();
    assert_eq!(c.property(), Property::FencedExclusion);
    // Only the trusting client (2) can adopt another's node.
    assert!(c.violation.explanation.contains("client 2"), "{c}");
    let token = c.token.expect("a token");
    let again = Check::<OwnRecipes>::replay(&token).assert_fails();
    assert_eq!(again.violation, c.violation);
}
