//! Faults from the budget: when each is possible and what it does.
//!
//! Faults that only make sense against a client still at work (dropping
//! its connection, pausing or crashing it) are not offered for an idle
//! client — its logic done and nothing on its connection: they could change
//! nothing it does, and leaving them out keeps the state space smaller.

use crate::client::Client;

use super::connection::Connection;
use super::slot::{Cut, Life, Link};
use super::{Event, Fault, Happening, World};

impl<C: Client> World<C> {
    pub(super) fn fault_enabled(&self, fault: &Fault) -> bool {
        let budget = &self.budget;
        match *fault {
            Fault::DropConnection { client } => {
                budget.connection_drops > 0
                    && self.clients.get(client).is_some_and(|slot| {
                        !slot.is_crashed()
                            && matches!(slot.link, Link::Connected(_))
                            && !slot.is_idle()
                    })
            }
            Fault::Silence { client } => {
                budget.expiries > 0
                    && self.clients.get(client).is_some_and(|slot| {
                        !slot.is_crashed()
                            && slot.cut.is_none()
                            && self.sessions.is_live(slot.session)
                    })
            }
            Fault::KillSession { client } => {
                budget.kills > 0
                    && self
                        .clients
                        .get(client)
                        .is_some_and(|slot| self.sessions.is_live(slot.session))
            }
            Fault::Pause { client } => {
                budget.pauses > 0
                    && self
                        .clients
                        .get(client)
                        .is_some_and(|slot| slot.is_running() && !slot.is_idle())
            }
            Fault::Crash { client } => {
                budget.crashes > 0
                    && self
                        .clients
                        .get(client)
                        .is_some_and(|slot| !slot.is_crashed() && !slot.is_idle())
            }
            Fault::Partition { server } => {
                budget.partitions > 0
                    && server != 0
                    && self
                        .servers
                        .get(server)
                        .is_some_and(|s| !s.is_partitioned())
            }
            Fault::Heal { server } => self.servers.get(server).is_some_and(|s| s.is_partitioned()),
        }
    }

    pub(super) fn inject(&mut self, fault: &Fault, log: &mut Vec<Happening<C::Event>>) {
        assert!(
            self.fault_enabled(fault),
            "step: {:?} is not enabled",
            Event::Fault(fault.clone())
        );
        match *fault {
            Fault::DropConnection { client } => {
                self.budget.connection_drops -= 1;
                self.lose_connection(client);
            }
            Fault::Silence { client } => {
                self.budget.expiries -= 1;
                // Nothing more crosses the network either way; the read
                // timeout and the leader's expiry take it from here (`tick`).
                let slot = &mut self.clients[client];
                // The read timeout counts from the last packet the client
                // heard: now, or when it froze if it is paused.
                let since = match slot.life {
                    Life::Paused { since, .. } => since,
                    _ => self.now,
                };
                slot.cut = Some(Cut {
                    since,
                    session: slot.session,
                });
            }
            Fault::KillSession { client } => {
                self.budget.kills -= 1;
                let session = self.clients[client].session;
                self.end_session(session, true, None, log);
            }
            Fault::Pause { client } => {
                self.budget.pauses -= 1;
                let since = self.now;
                self.clients[client].life = Life::Paused {
                    since,
                    until: since.saturating_add(self.config.pause_ticks),
                };
            }
            Fault::Crash { client } => {
                self.budget.crashes -= 1;
                let slot = &mut self.clients[client];
                if let Link::Connected(server) = slot.link {
                    self.servers[server].watches.remove_session(slot.session);
                }
                // The process is gone with everything it had; the session
                // lives on at the leader until it expires.
                slot.life = Life::Crashed;
                slot.link = Link::Connecting { fresh: false };
                slot.closing = false;
                slot.timer = None;
                slot.cut = None;
                slot.conn = Connection::default();
            }
            Fault::Partition { server } => {
                self.budget.partitions -= 1;
                self.servers[server].partitioned_since = Some(self.now);
            }
            Fault::Heal { server } => {
                // Healed within sync_limit, the follower answers the
                // leader's next ping with every session it heard from
                // meanwhile; past it, it had shut down and they are gone.
                let forwarded = !self.server_down(server);
                let held = std::mem::take(&mut self.servers[server].held_touches);
                if forwarded {
                    for session in held {
                        self.sessions.touch(session, self.now);
                    }
                }
                self.servers[server].partitioned_since = None;
            }
        }
    }
}
