//! Shrinking the *input*: the scenarios one step smaller than a given one.
//!
//! A liveness or leak counterexample on three servers and four clients is
//! long because of the scenario, not the schedule: every write is a step
//! plus a follower apply per follower, and the end of a run waits for all
//! of them and for every client's rounds and hold times. No schedule pass
//! can remove those steps; a smaller scenario can. The replay token
//! carries the whole scenario ([`crate::token`]), so a counterexample on a
//! smaller one replays as easily as on the scenario as written.
//!
//! [`smaller`] lists the candidates in a fixed order, each valid by
//! [`Scenario::validate`] (the rules a scenario file passes) and each with
//! a readable change ("servers 3 → 1"). Each candidate lowers one number
//! and raises none (servers, clients, rounds, hold, think and session
//! times), so any chain of accepted reductions ends. [`Reduction::events`]
//! carries a schedule over: the events of a removed server or client are
//! left out, later clients are renumbered, a connect to a removed server
//! goes to server 0 (one server left) or to the follower before it.

use std::fmt;

use zkrecipes::{Family, RecipeSet, Workload};
use zksim::{Event, Fault};

use crate::aim::Target;
use crate::scenario::Scenario;

/// One number of a scenario made smaller: `field from → to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What changed, as a reader names it (`servers`, `clients`,
    /// `rounds of producer`, …).
    pub field: String,
    /// Its value before.
    pub from: u64,
    /// Its value after.
    pub to: u64,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} → {}", self.field, self.from, self.to)
    }
}

/// Append `change` to `changes`, merged into the earlier one it carries on
/// (`clients 4 → 3`, then `clients 3 → 2`, read `clients 4 → 2`, wherever
/// the first stands in the list).
pub fn record(changes: &mut Vec<Change>, change: Change) {
    match changes
        .iter_mut()
        .rev()
        .find(|c| c.field == change.field && c.to == change.from)
    {
        Some(earlier) => earlier.to = change.to,
        None => changes.push(change),
    }
}

/// How a schedule's events map onto the smaller scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// Every event carries over.
    Same,
    /// Only server 0 is left.
    OneServer,
    /// This server, the last, is gone: connects to it go to the server
    /// before it (another follower).
    WithoutServer(usize),
    /// This client is gone; later clients move down by one.
    WithoutClient(usize),
}

/// A candidate: the smaller scenario and what changed.
#[derive(Clone, Debug)]
pub struct Reduction<C: RecipeSet> {
    /// The smaller scenario (valid).
    pub scenario: Scenario<C>,
    /// What changed: one number, or one per group when the groups must
    /// shrink together (a queue's producers offer what its consumers take).
    pub changes: Vec<Change>,
    /// How events carry over, applied in order.
    mappings: Vec<Mapping>,
}

impl<C: RecipeSet> Reduction<C> {
    /// `events` (of the larger scenario) as events of the smaller one.
    pub fn events(&self, events: &[Event]) -> Vec<Event> {
        events
            .iter()
            .filter_map(|e| {
                self.mappings
                    .iter()
                    .try_fold(e.clone(), |e, &m| map_event(m, &e))
            })
            .collect()
    }
}

