//! Aimed faults: a scenario may restrict a fault kind to one client (by
//! index) or to whichever clients play a role at that moment — the holder
//! of the lock, a waiter, the elected leader — or to the clients of a
//! `[[clients]]` group by its role name ("expire a consumer"). For
//! `partitions` the target names the follower: a server index, or the
//! server a client playing the role is connected to ("cut off the holder's
//! follower").
//!
//! The simulator offers every enabled fault with its target in the event
//! (`Fault::Silence { client }`…); the model filters that list
//! through [`Aims::allows`], so explorers, replay tokens and shrinking all
//! see the same, smaller list. Roles are read off the clients' application
//! events ([`Roles`]), which makes them part of the explored state.

use std::fmt;

use zkrecipes::AppEvent;
use zksim::{Client, ClientId, Event, Fault, Happening, World};

/// A role a client plays at some moment, judged from its own events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Believes it holds a lock (`Acquired` … `Released`/`LostLock`) or
    /// leads (`Elected` … `Abdicated`).
    Holder,
    /// Asked for the lock (`Requested`) and neither holds it nor gave up.
    Waiter,
    /// Believes it leads (`Elected` … `Abdicated`).
    Leader,
    /// Has let go of the lock (`Released`) and not asked again: its release
    /// call may still be in flight (the delete of a recipe whose program
    /// reports `Released` before sending it). Aiming a drop here strikes the
    /// release without waiting for the one step in which it is in flight to
    /// come up in a random schedule.
    Releaser,
    /// A waiter that has said where it queued (`Enqueued` since its
    /// `Requested`): its node exists, so a fault here strikes it in line —
    /// typically blocked on a watch — rather than while it creates its node.
    Queued,
}

/// Every role, in the order error messages list them.
pub const ROLES: [Role; 5] = [
    Role::Holder,
    Role::Waiter,
    Role::Leader,
    Role::Releaser,
    Role::Queued,
];

impl Role {
    /// The role's word in a scenario file (`target = "holder"`) and in
    /// messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Holder => "holder",
            Role::Waiter => "waiter",
            Role::Leader => "leader",
            Role::Releaser => "releaser",
            Role::Queued => "queued",
        }
    }
    /// The role a scenario file names, or `None` for a word that is no role
    /// (the parser then lists [`ROLES`]).
    pub fn by_name(name: &str) -> Option<Role> {
        ROLES.into_iter().find(|r| r.name() == name)
    }
}

/// What an aimed fault may strike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// This client (for `partitions`: this server).
    Index(usize),
    /// Any client playing this role now (for `partitions`: its server).
    Role(Role),
    /// Any client of the groups with this role name: an index into
    /// [`crate::scenario::Scenario::roles`] (for `partitions`: the server
    /// such a client is on).
    Group(usize),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Index(i) => write!(f, "{i}"),
            Target::Role(r) => write!(f, "\"{}\"", r.name()),
            Target::Group(g) => write!(f, "group role #{g}"),
        }
    }
}

/// The aim of each fault kind (`[faults.aim]`); `None` strikes anyone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Aims {
    /// Where `faults.connection_drops` may strike.
    pub connection_drops: Option<Target>,
    /// Where `faults.expiries` may strike (the client cut off until its session
    /// expires).
    pub expiries: Option<Target>,
    /// Where `faults.kills` (a session ended at once) may strike.
    pub kills: Option<Target>,
    /// Where `faults.pauses` (a client process frozen for a while) may strike.
    pub pauses: Option<Target>,
    /// Where `faults.crashes` (a client process dying) may strike.
    pub crashes: Option<Target>,
    /// Which follower `faults.partitions` may cut off (a server, or the server
    /// of a client in a role).
    pub partitions: Option<Target>,
}

impl Aims {
    /// No fault is aimed: every fault may strike anyone, and the model carries
    /// no aiming table (the common, cheaper case).
    pub fn is_empty(&self) -> bool {
        *self == Aims::default()
    }

    /// Whether the scenario lets `event` happen now. Non-fault events and
    /// heals are always allowed.
    pub fn allows<C: Client>(&self, event: &Event, roles: &Roles, world: &World<C>) -> bool {
        let Event::Fault(fault) = event else {
            return true;
        };
        let client_aim = |aim: Option<Target>, client: ClientId| match aim {
            None => true,
            Some(Target::Index(i)) => i == client,
            Some(Target::Role(role)) => roles.plays(client, role),
            Some(Target::Group(g)) => roles.in_group(client, g),
        };
        match *fault {
            Fault::DropConnection { client } => client_aim(self.connection_drops, client),
            Fault::Silence { client } => client_aim(self.expiries, client),
            Fault::KillSession { client } => client_aim(self.kills, client),
            Fault::Pause { client } => client_aim(self.pauses, client),
            Fault::Crash { client } => client_aim(self.crashes, client),
            Fault::Partition { server } => match self.partitions {
                None => true,
                Some(Target::Index(i)) => i == server,
                Some(Target::Role(role)) => (0..world.num_clients())
                    .any(|c| roles.plays(c, role) && world.server_of(c) == Some(server)),
                Some(Target::Group(g)) => (0..world.num_clients())
                    .any(|c| roles.in_group(c, g) && world.server_of(c) == Some(server)),
            },
            Fault::Heal { .. } => true,
        }
    }
}

