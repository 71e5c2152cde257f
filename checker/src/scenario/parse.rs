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

use crate::aim::{Aims, Role, Target, ROLES};
use crate::monitor::catalogue::{property_by_name, property_name, scenario_names};

use super::groups::{self, ClientGroup};
use super::{Ensemble, ExploreDefaults, Invalid, Scenario};

/// Why a scenario could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or `token`) the scenario came from.
    pub origin: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong, naming the field.
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
    #[serde(default = "default_spanned")]
    ensemble: Spanned<Ensemble>,
    #[serde(default = "default_spanned")]
    faults: Spanned<FaultsDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pin: Vec<Spanned<PinDoc>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parent: Vec<Spanned<ParentDoc>>,
    #[serde(default)]
    checks: ChecksDoc,
    #[serde(default)]
    explore: ExploreDefaults,
    /// Written only when it differs from the defaults, so that the
    /// canonical text (and every replay token) of an untimed scenario is
    /// what it was before timing existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timing: Option<Spanned<super::Timing>>,
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
    rounds: Option<Spanned<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hold_ticks: Option<Spanned<Tick>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    think_ticks: Option<Spanned<Tick>>,
}

fn default_spanned<T: Default>() -> Spanned<T> {
    Spanned::new(0..0, T::default())
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
    kills: u32,
    #[serde(skip_serializing_if = "AimDoc::is_empty")]
    aim: AimDoc,
}

/// `[faults.aim]`: per fault kind, a client index or a role name.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct AimDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    connection_drops: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiries: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kills: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pauses: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    crashes: Option<Spanned<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions: Option<Spanned<toml::Value>>,
}

impl AimDoc {
    fn is_empty(&self) -> bool {
        [
            &self.connection_drops,
            &self.expiries,
            &self.kills,
            &self.pauses,
            &self.crashes,
            &self.partitions,
        ]
        .iter()
        .all(|a| a.is_none())
    }

    /// `roles`: the scenario's role names ([`Scenario::roles`]), which
    /// group aims index.
    fn of(aims: &Aims, roles: &[&str]) -> Self {
        let value = |t: Option<Target>| {
            t.map(|t| {
                Spanned::new(
                    0..0,
                    match t {
                        Target::Index(i) => toml::Value::Integer(i as i64),
                        Target::Role(r) => toml::Value::String(r.name().to_string()),
                        Target::Group(g) => {
                            toml::Value::String(roles.get(g).copied().unwrap_or("?").to_string())
                        }
                    },
                )
            })
        };
        AimDoc {
            connection_drops: value(aims.connection_drops),
            expiries: value(aims.expiries),
            kills: value(aims.kills),
            pauses: value(aims.pauses),
            crashes: value(aims.crashes),
            partitions: value(aims.partitions),
        }
    }
}

/// `[[pin]]`: a client whose connect string names one server.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PinDoc {
    client: usize,
    server: usize,
}

/// `[[parent]]`: a node that exists before the clients start, its suffix counter set.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParentDoc {
    path: String,
    #[serde(default)]
    counter: i32,
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

/// A file holding a `[timing]` section and nothing else (what `zkcheck
/// calibrate --out` writes), read and validated; errors name the file, the
/// line and the column.
pub fn timing_from_file(path: &Path) -> Result<super::Timing, ScenarioError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct TimingDoc {
        timing: Spanned<super::Timing>,
    }
    let origin = path.display().to_string();
    let text = read(path, &origin, "timing file")?;
    let at = |span: Option<std::ops::Range<usize>>, message: String| ScenarioError {
        origin: origin.clone(),
        position: span.filter(|s| s.end > 0).map(|s| line_col(&text, s.start)),
        message,
    };
    if text.len() as u64 > crate::limits::FILE_BYTES.max {
        return Err(at(
            None,
            crate::limits::FILE_BYTES.refusal(&format!("{} bytes", text.len())),
        ));
    }
    let doc: TimingDoc = toml::from_str(&text).map_err(|e| toml_error(&text, &origin, e))?;
    let timing = *doc.timing.get_ref();
    timing.validate().map_err(|message| {
        let position = named_field(&message)
            .and_then(|f| find_key(&text, f))
            .or_else(|| Some(line_col(&text, doc.timing.span().start)));
        ScenarioError {
            origin: origin.clone(),
            position,
            message,
        }
    })?;
    Ok(timing)
}

