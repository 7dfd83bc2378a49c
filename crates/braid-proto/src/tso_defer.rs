//! Linux's TSO deferral (`tcp_tso_should_defer`, `net/ipv4/tcp_output.c`,
//! 4.20 to the present; `tcp_tso_autosize` for the segment budget), as an
//! option (`Config::tso_defer`).
//!
//! A Linux sender with segmentation offload (on by default) does not send
//! the moment an acknowledgement opens its window by a segment or two: it
//! holds new data back while the room is smaller than a full offload
//! burst (about 1 ms at the pacing rate, at least 2 segments) and smaller
//! than a third of the window, as long as it sent within the last
//! millisecond and the oldest packet in flight is at least half an SRTT
//! old (so an acknowledgement is due). On a path whose window is a few
//! dozen segments, the pipe runs partly empty while the sender waits:
//! on seed 004's 2 ms, 0.5%-loss path this is what puts Linux's CUBIC and
//! Reno 20% below a sender that fills every opening (docs/validation.md).
//!
//! Never in fast recovery or the loss state, never with less than two
//! segments of new data ready (a one-segment write is Nagle's business),
//! never with nothing in flight. When the window is what holds the data
//! back, the window counts as used (Linux's `is_cwnd_limited`), so a
//! window that defers still grows.
//!
//! Deviations: windows in bytes where Linux counts packets; the "middle of
//! the write queue" rule (a queued buffer that can go out whole) does not
//! apply, as Braid's send buffer is one stream; the send window is the
//! connection's (MPTCP's), as for MPTCP v0.96's subflows.

use crate::time::{Duration, Instant};

/// `sysctl_tcp_tso_win_divisor`: a third of the window is enough to send.
const WIN_DIVISOR: u64 = 3;
/// `tcp_min_tso_segs`.
const MIN_TSO_SEGS: u64 = 2;
/// `sk_pacing_shift` (10): an offload burst is 1/1024 s at the pacing rate.
const PACING_SHIFT: f64 = 1024.0;
/// Deferral only if the sender sent within this long.
const RECENT: Duration = Duration::from_millis(1);
/// Linux's default pacing rate (`tcp_update_pacing_rate`): 200% of
/// cwnd / SRTT in slow start below half of ssthresh, 120% otherwise.
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// The largest buffer Linux queues for offload (`GSO_MAX_SIZE`).
const MAX_BUFFER: u64 = 65_536;

/// What the sender knows when new data could go out on a subflow.
#[derive(Clone, Copy, Debug)]
pub struct Sender {
    pub now: Instant,
    /// When the last data packet went out, or the pacer's next departure
    /// if later (Linux's `tcp_wstamp_ns`).
    pub last_sent: Option<Instant>,
    /// Fast recovery or the loss state after a timeout.
    pub recovering: bool,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub in_flight: u64,
    /// When the oldest packet in flight was sent.
    pub oldest_in_flight: Option<Instant>,
    pub srtt: Option<Duration>,
    pub mss: u32,
    /// The controller's pacing rate, bytes/s, if it paces.
    pub pacing_rate: Option<f64>,
    /// The peer's window (Linux's `snd_wnd`) and what it still allows
    /// beyond what was sent (`tcp_wnd_end - seq`).
    pub peer_window: u64,
    pub send_window: u64,
    /// New data ready to go.
    pub ready: u64,
}

/// Linux's `sk_pacing_rate` for a controller that does not pace
/// (`tcp_update_pacing_rate`), bytes per second: the window (or what is in
/// flight, if more) per smoothed RTT of `srtt` seconds, times 2 while the
/// window is below half of ssthresh and 1.2 after. Deviation: compared in
/// bytes where Linux counts segments.
pub fn linux_pacing_rate(cwnd: u64, in_flight: u64, ssthresh: u64, srtt: f64) -> f64 {
    let ratio = if cwnd < ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    ratio * cwnd.max(in_flight) as f64 / srtt
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Send,
    /// Hold the data back; `cwnd_limited` when the window, not the peer's,
    /// is what is short.
    Defer {
        cwnd_limited: bool,
    },
}

impl Sender {
    /// `tcp_tso_autosize`: segments in a full offload burst.
    pub fn burst_segments(&self) -> u64 {
        let mss = f64::from(self.mss.max(1));
        let rate = self.pacing_rate.unwrap_or_else(|| {
            let srtt = self.srtt.map_or(1e-3, |s| s.as_secs_f64().max(1e-6));
            linux_pacing_rate(self.cwnd, self.in_flight, self.ssthresh, srtt)
        });
        ((rate / PACING_SHIFT / mss) as u64).max(MIN_TSO_SEGS)
    }

