//! Client groups: several recipes or roles in one scenario.
//!
//! A scenario's clients are either `clients = N` of the top-level `recipe`,
//! or a list of `[[clients]]` groups, each with its own recipe, count, role
//! name and (optionally) workload:
//!
//! ```toml
//! [[clients]]
//! recipe = "queue-producer"
//! count = 2
//! role = "producer"          # default: the recipe's name
//! workload = { rounds = 3 }  # default: the scenario's [workload]
//!
//! [[clients]]
//! recipe = "queue-consumer"
//! count = 3
//! role = "consumer"
//! workload = { rounds = 2 }
//! ```
//!
//! Clients are numbered across groups in file order (the first group's
//! clients are 0, 1, …). Every group must belong to one recipe family (the
//! family decides which properties are judged); a queue's producers must
//! offer exactly as many items as its consumers take, or consumers would
//! wait for ever by construction. A role is a plain name that faults and
//! reports can refer to.

use zkrecipes::queue::{queue_role, QueueRole};
use zkrecipes::{RecipeSet, Workload};

/// One `[[clients]]` group.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientGroup {
    /// A registered recipe name.
    pub recipe: String,
    /// How many clients run it (≥ 1).
    pub count: usize,
    /// The role's name (default: the recipe's name).
    pub role: String,
    /// What each client of the group does (rounds, hold and think times).
    pub workload: Workload,
}

impl ClientGroup {
    /// `count` clients of the recipe called `recipe`, in the role of that
    /// name, with the default workload.
    pub fn new(recipe: &str, count: usize) -> Self {
        ClientGroup {
            recipe: recipe.to_string(),
            count,
            role: recipe.to_string(),
            workload: Workload::default(),
        }
    }

    /// The same group in the role `role` (what the clients read in
    /// [`zkrecipes::RecipeParams::role`]; what `[faults.aim]` names).
    pub fn role(mut self, role: &str) -> Self {
        self.role = role.to_string();
        self
    }

    /// The same group with its own workload.
    pub fn workload(mut self, workload: Workload) -> Self {
        self.workload = workload;
        self
    }
}

/// What one client is: its recipe, role and workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    /// The index of the client's group (0 without groups).
    pub group: usize,
    /// The recipe the client runs.
    pub recipe: &'a str,
    /// The role it plays (what `[faults.aim]` names).
    pub role: &'a str,
    /// What it does.
    pub workload: Workload,
}

/// Why a list of groups cannot make a scenario, and which group (0-based)
/// and field is at fault, so the parser can point at it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupError {
    pub group: usize,
    pub field: &'static str,
    pub message: String,
}

