//! The default scheduler of upstream Linux MPTCP (Linux 6.x, the kernel
//! `braid compare` runs against): `mptcp_subflow_get_send`,
//! `__mptcp_push_pending` and `__subflow_push_pending` in
//! `net/mptcp/protocol.c`.
//!
//! Unlike MPTCP v0.96's schedulers, which give a subflow one segment when
//! its window has room, upstream hands a subflow a *burst* of up to 64 KB
//! (`MPTCP_SEND_BURST_SIZE`) into its own write queue, where it waits for
//! the subflow's window. The subflow chosen is the one whose queued memory
//! would drain soonest at its pacing rate, its *linger time*
//! `sk_wmem_queued / avg_pacing_rate`, whether or not its window has room
//! now; backup subflows only when no regular one is active. Nothing is
//! handed over when that subflow's memory is full (`sk_wmem_queued >=
//! sk_sndbuf`). The connection keeps choosing while data and memory last,
//! as `__mptcp_push_pending` does. The pacing rate is Linux's
//! `sk_pacing_rate`: the controller's when it paces (BBR), otherwise
//! `tcp_update_pacing_rate`'s window (or bytes in flight, if more) per
//! SRTT, times 2 while the window is below half of ssthresh and 1.2 after.
//! The average is moved towards it at every choice, weighted by the burst
//! and by what is queued.
//!
//! A subflow's send buffer follows `tcp_sndbuf_expand`: twice `max(10,
//! cwnd)` segments of `per_mss` bytes ([`kernel_per_mss`]: 4,352 bytes for
//! a 1,448-byte MSS; three times for BBR), at most `tcp_wmem[2]` = 4 MiB.
//! It is set when the subflow is first seen (`tcp_init_buffer_space`) and
//! grows when a subflow found full has room in its window again
//! (`tcp_new_space`).
//!
//! Deviations and choices:
//! - Memory is counted in payload bytes: in flight, queued, and lost
//!   awaiting retransmission. The kernel counts each `sk_buff`'s
//!   `truesize` (1-2% more for the 64 KB buffers a subflow queues), and
//!   selectively acknowledged data too, which Braid no longer holds.
//! - A burst is cut into segments of the subflow's MSS when it is queued,
//!   with no memory check between them (the kernel checks between
//!   fragments), and Nagle's algorithm is applied there, not when the
//!   segments leave.
//! - Linger times and the average rate are `f64` where the kernel uses
//!   32.32 fixed point and integer division; ties go to the lower index,
//!   as the kernel's strict comparison in subflow order does. Before a
//!   subflow's first RTT sample its rate is `u32::MAX` bytes a second (the
//!   kernel's initial `sk_pacing_rate`, unlimited, in a 32-bit average).
//! - When a subflow's buffer grows is this model's guess. In the kernel
//!   the `SOCK_NOSPACE` that `tcp_new_space` needs may be the MPTCP
//!   socket's (set when the application blocks), which would grow every
//!   acknowledged subflow not limited by its window; the sizing leaves out
//!   `reordering + 1` (Braid's fixed 3 is below 10) and uses the subflow's
//!   MSS where Linux takes the larger of it and `mss_clamp`.
//! - A subflow counts as active until its first retransmission timeout
//!   (v0.96's `pf`), where the kernel waits `stale_loss_cnt` (4)
//!   retransmission periods without progress before it stops choosing a
//!   subflow (`stale`). At that timeout the connection reinjects what the
//!   subflow held and had not sent, through this same choice, into the
//!   chosen subflow's queue in stream order, ahead of later data (the
//!   kernel re-pushes a stale or closed subflow's pending data, from the
//!   connection's oldest unacknowledged byte, to the tail of the chosen
//!   subflow's queue, `__mptcp_retransmit_pending_data`; in order, the
//!   oldest data never waits behind data the peer's window cannot take). Braid's
//!   connection-level timer does the rest; the kernel's own
//!   (`__mptcp_retrans`, to a subflow with nothing outstanding,
//!   `mptcp_subflow_get_retrans`) is not modelled.
//! - The upstream receive side (its own window and buffer autotuning) is
//!   not modelled; the connection's receive buffer is Braid's.
//! - Opportunistic retransmission and penalisation (v0.96 only) are off.
//!   Turned on (`opportunistic = true`), they treat data queued on a
//!   subflow as data it carries.

