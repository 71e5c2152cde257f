//! Hand-written histories for tests of the wakeup rules (the ledger's, the
//! monitor's and the figures' tests, and the CLI's herd tests).

use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, Response, Stat, WatchedEvent};
use zksim::{CreateMode, Zxid};

use zkrecipes::AppEvent;

pub type H = Happening<AppEvent>;

pub fn app(client: ClientId, event: AppEvent) -> H {
    Happening::App { client, event }
}
pub fn req(client: ClientId) -> H {
    app(client, AppEvent::Requested { shared: false })
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
pub fn rel(client: ClientId) -> H {
    app(client, AppEvent::Released)
}
pub fn sent(client: ClientId, op: OpId, request: Op) -> H {
    Happening::Sent {
        client,
        op,
        request,
    }
}
pub fn replied(client: ClientId, op: OpId, reply: zksim::Reply) -> H {
    Happening::Delivered {
        client,
        delivery: Delivery::Reply { op, reply },
    }
}
fn stat(czxid: Zxid) -> Stat {
    Stat {
        czxid,
        mzxid: czxid,
        ..Stat::default()
    }
}
/// `client` creates `path` (op `op`) and learns it got czxid `czxid`.
pub fn creates(client: ClientId, op: OpId, path: &str, czxid: Zxid) -> [H; 2] {
    [
        create_sent(client, op, path),
        create_replied(client, op, path, czxid),
    ]
}
pub fn create_sent(client: ClientId, op: OpId, path: &str) -> H {
    sent(
        client,
        op,
        Op::Create {
            path: path.into(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        },
    )
}
/// The reply to [`create_sent`]: the node `path` got czxid `czxid`.
pub fn create_replied(client: ClientId, op: OpId, path: &str, czxid: Zxid) -> H {
    replied(
        client,
        op,
        Ok(Response::Created {
            path: path.into(),
            stat: stat(czxid),
        }),
    )
}
/// `client` watches `path` with `exists` and sees the node `czxid`.
pub fn sees(client: ClientId, op: OpId, path: &str, czxid: Zxid) -> [H; 2] {
    [
        sent(
            client,
            op,
            Op::Exists {
                path: path.into(),
                watch: true,
            },
        ),
        replied(client, op, Ok(Response::Exists(Some(stat(czxid))))),
    ]
}
/// `client` lists `parent`'s children (with a watch) and sees `names`.
pub fn lists(client: ClientId, op: OpId, parent: &str, names: &[&str]) -> [H; 2] {
    [
        sent(
            client,
            op,
            Op::GetChildren {
                path: parent.into(),
                watch: true,
            },
        ),
        replied(
            client,
            op,
            Ok(Response::Children {
                names: names.iter().map(|n| n.to_string()).collect(),
                stat: Stat::default(),
            }),
        ),
    ]
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
pub fn woken(client: ClientId, kind: EventType, path: &str) -> H {
    Happening::Delivered {
        client,
        delivery: Delivery::Watch(WatchedEvent {
            kind,
            path: path.into(),
        }),
    }
}
pub fn deleted(client: ClientId, path: &str) -> H {
    woken(client, EventType::NodeDeleted, path)
}
/// `client` watches `path` with `exists` and finds no node there: the watch
/// fires at the path's next create.
pub fn finds_none(client: ClientId, op: OpId, path: &str) -> [H; 2] {
    [
        sent(
            client,
            op,
            Op::Exists {
                path: path.into(),
                watch: true,
            },
        ),
        replied(client, op, Ok(Response::Exists(None))),
    ]
}
pub fn created(client: ClientId, path: &str) -> H {
    woken(client, EventType::NodeCreated, path)
}
