//! The one rule for "this scenario judges something": every hard check can
//! fail for its recipe and client count, and every aimed fault aims at a
//! role the recipe plays.
//!
//! A check that cannot fail, or a fault whose aim is never met, does not
//! make a run wrong — it makes "ok" meaningless: `fifo` on a lock whose
//! waiters never stand in a line, `mutex` with one client, an expiry aimed
//! at the `leader` of a lock (no lock client ever leads, so the fault is
//! never offered and the run checks the recipe without it). Each door that
//! judges — a scenario file, a replay token, the [`crate::check::Check`]
//! builder — reaches this rule through [`super::Scenario::validate`], so it
//! is written here once.

use zkrecipes::{Family, RecipeSet};

use crate::aim::{Role, Target, ROLES};
use crate::monitor::catalogue::{family_name, family_roles, property_name};
use crate::monitor::Property;

use super::Scenario;

/// What the rule needs to know of a scenario's clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cast {
    /// The recipe names, for messages (the groups' recipes, each once).
    pub recipes: Vec<String>,
    /// The recipes' family (lock, election, queue), which decides which
    /// properties apply.
    pub family: Family,
    /// Whether any client waits in a line it can be seen in
    /// ([`zkrecipes::Recipe::WAITS_IN_LINE`]).
    pub waits_in_line: bool,
    /// How many clients.
    pub clients: usize,
}

impl Cast {
    /// The cast of `scenario` (whose recipe names `C` knows).
    pub fn of<C: RecipeSet>(scenario: &Scenario<C>) -> Cast {
        let mut recipes: Vec<String> = scenario.groups.iter().map(|g| g.recipe.clone()).collect();
        if recipes.is_empty() {
            recipes.push(scenario.recipe.clone());
        }
        recipes.dedup();
        Cast {
            waits_in_line: recipes.iter().any(|r| C::waits_in_line(r)),
            recipes,
            family: scenario.family(),
            clients: scenario.clients,
        }
    }

    fn named(&self) -> String {
        let names: Vec<String> = self.recipes.iter().map(|r| format!("`{r}`")).collect();
        format!("recipe {}", names.join(" and "))
    }
}

/// Why the hard check `p` cannot fail on `cast`, or `None` if it can.
pub fn cannot_fail(p: Property, cast: &Cast) -> Option<String> {
    let clients = cast.clients;
    match p {
        Property::MutualExclusion if clients < 2 => Some(format!(
            "with {clients} client nobody can hold beside another: `mutex` needs at least 2 clients"
        )),
        Property::Fifo if clients < 2 => Some(format!(
            "with {clients} client nobody can be overtaken: `fifo` needs at least 2 clients"
        )),
        Property::Fifo if !cast.waits_in_line => Some(format!(
            "{} never waits in a line (a client is enqueued only in the step it acquires), so \
             nobody can be overtaken",
            cast.named()
        )),
        Property::NoHerd if clients < 3 => Some(format!(
            "with {clients} client{} a release has at most one other client to wake: `herd` \
             needs at least 3 clients (one releasing, two waiting)",
            if clients == 1 { "" } else { "s" }
        )),
        _ => None,
    }
}

/// The rule for a scenario's hard checks: at least one check (a built-in
/// property, or a user's invariant or monitor, `user_checks` of them), and
/// no built-in one that [`cannot_fail`]. The message names `checks.hard`
/// first, so the parser can point at the field.
pub fn check_hard(hard: &[Property], user_checks: usize, cast: &Cast) -> Result<(), String> {
    if hard.is_empty() && user_checks == 0 {
        return Err(
            "`checks.hard` is empty: a run with no hard check can never fail, so it would say \
             \"ok\" having checked nothing; name at least one check"
                .to_string(),
        );
    }
    for &p in hard {
        if let Some(why) = cannot_fail(p, cast) {
            return Err(format!(
                "`checks.hard` names `{}`, which cannot fail here: {why}; a run would say \"ok\" \
                 having checked nothing (measure it under `checks.report` instead)",
                property_name(p)
            ));
        }
    }
    Ok(())
}

/// The roles ([`Role`]) some client of `cast` can play: those its family's
/// events make (the catalogue's [`crate::monitor::catalogue::FamilySpec::roles`]:
/// a lock has no leader, an election no releaser, a queue's consumers only
/// wait), and `queued` only for a recipe that waits in line.
pub fn roles_played(cast: &Cast) -> Vec<Role> {
    ROLES
        .into_iter()
        .filter(|&role| {
            family_roles(cast.family).contains(&role)
                && (role != Role::Queued || cast.waits_in_line)
        })
        .collect()
}

