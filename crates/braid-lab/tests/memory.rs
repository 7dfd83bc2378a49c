//! A run's memory does not grow with its length: the summary's sampled
//! figures are aggregated while sampling, and no time series is kept
//! unless a sink asks for one. Measured as peak live heap bytes with a
//! counting allocator, so the figure is exact, not timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use braid_lab::{parse, run, RunOptions};
use braid_proto::Duration;

struct Tracking;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if size > layout.size() {
            let now = LIVE.fetch_add(size - layout.size(), Ordering::Relaxed) + size - layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Peak live heap bytes above the starting level while `f` runs.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

#[test]
fn memory_does_not_grow_with_run_length() {
    // 10 flows x 2 subflows sampled every millisecond: 20 subflow rows and
    // 42 link rows per sample, about 3 KB a sample if they were kept.
    let flows: String = (0..10).map(|i| format!("[[flow]]\nname = \"f{i}\"\nsubflows = 2\n")).collect();
    let toml = format!(
        "sample_interval = \"1ms\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"20Mbit\"\nrtt = \"20ms\"\n{flows}"
    );
    let scenario = parse(&toml, "t.toml").unwrap();
    let peak = |secs| {
        peak_during(|| {
            let opts = RunOptions { seed: None, duration: Some(Duration::from_secs(secs)) };
            run(&scenario, opts, &mut |_| {}).unwrap();
        })
    };
    let (short, long) = (peak(2), peak(8));
    println!("peak heap: {short} bytes for 2 s, {long} bytes for 8 s (6000 more samples)");
    assert!(long < short + 1_000_000, "memory grew by {} bytes over 6000 samples", long - short);
}