use super::{Decision, SchedConn, SchedPath, Scheduler};
use crate::autotune::kernel_per_mss;
use crate::tso_defer::linux_pacing_rate;

/// `MPTCP_SEND_BURST_SIZE`: 64 KiB less the TCP header, the largest TCP
/// options, an IPv6 header and a fragment header.
pub const UPSTREAM_BURST: u64 = (1 << 16) - 20 - 40 - 40 - 8;

/// `tcp_wmem[2]`, the largest send buffer autotuning gives a subflow.
const WMEM_MAX: u64 = 4 << 20;

/// `TCP_INIT_CWND`, the fewest segments a send buffer is sized for.
const INIT_CWND: u64 = 10;

#[derive(Clone, Debug, Default)]
pub struct Upstream {
    /// Per subflow, `avg_pacing_rate` in bytes per second; 0 until set.
    avg_pacing_rate: Vec<f64>,
    /// Per subflow, `sk_sndbuf` in bytes; 0 until the subflow is first seen.
    sndbuf: Vec<u64>,
    /// Per subflow, found with its memory full since its buffer last grew.
    nospace: Vec<bool>,
}

/// Linux's `sk_pacing_rate` for a subflow, bytes per second: the
/// controller's own when it paces, else `tcp_update_pacing_rate`. Without
/// an RTT sample the kernel's rate is its initial, unlimited one, which
/// the 32-bit average holds as `u32::MAX`.
fn sk_pacing_rate(p: &SchedPath) -> f64 {
    if let Some(rate) = p.pacing_rate {
        return rate;
    }
    match p.srtt.filter(|s| s.as_nanos() > 0) {
        Some(srtt) => linux_pacing_rate(p.cwnd, p.bytes_in_flight, p.ssthresh, srtt.as_secs_f64()),
        None => f64::from(u32::MAX),
    }
}

/// `tcp_sndbuf_expand`'s size for a subflow's send buffer, bytes, for a
/// controller whose `sndbuf_expand` is `expand` (2; BBR's 3).
fn sndbuf_target(p: &SchedPath, expand: u32) -> u64 {
    let segments = (p.cwnd / u64::from(p.mss.max(1))).max(INIT_CWND);
    (u64::from(expand) * segments * kernel_per_mss(p.mss)).min(WMEM_MAX)
}

impl Upstream {
    /// `tcp_init_buffer_space` for a subflow seen for the first time, and
    /// `tcp_new_space` for one found full that has room in its window again.
    fn size_buffer(&mut self, i: usize, p: &SchedPath, expand: u32) {
        let cwnd_limited = p.packets_in_flight * u64::from(p.mss.max(1)) >= p.cwnd;
        if self.sndbuf[i] == 0 || (self.nospace[i] && !cwnd_limited) {
            self.sndbuf[i] = self.sndbuf[i].max(sndbuf_target(p, expand));
            self.nospace[i] = false;
        }
    }
}

/// `sk_wmem_queued`, counted in payload bytes (see the deviations).
fn wmem(p: &SchedPath) -> u64 {
    p.bytes_in_flight + p.queued
}

