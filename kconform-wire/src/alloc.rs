//! The allocator that lets [`crate::check`] see a decoder's allocations.
//!
//! A decoder that hands a count from the wire to `Vec::with_capacity` before reading one
//! element asks for gigabytes on a 20-byte frame, and an allocation failure aborts the process:
//! under a fuzzer that is one crash file per input, all the same line, and in a test the end of
//! the run. Installed as the global allocator, [`Watch`] notes the largest single request made
//! on the thread while a check watches (so the check can name it: "asked for 38,626,170,144
//! bytes for a 222-byte frame"), and serves every request of [`RESERVE_THRESHOLD`] or more
//! from an anonymous `MAP_NORESERVE` mapping instead of the heap: reserving address space costs
//! nothing until pages are touched, the decoder then fails on the short input, and the mapping
//! is returned. Smaller requests go to the allocator it wraps. A request past the address space
//! (a count of 2^31 times a 1 MiB element) cannot be served by anyone: the process aborts, as
//! Rust aborts on every allocation failure, and the allocator says the finding first, with the
//! body in hex (under a fuzzer, the crash file holds the input too).
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: kconform_wire::alloc::Watch = kconform_wire::alloc::Watch::system();
//! ```
//!
//! Without it, [`crate::check`] still catches panics and disagreements with Apache; it cannot
//! see allocations, and says so in [`crate::check::Report::allocations_watched`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Requests at least this large are served from address-space reservations.
pub const RESERVE_THRESHOLD: usize = 64 << 20;
const PAGE: usize = 4096;

thread_local! {
    /// The largest request seen on this thread while watching; `None` when not watching.
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
    /// What is being decoded on this thread, for the last words of a request that cannot be
    /// served: the signature's start (`WriteTxnMarkers request`), the version and the body.
    static DECODING: Cell<Option<Decoding>> = const { Cell::new(None) };
}

/// What a check is decoding, as the allocator may have to say it before the process aborts.
/// Static text and a borrowed body: the allocator cannot allocate to say it.
#[derive(Debug, Clone, Copy)]
pub struct Decoding {
    /// `WriteTxnMarkers request`, leaked once per API and direction by the check.
    pub what: &'static str,
    /// The version.
    pub version: i16,
    /// The body's address and length (valid while the check runs).
    pub body: (*const u8, usize),
}

/// Runs `f` with `decoding` named as what this thread decodes (see [`Decoding`]).
pub fn decoding<R>(decoding: Decoding, f: impl FnOnce() -> R) -> R {
    let outer = DECODING.with(|d| d.replace(Some(decoding)));
    let out = f();
    DECODING.with(|d| d.set(outer));
    out
}

/// Where the size of a request that cannot be served is written before the process aborts:
/// memory an isolated session shares with the child that checks (`check::isolated`), which
/// reads it once the child is gone.
static UNSERVED: AtomicPtr<AtomicUsize> = AtomicPtr::new(std::ptr::null_mut());

/// Has the size of a request that cannot be served written to `slot` (see [`UNSERVED`]).
pub(crate) fn note_unserved_in(slot: &'static AtomicUsize) {
    UNSERVED.store(std::ptr::from_ref(slot).cast_mut(), Ordering::Relaxed);
}

/// A request of `size` bytes that cannot be served: its size where a session reads it, and the
/// finding on stderr.
fn unserved(size: usize) {
    let slot = UNSERVED.load(Ordering::Relaxed);
    if !slot.is_null() {
        // SAFETY: only `note_unserved_in` sets it, from a `'static` reference.
        unsafe { (*slot).store(size, Ordering::Relaxed) };
    }
    last_words(size);
}

/// Set once any allocation has gone through a [`Watch`]: whether one is installed.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// See the module documentation. `A` serves the requests below [`RESERVE_THRESHOLD`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Watch<A = System> {
    inner: A,
}

impl Watch<System> {
    /// Over the system allocator.
    pub const fn system() -> Watch<System> {
        Watch { inner: System }
    }
}

impl<A> Watch<A> {
    /// Over another allocator (jemalloc, mimalloc, a test's own).
    pub const fn new(inner: A) -> Watch<A> {
        Watch { inner }
    }
}

/// Whether a [`Watch`] is the global allocator (it has served an allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Runs `f`, giving back what it returned and the largest single allocation it asked for on
/// this thread (0 when no [`Watch`] is installed). Nested calls watch the inner call alone.
pub fn watching<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let outer = LARGEST.with(|l| l.replace(Some(0)));
    let out = f();
    let largest = LARGEST.with(|l| l.replace(outer)).unwrap_or(0);
    if let Some(o) = outer {
        LARGEST.with(|l| l.set(Some(o.max(largest))));
    }
    (out, largest)
}

