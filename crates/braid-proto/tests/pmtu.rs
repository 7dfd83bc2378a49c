//! Paths that carry less than the configured MSS (`connection/pmtu.rs`):
//! black-hole detection brings a subflow whose full-sized packets vanish
//! back to life, and segments sent, queued or reinjected at the larger
//! size go out in pieces of the smaller one, every byte intact.

mod common;

use braid_proto::{Config, Connection, Frame, Instant, Packet, SubflowId};
use common::{open, pair, read_all, Rng};

/// The payload of a data packet (0 for anything else).
fn payload(p: &Packet) -> u32 {
    match &p.frame {
        Frame::Data(d) => d.len,
        _ => 0,
    }
}

/// The byte at offset `i` of the client's stream.
fn byte(i: usize) -> u8 {
    (i % 251) as u8
}

/// Client writes `total` bytes, at most `per_step` in each step of
/// `step_ms` of virtual time (so that a transfer lasts long enough for
/// timeouts), `between(step, client)` running between steps; returns what
/// the server read, or why it did not finish by `limit_ms`.
#[allow(clippy::too_many_arguments)]
fn transfer_steps(
    a: &mut Connection,
    b: &mut Connection,
    total: usize,
    per_step: usize,
    step_ms: u64,
    limit_ms: u64,
    mut drop: impl FnMut(bool, &Packet) -> bool,
    mut between: impl FnMut(u64, &mut Connection),
) -> Result<Vec<u8>, String> {
    let data: Vec<u8> = (0..total).map(byte).collect();
    let (mut written, mut got) = (0, Vec::new());
    let mut wire = Wire::default();
    let mut now = Instant::ZERO;
    let mut step = 0;
    while got.len() < total {
        if now.as_nanos() > limit_ms * 1_000_000 {
            return Err(format!("{} of {total} bytes by {limit_ms} ms", got.len()));
        }
        let end = Instant::from_nanos((step + 1) * step_ms * 1_000_000);
        let allowed = (written + per_step).min(total);
        wire.run(a, b, now, end, &mut drop, |a, b| {
            written += a.write(&data[written..allowed.max(written)]);
            read_all(b, &mut got);
        });
        now = end;
        step += 1;
        between(step, a);
    }
    Ok(got)
}

/// [`transfer_steps`] at 4 Mbit/s: 50 kB per step of 0.1 s.
fn at_4_mbps(
    a: &mut Connection,
    b: &mut Connection,
    total: usize,
    limit_ms: u64,
    drop: impl FnMut(bool, &Packet) -> bool,
    between: impl FnMut(u64, &mut Connection),
) -> Result<Vec<u8>, String> {
    transfer_steps(a, b, total, 50_000, 100, limit_ms, drop, between)
}

/// Packets on their way, delivered 10 ms after they are sent.
#[derive(Default)]
struct Wire {
    queue: std::collections::BTreeMap<(Instant, u64), (bool, Packet)>,
    seq: u64,
}

impl Wire {
    fn run(
        &mut self,
        a: &mut Connection,
        b: &mut Connection,
        mut now: Instant,
        end: Instant,
        drop: &mut impl FnMut(bool, &Packet) -> bool,
        mut apps: impl FnMut(&mut Connection, &mut Connection),
    ) {
        loop {
            apps(a, b);
            for (to_b, c) in [(true, &mut *a), (false, &mut *b)] {
                while let Some(p) = c.poll_transmit(now) {
                    if !drop(to_b, &p) {
                        self.seq += 1;
                        let at = Instant::from_nanos(now.as_nanos() + 10_000_000);
                        self.queue.insert((at, self.seq), (to_b, p));
                    }
                }
            }
            let timer = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
            let next = match (self.queue.keys().next().map(|k| k.0), timer) {
                (Some(t), Some(tm)) => t.min(tm),
                (Some(t), None) => t,
                (None, Some(tm)) => tm,
                (None, None) => return,
            };
            if next > end {
                return;
            }
            now = now.max(next);
            if self.queue.keys().next().is_some_and(|k| k.0 <= now) {
                let (_, (to_b, p)) = self.queue.pop_first().expect("a packet");
                let c = if to_b { &mut *b } else { &mut *a };
                c.handle_datagram(now, p).expect("well-formed");
            } else {
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
        }
    }
}

fn established(config: Config, paths: usize) -> (Connection, Connection) {
    let (mut a, mut b) = pair(config, "reno", "minrtt", paths);
    open(&mut a, &mut b, Instant::ZERO);
    (a, b)
}

const MSS: u32 = 1400;
const FLOOR: u32 = 1100;
/// Where a search settles on a path that carries 1,200-byte payloads:
/// within 8 bytes below the largest MSS whose largest packet fits
/// (`wire::MAX_DATA_OVERHEAD`, 70 bytes, beyond the payload; a probe's own
/// header, without a control, is 14 to 36 bytes, and its payload makes up
/// the rest).
const SETTLED: std::ops::RangeInclusive<u32> = 1200 - 70 + 14 - 7..=1200 - 70 + 36;

/// An open client and server with `paths` subflows, MSS 1,400 and a floor of 1,100.
fn with_floor(paths: usize) -> (Connection, Connection) {
    established(Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() }, paths)
}

