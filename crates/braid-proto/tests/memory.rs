//! Memory under a flood of tiny segments: the receive buffer's footprint is
//! bounded by its window, not by the number of segments. Measured with a
//! global allocator that tracks live heap bytes, so the figure is exact.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

mod common;

use braid_proto::{Config, DataFrame, Frame, Instant, Packet, SubflowId};

struct Tracking;
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed) + layout.size() as i64;
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

const WINDOW: u64 = 1 << 20;

/// Peak heap growth while a receiver with a 1 MiB window takes one-byte
/// segments at the DSNs `dsns` yields.
fn peak_growth(dsns: impl Iterator<Item = u64>) -> i64 {
    let config = Config { recv_buffer: WINDOW, ..Config::default() };
    let (_a, mut b) = common::established(config);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    for (pn, dsn) in dsns.enumerate() {
        let pn = pn as u64 + 2;
        let frame = Frame::Data(DataFrame { pn, pn_floor: pn, dsn: dsn + 1, len: 1, payload: vec![7] });
        b.handle_datagram(Instant::ZERO, Packet::new(SubflowId(0), frame)).unwrap();
        while b.poll_transmit(Instant::ZERO).is_some() {}
    }
    PEAK.load(Ordering::Relaxed) - base
}

#[test]
fn one_byte_segments_cost_at_most_a_few_windows() {
    // Every other byte, leaving a hole before each: the worst case for
    // bookkeeping. Then every byte but the first: one run, one copy.
    let holes = peak_growth((0..WINDOW / 2).map(|k| 1 + 2 * k));
    let run = peak_growth((1..WINDOW).rev());
    println!("peak heap growth for {WINDOW} B of window: holes {holes} B, one run {run} B");
    assert!(holes < 3 * WINDOW as i64, "{holes} B with holes");
    assert!(run < 3 * WINDOW as i64, "{run} B in one run");
}
