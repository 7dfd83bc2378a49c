//! Buffer autotuning.
//!
//! Send side, two models ([`SendAutotune`]):
//!
//! `Seed003`: seed 003's eq. 2 (and Barré et al.'s rule for MPTCP), a
//! buffer of `2 * max_i RTT_i * sum_i bandwidth_i`, with each subflow's
//! bandwidth estimated as `cwnd_i / SRTT_i`: one round trip of the slowest
//! subflow to keep every subflow busy, and as much again to keep sending
//! while a segment is retransmitted. It starts at [`SEND_AUTOTUNE_INITIAL`]
//! and never shrinks.
//!
//! `Kernel`: MPTCP v0.96 (its Linux 5.4 base and v0.95 on Linux 4.19
//! agree here). A subflow's own buffer is sized as Linux TCP's
//! (`tcp_sndbuf_expand`, net/ipv4/tcp_input.c), with MPTCP's segment count
//! (`mptcp_check_snd_buf`, net/mptcp/mptcp_output.c): `factor * max(cwnd *
//! rtt_max / srtt, reordering + 1) * per_mss`, where `rtt_max` is the
//! longest SRTT of the subflows that can send, so a subflow much faster
//! than the slowest gets room for what it sends while the slow one's
//! segment crosses; `factor` is the congestion module's `sndbuf_expand` (3
//! for BBR and C-MPBBR, 2 for the rest), `per_mss` the memory one
//! full-sized segment costs as its own skb ([`kernel_per_mss`], 4352 bytes
//! for a 1448-byte MSS on x86-64), capped at `tcp_wmem[2]`, never
//! shrinking. A subflow is sized when it is established
//! (`tcp_init_buffer_space`) and grows afterwards only at an
//! acknowledgement of its own that finds the application waiting on the
//! connection's full buffer (`SOCK_NOSPACE`, which the Data ACK's wake-up
//! clears once a third of it is free) and, once the sending that
//! acknowledgement allowed is done (`tcp_data_snd_check`), some regular
//! subflow not using its whole window, or a backup one when all are
//! backups (`mptcp_should_expand_sndbuf`, net/mptcp/mptcp_input.c). The
//! connection's (meta) buffer is `mptcp_update_sndbuf` (net/mptcp/
//! mptcp_ctrl.c): the sum of the sending subflows' buffers, capped at
//! `tcp_wmem[2]`, never shrinking; it starts at `tcp_wmem[1]` (16 KiB).
//! Linux counts memory, Braid payload: the meta-level write queue is built
//! of skbs at the subflows' GSO size goal (`mptcp_xmit_size_goal`), whose
//! memory exceeds their payload by about one percent, so the memory figure
//! is used as payload. (`per_mss` is the kernel's worst case of one skb per
//! segment, which is why a subflow's buffer comes to about three times
//! `factor` of the windows counted, its own scaled by the RTT ratio.)
//! Deviations: a subflow is sized at the first acknowledgement on any
//! subflow after its own first RTT sample, rather than at its handshake's
//! end (its window may be a few segments past the initial 10); the window
//! test counts Braid's byte window and bytes in flight in whole segments;
//! `reordering` is Braid's fixed `dupthresh` of 3, as Linux's default.
//!
//! Receive side: Linux's dynamic right-sizing
//! (`tcp_rcv_space_adjust` and `tcp_rcv_rtt_measure`, Linux 4.19, the base
//! of MPTCP v0.96), applied to the connection-level buffer.
//!
//! The receiver estimates the round trip without timestamps, as Linux does
//! when they are off: the time from advertising a window until the Data ACK
//! passes its right edge, keeping the smallest sample (a window takes at
//! least one round trip to fill). Once per estimated round trip it counts
//! the bytes the application read; when that beats the previous round's
//! best, the window grows to `2 * copied + 16 * mss`, plus twice the growth
//! rate's share (`rcvwin += 2 * rcvwin * (copied - space) / space`), up to
//! the configured maximum. The buffer never shrinks.
//!
//! Deviations: Linux sizes `sk_rcvbuf` in memory (payload plus per-packet
//! overhead) and advertises the payload part; Braid sizes the payload window
//! directly, which is what that conversion yields. MPTCP v0.96 starts the
//! connection with the sum of its subflows' initial buffers; Braid starts at
//! `initial` (128 KiB, Linux's `tcp_rmem[1]`).

use crate::time::{Duration, Instant};

/// Where receive autotuning starts: Linux's default `tcp_rmem[1]`.
pub const AUTOTUNE_INITIAL: u64 = 128 * 1024;

