//! Congestion control: one controller object per connection owns the window
//! of every subflow.
//!
//! Why one object per connection rather than one per subflow: coupled
//! algorithms (LIA, OLIA, BALIA, ...) compute each subflow's increase from
//! the windows and RTTs of all of them. Owning every window makes that a
//! read of the controller's own state, with no risk of a subflow seeing a
//! stale copy of a sibling. Uncoupled algorithms simply keep independent
//! per-path state. A single-path TCP flow is a connection with one subflow.
//!
//! The connection calls the controller with a read-only [`PathView`] slice
//! (RTT estimates, bytes in flight, ...) of all its subflows; the controller
//! answers [`Controller::window`] per path.
//!
//! Growth is counted in acknowledged bytes (RFC 3465 style, as RFC 6356
//! specifies LIA), not per ACK event as Linux does, so delayed ACKs do not
//! halve congestion-avoidance growth. Slow start grows by every acknowledged
//! byte (Linux counts every acknowledged packet, which is equivalent).

mod ack_aggregation;
mod aimd;
mod balia;
mod bbr;
mod cached;
mod coupled;
mod cubic;
mod ewtcp;
mod lia;
mod long_term_bw;
mod mpbbr;
mod olia;
mod reno;
mod semicoupled;
mod window;
mod wvegas;

pub use aimd::{total_window, Aimd, WindowRule};
pub use balia::{balia_factor, Balia, BALIA_MAX_ALPHA};
pub use bbr::{Bbr, BbrState};
pub(crate) use cached::CachedController;
pub use coupled::{coupled_decrease, Coupled};
pub use cubic::{cubic_alpha, cubic_k, w_cubic, Cubic, CUBIC_BETA, CUBIC_C};
pub use ewtcp::{ewtcp_weight, Ewtcp};
pub use lia::{lia_alpha, Lia};
pub use mpbbr::MpBbr;
pub use olia::{olia_alphas, Olia, OliaPath};
pub use reno::Reno;
pub use semicoupled::{SemiCoupled, SEMICOUPLED_A};
pub use window::Window;
pub use wvegas::{WVegas, WVEGAS_GAMMA, WVEGAS_MIN_ALPHA, WVEGAS_TOTAL_ALPHA};

use crate::subflow::RateSample;
use crate::time::{Duration, Instant};

/// What the connection knows about one subflow, read-only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathView {
    pub srtt: Option<Duration>,
    pub rttvar: Duration,
    pub min_rtt: Option<Duration>,
    pub bytes_in_flight: u64,
    /// Data packets the subflow has declared lost so far, a timeout's
    /// included (Linux's `tp->lost`).
    pub packets_lost: u64,
    pub mss: u32,
    pub backup: bool,
    /// True after a retransmission timeout until new data is acknowledged.
    pub potentially_failed: bool,
    /// False once the path has been removed from the connection.
    pub active: bool,
}

/// One acknowledgement's effect on a subflow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub now: Instant,
    /// Payload bytes newly acknowledged (cumulatively or by SACK).
    pub bytes_acked: u64,
    /// RTT measured from this acknowledgement, if any.
    pub rtt: Option<Duration>,
    /// Bytes in flight on the path before this ACK was processed.
    pub prior_in_flight: u64,
    /// Data packets this ACK newly showed lost (Linux's `rs->losses`).
    pub packets_lost: u64,
    /// True while the subflow is in fast recovery; windows do not grow then.
    pub in_recovery: bool,
    /// True while the subflow is in the loss state after a retransmission
    /// timeout (Linux's `TCP_CA_Loss`, see `Subflow::in_loss`): windows
    /// grow from the timeout's one segment, as in Linux, where the module's
    /// `cong_avoid` runs then; wVegas runs Reno instead, and BBR restores
    /// its saved window when the state ends.
    pub in_loss: bool,
    /// How much of its window the subflow used lately: loss-based
    /// controllers grow a window only while it is used
    /// ([`WindowUse::limits`], Linux's `tcp_is_cwnd_limited`).
    pub window_use: WindowUse,
    /// Bytes delivered on the subflow so far, this ACK included.
    pub delivered: u64,
    /// Delivery-rate sample, when this ACK yields a valid one.
    pub rate: Option<RateSample>,
    /// `delivered` when the newest packet this ACK covers was sent (ACKs
    /// with this at or past the `delivered` of a round's start end the round).
    pub prior_delivered: Option<u64>,
    /// When the subflow's pacer lets its next packet out (Linux's
    /// `tcp_wstamp_ns`); `now` or earlier when it may send at once.
    pub next_departure: Instant,
}

