//! The process allocator: mimalloc, asked through its plain `malloc`
//! entry points whenever the alignment asked for is one every block has.
//!
//! The `mimalloc` crate's allocator calls `mi_malloc_aligned` for every
//! allocation, whatever its alignment; that path checks the alignment and
//! the block it found before it returns. Nearly every allocation of a run
//! (strings, vectors, tree and map nodes, `Arc`s) asks for at most a
//! machine word, which every mimalloc block already has, so this allocator
//! takes `mi_malloc` for those — the path a C program's `malloc` takes —
//! and the aligned entry points only for the rare larger alignment. Random
//! search allocates a few times per step: 3% of its instructions
//! (docs/PERFORMANCE.md).
//!
//! Why mimalloc at all: exhaustive search copies and drops millions of
//! small states, a pattern on which glibc's malloc spends more time
//! consolidating free chunks than the search spends stepping.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Every mimalloc block is aligned to at least a machine word (its size
/// classes are whole words, carved from word-aligned pages).
const WORD_ALIGN: usize = std::mem::size_of::<usize>();

/// mimalloc as the global allocator (`#[global_allocator]` in the binary
/// and the benchmarks).
pub struct Mimalloc;

// SAFETY: blocks come from mimalloc and go back to it. A layout whose
// alignment is at most a word is served by `mi_malloc`/`mi_zalloc`/
// `mi_realloc`, whose blocks are word-aligned; any other by the aligned
// entry points. `mi_free` takes a block from either.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = if layout.align() <= WORD_ALIGN {
            unsafe { mi::mi_malloc(layout.size()) }
        } else {
            unsafe { mi::mi_malloc_aligned(layout.size(), layout.align()) }
        };
        block.cast()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = if layout.align() <= WORD_ALIGN {
            unsafe { mi::mi_zalloc(layout.size()) }
        } else {
            unsafe { mi::mi_zalloc_aligned(layout.size(), layout.align()) }
        };
        block.cast()
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let block = if layout.align() <= WORD_ALIGN {
            unsafe { mi::mi_realloc(ptr.cast::<c_void>(), new_size) }
        } else {
            unsafe { mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()) }
        };
        block.cast()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks have the alignment asked for, small and large, plain and
    /// over-aligned, through allocation, zeroing and growth.
    #[test]
    fn blocks_are_aligned_as_asked() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 9, 16, 24, 40, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                unsafe {
                    let p = Mimalloc.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc {size} aligned {align}");
                    p.write_bytes(0xab, size);
                    let grown = Mimalloc.realloc(p, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "realloc {size} aligned {align}");
                    assert_eq!(*grown, 0xab, "realloc keeps the contents");
                    Mimalloc.dealloc(grown, Layout::from_size_align(size * 3, align).unwrap());
                    let z = Mimalloc.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "alloc_zeroed {size} aligned {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "zeroed");
                    Mimalloc.dealloc(z, layout);
                }
            }
        }
    }
}
