//! Symmetry reduction: clients that are interchangeable are explored once
//! per arrangement, not once per permutation (stateright's
//! `RewritePlan`/`Representative`, applied to a world whose clients leak
//! their identity into names).
//!
//! Two clients are interchangeable when swapping them — their slots,
//! their first session ids, the guids in every node name, path, reply and
//! memory, the monitors' per-client state ([`SystemState::renamed`],
//! [`zksim::rename`]) — leaves the initial state as it is. That is checked
//! on the root itself, so it covers recipe, parameters, role, group and
//! initial server at once; pinned clients never move. Swaps generate every
//! permutation within a class.
//!
//! A state's visited-set key is then the fingerprint of a representative:
//! within each class, slots are sorted by a summary of their own content
//! with their identity taken out ([`zksim::World::slot_key`]), and the
//! state is renamed so that the sorted slots take the class's indices in
//! order. Equal keys may still leave two permutations of one state apart
//! (ties): that only costs reduction, never soundness. The state kept and
//! expanded is the original, so successors are real steps of real states.
//!
//! Sound where the transition relation is invariant under renaming, which
//! is not everywhere; [`decide`] turns the reduction off otherwise:
//! - a recipe whose behaviour depends on names beyond their guid (sorts
//!   whole names as strings, takes the first of several matches in the
//!   server's hash order): it does not rename ([`zksim::Client::renamed`]);
//! - monitors not renamed yet (queue), the scenario's own invariants and
//!   monitors, faults aimed at roles ([`SystemState::rename_blockers`] names
//!   which, and the reason is printed and reported, never silent);
//! - scenarios where two sessions can expire in one tick: the leader
//!   expires them in session-id order, which renaming would reverse.
//!   That needs two sessions silent at once, so the reduction is on only
//!   with no partitions and at most one drop, expiry, pause or crash.

use zkrecipes::RecipeSet;
use zksim::rename::Renaming;
use zksim::ClientId;

use crate::scenario::Scenario;
use crate::state::SystemState;

/// The classes of interchangeable clients of a scenario (each of two or
/// more clients, in index order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    clients: usize,
    classes: Vec<Vec<ClientId>>,
    /// Key each state by the least fingerprint over every permutation
    /// within the classes (see [`Symmetry::exact`]).
    exact: bool,
}

/// Whether exhaustive search of `scenario` (whose initial state is `root`)
/// may merge states that differ by a permutation of clients, and of which.
/// `Err` says why not.
pub fn decide<C: RecipeSet>(
    scenario: &Scenario<C>,
    root: &SystemState<C>,
) -> Result<Symmetry, String> {
    let n = root.world.num_clients();
    let faults = root.world.config().faults;
    if faults.partitions > 0 {
        return Err(
            "a partition silences several sessions at once (expired in session-id order)".into(),
        );
    }
    let silencing = faults.connection_drops + faults.expiries + faults.pauses + faults.crashes;
    if silencing > 1 {
        return Err(format!(
            "{silencing} faults may silence sessions: two could expire in one tick, in session-id order"
        ));
    }
    if root.is_aimed() {
        return Err("faults are aimed at roles".into());
    }
    let identity = Renaming::new((0..n).collect());
    if root.world.renamed(&identity).is_none() {
        return Err(format!(
            "recipe {} does not rename (its Client::renamed returns None: it may depend on \
             names beyond what renaming preserves; write Client::renamed to turn symmetry on)",
            scenario.recipe
        ));
    }
    if root.renamed(&identity).is_none() {
        let blockers = root.rename_blockers();
        return Err(if blockers.is_empty() {
            "a hard property's monitor cannot be renamed".to_string()
        } else {
            format!("cannot rename {}", blockers.join("; "))
        });
    }
    let pinned = |c: ClientId| root.world.config().pins.iter().any(|&(p, _)| p == c);
    // Union-find over the swaps that fix the root.
    let mut class_of: Vec<ClientId> = (0..n).collect();
    for i in (0..n).filter(|&i| !pinned(i)) {
        for j in (i + 1..n).filter(|&j| !pinned(j)) {
            if class_of[j] != j {
                continue;
            }
            let mut swap: Vec<ClientId> = (0..n).collect();
            swap.swap(i, j);
            if root.renamed(&Renaming::new(swap)).as_ref() == Some(root) {
                class_of[j] = class_of[i];
            }
        }
    }
    let mut classes: Vec<Vec<ClientId>> = Vec::new();
    for c in 0..n {
        match classes.iter_mut().find(|k| class_of[k[0]] == class_of[c]) {
            Some(class) => class.push(c),
            None => classes.push(vec![c]),
        }
    }
    classes.retain(|k| k.len() > 1);
    if classes.is_empty() {
        return Err("no two clients are interchangeable".into());
    }
    Ok(Symmetry {
        clients: n,
        classes,
        exact: false,
    })
}

