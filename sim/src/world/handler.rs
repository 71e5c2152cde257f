//! Calling a client's logic and routing what it asked for: ops onto its
//! connection (or straight back as an error when the handle cannot send),
//! application events into the history, its timer, session requests.

use std::cell::Cell;

use crate::client::{Client, Cx, OpId, SessionRequest, TimerRequest};
use crate::path::validate_request;
use crate::proto::{Op, ZkError};

use super::connection::{Inbound, Outgoing};
use super::slot::Link;
use super::{ClientId, ClockRead, Happening, World};

thread_local! {
    /// The vector the last handler's sent ops went through, emptied, kept
    /// for the next call on this thread: most handler calls send an op or
    /// two, and a fresh vector each time was an allocation and a free per
    /// call. Not part of any world (a buffer's capacity decides nothing).
    static SPARE_SENT: Cell<Vec<(OpId, Op)>> = const { Cell::new(Vec::new()) };
}

impl<C: Client> World<C> {
    /// Run one handler of `client` and absorb its output.
    ///
    /// A `reopen_session` takes effect before the ops sent in the same call
    /// (they belong to the new session); a `close_session` after them (they
    /// were sent before the close, as in program order for `close()` last).
    pub(super) fn call(
        &mut self,
        client: ClientId,
        log: &mut Vec<Happening<C::Event>>,
        handler: impl FnOnce(&mut C, &mut Cx<C::Event>),
    ) {
        // A write access to a slot costs atomic reference-count operations
        // (slots are shared copy-on-write): one for the handler, one more
        // only if it sent something or asked to close.
        let slot = &mut self.clients[client];
        let mut cx = Cx::with_sent_buffer(self.now, slot.session, slot.next_op, SPARE_SENT.take());
        handler(&mut slot.logic, &mut cx);
        let out = cx.into_parts();
        slot.next_op = out.next_op;
        match out.timer {
            TimerRequest::Keep => {}
            TimerRequest::Cancel => slot.timer = None,
            TimerRequest::At(at) => slot.timer = Some(at),
        }
        if out.read_clock {
            self.clock_read = ClockRead(true);
        }
        if out.session_request == Some(SessionRequest::Reopen) {
            self.reopen(client);
        }
        let close = out.session_request == Some(SessionRequest::Close);
        let mut sent = out.sent;
        if !sent.is_empty() || close {
            self.send(client, &mut sent, close, log);
        }
        SPARE_SENT.set(sent);
        for event in out.events {
            log.push(Happening::App { client, event });
        }
    }

    /// The handler's requests go out (or fail at once) in the order it
    /// made them, then its `close`, if it asked for one. Leaves `sent`
    /// empty.
    fn send(
        &mut self,
        client: ClientId,
        sent: &mut Vec<(OpId, Op)>,
        close: bool,
        log: &mut Vec<Happening<C::Event>>,
    ) {
        let slot = &mut self.clients[client];
        for (op, request) in sent.drain(..) {
            log.push(Happening::Sent {
                client,
                op,
                request: request.clone(),
            });
            if slot.link == Link::Dead {
                // A dead handle answers every call with SessionExpired (S23).
                slot.conn
                    .inbound
                    .push_back(Inbound::local_error(op, ZkError::SessionExpired));
            } else if let Err(err) = validate_request(&request) {
                // The client library refuses a bad path before sending (S1).
                slot.conn.inbound.push_back(Inbound::local_error(op, err));
            } else if slot.closing {
                // `ClientCnxn.queuePacket` while closing: ConnectionLoss.
                slot.conn
                    .inbound
                    .push_back(Inbound::local_error(op, ZkError::ConnectionLoss));
            } else {
                slot.conn.outbound.push_back(Outgoing::Op { op, request });
            }
        }
        if close && slot.link != Link::Dead && !slot.closing {
            slot.closing = true;
            slot.conn.outbound.push_back(Outgoing::Close);
        }
    }

    /// `reopen_session`: the old handle is given up (if it was still alive,
    /// its connection closes and its outstanding ops fail with
    /// `ConnectionLoss`; its session lives until it expires) and a new
    /// handle starts connecting with a fresh session id and no history.
    fn reopen(&mut self, client: ClientId) {
        let slot = &mut self.clients[client];
        if let Link::Connected(server) = slot.link {
            self.servers[server].watches.remove_session(slot.session);
        }
        slot.conn.fail_all();
        slot.session = self.sessions.allocate();
        slot.link = Link::Connecting { fresh: true };
        slot.closing = false;
        slot.last_zxid = 0;
        slot.watches.clear();
    }
}