impl Scheduler for Upstream {
    fn name(&self) -> &'static str {
        "upstream"
    }

    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        if self.sndbuf.len() < paths.len() {
            self.avg_pacing_rate.resize(paths.len(), 0.0);
            self.sndbuf.resize(paths.len(), 0);
            self.nospace.resize(paths.len(), false);
        }
        // Lowest linger time among regular subflows, and among backups.
        let mut best: [Option<(f64, usize)>; 2] = [None, None];
        let mut regular = 0;
        for (i, p) in paths.iter().enumerate() {
            if !p.usable() {
                continue;
            }
            self.size_buffer(i, p, conn.sndbuf_expand);
            regular += usize::from(!p.backup);
            if self.avg_pacing_rate[i] == 0.0 {
                self.avg_pacing_rate[i] = sk_pacing_rate(p);
                if self.avg_pacing_rate[i] == 0.0 {
                    continue;
                }
            }
            let linger = wmem(p) as f64 / self.avg_pacing_rate[i];
            let slot = &mut best[usize::from(p.backup)];
            if slot.is_none_or(|(l, _)| linger < l) {
                *slot = Some((linger, i));
            }
        }
        let pick = if regular == 0 { best[1] } else { best[0] };
        let Some((_, i)) = pick else { return Decision::Wait };
        let queued = wmem(&paths[i]);
        if queued >= self.sndbuf[i] {
            self.nospace[i] = true;
            return Decision::Wait;
        }
        let burst = UPSTREAM_BURST.min(conn.window_room);
        if burst > 0 {
            let (avg, rate) = (self.avg_pacing_rate[i], sk_pacing_rate(&paths[i]));
            self.avg_pacing_rate[i] = (avg * queued as f64 + rate * burst as f64) / (burst + queued) as f64;
        }
        Decision::Send(i)
    }

    fn commits_bursts(&self) -> bool {
        true
    }

    /// Upstream has neither (they are MPTCP v0.96's `mptcp_rcv_buf_optimization`).
    fn opportunistic_by_default(&self) -> bool {
        false
    }

    fn reads_ssthresh(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn path(cwnd_segments: u64, srtt_ms: u64, in_flight: u64, queued: u64) -> SchedPath {
        SchedPath {
            srtt: Some(Duration::from_millis(srtt_ms)),
            cwnd: cwnd_segments * 1000,
            ssthresh: u64::MAX,
            bytes_in_flight: in_flight * 1000,
            packets_in_flight: in_flight,
            queued: queued * 1000,
            mss: 1000,
            active: true,
            ..SchedPath::default()
        }
    }

    #[test]
    fn pacing_rate_is_linuxs() {
        // 20 segments of 1000 bytes per 10 ms, doubled in slow start
        // (ssthresh unknown: window below half of it): 4 MB/s.
        let p = path(20, 10, 0, 0);
        assert!((sk_pacing_rate(&p) - 4e6).abs() < 1e-6, "{}", sk_pacing_rate(&p));
        // In congestion avoidance (window at ssthresh): 1.2 times, 2.4 MB/s.
        let ca = SchedPath { ssthresh: 20_000, ..p };
        assert!((sk_pacing_rate(&ca) - 2.4e6).abs() < 1e-6);
        // Below half of ssthresh: slow start again.
        assert!((sk_pacing_rate(&SchedPath { ssthresh: 40_002, ..p }) - 4e6).abs() < 1e-6);
        assert!((sk_pacing_rate(&SchedPath { ssthresh: 40_000, ..p }) - 2.4e6).abs() < 1e-6);
        // More bytes out than the window: counted.
        assert!((sk_pacing_rate(&SchedPath { bytes_in_flight: 30_000, ..ca }) - 3.6e6).abs() < 1e-6);
        // A pacing controller's own rate wins.
        assert_eq!(sk_pacing_rate(&SchedPath { pacing_rate: Some(5e5), ..p }), 5e5);
        // No RTT sample yet: the kernel's unlimited rate in a 32-bit average.
        assert_eq!(sk_pacing_rate(&SchedPath { srtt: None, ..p }), f64::from(u32::MAX));
    }

    #[test]
    fn send_buffer_is_tcp_sndbuf_expand() {
        // MSS 1448: (1448 + 640) rounds up to 4096, plus 256: 4352 a segment.
        let p = SchedPath { mss: 1448, cwnd: 30 * 1448, ..SchedPath::default() };
        assert_eq!(sndbuf_target(&p, 2), 2 * 30 * 4352);
        // At least ten segments; three windows for BBR.
        assert_eq!(sndbuf_target(&SchedPath { cwnd: 4 * 1448, ..p }, 3), 3 * 10 * 4352);
        // At most tcp_wmem[2].
        assert_eq!(sndbuf_target(&SchedPath { cwnd: 1000 * 1448, ..p }, 2), 4 << 20);
    }

    #[test]
    fn the_shortest_linger_wins_whatever_the_windows() {
        let mut s = Upstream::default();
        let conn = SchedConn { window_room: 1 << 30, sndbuf_expand: 2, ..SchedConn::default() };
        // Subflow 0: 30 segments queued and 20 in flight at 20 segments per
        // 10 ms, doubled in slow start (50,000 / 4 MB/s = 12.5 ms); subflow
        // 1: its window of 10 full, at 10 per 20 ms (10,000 / 1 MB/s = 10 ms).
        let paths = [path(20, 10, 20, 30), path(10, 20, 10, 0)];
        assert_eq!(s.select(&conn, &paths), Decision::Send(1), "a full window does not matter");
        assert!((s.avg_pacing_rate[1] - 1e6).abs() < 1e-6, "set from the first rate seen");
        // Each choice moves the chosen subflow's average toward its current
        // rate (now 2 MB/s), weighted by the burst against what it holds.
        let grown = [path(20, 10, 20, 30), path(20, 20, 10, 0)];
        assert_eq!(s.select(&conn, &grown), Decision::Send(1), "10,000 / 1 MB/s still");
        let burst = UPSTREAM_BURST as f64;
        let expected = (1e6 * 10_000.0 + 2e6 * burst) / (burst + 10_000.0);
        assert!((s.avg_pacing_rate[1] - expected).abs() < 1e-6, "{}", s.avg_pacing_rate[1]);
        // A subflow without an RTT sample, nothing queued: chosen, and its
        // average stays a finite rate the next samples can move.
        let mut s = Upstream::default();
        let unmeasured = SchedPath { srtt: None, ..path(10, 10, 0, 0) };
        assert_eq!(s.select(&conn, &[path(10, 10, 5, 0), unmeasured]), Decision::Send(1));
        assert!(s.avg_pacing_rate[1].is_finite(), "{}", s.avg_pacing_rate[1]);
        // Equal lingers: the lower index.
        let mut s = Upstream::default();
        assert_eq!(s.select(&conn, &[path(10, 10, 5, 0), path(10, 10, 5, 0)]), Decision::Send(0));
    }

    #[test]
    fn backups_only_when_no_regular_subflow_is_active() {
        let mut s = Upstream::default();
        let conn = SchedConn { window_room: 1 << 30, sndbuf_expand: 2, ..SchedConn::default() };
        let backup = SchedPath { backup: true, ..path(10, 1, 0, 0) };
        assert_eq!(s.select(&conn, &[path(10, 50, 5, 0), backup]), Decision::Send(0));
        let failed = SchedPath { potentially_failed: true, ..path(10, 50, 0, 0) };
        assert_eq!(s.select(&conn, &[failed, backup]), Decision::Send(1));
    }

    #[test]
    fn a_full_buffer_waits_and_grows_once_its_window_has_room() {
        let mut s = Upstream::default();
        let conn = SchedConn { window_room: 1 << 30, sndbuf_expand: 2, ..SchedConn::default() };
        // MSS 1000: per_mss 2048 + 256 = 2304; ten segments: 46,080 bytes.
        let full = path(10, 10, 10, 37);
        assert_eq!(s.select(&conn, &[full]), Decision::Wait, "47,000 bytes held");
        assert_eq!(s.sndbuf[0], 2 * 10 * 2304);
        // The window grew to 30 segments but is full: no growth yet.
        let limited = path(30, 10, 30, 17);
        assert_eq!(s.select(&conn, &[limited]), Decision::Wait);
        // Room in the window: the buffer grows to 2 x 30 segments.
        let room = path(30, 10, 20, 27);
        assert_eq!(s.select(&conn, &[room]), Decision::Send(0));
        assert_eq!(s.sndbuf[0], 2 * 30 * 2304);
    }
}