pub(super) fn from_file<C: RecipeSet>(path: &Path) -> Result<Scenario<C>, ScenarioError> {
    let origin = path.display().to_string();
    let text = read(path, &origin, "scenario file")?;
    from_str(&text, &origin)
}

/// A scenario or timing file, read bounded ([`crate::input`]).
fn read(path: &Path, origin: &str, what: &str) -> Result<String, ScenarioError> {
    crate::input::read_text(path, crate::limits::FILE_BYTES, what).map_err(|e| ScenarioError {
        origin: origin.to_string(),
        position: e.position,
        message: e.message,
    })
}

pub(super) fn from_str<C: RecipeSet>(
    text: &str,
    origin: &str,
) -> Result<Scenario<C>, ScenarioError> {
    parse_and_check(text, origin, true)
}

/// [`from_str`] without [`Scenario::judges_something`], for a replayed
/// token whose check adds invariants or monitors (code) before it runs:
/// `Check::run` applies that rule to the whole check.
pub(super) fn from_str_pending_code<C: RecipeSet>(
    text: &str,
    origin: &str,
) -> Result<Scenario<C>, ScenarioError> {
    parse_and_check(text, origin, false)
}

fn parse_and_check<C: RecipeSet>(
    text: &str,
    origin: &str,
    judged: bool,
) -> Result<Scenario<C>, ScenarioError> {
    let at = |span: Option<std::ops::Range<usize>>, message: String| ScenarioError {
        origin: origin.to_string(),
        position: span.filter(|s| s.end > 0).map(|s| line_col(text, s.start)),
        message,
    };
    if text.len() as u64 > crate::limits::FILE_BYTES.max {
        return Err(at(
            None,
            crate::limits::FILE_BYTES.refusal(&format!("{} bytes", text.len())),
        ));
    }
    let doc: Doc = toml::from_str(text).map_err(|e| toml_error(text, origin, e))?;

    let checks = |list: &[Spanned<String>]| {
        list.iter()
            .map(|name| {
                property_by_name(name.get_ref()).ok_or_else(|| {
                    let known = scenario_names();
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
                            rounds: w
                                .and_then(|w| w.rounds.as_ref())
                                .map_or(workload.rounds, |v| *v.get_ref()),
                            hold_ticks: w
                                .and_then(|w| w.hold_ticks.as_ref())
                                .map_or(workload.hold_ticks, |v| *v.get_ref()),
                            think_ticks: w
                                .and_then(|w| w.think_ticks.as_ref())
                                .map_or(workload.think_ticks, |v| *v.get_ref()),
                        },
                    }
                })
                .collect();
            groups::validate::<C>(&groups).map_err(|e| {
                let g = &docs[e.group];
                let w = g.workload.as_ref();
                let span = match e.field {
                    "count" => Some(g.count.span()),
                    "role" => g.role.as_ref().map(Spanned::span),
                    "workload.rounds" => w.and_then(|w| w.rounds.as_ref()).map(Spanned::span),
                    "workload.hold_ticks" => {
                        w.and_then(|w| w.hold_ticks.as_ref()).map(Spanned::span)
                    }
                    "workload.think_ticks" => {
                        w.and_then(|w| w.think_ticks.as_ref()).map(Spanned::span)
                    }
                    _ => None,
                };
                // A field the group does not write comes from `[workload]`.
                let span = span.filter(|s| s.end > 0).or_else(|| {
                    let top = e.field.starts_with("workload.");
                    top.then(|| find_key(text, e.field))
                        .flatten()
                        .map(|(line, _)| line_start(text, line)..line_start(text, line) + 1)
                });
                let span = span.unwrap_or_else(|| g.recipe.span());
                at(
                    Some(span),
                    format!("[[clients]] group {}: {}", e.group + 1, e.message),
                )
            })?;
            let total = groups.iter().map(|g| g.count).sum();
            (groups[0].recipe.clone(), total, groups)
        }
    };
    // A role name in an aim is a built-in role or a `[[clients]]` group's.
    let group_roles = super::groups::role_names(&groups, &recipe);
    let target = |value: &Option<Spanned<toml::Value>>| -> Result<Option<Target>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => Ok(Some(Target::Index(*i as usize))),
            toml::Value::String(name) => {
                if let Some(r) = Role::by_name(name) {
                    return Ok(Some(Target::Role(r)));
                }
                if let Some(g) = group_roles.iter().position(|r| r == name) {
                    return Ok(Some(Target::Group(g)));
                }
                let known: Vec<&str> = ROLES
                    .iter()
                    .map(|r| r.name())
                    .chain(group_roles.iter().copied())
                    .collect();
                Err(at(
                    Some(v.span()),
                    format!("unknown role `{name}`; known roles: {}", known.join(", ")),
                ))
            }
            _ => Err(at(
                Some(v.span()),
                "an aim is a client index (a number ≥ 0) or a role name".to_string(),
            )),
        }
    };
    let aim = &doc.faults.get_ref().aim;
    let aims = Aims {
        connection_drops: target(&aim.connection_drops)?,
        expiries: target(&aim.expiries)?,
        kills: target(&aim.kills)?,
        pauses: target(&aim.pauses)?,
        crashes: target(&aim.crashes)?,
        partitions: target(&aim.partitions)?,
    };
    let scenario = Scenario {
        name: doc.name,
        recipe,
        clients,
        groups,
        root: doc.root.get_ref().clone(),
        workload,
        ensemble: *doc.ensemble.get_ref(),
        faults: {
            let f = doc.faults.get_ref();
            FaultBudget {
                connection_drops: f.connection_drops,
                expiries: f.expiries,
                pauses: f.pauses,
                crashes: f.crashes,
                partitions: f.partitions,
                kills: f.kills,
            }
        },
        aims,
        pins: doc
            .pin
            .iter()
            .map(|p| (p.get_ref().client, p.get_ref().server))
            .collect(),
        parents: doc
            .parent
            .iter()
            .map(|p| (p.get_ref().path.clone(), p.get_ref().counter))
            .collect(),
        hard,
        report,
        explore: doc.explore,
        timing: doc
            .timing
            .as_ref()
            .map(|t| *t.get_ref())
            .unwrap_or_default(),
        always: Vec::new(),
        monitors: Vec::new(),
    };
    // Point at the field when we know which one is wrong: the message
    // names it as `section.key` (or `key` at the top).
    let checked = if judged {
        scenario.validate()
    } else {
        scenario.validate_for_figures()
    };
    checked.map_err(|invalid| {
        let span = match &invalid {
            Invalid::NoClients | Invalid::Groups(_) => Some(doc.clients.span()),
            Invalid::BadRoot(_) => Some(doc.root.span()),
            Invalid::Faults(message) => {
                fault_span(&doc.faults, &doc.pin, &doc.parent, &doc.ensemble, message)
            }
            Invalid::Limits(message) if message.starts_with("`clients`") => {
                Some(doc.clients.span())
            }
            Invalid::Limits(message) if message.starts_with("`root`") => Some(doc.root.span()),
            // A check that cannot fail: point at its name in `hard`.
            Invalid::Checks(message) => doc
                .checks
                .hard
                .iter()
                .find(|name| message.contains(&format!("names `{}`", name.get_ref())))
                .map(Spanned::span),
            _ => None,
        };
        let message = invalid.to_string();
        let position = span
            .filter(|s| s.end > 0)
            .map(|s| line_col(text, s.start))
            .or_else(|| named_field(&message).and_then(|f| find_key(text, f)));
        ScenarioError {
            origin: origin.to_string(),
            position,
            message,
        }
    })?;
    Ok(scenario)
}

