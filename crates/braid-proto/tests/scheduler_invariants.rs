//! Invariants every scheduler must keep, over random path sets: a packet
//! never goes beyond its subflow's congestion window or the peer's receive
//! window, every byte arrives once and in order, and duplicates (redundant
//! copies, retransmissions) are never counted as new data twice.

mod common;

use std::collections::BTreeMap;

use braid_proto::{cc, sched, Config, Connection, Duration, Frame, Instant, Packet};
use common::{read_all, Rng};

/// One random case: paths with random delays and loss, random buffers, and
/// a bulk or an application-limited writer (a few bytes per event).
fn check(scheduler: &str, seed: u64) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n_paths = 1 + rng.below(3) as usize;
    let delays: Vec<u64> = (0..n_paths).map(|_| 1 + rng.below(80)).collect();
    let loss: Vec<f64> = (0..n_paths).map(|_| rng.below(4) as f64 / 100.0).collect();
    let config = Config {
        send_buffer: 16_384 + rng.below(200_000),
        recv_buffer: 16_384 + rng.below(200_000),
        opportunistic_retransmission: Some(rng.below(2) == 0),
        ..Config::default()
    };
    let app_limited = rng.below(2) == 0;
    let make = || Connection::new(config.clone(), cc::by_name("lia").unwrap(), sched::by_name(scheduler).unwrap());
    let (mut a, mut b) = (make(), make());
    for _ in 0..n_paths {
        a.add_subflow(false).unwrap();
        b.add_subflow(false).unwrap();
    }
    let data: Vec<u8> = (0..300_000).map(|_| rng.next() as u8).collect();
    let mut wire: BTreeMap<(Instant, u64), (bool, Packet)> = BTreeMap::new();
    let (mut now, mut seq, mut written, mut got) = (Instant::ZERO, 0u64, 0usize, Vec::new());
    let case = format!("{scheduler} seed {seed}: delays {delays:?} loss {loss:?} app-limited {app_limited}");
    for _ in 0..2_000_000 {
        let upto = if app_limited { data.len().min(written + rng.below(3_000) as usize) } else { data.len() };
        written += a.write(&data[written..upto]);
        read_all(&mut b, &mut got);
        if got.len() == data.len() {
            assert!(got == data, "{case}: stream corrupted");
            let new: u64 = (0..n_paths).map(|i| b.subflow_stats(i).unwrap().counters.bytes_received_new).sum();
            assert_eq!(new, data.len() as u64, "{case}: duplicates counted as new data");
            return;
        }
        loop {
            let before: Vec<_> = (0..n_paths).map(|i| a.subflow_stats(i).unwrap()).collect();
            let window_end = a.stats().peer_window_end;
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
                    assert!(d.dsn + u64::from(d.len) <= window_end, "{case}: beyond the receive window");
                }
            }
            let path = p.subflow.index();
            if !rng.chance(loss[path]) {
                seq += 1;
                wire.insert((now + Duration::from_millis(delays[path]), seq), (true, p));
            }
        }
        while let Some(p) = b.poll_transmit(now) {
            seq += 1;
            wire.insert((now + Duration::from_millis(delays[p.subflow.index()]), seq), (false, p));
        }
        let timer = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        let next = wire.keys().next().map(|k| k.0);
        match (next, timer) {
            (None, None) => panic!("{case}: deadlock at {} of {} bytes", got.len(), data.len()),
            (Some(t), tm) if tm.is_none_or(|tm| t <= tm) => {
                let ((at, _), (to_b, p)) = wire.pop_first().unwrap();
                now = at;
                let conn = if to_b { &mut b } else { &mut a };
                conn.handle_datagram(now, p).expect("well-formed");
            }
            (_, tm) => {
                now = now.max(tm.expect("a timer, since no packet comes first"));
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
        }
    }
    panic!("{case}: did not finish ({} of {} bytes)", got.len(), data.len());
}

#[test]
fn every_scheduler_keeps_windows_and_delivers_once() {
    for &(name, _) in sched::ALGORITHMS {
        for seed in 1..=12 {
            check(name, seed);
        }
    }
}