/// Every path drops data packets of more than 1,200 payload bytes. With
/// a floor the subflows fall back to it on their second timeout and the
/// transfer completes intact, in 1,100-byte packets from then on; without
/// one nothing larger than the handshake ever arrives.
#[test]
fn a_black_hole_on_every_path_is_found_and_left() {
    let drop_large = |_: bool, p: &Packet| payload(p) > 1200;
    for paths in [1, 2] {
        let config = Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() };
        let (mut a, mut b) = established(config, paths);
        let got = transfer_steps(&mut a, &mut b, 300_000, 30_000, 100, 20_000, drop_large, |_, _| {})
            .unwrap_or_else(|e| panic!("{paths} paths: {e}"));
        assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)), "{paths} paths: bytes differ");
        for i in 0..paths {
            assert_eq!(a.subflow_stats(i).unwrap().mss, FLOOR, "{paths} paths, subflow {i}");
        }
        assert!(a.error().is_none());

        let config = Config { mss: MSS, mss_floor: None, ..Config::default() };
        let (mut a, mut b) = established(config, paths);
        let e = transfer_steps(&mut a, &mut b, 300_000, 30_000, 100, 20_000, drop_large, |_, _| {})
            .expect_err("no floor, no way through");
        assert!(e.starts_with("0 of"), "{paths} paths: {e}");
    }
}

/// A black hole on one path of two: that subflow falls back and carries
/// data again (minRTT gives it little of this 4 Mbit/s stream: the other
/// path, as fast, has room for it all); the clean one keeps its MSS.
#[test]
fn only_the_subflow_in_the_black_hole_falls_back() {
    let (mut a, mut b) = with_floor(2);
    let drop_large = |_: bool, p: &Packet| p.subflow == SubflowId(0) && payload(p) > 1200;
    let got = at_4_mbps(&mut a, &mut b, 2_000_000, 60_000, drop_large, |_, _| {}).expect("completes");
    assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)));
    let (s0, s1) = (a.subflow_stats(0).unwrap(), a.subflow_stats(1).unwrap());
    assert_eq!((s0.mss, s1.mss), (FLOOR, MSS));
    let carried = b.subflow_stats(0).unwrap().counters.bytes_received_new;
    assert!(carried >= u64::from(FLOOR), "subflow 0 carried only {carried} bytes");
}

