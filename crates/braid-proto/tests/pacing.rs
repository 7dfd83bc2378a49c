//! Pacing: packets leave `len / rate` apart, and the packets a late run of
//! the driver's pacing timer owes go out back to back, up to 1 ms of them
//! (as Linux's TSO-sized bursts of about 1 ms), so a real sender whose
//! timer wakes late catches up instead of losing the time.

mod common;

use braid_proto::{Config, Connection, Duration, Instant};

/// The driver wakes for the timer at `now` and sends what the pacer lets
/// go; returns how many packets, and when the pacer lets the next go.
fn send_due(a: &mut Connection, now: Instant) -> (u64, Instant) {
    a.handle_timeout(now);
    let mut sent = 0;
    while a.poll_transmit(now).is_some() {
        sent += 1;
    }
    (sent, a.poll_timeout().expect("the pacing slot"))
}

#[test]
fn a_late_timer_is_made_up_within_a_millisecond() {
    let t0 = Instant::ZERO;
    let (mut a, mut b) = common::pair(Config::default(), "bbr", "minrtt", 1);
    common::open(&mut a, &mut b, t0);
    a.write_zeros(1 << 20);
    let (sent, slot) = send_due(&mut a, t0);
    assert_eq!(sent, 1);
    let gap = slot.saturating_since(t0).as_nanos();
    // Before any delivery-rate sample BBR paces at 2/ln 2 x the initial
    // window (10 x 1448 B) per millisecond, 1% below (Linux's pacing
    // margin): 41.36 MB/s. A 1448-byte packet takes 35,007 ns.
    assert_eq!(gap, 35_007);
    let after = |t: Instant, ns: u64| t + Duration::from_nanos(ns);
    // The timer ran a quarter of a gap late: the next slot keeps the rhythm.
    let (sent, next) = send_due(&mut a, after(slot, gap / 4));
    assert_eq!((sent, next), (1, after(slot, gap)), "the lateness is made up");
    // A gap and a half late: the packet due then and the one due a gap
    // later go together, and the rhythm holds.
    let (sent, next2) = send_due(&mut a, after(next, gap + gap / 2));
    assert_eq!((sent, next2), (2, after(next, 2 * gap)));
    // On time: one packet, no credit.
    let (sent, next3) = send_due(&mut a, next2);
    assert_eq!((sent, next3), (1, after(next2, gap)));
}

/// The credit is the pacing timer's run alone: a send that no timer caused
/// (the application writes later) makes nothing up, however late the last
/// run of the timer was.
#[test]
fn a_send_no_timer_caused_makes_nothing_up() {
    let t0 = Instant::ZERO;
    let (mut a, mut b) = common::pair(Config::default(), "bbr", "minrtt", 1);
    common::open(&mut a, &mut b, t0);
    a.write_zeros(3 * 1448);
    let (sent, slot) = send_due(&mut a, t0);
    assert_eq!(sent, 1);
    // The timer runs 500 us (over 14 gaps) late: the two packets left go
    // out together.
    let (sent, _) = send_due(&mut a, slot + Duration::from_micros(500));
    assert_eq!(sent, 2);
    // 5 ms later the application writes again, and no timer runs.
    let t = slot + Duration::from_millis(5);
    a.write_zeros(6 * 1448);
    let mut sent = 0;
    while a.poll_transmit(t).is_some() {
        sent += 1;
    }
    assert_eq!(sent, 1, "one packet, then the pacer's gap");
}