impl Symmetry {
    /// "clients 0-2" style description of the classes, for `check`'s output.
    pub fn describe(&self) -> String {
        let class = |k: &Vec<ClientId>| {
            let ids: Vec<String> = k.iter().map(|c| c.to_string()).collect();
            format!("{{{}}}", ids.join(","))
        };
        let classes: Vec<String> = self.classes.iter().map(class).collect();
        format!("interchangeable clients {}", classes.join(" "))
    }

    /// The same classes, with each state keyed by the least fingerprint
    /// over *every* permutation within them: one key per orbit, with no
    /// ties to leave members of an orbit apart, at a cost of k! renamings
    /// per class of k clients. A test oracle: under it the number of
    /// distinct states is a property of the state graph, not of the order
    /// the search met the members of each orbit in, so two searches
    /// (partial-order reduction on and off) can be compared exactly.
    pub fn exact(mut self) -> Self {
        self.exact = true;
        self
    }

    /// Every renaming that permutes clients within their classes.
    fn every_renaming(&self) -> Vec<Renaming> {
        let mut all: Vec<Vec<ClientId>> = vec![(0..self.clients).collect()];
        for class in &self.classes {
            let mut orders: Vec<Vec<ClientId>> = vec![Vec::new()];
            for _ in class {
                orders = orders
                    .into_iter()
                    .flat_map(|order| {
                        class
                            .iter()
                            .filter(|c| !order.contains(c))
                            .map(|&c| {
                                let mut next = order.clone();
                                next.push(c);
                                next
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect();
            }
            all = all
                .into_iter()
                .flat_map(|to| {
                    orders.iter().map(move |order| {
                        let mut to = to.clone();
                        for (&from, &place) in class.iter().zip(order) {
                            to[from] = place;
                        }
                        to
                    })
                })
                .collect();
        }
        all.into_iter().map(Renaming::new).collect()
    }

    /// The renaming that takes `model` to its representative.
    fn plan<C: RecipeSet>(&self, model: &SystemState<C>) -> Renaming {
        if self.exact {
            let least = self
                .every_renaming()
                .into_iter()
                .filter_map(|r| Some((model.renamed_fingerprint(&r)?, r)))
                .min_by_key(|(key, _)| *key);
            if let Some((_, r)) = least {
                return r;
            }
        }
        let mut to: Vec<ClientId> = (0..self.clients).collect();
        for class in &self.classes {
            let mut keyed: Vec<(Option<u64>, ClientId)> = class
                .iter()
                .map(|&c| (model.world.slot_key(c), c))
                .collect();
            keyed.sort_unstable();
            for (&(_, from), &place) in keyed.iter().zip(class) {
                to[from] = place;
            }
        }
        Renaming::new(to)
    }

    /// The visited-set key of `model`: its representative's fingerprint.
    pub fn fingerprint<C: RecipeSet>(&self, model: &SystemState<C>) -> u64 {
        match model.renamed_fingerprint(&self.plan(model)) {
            Some(key) => key,
            // Not reached for a scenario `decide` accepted (renamability is
            // fixed by recipe and monitors); the plain key is still sound.
            None => model.fingerprint(),
        }
    }
}

/// How the search keys states: plainly, or by representative.
#[derive(Clone, Copy, Debug)]
pub(super) struct Keying<'a>(pub Option<&'a Symmetry>);

impl Keying<'_> {
    pub fn key<C: RecipeSet>(&self, model: &SystemState<C>) -> u64 {
        match self.0 {
            Some(symmetry) => symmetry.fingerprint(model),
            None => model.fingerprint(),
        }
    }

    /// The key and the renaming that takes `model` to the representative
    /// it was keyed by (`None`: states are keyed as they are).
    pub fn key_plan<C: RecipeSet>(&self, model: &SystemState<C>) -> (u64, Option<Renaming>) {
        match self.0 {
            Some(symmetry) => {
                let plan = symmetry.plan(model);
                match model.renamed_fingerprint(&plan) {
                    Some(key) => (key, Some(plan)),
                    None => (model.fingerprint(), None),
                }
            }
            None => (model.fingerprint(), None),
        }
    }

    /// The renaming [`Keying::key_plan`] would give.
    pub fn plan<C: RecipeSet>(&self, model: &SystemState<C>) -> Option<Renaming> {
        self.key_plan(model).1
    }
}