/// How much of its window a subflow used lately: Linux's
/// `tcp_cwnd_validate` record, kept by the subflow
/// (`Subflow::validate_cwnd`): the largest flight of the current window
/// and whether the window was full when it was sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowUse {
    pub max_in_flight: u64,
    pub was_full: bool,
}

impl WindowUse {
    /// A window always in use (for callers without a subflow's record).
    pub const FULL: WindowUse = WindowUse { max_in_flight: u64::MAX / 2, was_full: true };

    /// Linux's `tcp_is_cwnd_limited`: may a window of `cwnd` bytes grow?
    /// In slow start while it is under twice the largest recent flight (so
    /// it reaches twice what was acknowledged); otherwise only if the
    /// window was full when that flight was sent. A subflow held back by
    /// the application, the receiver's window or the scheduler does not
    /// inflate a window it never used.
    pub fn limits(&self, cwnd: u64, ssthresh: u64) -> bool {
        if cwnd < ssthresh {
            cwnd < 2 * self.max_in_flight
        } else {
            self.was_full
        }
    }
}

/// A congestion controller for all subflows of one connection.
pub trait Controller: std::fmt::Debug + Send {
    /// The name scenarios use to select it.
    fn name(&self) -> &'static str;
    /// A subflow was created; `path` is its index.
    fn on_path_added(&mut self, path: usize, mss: u32, initial_window_packets: u32);
    /// A subflow was closed; its window must no longer count for its siblings.
    fn on_path_removed(&mut self, path: usize);
    /// New data was acknowledged on `path`.
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]);
    /// Loss detected on `path` (at most once per window of data: the
    /// connection filters repeats within one recovery episode).
    fn on_congestion_event(&mut self, now: Instant, path: usize, paths: &[PathView]);
    /// The retransmission timer of `path` fired: the window falls to one
    /// segment. `in_recovery`: it fired during fast recovery, whose cut
    /// stands, so ssthresh is not cut again (Linux's `tcp_enter_loss`
    /// calls the module's `ssthresh` only when no reduction was made in
    /// this window of data).
    fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView], in_recovery: bool);
    /// The last `on_rto` of `path` was spurious: an acknowledgement shows
    /// the packets it declared lost had arrived (Linux's undo after a
    /// timeout, `tcp_try_undo_loss`).
    fn on_spurious_rto(&mut self, path: usize);
    /// Congestion window of `path`, in bytes.
    fn window(&self, path: usize) -> u64;
    /// Slow-start threshold of `path` in bytes (`u64::MAX` when unset), for reports.
    fn ssthresh(&self, path: usize) -> u64;
    /// Pacing rate for `path` in payload bytes per second (headers are not
    /// charged, at least 1), if the algorithm paces.
    fn pacing_rate(&self, _path: usize) -> Option<u64> {
        None
    }
    /// Whether [`Controller::pacing_rate`] can ever answer other than
    /// `None`. Asked once, when the connection is built: the connection
    /// keeps copies of the pacing controllers' rates, as of their windows,
    /// and asks the others nothing.
    fn paces(&self) -> bool {
        false
    }
    /// The algorithm holds `path` below what the path could carry (BBR's
    /// ProbeRTT), so the rates sampled meanwhile understate it, as an idle
    /// application's do: the connection marks them application-limited.
    fn samples_app_limited(&self, _path: usize) -> bool {
        false
    }
    /// Whether [`Controller::samples_app_limited`] or
    /// [`Controller::take_closed_path`] can ever answer other than their
    /// defaults. Asked once, when the connection is built: for the
    /// algorithms that cannot, the connection skips both calls on every
    /// acknowledgement (two virtual calls each).
    fn answers_after_ack(&self) -> bool {
        false
    }
    /// The subflow `path` is blocking the connection's window (Raiciu et
    /// al.'s penalisation): cut its window. Linux halves cwnd (and, outside
    /// slow start, ssthresh) directly, bypassing the module, so this is not
    /// a congestion event: no algorithm state other than the window moves.
    fn penalize(&mut self, now: Instant, path: usize, paths: &[PathView]);
    /// Subflow `path` sends again at `now` after `idle` (longer than its
    /// `rto`) with nothing in flight (`Config::restart_after_idle`): restart
    /// its window, to no less than `restart` bytes. Loss-based windows follow Linux's
    /// `tcp_cwnd_restart`; algorithms that pace from a model (BBR), which
    /// Linux exempts (`cong_control`), ignore it.
    fn on_idle_restart(&mut self, _now: Instant, _path: usize, _idle: Duration, _rto: Duration, _restart: u64) {}
    /// Linux's `sndbuf_expand`: how many windows of segments a subflow's
    /// send buffer is sized for (`tcp_sndbuf_expand`; BBR asks for 3).
    fn sndbuf_expand(&self) -> u32 {
        2
    }
    /// A subflow the algorithm wants closed (C-MPBBR closes subflows that
    /// add nothing); the connection asks after every ACK. It only reports:
    /// no window may change here (the connection keeps copies of the
    /// windows, refreshed after every other `&mut` callback).
    fn take_closed_path(&mut self) -> Option<usize> {
        None
    }
}