/// A TOML syntax or shape error, located: where the parser gives no span
/// (its recursion limit on a dotted key of 80 parts or more), the longest
/// dotted key in the text is named instead.
fn toml_error(text: &str, origin: &str, e: toml::de::Error) -> ScenarioError {
    let mut message = e.message().trim().to_string();
    let position = match e.span().filter(|s| s.end > 0) {
        Some(span) => Some(line_col(text, span.start)),
        None => longest_dotted_key(text).map(|(line, col, parts)| {
            message = format!(
                "{message}: a dotted key of {parts} parts (a scenario's keys have at most 3, \
                 like `faults.aim.expiries`)"
            );
            (line, col)
        }),
    };
    ScenarioError {
        origin: origin.to_string(),
        position,
        message,
    }
}

/// The line and column of the dotted key (before `=`, or a `[table]`
/// header) with the most parts, and its part count; `None` if no key has
/// a dot. Dots inside quotes do not count.
fn longest_dotted_key(text: &str) -> Option<(usize, usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let key = match trimmed.strip_prefix('[') {
            Some(header) => header.trim_start_matches('['),
            None => trimmed.split('=').next().unwrap_or(""),
        };
        let mut quote = None;
        let mut dots = 0;
        for c in key.chars() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '.') => dots += 1,
                (None, ']') => break,
                _ => {}
            }
        }
        if dots > 0 && best.is_none_or(|(_, _, parts)| dots + 1 > parts) {
            best = Some((i + 1, line.len() - trimmed.len() + 1, dots + 1));
        }
    }
    best
}

