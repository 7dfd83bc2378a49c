//! Hints to the CPU to bring memory into cache ahead of its use.
//!
//! A driver with thousands of connections (the simulator) touches each
//! one about once per packet, a round trip after the last time: its state
//! has left the cache, and a miss costs about as much as the rest of the
//! packet's work. When the driver knows which connection comes next, it can
//! ask for that state while it does other work ([`Connection::prefetch`]).
//! Hints have no effect on results.
//!
//! [`Connection::prefetch`]: crate::Connection::prefetch

const LINE: usize = 64;

/// Asks for the cache line holding the start of `r`. Only a hint: it has
/// no effect on results.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    line((r as *const T).cast());
}

/// Asks for every cache line of `r` (its inline part, not what it points to).
#[inline(always)]
pub fn prefetch_all<T: ?Sized>(r: &T) {
    span((r as *const T).cast(), std::mem::size_of_val(r));
}

/// Asks for the first `len` bytes of `r` (those a caller knows it will
/// read first, when `r` is larger).
#[inline(always)]
pub fn prefetch_first<T>(r: &T, len: usize) {
    span((r as *const T).cast(), len.min(std::mem::size_of::<T>()));
}

/// Asks for every cache line of the `len` bytes from `start`.
#[inline(always)]
fn span(start: *const u8, len: usize) {
    for offset in line_offsets(start as usize, len) {
        line(start.wrapping_byte_offset(offset));
    }
}

/// Offsets from `start`, one in each cache line that `len` bytes from
/// `start` touch: the first is the start of `start`'s line.
#[inline(always)]
fn line_offsets(start: usize, len: usize) -> impl Iterator<Item = isize> {
    let skew = (start % LINE) as isize;
    (0..skew + len as isize).step_by(LINE).map(move |o| o - skew)
}

#[inline(always)]
fn line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetch` is an SSE instruction, which every x86-64 CPU has;
    // it never faults, whatever the address, and changes nothing the
    // program can observe but timing.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(start: usize, len: usize) -> Vec<usize> {
        line_offsets(start, len).map(|o| start.wrapping_add_signed(o)).collect()
    }

    #[test]
    fn every_line_touched_once() {
        assert_eq!(lines(128, 64), [128]);
        assert_eq!(lines(128, 65), [128, 192]);
        assert_eq!(lines(100, 28), [64]);
        assert_eq!(lines(100, 29), [64, 128]);
        assert_eq!(lines(120, 10), [64, 128]);
        assert_eq!(lines(1000, 976), (960..1976).step_by(64).collect::<Vec<_>>());
        assert_eq!(lines(64, 0), Vec::<usize>::new());
    }

    #[test]
    fn hints_accept_any_value() {
        let v = vec![7u64; 100];
        prefetch(&v[99]);
        prefetch_all(&v[..]);
        prefetch_all(&());
        assert_eq!(v[99], 7);
    }
}