/// Where send autotuning starts: enough for an initial window of 10
/// segments on several subflows.
pub const SEND_AUTOTUNE_INITIAL: u64 = 64 * 1024;

/// Linux's `tcp_wmem[1]`: a socket's send buffer before autotuning.
pub const KERNEL_SNDBUF_INITIAL: u64 = 16 * 1024;

/// How the connection-level send buffer is sized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendAutotune {
    /// Fixed at `Config::send_buffer`.
    #[default]
    Off,
    /// Seed 003 eq. 2, up to `Config::send_buffer`.
    Seed003,
    /// MPTCP v0.96: the sum of the subflows' `tcp_sndbuf_expand` buffers,
    /// up to `Config::send_buffer` (`tcp_wmem[2]`).
    Kernel,
}

/// Linux's memory for one full-sized segment as its own skb, in
/// `tcp_sndbuf_expand`: `roundup_pow_of_two(mss + MAX_TCP_HEADER +
/// SKB_DATA_ALIGN(sizeof(struct skb_shared_info))) +
/// SKB_DATA_ALIGN(sizeof(struct sk_buff))`, with x86-64's 320, 320 and 256
/// bytes (Linux 5.4).
pub fn kernel_per_mss(mss: u32) -> u64 {
    (u64::from(mss) + 320 + 320).next_power_of_two() + 256
}

/// A subflow as the send-buffer tuner sees it after an acknowledgement.
#[derive(Clone, Copy, Debug)]
pub struct TunedPath {
    /// Established and not closed (`mptcp_sk_can_send`).
    pub active: bool,
    pub backup: bool,
    /// Congestion window in bytes.
    pub window: u64,
    /// Bytes in flight.
    pub in_flight: u64,
    pub srtt: Option<Duration>,
    pub mss: u32,
}

impl TunedPath {
    /// `tcp_packets_in_flight(tp) < tp->snd_cwnd`: the window has room for
    /// another whole segment, counted in packets as Linux counts both (a
    /// partly sent segment is a packet in flight; a window's fraction of a
    /// segment is no room).
    fn has_packet_room(&self) -> bool {
        let mss = u64::from(self.mss.max(1));
        self.in_flight.div_ceil(mss) < self.window / mss
    }
}

/// Linux's default `tp->reordering` (`sysctl_tcp_reordering`), Braid's
/// fixed duplicate threshold.
const KERNEL_REORDERING: u64 = 3;

/// Sizes the connection's send buffer as its [`SendAutotune`] mode asks.
#[derive(Clone, Debug)]
pub struct SendTuner {
    mode: SendAutotune,
    max: u64,
    /// The congestion module's `sndbuf_expand` factor (kernel mode).
    factor: u64,
    /// Kernel mode: each subflow's own buffer so far, by subflow index.
    subflows: Vec<u64>,
}

impl SendTuner {
    pub fn new(mode: SendAutotune, max: u64, sndbuf_expand: u32) -> Self {
        SendTuner { mode, max, factor: u64::from(sndbuf_expand), subflows: Vec::new() }
    }

    /// The buffer the connection starts with.
    pub fn initial(&self) -> u64 {
        match self.mode {
            SendAutotune::Off => self.max,
            SendAutotune::Seed003 => SEND_AUTOTUNE_INITIAL.min(self.max),
            SendAutotune::Kernel => KERNEL_SNDBUF_INITIAL.min(self.max),
        }
    }

    pub fn is_on(&self) -> bool {
        self.mode != SendAutotune::Off
    }