/// One subflow's state inside a controller, kept in a vector indexed by
/// subflow number.
pub(crate) trait PathSlot: Clone {
    fn deactivate(&mut self);
}

/// Installs `fresh` as the state of `path`, padding any gap below it with
/// inactive copies.
pub(crate) fn install<T: PathSlot>(paths: &mut Vec<T>, path: usize, fresh: T) {
    if paths.len() <= path {
        let mut gap = fresh.clone();
        gap.deactivate();
        paths.resize(path + 1, gap);
    }
    paths[path] = fresh;
}

/// Marks `path` removed, if it exists.
pub(crate) fn deactivate<T: PathSlot>(paths: &mut [T], path: usize) {
    if let Some(p) = paths.get_mut(path) {
        p.deactivate();
    }
}

/// Every controller Braid has, by scenario name, with a one-line description.
pub const ALGORITHMS: &[(&str, &str)] = &[
    ("reno", "uncoupled NewReno per subflow (RFC 5681/6582); regular TCP on one subflow"),
    ("ewtcp", "equally weighted TCP: Reno with the increase divided by n^2 (NSDI 2011, htsim)"),
    ("coupled", "fully coupled: increase 1/w_total, decrease w_total/2 (NSDI 2011)"),
    ("semicoupled", "semi-coupled: increase a/w_total with a = 1, decrease w_r/2 (NSDI 2011)"),
    ("lia", "Linked Increases (RFC 6356): coupled increase, Reno decrease"),
    ("olia", "Opportunistic LIA (Khalili et al. 2012; mptcp_olia.c): Pareto-optimal, moves window to the best paths"),
    ("balia", "Balanced Linked Adaptation (Peng et al. 2016): increase and decrease scaled by a_r = max x / x_r"),
    (
        "wvegas",
        "weighted Vegas (Cao et al. 2012; mptcp_wvegas.c): delay-based, rate-weighted alphas summing to 10 packets",
    ),
    ("cubic", "uncoupled CUBIC per subflow (RFC 9438), beta 0.7, fast convergence, HyStart and growth clock of Linux 5.4"),
    ("bbr", "uncoupled BBR v1 per subflow (draft-cardwell-iccrg-bbr-congestion-control-00, with Linux tcp_bbr.c's state handling and policer model), paced"),
    ("mpbbr", "C-MPBBR (Mahmud et al. 2020; seed 004 Algorithm 13): BBR sharing a detected common bottleneck, closing useless subflows"),
];

