//! The simulator's hot path must not allocate per packet: after warm-up,
//! a bulk transfer runs with (almost) no heap allocations. Counted with a
//! wrapping global allocator, so the figure is exact, not timed.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use braid_proto::{Duration, Instant};
use braid_sim::topology::hybrid_access;
use braid_sim::Sim;
use common::*;

struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_bulk_transfer_barely_allocates() {
    // Equal paths where the receive window (200 KB, below the 250 KB the
    // paths hold) keeps the queues from overflowing, so data arrives in
    // order, and unequal lossy paths where the receiver's out-of-order queue
    // is busy. That queue is a B-tree whose nodes are allocated as it grows,
    // so the second case gets a looser bound: one allocation per 20 packets.
    // The lossy case runs every controller with a bound of one allocation
    // per 10 packets: the B-tree's share is 0.001 to 0.05 depending on how
    // much a controller reorders (uncoupled Reno the most), while OLIA's
    // increase, when it allocated its path set on every ACK, gave 0.67.
    let lossy = [link("L1", 100, 10, 0.001), link("L2", 50, 40, 0.0)];
    let in_order = [link("L1", 100, 10, 0.0), link("L2", 100, 10, 0.0)];
    // Every scheduler too, with LIA on the lossy paths: round robin built
    // a list of its candidates on every decision (one allocation a packet).
    let cases = std::iter::once(("in order", "lia", "minrtt", in_order, 200_000, 0.001))
        .chain(
            braid_proto::cc::ALGORITHMS
                .iter()
                .map(|&(cc, _)| ("unequal+loss", cc, "minrtt", lossy.clone(), 6 << 20, 0.1)),
        )
        .chain(
            braid_proto::sched::ALGORITHMS
                .iter()
                .map(|&(s, _)| ("unequal+loss", "lia", s, lossy.clone(), 6 << 20, 0.1)),
        );
    for (name, cc, scheduler, paths, recv_buffer, bound) in cases {
        let t = hybrid_access(&paths, 2_000 * MBIT);
        let mut mp = flow("mp", cc, &[0, 1]);
        mp.config.recv_buffer = recv_buffer;
        mp.scheduler = scheduler.into();
        let mut sim = Sim::new(t, vec![mp], 1).unwrap();
        sim.run(Instant::ZERO + Duration::from_secs(5));
        let (a0, p0) = (ALLOCATIONS.load(Ordering::Relaxed), sim.packets_sent());
        sim.run(Instant::ZERO + Duration::from_secs(15));
        let (allocs, packets) = (ALLOCATIONS.load(Ordering::Relaxed) - a0, sim.packets_sent() - p0);
        let per_packet = allocs as f64 / packets as f64;
        println!("{name}, {cc}, {scheduler}: {allocs} allocations for {packets} packets ({per_packet:.5} per packet)");
        assert!(packets > 20_000, "{name}, {cc}, {scheduler}: {packets} packets");
        assert!(per_packet < bound, "{name}, {cc}, {scheduler}: {per_packet} allocations per packet");
    }
}
