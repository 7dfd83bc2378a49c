//! Topology builders: they produce links and the forward/reverse routes of
//! named paths. Each subflow of a flow follows one path; its ACKs return on
//! the path's reverse route. Reverse links mirror forward ones in rate and
//! delay but are lossless with deep queues, so ACK loss never confounds an
//! experiment unless a topology asks for it.

use braid_proto::{Duration, Instant};

use crate::link::{LinkSpec, QueueLimit, Red};

/// Links plus named paths over them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub links: Vec<LinkSpec>,
    pub paths: Vec<Path>,
}

/// A route from sender to receiver and back, as link indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub name: String,
    pub forward: Vec<usize>,
    pub reverse: Vec<usize>,
}

/// One access link (or bottleneck) as scenarios describe it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    pub name: String,
    pub rate_bps: u64,
    /// Round-trip propagation delay contributed by this link, split evenly
    /// between the two directions.
    pub rtt: Duration,
    pub loss: f64,
    pub queue: QueueLimit,
    pub outages: Vec<(Instant, Instant)>,
    pub red: Option<Red>,
}

/// Queue of reverse (ACK) links and of the uncongested core.
const DEEP_QUEUE: QueueLimit = QueueLimit::Packets(100_000);

impl Topology {
    fn add_link(&mut self, spec: LinkSpec) -> usize {
        self.links.push(spec);
        self.links.len() - 1
    }

    /// Forward and reverse link for `p`; returns their indices.
    fn add_duplex(&mut self, p: &LinkParams) -> (usize, usize) {
        let one_way = Duration::from_nanos(p.rtt.as_nanos() / 2);
        let back = p.rtt - one_way;
        let fwd = self.add_link(LinkSpec {
            name: p.name.clone(),
            rate_bps: p.rate_bps,
            delay: one_way,
            queue: p.queue,
            loss: p.loss,
            outages: p.outages.clone(),
            red: p.red,
        });
        let rev = self.add_link(LinkSpec {
            name: format!("{}-rev", p.name),
            rate_bps: p.rate_bps,
            delay: back,
            queue: DEEP_QUEUE,
            loss: 0.0,
            outages: p.outages.clone(),
            red: None,
        });
        (fwd, rev)
    }
}

/// Name of hybrid-access's core link (seed 004 calls it L3). Not `L3`, so
/// that access links named `L1`, `L2`, `L3`, ... never clash with it.
pub const CORE_LINK: &str = "core";

/// Seed 004's two-path hybrid access (§3.1, Fig. 5): host A reaches router R
/// over each access link, R reaches host B over one core link
/// ([`CORE_LINK`], 2 Gbit/s, no delay, no loss). One path per access link,
/// named after it.
pub fn hybrid_access(access: &[LinkParams], core_rate_bps: u64) -> Topology {
    let mut t = Topology::default();
    let core = LinkParams {
        name: CORE_LINK.into(),
        rate_bps: core_rate_bps,
        rtt: Duration::ZERO,
        loss: 0.0,
        queue: DEEP_QUEUE,
        outages: vec![],
        red: None,
    };
    let (core_fwd, core_rev) = t.add_duplex(&core);
    for a in access {
        let (fwd, rev) = t.add_duplex(a);
        t.paths.push(Path { name: a.name.clone(), forward: vec![fwd, core_fwd], reverse: vec![core_rev, rev] });
    }
    t
}

/// A shared bottleneck: every path crosses `bottleneck` after a private,
/// fast access link that adds its own round-trip delay. `paths` gives each
/// path's name and extra RTT.
pub fn dumbbell(bottleneck: &LinkParams, paths: &[(String, Duration)]) -> Topology {
    const ACCESS_RATE_BPS: u64 = 10_000_000_000;
    let mut t = Topology::default();
    let (b_fwd, b_rev) = t.add_duplex(bottleneck);
    for (name, extra_rtt) in paths {
        let access = LinkParams {
            name: format!("{name}-access"),
            rate_bps: ACCESS_RATE_BPS,
            rtt: *extra_rtt,
            loss: 0.0,
            queue: DEEP_QUEUE,
            outages: vec![],
            red: None,
        };
        let (fwd, rev) = t.add_duplex(&access);
        t.paths.push(Path { name: name.clone(), forward: vec![fwd, b_fwd], reverse: vec![b_rev, rev] });
    }
    t
}
