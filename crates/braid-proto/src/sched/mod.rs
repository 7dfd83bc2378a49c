//! Packet schedulers: which subflow carries the next segment.
//!
//! The connection asks [`Scheduler::select`] with a read-only view of every
//! subflow ([`SchedPath`]) and of itself ([`SchedConn`]). The answer is a
//! path, several paths (for redundant schedulers), or wait. The connection
//! enforces the hard limits itself (congestion window, receive window), so
//! a scheduler cannot make the connection break them.
//!
//! Where every scheduler's view differs from Linux MPTCP v0.96's
//! (`mptcp_sched.c`, `mptcp_is_available`):
//! - A subflow its pacer holds back counts as having no window space; the
//!   kernel's test has no pacing check and queues the segment on the
//!   subflow, whose pacer then holds it. Only `bbr` and `mpbbr` pace, so
//!   only their runs see the difference: data goes to a subflow free to
//!   send now rather than waiting behind the fastest one's pacer.
//!
//! As in the kernel, data queued for reinjection is offered only to the
//! subflows that do not hold it (its `path_mask`) while one of them is
//! usable (with round robin, while one has room): the connection shows the
//! others as suspected dead (`Connection::hide_carriers`). Deviation: the
//! redundant scheduler's copies of a reinjected range follow on the
//! subflows that lag behind, not on every other subflow at once as
//! `mptcp_redundant.c` queues them.

mod blest;
mod ecf;
mod llhd;
mod minrtt;
mod redundant;
mod rr;
mod upstream;

pub use blest::{blest_fast_bytes, blest_linger, Blest, BLEST_LAMBDA_MAX, BLEST_LAMBDA_MIN};
pub use ecf::{Ecf, ECF_BETA};
pub use llhd::{Llhd, LLHD_BETA_CODE, LLHD_BETA_PAPER};
pub use minrtt::MinRtt;
pub use redundant::Redundant;
pub use rr::RoundRobin;
pub use upstream::{Upstream, UPSTREAM_BURST};

use crate::time::{Duration, Instant};

/// Whether a window of `cwnd` bytes lets a packet of `len` bytes join
/// `bytes` bytes in `packets` data packets in flight. Braid counts the
/// window in bytes (RFC 3465) and Linux in packets; both limits apply, so a
/// window of n segments never holds more than n packets however small they
/// are (an application writing a byte at a time with `nodelay` would
/// otherwise have a thousand packets in flight on a two-segment window, and
/// swamp a slow path). For full-size segments the packet limit never binds.
///
/// The packet limit `packets < ceil(cwnd / mss)` is tested as
/// `packets * mss < cwnd`, the same condition without a division: this runs
/// several times per packet sent.
pub fn window_allows(cwnd: u64, mss: u32, bytes: u64, packets: u64, len: u32) -> bool {
    bytes + u64::from(len) <= cwnd && packets.saturating_mul(u64::from(mss.max(1))) < cwnd
}

/// What a scheduler may know about one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedPath {
    pub srtt: Option<Duration>,
    pub rttvar: Duration,
    pub cwnd: u64,
    /// Slow-start threshold, bytes; `u64::MAX` before the first loss. Filled
    /// only for a scheduler that reads it ([`Scheduler::reads_ssthresh`]),
    /// 0 otherwise: asking the controller costs a call per subflow per send.
    pub ssthresh: u64,
    pub bytes_in_flight: u64,
    /// Data packets in flight (see [`window_allows`]).
    pub packets_in_flight: u64,
    pub mss: u32,
    pub backup: bool,
    /// After a retransmission timeout, until new data is acknowledged.
    pub potentially_failed: bool,
    /// In the loss state after a timeout (`Subflow::in_loss`): it re-sends
    /// what the timeout declared lost and takes no other data meanwhile, as
    /// MPTCP v0.96's `mptcp_is_temp_unavailable` (with SACK): it counts as
    /// having no window space.
    pub in_loss: bool,
    /// False for closed subflows and for those still joining.
    pub active: bool,
    /// The pacer holds this subflow back until later.
    pub paced: bool,
    /// Latest delivery-rate sample, bytes per second (0 before the first).
    pub delivery_rate: f64,
    /// Bytes this subflow holds to send: new data handed to it and not
    /// sent yet, and lost data waiting to be re-sent on it. Filled only for
    /// a scheduler that [commits bursts](Scheduler::commits_bursts).
    pub queued: u64,
    /// The controller's pacing rate, bytes per second, when it paces.
    /// Filled only for a scheduler that commits bursts, which reads it.
    pub pacing_rate: Option<f64>,
}

