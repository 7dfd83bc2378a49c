//! What the connection does for its congestion controller beyond calling
//! it, seen through a controller that records the acknowledgements it gets
//! and otherwise behaves as Reno.

mod common;

use std::sync::{Arc, Mutex};

use braid_proto::cc::{self, AckSample, Controller, PathView};
use braid_proto::{crypto::RustCrypto, Config, Connection, Instant};

/// What the controller was told.
#[derive(Debug, Default)]
struct Told {
    /// Whether each rate sample was application-limited, in order.
    app_limited: Vec<bool>,
    /// Data packets the acknowledgements showed lost, in all.
    lost: u64,
}

type Seen = Arc<Mutex<Told>>;

#[derive(Debug)]
struct Recording {
    reno: Box<dyn Controller>,
    seen: Seen,
    holds_back: bool,
}

impl Controller for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        self.reno.on_path_added(path, mss, iw);
    }
    fn on_path_removed(&mut self, path: usize) {
        self.reno.on_path_removed(path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        let mut told = self.seen.lock().unwrap();
        if let Some(rs) = ack.rate {
            told.app_limited.push(rs.is_app_limited);
        }
        told.lost += ack.packets_lost;
        drop(told);
        self.reno.on_ack(path, ack, paths);
    }
    fn on_congestion_event(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.reno.on_congestion_event(now, path, paths);
    }
    fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView], in_recovery: bool) {
        self.reno.on_rto(now, path, paths, in_recovery);
    }
    fn on_spurious_rto(&mut self, path: usize) {
        self.reno.on_spurious_rto(path);
    }
    fn window(&self, path: usize) -> u64 {
        self.reno.window(path)
    }
    fn ssthresh(&self, path: usize) -> u64 {
        self.reno.ssthresh(path)
    }
    fn penalize(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        self.reno.penalize(now, path, paths);
    }
    fn samples_app_limited(&self, _path: usize) -> bool {
        self.holds_back
    }
    fn answers_after_ack(&self) -> bool {
        self.holds_back
    }
}

/// A client that always has data to send, over one subflow with 10 ms
/// one-way delay and no bandwidth limit, for six round trips (before the
/// window outgrows the send buffer), losing every `drop_every`th data
/// packet (0: none): what its controller was told, and the subflow's own
/// count of packets lost and of timeouts.
fn run(holds_back: bool, drop_every: u64) -> (Told, u64, u64) {
    let seen = Seen::default();
    let reno = cc::by_name("reno").unwrap();
    let controller = Box::new(Recording { reno, seen: seen.clone(), holds_back });
    let sched = braid_proto::sched::by_name("minrtt").unwrap();
    let mut a = Connection::client(Config::default(), controller, sched, 0x1111, Arc::new(RustCrypto));
    a.add_subflow(false).unwrap();
    let mut b = common::connection(braid_proto::Side::Server, Config::default(), "reno", "minrtt");
    common::open(&mut a, &mut b, Instant::ZERO);
    a.write_zeros(u64::MAX);
    let mut sent = 0u64;
    let _ = common::drive(
        &mut a,
        &mut b,
        10,
        120,
        |a, b| {
            a.write_zeros(u64::MAX);
            b.consume(u64::MAX);
            false
        },
        |_, to_b, p| {
            let data = matches!(&p.frame, braid_proto::Frame::Data(d) if d.len > 0);
            sent += u64::from(to_b && data);
            to_b && data && drop_every > 0 && sent.is_multiple_of(drop_every)
        },
    );
    let s = a.subflow_stats(0).unwrap();
    let told = std::mem::take(&mut *seen.lock().unwrap());
    (told, s.counters.packets_lost, s.counters.rtos)
}

/// A controller holding a subflow below what it could carry (BBR's
/// ProbeRTT) gets the rates sampled meanwhile marked application-limited,
/// as Linux's BBR marks them, though the application has data waiting.
/// Without the hold, none is once the connection is under way (the
/// first few, from before data was written, are).
#[test]
fn samples_are_app_limited_while_the_controller_holds_back() {
    let held = run(true, 0).0.app_limited;
    assert!(held.len() > 20, "{} samples", held.len());
    assert!(held.iter().skip(10).all(|&a| a), "{held:?}");
    let free = run(false, 0).0.app_limited;
    let limited: Vec<usize> = free.iter().enumerate().filter(|(_, &a)| a).map(|(i, _)| i).collect();
    assert!(free.len() > 20 && limited.iter().all(|&i| i < 10), "app-limited samples {limited:?} of {}", free.len());
}

/// The packets each acknowledgement shows lost reach the controller with
/// it (BBR takes them off its window): over a run losing every 10th data
/// packet, as many as the subflow counted, found by acknowledgements (no
/// timeout); none over a run losing nothing.
#[test]
fn packets_shown_lost_reach_the_controller() {
    let (told, lost, rtos) = run(false, 10);
    assert!(lost >= 3 && rtos == 0, "{lost} lost, {rtos} timeouts");
    assert_eq!(told.lost, lost);
    assert_eq!(run(false, 0).0.lost, 0);
}
