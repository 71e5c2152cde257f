//! `zkcheck list`: every recipe the binary knows (the registered ones for
//! `zkcheck`, a user's set for their own binary), with the registry's
//! origin and summary where it has them.

use zkrecipes::RecipeSet;

use super::{say, Exit, Io};

pub fn list<C: RecipeSet>(io: &mut Io) -> Exit {
    let names = C::names();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for name in names {
        let family = C::family_of(name).map_or("?", zkcheck::scenario::family_name);
        let (origin, summary) =
            zkrecipes::registry::find(name).map_or(("yours", ""), |r| (r.origin, r.summary));
        say!(io, "{name:<width$}  {family:<8} {origin:<10} {summary}");
    }
    Exit::Ok
}
