//! Connection behaviours at their edges that cargo-mutants found no test
//! pinned: the send buffer's free space, the window update after a read of
//! half the receive buffer, the failure timer, and how lost small segments
//! are merged into one retransmission.

use braid_proto::{Config, Connection, Duration, Frame, Instant, SubflowId};

mod common;

#[test]
fn a_connection_names_its_controller_and_scheduler() {
    let (a, _) = common::pair(Config::default(), "olia", "ecf", 1);
    assert_eq!((a.controller_name(), a.scheduler_name()), ("olia", "ecf"));
}

#[test]
fn send_room_is_the_space_left_in_the_send_buffer() {
    let (mut a, _) = common::pair(Config::default(), "reno", "minrtt", 1);
    assert_eq!(a.send_room(), 4 << 20);
    a.write(&[1; 1000]);
    assert_eq!(a.send_room(), (4 << 20) - 1000);
}

/// The send buffer is writable once the free space is at least half of
/// what is queued (Linux's `sk_stream_is_writeable`), and an application
/// may write while it has not filled the buffer, or, having filled it,
/// once it is writable again.
#[test]
fn a_writer_that_filled_the_buffer_waits_until_half_of_what_is_queued_is_free() {
    let cfg = Config { send_buffer: 3000, ack_every: 1, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    assert!(a.send_writable() && a.may_write(), "empty: 3000 B free, none queued");
    a.write(&[1; 2000]);
    assert!(a.send_writable(), "1000 B free, 2000 queued: exactly half");
    a.write(&[1; 1]);
    assert!(!a.send_writable(), "999 B free, 2001 queued (half is 1000, rounded down)");
    assert!(a.may_write(), "the buffer is not full: a write goes in at once");
    assert_eq!(a.write(&[1; 5000]), 999, "the write fills the buffer");
    assert!(!a.may_write(), "full: the writer waits");
    let acked = |a: &mut Connection, _: &mut Connection| a.all_acked();
    common::drive(&mut a, &mut b, 10, 5_000, acked, |_, _, _| false).expect("transfer");
    assert!(a.may_write() && a.send_room() == 3000, "all acknowledged: {} B free", a.send_room());
}

/// Reading half the receive buffer announces the larger window at once
/// (so a sender blocked on it resumes); reading less waits for the next ACK.
#[test]
fn reading_half_the_buffer_sends_a_window_update() {
    let cfg = Config { recv_buffer: 20_000, ack_every: 1, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    a.write(&[5; 20_000]);
    let full = |a: &mut Connection, b: &mut Connection| b.readable() == 20_000 && a.all_acked();
    let now = common::drive(&mut a, &mut b, 10, 5_000, full, |_, _, _| false).expect("transfer");
    assert!(b.poll_transmit(now).is_none(), "nothing pending once the transfer is acknowledged");
    let mut buf = [0; 10_000];
    assert_eq!(b.read(&mut buf[..9_999]), 9_999);
    assert!(b.poll_transmit(now).is_none(), "less than half the buffer read: no update yet");
    assert_eq!(b.read(&mut buf[..1]), 1);
    let update = b.poll_transmit(now).expect("a window update after reading half the buffer");
    let Frame::Ack(ack) = update.frame else { panic!("{update:?}") };
    assert_eq!(ack.window_end, 30_000, "20 kB delivered, 10 kB read, 20 kB buffer");
}

/// The failure timer runs only while data waits and no subflow can carry
/// it: a transfer that takes longer than the timeout on a working path
/// does not fail.
#[test]
fn a_long_transfer_on_a_working_path_does_not_fail() {
    let cfg = Config { failure_timeout: Duration::from_millis(300), ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    a.write_zeros(2_000_000);
    let done = |a: &mut Connection, _: &mut Connection| a.all_acked() || a.error().is_some();
    let end = common::drive(&mut a, &mut b, 50, 20_000, done, |_, _, _| false).expect("transfer");
    assert!(end > Instant::ZERO + Duration::from_millis(600), "the transfer outlasts the timeout: {end:?}");
    assert_eq!(a.error(), None);
}

/// Lost small segments are merged into one retransmission of up to one
/// MSS (Linux's `tcp_retrans_try_collapse`), exactly one MSS included.
#[test]
fn lost_small_segments_merge_up_to_exactly_one_mss() {
    let cfg = Config { nodelay: true, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    let mut sent = 0;
    for _ in 0..3 {
        a.write(&[3; 724]);
        while a.poll_transmit(Instant::ZERO).is_some() {
            sent += 1;
        }
    }
    assert_eq!(sent, 3, "three segments of half an MSS");
    // All lost: the timeout queues them for retransmission, one MSS of window.
    let rto = a.poll_timeout().expect("retransmission timer");
    a.handle_timeout(rto);
    let p = a.poll_transmit(rto).expect("a retransmission");
    let Frame::Data(d) = p.frame else { panic!("{p:?}") };
    assert_eq!((d.dsn, d.len), (0, 1448), "the first two segments, 724 + 724 = 1448 B, go as one");
    assert_eq!(a.subflow_stats(0).unwrap().counters.retransmissions, 1, "one retransmission, counted once");
}

/// Every data packet `c` sends at `now`, as (subflow, DSN, length).
fn data_sent(c: &mut Connection, now: Instant) -> Vec<(u8, u64, u32)> {
    let mut sent = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        if let Frame::Data(d) = p.frame {
            sent.push((p.subflow.0, d.dsn, d.len));
        }
    }
    sent
}

/// The initial window (10 segments) leaves at once: full segments are not
/// held back while others are in flight.
#[test]
fn the_initial_window_goes_out_at_once() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 20_000]);
    let sent = data_sent(&mut a, Instant::ZERO);
    assert_eq!(sent.len(), 10, "{sent:?}");
    assert!(sent.iter().all(|&(_, _, len)| len == 1448), "{sent:?}");
}