impl SchedPath {
    /// Room for one more full segment under the congestion window, the
    /// pacer lets it go now, and the subflow is not in the loss state.
    pub fn has_window_space(&self) -> bool {
        !self.paced
            && !self.in_loss
            && window_allows(self.cwnd, self.mss, self.bytes_in_flight, self.packets_in_flight, self.mss)
    }
    /// Can carry data at all (open and not suspected dead).
    pub fn usable(&self) -> bool {
        self.active && !self.potentially_failed
    }
    /// Bytes in flight counted in segments.
    pub fn in_flight_segments(&self) -> f64 {
        self.bytes_in_flight as f64 / f64::from(self.mss.max(1))
    }
    /// Congestion window counted in segments.
    pub fn cwnd_segments(&self) -> f64 {
        self.cwnd as f64 / f64::from(self.mss.max(1))
    }
    /// Smoothed RTT in seconds; zero before the first sample, so new
    /// subflows get probed first (as in `MinRtt`).
    pub fn rtt(&self) -> f64 {
        self.srtt.unwrap_or_default().as_secs_f64()
    }
}

/// Subflows a scheduler may consider: usable ones, and backup subflows only
/// when no regular one is usable (the rule of v0.96's default scheduler,
/// which BLEST, ECF and LLHD build on; RR has none).
pub fn eligible(paths: &[SchedPath]) -> impl Iterator<Item = usize> + '_ {
    let regular = any_regular(paths);
    paths.iter().enumerate().filter(move |(_, p)| p.usable() && p.backup != regular).map(|(i, _)| i)
}

/// Whether a regular (not backup) subflow is usable: then backups wait.
fn any_regular(paths: &[SchedPath]) -> bool {
    paths.iter().any(|p| p.usable() && !p.backup)
}

