//! Reinjection: the data a subflow that timed out was carrying is queued
//! once and re-sent on another open subflow (Linux MPTCP reinjects a
//! timed-out subflow's queue), ahead of new data.

use braid_proto::{Config, Connection, Duration, Event, Frame, Instant, Packet, SubflowId};

mod common;

/// Two 10 ms subflows; from the start every data packet sent on subflow 1
/// is lost, so its data reaches the peer only by reinjection on subflow 0.
#[test]
fn a_dead_subflows_data_is_reinjected_on_the_other() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 2);
    a.write_zeros(200_000);
    let mut lost = 0u64;
    let drop = |_, to_b: bool, p: &Packet| {
        let dead = to_b && p.subflow.0 == 1 && matches!(&p.frame, Frame::Data(d) if d.len > 0);
        lost += u64::from(dead);
        dead
    };
    let done = |a: &mut Connection, b: &mut Connection| {
        b.consume(u64::MAX);
        a.all_acked()
    };
    let end = common::drive(&mut a, &mut b, 10, 30_000, done, drop).expect("every byte arrives");
    // Subflow 1 times out after its 200 ms minimum RTO and its whole queue
    // is reinjected at once: done at 0.32 s. Left to the connection-level
    // timer, one segment per (backed-off) timeout, it takes 2.6 s.
    assert!(end < Instant::ZERO + Duration::from_millis(500), "{end:?}");
    let on_0 = a.subflow_stats(0).unwrap().counters.reinjected_bytes;
    assert!(lost > 0, "subflow 1 carried data");
    assert!(on_0 > 0, "subflow 0 re-sent subflow 1's data");
    assert!(a.stats().reinjected_bytes > 0, "{:?}", a.stats());
    assert_eq!(a.subflow_stats(1).unwrap().counters.reinjected_bytes, 0);
    let failed: Vec<Event> =
        std::iter::from_fn(|| a.poll_event()).filter(|e| matches!(e, Event::SubflowFailed { .. })).collect();
    assert_eq!(failed, [Event::SubflowFailed { subflow: SubflowId(1) }], "reported once");
}

/// Small segments a dead subflow carried are reinjected merged, up to one
/// MSS per packet, as Linux's `tcp_retrans_try_collapse` merges a
/// subflow's own: a `nodelay` writer's 100-byte segments on the faster
/// subflow 1, which loses all its data, come back on subflow 0 in one
/// packet per MSS rather than one per segment.
#[test]
fn a_dead_subflows_small_segments_are_reinjected_merged() {
    let cfg = Config { nodelay: true, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 2);
    let mut lost: Vec<(u64, u64)> = Vec::new();
    let mut reinjections = 0u64;
    let (mut written, total) = (0u64, 6_000u64);
    let drop = |_, to_b: bool, p: &Packet| {
        let Frame::Data(d) = &p.frame else { return false };
        if !to_b || d.len == 0 {
            return false;
        }
        let (start, end) = (d.dsn, d.dsn + u64::from(d.len));
        if p.subflow.0 == 1 {
            lost.push((start, end));
            return true;
        }
        reinjections += u64::from(lost.iter().any(|&(s, e)| start < e && s < end));
        false
    };
    let done = |a: &mut Connection, b: &mut Connection| {
        if written < total {
            written += a.write(&[9; 100]) as u64;
        }
        b.consume(u64::MAX);
        written == total && a.all_acked()
    };
    common::drive_paths(&mut a, &mut b, |s| if s == 1 { 5 } else { 20 }, 30_000, done, drop).expect("every byte");
    // Subflow 1 also re-sends them once itself (merged) before it is given
    // up: the bytes lost are the union of what it carried.
    let (first, last) = (lost.iter().map(|r| r.0).min().unwrap_or(0), lost.iter().map(|r| r.1).max().unwrap_or(0));
    let small = lost.iter().filter(|&&(s, e)| e - s <= 100).count();
    println!("{small} small segments ({first}..{last}) lost on subflow 1, {reinjections} packets re-sent them");
    assert!(small >= 5 && last - first == 100 * small as u64, "{lost:?}");
    assert!(reinjections <= (last - first).div_ceil(1448) + 1, "{reinjections} packets for {} bytes", last - first);
}

/// Data a usable subflow is carrying is not reinjected onto it again: its
/// copy is on its way (Linux's scheduler skips a subflow in the segment's
/// `path_mask`, every subflow that carried it). Subflows 1 and 2 (5 ms)
/// lose every data packet; subflow 0 is slow (2 s round trip), so what
/// they stranded is still in flight on it through several of their
/// backed-off timeouts, each of which re-offers their queues: every byte
/// crosses subflow 0 once.
#[test]
fn data_in_flight_on_a_usable_subflow_is_not_reinjected_there_again() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 3);
    a.write_zeros(30_000);
    let mut on_0: std::collections::BTreeMap<u64, u32> = Default::default();
    let drop = |_, to_b: bool, p: &Packet| {
        let Frame::Data(d) = &p.frame else { return false };
        if !to_b || d.len == 0 {
            return false;
        }
        if p.subflow.0 == 0 {
            for dsn in d.dsn..d.dsn + u64::from(d.len) {
                *on_0.entry(dsn).or_default() += 1;
            }
        }
        p.subflow.0 != 0
    };
    let done = |a: &mut Connection, b: &mut Connection| {
        b.consume(u64::MAX);
        a.all_acked()
    };
    common::drive_paths(&mut a, &mut b, |s| if s == 0 { 1000 } else { 5 }, 60_000, done, drop).expect("every byte");
    let rtos: Vec<u64> = (1..3).map(|i| a.subflow_stats(i).unwrap().counters.rtos).collect();
    let most = on_0.values().copied().max().unwrap_or(0);
    println!("timeouts on subflows 1 and 2: {rtos:?}; most copies of a byte on subflow 0: {most}");
    assert!(rtos.iter().all(|&n| n >= 3), "the dead subflows timed out again and again: {rtos:?}");
    assert_eq!(on_0.len(), 30_000, "subflow 0 carried every byte");
    assert_eq!(most, 1, "a byte sent on subflow 0 again while its copy was in flight there");
}