/// Nagle's algorithm (Minshall's variant): a short segment goes out, the
/// next short one waits until the first is acknowledged.
#[test]
fn nagle_holds_a_second_short_segment() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 100]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 0, 100)]);
    a.write(&[2; 100]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![], "held while the first is unacknowledged");
    // A full segment is never held, and one in flight holds nothing back.
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 100]);
    a.write(&[1; 1448]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 0, 1448), (0, 1448, 100)]);
    a.write(&[1; 1448]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 1548, 1448)], "though the 100 bytes are unacknowledged");
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 1448]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 0, 1448)]);
    a.write(&[1; 100]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 1448, 100)], "only a full segment is in flight");
}

/// A segment cut to a subflow's smaller MSS (a path MTU below the
/// connection's, `pmtu.rs`) is a full segment there: the tail of a write
/// behind two of them goes at once, as Linux compares with the current MSS.
/// A short write after that tail still waits for it.
#[test]
fn a_segment_that_fills_a_smaller_mss_is_not_short_for_nagle() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.set_subflow_mss(SubflowId(0), 1000);
    a.write(&[1; 2500]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![(0, 0, 1000), (0, 1000, 1000), (0, 2000, 500)]);
    a.write(&[2; 100]);
    assert_eq!(data_sent(&mut a, Instant::ZERO), vec![], "held behind the unacknowledged 500 bytes");
}

/// Redundant scheduling: each subflow carries every segment once.
#[test]
fn redundant_subflows_each_carry_every_segment() {
    let cfg = Config { nodelay: true, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "redundant", 2);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 3000]);
    let mut sent = data_sent(&mut a, Instant::ZERO);
    sent.sort();
    let each = [(0, 1448), (1448, 1448), (2896, 104)];
    let want: Vec<_> = [0, 1].iter().flat_map(|&sf| each.map(|(dsn, len)| (sf, dsn, len))).collect();
    assert_eq!(sent, want);
}