/// The eligible subflow with the lowest smoothed RTT among those `keep`
/// accepts; ties go to the lower index.
pub fn fastest(paths: &[SchedPath], keep: impl Fn(usize) -> bool) -> Option<usize> {
    // Runs for every packet: one plain pass after the eligibility test.
    let regular = any_regular(paths);
    let mut best: Option<(Duration, usize)> = None;
    for (i, p) in paths.iter().enumerate() {
        if p.usable() && p.backup != regular && keep(i) {
            let rtt = p.srtt.unwrap_or_default();
            if best.is_none_or(|(b, _)| rtt < b) {
                best = Some((rtt, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// What a scheduler may know about the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedConn {
    pub now: Instant,
    /// Bytes written by the application and not yet sent on any subflow.
    pub backlog: u64,
    /// Bytes the peer's receive window still allows beyond what was sent.
    pub window_room: u64,
    /// The connection-level send window: the peer's whole receive window
    /// measured from the Data ACK (BLEST's MPTCP_SW).
    pub send_window: u64,
    /// Times so far that the connection was blocked: new data waited
    /// because the peer's window was full (head-of-line blocking), or the
    /// application waited on a full send buffer with all it wrote sent.
    pub stalls: u64,
    /// The controller's `sndbuf_expand` (Linux's send buffer per window: 2,
    /// BBR's 3), for a scheduler that models the subflows' send buffers.
    pub sndbuf_expand: u32,
}

/// The situation BLEST and ECF decide in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastOrSlow {
    /// Send on this subflow: the fastest has room, or no RTTs to compare yet.
    Go(usize),
    /// The fastest subflow is full and `slow` (the fastest with room) could
    /// carry the segment instead: the scheduler must choose.
    Choose { fast: usize, slow: usize },
    /// No subflow has room.
    Nothing,
}

/// Classifies the subflows for a scheduler that may wait for the fastest
/// one. Until both candidates have an RTT sample there is nothing to
/// compare, and the slower one is used as minRTT would. (The join gives
/// every subflow a sample before it carries data, as the SYN exchange does
/// in the kernel; only a subflow the peer opened lacks one.)
pub fn fast_or_slow(paths: &[SchedPath]) -> FastOrSlow {
    let Some(fast) = fastest(paths, |_| true) else { return FastOrSlow::Nothing };
    if paths[fast].has_window_space() {
        return FastOrSlow::Go(fast);
    }
    let Some(slow) = fastest(paths, |i| i != fast && paths[i].has_window_space()) else { return FastOrSlow::Nothing };
    if paths[fast].srtt.is_none() || paths[slow].srtt.is_none() {
        return FastOrSlow::Go(slow);
    }
    FastOrSlow::Choose { fast, slow }
}

/// The decision of a scheduler that may wait for the fastest subflow:
/// follow [`fast_or_slow`], and where there is a choice ask `wait(fast,
/// slow)` whether to hold the segment for `fast` rather than send it on
/// `slow`.
pub fn send_or_wait(paths: &[SchedPath], wait: impl FnOnce(usize, usize) -> bool) -> Decision {
    match fast_or_slow(paths) {
        FastOrSlow::Go(i) => Decision::Send(i),
        FastOrSlow::Nothing => Decision::Wait,
        FastOrSlow::Choose { fast, slow } if wait(fast, slow) => Decision::Wait,
        FastOrSlow::Choose { slow, .. } => Decision::Send(slow),
    }
}

/// A scheduler's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Send(usize),
    /// Send on every subflow with window space, each carrying whatever it
    /// has not carried yet (redundant scheduling).
    SendAll,
    Wait,
}

pub trait Scheduler: std::fmt::Debug + Send {
    fn name(&self) -> &'static str;
    fn select(&mut self, conn: &SchedConn, paths: &[SchedPath]) -> Decision;
    /// True for schedulers whose subflows each carry every segment, so a
    /// subflow that lags behind must be offered copies even when there is
    /// no new data (an application-limited connection). A property of the
    /// scheduler's kind: the connection reads it once, when it is built.
    fn copies_in_flight(&self) -> bool {
        false
    }
    /// Whether the Linux module this scheduler follows retransmits
    /// opportunistically and penalises slow subflows: those built on the
    /// default scheduler's `mptcp_next_segment` (which calls
    /// `mptcp_rcv_buf_optimization`) do; `mptcp_rr.c` and
    /// `mptcp_redundant.c` bring their own and do not.
    fn opportunistic_by_default(&self) -> bool {
        true
    }
    /// Whether `select` reads [`SchedPath::ssthresh`].
    fn reads_ssthresh(&self) -> bool {
        false
    }
    /// Whether a range being reinjected waits for a usable subflow that
    /// does not hold it when that one has no room, as the default
    /// scheduler's `get_subflow_from_selectors` (and the modules built on
    /// it) does, rather than go to a subflow that holds it and has room,
    /// as `mptcp_rr.c`'s `rr_get_available_subflow` does.
    fn reinjection_waits_for_unused(&self) -> bool {
        true
    }
    /// Whether the scheduler hands a subflow bursts of new data for its own
    /// queue, sent as its window opens, rather than one segment when its
    /// window has room: `Decision::Send(i)` for new data then means "queue
    /// a burst on `i`" (upstream Linux, [`Upstream`]). A property of the
    /// scheduler's kind, read once when the connection is built.
    fn commits_bursts(&self) -> bool {
        false
    }
}

/// Every scheduler Braid has, by scenario name, with a one-line description.
pub const ALGORITHMS: &[(&str, &str)] = &[
    ("minrtt", "lowest smoothed RTT among subflows with window space; backups only when no regular subflow is usable (MPTCP v0.96 default)"),
    ("blest", "BLEST (Ferlin et al. 2016): skip the slow subflow when it would block the send window; adaptive lambda"),
    ("ecf", "ECF (Lim et al. 2017): wait for the fastest subflow when that completes sooner; hysteresis beta 0.25"),
    ("rr", "round robin over subflows with window space, one segment each (mptcp_rr.c defaults)"),
    ("llhd", "LLHD (Lubna et al. 2022): maximise goodput/GP_max + beta RTT_max/RTT, beta = 0.001 as in the paper"),
    ("redundant", "ReMP / mptcp_redundant.c: every segment on every subflow with window space; the first copy counts"),
    ("upstream", "upstream Linux MPTCP's default (Linux 6.x): 64 KB bursts queued on the subflow with the shortest linger time, queued bytes / pacing rate"),
];

/// Builds the scheduler a scenario names, with its default settings, or
/// `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Box<dyn Scheduler>> {
    build(name, &Settings::default()).ok()
}

/// Settings a scenario may give its scheduler; `None` keeps the default.
/// Each applies to the schedulers [`SETTINGS`] lists for it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Settings {
    pub num_segments: Option<u32>,
    pub cwnd_limited: Option<bool>,
    pub beta: Option<f64>,
    pub lambda: Option<f64>,
}

/// Every setting: its name, the schedulers it applies to, and what it does.
pub const SETTINGS: &[(&str, &[&str], &str)] = &[
    ("num_segments", &["rr"], "segments a subflow sends per turn, 1 to 1000 (mptcp_rr.c; default 1)"),
    ("cwnd_limited", &["rr"], "a subflow without window space loses its turn (mptcp_rr.c; default true)"),
    (
        "beta",
        &["ecf", "llhd"],
        "ECF's hysteresis, 0 to 1 (default 0.25); LLHD's RTT weight, >= 0 (paper 0.001, default; code 10)",
    ),
    ("lambda", &["blest"], "BLEST's initial lambda, within [1.0, 1.3] where it adapts (default 1.2)"),
];

/// Why a scheduler could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingsError {
    UnknownScheduler(String),
    /// The setting does not apply to this scheduler.
    NotApplicable {
        setting: &'static str,
        scheduler: String,
    },
    OutOfRange {
        setting: &'static str,
        value: f64,
        allowed: &'static str,
    },
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::UnknownScheduler(n) => write!(f, "unknown scheduler {n:?}"),
            SettingsError::NotApplicable { setting, scheduler } => {
                let owners = SETTINGS.iter().find(|(n, ..)| n == setting).map_or(&[][..], |s| s.1);
                write!(f, "{setting} does not apply to {scheduler:?}; it is a setting of {}", owners.join(" and "))
            }
            SettingsError::OutOfRange { setting, value, allowed } => {
                // A whole number as written (1001, not 1001.0); Debug keeps
                // huge and tiny values short (1e300, not 301 digits).
                if value.fract() == 0.0 && value.abs() < 1e15 {
                    write!(f, "{setting} = {value:.0} is out of range: allowed {allowed}")
                } else {
                    write!(f, "{setting} = {value:?} is out of range: allowed {allowed}")
                }
            }
        }
    }
}

