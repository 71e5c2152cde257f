//! A vector whose elements are shared copy-on-write, each with its hash
//! remembered.
//!
//! The world keeps its client slots and servers this way. Most steps
//! change one client and at most one server, so a copied world (an
//! explorer's child state) shares every other element with the world it
//! was copied from, and a frontier kept as tables of distinct parts
//! ([`super::parts`]) holds one allocation for equal elements of many
//! kept worlds. Indexing for reading is free; indexing for writing copies
//! the element first if another world still shares it, and forgets its
//! hash. Fingerprinting a world then rehashes only the elements changed
//! since it was copied.
//!
//! Equality sees the elements, not the sharing; hashing feeds each
//! element's remembered stable hash (a function of its value alone).

use std::hash::{Hash, Hasher};
use std::ops::{Index, IndexMut};
use std::sync::Arc;

use crate::cow_mut::cow_mut;
use crate::fingerprint::{stable_hash, HashMemo};

/// One element and its remembered hash (invisible to equality).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Part<T> {
    value: T,
    hash: HashMemo,
}

impl<T: Hash> Part<T> {
    /// The element's stable hash, computed once per change.
    pub(super) fn hash_word(&self) -> u64 {
        self.hash.get_or(|| stable_hash(&self.value))
    }
}

/// `NOTED`: writes are noted in the [`journal`](super::journal) while one
/// is open (the client slots are: a timed run learns from it which clients
/// a step changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CowVec<T, const NOTED: bool = false>(pub(super) Vec<Arc<Part<T>>>);

impl<T: Clone, const NOTED: bool> CowVec<T, NOTED> {
    pub fn with_capacity(n: usize) -> Self {
        CowVec(Vec::with_capacity(n))
    }
    pub fn push(&mut self, element: T) {
        self.0.push(Arc::new(Part {
            value: element,
            hash: HashMemo::default(),
        }));
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i).map(|part| &part.value)
    }
    /// Element `i`'s stable hash, remembered (computed once per change).
    pub fn hash_word_of(&self, i: usize) -> u64
    where
        T: Hash,
    {
        self.0[i].hash_word()
    }
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.0.iter().map(|part| &part.value)
    }
}

impl<T, const NOTED: bool> FromIterator<T> for CowVec<T, NOTED> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let part = |value| {
            Arc::new(Part {
                value,
                hash: HashMemo::default(),
            })
        };
        CowVec(iter.into_iter().map(part).collect())
    }
}

impl<T, const NOTED: bool> Index<usize> for CowVec<T, NOTED> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.0[i].value
    }
}

impl<T: Clone, const NOTED: bool> IndexMut<usize> for CowVec<T, NOTED> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        if NOTED {
            super::journal::note(i);
        }
        // SAFETY: a part's `Arc` never has a `Weak`: it leaves the vector
        // only inside `parts::Shared`, whose `Arc` is private, and nothing
        // in this crate downgrades one.
        let part = unsafe { cow_mut(&mut self.0[i]) };
        part.hash.clear();
        &mut part.value
    }
}

impl<T: Hash, const NOTED: bool> Hash for CowVec<T, NOTED> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for part in &self.0 {
            state.write_u64(part.hash_word());
        }
    }
}