/// Seeded: paths that carry random sizes, random losses, and the driver
/// lowering a subflow's MSS at random moments of the transfer (with data
/// in flight, queued for retransmission and for reinjection at the old
/// size): every byte arrives, in order, and no packet is larger than its
/// subflow's MSS at the time it was sent.
#[test]
fn segments_are_cut_to_a_falling_mss_without_losing_a_byte() {
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let paths = 1 + rng.below(3) as usize;
        let config = Config {
            mss: MSS,
            mss_floor: Some(FLOOR),
            rack_tlp: rng.chance(0.5),
            // A small window blocks the sender: opportunistic retransmission.
            recv_buffer: [6 << 20, 60_000][rng.below(2) as usize],
            ..Config::default()
        };
        let sched = ["minrtt", "redundant", "rr", "blest", "upstream"][rng.below(5) as usize];
        let (mut a, mut b) = pair(config, "reno", sched, paths);
        open(&mut a, &mut b, Instant::ZERO);
        let caps: Vec<u32> = (0..paths).map(|_| [MSS, 1300, 1200][rng.below(3) as usize]).collect();
        let loss = rng.below(3) as f64 / 100.0;
        let mut drops = Rng(seed);
        let mut lowered = Rng(seed + 1000);
        let largest = std::cell::RefCell::new(vec![MSS; paths]);
        let got = transfer_steps(
            &mut a,
            &mut b,
            400_000,
            8_000,
            20,
            60_000,
            |to_b, p| {
                let i = p.subflow.index();
                if to_b {
                    assert!(payload(p) <= largest.borrow()[i], "seed {seed}: {} bytes on subflow {i}", payload(p));
                }
                (to_b && payload(p) > caps[i]) || drops.chance(loss)
            },
            |_, a| {
                if lowered.chance(0.05) {
                    let i = lowered.below(paths as u64) as usize;
                    let mss = 600 + lowered.below(800) as u32;
                    a.set_subflow_mss(SubflowId(i as u8), mss);
                }
                let mut l = largest.borrow_mut();
                for (i, m) in l.iter_mut().enumerate() {
                    *m = a.subflow_stats(i).unwrap().mss;
                }
            },
        )
        .unwrap_or_else(|e| panic!("seed {seed} ({paths} paths, {sched}, caps {caps:?}, loss {loss}): {e}"));
        assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)), "seed {seed}: bytes differ");
    }
}

/// An outage (every packet of the only path lost for 2 s) looks like a
/// black hole: the subflow falls to the floor, then its probe of the old
/// size, 10 s later, is acknowledged and it takes the size back.
#[test]
fn after_an_outage_a_probe_takes_the_old_size_back() {
    let (mut a, mut b) = with_floor(1);
    let (step, mut sizes) = (std::cell::Cell::new(0), Vec::new());
    let got = at_4_mbps(
        &mut a,
        &mut b,
        8_000_000,
        60_000,
        |to_b, p| {
            if to_b && payload(p) > 0 {
                sizes.push((step.get(), payload(p)));
            }
            (10..30).contains(&step.get())
        },
        |s, a| {
            step.set(s);
            if s == 30 {
                assert_eq!(a.subflow_stats(0).unwrap().mss, FLOOR, "fell back during the outage");
            }
        },
    )
    .expect("completes");
    assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)));
    assert_eq!(a.subflow_stats(0).unwrap().mss, MSS);
    // Back at full size about 10 s after the fall back, not before.
    let first_full = sizes.iter().find(|&&(s, len)| s >= 30 && len == MSS).map(|x| x.0).expect("a full packet");
    assert!((100..=140).contains(&first_full), "first full-sized packet after the outage in step {first_full}");
}

/// No probe while the path is still out (Linux probes only in the open
/// state): an outage of 14 s, longer than the first wait, sees only
/// floor-sized packets after the fall back; the first full-sized one
/// follows the path's return.
#[test]
fn no_probe_while_the_path_is_out() {
    let (mut a, mut b) = with_floor(1);
    let (step, mut sizes) = (std::cell::Cell::new(0), Vec::new());
    let outage = 10..150;
    at_4_mbps(
        &mut a,
        &mut b,
        12_000_000,
        80_000,
        |to_b, p| {
            if to_b && payload(p) > 0 {
                sizes.push((step.get(), payload(p)));
            }
            outage.contains(&step.get())
        },
        |s, _| step.set(s),
    )
    .expect("completes");
    let full = sizes.iter().filter(|&&(s, len)| s >= 20 && len > FLOOR).map(|x| x.0).next();
    assert!(full.is_some_and(|s| s >= outage.end), "a full-sized packet in step {full:?}");
}

/// What the driver says replaces what black-hole detection found: after
/// the fall back, a cap of 1,150 bytes from the driver ends the probing
/// for the old size; nothing larger goes out from then on.
#[test]
fn a_drivers_cap_ends_the_probing() {
    let (mut a, mut b) = with_floor(1);
    let capped = std::cell::Cell::new(false);
    let mut largest_after = 0;
    at_4_mbps(
        &mut a,
        &mut b,
        8_000_000,
        60_000,
        |to_b, p| {
            if to_b && capped.get() {
                largest_after = largest_after.max(payload(p));
            }
            to_b && payload(p) > 1200
        },
        |_, a| {
            if !capped.get() && a.subflow_stats(0).unwrap().mss == FLOOR {
                a.set_subflow_mss(SubflowId(0), 1150);
                capped.set(true);
            }
        },
    )
    .expect("completes");
    assert!(capped.get());
    assert_eq!((a.subflow_stats(0).unwrap().mss, largest_after), (1150, 1150));
}

