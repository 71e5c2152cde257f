//! One copy of each distinct big part among many kept worlds.
//!
//! An explorer keeps a whole frontier of worlds at once; most of them
//! differ in one client or one step of the log, and the same client state
//! or server recurs across thousands of them. Interning those parts
//! (SPIN's "collapse" compression, done with shared pointers) makes a kept
//! world cost little more than its small scalars. A pool only ever makes
//! two *equal* parts one allocation, so no world's value changes.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use crate::client::Client;

use super::cow::Part;
use super::server::Server;
use super::slot::ClientSlot;
use super::World;

/// A pool of shared parts (see the module docs). Lookups only: nothing
/// depends on the pool's iteration order.
pub struct Sharing<C: Client> {
    slots: HashMap<u64, Arc<Part<ClientSlot<C>>>>,
    servers: HashMap<u64, Arc<Part<Server>>>,
}

impl<C: Client> Default for Sharing<C> {
    fn default() -> Self {
        Sharing {
            slots: HashMap::new(),
            servers: HashMap::new(),
        }
    }
}

impl<C: Client> Sharing<C> {
    /// Forget every pooled part (worlds keep the parts they hold).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.servers.clear();
    }
}

impl<C: Client> World<C> {
    /// Replace each client slot and server by the pool's equal copy,
    /// pooling those it has not seen. The world's value is unchanged.
    pub fn share_parts(&mut self, sharing: &mut Sharing<C>) {
        for slot in &mut self.clients.0 {
            intern(&mut sharing.slots, slot);
        }
        for server in &mut self.servers.0 {
            intern(&mut sharing.servers, server);
        }
    }
}

/// Make `part` the pool's equal copy, or pool it.
fn intern<T: Hash + Eq>(pool: &mut HashMap<u64, Arc<Part<T>>>, part: &mut Arc<Part<T>>) {
    match pool.entry(part.hash_word()) {
        Entry::Occupied(entry) => {
            let pooled = entry.get();
            if !Arc::ptr_eq(pooled, part) && **pooled == **part {
                *part = Arc::clone(pooled);
            }
        }
        Entry::Vacant(entry) => {
            entry.insert(Arc::clone(part));
        }
    }
}