    /// The size the buffer should have, given every subflow by index; in
    /// kernel mode `grow` is a subflow whose acknowledgement found the
    /// application waiting on the full buffer, checked once the sending
    /// that acknowledgement allowed is done (the caller only ever grows the
    /// buffer).
    pub fn target(&mut self, grow: Option<usize>, paths: impl Iterator<Item = TunedPath> + Clone) -> u64 {
        match self.mode {
            SendAutotune::Off => self.max,
            SendAutotune::Seed003 => {
                let live = paths.filter(|p| p.active).filter_map(|p| Some((p.window, p.srtt?)));
                send_buffer_target(live).min(self.max)
            }
            SendAutotune::Kernel => {
                let sending = paths.clone().filter(|p| p.active);
                let rtt_max = sending.clone().filter_map(|p| p.srtt).max();
                // `mptcp_should_expand_sndbuf`: a regular subflow with room
                // in its window, or a backup one when all are backups.
                let room = |backup: bool| sending.clone().any(|p| p.backup == backup && p.has_packet_room());
                let room = room(false) || (sending.clone().all(|p| p.backup) && room(true));
                let mut sum = 0u64;
                for (i, p) in paths.enumerate() {
                    if self.subflows.len() <= i {
                        self.subflows.resize(i + 1, 0);
                    }
                    // Sized once established (it has an RTT sample), then
                    // grown at its own acknowledgements while the writer waits.
                    let sized = self.subflows[i] > 0;
                    if p.active && ((!sized && p.srtt.is_some()) || (grow == Some(i) && room)) {
                        let want = self.factor.saturating_mul(kernel_segments(&p, rtt_max));
                        let want = want.saturating_mul(kernel_per_mss(p.mss)).min(self.max);
                        self.subflows[i] = self.subflows[i].max(want);
                    }
                    if p.active {
                        sum = sum.saturating_add(self.subflows[i]);
                    }
                }
                sum.min(self.max)
            }
        }
    }

    /// Subflow `i`'s slot holds a new subflow: it is sized afresh.
    pub fn forget(&mut self, i: usize) {
        if let Some(b) = self.subflows.get_mut(i) {
            *b = 0;
        }
    }
}

/// `mptcp_check_snd_buf`: the segments a subflow's buffer is sized for,
/// its window scaled by the longest SRTT over its own, at least
/// `reordering + 1` (also without an SRTT yet).
fn kernel_segments(p: &TunedPath, rtt_max: Option<Duration>) -> u64 {
    let cwnd = p.window / u64::from(p.mss.max(1));
    let scaled = match (p.srtt, rtt_max) {
        (Some(srtt), Some(max)) if srtt > Duration::ZERO => {
            u64::try_from(u128::from(cwnd) * u128::from(max.as_nanos()) / u128::from(srtt.as_nanos()))
                .unwrap_or(u64::MAX)
        }
        _ => 0,
    };
    scaled.max(KERNEL_REORDERING + 1)
}

/// Seed 003 eq. 2 for subflows given as (cwnd bytes, SRTT): `2 * max RTT *
/// sum(cwnd / SRTT)`, in bytes; 0 without RTT samples.
pub fn send_buffer_target(paths: impl Iterator<Item = (u64, Duration)> + Clone) -> u64 {
    let max_rtt = paths.clone().map(|(_, r)| r.as_secs_f64()).fold(0.0, f64::max);
    let rate: f64 = paths.filter(|(_, r)| *r > Duration::ZERO).map(|(w, r)| w as f64 / r.as_secs_f64()).sum();
    (2.0 * max_rtt * rate) as u64
}

#[derive(Clone, Debug)]
pub struct RecvAutotune {
    max: u64,
    mss: u64,
    /// Smallest time seen for a window to fill.
    rtt: Option<Duration>,
    /// The Data ACK that ends the current RTT measurement, and its start.
    rtt_probe: Option<(u64, Instant)>,
    /// Bytes read at the start of the current round, and when it started.
    round_read: u64,
    round_start: Instant,
    /// Most bytes read in one round so far (Linux's `rcvq_space.space`).
    space: u64,
}

impl RecvAutotune {
    pub fn new(initial: u64, max: u64, mss: u32) -> Self {
        RecvAutotune {
            max,
            mss: u64::from(mss),
            rtt: None,
            rtt_probe: None,
            round_read: 0,
            round_start: Instant::ZERO,
            space: initial / 2,
        }
    }

    /// In-order data reached `data_ack`, with the window's right edge now at
    /// `window_end`.
    pub fn on_data(&mut self, now: Instant, data_ack: u64, window_end: u64) {
        match self.rtt_probe {
            Some((edge, _)) if data_ack < edge => return,
            Some((_, start)) => {
                let sample = now.saturating_since(start);
                if sample > Duration::ZERO {
                    self.rtt = Some(self.rtt.map_or(sample, |r| r.min(sample)));
                }
            }
            None => {}
        }
        self.rtt_probe = Some((window_end, now));
    }