/// Which roles each client plays, from its application events. Part of the
/// model's state when the scenario aims a fault at a role.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Roles {
    holding: Vec<bool>,
    waiting: Vec<bool>,
    leading: Vec<bool>,
    releasing: Vec<bool>,
    queued: Vec<bool>,
    /// Each client's group role, as an index into the scenario's role
    /// names (fixed for the run; empty when no aim names a group).
    group: Vec<usize>,
}

impl Roles {
    /// No roles tracked (no fault is aimed).
    pub const EMPTY: Roles = Roles {
        holding: Vec::new(),
        waiting: Vec::new(),
        leading: Vec::new(),
        releasing: Vec::new(),
        queued: Vec::new(),
        group: Vec::new(),
    };

    pub fn new(clients: usize) -> Self {
        Roles {
            holding: vec![false; clients],
            waiting: vec![false; clients],
            leading: vec![false; clients],
            releasing: vec![false; clients],
            queued: vec![false; clients],
            group: Vec::new(),
        }
    }

    /// With each client's group role (`group[c]` indexes the scenario's
    /// role names), for aims at a `[[clients]]` role.
    pub fn with_groups(mut self, group: Vec<usize>) -> Self {
        self.group = group;
        self
    }

    pub fn in_group(&self, client: ClientId, group: usize) -> bool {
        self.group.get(client) == Some(&group)
    }

    pub fn plays(&self, client: ClientId, role: Role) -> bool {
        let at = |v: &Vec<bool>| v.get(client).copied().unwrap_or(false);
        match role {
            Role::Holder => at(&self.holding) || at(&self.leading),
            Role::Waiter => at(&self.waiting) && !at(&self.holding),
            Role::Leader => at(&self.leading),
            Role::Releaser => at(&self.releasing),
            Role::Queued => at(&self.queued) && at(&self.waiting) && !at(&self.holding),
        }
    }

    pub fn observe(&mut self, log: &[Happening<AppEvent>]) {
        for h in log {
            let Happening::App { client, event } = h else {
                continue;
            };
            let c = *client;
            if c >= self.holding.len() {
                continue;
            }
            match event {
                AppEvent::Requested { .. } => {
                    self.waiting[c] = true;
                    self.releasing[c] = false;
                    self.queued[c] = false;
                }
                AppEvent::Enqueued { .. } => self.queued[c] = true,
                AppEvent::Acquired { .. } => {
                    self.holding[c] = true;
                    self.waiting[c] = false;
                }
                AppEvent::Released => {
                    self.holding[c] = false;
                    self.releasing[c] = true;
                }
                AppEvent::LostLock => self.holding[c] = false,
                AppEvent::GaveUp => self.waiting[c] = false,
                AppEvent::Elected => {
                    self.leading[c] = true;
                    self.waiting[c] = false;
                }
                AppEvent::Abdicated => self.leading[c] = false,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(client: usize, event: AppEvent) -> Happening<AppEvent> {
        Happening::App { client, event }
    }

    #[test]
    fn roles_follow_the_clients_own_events() {
        let mut r = Roles::new(2);
        r.observe(&[
            app(0, AppEvent::Requested { shared: false }),
            app(1, AppEvent::Requested { shared: false }),
        ]);
        assert!(r.plays(0, Role::Waiter) && r.plays(1, Role::Waiter));
        r.observe(&[app(
            0,
            AppEvent::Acquired {
                fence: 1,
                shared: false,
            },
        )]);
        assert!(r.plays(0, Role::Holder) && !r.plays(0, Role::Waiter));
        r.observe(&[app(0, AppEvent::LostLock), app(1, AppEvent::GaveUp)]);
        assert!(!r.plays(0, Role::Holder) && !r.plays(1, Role::Waiter));
        r.observe(&[app(1, AppEvent::Elected)]);
        assert!(r.plays(1, Role::Leader) && r.plays(1, Role::Holder));
        r.observe(&[app(1, AppEvent::Abdicated)]);
        assert!(!r.plays(1, Role::Leader));
    }

    #[test]
    fn a_releaser_is_one_that_let_go_and_has_not_asked_again() {
        let mut r = Roles::new(1);
        let acquired = || AppEvent::Acquired {
            fence: 1,
            shared: false,
        };
        r.observe(&[
            app(0, AppEvent::Requested { shared: false }),
            app(0, acquired()),
        ]);
        assert!(!r.plays(0, Role::Releaser), "a holder is not releasing");
        r.observe(&[app(0, AppEvent::Released)]);
        assert!(r.plays(0, Role::Releaser) && !r.plays(0, Role::Holder));
        r.observe(&[app(0, AppEvent::Requested { shared: false })]);
        assert!(!r.plays(0, Role::Releaser), "asking again ends it");
        r.observe(&[app(0, acquired()), app(0, AppEvent::LostLock)]);
        assert!(
            !r.plays(0, Role::Releaser),
            "losing the lock is not releasing it"
        );
    }
}
