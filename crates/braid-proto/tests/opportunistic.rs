//! Opportunistic retransmission and penalisation (Raiciu et al., NSDI 2012
//! section 4.2; Linux MPTCP's `mptcp_rcv_buf_optimization`): when the
//! receive window stalls on a segment a slow subflow holds, the fast
//! subflow sends that segment again.

use braid_proto::{Config, Connection, Instant};

mod common;

/// Bytes each subflow of `a` re-sent on behalf of another.
fn reinjected(a: &Connection) -> Vec<u64> {
    (0..a.subflow_count()).map(|i| a.subflow_stats(i).unwrap().counters.reinjected_bytes).collect()
}

/// A 64 kB receive window over a 10 ms and a `slow_ms` subflow: 1 MB from
/// the client, the server reading everything as it arrives; the slow
/// subflow loses every `slow_loss`-th data packet (0: none).
fn transfer(opportunistic: Option<bool>, slow_ms: u64, slow_loss: u32) -> (Connection, Instant) {
    let cfg = Config { recv_buffer: 64 * 1024, opportunistic_retransmission: opportunistic, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 2);
    a.write_zeros(1_000_000);
    let done = |a: &mut Connection, b: &mut Connection| {
        b.consume(u64::MAX);
        a.all_acked()
    };
    let delay = |sf: u8| if sf == 0 { 10 } else { slow_ms };
    // Every 30th data packet on the fast subflow is lost: its window stays
    // small enough that the slow subflow carries data too.
    let (mut sent, mut sent_slow) = (0u32, 0u32);
    let drop = |_, to_b: bool, p: &braid_proto::Packet| {
        if to_b && p.subflow.0 == 0 {
            sent += 1;
            return sent.is_multiple_of(30);
        }
        if to_b && slow_loss > 0 && matches!(&p.frame, braid_proto::Frame::Data(d) if d.len > 0) {
            sent_slow += 1;
            return sent_slow.is_multiple_of(slow_loss);
        }
        false
    };
    let end = common::drive_paths(&mut a, &mut b, delay, 60_000, done, drop).expect("transfer");
    (a, end)
}

/// The slow subflow's RTT is 10 times the fast one's: the fast subflow
/// re-sends segments the slow one holds, and the transfer ends sooner than
/// without opportunistic retransmission (2.09 s against 2.33 s here).
#[test]
fn the_fast_subflow_resends_what_the_slow_one_holds_up() {
    let (on, end_on) = transfer(None, 100, 0);
    let (off, end_off) = transfer(Some(false), 100, 0);
    let fast = reinjected(&on)[0];
    println!("re-sent {:?}, ends {end_on:?} / {end_off:?}", reinjected(&on));
    assert!(fast > 0 && fast.is_multiple_of(1448), "{:?}", reinjected(&on));
    assert_eq!(reinjected(&off), [0, 0]);
    assert!(end_on < end_off, "{end_on:?} with, {end_off:?} without");
}

/// RTTs 20 and 60 ms: the slow subflow is not 4 times slower and its
/// window is larger than 4 segments, so the fast one re-sends nothing for
/// it. (The slow one may re-send for the fast one: a timeout leaves the
/// fast subflow a window of one segment, which the small-window rule
/// overtakes whatever the RTTs.)
#[test]
fn a_subflow_less_than_four_times_slower_is_not_overtaken() {
    let (a, _) = transfer(None, 30, 0);
    let fast_timeouts = a.subflow_stats(0).unwrap().counters.rtos;
    assert_eq!(reinjected(&a)[0], 0, "{:?}", reinjected(&a));
    assert!(
        reinjected(&a)[1] == 0 || fast_timeouts > 0,
        "the slow one re-sent {:?} for a fast one that never timed out",
        reinjected(&a)
    );
}

/// The same 3x slower subflow losing every 4th data packet: its window
/// stays at a few segments, and a holder with at most 4 segments of window
/// is overtaken whatever its RTT (the kernel's second condition). Its
/// timeouts also reinject on the fast subflow, with or without
/// opportunistic retransmission; overtaking adds to that (here 20,272
/// bytes against 14,480; without the small-window rule, 10,136).
#[test]
fn a_slow_subflow_with_a_small_window_is_overtaken() {
    let (on, _) = transfer(None, 30, 4);
    let (off, _) = transfer(Some(false), 30, 4);
    println!("re-sent per subflow: {:?}, without opportunistic retransmission {:?}", reinjected(&on), reinjected(&off));
    assert!(reinjected(&on)[0] > reinjected(&off)[0], "{:?} vs {:?}", reinjected(&on), reinjected(&off));
}
