//! Two connections driven directly, without the simulator: a minimal wire
//! with per-path delay and seeded loss, in the style of quinn-proto's tests.

mod common;

use std::collections::BTreeMap;

use braid_proto::{AckFrame, Config, Connection, DataFrame, Duration, Frame, Instant, Packet};
use common::{read_all, Rng};

fn pair(paths: usize, config: Config) -> (Connection, Connection) {
    common::pair(config, "lia", "minrtt", paths)
}

/// Moves `data` from a to b over paths with the given one-way delays and
/// loss rates; returns what b read and the virtual time taken.
fn transfer(data: &[u8], delays_ms: &[u64], loss: &[f64], seed: u64) -> (Vec<u8>, Instant) {
    let (mut a, mut b) =
        pair(delays_ms.len(), Config { send_buffer: 256 * 1024, recv_buffer: 256 * 1024, ..Config::default() });
    let mut rng = Rng(seed);
    // In flight: (arrival time, sequence) -> (to b?, packet)
    let mut wire: BTreeMap<(Instant, u64), (bool, Packet)> = BTreeMap::new();
    let (mut now, mut seq, mut written, mut got) = (Instant::ZERO, 0u64, 0usize, Vec::new());
    for _ in 0..10_000_000 {
        written += a.write(&data[written..]);
        read_all(&mut b, &mut got);
        if got.len() == data.len() {
            return (got, now);
        }
        for (to_b, conn) in [(true, &mut a), (false, &mut b)] {
            while let Some(p) = conn.poll_transmit(now) {
                let path = p.subflow.index();
                // Data is lost on the forward direction only.
                if to_b && rng.chance(loss[path]) {
                    continue;
                }
                seq += 1;
                wire.insert((now + Duration::from_millis(delays_ms[path]), seq), (to_b, p));
            }
        }
        let next_timer = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        let next_packet = wire.keys().next().map(|k| k.0);
        let packet_first = match (next_packet, next_timer) {
            (None, None) => panic!("deadlock: nothing in flight, no timer, {} of {} bytes read", got.len(), data.len()),
            (Some(p), Some(t)) => p <= t,
            (p, _) => p.is_some(),
        };
        if packet_first {
            let ((at, _), (to_b, pkt)) = wire.pop_first().unwrap();
            now = at;
            let conn = if to_b { &mut b } else { &mut a };
            conn.handle_datagram(now, pkt).expect("well-formed");
        } else {
            now = now.max(next_timer.unwrap());
            a.handle_timeout(now);
            b.handle_timeout(now);
        }
    }
    panic!("did not finish")
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u8).collect()
}

#[test]
fn bytes_arrive_once_in_order_over_lossy_unequal_paths() {
    for seed in 1..=5 {
        let data = pattern(3_000_000, seed);
        let (got, t) = transfer(&data, &[5, 50], &[0.02, 0.001], seed);
        println!("seed {seed}: 3 MB in {:.3} virtual s", t.as_secs_f64());
        assert!(got == data, "seed {seed}: stream corrupted");
    }
}

#[test]
fn single_path_is_plain_tcp() {
    let data = pattern(500_000, 9);
    let (got, _) = transfer(&data, &[10], &[0.05], 9);
    assert!(got == data);
}

/// Packets a confused or hostile peer could send: nothing panics, and the
/// connection still completes a transfer afterwards.
#[test]
fn hostile_packets_do_not_panic() {
    let (mut a, mut b) = pair(2, Config::default());
    common::open(&mut a, &mut b, Instant::ZERO);
    let mut r = Rng(42);
    let now = Instant::from_nanos(1_000_000);
    for _ in 0..20_000 {
        let pick = |r: &mut Rng| match r.next() % 4 {
            0 => 0,
            1 => u64::MAX,
            2 => r.next() % 100,
            _ => r.next(),
        };
        let subflow = (r.next() % 4) as u8;
        let frame = if r.next().is_multiple_of(2) {
            let len = (r.next() % 3000) as u32;
            let payload = vec![7u8; (r.next() % 2000) as usize];
            Frame::Data(DataFrame { pn: pick(&mut r), pn_floor: pick(&mut r), dsn: pick(&mut r), len, payload })
        } else {
            let mut sack = [(0, 0); 3];
            for s in &mut sack {
                *s = (pick(&mut r), pick(&mut r));
            }
            Frame::Ack(AckFrame {
                cumulative: pick(&mut r),
                sack,
                sack_len: (r.next() % 5) as u8,
                data_ack: pick(&mut r),
                window_end: pick(&mut r),
            })
        };
        // Both sides, client and server, take the same abuse.
        for c in [&mut a, &mut b] {
            c.write(&[1, 2, 3]);
            let packet = Packet::new(braid_proto::SubflowId(subflow), frame.clone());
            let verdict = packet.check();
            assert_eq!(c.handle_datagram(now, packet), verdict);
            while c.poll_transmit(now).is_some() {}
            c.handle_timeout(now + Duration::from_secs(1));
            let mut buf = [0u8; 4096];
            c.read(&mut buf);
        }
    }
    assert!(a.stats().invalid_packets > 1000, "the generator produced invalid packets");
}
