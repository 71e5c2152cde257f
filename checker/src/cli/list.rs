//! `zkcheck list`: every registered recipe.

use std::process::ExitCode;

pub fn list() -> ExitCode {
    let width = zkrecipes::RECIPES
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(0);
    for r in zkrecipes::RECIPES {
        println!(
            "{:<width$}  {:<8} {:<10} {}",
            r.name,
            format!("{:?}", r.family).to_lowercase(),
            r.origin,
            r.summary
        );
    }
    ExitCode::SUCCESS
}