fn map_event(mapping: Mapping, event: &Event) -> Option<Event> {
    match mapping {
        Mapping::Same => Some(event.clone()),
        Mapping::OneServer => match event {
            Event::Apply { .. } => None,
            Event::Fault(Fault::Partition { .. } | Fault::Heal { .. }) => None,
            Event::Connect { client, .. } => Some(Event::Connect {
                client: *client,
                server: 0,
            }),
            e => Some(e.clone()),
        },
        Mapping::WithoutServer(gone) => match event {
            Event::Apply { server } if *server == gone => None,
            Event::Fault(Fault::Partition { server } | Fault::Heal { server })
                if *server == gone =>
            {
                None
            }
            Event::Connect { client, server } if *server == gone => Some(Event::Connect {
                client: *client,
                server: gone - 1,
            }),
            e => Some(e.clone()),
        },
        Mapping::WithoutClient(gone) => {
            let moved = |c: usize| match c.cmp(&gone) {
                std::cmp::Ordering::Less => Some(c),
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Greater => Some(c - 1),
            };
            Some(match event {
                Event::Request { client } => Event::Request {
                    client: moved(*client)?,
                },
                Event::Receive { client } => Event::Receive {
                    client: moved(*client)?,
                },
                Event::Timer { client } => Event::Timer {
                    client: moved(*client)?,
                },
                Event::Connect { client, server } => Event::Connect {
                    client: moved(*client)?,
                    server: *server,
                },
                Event::Fault(f) => Event::Fault(match *f {
                    Fault::DropConnection { client } => Fault::DropConnection {
                        client: moved(client)?,
                    },
                    Fault::Silence { client } => Fault::Silence {
                        client: moved(client)?,
                    },
                    Fault::KillSession { client } => Fault::KillSession {
                        client: moved(client)?,
                    },
                    Fault::Pause { client } => Fault::Pause {
                        client: moved(client)?,
                    },
                    Fault::Crash { client } => Fault::Crash {
                        client: moved(client)?,
                    },
                    Fault::Partition { server } => Fault::Partition { server },
                    Fault::Heal { server } => Fault::Heal { server },
                }),
                e => e.clone(),
            })
        }
    }
}

/// The scenarios one step smaller than `s`, in a fixed order: one server
/// in place of several; the last of three or more servers gone; one
/// client fewer (any one of the scenario, or of each group of more than
/// one, last group and last client first: the client the story turns on
/// is often an early one); one round fewer; hold, think and session times
/// halved; for several groups, one client of each (every pair) or one
/// round fewer in each. Only valid ones are listed.
pub fn smaller<C: RecipeSet>(s: &Scenario<C>) -> Vec<Reduction<C>> {
    let mut out = Vec::new();
    let mut push_all = |candidate: Option<(Scenario<C>, Vec<Change>, Vec<Mapping>)>| {
        if let Some((scenario, changes, mappings)) = candidate {
            if scenario.validate().is_ok() {
                out.push(Reduction {
                    scenario,
                    changes,
                    mappings,
                });
            }
        }
    };
    let mut push = |candidate: Option<(Scenario<C>, Change, Mapping)>| {
        push_all(candidate.map(|(s, c, m)| (s, vec![c], vec![m])));
    };
    push(one_server(s));
    push(one_server_fewer(s));
    if s.groups.is_empty() {
        for c in (0..s.clients).rev() {
            push(without_client(s, None, c));
        }
    } else {
        for g in (0..s.groups.len()).rev() {
            let first = s.groups[..g].iter().map(|g| g.count).sum::<usize>();
            for c in (first..first + s.groups[g].count).rev() {
                push(without_client(s, Some(g), c));
            }
        }
    }
    let halve = |n: u64| n / 2;
    let fields: [(&str, TimeField); 2] = [
        ("hold_ticks", |w| &mut w.hold_ticks),
        ("think_ticks", |w| &mut w.think_ticks),
    ];
    for g in workload_owners(s) {
        push(workload_change(s, g, "rounds", |w| {
            let from = u64::from(w.rounds);
            (w.rounds > 1).then(|| {
                w.rounds -= 1;
                (from, from - 1)
            })
        }));
        for (name, field) in fields {
            push(workload_change(s, g, name, |w| {
                let value = field(w);
                let from = *value;
                (from > 0).then(|| {
                    *value = halve(from);
                    (from, *value)
                })
            }));
        }
    }
    push(shorter_session_timeout(s));
    // Groups that must shrink together: a queue's producers offer exactly
    // what its consumers take, so one group alone fewer is invalid.
    if s.groups.len() > 1 {
        // One client of each group, every combination, last ones first.
        let mut picks: Vec<Vec<usize>> = vec![Vec::new()];
        for g in 0..s.groups.len() {
            let first = s.groups[..g].iter().map(|g| g.count).sum::<usize>();
            let members: Vec<usize> = (first..first + s.groups[g].count).rev().collect();
            picks = picks
                .iter()
                .flat_map(|p| {
                    members.iter().map(move |&c| {
                        let mut p = p.clone();
                        p.push(c);
                        p
                    })
                })
                .collect();
        }
        for pick in picks {
            // Each client's index in `t`, where the later groups' removed
            // clients are already gone (their groups go first).
            push_all(every_group(s, |t, g| without_client(t, Some(g), pick[g])));
        }
        push_all(every_group(s, |t, g| {
            workload_change(t, Some(g), "rounds", |w| {
                let from = u64::from(w.rounds);
                (w.rounds > 1).then(|| {
                    w.rounds -= 1;
                    (from, from - 1)
                })
            })
        }));
    }
    out
}

