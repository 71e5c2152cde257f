//! `zkcheck list`: every registered recipe.

use super::{say, Exit, Io};

pub fn list(io: &mut Io) -> Exit {
    let width = zkrecipes::RECIPES
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(0);
    for r in zkrecipes::RECIPES {
        say!(
            io,
            "{:<width$}  {:<8} {:<10} {}",
            r.name,
            zkcheck::scenario::family_name(r.family),
            r.origin,
            r.summary
        );
    }
    Exit::Ok
}