/// A lasting black hole, the path carrying 1,200-byte payloads: the
/// probe of the old size 10 s after the fall back is lost while the
/// floor-sized packets behind it arrive, so the probes that follow search
/// between the floor and it, at once, until the largest size that got
/// through is within 8 bytes of the smallest that did not; the subflow
/// keeps that size. A new search from the old size starts 10 minutes
/// later. The lost probes are not congestion: no window cut (ssthresh
/// never falls) after the fall back, where they are the only losses.
#[test]
fn a_lasting_black_hole_is_searched_to_within_8_bytes() {
    let (mut a, mut b) = with_floor(1);
    let (step, mut large) = (std::cell::Cell::new(0), Vec::new());
    let fell_back = std::cell::Cell::new(None);
    let (ssthresh, mut cut) = (std::cell::Cell::new(u64::MAX), None);
    let mut old_probes = Vec::new();
    let got = transfer_steps(
        &mut a,
        &mut b,
        58_400_000,
        8_000,
        100,
        800_000,
        |to_b, p| {
            if to_b && fell_back.get().is_some() && payload(p) > FLOOR {
                large.push((step.get(), payload(p)));
            }
            if to_b && payload(p) > MSS {
                old_probes.push(braid_proto::wire::encoded_len(p) as u32);
            }
            to_b && payload(p) > 1200
        },
        |s, a| {
            step.set(s);
            let stats = a.subflow_stats(0).unwrap();
            if fell_back.get().is_none() && stats.mss == FLOOR {
                fell_back.set(Some(s));
            } else if fell_back.get().is_some() {
                if stats.ssthresh < ssthresh.get() && ssthresh.get() != u64::MAX {
                    cut.get_or_insert((s, ssthresh.get(), stats.ssthresh));
                }
                ssthresh.set(stats.ssthresh);
            }
        },
    )
    .expect("completes");
    assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)));
    let mss = a.subflow_stats(0).unwrap().mss;
    assert!(SETTLED.contains(&mss), "settled at {mss}");
    assert_eq!(cut, None, "a window cut (step, ssthresh before, after)");
    let fell_back = fell_back.get().expect("fell back");
    // Each search starts with a probe of the old size (a payload above it:
    // the probe is as large as that MSS's largest packet). The first, 10 s
    // after the fall back, then probes that fail at ever smaller sizes,
    // each sent once, within seconds.
    let old: Vec<u64> = large.iter().filter(|&&(_, len)| len > MSS).map(|x| x.0).collect();
    // Exactly as large as the largest packet of that MSS can be.
    assert!(old_probes.iter().all(|&d| d == MSS + braid_proto::wire::MAX_DATA_OVERHEAD), "{old_probes:?}");
    assert!(old.len() >= 2, "old-size probes in steps {old:?}");
    assert!(
        (100..=110).contains(&(old[0] - fell_back)),
        "first probe {} steps after the fall back",
        old[0] - fell_back
    );
    let failed: Vec<(u64, u32)> = large.iter().filter(|&&(s, len)| s < old[1] && len > 1200).copied().collect();
    assert!(failed.len() <= 8 && failed.windows(2).all(|w| w[1].1 < w[0].1), "failed probes {failed:?}");
    let last_failed = failed.last().expect("a failed probe").0;
    assert!(last_failed - old[0] < 50, "the search took {} steps", last_failed - old[0]);
    // The next search 10 minutes after the first ended.
    let again = old[1] - last_failed;
    assert!((5995..=6010).contains(&again), "the second search {again} steps after the first");
}

