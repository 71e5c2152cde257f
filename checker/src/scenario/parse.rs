//! Scenario files: TOML in, a validated [`Scenario`] out, and the canonical
//! text back. Every error names the file, the line and column when the
//! TOML parser knows them, and what is wrong — never a panic.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;
use zkrecipes::{RecipeSet, Workload};
use zksim::{FaultBudget, Tick};

use super::{property_by_name, property_name, Ensemble, ExploreDefaults, Scenario, ALL_PROPERTIES};

/// Why a scenario could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or `token`) the scenario came from.
    pub origin: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.origin, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The file as written: spans kept where a later check may complain.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    name: String,
    recipe: Spanned<String>,
    clients: Spanned<usize>,
    #[serde(default = "default_root")]
    root: Spanned<String>,
    #[serde(default)]
    workload: WorkloadDoc,
    #[serde(default)]
    ensemble: Ensemble,
    #[serde(default)]
    faults: FaultsDoc,
    #[serde(default)]
    checks: ChecksDoc,
    #[serde(default)]
    explore: ExploreDefaults,
}

fn default_root() -> Spanned<String> {
    Spanned::new(0..0, "/lock".to_string())
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct WorkloadDoc {
    rounds: u32,
    hold_ticks: Tick,
    think_ticks: Tick,
}

impl Default for WorkloadDoc {
    fn default() -> Self {
        let w = Workload::default();
        WorkloadDoc {
            rounds: w.rounds,
            hold_ticks: w.hold_ticks,
            think_ticks: w.think_ticks,
        }
    }
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct FaultsDoc {
    connection_drops: u32,
    expiries: u32,
    pauses: u32,
    crashes: u32,
    partitions: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ChecksDoc {
    hard: Vec<Spanned<String>>,
    report: Vec<Spanned<String>>,
}

impl Default for ChecksDoc {
    fn default() -> Self {
        ChecksDoc {
            hard: vec![Spanned::new(0..0, "mutex".to_string())],
            report: Vec::new(),
        }
    }
}

pub(super) fn from_file<C: RecipeSet>(path: &Path) -> Result<Scenario<C>, ScenarioError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        origin: origin.clone(),
        position: None,
        message: format!("cannot read scenario file: {e}"),
    })?;
    from_str(&text, &origin)
}

pub(super) fn from_str<C: RecipeSet>(
    text: &str,
    origin: &str,
) -> Result<Scenario<C>, ScenarioError> {
    let at = |span: Option<std::ops::Range<usize>>, message: String| ScenarioError {
        origin: origin.to_string(),
        position: span.filter(|s| s.end > 0).map(|s| line_col(text, s.start)),
        message,
    };
    let doc: Doc =
        toml::from_str(text).map_err(|e| at(e.span(), e.message().trim().to_string()))?;

    let checks = |list: &[Spanned<String>]| {
        list.iter()
            .map(|name| {
                property_by_name(name.get_ref()).ok_or_else(|| {
                    let known: Vec<_> = ALL_PROPERTIES.iter().map(|&p| property_name(p)).collect();
                    at(
                        Some(name.span()),
                        format!(
                            "unknown check `{}`; known checks: {}",
                            name.get_ref(),
                            known.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let hard = checks(&doc.checks.hard)?;
    let report = checks(&doc.checks.report)?;
    if C::family_of(doc.recipe.get_ref()).is_none() {
        return Err(at(
            Some(doc.recipe.span()),
            format!(
                "unknown recipe `{}`; known recipes: {}",
                doc.recipe.get_ref(),
                C::names().join(", ")
            ),
        ));
    }
    let scenario = Scenario {
        name: doc.name,
        recipe: doc.recipe.get_ref().clone(),
        clients: *doc.clients.get_ref(),
        root: doc.root.get_ref().clone(),
        workload: Workload {
            rounds: doc.workload.rounds,
            hold_ticks: doc.workload.hold_ticks,
            think_ticks: doc.workload.think_ticks,
        },
        ensemble: doc.ensemble,
        faults: FaultBudget {
            connection_drops: doc.faults.connection_drops,
            expiries: doc.faults.expiries,
            pauses: doc.faults.pauses,
            crashes: doc.faults.crashes,
            partitions: doc.faults.partitions,
        },
        hard,
        report,
        explore: doc.explore,
        recipes: std::marker::PhantomData,
    };
    // Point at the field when we know which one is wrong.
    scenario.validate().map_err(|message| {
        let span = if message.contains("`clients`") {
            Some(doc.clients.span())
        } else if message.contains("`root`") {
            Some(doc.root.span())
        } else {
            None
        };
        at(span, message)
    })?;
    Ok(scenario)
}

pub(super) fn to_canonical<C>(s: &Scenario<C>) -> String {
    let spanned = |v: &str| Spanned::new(0..0, v.to_string());
    let doc = Doc {
        name: s.name.clone(),
        recipe: spanned(&s.recipe),
        clients: Spanned::new(0..0, s.clients),
        root: spanned(&s.root),
        workload: WorkloadDoc {
            rounds: s.workload.rounds,
            hold_ticks: s.workload.hold_ticks,
            think_ticks: s.workload.think_ticks,
        },
        ensemble: s.ensemble,
        faults: FaultsDoc {
            connection_drops: s.faults.connection_drops,
            expiries: s.faults.expiries,
            pauses: s.faults.pauses,
            crashes: s.faults.crashes,
            partitions: s.faults.partitions,
        },
        checks: ChecksDoc {
            hard: s.hard.iter().map(|&p| spanned(property_name(p))).collect(),
            report: s
                .report
                .iter()
                .map(|&p| spanned(property_name(p)))
                .collect(),
        },
        explore: s.explore,
    };
    // Serialising plain structs of numbers and strings cannot fail.
    toml::to_string(&doc).unwrap_or_default()
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..offset].chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
recipe = "idle"
clients = 2
[checks]
hard = ["mutex"]
report = ["herd", "fifo"]
"#;

    #[test]
    fn canonical_text_parses_back_to_the_same_scenario() {
        let s = Scenario::parse(GOOD, "t.toml").unwrap();
        let again = Scenario::parse(&to_canonical(&s), "canon").unwrap();
        assert_eq!(s, again);
        assert_eq!(to_canonical(&s), to_canonical(&again));
    }

    #[test]
    fn unknown_field_is_named_with_its_line() {
        let text = "name = \"t\"\nrecipe = \"idle\"\nclients = 2\n[workload]\nroundz = 3\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position.map(|p| p.0), Some(5), "{e}");
        assert!(e.message.contains("roundz"), "{e}");
    }

    #[test]
    fn unknown_check_points_at_the_name() {
        let text = "name = \"t\"\nrecipe = \"idle\"\nclients = 2\n[checks]\nhard = [\"mutex\", \"nope\"]\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position, Some((5, 18)), "{e}");
        assert!(e.message.contains("unknown check `nope`"), "{e}");
        assert!(e.message.contains("fenced-mutex"), "{e}");
    }

    #[test]
    fn unknown_recipe_lists_the_known_ones() {
        let text = "name = \"t\"\nrecipe = \"nope\"\nclients = 2\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position, Some((2, 10)), "{e}");
        assert!(e.message.contains("idle"), "{e}");
    }

    #[test]
    fn zero_clients_is_refused() {
        let text = "name = \"t\"\nrecipe = \"idle\"\nclients = 0\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position, Some((3, 11)), "{e}");
    }
}
