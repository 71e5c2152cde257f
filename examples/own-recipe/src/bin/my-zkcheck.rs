//! `my-zkcheck`: zkcheck's command line over this crate's recipes
//! ([`own_recipe::OwnRecipes`]). `check`, `replay` (`--trace`, `--html`),
//! `--shard` and `merge`, `list`: the same flags, output and exit codes as
//! `zkcheck`, with scenario files and replay tokens naming the crate's
//! recipes (`own-lock`, `own-broken-lock`, `own-timed-lock`,
//! `own-suspended-holder-lock`, `own-guessed-timeout-lock`; `scenarios/`
//! holds one). A token printed by a failing `cargo test` replays here.

fn main() -> std::process::ExitCode {
    zkcheck_cli::command::main_for::<own_recipe::OwnRecipes>()
}