/// `step` applied to every group of `s`, last group first (so that a
/// client removed from a later group leaves the earlier groups' numbers
/// as they are); `None` unless every group can take it.
fn every_group<C: RecipeSet>(
    s: &Scenario<C>,
    step: impl Fn(&Scenario<C>, usize) -> Option<(Scenario<C>, Change, Mapping)>,
) -> Option<(Scenario<C>, Vec<Change>, Vec<Mapping>)> {
    let mut t = s.clone();
    let mut changes = Vec::new();
    let mut mappings = Vec::new();
    for g in (0..s.groups.len()).rev() {
        let (next, change, mapping) = step(&t, g)?;
        t = next;
        changes.push(change);
        mappings.push(mapping);
    }
    changes.reverse();
    Some((t, changes, mappings))
}

/// A workload's time field (hold or think ticks).
type TimeField = fn(&mut Workload) -> &mut u64;

/// Whose workload the clients run: the scenario's (`None`) without
/// groups, else each group's.
fn workload_owners<C: RecipeSet>(s: &Scenario<C>) -> Vec<Option<usize>> {
    if s.groups.is_empty() {
        vec![None]
    } else {
        (0..s.groups.len()).map(Some).collect()
    }
}

fn one_server<C: RecipeSet>(s: &Scenario<C>) -> Option<(Scenario<C>, Change, Mapping)> {
    let from = s.ensemble.servers;
    if from <= 1 {
        return None;
    }
    let mut t = s.clone();
    t.ensemble.servers = 1;
    // No follower is left to cut off; a pin to a server that is gone pins
    // nothing (server 0 is the only one).
    t.faults.partitions = 0;
    t.aims.partitions = None;
    t.pins.retain(|&(_, server)| server == 0);
    let change = Change {
        field: "servers".into(),
        from: from as u64,
        to: 1,
    };
    Some((t, change, Mapping::OneServer))
}

/// Several followers, one fewer: the last server goes (3 → 2 keeps a
/// follower that can lag; 2 → 1 is [`one_server`]). A pin to it, an aim at
/// it, and partitions go too: cutting off the only follower of two would
/// leave the leader without a quorum, which the simulator does not model.
fn one_server_fewer<C: RecipeSet>(s: &Scenario<C>) -> Option<(Scenario<C>, Change, Mapping)> {
    let from = s.ensemble.servers;
    if from <= 2 {
        return None;
    }
    let gone = from - 1;
    let mut t = s.clone();
    t.ensemble.servers = from - 1;
    if t.ensemble.servers < 3 {
        t.faults.partitions = 0;
        t.aims.partitions = None;
    } else if t.aims.partitions == Some(Target::Index(gone)) {
        return None;
    }
    t.pins.retain(|&(_, server)| server != gone);
    let change = Change {
        field: "servers".into(),
        from: from as u64,
        to: t.ensemble.servers as u64,
    };
    Some((t, change, Mapping::WithoutServer(gone)))
}