/// The `section.key` a validation message starts with.
fn named_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

/// Where `key = …` of `[section]` (or of the top, for a plain `key`) is
/// written, as (line, column); `None` if it is not written (a default).
fn find_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    let (section, key) = dotted.rsplit_once('.').unwrap_or(("", dotted));
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(header) = trimmed.strip_prefix('[') {
            current = header.split(']').next().unwrap_or("").trim().to_string();
            continue;
        }
        let Some(after) = trimmed.strip_prefix(key) else {
            continue;
        };
        if current == section && after.trim_start().starts_with('=') {
            let col = line.len() - trimmed.len() + 1;
            return Some((i + 1, col));
        }
    }
    None
}

/// Where in the file a timing/aim/pin/parent error points: found from the
/// field its message names.
fn fault_span(
    faults: &Spanned<FaultsDoc>,
    pin: &[Spanned<PinDoc>],
    parent: &[Spanned<ParentDoc>],
    ensemble: &Spanned<Ensemble>,
    message: &str,
) -> Option<std::ops::Range<usize>> {
    if let Some(kind) = message
        .strip_prefix("`faults.aim.")
        .and_then(|m| m.split('`').next())
    {
        let aim = &faults.get_ref().aim;
        let spanned = match kind {
            "connection_drops" => &aim.connection_drops,
            "expiries" => &aim.expiries,
            "kills" => &aim.kills,
            "pauses" => &aim.pauses,
            "crashes" => &aim.crashes,
            _ => &aim.partitions,
        };
        spanned.as_ref().map(|v| v.span()).or(Some(faults.span()))
    } else if message.contains("`pin`") {
        let bad = pin.iter().find(|p| {
            let p = p.get_ref();
            message.contains(&format!("client {} ", p.client))
                || message.contains(&format!("server {} ", p.server))
        });
        bad.or(pin.last()).map(|p| p.span())
    } else if message.contains("`parent`") {
        let bad = parent
            .iter()
            .find(|p| message.contains(&format!("`{}`", p.get_ref().path)));
        bad.map(|p| p.span())
    } else if message.contains("`faults.") {
        Some(faults.span())
    } else if message.contains("`ensemble.") {
        Some(ensemble.span())
    } else {
        None
    }
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
                    rounds: Some(Spanned::new(0..0, g.workload.rounds)),
                    hold_ticks: Some(Spanned::new(0..0, g.workload.hold_ticks)),
                    think_ticks: Some(Spanned::new(0..0, g.workload.think_ticks)),
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
        ensemble: Spanned::new(0..0, s.ensemble),
        faults: Spanned::new(
            0..0,
            FaultsDoc {
                connection_drops: s.faults.connection_drops,
                expiries: s.faults.expiries,
                pauses: s.faults.pauses,
                crashes: s.faults.crashes,
                partitions: s.faults.partitions,
                kills: s.faults.kills,
                aim: AimDoc::of(&s.aims, &super::groups::role_names(&s.groups, &s.recipe)),
            },
        ),
        pin: s
            .pins
            .iter()
            .map(|&(client, server)| Spanned::new(0..0, PinDoc { client, server }))
            .collect(),
        parent: s
            .parents
            .iter()
            .map(|(path, counter)| {
                Spanned::new(
                    0..0,
                    ParentDoc {
                        path: path.clone(),
                        counter: *counter,
                    },
                )
            })
            .collect(),
        checks: ChecksDoc {
            hard: s.hard.iter().map(|&p| spanned(property_name(p))).collect(),
            report: s
                .report
                .iter()
                .map(|&p| spanned(property_name(p)))
                .collect(),
        },
        explore: s.explore,
        timing: (s.timing != super::Timing::default()).then(|| Spanned::new(0..0, s.timing)),
    };
    // Serialising plain structs of numbers and strings cannot fail.
    toml::to_string(&doc).unwrap_or_default()
}

