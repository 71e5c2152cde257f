//! Carrying out the fault plan ([`super::faults`]) on the engine: drops
//! close a connection at a reply, an expiry silences a session until the
//! leader expires it (the world's `Silence` cut: S21, S22, S23), a
//! lag stops a follower's applies, a partition cuts a follower from the
//! leader (the world's `Partition`, S22a), each ended after its ticks.

use zkjudge::history::{FaultRecord, Record};
use zksim::{ClientId, Event, Fault, Op};

use super::faults::{Action, Aim, Faults};
use super::{CloseReason, ConnId, Engine, Output};

impl Engine {
    /// Count a data request against the plan and carry out the faults due
    /// at it. `false`: the request is lost (its session was silenced).
    pub(super) fn planned_faults(
        &mut self,
        conn: ConnId,
        client: ClientId,
        xid: i32,
        op: &Op,
    ) -> bool {
        let session = self.world.session_of(client);
        let paths = op_paths(op);
        let Some((n, due)) = self.faults.count(session, &paths) else {
            return true;
        };
        let server = self.conns[&conn].server;
        let aim = match &self.limits.aim {
            Aim::All => String::new(),
            Aim::Prefix(p) => format!(" under {p}"),
            Aim::Session(_) => " of the aimed session".to_string(),
        };
        let first_path = paths.first().copied().unwrap_or("").to_string();
        let why = |what: &str| {
            format!(
                "{what} at request {n}{aim} ({} {} of session {session:#x}, xid {xid}, server {server})",
                op_name(op),
                first_path
            )
        };
        let mut keep = true;
        for action in due {
            match action {
                Action::Drop { before_reply } => {
                    let when = if before_reply { "before" } else { "after" };
                    let reason = why(&format!("drop {when} the reply"));
                    match self.conns.get_mut(&conn) {
                        Some(c) if c.drop_at.is_none() => {
                            c.drop_at = Some((xid, before_reply, reason))
                        }
                        // Two drops at one request are one drop.
                        _ => self.stats.faults_skipped += 1,
                    }
                }
                Action::Expiry => {
                    let enabled = self.world.budget().expiries > 0
                        && !self.world.is_cut_off(client)
                        && self.world.is_session_live(session);
                    if enabled {
                        let fault = Event::Fault(Fault::Silence { client });
                        self.world.step(&fault, &mut self.log);
                        self.stats.faults += 1;
                        let t = self.world.now();
                        let reason = why("silence until the leader expires it");
                        self.note(|_| Record::Fault {
                            t,
                            fault: FaultRecord::Silence { session, reason },
                        });
                        keep = false;
                    } else {
                        self.stats.faults_skipped += 1;
                    }
                }
                Action::Lag { ticks, pick } | Action::Partition { ticks, pick } => {
                    let partition = matches!(action, Action::Partition { .. });
                    let servers = self.world.num_servers();
                    let follower = Faults::follower(server, servers, pick).filter(|&f| {
                        !self.faults.is_cut(f)
                            && !self.world.is_partitioned(f)
                            && (!partition || self.world.budget().partitions > 0)
                    });
                    let Some(follower) = follower else {
                        // The follower is lagging or cut already.
                        self.stats.faults_skipped += 1;
                        continue;
                    };
                    if partition {
                        let fault = Event::Fault(Fault::Partition { server: follower });
                        self.world.step(&fault, &mut self.log);
                    }
                    self.faults.start(follower, partition, ticks);
                    self.stats.faults += 1;
                    let t = self.world.now();
                    let fault = if partition {
                        FaultRecord::Partition {
                            server: follower,
                            ticks,
                            reason: why("cut the follower from the leader"),
                        }
                    } else {
                        FaultRecord::Lag {
                            server: follower,
                            ticks,
                            reason: why("stop the follower applying"),
                        }
                    };
                    self.note(|_| Record::Fault { t, fault });
                }
            }
        }
        keep
    }

    /// A planned drop, at the reply it waited for.
    pub(super) fn drop_connection(
        &mut self,
        conn: ConnId,
        before_reply: bool,
        out: &mut Vec<Output>,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let (_, _, reason) = c.drop_at.take().unwrap_or_default();
        let session = c.session;
        self.stats.faults += 1;
        let t = self.world.now();
        self.note(|_| Record::Fault {
            t,
            fault: FaultRecord::Drop {
                conn,
                session,
                reason,
            },
        });
        self.close(conn, CloseReason::FaultDrop { before_reply }, out);
    }

    /// After a tick: lags and partitions whose time is up end (a
    /// partitioned follower heals: it reaches the leader and catches up).
    pub(super) fn end_cuts(&mut self) {
        for (server, partition) in self.faults.tick() {
            if partition && self.world.is_partitioned(server) {
                self.world
                    .step(&Event::Fault(Fault::Heal { server }), &mut self.log);
            }
            let t = self.world.now();
            self.note(|_| Record::Fault {
                t,
                fault: FaultRecord::Heal { server },
            });
        }
    }

    /// Answer the held handshakes of sessions no longer silenced (the
    /// leader expired them): as any re-attach, here with timeOut 0.
    pub(super) fn release_held(&mut self, out: &mut Vec<Output>) {
        if self.held.is_empty() {
            return;
        }
        for conn in self.held.clone() {
            let Some(c) = self.conns.get_mut(&conn) else {
                self.held.remove(&conn);
                continue;
            };
            let still_cut = c
                .held
                .as_ref()
                .is_some_and(|(client, _)| self.world.is_cut_off(*client));
            if still_cut {
                continue;
            }
            self.held.remove(&conn);
            let server = c.server;
            if let Some((_, frame)) = c.held.take() {
                self.handshake(conn, server, &frame, out);
            }
        }
    }
}

/// The paths a request touches (a multi's, each op's).
fn op_paths(op: &Op) -> Vec<&str> {
    match op {
        Op::Multi(ops) | Op::MultiRead(ops) => ops.iter().map(|o| o.path()).collect(),
        other => vec![other.path()],
    }
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Create { .. } => "create",
        Op::Delete { .. } => "delete",
        Op::Exists { .. } => "exists",
        Op::GetData { .. } => "getData",
        Op::SetData { .. } => "setData",
        Op::GetChildren { .. } => "getChildren",
        Op::Sync { .. } => "sync",
        Op::Check { .. } => "check",
        Op::Multi(_) => "multi",
        Op::MultiRead(_) => "multiRead",
        _ => "request",
    }
}