impl std::error::Error for SettingsError {}

/// Builds scheduler `name` with `settings`, refusing settings it does not
/// have and values outside their range.
pub fn build(name: &str, settings: &Settings) -> Result<Box<dyn Scheduler>, SettingsError> {
    let given = [
        ("num_segments", settings.num_segments.is_some()),
        ("cwnd_limited", settings.cwnd_limited.is_some()),
        ("beta", settings.beta.is_some()),
        ("lambda", settings.lambda.is_some()),
    ];
    if !ALGORITHMS.iter().any(|(n, _)| *n == name) {
        return Err(SettingsError::UnknownScheduler(name.to_string()));
    }
    for (setting, owners, _) in SETTINGS {
        if given.iter().any(|(n, set)| n == setting && *set) && !owners.contains(&name) {
            return Err(SettingsError::NotApplicable { setting, scheduler: name.to_string() });
        }
    }
    let check = |setting: &'static str, value: f64, ok: bool, allowed: &'static str| {
        if ok && value.is_finite() {
            Ok(value)
        } else {
            Err(SettingsError::OutOfRange { setting, value, allowed })
        }
    };
    Ok(match name {
        "minrtt" => Box::new(MinRtt),
        "blest" => {
            let mut b = Blest::default();
            if let Some(l) = settings.lambda {
                b.lambda = check("lambda", l, (BLEST_LAMBDA_MIN..=BLEST_LAMBDA_MAX).contains(&l), "1.0 to 1.3")?;
            }
            Box::new(b)
        }
        "ecf" => {
            let mut e = Ecf::default();
            if let Some(b) = settings.beta {
                e.beta = check("beta", b, (0.0..=1.0).contains(&b), "0 to 1 for ecf")?;
            }
            Box::new(e)
        }
        "rr" => {
            let mut r = RoundRobin::default();
            if let Some(n) = settings.num_segments {
                r.num_segments = check("num_segments", f64::from(n), (1..=1000).contains(&n), "1 to 1000")? as u32;
            }
            r.cwnd_limited = settings.cwnd_limited.unwrap_or(r.cwnd_limited);
            Box::new(r)
        }
        "llhd" => {
            let mut l = Llhd::default();
            if let Some(b) = settings.beta {
                l.beta = check("beta", b, b >= 0.0, "0 or more for llhd")?;
            }
            Box::new(l)
        }
        "redundant" => Box::new(Redundant),
        "upstream" => Box::new(Upstream::default()),
        _ => return Err(SettingsError::UnknownScheduler(name.to_string())),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::window_allows;

    #[test]
    fn the_window_limits_bytes_and_packets() {
        // Two 1000-byte segments' window: two full packets, or two tiny ones.
        assert!(window_allows(2000, 1000, 1000, 1, 1000));
        assert!(!window_allows(2000, 1000, 2000, 2, 1));
        assert!(window_allows(2000, 1000, 1, 1, 1));
        assert!(!window_allows(2000, 1000, 2, 2, 1), "a third tiny packet");
        // A window of 2.5 segments holds three packets if they fit in bytes.
        assert!(window_allows(2500, 1000, 1000, 2, 500));
        assert!(!window_allows(2500, 1000, 1000, 2, 1501));
    }

    proptest::proptest! {
        /// The division-free packet limit is the ceiling it stands for.
        #[test]
        fn the_packet_limit_is_the_window_rounded_up_to_segments(
            cwnd in 0u64..1 << 40, mss in 0u32..70_000, packets in 0u64..1 << 30, small in 0u8..3,
        ) {
            // Small values too, where the rounding matters, and an MSS of 0.
            let (cwnd, packets, mss) = match small {
                0 => (cwnd, packets, mss),
                1 => (cwnd % 20_000, packets % 30, mss % 3_000),
                _ => (cwnd % 20, packets % 30, 0),
            };
            let by_ceiling = packets < cwnd.div_ceil(u64::from(mss.max(1)));
            proptest::prop_assert_eq!(window_allows(cwnd, mss, 0, packets, 0), by_ceiling);
        }
    }

    use super::*;

    #[test]
    fn settings_apply_only_where_they_belong_and_within_range() {
        let rr = Settings { num_segments: Some(2), cwnd_limited: Some(false), ..Settings::default() };
        let mut s = build("rr", &rr).unwrap();
        // Two segments per turn, and a full subflow's turn waits for it.
        let c = SchedConn::default();
        let picks: Vec<_> = (0..4).map(|_| s.select(&c, &[path(10, 0), path(50, 0)])).collect();
        assert_eq!(picks, [0, 0, 1, 1].map(Decision::Send));
        assert_eq!(s.select(&c, &[path(10, 10_000), path(50, 0)]), Decision::Wait);
        assert_eq!(
            build("ecf", &rr).unwrap_err(),
            SettingsError::NotApplicable { setting: "num_segments", scheduler: "ecf".into() }
        );
        let beta = Settings { beta: Some(0.5), ..Settings::default() };
        assert_eq!(
            build("rr", &beta).unwrap_err().to_string(),
            "beta does not apply to \"rr\"; it is a setting of ecf and llhd"
        );
        let beta = |b| Settings { beta: Some(b), ..Settings::default() };
        assert!(build("ecf", &beta(0.5)).is_ok() && build("llhd", &beta(10.0)).is_ok());
        assert!(matches!(build("ecf", &beta(2.0)), Err(SettingsError::OutOfRange { setting: "beta", .. })));
        assert!(matches!(build("llhd", &beta(f64::NAN)), Err(SettingsError::OutOfRange { .. })));
        assert_eq!(
            build("ecf", &beta(1e300)).unwrap_err().to_string(),
            "beta = 1e300 is out of range: allowed 0 to 1 for ecf"
        );
        let segments = Settings { num_segments: Some(1001), ..Settings::default() };
        let e = build("rr", &segments).unwrap_err().to_string();
        assert!(e.starts_with("num_segments = 1001 is out of range"), "{e}");
        let lambda = Settings { lambda: Some(1.35), ..Settings::default() };
        assert!(matches!(build("blest", &lambda), Err(SettingsError::OutOfRange { setting: "lambda", .. })));
        assert!(matches!(build("fifo", &Settings::default()), Err(SettingsError::UnknownScheduler(_))));
        assert!(ALGORITHMS.iter().all(|(n, _)| by_name(n).is_some()));
    }

    /// Each scheduler reports the name scenarios and summaries use, and
    /// retransmits opportunistically by default exactly when its Linux
    /// module is built on the default scheduler's `mptcp_next_segment`
    /// (`mptcp_rr.c` and `mptcp_redundant.c` are not, and upstream Linux
    /// has none); only upstream's commits bursts to subflow queues.
    #[test]
    fn names_and_opportunistic_defaults_follow_the_kernel_modules() {
        for (name, _) in ALGORITHMS {
            let s = by_name(name).unwrap();
            assert_eq!(s.name(), *name);
            assert_eq!(s.opportunistic_by_default(), !matches!(*name, "rr" | "redundant" | "upstream"), "{name}");
            assert_eq!(s.commits_bursts(), *name == "upstream", "{name}");
        }
    }

    /// A regular subflow with `rtt_ms` SRTT, a 10-segment window of 1000-byte
    /// segments and `in_flight` bytes outstanding (10 000 means full).
    /// BLEST's and ECF's situations: the fastest has room; it is full and a
    /// slower one has room (a choice); every one is full (nothing).
    #[test]
    fn fast_or_slow_tells_the_three_situations_apart() {
        let (fast, slow) = (path(10, 0), path(50, 0));
        let (fast_full, slow_full) = (path(10, 10_000), path(50, 10_000));
        assert_eq!(fast_or_slow(&[slow, fast]), FastOrSlow::Go(1));
        assert_eq!(fast_or_slow(&[slow, fast_full]), FastOrSlow::Choose { fast: 1, slow: 0 });
        assert_eq!(fast_or_slow(&[slow_full, fast_full]), FastOrSlow::Nothing);
        assert_eq!(fast_or_slow(&[slow_full, fast_full, path(90, 10_000)]), FastOrSlow::Nothing);
        // Without an RTT to compare, the one with room is used.
        let unmeasured = SchedPath { srtt: None, ..fast_full };
        assert_eq!(fast_or_slow(&[slow, unmeasured]), FastOrSlow::Go(0));
    }

    /// Backups are eligible only when no regular subflow is usable.
    #[test]
    fn backups_are_eligible_only_without_a_usable_regular_subflow() {
        let (regular, backup) = (path(10, 0), SchedPath { backup: true, ..path(5, 0) });
        let failed = SchedPath { potentially_failed: true, ..regular };
        assert_eq!(eligible(&[regular, backup]).collect::<Vec<_>>(), [0]);
        assert_eq!(eligible(&[failed, backup]).collect::<Vec<_>>(), [1]);
        assert_eq!(eligible(&[failed, SchedPath { potentially_failed: true, ..backup }]).count(), 0);
    }

    pub fn path(rtt_ms: u64, in_flight: u64) -> SchedPath {
        SchedPath {
            srtt: Some(Duration::from_millis(rtt_ms)),
            rttvar: Duration::from_millis(rtt_ms / 4),
            cwnd: 10_000,
            bytes_in_flight: in_flight,
            mss: 1000,
            active: true,
            ..Default::default()
        }
    }
}
