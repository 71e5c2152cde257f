//! Which events the current state allows, listed in `Event`'s order.

use super::{Event, Fault, World};
use crate::client::Client;
use crate::ids::{ClientId, ServerId};

impl<C: Client> World<C> {
    pub(super) fn list_enabled(&self, out: &mut Vec<Event>, keep: impl Fn(&Fault) -> bool) {
        let clients = 0..self.clients.len();
        let servers = 0..self.servers.len();
        for client in clients.clone() {
            if self.can_take_request(client) {
                out.push(Event::Request { client });
            }
        }
        for server in servers.clone() {
            if self.can_apply(server) {
                out.push(Event::Apply { server });
            }
        }
        for (client, slot) in self.clients.iter().enumerate() {
            if slot.is_running() && !slot.conn.inbound.is_empty() {
                out.push(Event::Receive { client });
            }
        }
        for client in clients.clone() {
            if self.timer_due(client) {
                out.push(Event::Timer { client });
            }
        }
        for (client, slot) in self.clients.iter().enumerate() {
            // Most clients are not looking for a server: asked once per
            // client, not once per server (`can_connect` asks it too).
            if !slot.seeks_server() {
                continue;
            }
            for server in servers.clone() {
                if self.can_connect(client, server) {
                    out.push(Event::Connect { client, server });
                }
            }
        }
        if self.tick_enabled() {
            out.push(Event::Tick);
        }
        if !self.faults_possible() {
            return;
        }
        // Each kind's budget is looked at once, not once per client: most
        // steps of a run with faults have some kinds used up.
        let budget = self.budget;
        type Make = fn(ClientId) -> Fault;
        let client_faults: [(u32, Make); 5] = [
            (budget.connection_drops, |client| Fault::DropConnection {
                client,
            }),
            (budget.expiries, |client| Fault::Silence { client }),
            (budget.kills, |client| Fault::KillSession { client }),
            (budget.pauses, |client| Fault::Pause { client }),
            (budget.crashes, |client| Fault::Crash { client }),
        ];
        for (left, make) in client_faults {
            if left == 0 {
                continue;
            }
            for client in clients.clone() {
                let fault = make(client);
                if keep(&fault) && self.fault_enabled(&fault) {
                    out.push(Event::Fault(fault));
                }
            }
        }
        if budget.partitions > 0 {
            for server in servers.clone() {
                let fault = Fault::Partition { server };
                if keep(&fault) && self.fault_enabled(&fault) {
                    out.push(Event::Fault(fault));
                }
            }
        }
        for server in servers {
            let fault = Fault::Heal { server };
            if keep(&fault) && self.fault_enabled(&fault) {
                out.push(Event::Fault(fault));
            }
        }
    }
}

/// What one client allows and awaits, from its slot alone (with the state
/// of its server), for a scheduler that keeps the enabled set up to date
/// from the clients a step wrote ([`World::step_noting`]) instead of
/// listing it whole at every step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientReadiness {
    /// `Event::Request` is enabled.
    pub request: bool,
    /// `Event::Receive` is enabled.
    pub receive: bool,
    /// `Event::Timer` is enabled (it reads the clock: changes at a tick).
    pub timer: bool,
    /// The client is looking for a server; which `Event::Connect`s are
    /// enabled also depends on the servers ([`World::connect_enabled`]).
    pub connecting: bool,
    /// A `Disconnected` waits for the running client (time may not pass).
    pub disconnect_pending: bool,
    /// Done, nothing in flight on its connection, no timer (or crashed):
    /// its part of [`World::is_quiescent`].
    pub quiescent: bool,
}

impl<C: Client> World<C> {
    /// See [`ClientReadiness`].
    pub fn client_readiness(&self, client: ClientId) -> ClientReadiness {
        let slot = &self.clients[client];
        ClientReadiness {
            request: self.can_take_request(client),
            receive: slot.is_running() && !slot.conn.inbound.is_empty(),
            timer: self.timer_due(client),
            connecting: slot.seeks_server(),
            disconnect_pending: slot.disconnect_pending(),
            quiescent: slot.is_quiescent(),
        }
    }

    /// Some fault may be enabled: faults are left in the budget, or a
    /// server is partitioned (a `Heal` costs no budget). When not, the
    /// enabled list has no `Event::Fault`.
    pub fn faults_possible(&self) -> bool {
        self.budget != Default::default() || self.servers.iter().any(|s| s.is_partitioned())
    }

    /// `Event::Connect { client, server }` is enabled.
    pub fn connect_enabled(&self, client: ClientId, server: ServerId) -> bool {
        self.can_connect(client, server)
    }

    /// `Event::Apply { server }` is enabled.
    pub fn apply_enabled(&self, server: ServerId) -> bool {
        self.can_apply(server)
    }

    /// The servers are done too: each has applied the whole log or cannot
    /// (partitioned). With every client quiescent, [`World::is_quiescent`].
    pub fn servers_quiescent(&self) -> bool {
        let last = self.log.last_zxid();
        self.servers
            .iter()
            .all(|s| s.is_partitioned() || s.applied == last)
    }
}
