//! Lock recipes: the naive herd lock, ZooKeeper's predecessor-watch lock,
//! the read/write lock, and deliberately broken variants for the checker.
//!
//! Every lock recipe is a [`protocol::LockClient`] around a
//! [`protocol::Protocol`]; the round loop ([`rounds::Rounds`]) emits the
//! history the checker's monitors read, the same way for every lock:
//!
//! | when | events |
//! |---|---|
//! | a round (or a retry of it) starts asking | `Requested { shared }` |
//! | its node is known to exist on the server | `Enqueued { seq }` |
//! | it believes it holds the lock | `Acquired { fence, shared }`, `ResourceWrite { fence }` |
//! | `hold_ticks` later | `ResourceWrite { fence }`, delete sent, `Released` |
//! | `Disconnected` / `Expired` while holding | `LostLock` |
//! | `Disconnected` / `Expired` while waiting | `GaveUp` |
//!
//! `fence` is the czxid of the node that grants the lock. After `LostLock`
//! or `GaveUp` the round is retried when the session is usable again (after
//! `Expired`, in a new session). After the last round the session is closed.
//! The lock root (`RecipeParams::root`) is created, persistent, if missing.
//!
//! Helpers meant for other lock ports: [`names`] (sequence suffixes and
//! ordering), [`rounds::Rounds`] (the round loop on its own) and
//! [`protocol`] (the whole client, given a protocol).

pub mod flaws;
pub mod line;
pub mod naive;
pub mod names;
pub mod protocol;
pub mod rounds;
pub mod rwlock;
pub mod sequential;
pub mod switches;

pub use naive::NaiveLock;
pub use protocol::{Attempt, LockClient, Protocol};
pub use rwlock::RwLock;
pub use sequential::SequentialLock;

/// Declares a registered lock recipe: a newtype around
/// `LockClient<$proto>` built by `$build` from `&RecipeParams`, implementing
/// [`Recipe`](crate::Recipe) and delegating [`zksim::Client`].
macro_rules! lock_recipe {
    ($(#[$doc:meta])* $name:ident($proto:ty) = |$params:ident| $build:expr) => {
        $crate::lock::lock_recipe! { $(#[$doc])* $name($proto) as Lock = |$params| $build }
    };
    ($(#[$doc:meta])* $name:ident($proto:ty) as $family:ident = |$params:ident| $build:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name(pub $crate::lock::protocol::LockClient<$proto>);

        impl $crate::Recipe for $name {
            const FAMILY: $crate::Family = $crate::Family::$family;
            const WAITS_IN_LINE: bool =
                <$proto as $crate::lock::protocol::Protocol>::WAITS_IN_LINE;
            fn new($params: &$crate::RecipeParams) -> Self {
                $name($build)
            }
        }

        impl zksim::Client for $name {
            type Event = $crate::AppEvent;
            fn start(&mut self, cx: &mut zksim::Cx<$crate::AppEvent>) {
                self.0.start(cx)
            }
            fn on_reply(
                &mut self,
                op: zksim::OpId,
                reply: zksim::Reply,
                cx: &mut zksim::Cx<$crate::AppEvent>,
            ) {
                self.0.on_reply(op, reply, cx)
            }
            fn on_watch(&mut self, event: zksim::WatchedEvent, cx: &mut zksim::Cx<$crate::AppEvent>) {
                self.0.on_watch(event, cx)
            }
            fn on_session(&mut self, event: zksim::SessionEvent, cx: &mut zksim::Cx<$crate::AppEvent>) {
                self.0.on_session(event, cx)
            }
            fn on_timer(&mut self, cx: &mut zksim::Cx<$crate::AppEvent>) {
                self.0.on_timer(cx)
            }
            fn is_done(&self) -> bool {
                zksim::Client::is_done(&self.0)
            }
            fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
                zksim::Client::renamed(&self.0, r).map($name)
            }
            fn ops_shifted(&self, base: zksim::OpId) -> Option<Self> {
                zksim::Client::ops_shifted(&self.0, base).map($name)
            }
        }
    };
}
pub(crate) use lock_recipe;
