//! Which events the current state allows, listed in `Event`'s order.

use crate::client::Client;

use super::{Event, Fault, World};

impl<C: Client> World<C> {
    pub(super) fn list_enabled(&self, out: &mut Vec<Event>) {
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
        for client in clients.clone() {
            for server in servers.clone() {
                if self.can_connect(client, server) {
                    out.push(Event::Connect { client, server });
                }
            }
        }
        if self.tick_enabled() {
            out.push(Event::Tick);
        }
        if self.budget == Default::default() && !self.servers.iter().any(|s| s.is_partitioned()) {
            return;
        }
        let client_faults: [fn(usize) -> Fault; 5] = [
            |client| Fault::DropConnection { client },
            |client| Fault::ExpireSession { client },
            |client| Fault::KillSession { client },
            |client| Fault::Pause { client },
            |client| Fault::Crash { client },
        ];
        for make in client_faults {
            for client in clients.clone() {
                let fault = make(client);
                if self.fault_enabled(&fault) {
                    out.push(Event::Fault(fault));
                }
            }
        }
        let server_faults: [fn(usize) -> Fault; 2] = [
            |server| Fault::Partition { server },
            |server| Fault::Heal { server },
        ];
        for make in server_faults {
            for server in servers.clone() {
                let fault = make(server);
                if self.fault_enabled(&fault) {
                    out.push(Event::Fault(fault));
                }
            }
        }
    }
}