    /// The application has read `bytes_read` in all; returns a larger
    /// window size when this round trip's reading calls for one.
    pub fn on_read(&mut self, now: Instant, bytes_read: u64, capacity: u64) -> Option<u64> {
        let rtt = self.rtt?;
        if now.saturating_since(self.round_start) < rtt {
            return None;
        }
        let copied = bytes_read - self.round_read;
        self.round_read = bytes_read;
        self.round_start = now;
        if copied <= self.space {
            return None;
        }
        // In u128: read counts are untrusted-size and the product may not fit.
        let base = 2 * u128::from(copied) + 16 * u128::from(self.mss);
        let grow = (2 * base * u128::from(copied - self.space)).checked_div(u128::from(self.space)).unwrap_or(0);
        self.space = copied;
        let window = (base + grow).min(u128::from(self.max)) as u64;
        (window > capacity).then_some(window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn send_target_is_twice_the_sum_of_rates_over_the_longest_rtt() {
        let ms = Duration::from_millis;
        // 100 kB / 10 ms + 50 kB / 100 ms = 10.5 MB/s; x 2 x 100 ms = 2.1 MB.
        assert_eq!(send_buffer_target([(100_000, ms(10)), (50_000, ms(100))].into_iter()), 2_100_000);
        assert_eq!(send_buffer_target(std::iter::empty()), 0);
    }

    fn path(window: u64, active: bool) -> TunedPath {
        TunedPath { active, backup: false, window, in_flight: 0, srtt: Some(Duration::from_millis(10)), mss: 1448 }
    }

    /// A sending subflow with a window of `cwnd` segments, `flight` in
    /// flight and an SRTT of `srtt` ms.
    fn sub(cwnd: u64, srtt: u64, flight: u64) -> TunedPath {
        TunedPath {
            active: true,
            backup: false,
            window: cwnd * 1448,
            in_flight: flight * 1448,
            srtt: Some(Duration::from_millis(srtt)),
            mss: 1448,
        }
    }

    #[test]
    fn kernel_per_mss_matches_linux_on_x86_64() {
        // 1448 + 640 = 2088 rounds up to 4096, plus 256 for the sk_buff.
        assert_eq!(kernel_per_mss(1448), 4352);
        assert_eq!(kernel_per_mss(9000), 16384 + 256);
    }

    #[test]
    fn kernel_buffers_follow_mptcp_check_snd_buf_and_grow_only_for_a_waiting_writer() {
        let mut t = SendTuner::new(SendAutotune::Kernel, 16 << 20, 2);
        assert_eq!(t.initial(), 16 * 1024, "tcp_wmem[1]");
        let grow = |t: &mut SendTuner, acked, paths: &[TunedPath], waits: bool| {
            t.target(waits.then_some(acked), paths.iter().copied())
        };
        // The first acknowledgement sizes every subflow with an RTT sample,
        // writer or not: subflow 0, 12 segments x 40 ms / 10 ms = 48, 2 x 48
        // x 4352 = 417,792; subflow 1, 10 x 40 / 40 = 10, 87,040.
        let start = [sub(12, 10, 12), sub(10, 40, 10)];
        assert_eq!(grow(&mut t, 0, &start, false), 504_832);
        // Larger windows, but no writer waiting: nothing grows.
        let full = [sub(100, 10, 100), sub(50, 40, 50)];
        assert_eq!(grow(&mut t, 0, &full, false), 504_832);
        // A waiting writer, but every window in use: nothing grows.
        assert_eq!(grow(&mut t, 0, &full, true), 504_832);
        // Half a segment of window left, or a window of 50 segments with
        // 49.5 in flight, is no room: Linux counts packets.
        let partial = [
            TunedPath { window: 100 * 1448 + 724, ..sub(100, 10, 100) },
            TunedPath { in_flight: 49 * 1448 + 724, ..sub(50, 40, 0) },
        ];
        assert_eq!(grow(&mut t, 0, &partial, true), 504_832);
        // Room on subflow 1 but no writer waiting: nothing grows.
        let room = [sub(100, 10, 100), sub(50, 40, 20)];
        assert_eq!(grow(&mut t, 0, &room, false), 504_832);
        // A waiting writer and room on subflow 1: the acknowledged subflow
        // 0 grows to 100 x 4 = 400 segments (2 x 400 x 4352), not subflow 1.
        assert_eq!(grow(&mut t, 0, &room, true), 3_481_600 + 87_040);
        // Its window halves: it keeps its buffer. A closed subflow no
        // longer counts (mptcp_sk_can_send).
        let mut halved = [sub(50, 10, 10), sub(50, 40, 20)];
        assert_eq!(grow(&mut t, 0, &halved, true), 3_481_600 + 87_040);
        halved[1].active = false;
        assert_eq!(grow(&mut t, 0, &halved, true), 3_481_600);
        // Room only on a backup subflow while a regular one sends: nothing
        // grows; when every subflow is a backup, its room counts.
        let mut t = SendTuner::new(SendAutotune::Kernel, 16 << 20, 2);
        let backup = TunedPath { backup: true, ..sub(10, 10, 0) };
        assert_eq!(grow(&mut t, 0, &[sub(10, 10, 10), backup], true), 2 * 87_040);
        assert_eq!(grow(&mut t, 0, &[sub(20, 10, 20), backup], true), 2 * 87_040);
        let backups = [TunedPath { backup: true, ..sub(20, 10, 20) }, backup];
        assert_eq!(grow(&mut t, 0, &backups, true), 174_080 + 87_040);
        // A slot reused by a new subflow is sized afresh.
        t.forget(0);
        assert_eq!(grow(&mut t, 1, &[sub(10, 10, 10), backup], false), 2 * 87_040);
        // A subflow without an RTT sample is not sized yet (subflow 0's
        // longest RTT is its own: 12 segments, 104,448); grown without one,
        // it counts reordering + 1 = 4 segments (no initial-window floor for
        // MPTCP): 2 x 4 x 4352 = 34,816.
        let mut t = SendTuner::new(SendAutotune::Kernel, 16 << 20, 2);
        let unsampled = TunedPath { srtt: None, ..sub(10, 10, 0) };
        assert_eq!(grow(&mut t, 0, &[sub(12, 10, 12), unsampled], false), 104_448);
        assert_eq!(grow(&mut t, 1, &[sub(12, 10, 12), unsampled], true), 104_448 + 34_816);
        // BBR's factor 3, and the tcp_wmem[2] cap on each and on the sum.
        let mut t = SendTuner::new(SendAutotune::Kernel, 1 << 20, 3);
        assert_eq!(t.target(None, [sub(10, 10, 0)].into_iter()), 3 * 10 * 4352);
        let big = [sub(1000, 10, 0), sub(1000, 10, 0)];
        assert_eq!(grow(&mut t, 1, &big, false), 1 << 20);
    }

    #[test]
    fn seed003_mode_and_fixed_mode() {
        let mut t = SendTuner::new(SendAutotune::Seed003, 4 << 20, 2);
        assert_eq!(t.initial(), SEND_AUTOTUNE_INITIAL);
        // 2 x 10 ms x (100 kB / 10 ms) = 200 kB; the inactive path is left out.
        assert_eq!(t.target(None, [path(100_000, true), path(900_000, false)].into_iter()), 200_000);
        let t = SendTuner::new(SendAutotune::Off, 4 << 20, 2);
        assert_eq!((t.initial(), t.is_on()), (4 << 20, false));
    }

    #[test]
    fn rtt_is_the_quickest_window_fill() {
        let mut a = RecvAutotune::new(AUTOTUNE_INITIAL, 1 << 30, 1000);
        a.on_data(at(0), 0, 10_000);
        a.on_data(at(30), 9_000, 19_000);
        assert_eq!(a.rtt, None, "window edge not reached yet");
        a.on_data(at(40), 10_000, 20_000);
        assert_eq!(a.rtt, Some(Duration::from_millis(40)));
        a.on_data(at(100), 20_000, 30_000);
        assert_eq!(a.rtt, Some(Duration::from_millis(40)), "a slower fill does not raise it");
        a.on_data(at(125), 30_000, 40_000);
        assert_eq!(a.rtt, Some(Duration::from_millis(25)));
    }

    #[test]
    fn window_grows_with_what_the_application_reads_per_round_trip() {
        let mut a = RecvAutotune::new(100_000, 1_000_000, 1000);
        assert_eq!(a.on_read(at(0), 0, 100_000), None, "no RTT estimate yet");
        a.on_data(at(0), 0, 100_000);
        a.on_data(at(50), 100_000, 200_000);
        // Round from 0 to 50 ms: 80 kB read beats space = 50 kB.
        // window = 2 * 80k + 16k = 176k, plus 2 * 176k * 30k / 50k = 211.2k: 387.2 kB.
        assert_eq!(a.on_read(at(50), 80_000, 100_000), Some(387_200));
        assert_eq!(a.on_read(at(60), 90_000, 387_200), None, "less than a round trip later");
        // Next round reads 70 kB: not more than the best (80 kB): no change.
        assert_eq!(a.on_read(at(100), 150_000, 387_200), None);
        // 900 kB in a round: capped at the maximum.
        assert_eq!(a.on_read(at(150), 1_050_000, 387_200), Some(1_000_000));
    }
}
