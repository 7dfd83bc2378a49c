//! Invariants every scheduler and controller must keep, over random path
//! sets: a packet never goes beyond its subflow's congestion window or the
//! peer's receive window, the receiver never holds more than its buffer,
//! its Data ACK and window edge never move back, every byte arrives once and
//! in order, and duplicates (redundant copies, retransmissions) are never
//! counted as new data twice. Paths lose data and ACKs and reorder packets
//! (each packet gets its own random extra delay). The core's own
//! `debug_assert!` checks run too (tests build with debug assertions).

mod common;

use std::collections::BTreeMap;

use braid_proto::{cc, sched, Config, Connection, Duration, Frame, Instant, Packet, SendAutotune};
use common::Rng;

/// Reads up to `max` in-order bytes onto the end of `got`.
fn read_some(conn: &mut Connection, got: &mut Vec<u8>, max: usize) {
    let mut buf = [0u8; 16_384];
    let mut left = max;
    while left > 0 {
        let n = conn.read(&mut buf[..left.min(16_384)]);
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        left -= n;
    }
}

struct Case {
    delays: Vec<u64>,
    jitter: Vec<u64>,
    loss: Vec<f64>,
    ack_loss: Vec<f64>,
    app_limited: bool,
    /// The receiving application reads at most this much per step.
    read_chunk: usize,
    cc: &'static str,
    config: Config,
}

impl Case {
    fn random(seed: u64) -> Case {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let n = 1 + rng.below(4) as usize;
        let mut per_path = |f: &mut dyn FnMut(&mut Rng) -> u64| (0..n).map(|_| f(&mut rng)).collect::<Vec<u64>>();
        let delays = per_path(&mut |r| 1 + r.below(80));
        let jitter = per_path(&mut |r| if r.chance(0.5) { 0 } else { r.below(20) });
        let loss = per_path(&mut |r| r.below(5)).into_iter().map(|p| p as f64 / 100.0).collect();
        let ack_loss = per_path(&mut |r| r.below(5)).into_iter().map(|p| p as f64 / 100.0).collect();
        let buffer = |r: &mut Rng| 2_048 + r.below(400_000);
        let config = Config {
            send_buffer: buffer(&mut rng),
            recv_buffer: buffer(&mut rng),
            send_autotune: if rng.chance(0.3) { SendAutotune::Seed003 } else { SendAutotune::Off },
            recv_autotune: rng.chance(0.3),
            opportunistic_retransmission: [None, Some(true), Some(false)][rng.below(3) as usize],
            nodelay: rng.chance(0.5),
            ack_every: 1 + rng.below(3) as u32,
            ..Config::default()
        };
        Case {
            delays,
            jitter,
            loss,
            ack_loss,
            app_limited: rng.chance(0.5),
            read_chunk: if rng.chance(0.5) { usize::MAX } else { 100 + rng.below(20_000) as usize },
            cc: cc::ALGORITHMS[rng.below(cc::ALGORITHMS.len() as u64) as usize].0,
            config,
        }
    }
}

/// Runs one random case with `scheduler`: 300 kB from a to b.
fn check(scheduler: &str, seed: u64) {
    let c = Case::random(seed);
    let mut rng = Rng(seed ^ 0x5555);
    let n_paths = c.delays.len();
    let (mut a, mut b) = common::pair(c.config.clone(), c.cc, scheduler, n_paths);
    let data: Vec<u8> = (0..300_000).map(|_| rng.next() as u8).collect();
    let mut wire: BTreeMap<(Instant, u64), (bool, Packet)> = BTreeMap::new();
    let (mut now, mut seq, mut written, mut got) = (Instant::ZERO, 0u64, 0usize, Vec::new());
    let case = format!(
        "{scheduler}/{} seed {seed}: delays {:?} jitter {:?} loss {:?} ack loss {:?} app-limited {} reads {}",
        c.cc, c.delays, c.jitter, c.loss, c.ack_loss, c.app_limited, c.read_chunk
    );
    let (mut data_ack, mut window_end) = (0, 0);
    for _ in 0..3_000_000 {
        let upto = if c.app_limited { data.len().min(written + rng.below(3_000) as usize) } else { data.len() };
        written += a.write(&data[written..upto]);
        read_some(&mut b, &mut got, c.read_chunk);
        if got.len() == data.len() {
            assert!(got == data, "{case}: stream corrupted");
            let new: u64 = (0..n_paths).filter_map(|i| b.subflow_stats(i)).map(|s| s.counters.bytes_received_new).sum();
            assert_eq!(new, data.len() as u64 + b.stats().pruned_bytes, "{case}: duplicates counted as new data");
            return;
        }
        loop {
            let before: Vec<_> = (0..n_paths).map(|i| a.subflow_stats(i).unwrap()).collect();
            let peer_window = a.stats().peer_window_end;
            let Some(p) = a.poll_transmit(now) else { break };
            if let Frame::Data(d) = &p.frame {
                let s = &before[p.subflow.index()];
                if d.len > 0 {
                    assert!(
                        s.bytes_in_flight == 0 || s.bytes_in_flight + u64::from(d.len) <= s.cwnd,
                        "{case}: {} in flight + {} beyond cwnd {} on subflow {}",
                        s.bytes_in_flight,
                        d.len,
                        s.cwnd,
                        p.subflow.0
                    );
                    assert!(d.dsn + u64::from(d.len) <= peer_window, "{case}: beyond the receive window");
                }
            }
            let path = p.subflow.index();
            if !rng.chance(c.loss[path]) {
                seq += 1;
                let at = now + Duration::from_millis(c.delays[path] + rng.below(c.jitter[path] + 1));
                wire.insert((at, seq), (true, p));
            }
        }
        while let Some(p) = b.poll_transmit(now) {
            let path = p.subflow.index();
            if let Frame::Ack(ack) = &p.frame {
                assert!(ack.data_ack >= data_ack, "{case}: the Data ACK moved back");
                assert!(ack.window_end >= window_end, "{case}: the window edge moved back");
                (data_ack, window_end) = (ack.data_ack, ack.window_end);
            }
            if !rng.chance(c.ack_loss[path]) {
                seq += 1;
                let at = now + Duration::from_millis(c.delays[path] + rng.below(c.jitter[path] + 1));
                wire.insert((at, seq), (false, p));
            }
        }
        let timer = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        let next = wire.keys().next().map(|k| k.0);
        match (next, timer) {
            // Nothing on the wire, no timer: the application is still reading.
            (None, None) if b.readable() > 0 => {}
            (None, None) => panic!("{case}: deadlock at {} of {} bytes", got.len(), data.len()),
            (Some(t), tm) if tm.is_none_or(|tm| t <= tm) => {
                let ((at, _), (to_b, p)) = wire.pop_first().unwrap();
                now = at;
                let conn = if to_b { &mut b } else { &mut a };
                conn.handle_datagram(now, p).expect("well-formed");
                let r = b.stats();
                assert!(r.ooo_bytes + (r.bytes_received - r.bytes_read) <= r.recv_buffer, "{case}: receiver overfull");
            }
            (_, tm) => {
                now = now.max(tm.expect("a timer, since no packet comes first"));
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
        }
        assert!(a.error().is_none(), "{case}: the connection failed: {:?}", a.error());
    }
    panic!("{case}: did not finish ({} of {} bytes)", got.len(), data.len());
}

#[test]
fn every_scheduler_keeps_windows_and_delivers_once() {
    for &(name, _) in sched::ALGORITHMS {
        for seed in 1..=40 {
            check(name, seed);
        }
    }
}
