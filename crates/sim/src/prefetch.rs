//! Ask the CPU to start loading a value's cache lines now, so that the event which reads them
//! later does not wait for memory.
//!
//! With thousands of flows, a flow's state is cold whenever its next packet or ACK arrives
//! (docs/performance.md): every visit misses on each of its lines in turn. A link knows the
//! packet it delivers next, so the flow that packet visits can be fetched one event ahead.

/// Prefetch every cache line of `value` into all cache levels.
pub fn prefetch<T: ?Sized>(value: &T) {
    prefetch_bytes(value, size_of_val(value));
}

/// Prefetch the cache lines of the `bytes` bytes from `start` on, which may run past `start`'s
/// own end (into the free slots after a queue's last element, say). A hint only: it never
/// faults, changes no value, and costs one instruction per line.
#[allow(unsafe_code)]
pub fn prefetch_bytes<T: ?Sized>(start: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start: *const i8 = (start as *const T).cast();
        for offset in (0..bytes).step_by(64) {
            // SAFETY: `_mm_prefetch` is unsafe only because it needs SSE, which every x86-64
            // CPU has. A prefetch reads nothing into the program and never faults, whatever
            // the address, so running past `start`'s end is harmless.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}
