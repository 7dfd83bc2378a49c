//! Traffic sources: a constant-rate application delivers its rate (not the
//! path's), is never held up by the send buffer, and a sized one stops.

mod common;

use braid_proto::{Duration, Instant};
use braid_sim::topology::hybrid_access;
use braid_sim::{Sim, Source};
use common::*;

#[test]
fn constant_rate_source_sends_its_rate_and_stops_at_its_size() {
    let t = || hybrid_access(&[link("L1", 100, 20, 0.0)], 1_000 * MBIT);
    let mut cbr = flow("cbr", "reno", &[0]);
    cbr.source = Source::ConstantRate { bits_per_sec: 5 * MBIT, message: 1000 };
    // A real-time sender turns Nagle's algorithm off (TCP_NODELAY).
    cbr.config.nodelay = true;
    let sim = run(t(), vec![cbr.clone()], 1, 10);
    let (o, mbit) = (sim.outcome(0), goodput_mbit(&sim, 0));
    let delay = o.delay.mean_ms().unwrap();
    println!("5 Mbit/s source over 100 Mbit/s: {mbit:.3} Mbit/s, write-to-read delay {delay:.2} ms");
    // 6250 messages in 10 s, less the last one-way delay's worth in flight.
    assert!((mbit - 5.0).abs() < 0.05, "{mbit:.3} Mbit/s");
    // One-way 10 ms plus a packet's serialisation; nothing waits in a buffer.
    assert!((10.0..11.0).contains(&delay), "{delay:.2} ms");

    cbr.size = Some(100_000);
    let mut sim = braid_sim::Sim::new(t(), vec![cbr], 1).unwrap();
    sim.run(Instant::ZERO + Duration::from_secs(10));
    let o = sim.outcome(0);
    let done = o.completed_at.expect("finished").as_secs_f64();
    println!("100 kB at 5 Mbit/s: written {} B, done at {done:.3} s", o.written);
    // 100 messages: the last is written at 99 * 1.6 ms = 158.4 ms and
    // arrives 10 ms (one way) plus its serialisation later.
    assert_eq!((o.written, o.delivered), (100_000, 100_000));
    assert!((0.168..0.170).contains(&done), "{done:.4} s");
}

/// Nagle's algorithm: 1000-byte messages every 1.6 ms over a 20 ms RTT go
/// out as one short segment per round trip and full segments otherwise,
/// each waiting at most until a segment fills; with TCP_NODELAY each
/// message is a packet of its own, sent at once.
#[test]
fn nagle_coalesces_short_messages_unless_nodelay() {
    let t = || hybrid_access(&[link("L1", 100, 20, 0.0)], 1_000 * MBIT);
    let packets = |nodelay: bool| {
        let mut f = flow("cbr", "reno", &[0]);
        f.source = Source::ConstantRate { bits_per_sec: 5 * MBIT, message: 1000 };
        f.config.nodelay = nodelay;
        let sim = run(t(), vec![f], 1, 10);
        let sent = sim.sender(0).subflow_stats(0).unwrap().counters.packets_sent;
        (sent, sim.outcome(0).delay.mean_ms().unwrap(), goodput_mbit(&sim, 0))
    };
    let (nagle, nagle_delay, nagle_mbit) = packets(false);
    let (nodelay, nodelay_delay, _) = packets(true);
    println!("packets: Nagle {nagle} ({nagle_delay:.2} ms), nodelay {nodelay} ({nodelay_delay:.2} ms)");
    // 6250 messages, 6.25 MB: about 4317 full segments plus about one
    // short segment per 20 ms round trip (500).
    assert!((6240..=6260).contains(&nodelay), "{nodelay} packets");
    assert!((4300..=5000).contains(&nagle), "{nagle} packets");
    assert!((nagle_mbit - 5.0).abs() < 0.05, "{nagle_mbit:.3} Mbit/s");
    // A message waits for the next one to fill its segment: under 1.6 ms more on average.
    assert!(nagle_delay > nodelay_delay && nagle_delay < nodelay_delay + 1.6, "{nagle_delay:.2} ms");
}

/// One-byte messages at 1 Gbit/s are 125 million writes a second; the
/// application wakes at most every 10 µs and writes what is due, so the
/// run costs thousands of events, not millions, and still writes the rate.
#[test]
fn tiny_messages_at_a_high_rate_do_not_flood_the_event_queue() {
    let t = hybrid_access(&[link("L1", 10_000, 1, 0.0)], 100_000 * MBIT);
    let mut f = flow("tiny", "reno", &[0]);
    f.source = Source::ConstantRate { bits_per_sec: 1_000 * MBIT, message: 1 };
    let mut sim = braid_sim::Sim::new(t, vec![f], 1).unwrap();
    sim.run(Instant::ZERO + Duration::from_millis(50));
    let written = sim.outcome(0).written;
    println!("{written} B written in 50 ms with {} events", sim.events_run());
    // 50 ms at 1 Gbit/s: 6.25 MB (the last wake-up may be up to 10 µs short).
    assert!((6_235_000..=6_250_001).contains(&written), "{written} B");
    assert!(sim.events_run() < 100_000, "{} events", sim.events_run());
}

/// A bulk writer held up by a full send buffer is woken as Linux wakes
/// one (`sk_stream_is_writeable`): once the free space is at least half of
/// what is queued, about a third of the buffer, and not by every Data ACK.
/// So between events the buffer is never left that empty, and after the
/// first fill every write is at least a third of the buffer. Random paths
/// (10-50 Mbit/s), buffers (16-128 KiB) and controllers, watched every
/// 100 µs.
#[test]
fn a_blocked_writer_wakes_when_a_third_of_the_buffer_is_free() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for case in 0..8 {
        let paths = rng.gen_range(1..=2usize);
        let links: Vec<_> =
            (0..paths).map(|p| link(&format!("L{p}"), rng.gen_range(10..=50), rng.gen_range(5..=100), 0.002)).collect();
        let cc = ["reno", "lia", "cubic", "olia"][rng.gen_range(0..4)];
        // At least 10 Mbit/s for 2 s through at most 128 KiB: a dozen or more
        // refills of a third each.
        let buffer = rng.gen_range(16_384..=131_072u64);
        let mut f = flow("bulk", cc, &(0..paths).collect::<Vec<_>>());
        f.config.send_buffer = buffer;
        let mut sim = Sim::new(hybrid_access(&links, 1_000 * MBIT), vec![f], case).unwrap();
        let (mut written, mut refills) = (0, 0);
        for step in 1..=20_000u64 {
            sim.run(Instant::ZERO + Duration::from_micros(100 * step));
            let conn = sim.sender(0);
            let (room, now) = (conn.send_room(), sim.outcome(0).written);
            let queued = buffer - room;
            assert!(room < queued / 2, "case {case} ({cc}, {buffer} B) at {step}: {room} B free, {queued} queued");
            if written > 0 && now > written {
                let wrote = now - written;
                assert!(wrote >= buffer / 3, "case {case} ({cc}, {buffer} B) at {step}: a write of {wrote} B");
                refills += 1;
            }
            written = now;
        }
        println!("case {case}: {paths} path(s), {cc}, {buffer} B buffer: {refills} refills in 2 s");
        assert!(refills >= 5, "case {case}: {refills} refills");
    }
}
