//! Taking a world apart into its big shared parts, and putting it back.
//!
//! An explorer keeps a whole frontier of worlds at once; most of them
//! differ in one client or one step, and the same client slot or server
//! recurs across thousands of them (measured on the reference BFS: 87,816
//! kept worlds, 3 slots each, held 1,680 distinct slots and 696 distinct
//! servers). A frontier that keeps each world as the indices of its parts
//! in tables of distinct parts (SPIN's "collapse" compression) pays a few
//! bytes a world; [`World::take_parts`] and [`World::put_parts`] are the
//! two halves of that. Taking apart and putting back never change a
//! world's value.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::client::Client;

use super::cow::Part;
use super::server::Server;
use super::slot::ClientSlot;
use super::World;

/// One client slot or server, shared between worlds: equal by value,
/// hashed by its remembered stable hash (computed once per change).
pub struct Shared<T>(Arc<Part<T>>);

/// A client slot taken out of a world.
pub type SharedSlot<C> = Shared<ClientSlot<C>>;
/// A server taken out of a world.
pub type SharedServer = Shared<Server>;

impl<T: Hash> Shared<T> {
    /// The part's stable hash: what its world's fingerprint feeds in.
    pub fn hash_word(&self) -> u64 {
        self.0.hash_word()
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash_word());
    }
}

impl<C: Client> World<C> {
    /// Move the client slots and the servers out (in order) into `slots`
    /// and `servers`, leaving the rest of the world (clock, fault budget,
    /// log, session table) with none. The rest is only good for keeping,
    /// comparing and [`World::put_parts`]: do not step it.
    pub fn take_parts(&mut self, slots: &mut Vec<SharedSlot<C>>, servers: &mut Vec<SharedServer>) {
        slots.extend(std::mem::take(&mut self.clients.0).into_iter().map(Shared));
        servers.extend(std::mem::take(&mut self.servers.0).into_iter().map(Shared));
    }

    /// Put back parts taken by [`World::take_parts`] from an equal rest,
    /// in the order they were taken.
    pub fn put_parts(
        &mut self,
        slots: impl IntoIterator<Item = SharedSlot<C>>,
        servers: impl IntoIterator<Item = SharedServer>,
    ) {
        debug_assert!(self.clients.0.is_empty() && self.servers.0.is_empty());
        self.clients.0.extend(slots.into_iter().map(|part| part.0));
        self.servers
            .0
            .extend(servers.into_iter().map(|part| part.0));
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use crate::demo;

    /// Along random demo runs, every world taken apart and put back is
    /// equal to itself before, fingerprints the same, and steps on the same.
    #[test]
    fn a_world_taken_apart_and_put_back_is_the_same_world() {
        let mut rests_differ = false;
        for seed in 0..10 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut world = demo::world();
            let (mut enabled, mut log) = (Vec::new(), Vec::new());
            let mut previous_rest = None;
            for _ in 0..200 {
                let before = world.clone();
                let (mut slots, mut servers) = (Vec::new(), Vec::new());
                world.take_parts(&mut slots, &mut servers);
                assert_eq!(slots.len(), before.clients.len());
                assert_eq!(servers.len(), before.servers.len());
                if let Some(previous) = previous_rest.replace(world.clone()) {
                    rests_differ |= previous != world;
                }
                world.put_parts(slots, servers);
                assert_eq!(world, before);
                assert_eq!(world.fingerprint(), before.fingerprint());
                enabled.clear();
                world.enabled(&mut enabled);
                if enabled.is_empty() {
                    break;
                }
                let event = demo::pick(&mut rng, &mut enabled);
                world.step(&event, &mut log);
            }
        }
        // The rest is not trivially empty: it changes along a run.
        assert!(rests_differ);
    }
}
