//! RACK-TLP: time-based loss detection and tail loss probes, as Linux 5.4
//! runs them on MPTCP v0.96's subflows (`net.ipv4.tcp_recovery` = 1 and
//! `tcp_early_retrans` = 3, both defaults). Sources: `tcp_recovery.c`
//! (`tcp_rack_detect_loss`, `tcp_rack_reo_wnd`, `tcp_rack_reo_timeout`),
//! `tcp_output.c` (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`) and
//! `tcp_input.c` (`tcp_process_tlp_ack`); RFC 8985 describes the same
//! algorithm. On with `Config::rack_tlp`; without it a subflow counts
//! packets (`Config::dupthresh`), as RFC 6675 and htsim do.
//!
//! Why: a subflow that loses the last packets of a flight gets too few
//! acknowledgements to count three, and waits for its retransmission
//! timer (at least 200 ms, and a window of one segment after it). Linux
//! instead probes after about two round trips, and times each packet
//! against the one delivered after it.
//!
//! - **RACK.** A packet is lost once a packet sent after it has been
//!   delivered and that packet's RTT plus a reordering window has passed
//!   since it was sent. The window is a quarter of the minimum RTT (at
//!   most the SRTT); it is zero in recovery, or once `dupthresh` packets
//!   are selectively acknowledged, as long as no reordering has been seen.
//!   A packet not yet overdue arms the reordering timer for when the last
//!   of them will be, plus Linux's `TCP_TIMEOUT_MIN` (2 ms). With RACK the
//!   packet count is not used at all.
//! - **TLP.** While nothing is selectively acknowledged or lost (Linux's
//!   Open state), sending data or an acknowledgement of new data arms the
//!   probe timer for two SRTTs plus 2 ms (plus 200 ms instead with one
//!   packet out: its ACK may be delayed), never later than the
//!   retransmission timer. When it fires the subflow re-sends its last
//!   packet in flight whatever its window, and the retransmission timer
//!   restarts. MPTCP v0.96's subflows hold no unsent data of their own (the
//!   meta socket hands them segments as they may send), so the probe is
//!   always this re-sending. One probe at a time.
//! - **The probe's answer.** The probe and the packet it copies are one
//!   TCP segment: when either is acknowledged, the other leaves the flight
//!   without counting as delivered twice (or, declared lost meanwhile,
//!   without being re-sent). If the copy arrived and the original did not,
//!   the probe repaired a loss: the window is cut once (Linux's
//!   `TCP_CA_CWR`), without a recovery episode, unless one began since.
//!
//! Deviations:
//! - the reordering window does not grow on DSACKs (Braid has none): it
//!   stays at one step (`reo_wnd_steps` = 1), and `dupthresh` does not
//!   grow with the reordering seen either;
//! - reordering is seen when an acknowledgement covers a packet still in
//!   flight below the largest one acknowledged before it (Linux: a new
//!   SACK below the highest one, of a segment never retransmitted);
//! - the repaired loss is cut at the probe's acknowledgement; Linux cuts
//!   at the first acknowledgement beyond what was sent when it probed;
//! - the probe counts in flight as a packet of its own until it or the
//!   original is acknowledged (Linux re-sends the same segment);
//! - the reordering and probe timers are kept beside the retransmission
//!   timer; Linux keeps one timer of three kinds.

use crate::time::{Duration, Instant};

/// Linux's `TCP_TIMEOUT_MIN`: two jiffies, at 1000 Hz.
pub(crate) const TIMEOUT_MIN: Duration = Duration::from_millis(2);

/// Linux's `TCP_RTO_MIN`, which a lone packet's probe waits for its
/// delayed acknowledgement (not the configured `min_rto`).
const DELAYED_ACK_ALLOWANCE: Duration = Duration::from_millis(200);

/// Linux's `TCP_TIMEOUT_INIT`: the probe timeout before an RTT sample.
const PROBE_TIMEOUT_INIT: Duration = Duration::from_secs(1);

/// The most recently sent packet delivered so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Delivered {
    pub pn: u64,
    pub sent: Instant,
    /// From its sending to the acknowledgement that covered it.
    pub rtt: Duration,
}

/// A tail loss probe in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    pub pn: u64,
    /// The packet it copies, and their data (dsn, len).
    pub original: u64,
    pub data: (u64, u32),
    /// A loss it repairs still cuts the window: no recovery episode has
    /// begun since it was sent (one that does makes the cut, as Linux's
    /// clears `tlp_high_seq`).
    pub cuts: bool,
}

