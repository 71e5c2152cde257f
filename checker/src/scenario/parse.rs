//! Scenario files: TOML in, a validated [`Scenario`] out, and the canonical
//! text back. Every error names the file, the line and column when the
//! TOML parser knows them, and what is wrong — never a panic.

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use toml::Spanned;
use zkrecipes::{RecipeSet, Workload};
use zksim::{FaultBudget, Tick};

use super::groups::{self, ClientGroup};
use super::{
    property_by_name, property_name, Ensemble, ExploreDefaults, Invalid, Scenario, ALL_PROPERTIES,
};

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recipe: Option<Spanned<String>>,
    #[serde(default = "default_root")]
    root: Spanned<String>,
    clients: Spanned<ClientsDoc>,
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

/// `clients = N` (of the top-level recipe) or `[[clients]]` groups.
#[derive(Serialize)]
#[serde(untagged)]
enum ClientsDoc {
    Count(usize),
    Groups(Vec<GroupDoc>),
}

impl<'de> Deserialize<'de> for ClientsDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = ClientsDoc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of clients, or [[clients]] groups")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ClientsDoc, E> {
                usize::try_from(v)
                    .map(ClientsDoc::Count)
                    .map_err(|_| E::custom("`clients` must not be negative"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ClientsDoc, E> {
                usize::try_from(v)
                    .map(ClientsDoc::Count)
                    .map_err(|_| E::custom("`clients` is too large"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ClientsDoc, A::Error> {
                let mut groups = Vec::new();
                while let Some(g) = seq.next_element::<GroupDoc>()? {
                    groups.push(g);
                }
                Ok(ClientsDoc::Groups(groups))
            }
        }
        d.deserialize_any(Either)
    }
}

/// One `[[clients]]` group as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupDoc {
    recipe: Spanned<String>,
    #[serde(default = "one")]
    count: Spanned<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    role: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    workload: Option<GroupWorkloadDoc>,
}

fn one() -> Spanned<usize> {
    Spanned::new(0..0, 1)
}

/// A group's workload: each field missing falls back to `[workload]`.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct GroupWorkloadDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    rounds: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hold_ticks: Option<Tick>,
    #[serde(skip_serializing_if = "Option::is_none")]
    think_ticks: Option<Tick>,
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
    let workload = Workload {
        rounds: doc.workload.rounds,
        hold_ticks: doc.workload.hold_ticks,
        think_ticks: doc.workload.think_ticks,
    };
    let known = |recipe: &Spanned<String>| {
        if C::family_of(recipe.get_ref()).is_none() {
            return Err(at(
                Some(recipe.span()),
                format!(
                    "unknown recipe `{}`; known recipes: {}",
                    recipe.get_ref(),
                    C::names().join(", ")
                ),
            ));
        }
        Ok(())
    };
    let (recipe, clients, groups) = match (doc.clients.get_ref(), &doc.recipe) {
        (ClientsDoc::Count(n), Some(recipe)) => {
            known(recipe)?;
            (recipe.get_ref().clone(), *n, Vec::new())
        }
        (ClientsDoc::Count(_), None) => {
            return Err(at(
                Some(doc.clients.span()),
                "no `recipe`: give `recipe = \"…\"` with `clients = N`, or [[clients]] groups \
                 each with its recipe"
                    .into(),
            ))
        }
        (ClientsDoc::Groups(_), Some(recipe)) => {
            return Err(at(
                Some(recipe.span()),
                "impossible combination: a top-level `recipe` with [[clients]] groups; give \
                 each group its recipe instead"
                    .into(),
            ))
        }
        (ClientsDoc::Groups(docs), None) => {
            if docs.is_empty() {
                return Err(at(Some(doc.clients.span()), "no [[clients]] group".into()));
            }
            let groups: Vec<ClientGroup> = docs
                .iter()
                .map(|g| {
                    let w = g.workload.as_ref();
                    ClientGroup {
                        recipe: g.recipe.get_ref().clone(),
                        count: *g.count.get_ref(),
                        role: g
                            .role
                            .as_ref()
                            .map_or_else(|| g.recipe.get_ref().clone(), |r| r.get_ref().clone()),
                        workload: Workload {
                            rounds: w.and_then(|w| w.rounds).unwrap_or(workload.rounds),
                            hold_ticks: w.and_then(|w| w.hold_ticks).unwrap_or(workload.hold_ticks),
                            think_ticks: w
                                .and_then(|w| w.think_ticks)
                                .unwrap_or(workload.think_ticks),
                        },
                    }
                })
                .collect();
            groups::validate::<C>(&groups).map_err(|e| {
                let g = &docs[e.group];
                let span = match e.field {
                    "count" => g.count.span(),
                    "role" => g.role.as_ref().map_or(g.recipe.span(), Spanned::span),
                    _ => g.recipe.span(),
                };
                let span = if span.end > 0 { span } else { g.recipe.span() };
                at(Some(span), e.message)
            })?;
            let total = groups.iter().map(|g| g.count).sum();
            (groups[0].recipe.clone(), total, groups)
        }
    };
    let scenario = Scenario {
        name: doc.name,
        recipe,
        clients,
        groups,
        root: doc.root.get_ref().clone(),
        workload,
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
        always: Vec::new(),
    };
    // Point at the field when we know which one is wrong.
    scenario.validate().map_err(|invalid| {
        let span = match invalid {
            Invalid::NoClients | Invalid::Groups(_) => Some(doc.clients.span()),
            Invalid::BadRoot(_) => Some(doc.root.span()),
            _ => None,
        };
        at(span, invalid.to_string())
    })?;
    Ok(scenario)
}