/// A subflow suspected dead keeps probing at least every failure timeout
/// / 8 (7.5 s by default), however far its RTO has backed off, so it is
/// found again soon after its path returns.
#[test]
fn a_dead_paths_retransmissions_are_at_most_an_eighth_of_the_failure_timeout_apart() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 1000]);
    let mut sent = Vec::new();
    let lost = |now: Instant, to_b: bool, _: &braid_proto::Packet| {
        if to_b {
            sent.push(now);
        }
        to_b
    };
    let end = common::drive(&mut a, &mut b, 10, 50_000, |_, _| false, lost);
    assert!(end.is_err(), "nothing gets through");
    let gaps: Vec<u64> = sent.windows(2).map(|w| w[1].saturating_since(w[0]).as_nanos() / 1_000_000).collect();
    assert!(gaps.len() >= 8, "{gaps:?}");
    assert!(gaps.iter().all(|&g| g <= 7_500), "{gaps:?}");
    assert!(gaps.contains(&7_500), "the backoff reaches the cap: {gaps:?}");
}

/// With data waiting and every path dead, the connection fails after the
/// failure timeout, and says so.
#[test]
fn all_paths_dead_fails_the_connection_after_the_timeout() {
    let cfg = Config { failure_timeout: Duration::from_secs(2), ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 2);
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write(&[1; 10_000]);
    let failed = |a: &mut Connection, _: &mut Connection| a.error().is_some();
    let end = common::drive(&mut a, &mut b, 10, 30_000, failed, |_, to_b, _| to_b).expect("fails");
    let e = a.error().unwrap();
    assert_eq!(e, braid_proto::ConnectionError::AllPathsDown { for_at_least: Duration::from_secs(2) });
    assert_eq!(e.to_string(), "no usable path for 2.000 s with data waiting");
    assert!(end < Instant::ZERO + Duration::from_secs(10), "{end:?}");
}

/// A client whose opening nobody answers fails after the failure timeout,
/// with nothing written (a caller waiting for the connection to open):
/// Linux's `connect` gives up after `tcp_syn_retries`. It waited forever,
/// as the failure timer ran only while written data waited. Every one of
/// its paths is tried; once the server answers, an idle client waits.
#[test]
fn an_unanswered_opening_fails_the_client_after_the_timeout() {
    let cfg = Config { failure_timeout: Duration::from_secs(2), ..Config::default() };
    let (mut a, mut b) = common::pair(cfg.clone(), "reno", "minrtt", 2);
    let failed = |a: &mut Connection, _: &mut Connection| a.error().is_some();
    let end = common::drive(&mut a, &mut b, 10, 30_000, failed, |_, to_b, _| to_b).expect("fails");
    assert_eq!(a.error(), Some(braid_proto::ConnectionError::Unanswered { for_at_least: Duration::from_secs(2) }));
    assert_eq!(a.error().unwrap().to_string(), "no answer to the opening for 2.000 s");
    assert!(end < Instant::ZERO + Duration::from_secs(10), "{end:?}");
    assert!((0..2).all(|i| a.subflow_stats(i).unwrap().counters.packets_sent > 0), "both paths tried");

    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 2);
    common::open(&mut a, &mut b, Instant::ZERO);
    let end = common::drive(&mut a, &mut b, 10, 30_000, failed, |_, to_b, _| to_b);
    assert!(end.is_err() && a.error().is_none(), "an open, idle client does not fail: {:?}", a.error());
}