/// Client `gone` removed: of the scenario (`group` `None`) or of that
/// group (which it belongs to). `None` when it is the last of its group
/// or of the scenario, or an aim names it.
fn without_client<C: RecipeSet>(
    s: &Scenario<C>,
    group: Option<usize>,
    gone: usize,
) -> Option<(Scenario<C>, Change, Mapping)> {
    let mut t = s.clone();
    match group {
        None if s.clients <= 1 => return None,
        // A queue's recipe without groups splits the roles by client (even
        // ones offer, odd ones take): one client alone would leave offers
        // nobody can take, a failure of any queue, not of the recipe.
        None if s.clients <= 2 && s.family() == Family::Queue => return None,
        None => {}
        Some(g) => {
            if s.groups[g].count <= 1 {
                return None;
            }
            t.groups[g].count -= 1;
        }
    }
    t.clients -= 1;
    let moved = |c: usize| if c > gone { c - 1 } else { c };
    t.pins = s
        .pins
        .iter()
        .filter(|&&(c, _)| c != gone)
        .map(|&(c, server)| (moved(c), server))
        .collect();
    let a = &mut t.aims;
    for aim in [
        &mut a.connection_drops,
        &mut a.expiries,
        &mut a.kills,
        &mut a.pauses,
        &mut a.crashes,
    ] {
        if let Some(Target::Index(c)) = aim {
            if *c == gone {
                return None;
            }
            *c = moved(*c);
        }
    }
    let field = match group {
        Some(g) if s.groups.len() > 1 => format!("clients of {}", s.groups[g].role),
        _ => "clients".into(),
    };
    let (from, to) = match group {
        None => (s.clients, t.clients),
        Some(g) => (s.groups[g].count, t.groups[g].count),
    };
    let change = Change {
        field,
        from: from as u64,
        to: to as u64,
    };
    Some((t, change, Mapping::WithoutClient(gone)))
}

/// `change` applied to the workload of `group` (`None`: the scenario's);
/// `change` returns the field's value before and after, or `None` when it
/// cannot go lower.
fn workload_change<C: RecipeSet>(
    s: &Scenario<C>,
    group: Option<usize>,
    name: &str,
    change: impl FnOnce(&mut Workload) -> Option<(u64, u64)>,
) -> Option<(Scenario<C>, Change, Mapping)> {
    let mut t = s.clone();
    let (workload, field) = match group {
        None => (&mut t.workload, name.to_string()),
        Some(g) if s.groups.len() > 1 => (
            &mut t.groups[g].workload,
            format!("{name} of {}", s.groups[g].role),
        ),
        Some(g) => (&mut t.groups[g].workload, name.to_string()),
    };
    let (from, to) = change(workload)?;
    let change = Change { field, from, to };
    Some((t, change, Mapping::Same))
}

