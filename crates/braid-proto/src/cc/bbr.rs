//! BBR v1, uncoupled per subflow (draft-cardwell-iccrg-bbr-congestion-
//! control-00; delivery rates from draft-cheng-iccrg-delivery-rate-
//! estimation; seed 004 §2.3.6, Algorithm 12), with the state handling of
//! Linux's `tcp_bbr.c` (5.4, the base of MPTCP v0.96) where the draft is
//! silent or differs.
//!
//! Model: `BtlBw` is the windowed maximum of delivery-rate samples over the
//! last 10 round trips (app-limited samples count only when they raise it);
//! `RTprop` the minimum RTT over the last 10 s. The pacing rate is
//! `pacing_gain * BtlBw`, 1% below as Linux paces (until the pipe is
//! filled it only rises, from the initial window over the first RTT on, as
//! the draft's `BBRSetPacingRateWithGain` has it). Windows and in-flight
//! thresholds are Linux's `bbr_inflight`: `gain * BtlBw * RTprop` in whole
//! segments plus three send quanta, rounded up to an even count, plus two
//! in the probing phase; the window is at least 4 segments.
//!
//! States: Startup (gains 2/ln 2) until the bandwidth has not grown by 25%
//! for three rounds whose samples were not application-limited; Drain
//! (pacing gain ln 2 / 2) until in flight falls to one BDP (with the quanta);
//! ProbeBW cycling pacing gains [1.25, 0.75, 1 x 6], a phase per RTprop,
//! with the 1.25 phase held until what was in flight before the ACK
//! reaches 1.25 BDP (or a loss) and the 0.75 phase left early once it is
//! down to one BDP; ProbeRTT (window 4 segments for 200 ms and a round)
//! whenever RTprop is 10 s old, during which the connection marks the
//! subflow's samples application-limited (Linux's `tp->app_limited`), so
//! ProbeRTT's low rates do not pull BtlBw down.
//!
//! Loss (`bbr_set_cwnd_to_recover_or_restore`): every acknowledgement
//! first takes the packets it showed lost off the window. Entering fast
//! recovery the window is saved and set to what is in flight plus what the
//! ACK delivered, and for one round it releases a packet per packet
//! delivered (packet conservation); then it grows by what is acknowledged;
//! when recovery ends the saved window comes back. A timeout sets the window to
//! one segment and restarts the search for full bandwidth; through the
//! subflow's loss state the window grows back by what is acknowledged, and
//! the saved window comes back when that state ends, or at once if the
//! timeout proves spurious.
//!
//! The window's target has Linux's allowance for ACK aggregation
//! (`cc/ack_aggregation.rs`) once the pipe is filled.
//!
//! Linux's long-term bandwidth model (`cc/long_term_bw.rs`): two intervals
//! in a row that lose 20% of what they deliver at a steady rate mean a
//! policer; BBR then paces and sizes its window by their mean rate, with
//! ProbeBW's gain at 1, for 48 rounds. The interval's sampling runs on
//! every valid rate sample, before BtlBw's filter, and on a timeout, which
//! counts as a loss ending a round (`bbr_set_state`); an undone timeout
//! resets it (`bbr_undo_cwnd`). The state machine (full bandwidth, Drain's
//! exit, ProbeBW's phases) keeps comparing with BtlBw, as Linux's
//! `bbr_max_bw`; the pacing rate, the window's target and the ACK
//! aggregation allowance use the long-term rate while it is in use
//! (`bbr_bw`).
//!
//! ProbeBW's phase ends and Drain's exit compare with what will still be
//! in flight when the pacer next sends (`bbr_packets_in_net_at_edt`): in
//! flight now, less what BtlBw delivers until the pacer's next departure
//! (whole segments), plus a send quantum while the pacing gain is above 1
//! (the packet about to go out raises it).
//!
//! Deviations from Linux: the connection signals the start of fast
//! recovery apart from the ACK that caused it (`on_congestion_event`),
//! and the departure time used then is the last ACK's; the long-term
//! model samples only the first of a series of timeouts (the connection
//! calls the controller for that one; Linux's `bbr_set_state` runs at
//! each); the RTprop
//! stamp is refreshed on equal samples (`<=`, as 5.4.0 and the draft). The draft and Linux start
//! ProbeBW at a random phase; Braid's core has no RNG, so every subflow
//! starts in the first cruise phase (index 2). The send quantum is 2
//! segments (Linux's value above 1.2 Mbit/s) up to 64 KB at 1 ms of
//! pacing.

use super::ack_aggregation::AckAggregation;
use super::long_term_bw::{self, LongTermBw};
use super::{deactivate, install, AckSample, Controller, PathSlot, PathView};
use crate::time::{Duration, Instant};

/// The subflow's recovery state, as BBR tells them apart (Linux's
/// `icsk_ca_state`, with Disorder and CWR as Open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    Open,
    /// Fast recovery.
    Recovery,
    /// The loss state after a timeout.
    Loss,
}

impl CaState {
    fn of(ack: &AckSample) -> Self {
        if ack.in_recovery {
            CaState::Recovery
        } else if ack.in_loss {
            CaState::Loss
        } else {
            CaState::Open
        }
    }
}

const STARTUP_GAIN: f64 = 2.885_390_081_777_926_8; // 2 / ln 2
const DRAIN_GAIN: f64 = 1.0 / STARTUP_GAIN;
const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const BTLBW_ROUNDS: u64 = 10;
const RTPROP_WINDOW: Duration = Duration::from_secs(10);
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
const MIN_WINDOW_SEGMENTS: f64 = 4.0;
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux paces 1% below the model's rate (`bbr_pacing_margin_percent`), so
/// that cruising at gain 1 drains rather than keeps a standing queue.
const PACING_MARGIN: f64 = 0.99;
/// Linux's `TCP_INIT_CWND`: until this many segments are delivered the
/// window grows by what is acknowledged, whatever the target.
const INIT_CWND_SEGMENTS: f64 = 10.0;

/// Running maximum over a sliding window of rounds, in constant space:
/// Kathleen Nichols' scheme (as in Linux's minmax) keeps the best, second
/// best and third best samples from successively later sub-windows, so when
/// the best ages out the next one is already known.
#[derive(Clone, Copy, Debug, Default)]
struct WindowedMax {
    s: [(u64, f64); 3],
}

impl WindowedMax {
    fn get(&self) -> f64 {
        self.s[0].1
    }