/// Probes lost to timeouts say nothing of their size (the path may be
/// out): here the path drops, besides packets above 1,200 bytes, all of
/// the data sent in the second a probe goes out, so nothing behind a probe
/// arrives to show it lost. The old size is tried again after waits that
/// double from 10 s up to 10 minutes (Linux's `tcp_probe_interval`) and
/// stay there: 8,000 bytes a second for 35 minutes see probes 10, 20, 40,
/// 80, 160, 320, 600 and 600 s apart; the subflow keeps the floor and the
/// transfer completes intact.
#[test]
fn probes_lost_to_timeouts_wait_twice_as_long_up_to_ten_minutes() {
    let (mut a, mut b) = with_floor(1);
    let (step, mut probes) = (std::cell::Cell::new(0), Vec::new());
    let fell_back = std::cell::Cell::new(None);
    let got = transfer_steps(
        &mut a,
        &mut b,
        8_000 * 2_050,
        8_000,
        1_000,
        2_100_000,
        |to_b, p| {
            let large = to_b && payload(p) > 1200;
            if large && fell_back.get().is_some() {
                probes.push(step.get());
            }
            large || (to_b && payload(p) > 0 && probes.last() == Some(&step.get()))
        },
        |s, a| {
            step.set(s);
            if fell_back.get().is_none() && a.subflow_stats(0).unwrap().mss == FLOOR {
                fell_back.set(Some(s));
            }
        },
    )
    .expect("completes");
    assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)));
    assert_eq!(a.subflow_stats(0).unwrap().mss, FLOOR);
    let mut at = vec![fell_back.get().expect("fell back")];
    at.extend(&probes);
    // The wait runs from the timeout that found a probe lost, and a probe
    // goes with the next second's write: up to a second more.
    let gaps: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    let waits = [10, 20, 40, 80, 160, 320, 600, 600];
    assert_eq!(gaps.len(), waits.len(), "probes {probes:?}");
    assert!(gaps.iter().zip(waits).all(|(&g, w)| g == w || g == w + 1), "gaps {gaps:?}");
}

/// Searches on subflow 0, whose path carries 1,200-byte payloads and goes
/// out entirely in the steps (of 1 s) `out` gives, 8,000 bytes a second
/// for `seconds`, `setup` run on the open client first: every payload
/// larger than the floor sent on subflow 0 after its first fall back, the
/// step each went in, and the MSS at the end. `paths` subflows (the others
/// clean) under `sched`.
fn search(
    (config, paths, sched): (Config, usize, &str),
    seconds: u64,
    out: impl Fn(u64) -> bool,
    setup: impl FnOnce(&mut Connection),
) -> (Vec<(u64, u32)>, u32) {
    let (mut a, mut b) = pair(config, "reno", sched, paths);
    open(&mut a, &mut b, Instant::ZERO);
    setup(&mut a);
    let (step, fell_back, mut large) = (std::cell::Cell::new(0), std::cell::Cell::new(false), Vec::new());
    let got = transfer_steps(
        &mut a,
        &mut b,
        8_000 * seconds as usize,
        8_000,
        1_000,
        (seconds + 60) * 1_000,
        |to_b, p| {
            let on_0 = to_b && p.subflow == SubflowId(0);
            if on_0 && fell_back.get() && payload(p) > FLOOR {
                large.push((step.get(), payload(p)));
            }
            (on_0 && payload(p) > 1200) || out(step.get())
        },
        |s, a| {
            step.set(s);
            fell_back.set(fell_back.get() || a.subflow_stats(0).unwrap().mss == FLOOR);
        },
    )
    .expect("completes");
    assert!(got.iter().enumerate().all(|(i, &v)| v == byte(i)), "bytes differ");
    (large, a.subflow_stats(0).unwrap().mss)
}

/// Each size above what the path carries goes out once, as a probe.
fn each_too_large_once(large: &[(u64, u32)]) {
    let mut too_large: Vec<u32> = large.iter().map(|x| x.1).filter(|&len| len > 1200).collect();
    let n = too_large.len();
    too_large.sort_unstable();
    too_large.dedup();
    assert_eq!(too_large.len(), n, "sizes above the path's sent again: {large:?}");
}

/// With RACK-TLP (losses found by time rather than by counting duplicate
/// ACKs) the search goes as it does without: it settles within 8 bytes of
/// what the path carries, each size above it sent once.
#[test]
fn with_rack_the_search_settles_too() {
    let config = Config { mss: MSS, mss_floor: Some(FLOOR), rack_tlp: true, ..Config::default() };
    let (large, mss) = search((config, 1, "minrtt"), 120, |_| false, |_| {});
    assert!(SETTLED.contains(&mss), "settled at {mss}");
    each_too_large_once(&large);
}

