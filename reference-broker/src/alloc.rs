//! A global allocator that makes hostile element counts cheap.
//!
//! kafka-protocol 0.15 reserves `Vec::with_capacity(count)` for an array before reading any
//! element, with the count straight from the wire: a 20-byte frame can ask for hundreds of
//! gigabytes, and an allocation failure aborts the process. This allocator serves every
//! request of 64 MiB or more from an anonymous `MAP_NORESERVE` mapping instead of the heap:
//! reserving address space costs nothing until pages are touched, the decoder then fails on
//! the truncated input, and the mapping is returned. Memory actually used stays proportional
//! to the bytes actually decoded. Smaller requests go to the system allocator unchanged.
//!
//! The `kaas-ref` binary and the frame fuzzer install it with `#[global_allocator]`.

use std::alloc::{GlobalAlloc, Layout, System};

/// Requests at least this large are served from address-space reservations.
pub const RESERVE_THRESHOLD: usize = 64 << 20;
const PAGE: usize = 4096;

/// See the module documentation.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReservingAllocator;

fn reserved(layout: &Layout) -> bool {
    layout.size() >= RESERVE_THRESHOLD && layout.align() <= PAGE
}

unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping with no address hint has no preconditions.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

// SAFETY: every pointer handed out is either from `System` (and returned to it) or from an
// anonymous mapping of at least the requested size, page aligned (and unmapped on dealloc); the
// `reserved` test picks the same path for a pointer's allocation and its release because both
// see the same layout.
unsafe impl GlobalAlloc for ReservingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match reserved(&layout) {
            // SAFETY: see the impl comment.
            true => unsafe { map(layout.size()) },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match reserved(&layout) {
            // Anonymous mappings are zero-filled.
            // SAFETY: see the impl comment.
            true => unsafe { map(layout.size()) },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match reserved(&layout) {
            // SAFETY: `ptr` came from `map` with this size.
            true => unsafe {
                libc::munmap(ptr.cast(), layout.size());
            },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` forms a valid layout with this alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !reserved(&layout) && !reserved(&new_layout) {
            // SAFETY: forwarded with the caller's guarantees.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: allocate, copy the overlap, release the old block: each step within its
        // allocation's bounds.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_reservation_succeeds_and_is_usable_at_both_ends() {
        let a = ReservingAllocator;
        // 256 GiB: far beyond this machine's memory; only two pages get touched.
        let layout = Layout::from_size_align(256 << 30, 8).unwrap();
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            *p = 1;
            *p.add(layout.size() - 1) = 2;
            assert_eq!((*p, *p.add(layout.size() - 1)), (1, 2));
            a.dealloc(p, layout);
        }
    }

    #[test]
    fn realloc_across_the_threshold_keeps_the_bytes() {
        let a = ReservingAllocator;
        let small = Layout::from_size_align(16, 8).unwrap();
        unsafe {
            let p = a.alloc(small);
            p.copy_from_nonoverlapping(b"kconform-realloc".as_ptr(), 16);
            let big = a.realloc(p, small, RESERVE_THRESHOLD * 2);
            assert_eq!(std::slice::from_raw_parts(big, 16), b"kconform-realloc");
            let back = a.realloc(
                big,
                Layout::from_size_align(RESERVE_THRESHOLD * 2, 8).unwrap(),
                16,
            );
            assert_eq!(std::slice::from_raw_parts(back, 16), b"kconform-realloc");
            a.dealloc(back, small);
        }
    }
}