    fn update(&mut self, t: u64, v: f64, window: u64) -> f64 {
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > window {
            self.s = [(t, v); 3];
            return v;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        let age = t.saturating_sub(self.s[0].0);
        if age > window {
            // The best aged out: promote the runners-up.
            self.s = [self.s[1], self.s[2], (t, v)];
            if t.saturating_sub(self.s[0].0) > window {
                self.s = [self.s[1], self.s[2], (t, v)];
            }
        } else if self.s[1].0 == self.s[0].0 && age > window / 4 {
            // A quarter of the window without a second choice: take this one.
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && age > window / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrState {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Clone, Debug)]
pub(super) struct BbrPath {
    pub(super) active: bool,
    pub(super) mss: f64,
    pub(super) state: BbrState,
    cwnd: f64,
    /// Window saved when loss recovery or ProbeRTT cut it.
    prior_cwnd: f64,
    /// The first round of fast recovery: the window releases what is
    /// acknowledged and no more (`packet_conservation`).
    packet_conservation: bool,
    /// The subflow's recovery state at the last event (Linux's
    /// `prev_ca_state`).
    prev_ca_state: CaState,
    /// Delivery rates, bytes/s, over the last `BTLBW_ROUNDS` rounds.
    bw_filter: WindowedMax,
    pub(super) btl_bw: f64,
    /// C-MPBBR's share: the model uses `btl_bw / bw_divisor` (1 for BBR).
    pub(super) bw_divisor: f64,
    /// Latest delivery-rate sample, bytes/s.
    pub(super) last_rate: f64,
    pub(super) rt_prop: Option<Duration>,
    rt_prop_stamp: Instant,
    /// The draft's `BBR.rtprop_expired`: RTprop was more than 10 s old when
    /// the last ACK arrived, before that ACK's sample replaced it.
    rt_prop_expired: bool,
    /// Bytes delivered on the subflow as of the last ACK, and when.
    delivered: u64,
    delivered_at: Instant,
    /// When the pacer would next send, as of the last ACK.
    next_departure: Instant,
    /// In-flight thresholds count at the pacer's next departure (Linux
    /// since 4.20); not for C-MPBBR, whose module predates it.
    pub(super) at_departure: bool,
    /// Packets the subflow had declared lost at the last event.
    lost: u64,
    /// The policer model.
    lt: LongTermBw,
    round: u64,
    next_round_delivered: u64,
    full_bw: f64,
    full_bw_rounds: u32,
    filled_pipe: bool,
    pub(super) cycle_index: usize,
    pub(super) cycle_stamp: Instant,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    initial_window: f64,
    /// Until the pipe is filled the pacing rate only rises (the draft's
    /// `BBRSetPacingRateWithGain`: `if filled_pipe or rate > pacing_rate`;
    /// Linux's `bbr_set_pacing_rate`): the rate paced at so far, from the
    /// initial window over the first RTT on. 0 until that RTT is known.
    startup_pacing: f64,
    /// The allowance for ACK aggregation (`cc/ack_aggregation.rs`); none
    /// for C-MPBBR, whose module predates it.
    pub(super) aggregation: Option<AckAggregation>,
}

impl BbrPath {
    fn new(mss: u32, iw: u32) -> Self {
        let mss = f64::from(mss.max(1));
        let cwnd = mss * f64::from(iw.max(1));
        BbrPath {
            active: true,
            mss,
            state: BbrState::Startup,
            cwnd,
            prior_cwnd: cwnd,
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            bw_filter: WindowedMax::default(),
            btl_bw: 0.0,
            bw_divisor: 1.0,
            last_rate: 0.0,
            rt_prop: None,
            rt_prop_stamp: Instant::ZERO,
            rt_prop_expired: false,
            delivered: 0,
            delivered_at: Instant::ZERO,
            next_departure: Instant::ZERO,
            at_departure: true,
            lost: 0,
            lt: LongTermBw::default(),
            round: 0,
            next_round_delivered: 0,
            full_bw: 0.0,
            full_bw_rounds: 0,
            filled_pipe: false,
            cycle_index: 2,
            cycle_stamp: Instant::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            initial_window: cwnd,
            startup_pacing: 0.0,
            aggregation: Some(AckAggregation::default()),
        }
    }

    fn gains(&self) -> (f64, f64) {
        match self.state {
            BbrState::Startup => (STARTUP_GAIN, STARTUP_GAIN),
            BbrState::Drain => (DRAIN_GAIN, STARTUP_GAIN),
            // A policed subflow cruises (`bbr_update_gains`).
            BbrState::ProbeBw if self.lt.bw().is_some() => (1.0, 2.0),
            BbrState::ProbeBw => (CYCLE[self.cycle_index], 2.0),
            BbrState::ProbeRtt => (1.0, 1.0),
        }
    }

    /// Linux's `bbr_bw`: the long-term rate while a policer is modelled,
    /// else BtlBw.
    fn bw(&self) -> f64 {
        self.lt.bw().unwrap_or(self.btl_bw)
    }

    /// The bandwidth pacing and the window run on: [`BbrPath::bw`], divided
    /// among the subflows C-MPBBR found on the same bottleneck during the
    /// cruise phases of ProbeBW (index above 1), as
    /// `mpbbr_check_same_bottleneck` does; probing and draining use the
    /// whole of it.
    pub(super) fn model_bw(&self) -> f64 {
        if self.state == BbrState::ProbeBw && self.cycle_index > 1 {
            self.bw() / self.bw_divisor
        } else {
            self.bw()
        }
    }

    /// The window the model targets, on [`BbrPath::model_bw`].
    fn bdp(&self) -> Option<f64> {
        let rt = self.rt_prop?;
        (self.btl_bw > 0.0).then(|| self.model_bw() * rt.as_secs_f64())
    }

    /// BtlBw x RTprop, undivided: what the state machine compares in flight
    /// with (Linux's `bbr_target_cwnd(sk, bbr_max_bw(sk), ...)`).
    fn full_bdp(&self) -> Option<f64> {
        let rt = self.rt_prop?;
        (self.btl_bw > 0.0).then(|| self.btl_bw * rt.as_secs_f64())
    }

    pub(super) fn send_quantum(&self) -> f64 {
        (self.pacing_rate() * 0.001).clamp(2.0 * self.mss, 65_536.0)
    }

    /// The send quantum in whole segments (Linux's `bbr_tso_segs_goal`).
    fn quantum_segments(&self) -> f64 {
        (self.send_quantum() / self.mss).floor()
    }

    /// Linux's `bbr_inflight` (`bbr_bdp`, then `bbr_quantization_budget`):
    /// `gain x bdp` in whole segments, rounded up; three send quanta (whole
    /// segments, `bbr_tso_segs_goal`) so that end systems keep busy; an
    /// even count, which halves delayed ACKs' stalls; and two more in
    /// ProbeBW's probing phase, so that probing gets above the BDP even
    /// where it is a few segments. The initial window while there is no
    /// model. What the window targets (on [`BbrPath::bdp`]) and what the
    /// state machine compares in flight with (on [`BbrPath::full_bdp`]).
    fn inflight(&self, bdp: Option<f64>, gain: f64) -> f64 {
        self.inflight_with(bdp, gain, 0.0)
    }

    /// [`BbrPath::inflight`] with `extra` segments added before the send
    /// quanta and the rounding, as `bbr_set_cwnd` adds the ACK-aggregation
    /// allowance.
    fn inflight_with(&self, bdp: Option<f64>, gain: f64, extra: f64) -> f64 {
        let Some(bdp) = bdp else { return self.initial_window };
        let quanta = 3.0 * self.quantum_segments();
        let mut segments = 2.0 * (((gain * bdp / self.mss).ceil() + extra + quanta) / 2.0).ceil();
        if self.state == BbrState::ProbeBw && self.cycle_index == 0 {
            segments += 2.0;
        }
        segments * self.mss
    }

    /// What `bbr_inflight` allows in flight at gain 1 beyond the path's
    /// BDP: the send quanta and the rounding, bytes.
    pub(super) fn inflight_budget(&self) -> f64 {
        self.full_bdp().map_or(0.0, |bdp| self.inflight(Some(bdp), 1.0) - bdp)
    }

    /// The window the model asks for at `gain`: with the allowance for ACK
    /// aggregation once the pipe is filled (`bbr_ack_aggregation_cwnd`).
    fn target_window(&self, gain: f64) -> f64 {
        let extra = match &self.aggregation {
            Some(a) if self.filled_pipe => a.allowance_segments(self.bw(), self.mss),
            _ => 0.0,
        };
        self.inflight_with(self.bdp(), gain, extra)
    }

    /// The rate paced at: the model's, 1% below (Linux's
    /// `bbr_rate_bytes_per_sec`), bytes per second.
    fn pacing_rate(&self) -> f64 {
        PACING_MARGIN * self.model_pacing_rate()
    }

    fn model_pacing_rate(&self) -> f64 {
        if self.btl_bw == 0.0 {
            return self.initial_pacing_rate();
        }
        let (pacing_gain, _) = self.gains();
        let rate = pacing_gain * self.model_bw();
        match self.filled_pipe {
            true => rate,
            false => rate.max(self.startup_pacing),
        }
    }

    /// Before any sample: the initial window over the RTT (1 ms unknown).
    fn initial_pacing_rate(&self) -> f64 {
        let rtt = self.rt_prop.map_or(0.001, |r| r.as_secs_f64().max(1e-6));
        STARTUP_GAIN * self.initial_window / rtt
    }

    /// Keeps the pacing rate from falling before the pipe is filled: a
    /// first delivery-rate sample below what the initial window over the
    /// RTT allows (a few bytes written, then a pause) must not pace the
    /// subflow at a crawl.
    fn hold_startup_pacing(&mut self) {
        if self.filled_pipe || self.rt_prop.is_none() {
            return;
        }
        if self.startup_pacing == 0.0 {
            self.startup_pacing = self.initial_pacing_rate();
        }
        self.startup_pacing = self.startup_pacing.max(self.model_pacing_rate());
    }

    /// Rounds: a round ends when a packet sent after the last round started
    /// is acknowledged, and only on an acknowledgement with a valid rate
    /// sample (`bbr_update_bw` returns before counting rounds when the
    /// sample's interval is invalid, shorter than the minimum RTT).
    fn starts_round(&self, ack: &AckSample) -> bool {
        ack.rate.is_some() && ack.prior_delivered.is_some_and(|d| d >= self.next_round_delivered)
    }

    /// The subflow's counters as of the last event.
    fn counters(&self) -> long_term_bw::Counters {
        long_term_bw::Counters {
            delivered_at: self.delivered_at,
            delivered: self.delivered,
            lost: self.lost,
            mss: self.mss,
        }
    }

    /// The policer model's sample (`bbr_lt_bw_sampling`); when its rate
    /// expires, ProbeBW's gain cycle restarts (`bbr_reset_probe_bw_mode`).
    fn sample_long_term(&mut self, now: Instant, losses: bool, app_limited: bool, round_start: bool) {
        let sample = long_term_bw::Sample {
            counters: self.counters(),
            losses,
            app_limited,
            round_start,
            probe_bw: self.state == BbrState::ProbeBw,
        };
        if self.lt.on_sample(&sample) == long_term_bw::Outcome::Expired {
            self.enter_probe_bw(now);
        }
    }

    fn update_model(&mut self, ack: &AckSample, rtt: Option<Duration>, lost: u64) {
        // Recovery's packet conservation lasts a round.
        let round_start = self.starts_round(ack);
        if round_start {
            self.next_round_delivered = ack.delivered;
            self.round += 1;
            self.packet_conservation = false;
        }
        (self.delivered, self.delivered_at, self.lost) = (ack.delivered, ack.now, lost);
        self.next_departure = ack.next_departure;
        if let Some(rs) = ack.rate {
            self.sample_long_term(ack.now, ack.packets_lost > 0, rs.is_app_limited, round_start);
            self.last_rate = rs.delivery_rate;
            if !rs.is_app_limited || rs.delivery_rate >= self.btl_bw {
                self.btl_bw = self.bw_filter.update(self.round, rs.delivery_rate, BTLBW_ROUNDS);
            }
            let bw = self.bw();
            if let Some(a) = self.aggregation.as_mut() {
                a.on_ack(ack.now, ack.bytes_acked as f64, round_start, bw, self.cwnd, self.mss);
            }
        }
        debug_assert_eq!(self.btl_bw, self.bw_filter.get());
        // `bbr_check_full_bw_reached`: with this round's sample in the
        // filter, and not on an application-limited one (whose round says
        // nothing about the path).
        if round_start && ack.rate.is_some_and(|rs| !rs.is_app_limited) {
            self.check_full_bw();
        }
        self.rt_prop_expired = ack.now.saturating_since(self.rt_prop_stamp) > RTPROP_WINDOW;
        if let Some(r) = rtt {
            if self.rt_prop.is_none_or(|m| r <= m) || self.rt_prop_expired {
                self.rt_prop = Some(r);
                self.rt_prop_stamp = ack.now;
            }
        }
    }

    fn check_full_bw(&mut self) {
        if self.filled_pipe || self.btl_bw == 0.0 {
            return;
        }
        if self.btl_bw >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = self.btl_bw;
            self.full_bw_rounds = 0;
        } else {
            self.full_bw_rounds += 1;
            self.filled_pipe = self.full_bw_rounds >= FULL_BW_ROUNDS;
        }
    }

    /// Linux's `bbr_packets_in_net_at_edt`: of `in_flight` bytes at `now`,
    /// what will still be in the network when the pacer next sends, at
    /// `self.next_departure`: less what the model's bandwidth delivers
    /// meanwhile (whole segments), plus a send quantum (whole segments)
    /// when pacing at a gain above 1 (`probing`).
    fn in_flight_at_departure(&self, now: Instant, in_flight: f64, probing: bool) -> f64 {
        if !self.at_departure {
            return in_flight;
        }
        let wait = self.next_departure.saturating_since(now).as_secs_f64();
        let delivered = (self.bw() * wait / self.mss).floor() * self.mss;
        let quantum = if probing { self.quantum_segments() * self.mss } else { 0.0 };
        (in_flight + quantum - delivered).max(0.0)
    }

    /// Linux's order: the ProbeBW phase (on what was in flight before the
    /// ACK, `prior_in_flight`), then Startup's and Drain's exits (Drain's on
    /// what is in flight now, so a subflow can pass through Drain on one
    /// ACK), then ProbeRTT. Both compare what will be in flight at the
    /// pacer's next departure, with the pacing gain this ACK found.
    fn update_state(&mut self, now: Instant, in_flight: f64, prior_in_flight: f64, lost_now: bool) {
        let bdp = self.full_bdp();
        let (gain, _) = self.gains();
        let at_departure = |p: &Self, bytes: f64| p.in_flight_at_departure(now, bytes, gain > 1.0);
        if self.state == BbrState::ProbeBw {
            let phase_over = self.rt_prop.is_some_and(|r| now.saturating_since(self.cycle_stamp) > r);
            let prior_in_flight = at_departure(self, prior_in_flight);
            let advance = if gain > 1.0 {
                phase_over && (lost_now || prior_in_flight >= self.inflight(bdp, gain))
            } else if gain < 1.0 {
                phase_over || prior_in_flight <= self.inflight(bdp, 1.0)
            } else {
                phase_over
            };
            if advance {
                self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
                self.cycle_stamp = now;
            }
        }
        if self.state == BbrState::Startup && self.filled_pipe {
            self.state = BbrState::Drain;
        }
        if self.state == BbrState::Drain && at_departure(self, in_flight) <= self.inflight(bdp, 1.0) {
            self.enter_probe_bw(now);
        }
        self.check_probe_rtt(now, in_flight);
    }

    fn enter_probe_bw(&mut self, now: Instant) {
        self.state = BbrState::ProbeBw;
        self.cycle_index = 2;
        self.cycle_stamp = now;
    }

    fn check_probe_rtt(&mut self, now: Instant, in_flight: f64) {
        if self.state != BbrState::ProbeRtt && self.rt_prop_expired && self.rt_prop.is_some() {
            self.rt_prop_expired = false;
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
            self.state = BbrState::ProbeRtt;
            self.probe_rtt_done = None;
        }
        if self.state != BbrState::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if in_flight <= MIN_WINDOW_SEGMENTS * self.mss => {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            }
            Some(done) if self.probe_rtt_round_done && now >= done => {
                self.rt_prop_stamp = now;
                self.cwnd = self.cwnd.max(self.prior_cwnd);
                if self.filled_pipe {
                    self.enter_probe_bw(now);
                } else {
                    self.state = BbrState::Startup;
                }
            }
            _ => {}
        }
    }

    /// Linux's `bbr_save_cwnd`: the window to restore after recovery or
    /// ProbeRTT; one already saved by either is kept if larger.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.prev_ca_state == CaState::Open && self.state != BbrState::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// Linux's `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    /// Entering fast recovery, the window becomes what is in flight plus
    /// what this ACK delivered, and for one round releases one packet per
    /// packet delivered (packet conservation, without the 4-segment floor);
    /// leaving recovery it gets back the window saved before. Otherwise it
    /// grows by what is acknowledged towards the model's target, and once
    /// the pipe is filled never beyond it.
    ///
    /// After a timeout the window grows from one segment through the loss
    /// state, as it does outside recovery, and the saved window comes back
    /// when the state ends (Linux: leaving `TCP_CA_Loss` for the open state).
    fn set_cwnd(&mut self, acked: f64, in_flight: f64, state: CaState, lost: f64) {
        // An ACK releases at most twice what it delivered: first the
        // packets it showed lost come off the window (`rs->losses`), then
        // it grows by what it acknowledged.
        let mut cwnd = (self.cwnd - lost).max(self.mss);
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = self.delivered;
            cwnd = in_flight + acked;
        } else if self.prev_ca_state != CaState::Open && state == CaState::Open {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            cwnd = cwnd.max(in_flight + acked);
        } else {
            let (_, cwnd_gain) = self.gains();
            let target = self.target_window(cwnd_gain);
            if self.filled_pipe {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || (self.delivered as f64) < INIT_CWND_SEGMENTS * self.mss || self.bdp().is_none() {
                cwnd += acked;
            }
            cwnd = cwnd.max(MIN_WINDOW_SEGMENTS * self.mss);
        }
        self.cwnd = cwnd.max(self.mss);
        if self.state == BbrState::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_WINDOW_SEGMENTS * self.mss);
        }
    }
}