use crate::input::line_col;

/// The byte offset where 1-based line `line` of `text` starts.
fn line_start(text: &str, line: usize) -> usize {
    text.split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum()
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
    fn partitions_without_a_follower_point_at_the_faults_table() {
        let text = "name = \"t\"\nrecipe = \"idle\"\nclients = 2\n[ensemble]\nservers = 1\n[faults]\npartitions = 1\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position, Some((6, 1)), "{e}");
        assert!(e.message.contains("needs a follower"), "{e}");
    }

    #[test]
    fn zero_sync_limit_is_refused_with_its_table() {
        let text = "name = \"t\"\nrecipe = \"idle\"\nclients = 2\n[ensemble]\nsync_limit = 0\n";
        let e = Scenario::parse(text, "f.toml").unwrap_err();
        assert_eq!(e.position, Some((4, 1)), "{e}");
        assert!(e.message.contains("sync_limit"), "{e}");
    }

    const AIMED: &str = r#"
name = "t"
recipe = "sequential"
clients = 3
[ensemble]
servers = 3
[faults]
expiries = 1
partitions = 1
[faults.aim]
expiries = "holder"
partitions = 2
[[pin]]
client = 1
server = 2
[[parent]]
path = "/lock"
counter = 2147483600
"#;

    #[test]
    fn aims_pins_and_parents_parse_and_survive_the_canonical_text() {
        let s = Scenario::parse(AIMED, "t.toml").unwrap();
        assert_eq!(s.aims.expiries, Some(Target::Role(Role::Holder)));
        assert_eq!(s.aims.partitions, Some(Target::Index(2)));
        assert_eq!(s.pins, vec![(1, 2)]);
        assert_eq!(s.parents, vec![("/lock".to_string(), 2_147_483_600)]);
        let again = Scenario::parse(&to_canonical(&s), "canon").unwrap();
        assert_eq!(s, again);
    }

    #[test]
    fn impossible_aims_pins_and_parents_are_refused_at_their_place() {
        let cases = [
            (
                "expiries = \"holder\"",
                "expiries = \"boss\"",
                11,
                "unknown role `boss`",
            ),
            (
                "expiries = \"holder\"",
                "expiries = 7",
                11,
                "no such client",
            ),
            (
                "expiries = \"holder\"",
                "kills = 0",
                11,
                "`faults.kills` = 0",
            ),
            ("partitions = 2", "partitions = 0", 12, "not a follower"),
            // A `[[pin]]` or `[[parent]]` error points at its table.
            ("server = 2", "server = 3", 13, "server 3 does not exist"),
            (
                "path = \"/lock\"",
                "path = \"/zookeeper/x\"",
                16,
                "outside `/zookeeper`",
            ),
        ];
        for (from, to, line, message) in cases {
            let text = AIMED.replace(from, to);
            let e = Scenario::parse(&text, "f.toml").unwrap_err();
            assert!(e.message.contains(message), "{to}: {e}");
            assert_eq!(e.position.map(|p| p.0), Some(line), "{to}: {e}");
        }
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
    fn a_fault_aimed_at_a_group_role_round_trips_and_unknown_roles_are_named() {
        let text = GROUPS.replace(
            "[checks]",
            "[faults]\nexpiries = 1\npartitions = 1\n[faults.aim]\nexpiries = \"consumer\"\n\
             partitions = \"producer\"\n[checks]",
        );
        let s = Scenario::parse(&text, "g.toml").unwrap();
        assert_eq!(s.aims.expiries, Some(Target::Group(1)));
        assert_eq!(s.aims.partitions, Some(Target::Group(0)));
        assert_eq!(s.client_roles(), vec![0, 0, 1, 1, 1]);
        let again = Scenario::parse(&to_canonical(&s), "canon").unwrap();
        assert_eq!(s, again);

        let e = Scenario::parse(
            &text.replace("expiries = \"consumer\"", "expiries = \"eater\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(
            e.message.contains(
                "unknown role `eater`; known roles: holder, waiter, leader, releaser, queued, producer, consumer"
            ),
            "{e}"
        );
        // A group may not take a built-in role's name: an aim could not
        // tell which is meant.
        let e = Scenario::parse(
            &GROUPS.replace("role = \"consumer\"", "role = \"holder\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("may not be `holder`"), "{e}");
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