pub(super) fn to_canonical<C: zksim::Client>(s: &Scenario<C>) -> String {
    let spanned = |v: &str| Spanned::new(0..0, v.to_string());
    let (recipe, clients) = if s.groups.is_empty() {
        (Some(spanned(&s.recipe)), ClientsDoc::Count(s.clients))
    } else {
        let groups = s
            .groups
            .iter()
            .map(|g| GroupDoc {
                recipe: spanned(&g.recipe),
                count: Spanned::new(0..0, g.count),
                role: Some(spanned(&g.role)),
                workload: Some(GroupWorkloadDoc {
                    rounds: Some(g.workload.rounds),
                    hold_ticks: Some(g.workload.hold_ticks),
                    think_ticks: Some(g.workload.think_ticks),
                }),
            })
            .collect();
        (None, ClientsDoc::Groups(groups))
    };
    let doc = Doc {
        name: s.name.clone(),
        recipe,
        clients: Spanned::new(0..0, clients),
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

    const GROUPS: &str = r#"
name = "q"
root = "/q"
[workload]
rounds = 2
think_ticks = 3

[[clients]]
recipe = "queue-producer"
count = 2
role = "producer"
workload = { rounds = 3 }

[[clients]]
recipe = "queue-consumer"
count = 3
role = "consumer"

[checks]
hard = ["queue"]
"#;

    #[test]
    fn client_groups_mix_roles_and_round_trip() {
        let s = Scenario::parse(GROUPS, "g.toml").unwrap();
        assert_eq!(s.clients, 5);
        assert_eq!(s.recipe, "queue-producer");
        assert_eq!(s.member(1).role, "producer");
        assert_eq!(s.member(1).workload.rounds, 3);
        assert_eq!(s.member(2).recipe, "queue-consumer");
        // Unset group fields fall back to [workload].
        assert_eq!(s.member(4).workload.rounds, 2);
        assert_eq!(s.member(4).workload.think_ticks, 3);
        assert_eq!(s.clients_in_role("consumer"), vec![2, 3, 4]);
        assert_eq!(s.roles(), vec!["producer", "consumer"]);
        let again = Scenario::parse(&to_canonical(&s), "canon").unwrap();
        assert_eq!(s, again);
        // A plain scenario stays plain.
        let plain = Scenario::parse(GOOD, "t.toml").unwrap();
        assert!(plain.groups.is_empty());
        assert_eq!(plain.member(1).role, "idle");
    }

    #[test]
    fn impossible_groups_point_at_the_culprit() {
        // Producers offer 6, consumers take 3×1.
        let text = GROUPS.replace(
            "count = 3\nrole = \"consumer\"",
            "count = 3\nrole = \"consumer\"\nworkload = { rounds = 1 }",
        );
        let e = Scenario::parse(&text, "g.toml").unwrap_err();
        assert!(
            e.message.contains("offer 6 items but the consumers take 3"),
            "{e}"
        );
        assert_eq!(e.position.map(|p| p.0), Some(15), "{e}");
        // Two families.
        let text = GROUPS.replace("\"queue-consumer\"", "\"sequential\"");
        let e = Scenario::parse(&text, "g.toml").unwrap_err();
        assert!(e.message.contains("impossible combination"), "{e}");
        assert_eq!(e.position, Some((15, 10)), "{e}");
        // A top-level recipe with groups.
        let text = GROUPS.replace("root = \"/q\"", "root = \"/q\"\nrecipe = \"idle\"");
        let e = Scenario::parse(&text, "g.toml").unwrap_err();
        assert!(
            e.message
                .contains("top-level `recipe` with [[clients]] groups"),
            "{e}"
        );
        assert_eq!(e.position.map(|p| p.0), Some(4), "{e}");
        // A zero count, an unknown field in a group.
        let e = Scenario::parse(&GROUPS.replace("count = 2", "count = 0"), "g.toml").unwrap_err();
        assert_eq!(e.position, Some((10, 9)), "{e}");
        let e = Scenario::parse(&GROUPS.replace("count = 2", "cuont = 2"), "g.toml").unwrap_err();
        assert!(e.message.contains("cuont"), "{e}");
        assert_eq!(e.position.map(|p| p.0), Some(10), "{e}");
        // No recipe at all.
        let e = Scenario::parse("name = \"t\"\nclients = 2\n", "f.toml").unwrap_err();
        assert!(e.message.contains("no `recipe`"), "{e}");
    }
}