/// A fault of `kind` aimed at `target`: refused when the target is a role
/// no client of `cast` ever plays (the fault would never be offered).
pub fn check_aim(kind: &str, target: Target, cast: &Cast) -> Result<(), String> {
    let Target::Role(role) = target else {
        return Ok(());
    };
    let played = roles_played(cast);
    if played.contains(&role) {
        return Ok(());
    }
    let names: Vec<&str> = played.iter().map(|r| r.name()).collect();
    Err(format!(
        "`faults.aim.{kind}` = \"{}\" aims at a role {} (a {} recipe) never plays, so the \
         fault could never strike and the run would check the recipe without it; roles it \
         plays: {}",
        role.name(),
        cast.named(),
        family_name(cast.family),
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast(recipe: &str, family: Family, waits_in_line: bool, clients: usize) -> Cast {
        Cast {
            recipes: vec![recipe.into()],
            family,
            waits_in_line,
            clients,
        }
    }

    #[test]
    fn checks_that_cannot_fail_are_named_and_their_neighbours_pass() {
        let seq = |n| cast("sequential", Family::Lock, true, n);
        let naive = cast("naive", Family::Lock, false, 3);
        assert!(cannot_fail(Property::MutualExclusion, &seq(1)).is_some());
        assert!(cannot_fail(Property::MutualExclusion, &seq(2)).is_none());
        assert!(cannot_fail(Property::Fifo, &seq(1)).is_some());
        assert!(cannot_fail(Property::Fifo, &seq(2)).is_none());
        assert!(cannot_fail(Property::NoHerd, &seq(2)).is_some());
        assert!(cannot_fail(Property::NoHerd, &seq(3)).is_none());
        let e = cannot_fail(Property::Fifo, &naive).unwrap();
        assert!(e.contains("`naive` never waits in a line"), "{e}");
        assert!(cannot_fail(Property::NoHerd, &naive).is_none());
        // One client can still leak, stall, panic or ask twice.
        for p in [
            Property::Liveness,
            Property::NoLeaks,
            Property::NoPanic,
            Property::AcquiredOnlyWhenAsked,
            Property::Owner,
        ] {
            assert!(cannot_fail(p, &seq(1)).is_none(), "{p:?}");
        }
    }

    #[test]
    fn an_empty_check_set_is_refused_unless_the_user_judges_something() {
        let c = cast("election", Family::Election, true, 3);
        let e = check_hard(&[], 0, &c).unwrap_err();
        assert!(e.starts_with("`checks.hard` is empty"), "{e}");
        assert_eq!(check_hard(&[], 1, &c), Ok(()));
        assert_eq!(check_hard(&[Property::Election], 0, &c), Ok(()));
        let e = check_hard(
            &[Property::Liveness, Property::MutualExclusion],
            0,
            &cast("sequential", Family::Lock, true, 1),
        )
        .unwrap_err();
        assert!(e.starts_with("`checks.hard` names `mutex`"), "{e}");
    }

    #[test]
    fn roles_follow_the_family_and_the_line() {
        let lock = cast("sequential", Family::Lock, true, 3);
        let e = check_aim("expiries", Target::Role(Role::Leader), &lock).unwrap_err();
        assert!(e.contains("\"leader\""), "{e}");
        assert!(
            e.contains("roles it plays: holder, waiter, releaser, queued"),
            "{e}"
        );
        assert_eq!(
            check_aim("expiries", Target::Role(Role::Holder), &lock),
            Ok(())
        );
        let naive = cast("naive", Family::Lock, false, 3);
        assert!(check_aim("kills", Target::Role(Role::Queued), &naive).is_err());
        let queue = cast("queue-consumer", Family::Queue, true, 3);
        let e = check_aim("expiries", Target::Role(Role::Leader), &queue).unwrap_err();
        assert!(e.contains("roles it plays: waiter"), "{e}");
        let election = cast("election", Family::Election, true, 3);
        assert_eq!(
            check_aim("expiries", Target::Role(Role::Leader), &election),
            Ok(())
        );
        assert!(check_aim("expiries", Target::Role(Role::Releaser), &election).is_err());
        // Indices and group roles are checked elsewhere.
        assert_eq!(check_aim("expiries", Target::Index(0), &queue), Ok(()));
    }
}
