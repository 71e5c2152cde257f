//! The conductor's ops that are not answered at once: `Send` on a held
//! connection or while disconnected, the holds themselves, waiting for
//! what is in flight to settle, and reading a multi's per-op results off
//! the wire (see `Action::Send` and docs/CONFORMANCE.md).

use std::time::Duration;

use zksim::{Op, Response, ZkError};

use super::{Conductor, ConductorError, Done, Hold, Link, STEP_LIMIT};
use crate::wire::OP_ERROR;
use crate::FaultProxy;

impl Conductor {
    /// A multi's reply as the server sent it: the library keeps only a
    /// failed multi's failing op, so its per-op codes come from the proxy.
    /// A successful multi's reply is checked against the wire too (same
    /// length, no error entry), so that the decoding is tested on every one.
    pub(super) fn read_multi_from_wire(
        &mut self,
        session: usize,
        step: usize,
        reply: &mut zksim::Reply,
    ) {
        let proxy = &self.slots[session].proxy;
        let results = match reply {
            Ok(Response::Multi(results)) if !results.is_empty() => results,
            // Not sent (the library answers an empty multi itself).
            Ok(_) => return,
            // An error in the reply header, or none reached the client
            // (`ConnectionLoss`): take the former only.
            Err(_) => {
                proxy.next_multi_reply_if(|w| w.header_err != 0);
                return;
            }
        };
        let wire = proxy.next_multi_reply_if(|_| true);
        let failed = results.iter().all(Result::is_err);
        let codes: Option<Vec<ZkError>> = wire.as_ref().and_then(|w| {
            if w.header_err != 0 || w.entries.len() != results.len() {
                return None;
            }
            w.entries
                .iter()
                .map(|e| {
                    (e.op_type == OP_ERROR)
                        .then_some(e.err)
                        .and_then(ZkError::from_code)
                })
                .collect()
        });
        let agrees = match (&codes, &wire) {
            (Some(codes), _) if failed => {
                *results = codes.iter().copied().map(Err).collect();
                true
            }
            (None, Some(w)) if !failed => {
                w.header_err == 0
                    && w.entries.len() == results.len()
                    && w.entries.iter().all(|e| e.op_type != OP_ERROR)
            }
            _ => false,
        };
        if !agrees {
            self.broken = Some(ConductorError::MultiWire {
                step,
                session,
                wire,
            });
        }
    }

    /// `Action::Send`: issue the op; wait only for what the session's
    /// state lets happen (see [`Action::Send`]).
    pub(super) async fn send(
        &mut self,
        k: usize,
        step: usize,
        op: Op,
    ) -> Result<(), ConductorError> {
        let slot = &self.slots[k];
        match (slot.link, slot.held) {
            // Refused before sending: nothing goes on the wire to hold.
            (Link::Connected, Some(_)) if zksim::path::validate_request(&op).is_err() => {
                self.op(k, step, op).await
            }
            (Link::Connected, Some(hold)) => {
                let seen = |p: &FaultProxy| match hold {
                    Hold::Requests => p.requests_seen(),
                    Hold::Replies => p.replies_seen(),
                };
                let before = seen(&slot.proxy);
                self.issue(k, step, op)?;
                let deadline = tokio::time::Instant::now() + STEP_LIMIT;
                while seen(self.proxy(k)) == before {
                    if tokio::time::Instant::now() > deadline {
                        return Err(ConductorError::NeverOnWire { step, session: k });
                    }
                    tokio::select! {
                        outcome = self.set.next() => self.handle(outcome),
                        () = tokio::time::sleep(Duration::from_millis(2)) => {}
                    }
                    if let Some(broken) = self.broken.take() {
                        return Err(broken);
                    }
                }
                Ok(())
            }
            // The library queues it until the connection is back.
            (Link::Disconnected, _) => self.issue(k, step, op),
            _ => self.op(k, step, op).await,
        }
    }

    pub(super) fn hold(&mut self, k: usize, hold: Hold) {
        match hold {
            Hold::Requests => self.proxy(k).pause_requests(),
            Hold::Replies => self.proxy(k).pause_replies(),
        }
        self.slots[k].held = Some(hold);
    }

    /// Handle outcomes until session `k` has no op in flight.
    pub(super) async fn settle(&mut self, k: usize) -> Result<(), ConductorError> {
        while let Some(&step) = self.slots[k].in_flight.first() {
            self.until(Done::Answer(k, step)).await?;
        }
        Ok(())
    }
}
