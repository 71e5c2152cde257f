//! Recipes as sans-IO state machines over zksim's vocabulary.
//!
//! Every recipe is a [`zksim::Client`] whose events are [`AppEvent`]s: the
//! checker reads those to judge exclusion, fairness, herds and liveness.
//! [`registry`] lists them all by name.

pub mod election;
pub mod event;
pub mod idle;
pub mod lock;
pub mod queue;
pub mod registry;
pub mod seeds;
pub mod testkit;
pub mod workload;

pub use event::AppEvent;
pub use registry::{AnyRecipe, Family, Recipe, RecipeInfo, RecipeParams, RecipeSet, RECIPES};
pub use workload::Workload;

/// zksim, for the paths [`recipe_set!`] expands to (a user's crate need
/// not name it).
#[doc(hidden)]
pub use zksim as __zksim;