/// Builds the controller a scenario names, or `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Box<dyn Controller>> {
    match name {
        "reno" => Some(Box::new(Aimd::<Reno>::default())),
        "ewtcp" => Some(Box::new(Aimd::<Ewtcp>::default())),
        "coupled" => Some(Box::new(Aimd::<Coupled>::default())),
        "semicoupled" => Some(Box::new(Aimd::<SemiCoupled>::default())),
        "lia" => Some(Box::new(Aimd::<Lia>::default())),
        "olia" => Some(Box::new(Aimd::<Olia>::default())),
        "balia" => Some(Box::new(Aimd::<Balia>::default())),
        "wvegas" => Some(Box::new(WVegas::default())),
        "cubic" => Some(Box::new(Cubic::default())),
        "bbr" => Some(Box::new(Bbr::default())),
        "mpbbr" => Some(Box::new(MpBbr::default())),
        _ => None,
    }
}

/// An ACK of `bytes` at `now` with no samples, for unit tests.
#[cfg(test)]
pub(crate) fn test_ack(now: Instant, bytes: u64) -> AckSample {
    AckSample {
        now,
        bytes_acked: bytes,
        rtt: None,
        prior_in_flight: 0,
        packets_lost: 0,
        in_recovery: false,
        in_loss: false,
        window_use: WindowUse::FULL,
        delivered: 0,
        rate: None,
        prior_delivered: None,
        next_departure: Instant::ZERO,
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::time::Duration;

    /// xorshift64*, enough randomness for event sequences without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
        }
    }

    /// Each controller reports the name scenarios and summaries use; the
    /// send buffer is sized for 3 windows under BBR and C-MPBBR
    /// (`bbr_sndbuf_expand`) and for Linux's default 2 under the rest.
    #[test]
    fn names_and_send_buffer_factors() {
        for &(name, _) in ALGORITHMS {
            let c = by_name(name).unwrap();
            assert_eq!(c.name(), name);
            assert_eq!(c.sndbuf_expand(), if matches!(name, "bbr" | "mpbbr") { 3 } else { 2 }, "{name}");
        }
    }

    /// A timeout shown spurious gives every controller its window back.
    #[test]
    fn a_spurious_timeout_is_undone() {
        for &(name, _) in ALGORITHMS {
            let mut c = by_name(name).unwrap();
            let views = [PathView { mss: 1000, active: true, ..Default::default() }; 2];
            c.on_path_added(0, 1000, 10);
            c.on_path_added(1, 1000, 10);
            let before = c.window(0);
            c.on_rto(Instant::ZERO, 0, &views, false);
            assert_eq!(c.window(0), 1000, "{name}: the timeout's cut");
            c.on_spurious_rto(0);
            assert_eq!(c.window(0), before, "{name}: after the undo");
            assert_eq!(c.window(1), 10_000, "{name}: the other subflow");
        }
    }

    /// A timeout during fast recovery: every controller's window falls to
    /// one segment, and ssthresh stays where recovery's cut left it.
    #[test]
    fn a_timeout_in_fast_recovery_keeps_the_recovery_ssthresh() {
        for &(name, _) in ALGORITHMS {
            let mut c = by_name(name).unwrap();
            let views = [PathView { mss: 1000, active: true, bytes_in_flight: 10_000, ..Default::default() }; 2];
            c.on_path_added(0, 1000, 10);
            c.on_path_added(1, 1000, 10);
            c.on_congestion_event(Instant::ZERO, 0, &views);
            let recovery = c.ssthresh(0);
            c.on_rto(Instant::ZERO, 0, &views, true);
            assert_eq!((c.window(0), c.ssthresh(0)), (1000, recovery), "{name}");
        }
    }

    /// Random sequences of adds, ACKs (zero-length ones, zero and missing
    /// RTTs included), losses, timeouts, idle restarts and removals: no
    /// controller panics, every active window stays finite and at least one
    /// segment, and the connection's copy of every window
    /// ([`CachedController`]) is the controller's answer after every event.
    #[test]
    fn windows_stay_sane_under_random_events() {
        const MSS: u32 = 1000;
        for &(name, _) in ALGORITHMS {
            for seed in 1..=20u64 {
                let mut rng = Rng(seed * 7919);
                let mut c = CachedController::new(by_name(name).unwrap());
                let mut views: Vec<PathView> = Vec::new();
                for step in 0..3000 {
                    let now = Instant::from_nanos(step * 1_000_000);
                    let path = rng.below(views.len() as u64 + 1) as usize;
                    match rng.below(10) {
                        0 if views.len() < 6 => {
                            c.on_path_added(views.len(), MSS, 1 + rng.below(20) as u32);
                            views.push(PathView { mss: MSS, active: true, ..Default::default() });
                        }
                        1 if path < views.len() && rng.below(10) == 0 => {
                            c.on_path_removed(path);
                            views[path].active = false;
                        }
                        2 => c.on_congestion_event(now, path, &views),
                        3 if rng.below(4) == 0 => c.on_rto(now, path, &views, rng.below(2) == 0),
                        3 if rng.below(4) == 0 => c.on_spurious_rto(path),
                        4 if rng.below(2) == 0 => c.penalize(now, path, &views),
                        5 if rng.below(4) == 0 => {
                            let rto = Duration::from_millis(200 + rng.below(1000));
                            let idle = Duration::from_millis(rng.below(10_000));
                            c.on_idle_restart(now, path, idle, rto, u64::from(MSS) * (1 + rng.below(10)));
                        }
                        _ => {
                            let rtt = match rng.below(4) {
                                0 => None,
                                1 => Some(Duration::ZERO),
                                _ => Some(Duration::from_micros(1 + rng.below(300_000))),
                            };
                            if let (Some(v), Some(r)) = (views.get_mut(path), rtt) {
                                v.srtt = Some(r);
                                v.min_rtt = Some(v.min_rtt.map_or(r, |m| m.min(r)));
                            }
                            let ack = AckSample {
                                now,
                                bytes_acked: rng.below(4) * u64::from(MSS) / 2,
                                rtt,
                                prior_in_flight: rng.below(100_000),
                                packets_lost: 0,
                                in_recovery: rng.below(5) == 0,
                                in_loss: false,
                                window_use: WindowUse {
                                    max_in_flight: rng.below(100_000),
                                    was_full: rng.below(4) != 0,
                                },
                                delivered: step * 1000,
                                rate: None,
                                prior_delivered: Some(step * 500),
                                next_departure: Instant::ZERO,
                            };
                            c.on_ack(path, &ack, &views);
                            c.take_closed_path();
                        }
                    }
                    for i in 0..views.len() + 1 {
                        assert_eq!(c.window(i), c.get().window(i), "{name} seed {seed} step {step}: copy of path {i}");
                    }
                    for i in (0..views.len()).filter(|&i| views[i].active) {
                        let w = c.window(i);
                        assert!(w >= u64::from(MSS), "{name} seed {seed} step {step}: window {w} of path {i}");
                        assert!(w < u64::MAX / 2, "{name}: window {w} ran away");
                    }
                }
            }
        }
    }
}