fn note(layout: &Layout) {
    INSTALLED.store(true, Ordering::Relaxed);
    // `try_with`: during a thread's teardown the slot may be gone; a const-initialised Cell
    // without a destructor never allocates to be read.
    let _ = LARGEST.try_with(|l| {
        if let Some(largest) = l.get() {
            l.set(Some(largest.max(layout.size())));
        }
    });
}

/// A request that cannot be served while a check decodes: the process is about to abort (an
/// allocation failure is not an unwind), so the finding is said first, on stderr, with the
/// body in hex, written from the stack: `Case::from_fuzz_input` and the fuzzer's crash file
/// give it back.
fn last_words(size: usize) {
    let Ok(Some(d)) = DECODING.try_with(Cell::get) else {
        return;
    };
    let mut out = Line::default();
    out.text("\nkconform-wire: allocates past the bound: ");
    out.text(d.what);
    out.text(" v");
    out.number(d.version.unsigned_abs() as usize);
    out.text(": asked for ");
    out.number(size);
    out.text(" bytes at once for a ");
    out.number(d.body.1);
    out.text("-byte body, which cannot be served: the process aborts\nkconform-wire: body: ");
    out.flush();
    // SAFETY: the check that set `DECODING` holds the body for as long as it is set.
    let body = unsafe { std::slice::from_raw_parts(d.body.0, d.body.1) };
    for chunk in body.chunks(64) {
        for b in chunk {
            let hex = b"0123456789abcdef";
            out.bytes(&[hex[(b >> 4) as usize], hex[(b & 15) as usize]]);
        }
        out.flush();
    }
    out.text("\n");
    out.flush();
}

/// A line written to stderr from a stack buffer.
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }
}

impl Line {
    fn bytes(&mut self, b: &[u8]) {
        for &c in b {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = c;
            self.len += 1;
        }
    }

    fn text(&mut self, t: &str) {
        self.bytes(t.as_bytes());
    }

    fn number(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.bytes(&digits[at..]);
    }

    fn flush(&mut self) {
        // SAFETY: writes `len` initialised bytes of the buffer to stderr; a failed write has
        // nowhere else to go.
        unsafe { libc::write(2, self.buf.as_ptr().cast(), self.len) };
        self.len = 0;
    }
}

fn reserved(layout: &Layout) -> bool {
    layout.size() >= RESERVE_THRESHOLD && layout.align() <= PAGE
}

/// An anonymous private mapping of `size` bytes, reserved but not committed.
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
    match p == libc::MAP_FAILED {
        true => std::ptr::null_mut(),
        false => p.cast(),
    }
}

// SAFETY: every pointer handed out is either from `inner` (and returned to it) or from an
// anonymous mapping of at least the requested size, page aligned (and unmapped on dealloc); the
// `reserved` test picks the same path for a pointer's allocation and its release because both
// see the same layout. Noting a size touches only a thread-local Cell.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Watch<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(&layout);
        let p = match reserved(&layout) {
            // SAFETY: see the impl comment.
            true => unsafe { map(layout.size()) },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { self.inner.alloc(layout) },
        };
        if p.is_null() {
            unserved(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(&layout);
        let p = match reserved(&layout) {
            // Anonymous mappings are zero-filled.
            // SAFETY: see the impl comment.
            true => unsafe { map(layout.size()) },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { self.inner.alloc_zeroed(layout) },
        };
        if p.is_null() {
            unserved(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match reserved(&layout) {
            // SAFETY: `ptr` came from `map` with this size.
            true => unsafe {
                libc::munmap(ptr.cast(), layout.size());
            },
            // SAFETY: forwarded with the caller's guarantees.
            false => unsafe { self.inner.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees on `layout` and `new_size` carry over.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !reserved(&layout) && !reserved(&new) {
            note(&new);
            // SAFETY: both sizes stay with `inner`, which made `ptr`.
            return unsafe { self.inner.realloc(ptr, layout, new_size) };
        }
        // Across the threshold: a fresh block, the bytes copied, the old one released.
        // SAFETY: `new` has a non-zero size (it is at least the threshold or was made from a
        // valid layout), and the copy stays within both blocks.
        unsafe {
            let fresh = self.alloc(new);
            if !fresh.is_null() {
                std::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            fresh
        }
    }
}
