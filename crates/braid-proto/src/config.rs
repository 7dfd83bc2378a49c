//! Connection settings. Defaults follow Linux where Linux has one.

use crate::autotune::SendAutotune;
use crate::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Payload bytes per segment (1448: a 1500-byte packet with TCP timestamps).
    pub mss: u32,
    /// Initial congestion window in segments (RFC 6928; Linux: 10).
    pub initial_window: u32,
    /// Floor of the retransmission timeout (Linux: 200 ms; RFC 6298: 1 s).
    pub min_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Ceiling of the backed-off RTO (Linux: 120 s; RFC 6298 allows >= 60 s).
    pub max_rto: Duration,
    /// Acknowledge every this many data packets (1 disables delayed ACKs).
    pub ack_every: u32,
    /// Longest an acknowledgement is held back (Linux: 40 ms).
    pub max_ack_delay: Duration,
    /// Acknowledgements sent at once when a subflow starts receiving and
    /// after it was silent for longer than its RTO: Linux's quick-ack mode,
    /// which grants up to `TCP_MAX_QUICKACKS` = 16. Off (0) by default for
    /// now: turned on, it moves results the test suite has calibrated
    /// (ECF against minRTT at one Wi-Fi rate, the short-flows reproduction)
    /// that are not yet re-examined; seed 004's campaign sets 16.
    pub quickacks: u32,
    /// Restart a subflow's window after it sent nothing for longer than its
    /// RTO (RFC 5681 section 4.1; Linux's `tcp_cwnd_restart` under
    /// `net.ipv4.tcp_slow_start_after_idle`, on by default there): ssthresh
    /// rises to at least 3/4 of cwnd, cwnd halves per RTO of idleness down
    /// to the initial window. Off by default for now: the figures in the
    /// docs were measured without it; a subflow the scheduler leaves idle
    /// (a slow or backup path) restarts small when used again.
    pub restart_after_idle: bool,
    /// Packets acknowledged above a missing one before it counts as lost
    /// (without `rack_tlp`); with it, the number of selectively
    /// acknowledged packets from which RACK's reordering window closes
    /// (Linux's `tp->reordering`, 3).
    pub dupthresh: u64,
    /// Detect losses by time and probe tail losses, as Linux does on MPTCP
    /// v0.96's subflows (RACK-TLP, `tcp_recovery` = 1, `tcp_early_retrans`
    /// = 3; see `crate::rack`), rather than by counting `dupthresh`
    /// packets as RFC 6675 and htsim do. Off by default for now, as quick
    /// ACKs and the restart after idleness are: the figures in the docs,
    /// most compared with htsim's, were measured without it.
    pub rack_tlp: bool,
    /// Hold new data back while an acknowledgement is due and the room in
    /// the window is less than a segmentation-offload burst and a third of
    /// the window, as Linux does with offload on (`tcp_tso_should_defer`;
    /// see `crate::tso_defer`). Off by default, as quick ACKs are: most of
    /// the docs' figures, many compared with htsim's, were measured
    /// without it; the scenarios checked against the kernel
    /// (`scenarios/validation/`) turn it on.
    pub tso_defer: bool,
    /// Connection-level send buffer in bytes; the ceiling (`tcp_wmem[2]`)
    /// when `send_autotune` is on.
    pub send_buffer: u64,
    /// Start the send buffer small and grow it: to twice the subflows'
    /// summed rate times the longest RTT (seed 003 eq. 2), or as MPTCP
    /// v0.96 does (the sum of the subflows' Linux-autotuned buffers).
    pub send_autotune: SendAutotune,
    /// Connection-level receive buffer in bytes (sets the window); the
    /// ceiling when `recv_autotune` is on.
    pub recv_buffer: u64,
    /// Start the receive buffer small and grow it with what the application
    /// reads per round trip, as Linux's autotuning does.
    pub recv_autotune: bool,
    /// When new data is blocked by the peer's window or a full send
    /// buffer, re-send the segment holding up the Data ACK on a faster
    /// subflow, and halve the window of the subflow that holds it (Raiciu
    /// et al., NSDI 2012). `None` does what the scheduler's Linux module
    /// does ([`crate::sched::Scheduler::opportunistic_by_default`]).
    pub opportunistic_retransmission: Option<bool>,
    /// Send segments shorter than the MSS at once (TCP_NODELAY); by default
    /// Nagle's algorithm holds one back while an earlier short one is
    /// unacknowledged, as Linux does.
    pub nodelay: bool,
    /// With data waiting and no usable subflow for this long, the
    /// connection fails (see `Connection::error`).
    pub failure_timeout: Duration,
    /// Client: join further subflows as soon as the server's key is known,
    /// one round trip before the server has confirmed it holds the
    /// connection. Only a server that keeps state from the opening (the
    /// simulator's) can accept such a join; a server that answers openings
    /// without state ([`crate::endpoint::Endpoint`]) drops a join that
    /// overtakes the `Establish` it creates the connection from, and the
    /// join is tried again only after its retransmission timeout. Off by
    /// default, as in Linux, which joins once the connection is fully
    /// established: upstream on the server's first DSS acknowledgement,
    /// MPTCP v0.96 on the first data acknowledgement of the first subflow
    /// (`mptcp_become_fully_estab`, which calls the path manager's
    /// `fully_established`, where the full mesh opens its subflows).
    pub early_joins: bool,
    /// Path MTU black-hole detection (see `crate::connection::pmtu`): a
    /// subflow whose retransmission timer fires twice in a row with data
    /// in flight sends packets of at most this many payload bytes, until a
    /// probe of its old size is acknowledged. `None` (the default; the
    /// simulator's flows set it with `mss_floor`, for links with an `mtu`):
    /// off.
    pub mss_floor: Option<u32>,
    /// Every data packet's headers take the same bytes, whatever its
    /// numbers: a driver that charges `packet::DATA_HEADER_BYTES` per packet
    /// (the simulator without the wire format) sets it. A path-MTU probe
    /// for an MSS then carries that MSS, as every packet of it is that
    /// large; otherwise (the wire format's varint header) its payload makes
    /// up for a header shorter than the largest.
    pub fixed_data_header: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1448,
            initial_window: 10,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(120),
            ack_every: 2,
            max_ack_delay: Duration::from_millis(40),
            quickacks: 0,
            restart_after_idle: false,
            dupthresh: 3,
            rack_tlp: false,
            tso_defer: false,
            // Linux tcp_wmem / tcp_rmem maxima.
            send_buffer: 4 * 1024 * 1024,
            send_autotune: SendAutotune::Off,
            recv_buffer: 6 * 1024 * 1024,
            recv_autotune: false,
            opportunistic_retransmission: None,
            nodelay: false,
            failure_timeout: Duration::from_secs(60),
            early_joins: false,
            mss_floor: None,
            fixed_data_header: false,
        }
    }
}