/// A subflow's RACK-TLP state.
#[derive(Clone, Debug, Default)]
pub(crate) struct RackTlp {
    pub latest: Option<Delivered>,
    /// Linux's `reord_seen`.
    pub reordering_seen: bool,
    pub reorder_deadline: Option<Instant>,
    pub probe_deadline: Option<Instant>,
    /// The probe timer fired: a copy of this packet is to be sent.
    pub due: Option<u64>,
    pub outstanding: Option<Probe>,
}

impl RackTlp {
    /// Packet `pn`, sent at `sent`, was acknowledged at `now`: the latest
    /// delivered if it was sent after the last one (Linux's `tcp_rack_advance`).
    pub(crate) fn advance(&mut self, pn: u64, sent: Instant, now: Instant) {
        if self.latest.is_none_or(|l| pn > l.pn) {
            self.latest = Some(Delivered { pn, sent, rtt: now.saturating_since(sent) });
        }
    }

    /// The earlier of the reordering and probe timers.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.reorder_deadline, self.probe_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Linux's `tcp_rack_reo_wnd`: how long past its successor's RTT a packet
/// may still arrive before it counts as lost.
pub(crate) fn reorder_window(
    reordering_seen: bool,
    recovering: bool,
    sacked: u64,
    dupthresh: u64,
    min_rtt: Option<Duration>,
    srtt: Option<Duration>,
) -> Duration {
    if !reordering_seen && (recovering || sacked >= dupthresh) {
        return Duration::ZERO;
    }
    let quarter = min_rtt.map_or(Duration::ZERO, |m| Duration::from_nanos(m.as_nanos() / 4));
    quarter.min(srtt.unwrap_or(Duration::ZERO))
}

/// Linux's `tcp_schedule_loss_probe`: the probe timeout, before the cap
/// at the retransmission timer.
pub(crate) fn probe_timeout(srtt: Option<Duration>, one_packet_out: bool) -> Duration {
    match srtt {
        Some(s) => s.saturating_mul(2) + if one_packet_out { DELAYED_ACK_ALLOWANCE } else { TIMEOUT_MIN },
        None => PROBE_TIMEOUT_INIT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// By hand: a quarter of the minimum RTT, capped at the SRTT; zero in
    /// recovery or with `dupthresh` packets selectively acknowledged,
    /// unless reordering was seen.
    #[test]
    fn the_reordering_window_by_hand() {
        assert_eq!(reorder_window(false, false, 0, 3, Some(ms(40)), Some(ms(60))), ms(10));
        assert_eq!(reorder_window(false, false, 2, 3, Some(ms(40)), Some(ms(60))), ms(10), "two SACKed");
        assert_eq!(reorder_window(false, false, 3, 3, Some(ms(40)), Some(ms(60))), ms(0), "three SACKed");
        assert_eq!(reorder_window(false, true, 0, 3, Some(ms(40)), Some(ms(60))), ms(0), "in recovery");
        assert_eq!(reorder_window(true, true, 5, 3, Some(ms(40)), Some(ms(60))), ms(10), "reordering seen");
        assert_eq!(reorder_window(false, false, 0, 3, Some(ms(40)), Some(ms(8))), ms(8), "capped at the SRTT");
    }

    /// By hand: two SRTTs plus 2 ms, or plus 200 ms for a lone packet; a
    /// second without a sample.
    #[test]
    fn the_probe_timeout_by_hand() {
        assert_eq!(probe_timeout(Some(ms(30)), false), ms(62));
        assert_eq!(probe_timeout(Some(ms(30)), true), ms(260));
        assert_eq!(probe_timeout(None, false), ms(1000));
    }

    /// The latest delivered is the most recently sent, whatever order the
    /// acknowledgements come in.
    #[test]
    fn the_latest_delivered_is_the_most_recently_sent() {
        let t = |v: u64| Instant::ZERO + ms(v);
        let mut r = RackTlp::default();
        r.advance(5, t(10), t(50));
        r.advance(3, t(5), t(60));
        assert_eq!(r.latest, Some(Delivered { pn: 5, sent: t(10), rtt: ms(40) }));
        r.advance(6, t(12), t(70));
        assert_eq!(r.latest.map(|l| (l.pn, l.rtt)), Some((6, ms(58))));
        r.reorder_deadline = Some(t(90));
        assert_eq!(r.deadline(), Some(t(90)));
        r.probe_deadline = Some(t(80));
        assert_eq!(r.deadline(), Some(t(80)));
    }
}