    /// `tcp_tso_should_defer`.
    pub fn verdict(&self) -> Verdict {
        let mss = u64::from(self.mss.max(1));
        if self.recovering || self.in_flight == 0 || self.ready <= mss {
            return Verdict::Send;
        }
        if self.last_sent.is_none_or(|t| self.now.saturating_since(t) > RECENT) {
            return Verdict::Send;
        }
        let cong_win = self.cwnd.saturating_sub(self.in_flight);
        let limit = cong_win.min(self.send_window);
        if limit >= self.burst_segments() * mss {
            return Verdict::Send;
        }
        if limit >= self.peer_window.min(self.cwnd) / WIN_DIVISOR {
            return Verdict::Send;
        }
        // An acknowledgement is due only if the oldest packet has been out
        // half an SRTT.
        let (Some(oldest), Some(srtt)) = (self.oldest_in_flight, self.srtt) else { return Verdict::Send };
        if self.now.saturating_since(oldest) < Duration::from_nanos(srtt.as_nanos() / 2) {
            return Verdict::Send;
        }
        // Linux compares with the buffer at the head of the write queue,
        // at most 64 KB.
        Verdict::Defer { cwnd_limited: cong_win < self.send_window && cong_win <= self.ready.min(MAX_BUFFER) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Instant {
        Instant::from_nanos((v * 1e6) as u64)
    }

    /// A CUBIC-like subflow in congestion avoidance: 15 segments of 1000
    /// B, SRTT 2 ms, 12 in flight, the last sent 0.2 ms ago, the oldest
    /// 1.5 ms ago, data and peer window plenty.
    fn sender() -> Sender {
        Sender {
            now: ms(10.0),
            last_sent: Some(ms(9.8)),
            recovering: false,
            cwnd: 15_000,
            ssthresh: 10_000,
            in_flight: 12_000,
            oldest_in_flight: Some(ms(8.5)),
            srtt: Some(Duration::from_millis(2)),
            mss: 1000,
            pacing_rate: None,
            peer_window: 1_000_000,
            send_window: 1_000_000,
            ready: 1_000_000,
        }
    }

    /// By hand: 1.2 x 15,000 B / 2 ms = 9 MB/s, /1024 = 8,789 B: 8
    /// segments a burst. Room 3,000 B: under 8 segments and under a third
    /// of the window (5,000): defer, the window being short. Room 5,000:
    /// a third of the window, send.
    #[test]
    fn room_under_a_burst_and_a_third_of_the_window_defers() {
        let s = sender();
        assert_eq!(s.burst_segments(), 8);
        assert_eq!(s.verdict(), Verdict::Defer { cwnd_limited: true });
        assert_eq!(Sender { in_flight: 10_000, ..s }.verdict(), Verdict::Send);
        assert_eq!(Sender { in_flight: 10_001, ..s }.verdict(), Verdict::Defer { cwnd_limited: true });
    }

    /// A full burst of room sends even under a third of the window: 60
    /// segments at 2 ms in slow start (200%) is 60 MB/s, 58 segments a
    /// burst; with a 1 ms pacing rate of 10 MB/s from the controller, 9.
    #[test]
    fn a_full_burst_of_room_sends() {
        let s = Sender { cwnd: 60_000, ssthresh: u64::MAX, in_flight: 45_000, ..sender() };
        assert_eq!(s.burst_segments(), 58);
        assert_eq!(s.verdict(), Verdict::Defer { cwnd_limited: true }, "15 of 58 segments, under 20 kB");
        // At half of ssthresh the congestion-avoidance ratio applies:
        // 1.2 x 60,000 B / 2 ms is 36 MB/s, 35 segments.
        assert_eq!(Sender { ssthresh: 120_000, ..s }.burst_segments(), 35);
        assert_eq!(Sender { ssthresh: 120_002, ..s }.burst_segments(), 58);
        let paced = Sender { pacing_rate: Some(10e6), ..s };
        assert_eq!(paced.burst_segments(), 9);
        assert_eq!(paced.verdict(), Verdict::Send, "15 segments of room, a burst is 9");
    }

    /// Each reason to send now.
    #[test]
    fn reasons_to_send_at_once() {
        let s = sender();
        assert_eq!(Sender { recovering: true, ..s }.verdict(), Verdict::Send, "recovery");
        assert_eq!(Sender { in_flight: 0, ..s }.verdict(), Verdict::Send, "nothing in flight");
        assert_eq!(Sender { ready: 1000, ..s }.verdict(), Verdict::Send, "one segment ready");
        assert_eq!(
            Sender { ready: 1001, ..s }.verdict(),
            Verdict::Defer { cwnd_limited: false },
            "more room than data"
        );
        let limited = Sender { ready: 3000, ..s }.verdict();
        assert_eq!(limited, Verdict::Defer { cwnd_limited: true }, "as much room as data");
        let even = Sender { send_window: 3000, ..s }.verdict();
        assert_eq!(even, Verdict::Defer { cwnd_limited: false }, "the peer's window as short as ours");
        assert_eq!(Sender { last_sent: Some(ms(8.99)), ..s }.verdict(), Verdict::Send, "silent over 1 ms");
        assert_eq!(Sender { last_sent: Some(ms(9.0)), ..s }.verdict(), Verdict::Defer { cwnd_limited: true });
        assert_eq!(Sender { oldest_in_flight: Some(ms(9.01)), ..s }.verdict(), Verdict::Send, "no ACK due yet");
        let due = Sender { oldest_in_flight: Some(ms(9.0)), ..s };
        assert_eq!(due.verdict(), Verdict::Defer { cwnd_limited: true }, "out exactly half an SRTT");
        assert_eq!(Sender { srtt: None, ..s }.verdict(), Verdict::Send);
    }

    /// The peer's window short instead: 6,000 B advertised, 1,000 left,
    /// 10,000 of the congestion window free. Room 1,000, under a third of
    /// min(6,000, 15,000): defer, but not for the window's sake; with 2,000
    /// left, exactly a third: send.
    #[test]
    fn a_short_peer_window_defers_without_blaming_the_window() {
        let s = Sender { in_flight: 5_000, peer_window: 6_000, send_window: 1_000, ..sender() };
        assert_eq!(s.verdict(), Verdict::Defer { cwnd_limited: false });
        assert_eq!(Sender { send_window: 2_000, ..s }.verdict(), Verdict::Send);
    }
}