/// The session timeout halved, not below the least the servers grant: an
/// expiry is waited for tick by tick.
fn shorter_session_timeout<C: RecipeSet>(
    s: &Scenario<C>,
) -> Option<(Scenario<C>, Change, Mapping)> {
    let from = s.ensemble.session_timeout;
    let to = (from / 2).max(zksim::world::MIN_SESSION_TIMEOUT);
    if to >= from {
        return None;
    }
    let mut t = s.clone();
    t.ensemble.session_timeout = to;
    let change = Change {
        field: "session_timeout".into(),
        from,
        to,
    };
    Some((t, change, Mapping::Same))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ClientGroup;
    use zkrecipes::AnyRecipe;

    fn lock(clients: usize) -> Scenario<AnyRecipe> {
        let mut s = Scenario::lock("sequential", clients);
        s.workload.rounds = 2;
        s.faults.connection_drops = 1;
        s.validate().unwrap();
        s
    }

    fn changes(s: &Scenario<AnyRecipe>) -> Vec<String> {
        smaller(s)
            .iter()
            .map(|r| {
                let changes: Vec<String> = r.changes.iter().map(|c| c.to_string()).collect();
                changes.join(", ")
            })
            .collect()
    }

    #[test]
    fn candidates_come_in_a_fixed_order_and_each_is_valid() {
        let s = lock(4);
        let timeout = s.ensemble.session_timeout;
        let hold = s.workload.hold_ticks;
        assert_eq!(
            changes(&s),
            vec![
                "servers 3 → 1".to_string(),
                "servers 3 → 2".into(),
                "clients 4 → 3".into(),
                "clients 4 → 3".into(),
                "clients 4 → 3".into(),
                "clients 4 → 3".into(),
                "rounds 2 → 1".into(),
                format!("hold_ticks {hold} → {}", hold / 2),
                "think_ticks 1 → 0".into(),
                format!("session_timeout {timeout} → {}", timeout / 2),
            ]
        );
        for r in smaller(&s) {
            assert_eq!(r.scenario.validate(), Ok(()), "{:?}", r.changes);
        }
        // Any client may go, the last first.
        let gone: Vec<Vec<Mapping>> = smaller(&s)[2..6]
            .iter()
            .map(|r| r.mappings.clone())
            .collect();
        assert_eq!(
            gone,
            (0..4)
                .rev()
                .map(|c| vec![Mapping::WithoutClient(c)])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn nothing_goes_below_what_the_checks_need() {
        // Mutual exclusion cannot fail with one client: that candidate is
        // invalid, so it is not offered.
        let mut s = lock(2);
        s.ensemble.servers = 1;
        s.workload = Workload {
            rounds: 1,
            hold_ticks: 0,
            think_ticks: 0,
        };
        s.ensemble.session_timeout = zksim::world::MIN_SESSION_TIMEOUT;
        s.validate().unwrap();
        assert!(changes(&s).is_empty(), "{:?}", changes(&s));
    }

    #[test]
    fn a_removed_client_takes_its_events_and_later_ones_move_down() {
        let mut s = lock(4);
        s.groups = vec![
            ClientGroup::new("sequential", 2).role("a"),
            ClientGroup::new("sequential", 2).role("b"),
        ];
        s.pins = vec![(1, 2), (2, 1), (3, 0)];
        s.aims.connection_drops = Some(Target::Index(3));
        s.validate().unwrap();
        let first_group = smaller(&s)
            .into_iter()
            .find(|r| r.mappings == [Mapping::WithoutClient(1)])
            .expect("group a loses its last client");
        assert_eq!(first_group.changes[0].to_string(), "clients of a 2 → 1");
        assert_eq!(first_group.scenario.pins, vec![(1, 1), (2, 0)]);
        assert_eq!(
            first_group.scenario.aims.connection_drops,
            Some(Target::Index(2))
        );
        let events = [
            Event::Request { client: 0 },
            Event::Request { client: 1 },
            Event::Receive { client: 2 },
            Event::Fault(Fault::Pause { client: 3 }),
            Event::Apply { server: 2 },
        ];
        assert_eq!(
            first_group.events(&events),
            vec![
                Event::Request { client: 0 },
                Event::Receive { client: 1 },
                Event::Fault(Fault::Pause { client: 2 }),
                Event::Apply { server: 2 },
            ]
        );
        // An aim at the client that would go refuses the candidate; the
        // other client of its group may still go.
        let without = |c: usize| {
            smaller(&s)
                .iter()
                .any(|r| r.mappings.contains(&Mapping::WithoutClient(c)))
        };
        assert!(!without(3));
        assert!(without(2));
    }

    fn connect(client: usize, server: usize) -> Event {
        Event::Connect { client, server }
    }

    /// One server keeps server 0; one fewer of three keeps a follower
    /// (connects to the gone one go to it). Both drop partitions: none is
    /// left to cut off, or cutting off the only follower would leave the
    /// leader without a quorum, which the simulator does not model.
    #[test]
    fn server_reductions_keep_what_they_can_and_move_connects() {
        let mut s = lock(3);
        s.faults.partitions = 1;
        s.pins = vec![(0, 2), (1, 1), (2, 0)];
        s.validate().unwrap();
        let events = [
            connect(0, 2),
            Event::Apply { server: 2 },
            Event::Apply { server: 1 },
            Event::Fault(Fault::Partition { server: 2 }),
            Event::Tick,
        ];
        let one = smaller(&s).remove(0);
        assert_eq!(one.changes[0].to_string(), "servers 3 → 1");
        assert_eq!(one.scenario.pins, vec![(2, 0)]);
        assert_eq!(one.events(&events), vec![connect(0, 0), Event::Tick]);
        let two = smaller(&s).remove(1);
        assert_eq!(two.changes[0].to_string(), "servers 3 → 2");
        assert_eq!(two.scenario.pins, vec![(1, 1), (2, 0)]);
        assert_eq!(
            two.events(&events),
            vec![connect(0, 1), Event::Apply { server: 1 }, Event::Tick]
        );
        for r in [&one, &two] {
            assert_eq!(r.scenario.faults.partitions, 0, "{:?}", r.changes);
        }
        // Two servers become one by `servers 2 → 1` only.
        let mut pair = lock(3);
        pair.ensemble.servers = 2;
        pair.validate().unwrap();
        let servers: Vec<String> = changes(&pair)
            .into_iter()
            .filter(|c| c.starts_with("servers"))
            .collect();
        assert_eq!(servers, ["servers 2 → 1"]);
    }

    #[test]
    fn changes_of_one_field_read_as_one() {
        let mut changes = Vec::new();
        let c = |field: &str, from, to| Change {
            field: field.into(),
            from,
            to,
        };
        record(&mut changes, c("clients", 4, 3));
        record(&mut changes, c("clients", 3, 2));
        record(&mut changes, c("rounds", 2, 1));
        record(&mut changes, c("clients", 2, 1));
        let text: Vec<String> = changes.iter().map(|c| c.to_string()).collect();
        assert_eq!(text, ["clients 4 → 1", "rounds 2 → 1"]);
    }

    /// A queue recipe that splits roles by client (even ones offer, odd
    /// ones take) keeps two clients: one alone would fail as any queue
    /// does, with nobody to take its offers.
    #[test]
    fn a_queue_without_groups_keeps_a_producer_and_a_consumer() {
        let queue = |clients: usize| {
            Scenario::<AnyRecipe>::parse(
                &format!(
                    "name = \"q\"\nrecipe = \"seed002-queue\"\nclients = {clients}\nroot = \"/q\"\n\
                     [checks]\nhard = [\"queue\"]\n"
                ),
                "test",
            )
            .unwrap()
        };
        let clients = |s: &Scenario<AnyRecipe>| -> Vec<String> {
            changes(s)
                .into_iter()
                .filter(|c| c.starts_with("clients"))
                .collect()
        };
        assert!(clients(&queue(2)).is_empty(), "{:?}", changes(&queue(2)));
        assert_eq!(clients(&queue(3)).len(), 3, "any one of three may go");
        // A lock alone may shrink to one client (liveness, leaks).
        let mut lock = lock(2);
        lock.hard = vec![crate::monitor::Property::Liveness];
        lock.report.clear();
        assert_eq!(clients(&lock).len(), 2, "{:?}", changes(&lock));
    }

    /// A queue's producers offer what its consumers take: one group alone
    /// one client or round fewer is invalid, both groups together is not.
    #[test]
    fn a_queues_groups_shrink_together() {
        let s = Scenario::parse(
            r#"
name = "q"
root = "/q"
[[clients]]
recipe = "queue-producer"
count = 2
role = "producer"
workload = { rounds = 2 }
[[clients]]
recipe = "queue-consumer"
count = 2
role = "consumer"
workload = { rounds = 2 }
[checks]
hard = ["queue", "liveness"]
"#,
            "test",
        )
        .unwrap();
        let all = changes(&s);
        for alone in ["clients of producer 2 → 1", "rounds of consumer 2 → 1"] {
            assert!(!all.contains(&alone.to_string()), "{all:?}");
        }
        for together in [
            "clients of producer 2 → 1, clients of consumer 2 → 1",
            "rounds of producer 2 → 1, rounds of consumer 2 → 1",
        ] {
            assert!(all.contains(&together.to_string()), "{all:?}");
        }
        // One client of each group, every pair: 2 × 2.
        let pairs: Vec<Reduction<AnyRecipe>> = smaller(&s)
            .into_iter()
            .filter(|r| r.changes.len() == 2 && r.changes[0].field == "clients of producer")
            .collect();
        let gone: Vec<Vec<Mapping>> = pairs.iter().map(|r| r.mappings.clone()).collect();
        let pair = |c, p| vec![Mapping::WithoutClient(c), Mapping::WithoutClient(p)];
        assert_eq!(gone, [pair(3, 1), pair(2, 1), pair(3, 0), pair(2, 0)]);
        let both = pairs.into_iter().next().unwrap();
        assert_eq!(both.scenario.clients, 2);
        // Client 1 (a producer) and client 3 (a consumer) go; client 2
        // becomes client 1.
        let events = [
            Event::Request { client: 0 },
            Event::Request { client: 1 },
            Event::Request { client: 2 },
            Event::Request { client: 3 },
        ];
        assert_eq!(
            both.events(&events),
            vec![Event::Request { client: 0 }, Event::Request { client: 1 }]
        );
    }
}