/// A sender blocked by the peer's full receive window counts one stall per
/// episode, not per attempt: 50 segments through a 20-segment window that
/// the reader empties only when full stall twice (the last 10 fit). (A
/// window that is not a whole number of segments stalls twice per fill:
/// once on the runt left at its end, once when full.)
#[test]
fn window_stalls_count_episodes_of_a_full_peer_window() {
    const WINDOW: usize = 20 * 1448;
    let cfg = Config { recv_buffer: WINDOW as u64, ack_every: 1, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    a.write(&[3; 50 * 1448]);
    let mut buf = vec![0; WINDOW];
    let drained = |a: &mut Connection, b: &mut Connection| {
        if b.readable() == WINDOW as u64 {
            assert_eq!(b.read(&mut buf), WINDOW);
        }
        a.all_acked()
    };
    common::drive(&mut a, &mut b, 10, 10_000, drained, |_, _, _| false).expect("transfer");
    assert_eq!(a.stats().window_stalls, 2);
    assert_eq!(b.stats().window_stalls, 0, "the reader never waited");
}

/// Slow start after idle (`Config::restart_after_idle`): a subflow that
/// sent nothing for longer than its RTO restarts from the initial window
/// when it sends again (its RTO is the 200 ms minimum here: packets are
/// delivered at once); one idle for less keeps its window; without the
/// setting the window is kept.
#[test]
fn a_window_restarts_after_an_idle_rto_only_when_asked() {
    let cwnd_after_idle = |restart: bool, idle_ms: u64| {
        let cfg = Config { restart_after_idle: restart, ack_every: 1, ..Config::default() };
        let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
        common::open(&mut a, &mut b, Instant::ZERO);
        let exchange_all = |a: &mut Connection, b: &mut Connection, now: Instant| {
            while !a.all_acked() {
                let sent: Vec<_> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
                for p in sent {
                    b.handle_datagram(now, p).expect("well-formed");
                }
                b.consume(u64::MAX);
                while let Some(p) = b.poll_transmit(now) {
                    a.handle_datagram(now, p).expect("well-formed");
                }
            }
        };
        a.write_zeros(200_000);
        exchange_all(&mut a, &mut b, Instant::ZERO);
        let before = a.subflow_stats(0).unwrap().cwnd;
        let later = Instant::ZERO + Duration::from_millis(idle_ms);
        a.write_zeros(100_000);
        let first = a.poll_transmit(later).expect("data goes out");
        assert!(matches!(first.frame, Frame::Data(ref d) if d.len > 0));
        (before, a.subflow_stats(0).unwrap().cwnd)
    };
    let (grown, restarted) = cwnd_after_idle(true, 2_000);
    assert!(grown > 100_000, "slow start grew the window: {grown}");
    assert_eq!(restarted, 10 * 1448, "ten RTOs idle: back to the initial window");
    assert_eq!(cwnd_after_idle(true, 150), (grown, grown), "idle for less than the RTO");
    assert_eq!(cwnd_after_idle(false, 2_000), (grown, grown), "not asked for");
}

/// The controller sees the subflows as they are (the connection's path
/// views): LIA's coupled increase on two equal subflows that lose a packet
/// in 50 keeps their windows together near one Reno flow's, where
/// uncoupled Reno keeps two. (Without the views LIA could not couple and
/// would match Reno.)
#[test]
fn lia_couples_the_windows_of_a_connection() {
    let windows = |cc: &str| {
        let (mut a, mut b) = common::pair(Config::default(), cc, "minrtt", 2);
        a.write_zeros(3_000_000);
        let mut sent = [0u32; 2];
        let drop = |_, to_b: bool, p: &braid_proto::Packet| {
            let Frame::Data(d) = &p.frame else { return false };
            if !to_b || d.len == 0 {
                return false;
            }
            let n = &mut sent[usize::from(p.subflow.0)];
            *n += 1;
            n.is_multiple_of(50)
        };
        // The two windows' sum, averaged over the events of the second
        // half of the transfer (past slow start; the last event alone may
        // catch a window just after a timeout).
        let (mut total, mut samples) = (0u64, 0u64);
        let done = |a: &mut Connection, b: &mut Connection| {
            b.consume(u64::MAX);
            if b.stats().bytes_received > 1_500_000 {
                total += (0..2).filter_map(|i| a.subflow_stats(i)).map(|s| s.cwnd).sum::<u64>();
                samples += 1;
            }
            a.all_acked()
        };
        common::drive(&mut a, &mut b, 10, 60_000, done, drop).expect("transfer");
        println!("{cc}: windows' sum {} on average", total / samples);
        total / samples
    };
    let (lia, reno) = (windows("lia"), windows("reno"));
    assert!((lia as f64) < 0.75 * reno as f64, "LIA {lia} against Reno {reno}");
}

/// The failure timer is for data that cannot move: a connection with
/// everything acknowledged and no subflow left (its path went away) waits
/// for a new one however long it takes, but fails once data waits.
#[test]
fn without_subflows_only_waiting_data_fails_the_connection() {
    let cfg = Config { failure_timeout: Duration::from_millis(300), ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    common::open(&mut a, &mut b, Instant::ZERO);
    assert!(a.all_acked());
    a.remove_subflow(braid_proto::SubflowId(0));
    let later = Instant::ZERO + Duration::from_secs(10);
    a.handle_timeout(later);
    assert_eq!(a.poll_timeout(), None, "no timer: nothing is waiting");
    assert_eq!(a.error(), None);
    a.write(&[1; 1000]);
    assert!(a.poll_transmit(later).is_none(), "no subflow to carry it");
    let deadline = a.poll_timeout().expect("the failure timer runs");
    a.handle_timeout(deadline);
    assert!(a.error().is_some(), "data waited with no subflow for the timeout");
}

/// A delay spike: a window's acknowledgements arrive after the sender's
/// retransmission timer fired, before its retransmission reached the
/// receiver. They show the timeout was spurious, and the window it cut
/// comes back, as Linux undoes it (Eifel detection, here by packet
/// number). When the window's packets really were lost, the cut stays.
#[test]
fn a_spurious_timeout_gives_the_window_back() {
    let run = |acks_arrive: bool| {
        let (mut a, mut b) = common::pair(Config { ack_every: 1, ..Config::default() }, "reno", "minrtt", 1);
        let t0 = Instant::ZERO + Duration::from_millis(10);
        common::open(&mut a, &mut b, Instant::ZERO);
        a.write_zeros(1_000_000);
        let window: Vec<_> = std::iter::from_fn(|| a.poll_transmit(t0)).collect();
        let before = a.subflow_stats(0).unwrap().cwnd;
        if acks_arrive {
            window.into_iter().for_each(|p| assert!(b.handle_datagram(t0, p).unwrap()));
        }
        let held: Vec<_> = std::iter::from_fn(|| b.poll_transmit(t0)).collect();
        let mut now = t0;
        while a.subflow_stats(0).unwrap().counters.rtos == 0 {
            now = a.poll_timeout().expect("the retransmission timer");
            a.handle_timeout(now);
        }
        assert_eq!(a.subflow_stats(0).unwrap().cwnd, 1448, "the timeout cuts the window");
        let retransmission: Vec<_> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
        let later = now + Duration::from_millis(1);
        let acks = if acks_arrive {
            held
        } else {
            retransmission.into_iter().for_each(|p| assert!(b.handle_datagram(later, p).unwrap()));
            std::iter::from_fn(|| b.poll_transmit(later)).collect()
        };
        acks.into_iter().for_each(|p| assert!(a.handle_datagram(later, p).unwrap()));
        let s = a.subflow_stats(0).unwrap();
        if acks_arrive {
            // The undo ends the timeout series: should the retransmission
            // now time out (it is never delivered here), that cuts again.
            assert!(!s.potentially_failed);
            while a.subflow_stats(0).unwrap().counters.rtos == 1 {
                let next = a.poll_timeout().expect("the retransmission's timer");
                a.handle_timeout(next);
            }
            assert_eq!(a.subflow_stats(0).unwrap().cwnd, 1448, "a real timeout after the undo cuts");
        }
        // In segments.
        (before / 1448, s.cwnd / 1448, s.counters.spurious_rtos)
    };
    let (before, after, spurious) = run(true);
    assert_eq!((spurious, after >= before), (1, true), "{before} segments before, {after} after");
    let (before, after, spurious) = run(false);
    assert_eq!((spurious, after < before), (0, true), "{before} segments before, {after} after");
}