/// An address advertised and echoed long ago does not keep probes back
/// (they wait only while a control would ride along).
#[test]
fn an_advertised_address_does_not_stop_the_search() {
    let config = Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() };
    let (large, mss) =
        search((config, 1, "minrtt"), 120, |_| false, |a| a.advertise_address(1, "192.0.2.7:4433".parse().unwrap()));
    assert!(SETTLED.contains(&mss), "settled at {mss} ({} large packets)", large.len());
}

/// A subflow that found its size by a search and then goes through an
/// outage falls back again; its next probe is of the size it had before
/// the first fall back, not of the size the search found.
#[test]
fn after_a_search_an_outage_leaves_the_old_size_to_probe() {
    let config = Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() };
    let outage = 60..70;
    let (large, mss) = search((config, 1, "minrtt"), 120, |s| outage.contains(&s), |_| {});
    assert!(SETTLED.contains(&mss), "settled at {mss}");
    let old = |range: std::ops::Range<u64>| large.iter().any(|&(s, len)| range.contains(&s) && len > MSS);
    let probes: Vec<_> = large.iter().filter(|x| x.1 > 1200).collect();
    assert!(old(0..outage.start), "no probe of the old size before the outage: {probes:?}");
    assert!(old(outage.end..120), "no probe of the old size after the outage: {probes:?}");
}

/// A probe goes only with enough data behind it for its loss to show by
/// duplicate ACKs (Linux's `size_needed`): 2,800 bytes a second (a probe
/// and one packet) never probes, so no probe is lost to a timeout, which
/// would collapse the window; the subflow stays at the floor, with the two
/// timeouts of its fall back only.
#[test]
fn no_probe_without_data_to_show_its_loss() {
    let (mut a, mut b) = with_floor(1);
    let mut large = 0;
    let fell_back = std::cell::Cell::new(false);
    transfer_steps(
        &mut a,
        &mut b,
        2_800 * 120,
        2_800,
        1_000,
        180_000,
        |to_b, p| {
            large += usize::from(to_b && fell_back.get() && payload(p) > FLOOR);
            to_b && payload(p) > 1200
        },
        |_, a| fell_back.set(fell_back.get() || a.subflow_stats(0).unwrap().mss == FLOOR),
    )
    .expect("completes");
    let s = a.subflow_stats(0).unwrap();
    assert_eq!((s.mss, s.counters.rtos, large), (FLOOR, 2, 0));
}

/// With two subflows under round robin, the segments behind a probe follow
/// it on its own subflow (the scheduler would spread them), so its loss
/// shows by duplicate ACKs there: the subflow in the black hole settles
/// within 8 bytes of what its path carries.
#[test]
fn the_data_behind_a_probe_follows_it_on_its_subflow() {
    let config = Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() };
    let (large, mss) = search((config, 2, "rr"), 120, |_| false, |_| {});
    let probes: Vec<_> = large.iter().filter(|x| x.1 > 1200).collect();
    assert!(SETTLED.contains(&mss), "settled at {mss}, probes {probes:?}");
    each_too_large_once(&large);
}

/// Under the redundant scheduler, which sends every segment on every
/// subflow, subflow 0 (whose path drops payloads above 1,200 bytes) falls
/// back and searches like any other: it settles within 8 bytes of what its
/// path carries, each size above it sent once. Two things stood in the
/// way. The data that timed out there had arrived by subflow 1, so after
/// a timeout subflow 0 sent only a zero-length probe, and that probe's
/// acknowledgement ended the row of timeouts black-hole detection counts
/// (20 timeouts in 20 s, no fall back). And a scheduler that sends on
/// every subflow never sent a search's probe (the subflow stayed at the
/// floor).
#[test]
fn the_redundant_scheduler_searches_too() {
    let config = Config { mss: MSS, mss_floor: Some(FLOOR), ..Config::default() };
    let (large, mss) = search((config, 2, "redundant"), 120, |_| false, |_| {});
    assert!(SETTLED.contains(&mss), "settled at {mss}, large {large:?}");
    each_too_large_once(&large);
}