/// Check a list of groups of recipes of `C` on its own terms.
pub fn validate<C: RecipeSet>(groups: &[ClientGroup]) -> Result<(), GroupError> {
    let err = |group: usize, field: &'static str, message: String| GroupError {
        group,
        field,
        message,
    };
    let mut family = None;
    for (i, g) in groups.iter().enumerate() {
        let Some(group_family) = C::family_of(&g.recipe) else {
            return Err(err(
                i,
                "recipe",
                format!(
                    "unknown recipe `{}`; known recipes: {}",
                    g.recipe,
                    C::names().join(", ")
                ),
            ));
        };
        if g.count == 0 {
            return Err(err(
                i,
                "count",
                "a group's `count` must be at least 1".into(),
            ));
        }
        if let Err((field, message)) = within_limits(g) {
            return Err(err(i, field, message));
        }
        if g.role.is_empty() {
            return Err(err(i, "role", "a group's `role` must not be empty".into()));
        }
        if crate::aim::Role::by_name(&g.role).is_some() {
            return Err(err(
                i,
                "role",
                format!(
                    "a group's `role` may not be `{}`: that names a built-in role of \
                     `[faults.aim]` (a client's momentary part, not its group)",
                    g.role
                ),
            ));
        }
        match family {
            None => family = Some((group_family, i)),
            Some((f, first)) if f != group_family => {
                return Err(err(
                    i,
                    "recipe",
                    format!(
                        "impossible combination: `{}` is a {:?} recipe but group {} (`{}`) is a \
                         {f:?} recipe; one scenario judges one family",
                        g.recipe,
                        group_family,
                        first + 1,
                        groups[first].recipe
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let items = |role: QueueRole| -> u64 {
        groups
            .iter()
            .filter(|g| queue_role(&g.recipe) == Some(role))
            .map(|g| g.count as u64 * u64::from(g.workload.rounds))
            .sum()
    };
    let (offered, taken) = (items(QueueRole::Producer), items(QueueRole::Consumer));
    if offered != taken {
        let last = groups
            .iter()
            .rposition(|g| queue_role(&g.recipe).is_some())
            .unwrap_or(0);
        return Err(err(
            last,
            "recipe",
            format!(
                "impossible combination: the producers offer {offered} item{} but the consumers \
                 take {taken} (count × workload.rounds per group); they must match",
                if offered == 1 { "" } else { "s" }
            ),
        ));
    }
    Ok(())
}

/// A group's own numbers within the limits of the scenario's
/// ([`crate::limits`]: the same bounds as `clients` and `[workload]`), and
/// its role a printable name of at most [`crate::limits::TEXT_LEN`]
/// characters. The error names the field (as the parser's span does).
fn within_limits(g: &ClientGroup) -> Result<(), (&'static str, String)> {
    use crate::limits as l;
    let on = |field: &'static str| move |message: String| (field, message);
    l::CLIENTS
        .named("count")
        .check_usize(g.count)
        .map_err(on("count"))?;
    let w = &g.workload;
    l::ROUNDS
        .check(u64::from(w.rounds))
        .map_err(on("workload.rounds"))?;
    l::HOLD_TICKS
        .check(w.hold_ticks)
        .map_err(on("workload.hold_ticks"))?;
    l::THINK_TICKS
        .check(w.think_ticks)
        .map_err(on("workload.think_ticks"))?;
    l::TEXT_LEN
        .named("role")
        .check(g.role.chars().count() as u64)
        .map_err(on("role"))?;
    super::no_control_characters("role", &g.role).map_err(on("role"))?;
    Ok(())
}

/// The role names of a scenario's clients, each once, in client order:
/// the groups' roles, or `recipe` (every client's role) without groups.
pub fn role_names<'a>(groups: &'a [ClientGroup], recipe: &'a str) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for g in groups {
        if !names.contains(&g.role.as_str()) {
            names.push(&g.role);
        }
    }
    if names.is_empty() {
        names.push(recipe);
    }
    names
}

/// The member that client `client` is, in a list of groups.
pub fn member(groups: &[ClientGroup], client: usize) -> Option<Member<'_>> {
    let mut first = 0;
    for (group, g) in groups.iter().enumerate() {
        if client < first + g.count {
            return Some(Member {
                group,
                recipe: &g.recipe,
                role: &g.role,
                workload: g.workload,
            });
        }
        first += g.count;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrecipes::AnyRecipe;

    fn group(recipe: &str, count: usize, rounds: u32) -> ClientGroup {
        ClientGroup {
            recipe: recipe.into(),
            count,
            role: recipe.into(),
            workload: Workload {
                rounds,
                ..Workload::default()
            },
        }
    }

    #[test]
    fn members_are_numbered_across_groups() {
        let gs = [group("queue-producer", 2, 3), group("queue-consumer", 3, 2)];
        assert_eq!(validate::<AnyRecipe>(&gs), Ok(()));
        assert_eq!(member(&gs, 1).unwrap().recipe, "queue-producer");
        assert_eq!(member(&gs, 2).unwrap().recipe, "queue-consumer");
        assert_eq!(member(&gs, 4).unwrap().workload.rounds, 2);
        assert!(member(&gs, 5).is_none());
    }

    #[test]
    fn impossible_combinations_are_refused() {
        let e = validate::<AnyRecipe>(&[group("sequential", 1, 1), group("queue-consumer", 1, 1)])
            .unwrap_err();
        assert_eq!((e.group, e.field), (1, "recipe"));
        assert!(
            e.message.contains("impossible combination"),
            "{}",
            e.message
        );
        let e =
            validate::<AnyRecipe>(&[group("queue-producer", 2, 3), group("queue-consumer", 1, 5)])
                .unwrap_err();
        assert!(
            e.message.contains("offer 6 items but the consumers take 5"),
            "{}",
            e.message
        );
        let e = validate::<AnyRecipe>(&[group("sequential", 0, 1)]).unwrap_err();
        assert_eq!(e.field, "count");
    }

    #[test]
    fn a_group_keeps_the_limits_of_the_top_level_fields() {
        let e = validate::<AnyRecipe>(&[group("sequential", 2, 0)]).unwrap_err();
        assert_eq!(e.field, "workload.rounds");
        assert!(
            e.message.contains("`workload.rounds` = 0 is out of range"),
            "{e:?}"
        );
        let e = validate::<AnyRecipe>(&[group("sequential", 2, 1_000_000_000)]).unwrap_err();
        assert_eq!(e.field, "workload.rounds");
        let mut g = group("sequential", 2, 1);
        g.workload.hold_ticks = 1_000_000_000;
        let e = validate::<AnyRecipe>(&[g]).unwrap_err();
        assert_eq!(e.field, "workload.hold_ticks");
        assert!(e.message.contains("between 0 and 100000"), "{e:?}");
        let e = validate::<AnyRecipe>(&[group("sequential", usize::MAX, 1)]).unwrap_err();
        assert_eq!(e.field, "count");
        let mut g = group("sequential", 2, 1);
        g.role = "boss\u{1b}[2J".into();
        let e = validate::<AnyRecipe>(&[g]).unwrap_err();
        assert_eq!(e.field, "role");
        assert!(e.message.contains("control character"), "{e:?}");
        // The neighbours: the limits themselves are accepted.
        let mut g = group("sequential", 1024, 1000);
        g.workload.hold_ticks = 100_000;
        g.role = "ünïcode role".into();
        assert_eq!(validate::<AnyRecipe>(&[g]), Ok(()));
    }
}
