//! `rwlock`: ZooKeeper's shared-lock recipe
//! (<https://zookeeper.apache.org/doc/current/recipes.html#Shared+Locks>):
//! `<root>/read-…` and `<root>/write-…` ephemeral-sequential children; a
//! reader waits only for the next lower *writer*, a writer for the next
//! lower node of any kind. Readers report `Acquired { shared: true }`.
//!
//! It is the sequential lock's protocol with a [`Role`]; see
//! [`super::sequential`] for the steps and the failure handling.
//!
//! Roles are fixed by the client index, so a run is deterministic and every
//! run with three or more clients mixes both sides: client `i` is a
//! **writer when `i % 3 == 0`** (clients 0, 3, 6, …) and a reader otherwise.

use super::sequential::{sequential_with, Flaws, Role, SequentialProtocol};

/// The role client `client` takes in a read/write lock run.
pub fn role_of(client: usize) -> Role {
    if client % 3 == 0 {
        Role::Writer
    } else {
        Role::Reader
    }
}

super::lock_recipe! {
    /// `rwlock`: see the module docs.
    RwLock(SequentialProtocol) as RwLock =
        |params| sequential_with(params, role_of(params.client), Flaws::default())
}