impl PathSlot for BbrPath {
    fn deactivate(&mut self) {
        self.active = false;
    }
}

#[derive(Debug, Default)]
pub struct Bbr {
    pub(super) paths: Vec<BbrPath>,
}

impl Bbr {
    pub fn state(&self, path: usize) -> Option<BbrState> {
        self.paths.get(path).map(|p| p.state)
    }
    /// Bottleneck bandwidth estimate of `path`, bytes per second.
    pub fn btl_bw(&self, path: usize) -> Option<f64> {
        self.paths.get(path).map(|p| p.btl_bw)
    }
}

impl Controller for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn on_path_added(&mut self, path: usize, mss: u32, iw: u32) {
        install(&mut self.paths, path, BbrPath::new(mss, iw));
    }
    fn on_path_removed(&mut self, path: usize) {
        deactivate(&mut self.paths, path);
    }
    fn on_ack(&mut self, path: usize, ack: &AckSample, paths: &[PathView]) {
        let Some(p) = self.paths.get_mut(path).filter(|p| p.active) else { return };
        let in_flight = paths.get(path).map_or(0.0, |v| v.bytes_in_flight as f64);
        if p.state == BbrState::ProbeRtt && p.probe_rtt_done.is_some() && p.starts_round(ack) {
            p.probe_rtt_round_done = true;
        }
        let lost = paths.get(path).map_or(p.lost, |v| v.packets_lost);
        p.update_model(ack, ack.rtt, lost);
        p.update_state(ack.now, in_flight, ack.prior_in_flight as f64, false);
        p.set_cwnd(ack.bytes_acked as f64, in_flight, CaState::of(ack), ack.packets_lost as f64 * p.mss);
        p.hold_startup_pacing();
    }
    /// Linux calls `bbr_ssthresh` (which saves the window) on entering fast
    /// recovery; the window itself is set on this ACK's `on_ack`
    /// ([`BbrPath::set_cwnd`]). A loss also ends ProbeBW's probing phase.
    fn on_congestion_event(&mut self, now: Instant, path: usize, paths: &[PathView]) {
        let Some(p) = self.paths.get_mut(path).filter(|p| p.active) else { return };
        let in_flight = paths.get(path).map_or(0.0, |v| v.bytes_in_flight as f64);
        p.save_cwnd();
        p.update_state(now, in_flight, in_flight, true);
    }
    /// The window to restore is saved by `bbr_ssthresh`, which Linux does
    /// not call in fast recovery: the one saved when recovery began stays.
    /// Entering the loss state (`bbr_set_state`) restarts the search for
    /// full bandwidth and is a loss ending a round to the policer model
    /// (the packets the timeout declared lost counted); the window grows
    /// back, and is restored when the state ends ([`BbrPath::set_cwnd`]).
    fn on_rto(&mut self, now: Instant, path: usize, paths: &[PathView], in_recovery: bool) {
        let Some(p) = self.paths.get_mut(path).filter(|p| p.active) else { return };
        if !in_recovery {
            p.save_cwnd();
        }
        (p.prev_ca_state, p.packet_conservation) = (CaState::Loss, false);
        p.cwnd = p.mss;
        p.full_bw = 0.0;
        p.full_bw_rounds = 0;
        p.lost = paths.get(path).map_or(p.lost, |v| v.packets_lost);
        p.sample_long_term(now, true, false, true);
    }
    /// Linux's undo leaves the loss state, and BBR then restores the window
    /// it saved (`bbr_set_cwnd_to_recover_or_restore`: cwnd = max(cwnd,
    /// prior_cwnd)) and ends packet conservation; `bbr_undo_cwnd` also
    /// restarts the search for full bandwidth (which matters only before
    /// the pipe is filled) and the policer model's sampling.
    fn on_spurious_rto(&mut self, path: usize) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.active) {
            p.cwnd = p.cwnd.max(p.prior_cwnd);
            p.packet_conservation = false;
            p.full_bw = 0.0;
            p.full_bw_rounds = 0;
            let c = p.counters();
            p.lt.reset(&c);
        }
    }
    /// Linux halves `snd_cwnd` under the module; BBR's model is untouched
    /// and the window grows back by the acknowledged bytes.
    fn penalize(&mut self, _now: Instant, path: usize, _paths: &[PathView]) {
        if let Some(p) = self.paths.get_mut(path).filter(|p| p.active) {
            p.cwnd = (p.cwnd / 2.0).max(MIN_WINDOW_SEGMENTS * p.mss);
        }
    }
    fn window(&self, path: usize) -> u64 {
        self.paths.get(path).map_or(0, |p| p.cwnd as u64)
    }
    fn ssthresh(&self, _path: usize) -> u64 {
        u64::MAX
    }
    fn pacing_rate(&self, path: usize) -> Option<u64> {
        self.paths.get(path).filter(|p| p.active).map(|p| p.pacing_rate().max(1.0) as u64)
    }
    fn paces(&self) -> bool {
        true
    }
    /// In ProbeRTT the window is held at four segments: Linux marks the
    /// connection application-limited then (`bbr_update_min_rtt`), so that
    /// the low rates sampled do not pull BtlBw down.
    fn samples_app_limited(&self, path: usize) -> bool {
        self.paths.get(path).is_some_and(|p| p.active && p.state == BbrState::ProbeRtt)
    }
    fn answers_after_ack(&self) -> bool {
        true
    }
    /// `bbr_sndbuf_expand`: BBR may slow-start even during recovery.
    fn sndbuf_expand(&self) -> u32 {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subflow::RateSample;

    fn ack(ms: u64, acked: u64, delivered: u64, rate: f64, prior: u64, rtt_ms: u64) -> AckSample {
        AckSample {
            now: Instant::ZERO + Duration::from_millis(ms),
            bytes_acked: acked,
            rtt: Some(Duration::from_millis(rtt_ms)),
            prior_in_flight: 0,
            packets_lost: 0,
            in_recovery: false,
            in_loss: false,
            window_use: crate::cc::WindowUse::FULL,
            delivered,
            rate: Some(RateSample { delivery_rate: rate, prior_delivered: prior, is_app_limited: false }),
            prior_delivered: Some(prior),
            next_departure: Instant::ZERO,
        }
    }

    #[test]
    fn windowed_max_forgets_old_peaks() {
        let mut f = WindowedMax::default();
        assert_eq!(f.update(0, 5.0, 10), 5.0);
        assert_eq!(f.update(3, 3.0, 10), 5.0);
        assert_eq!(f.update(7, 4.0, 10), 5.0);
        // Round 11: the peak from round 0 is more than 10 rounds old; the
        // best of what remains (4.0 from round 7) takes over.
        assert_eq!(f.update(11, 1.0, 10), 4.0);
        assert_eq!(f.update(12, 9.0, 10), 9.0, "a new peak wins at once");
        assert_eq!(f.update(40, 2.0, 10), 2.0, "everything aged out");
    }

    /// The runners-up are refreshed after a quarter and a half of the
    /// window without a new second or third best (Linux's minmax), so when
    /// the best ages out the next estimate is recent.
    #[test]
    fn windowed_max_keeps_recent_runners_up() {
        let mut f = WindowedMax::default();
        f.update(0, 10.0, 100);
        f.update(20, 8.0, 100);
        assert_eq!(f.s[1], (0, 10.0), "within a quarter window the best is also second");
        f.update(30, 8.0, 100);
        assert_eq!(f.s[1], (30, 8.0), "past a quarter window: this one is second");
        f.update(40, 7.0, 100);
        assert_eq!(f.s[2], (30, 8.0), "within half a window the third stays");
        f.update(50, 6.5, 100);
        assert_eq!(f.s[2], (30, 8.0), "at exactly half a window the third stays");
        f.update(60, 6.0, 100);
        assert_eq!(f.s[2], (60, 6.0), "past half a window: this one is third");
        assert_eq!(f.update(101, 1.0, 100), 8.0, "the best aged out: the second takes over");
        assert_eq!(f.update(131, 1.0, 100), 6.0, "then the third");
    }

    /// One subflow of 1000-byte segments whose pipe is filled, with BtlBw
    /// 1.25 MB/s and RTprop 40 ms (BDP 50 kB), in `state` at gain-cycle
    /// phase `index`.
    fn cruising(state: BbrState, index: usize) -> Bbr {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let p = &mut b.paths[0];
        p.btl_bw = p.bw_filter.update(0, 1.25e6, BTLBW_ROUNDS);
        (p.rt_prop, p.state, p.cycle_index, p.filled_pipe) = (Some(Duration::from_millis(40)), state, index, true);
        b
    }

    /// The model's window by hand: BtlBw 1.25 MB/s x RTprop 40 ms = 50
    /// segments of 1000 B, plus three send quanta of 2 segments (the floor:
    /// 1 ms at 0.99 x 1.25 MB/s is 1237 B): 56 segments, already even; two
    /// more in the probing phase. Entering fast recovery the window is what
    /// is in flight plus what the ACK delivered, with no 4-segment floor;
    /// for a round it releases a packet per packet delivered; then it grows
    /// by what is acknowledged; leaving recovery it gets back the window
    /// from before.
    #[test]
    fn target_window_and_loss_conservation_by_hand() {
        let mut b = cruising(BbrState::ProbeBw, 2);
        let p = &mut b.paths[0];
        assert_eq!(p.target_window(1.0), 56_000.0);
        p.cycle_index = 0;
        assert_eq!(p.target_window(1.0), 58_000.0, "probing");
        p.cycle_index = 2;
        p.cwnd = 50_000.0;
        let view = |bytes_in_flight| [PathView { active: true, bytes_in_flight, ..Default::default() }];
        b.on_congestion_event(Instant::ZERO, 0, &view(1_000));
        assert_eq!(b.window(0), 50_000, "the window is set on the ACK");
        let recovering =
            |ms, delivered, prior| AckSample { in_recovery: true, ..ack(ms, 1000, delivered, 1.25e6, prior, 40) };
        b.on_ack(0, &recovering(10, 101_000, 90_000), &view(1_000));
        assert_eq!(b.window(0), 2_000, "one in flight, one delivered: below four segments");
        b.on_ack(0, &recovering(11, 102_000, 91_000), &view(3_000));
        assert_eq!(b.window(0), 4_000, "in flight plus delivered");
        b.on_ack(0, &recovering(12, 103_000, 92_000), &view(1_000));
        assert_eq!(b.window(0), 4_000, "never less during the round");
        b.on_ack(0, &recovering(50, 104_000, 101_000), &view(3_000));
        assert_eq!(b.window(0), 5_000, "a round later: growing by what is acknowledged");
        b.on_ack(0, &ack(60, 1000, 105_000, 1.25e6, 102_000, 40), &view(3_000));
        assert_eq!(b.window(0), 51_000, "recovery over: the window from before, then growing");
    }

    /// After a timeout the window is one segment and grows by what is
    /// acknowledged (at least four segments) through the loss state, not
    /// restored at the first acknowledgement; when the state ends the window
    /// saved at the timeout comes back. BBR has no slow-start threshold.
    #[test]
    fn a_timeout_restarts_from_one_segment_until_the_loss_state_ends() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, ..Default::default() }];
        assert_eq!(b.ssthresh(0), u64::MAX);
        b.on_rto(Instant::ZERO, 0, &view, false);
        assert_eq!(b.window(0), 1000);
        let in_loss = |ms, delivered, prior| AckSample { in_loss: true, ..ack(ms, 1000, delivered, 1.25e6, prior, 40) };
        b.on_ack(0, &in_loss(40, 1000, 0), &view);
        assert_eq!(b.window(0), 4000, "one segment plus one acknowledged, at least the floor of four");
        b.on_ack(0, &in_loss(80, 2000, 1000), &view);
        assert_eq!(b.window(0), 5000, "growing by what is acknowledged");
        b.on_ack(0, &ack(120, 1000, 3000, 1.25e6, 2000, 40), &view);
        assert_eq!(b.window(0), 11_000, "the state over: the 10 segments from before, then growing by one");
    }

    #[test]
    fn gains_match_the_draft() {
        assert!((STARTUP_GAIN - 2.0 / std::f64::consts::LN_2).abs() < 1e-12);
        assert!((DRAIN_GAIN * STARTUP_GAIN - 1.0).abs() < 1e-12);
        assert_eq!(CYCLE.iter().sum::<f64>(), 8.0, "the cycle averages to gain 1");
    }

    #[test]
    fn model_window_and_pacing_from_btlbw_and_rtprop() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, ..Default::default() }];
        // 1.25 MB/s (10 Mbit/s) at 40 ms: BDP = 50 kB.
        b.on_ack(0, &ack(40, 1000, 1000, 1_250_000.0, 0, 40), &view);
        let p = &b.paths[0];
        assert_eq!(p.btl_bw, 1_250_000.0);
        assert_eq!(p.rt_prop, Some(Duration::from_millis(40)));
        assert!((p.bdp().unwrap() - 50_000.0).abs() < 1e-6);
        // Startup pacing: 2.885 x 1.25 MB/s, 1% below.
        assert_eq!(b.pacing_rate(0), Some((PACING_MARGIN * STARTUP_GAIN * 1_250_000.0) as u64));
        // Quantum at 3.57 MB/s pacing is 3570 B (1 ms), 3 whole segments, so
        // the target window at gain 2 is 100 segments + 9, rounded up to even.
        let q = b.paths[0].send_quantum();
        assert!((q - PACING_MARGIN * STARTUP_GAIN * 1250.0).abs() < 1e-6);
        assert_eq!(b.paths[0].target_window(2.0), 110_000.0);
    }

    /// With a policer modelled at 1 MB/s (BtlBw 1.25 MB/s), ProbeBW's
    /// probing phase paces at gain 1 on the long-term rate: 0.99 MB/s; the
    /// window's target is its BDP at 40 ms (40 segments of 1000 B) plus
    /// three quanta of 2 segments, plus the probing phase's 2: 48; and the
    /// phase ends after RTprop without waiting for 1.25 BDP in flight.
    #[test]
    fn a_modelled_policer_sets_rate_window_and_gain() {
        let mut b = cruising(BbrState::ProbeBw, 0);
        let p = &mut b.paths[0];
        p.lt = LongTermBw::policed_at(1e6);
        assert_eq!(p.gains(), (1.0, 2.0));
        assert_eq!(b.pacing_rate(0), Some(990_000));
        let p = &mut b.paths[0];
        assert_eq!(p.target_window(1.0), 48_000.0);
        p.update_state(Instant::ZERO + Duration::from_millis(41), 10_000.0, 10_000.0, false);
        assert_eq!(p.cycle_index, 1, "a cruise, not a probe: over after RTprop");
        assert_eq!(p.full_bdp(), Some(50_000.0), "the state machine keeps BtlBw");
    }

    /// A timeout is a loss to the policer model, which opens an interval;
    /// undoing the timeout closes it again.
    #[test]
    fn timeouts_open_the_policer_models_interval_and_undos_reset_it() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, packets_lost: 7, ..Default::default() }];
        b.on_rto(Instant::ZERO, 0, &view, false);
        assert!(b.paths[0].lt.sampling());
        assert_eq!(b.paths[0].lost, 7, "the timeout's lost packets counted");
        b.on_spurious_rto(0);
        assert!(!b.paths[0].lt.sampling());
    }

    /// Drives a subflow through Startup into Drain: each ACK is one round,
    /// and the bandwidth stops growing by 25% after round 3. BtlBw ends at
    /// 4.3 MB/s and RTprop at 40 ms (BDP 172 kB); returns the bytes delivered.
    fn drained(b: &mut Bbr, view: &[PathView]) -> u64 {
        b.on_path_added(0, 1000, 10);
        let mut delivered = 0;
        for (round, rate) in [1e6, 2e6, 4e6, 4.1e6, 4.2e6, 4.3e6, 4.3e6].iter().enumerate() {
            let prior = delivered;
            delivered += 50_000;
            b.on_ack(0, &ack(40 * (round as u64 + 1), 50_000, delivered, *rate, prior, 40), view);
        }
        delivered
    }

    /// One more ACK at `ms` of 1000 bytes, for a packet sent after the
    /// previous ACK, at 4.3 MB/s, with what `view` has in flight before and after it.
    fn next_ack(b: &mut Bbr, delivered: &mut u64, ms: u64, rtt_ms: u64, view: &[PathView]) {
        let prior_in_flight = view[0].bytes_in_flight;
        b.on_ack(
            0,
            &AckSample { prior_in_flight, ..ack(ms, 1000, *delivered + 1000, 4.3e6, *delivered, rtt_ms) },
            view,
        );
        *delivered += 1000;
    }

    #[test]
    fn startup_exits_after_three_rounds_without_growth_then_drains() {
        let mut b = Bbr::default();
        let mut view = [PathView { active: true, bytes_in_flight: 200_000, ..Default::default() }];
        let delivered = drained(&mut b, &view);
        assert_eq!(b.state(0), Some(BbrState::Drain), "full pipe after 3 rounds below 25% growth");
        assert_eq!(b.btl_bw(0), Some(4.3e6));
        // In flight falls to one BDP (4.3 MB/s x 40 ms = 172 kB): ProbeBW.
        view[0].bytes_in_flight = 150_000;
        b.on_ack(0, &ack(400, 1000, delivered + 1000, 4.3e6, delivered, 40), &view);
        assert_eq!(b.state(0), Some(BbrState::ProbeBw));
        assert_eq!(b.pacing_rate(0), Some(4_257_000), "cruise phase, gain 1, 1% below");
    }

    /// Startup ends after three rounds without 25% growth, counting only
    /// rounds whose sample is not application-limited
    /// (`bbr_check_full_bw_reached`); a timeout restarts the count.
    #[test]
    fn full_bandwidth_counts_rounds_the_path_limited() {
        let rounds = |b: &mut Bbr, first: u64, n: u64, app_limited: bool| {
            let view = [PathView { active: true, bytes_in_flight: 200_000, ..Default::default() }];
            for round in first..first + n {
                let mut a = ack(40 * round, 50_000, 50_000 * round, 4e6, 50_000 * (round - 1), 40);
                a.rate = a.rate.map(|r| RateSample { is_app_limited: app_limited, ..r });
                b.on_ack(0, &a, &view);
            }
        };
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        rounds(&mut b, 1, 6, true);
        assert_eq!(b.state(0), Some(BbrState::Startup), "six flat rounds, all application-limited");
        rounds(&mut b, 7, 2, false);
        assert_eq!(b.state(0), Some(BbrState::Startup), "two flat rounds the path limited");
        b.on_rto(Instant::ZERO, 0, &[], false);
        rounds(&mut b, 9, 3, false);
        assert_eq!(b.state(0), Some(BbrState::Startup), "the timeout restarted the count");
        rounds(&mut b, 12, 1, false);
        assert_eq!(b.state(0), Some(BbrState::Drain), "three rounds after the first");
    }

    /// Each acknowledgement first takes the packets it showed lost off the
    /// window (`rs->losses` in `bbr_set_cwnd_to_recover_or_restore`), then
    /// grows it by what it acknowledged: by hand, the initial 10 segments,
    /// three lost and one acknowledged make 8; none lost, 11.
    #[test]
    fn packets_shown_lost_come_off_the_window() {
        for (lost, window) in [(3, 8_000), (0, 11_000)] {
            let mut b = Bbr::default();
            b.on_path_added(0, 1000, 10);
            let view = [PathView { active: true, bytes_in_flight: 5_000, ..Default::default() }];
            b.on_ack(0, &AckSample { packets_lost: lost, ..ack(40, 1000, 1000, 1e6, 0, 40) }, &view);
            assert_eq!(b.window(0), window, "{lost} lost");
        }
    }

    /// A round ends only on an acknowledgement with a valid rate sample
    /// (`bbr_update_bw` returns first on an invalid one): an ACK past the
    /// round's mark whose interval was too short to sample starts none, the
    /// next valid one does.
    #[test]
    fn a_round_ends_only_on_a_valid_rate_sample() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, bytes_in_flight: 10_000, ..Default::default() }];
        b.on_ack(0, &ack(40, 1000, 1000, 1e6, 0, 40), &view);
        assert_eq!(b.paths[0].round, 1);
        let no_sample = AckSample { rate: None, ..ack(80, 1000, 2000, 1e6, 1000, 40) };
        b.on_ack(0, &no_sample, &view);
        assert_eq!(b.paths[0].round, 1, "past the mark, but no valid sample");
        b.on_ack(0, &ack(81, 1000, 3000, 1e6, 1000, 40), &view);
        assert_eq!(b.paths[0].round, 2);
    }

    /// Until the pipe is filled the pacing rate only rises (the draft's
    /// `BBRSetPacingRateWithGain`, Linux's `bbr_set_pacing_rate`): a first
    /// sample far below the initial window over the RTT (one byte written,
    /// then a long pause) keeps the initial rate; a higher one raises it.
    /// Once the pipe is filled the rate follows the estimate, down too.
    /// (Paced at the first sample, a subflow sent its next 1448 bytes 24
    /// minutes later: found by the `connection` fuzz target's driver.)
    #[test]
    fn startup_pacing_never_falls_below_the_initial_rate() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, bytes_in_flight: 200_000, ..Default::default() }];
        // A sample of 0.02 B/s (one byte over 50 s); RTT 40 ms. Initial:
        // 2.885 x 10 kB / 40 ms.
        b.on_ack(0, &ack(40, 1, 1, 0.02, 0, 40), &view);
        assert_eq!(b.btl_bw(0), Some(0.02));
        let initial = PACING_MARGIN * STARTUP_GAIN * 10_000.0 / 0.040;
        assert_eq!(b.pacing_rate(0), Some(initial as u64));
        // A sample above it: 2.885 x 1 MB/s.
        b.on_ack(0, &ack(80, 1000, 1001, 1e6, 1, 40), &view);
        assert_eq!(b.pacing_rate(0), Some((PACING_MARGIN * STARTUP_GAIN * 1e6) as u64));
        // Through Startup (peak 4.3 MB/s, paced at 2.885 x that) into Drain:
        // the rate falls to the drain gain x 4.3 MB/s.
        let mut b = Bbr::default();
        drained(&mut b, &view);
        assert_eq!(b.state(0), Some(BbrState::Drain));
        assert_eq!(b.pacing_rate(0), Some((PACING_MARGIN * DRAIN_GAIN * 4.3e6) as u64));
    }

    /// BtlBw is the maximum over the last 10 round trips: a lower rate
    /// takes over once the peak is more than 10 rounds old.
    #[test]
    fn btlbw_forgets_a_peak_after_ten_rounds() {
        let mut b = Bbr::default();
        let view = [PathView { active: true, bytes_in_flight: 150_000, ..Default::default() }];
        let mut delivered = drained(&mut b, &view);
        // The 4.3 MB/s peak came in rounds 6 and 7; each ACK below is a round at 2 MB/s.
        for round in 8..=17 {
            b.on_ack(0, &ack(40 * round, 1000, delivered + 1000, 2e6, delivered, 40), &view);
            delivered += 1000;
            assert_eq!(b.btl_bw(0), Some(4.3e6), "round {round}");
        }
        b.on_ack(0, &ack(40 * 18, 1000, delivered + 1000, 2e6, delivered, 40), &view);
        assert_eq!(b.btl_bw(0), Some(2e6), "round 18: the peak of round 7 is 11 rounds old");
    }

    /// Drain holds while more than one BDP and three quanta are in flight
    /// (172 segments + 3 x 2: 178 kB); in ProbeBW a cruise phase (gain 1)
    /// lasts one RTprop whatever is in flight, and the window follows gain
    /// 2 x BDP + 3 quanta.
    #[test]
    fn drain_then_probe_bw_phases_and_window() {
        let mut b = Bbr::default();
        let mut view = [PathView { active: true, bytes_in_flight: 200_000, ..Default::default() }];
        let mut delivered = drained(&mut b, &view);
        // Startup's 50 kB ACKs count as ACK aggregation, which would add to
        // the window's target: the target here is the BDP's alone (the
        // allowance has its own test below).
        b.paths[0].aggregation = None;
        view[0].bytes_in_flight = 180_000;
        next_ack(&mut b, &mut delivered, 300, 40, &view);
        assert_eq!(b.state(0), Some(BbrState::Drain), "180 kB in flight is above 178 kB");
        view[0].bytes_in_flight = 150_000;
        next_ack(&mut b, &mut delivered, 400, 40, &view);
        assert_eq!((b.state(0), b.paths[0].cycle_index), (Some(BbrState::ProbeBw), 2));
        // Window: 2 x 172 segments + 3 quanta of 4 whole segments (1 ms at
        // 0.99 x 4.3 MB/s is 4257 B) = 356 segments.
        assert_eq!(b.window(0), 356_000);
        next_ack(&mut b, &mut delivered, 430, 40, &view);
        assert_eq!(b.paths[0].cycle_index, 2, "30 ms into a 40 ms phase");
        next_ack(&mut b, &mut delivered, 440, 40, &view);
        assert_eq!(b.paths[0].cycle_index, 2, "a phase ends after more than one RTprop");
        next_ack(&mut b, &mut delivered, 441, 40, &view);
        assert_eq!(b.paths[0].cycle_index, 3, "a cruise phase ends after one RTprop, in flight below the BDP");
        // Halved under penalize, then growing by what is acknowledged.
        b.penalize(Instant::ZERO, 0, &view);
        assert_eq!(b.window(0), 178_000);
        next_ack(&mut b, &mut delivered, 450, 40, &view);
        assert_eq!(b.window(0), 179_000);
    }

    /// Linux's allowance for ACK aggregation. Startup's ACKs came 50 kB at
    /// a time, 40 ms apart, less than BtlBw would deliver in that time, so
    /// each started an epoch and counted whole (capped by the window) as
    /// the excess: once the pipe is filled the window's target is 50
    /// segments above the BDP's 2 x 172 + 12 = 356, until the rounds that
    /// saw the bursts leave the filter (5 to 10 rounds; each ACK here
    /// starts one). ACKs of one segment every millisecond, at BtlBw (4.3
    /// segments a millisecond), each start an epoch too: one segment more.
    #[test]
    fn ack_aggregation_raises_the_window_target() {
        let mut b = Bbr::default();
        let view = [PathView { active: true, bytes_in_flight: 150_000, ..Default::default() }];
        let mut delivered = drained(&mut b, &view);
        next_ack(&mut b, &mut delivered, 400, 40, &view);
        assert_eq!(b.state(0), Some(BbrState::ProbeBw));
        assert_eq!(b.paths[0].target_window(2.0), 406_000.0);
        let mut without = b.paths[0].clone();
        without.aggregation = None;
        assert_eq!(without.target_window(2.0), 356_000.0);
        for ms in 401..=410 {
            next_ack(&mut b, &mut delivered, ms, 40, &view);
        }
        assert_eq!(b.paths[0].target_window(2.0), 358_000.0);
    }

    /// Before the pipe is filled the allowance is measured but not added
    /// (`bbr_full_bw_reached` in Linux's `bbr_ack_aggregation_cwnd`).
    #[test]
    fn no_ack_aggregation_allowance_before_the_pipe_is_filled() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, bytes_in_flight: 100_000, ..Default::default() }];
        let mut delivered = 0;
        for (round, rate) in [1e6, 2e6, 4e6].into_iter().enumerate() {
            let prior = delivered;
            delivered += 50_000;
            b.on_ack(0, &ack(40 * (round as u64 + 1), 50_000, delivered, rate, prior, 40), &view);
        }
        assert_eq!(b.state(0), Some(BbrState::Startup));
        let p = &b.paths[0];
        assert!(p.aggregation.as_ref().unwrap().allowance_segments(p.btl_bw, p.mss) > 0.0, "bursts were seen");
        let mut without = p.clone();
        without.aggregation = None;
        assert_eq!(p.target_window(STARTUP_GAIN), without.target_window(STARTUP_GAIN));
    }

    /// ProbeBW's probing phase (gain 1.25) lasts at least one RTprop and
    /// until 1.25 BDP is in flight (or a loss); the draining phase (0.75)
    /// ends early once in flight is down to one BDP: each with Linux's
    /// quanta (`bbr_inflight`), compared with what was in flight before
    /// the ACK, plus, while probing, the send quantum about to go out (the
    /// pacer may send at once here, so nothing is delivered before it).
    #[test]
    fn probe_bw_gain_phases_end_on_in_flight() {
        let mut b = Bbr::default();
        let mut view = [PathView { active: true, bytes_in_flight: 150_000, ..Default::default() }];
        let mut delivered = drained(&mut b, &view);
        next_ack(&mut b, &mut delivered, 400, 40, &view);
        b.paths[0].cycle_index = 0;
        // Probing: 1.25 x 172 = 215 segments, 3 quanta of 5 (1 ms at 0.99 x
        // 1.25 x 4.3 MB/s is 5321 B), even, 2 more: 232 kB. The phase
        // started at 400 ms, RTprop 40 ms. Draining: 172 segments, 3 quanta
        // of 3 (3193 B), even: 182 kB.
        for (in_flight, ms, index, why) in [
            (240_000, 410, 0, "enough in flight, but within the RTprop"),
            (226_000, 441, 0, "past the RTprop, 1 kB short with the 5 kB quantum"),
            (227_000, 450, 1, "past the RTprop and enough in flight with the quantum"),
            (184_000, 455, 1, "gain 0.75: 2 kB above, within the RTprop"),
            (182_000, 460, 2, "gain 0.75: down to one BDP and the quanta, the phase ends at once"),
        ] {
            view[0].bytes_in_flight = in_flight;
            next_ack(&mut b, &mut delivered, ms, 40, &view);
            assert_eq!(b.paths[0].cycle_index, index, "{why}");
        }
    }

    /// `bbr_packets_in_net_at_edt` by hand: BtlBw 1.25 MB/s, segments of
    /// 1000 B, 50 kB in flight. The pacer's next departure 10 ms away:
    /// 12.5 kB delivered by then, 12 whole segments, so 38 kB; probing
    /// adds the send quantum (1 ms at 0.99 x 1.25 x 1.25 MB/s is 1547 B,
    /// so the 2-segment floor): 40 kB. A departure already due delivers
    /// nothing; one far off leaves nothing in flight.
    #[test]
    fn in_flight_at_the_pacers_next_departure_by_hand() {
        let mut b = cruising(BbrState::ProbeBw, 0);
        let p = &mut b.paths[0];
        let now = Instant::ZERO + Duration::from_secs(1);
        p.next_departure = now + Duration::from_millis(10);
        assert_eq!(p.in_flight_at_departure(now, 50_000.0, false), 38_000.0);
        assert_eq!(p.in_flight_at_departure(now, 50_000.0, true), 40_000.0);
        p.next_departure = Instant::ZERO + Duration::from_millis(990);
        assert_eq!(p.in_flight_at_departure(now, 50_000.0, false), 50_000.0);
        p.next_departure = now + Duration::from_secs(1);
        assert_eq!(p.in_flight_at_departure(now, 50_000.0, true), 0.0);
    }

    /// Drain ends when what will be in flight at the pacer's next departure
    /// is down to the target (56 kB here: 50 segments, three quanta of 2),
    /// though more is in flight now; Startup's gain, still in force on the
    /// ACK that enters Drain, adds a quantum (sized at Drain's rate: its
    /// 2-segment floor).
    #[test]
    fn drain_ends_on_what_is_in_flight_at_the_next_departure() {
        let mut b = cruising(BbrState::Drain, 2);
        let p = &mut b.paths[0];
        let now = Instant::ZERO + Duration::from_secs(1);
        p.next_departure = now + Duration::from_millis(5);
        p.update_state(now, 62_000.0, 62_000.0, false);
        assert_eq!(p.state, BbrState::ProbeBw, "62 kB less 6.25 kB (6 segments) delivered by the departure");
        let p = &mut b.paths[0];
        (p.state, p.next_departure) = (BbrState::Drain, now);
        p.update_state(now, 57_000.0, 57_000.0, false);
        assert_eq!(p.state, BbrState::Drain, "57 kB now and at the departure");
        let p = &mut b.paths[0];
        p.state = BbrState::Startup;
        p.update_state(now, 55_000.0, 55_000.0, false);
        assert_eq!(p.state, BbrState::Drain, "55 kB and, at Startup's gain, a 2 kB quantum");
        let p = &mut b.paths[0];
        p.update_state(now, 55_000.0, 55_000.0, false);
        assert_eq!(p.state, BbrState::ProbeBw, "at Drain's gain, no quantum");
    }

    /// RTprop expires when it is more than 10 s old (the draft's
    /// `Now() > rtprop_stamp + RTpropFilterLen`), not at exactly 10 s.
    #[test]
    fn rtprop_expires_after_ten_seconds() {
        let mut b = Bbr::default();
        b.on_path_added(0, 1000, 10);
        let view = [PathView { active: true, ..Default::default() }];
        b.on_ack(0, &ack(40, 1000, 1000, 5e5, 0, 40), &view);
        // Startup paces at 2.885 x 500 kB/s: 1 ms is 1443 B, below the
        // quantum's floor of 2 segments.
        assert_eq!(b.paths[0].send_quantum(), 2000.0);
        b.on_ack(0, &ack(10_040, 1000, 2000, 5e5, 1000, 50), &view);
        assert_eq!(b.paths[0].rt_prop, Some(Duration::from_millis(40)));
        b.on_ack(0, &ack(10_041, 1000, 3000, 5e5, 2000, 50), &view);
        assert_eq!(b.paths[0].rt_prop, Some(Duration::from_millis(50)));
    }

    /// RTprop unrefreshed for 10 s sends the subflow to ProbeRTT (draft
    /// section 4.3.5, `BBR.rtprop_expired` as computed before the sample
    /// replaces RTprop): the window drops to 4 segments; the 200 ms start
    /// once in flight is down to 4 segments, and ProbeRTT ends after them
    /// and a round trip, restoring the window.
    #[test]
    fn a_stale_rtprop_triggers_probe_rtt() {
        let mut b = Bbr::default();
        let mut view = [PathView { active: true, bytes_in_flight: 150_000, ..Default::default() }];
        let mut delivered = drained(&mut b, &view);
        b.on_ack(0, &ack(400, 1000, delivered + 1000, 4.3e6, delivered, 40), &view);
        delivered += 1000;
        assert_eq!(b.state(0), Some(BbrState::ProbeBw));
        let before = b.window(0);
        // Every later sample is 45 ms: RTprop (40 ms, stamped at 400 ms) expires at 10.4 s.
        assert!(!b.samples_app_limited(0));
        next_ack(&mut b, &mut delivered, 10_401, 45, &view);
        assert_eq!(b.state(0), Some(BbrState::ProbeRtt));
        assert_eq!(b.window(0), 4000);
        assert!(b.samples_app_limited(0), "its low rates must not pull BtlBw down");
        assert_eq!(b.paths[0].rt_prop, Some(Duration::from_millis(45)));
        // 300 ms later, with 150 kB still in flight, ProbeRTT has not started its clock.
        next_ack(&mut b, &mut delivered, 10_701, 45, &view);
        assert_eq!(b.state(0), Some(BbrState::ProbeRtt));
        view[0].bytes_in_flight = 4000;
        next_ack(&mut b, &mut delivered, 10_710, 45, &view);
        let mark = delivered;
        // ProbeRTT ends 200 ms from here and after the ACK of a packet sent
        // after 10.71 s; ACKs of earlier packets do not end the round.
        for ms in [10_800, 10_911] {
            b.on_ack(0, &ack(ms, 1000, delivered + 1000, 4.3e6, mark - 5000, 45), &view);
            delivered += 1000;
            assert_eq!(b.state(0), Some(BbrState::ProbeRtt), "at {ms} ms");
        }
        next_ack(&mut b, &mut delivered, 10_950, 45, &view);
        assert_eq!(b.state(0), Some(BbrState::ProbeBw), "200 ms and a round trip");
        assert!(!b.samples_app_limited(0));
        assert!(b.window(0) >= before, "{} < {before}", b.window(0));
    }
}
