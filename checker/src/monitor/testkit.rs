//! Hand-written histories for testing monitors without a running world.

pub use super::view::FakeView;
use zkrecipes::AppEvent;
use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, Reply, SessionId, WatchedEvent};

pub type H = Happening<AppEvent>;

pub fn app(client: ClientId, event: AppEvent) -> H {
    Happening::App { client, event }
}
pub fn req(client: ClientId) -> H {
    app(client, AppEvent::Requested { shared: false })
}
pub fn req_read(client: ClientId) -> H {
    app(client, AppEvent::Requested { shared: true })
}
pub fn enq(client: ClientId, seq: i64) -> H {
    app(client, AppEvent::Enqueued { seq: Some(seq) })
}
pub fn acq(client: ClientId, fence: i64) -> H {
    app(
        client,
        AppEvent::Acquired {
            fence,
            shared: false,
        },
    )
}
pub fn read(client: ClientId, fence: i64) -> H {
    app(
        client,
        AppEvent::Acquired {
            fence,
            shared: true,
        },
    )
}
pub fn write(client: ClientId, fence: i64) -> H {
    app(client, AppEvent::ResourceWrite { fence })
}
pub fn rel(client: ClientId) -> H {
    app(client, AppEvent::Released)
}
pub fn lost(client: ClientId) -> H {
    app(client, AppEvent::LostLock)
}
pub fn gave_up(client: ClientId) -> H {
    app(client, AppEvent::GaveUp)
}
pub fn offered(client: ClientId, item: u64) -> H {
    app(client, AppEvent::Offered { item })
}
pub fn taken(client: ClientId, item: u64) -> H {
    app(client, AppEvent::Taken { item })
}
pub fn elected(client: ClientId) -> H {
    app(client, AppEvent::Elected)
}
pub fn abdicated(client: ClientId) -> H {
    app(client, AppEvent::Abdicated)
}
/// A node watch delivered to `client`.
pub fn woken(client: ClientId, kind: EventType, path: &str) -> H {
    Happening::Delivered {
        client,
        delivery: Delivery::Watch(WatchedEvent {
            kind,
            path: path.into(),
        }),
    }
}
/// `NodeDeleted` on `path` delivered to `client`.
pub fn deleted(client: ClientId, path: &str) -> H {
    woken(client, EventType::NodeDeleted, path)
}
pub fn sent(client: ClientId, op: OpId, request: Op) -> H {
    Happening::Sent {
        client,
        op,
        request,
    }
}
pub fn delete_sent(client: ClientId, op: OpId, path: &str) -> H {
    sent(
        client,
        op,
        Op::Delete {
            path: path.into(),
            version: -1,
        },
    )
}
pub fn exists_watch(client: ClientId, op: OpId, path: &str) -> H {
    sent(
        client,
        op,
        Op::Exists {
            path: path.into(),
            watch: true,
        },
    )
}
pub fn reply(client: ClientId, op: OpId, reply: Reply) -> H {
    Happening::Delivered {
        client,
        delivery: Delivery::Reply { op, reply },
    }
}
pub fn ended(session: SessionId, expired: bool) -> H {
    Happening::SessionEnded { session, expired }
}
