//! Memory a finished stage let go, given back to the system before the next stage starts.
//!
//! Each stage frees most of what the one before it built (parsed records once they are
//! drafted, events once the report holds their text, turns once they are rendered), but the
//! allocator keeps freed pages a while for reuse, on each thread that freed them, and the next
//! stage builds beside them. Handing them back costs time (pages are faulted in again).
//! With this and the allocator's small pages (`Cargo.toml`), the 80 MB Gemini CLI bench
//! session peaks at 110–111 MiB instead of 141–147 MiB and the 100 MB Claude Code one at
//! 104–105 MiB instead of 122–134 MiB, for 7–11% more CPU.

/// Has the allocator give pages back to the system as soon as they are free, not 10 ms later:
/// a stage that frees much and allocates much at once (the privacy stage replacing texts, the
/// render letting turns go while it writes the page) otherwise builds beside pages it let go
/// (the 100 MB Claude Code bench session peaks about 8 MiB lower). Called once, before any
/// thread starts (the option is not set safely while others allocate); later calls do nothing.
pub fn give_back_at_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // mimalloc's `mi_option_purge_delay` (milliseconds; 0: at once).
        const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
        // SAFETY: `mi_option_set` takes no pointer; it runs before the command starts a thread.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
    });
}

/// Returns freed pages to the system on every thread of the pool and on this one. Inside a
/// pool task (a batch render) only this thread's pages are collected: the other threads are
/// busy with their own sessions.
pub fn release() {
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

/// mimalloc's collection of the calling thread's heap. The binary's global allocator is
/// mimalloc; where it is not (the test harness), the call finds an empty heap.
fn collect() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
