//! Memory a finished stage let go, given back to the system before the next stage starts.
//!
//! Each stage frees most of what the one before it built (parsed records once they are
//! drafted, events once the report holds their text, turns once they are rendered), but the
//! allocator keeps freed pages a while for reuse, on each thread that freed them, and the next
//! stage builds beside them. Handing them back costs time (pages are faulted in again).
//! With this and the allocator's small pages (`Cargo.toml`), the 80 MB Gemini CLI bench
//! session peaks at 110–111 MiB instead of 141–147 MiB and the 100 MB Claude Code one at
//! 104–105 MiB instead of 122–134 MiB, for 7–11% more CPU.

/// Inputs below this many bytes are small: their whole run holds a few tens of MiB, and
/// handing pages back as they are freed would cost them more than it saves. Their stages keep
/// what they let go for the next to reuse ([`release`] does nothing) and the allocator returns
/// pages on its own delay: a 1 MB or 10 MB Claude Code session renders 11–13% faster and
/// peaks 5–7 MiB higher.
pub const SMALL_INPUT: u64 = 32 << 20;

/// Whether this run keeps freed pages for reuse ([`SMALL_INPUT`]).
static KEEP_FREED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Has the allocator give pages back to the system as soon as they are free, not 10 ms later:
/// a stage that frees much and allocates much at once (the privacy stage replacing texts, the
/// render letting turns go while it writes the page) otherwise builds beside pages it let go
/// (the 100 MB Claude Code bench session peaks about 8 MiB lower). With `small` (a run that
/// reads one input below [`SMALL_INPUT`]), pages are kept for reuse instead. Called once,
/// before any thread starts (the option is not set safely while others allocate); later calls
/// do nothing.
pub fn give_back_at_once(small: bool) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        system_blocks_mapped();
        if small {
            KEEP_FREED.store(true, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        // mimalloc's `mi_option_purge_delay` (milliseconds; 0: at once).
        const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
        // SAFETY: `mi_option_set` takes no pointer; it runs before the command starts a thread.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
    });
}

/// Has the C library's allocator (what the C code linked in allocates with: zstd's contexts,
/// the grammars' regular expressions) map every block of 128 KiB or more on its own, given
/// back when it is freed. By default the size it maps from grows to the largest block freed,
/// and blocks below it come from the heap of the thread, which keeps them resident: a batch
/// of 40 sessions on two threads held 8 MiB more once rendered (60 MiB instead of 52).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn system_blocks_mapped() {
    // SAFETY: `mallopt` takes no pointer; it runs before the command starts a thread. A
    // failure leaves the allocator as it was.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn system_blocks_mapped() {}

/// Returns freed pages to the system on every thread of the pool and on this one. Inside a
/// pool task (a batch render) only this thread's pages are collected: the other threads are
/// busy with their own sessions. Nothing, in a run of a small input ([`SMALL_INPUT`]).
pub fn release() {
    if KEEP_FREED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if rayon::current_thread_index().is_none() {
        rayon::broadcast(|_| collect());
    }
    collect();
}

/// The process's resident memory now and its peak so far, in bytes, where the system reports
/// them (Linux's `/proc/self/status`).
pub fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A list whose items are taken from the front a few at a time, the room of those taken given
/// back to the system as it goes ([`Taking::give_back`]): a long list (a session's turns
/// waiting to be rendered, 152 bytes each) otherwise stays resident whole until its last item
/// is taken, beside everything made from the items before it.
pub struct Taking<T> {
    rest: std::vec::IntoIter<T>,
    /// Where the room not yet given back begins.
    kept: usize,
}

impl<T> Taking<T> {
    /// The items of `list`, to be taken in order.
    pub fn new(list: Vec<T>) -> Self {
        let kept = list.as_ptr() as usize;
        Taking {
            rest: list.into_iter(),
            kept,
        }
    }

    /// The next `n` items (fewer at the end; none once all are taken).
    pub fn take(&mut self, n: usize) -> Vec<T> {
        self.rest.by_ref().take(n).collect()
    }

    /// The items in order, `n` at a time, the room of each batch given back as it is taken.
    pub fn batches(mut self, n: usize) -> impl Iterator<Item = Vec<T>> {
        std::iter::from_fn(move || {
            let taken = self.take(n);
            self.give_back();
            (!taken.is_empty()).then_some(taken)
        })
    }

    /// Hands the whole pages the taken items stood in back to the system. The list still owns
    /// them, but never reads them again (what stood there was moved out), and lets them go
    /// with the rest of its room once it is dropped; touched again, they would read as zeros.
    pub fn give_back(&mut self) {
        if std::mem::size_of::<T>() == 0 {
            return;
        }
        let taken = self.rest.as_slice().as_ptr() as usize;
        let from = self.kept.next_multiple_of(PAGE);
        let to = taken - taken % PAGE;
        if to > from {
            discard(from, to - from);
            self.kept = to;
        }
    }
}

/// The granularity [`discard`] works in (the system's page, on the platforms this is built
/// for; a larger page makes the call fail, and the room stays resident).
const PAGE: usize = 4096;

/// Tells the system the `len` bytes at `at` (whole pages) hold nothing needed: it takes them
/// back at once, and gives zeroed pages if they are touched again.
#[cfg(target_os = "linux")]
fn discard(at: usize, len: usize) {
    // SAFETY: the range is whole pages inside one live allocation whose contents there were
    // moved out and are never read (only written) again; `MADV_DONTNEED` keeps the mapping,
    // so the allocator can still use and free it. A failure leaves the pages as they were.
    unsafe {
        libc::madvise(at as *mut libc::c_void, len, libc::MADV_DONTNEED);
    }
}

#[cfg(not(target_os = "linux"))]
fn discard(_at: usize, _len: usize) {}

/// mimalloc's collection of the calling thread's heap. The binary's global allocator is
/// mimalloc; where it is not (the test harness), the call finds an empty heap.
fn collect() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::Taking;

    #[test]
    fn a_list_taken_from_the_front_gives_its_items_in_order_as_its_room_is_given_back() {
        let list: Vec<[u64; 19]> = (0..10_000).map(|i| [i; 19]).collect();
        let mut taking = Taking::new(list);
        let mut next = 0;
        loop {
            let some = taking.take(37);
            if some.is_empty() {
                break;
            }
            for item in some {
                assert_eq!(item, [next; 19]);
                next += 1;
            }
            taking.give_back();
        }
        assert_eq!(next, 10_000);
    }
}
