//! Pacing: packets leave `len / rate` apart, and a departure made late
//! because the driver ran the pacing timer late is credited against the
//! next gap, at most half of it (Linux's `tcp_update_skb_after_send`), so a
//! real sender whose timer wakes late catches up instead of losing the time.

mod common;

use braid_proto::{Config, Connection, Duration, Instant};

/// The driver wakes for the timer at `now`, sends one packet and returns
/// when the pacer lets the next go.
fn send_one(a: &mut Connection, now: Instant) -> Instant {
    a.handle_timeout(now);
    assert!(a.poll_transmit(now).is_some(), "a packet at {now:?}");
    assert!(a.poll_transmit(now).is_none(), "the next waits for its slot");
    a.poll_timeout().expect("the pacing slot")
}

#[test]
fn a_late_timer_is_credited_up_to_half_a_gap() {
    let t0 = Instant::ZERO;
    let (mut a, mut b) = common::pair(Config::default(), "bbr", "minrtt", 1);
    common::open(&mut a, &mut b, t0);
    a.write_zeros(1 << 20);
    let slot = send_one(&mut a, t0);
    let gap = slot.saturating_since(t0).as_nanos();
    assert!(gap > 0);
    // Before any delivery-rate sample BBR paces at 2/ln 2 x the initial
    // window (10 x 1448 B) per millisecond, 41.78 MB/s: a 1448-byte packet
    // takes 1448 B / 41.78 MB/s = 34,657 ns.
    assert_eq!(gap, 34_657);
    let after = |t: Instant, ns: u64| t + Duration::from_nanos(ns);
    // The timer ran a quarter of a gap late: the next slot keeps the rhythm.
    let next = send_one(&mut a, after(slot, gap / 4));
    assert_eq!(next, after(slot, gap), "the lateness is made up");
    // A whole gap late: only half a gap is credited.
    let at = after(next, gap);
    let next = send_one(&mut a, at);
    assert_eq!(next, after(at, gap - gap / 2));
    // On time: no credit.
    let next2 = send_one(&mut a, next);
    assert_eq!(next2, after(next, gap));
}
