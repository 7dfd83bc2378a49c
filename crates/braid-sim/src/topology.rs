//! Topology builders: they produce links between named nodes and the
//! forward/reverse routes of named paths. Each subflow of a flow follows
//! one path; its ACKs return on the path's reverse route. In the two
//! access topologies (`hybrid-access`, `dumbbell`) reverse links mirror
//! forward ones in rate and delay but are lossless with deep queues, so ACK
//! loss never confounds an experiment unless a topology asks for it; in the
//! data-centre fabrics ([`fattree`], [`bcube`]) every link carries data one
//! way and ACKs the other, as in a real network.

pub mod bcube;
pub mod ecmp;
pub mod fattree;

use std::sync::Arc;

use braid_proto::{Duration, Instant};

use crate::link::{Aqm, LinkSpec, QueueLimit};
use crate::loss::LossSpec;
use crate::policer::PolicerSpec;
use crate::trace::DeliveryTrace;

/// A data-centre fabric built into a [`Topology`]: hosts numbered from 0,
/// the other nodes switches.
pub trait HostFabric {
    fn topology(&self) -> &Topology;
    /// Node index of each host, by host number.
    fn host_nodes(&self) -> &[usize];

    fn hosts(&self) -> usize {
        self.host_nodes().len()
    }

    /// Node index of host `h`.
    fn host_node(&self, h: usize) -> usize {
        self.host_nodes()[h]
    }

    fn switches(&self) -> usize {
        self.topology().nodes.len() - self.host_nodes().len()
    }
}

/// Links between nodes, plus named paths over them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub links: Vec<LinkSpec>,
    pub paths: Vec<Path>,
    /// Node names (hosts, routers, switches).
    pub nodes: Vec<String>,
    /// For each link, the nodes it goes from and to.
    pub ends: Vec<(usize, usize)>,
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
    pub loss: LossSpec,
    pub queue: QueueLimit,
    pub outages: Vec<(Instant, Instant)>,
    pub aqm: Aqm,
    pub trace: Option<Arc<DeliveryTrace>>,
    /// A policer in front of the forward link's queue.
    pub policer: Option<PolicerSpec>,
    /// The largest packet (IP bytes) either direction carries.
    pub mtu: Option<u32>,
}

/// Where a route is broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    Empty,
    /// Link `at` of the route does not start where link `at - 1` ends.
    Gap {
        at: usize,
    },
    /// The route does not start at `from` or does not end at `to`.
    WrongEnds,
}

/// Queue of reverse (ACK) links, of the uncongested core and of a
/// dumbbell's access links: deep enough never to drop where the scenario
/// puts no bottleneck.
pub const DEEP_QUEUE: QueueLimit = QueueLimit::Packets(DEEP_QUEUE_PACKETS);
/// [`DEEP_QUEUE`]'s length, as warnings name it.
pub const DEEP_QUEUE_PACKETS: u32 = 100_000;

impl Topology {
    pub fn add_node(&mut self, name: impl Into<String>) -> usize {
        self.nodes.push(name.into());
        self.nodes.len() - 1
    }

    pub fn add_link(&mut self, spec: LinkSpec, from: usize, to: usize) -> usize {
        self.links.push(spec);
        self.ends.push((from, to));
        self.links.len() - 1
    }

    /// Checks that `route` is a walk through the graph from `from` to `to`:
    /// each link starts where the one before it ends.
    pub fn check_route(&self, route: &[usize], from: usize, to: usize) -> Result<(), RouteError> {
        let (first, last) = match (route.first(), route.last()) {
            (Some(&f), Some(&l)) => (f, l),
            _ => return Err(RouteError::Empty),
        };
        if let Some(at) = (1..route.len()).find(|&i| self.ends[route[i - 1]].1 != self.ends[route[i]].0) {
            return Err(RouteError::Gap { at });
        }
        if self.ends[first].0 != from || self.ends[last].1 != to {
            return Err(RouteError::WrongEnds);
        }
        Ok(())
    }

    /// Where a path starts and ends (the first link's tail, the last link's head).
    pub fn path_ends(&self, path: &Path) -> Option<(usize, usize)> {
        Some((self.ends[*path.forward.first()?].0, self.ends[*path.forward.last()?].1))
    }

    /// Forward and reverse link for `p` between nodes `a` and `b`; returns
    /// their indices.
    fn add_duplex(&mut self, p: &LinkParams, a: usize, b: usize) -> (usize, usize) {
        let one_way = Duration::from_nanos(p.rtt.as_nanos() / 2);
        let back = p.rtt - one_way;
        let fwd = self.add_link(
            LinkSpec {
                name: p.name.clone(),
                rate_bps: p.rate_bps,
                delay: one_way,
                queue: p.queue,
                loss: p.loss,
                outages: p.outages.clone(),
                aqm: p.aqm,
                trace: p.trace.clone(),
                policer: p.policer,
                mtu: p.mtu,
            },
            a,
            b,
        );
        let mut rev = LinkSpec::new(format!("{}-rev", p.name), p.rate_bps, back, DEEP_QUEUE);
        rev.outages = p.outages.clone();
        rev.mtu = p.mtu;
        let rev = self.add_link(rev, b, a);
        (fwd, rev)
    }
}

impl LinkParams {
    /// A lossless drop-tail link without outages.
    pub fn new(name: impl Into<String>, rate_bps: u64, rtt: Duration, queue: QueueLimit) -> LinkParams {
        LinkParams {
            name: name.into(),
            rate_bps,
            rtt,
            loss: LossSpec::Bernoulli { p: 0.0 },
            queue,
            outages: vec![],
            aqm: Aqm::DropTail,
            trace: None,
            policer: None,
            mtu: None,
        }
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
    let (a, r, b) = (t.add_node("A"), t.add_node("R"), t.add_node("B"));
    let core = LinkParams::new(CORE_LINK, core_rate_bps, Duration::ZERO, DEEP_QUEUE);
    let (core_fwd, core_rev) = t.add_duplex(&core, r, b);
    for l in access {
        let (fwd, rev) = t.add_duplex(l, a, r);
        t.paths.push(Path { name: l.name.clone(), forward: vec![fwd, core_fwd], reverse: vec![core_rev, rev] });
    }
    t
}

/// The access links' rate in a dumbbell that does not set one.
pub const DUMBBELL_ACCESS_RATE_BPS: u64 = 10_000_000_000;

/// A shared bottleneck: every path crosses `bottleneck` after a private
/// access link of `access_rate_bps` that adds its own round-trip delay.
/// `paths` gives each path's name and extra RTT.
pub fn dumbbell(bottleneck: &LinkParams, access_rate_bps: u64, paths: &[(String, Duration)]) -> Topology {
    let mut t = Topology::default();
    let (left, right) = (t.add_node("left"), t.add_node("right"));
    let (b_fwd, b_rev) = t.add_duplex(bottleneck, left, right);
    for (name, extra_rtt) in paths {
        let host = t.add_node(format!("{name}-host"));
        let access = LinkParams::new(format!("{name}-access"), access_rate_bps, *extra_rtt, DEEP_QUEUE);
        let (fwd, rev) = t.add_duplex(&access, host, left);
        t.paths.push(Path { name: name.clone(), forward: vec![fwd, b_fwd], reverse: vec![b_rev, rev] });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_give_walks_through_their_graphs() {
        let l = |n: &str| LinkParams::new(n, 1_000_000, Duration::from_millis(10), QueueLimit::Packets(10));
        let h = hybrid_access(&[l("L1"), l("L2")], 2_000_000_000);
        let d = dumbbell(
            &l("neck"),
            DUMBBELL_ACCESS_RATE_BPS,
            &[("p0".into(), Duration::ZERO), ("p1".into(), Duration::from_millis(5))],
        );
        for t in [h, d] {
            for p in &t.paths {
                let (from, to) = t.path_ends(p).unwrap();
                assert_eq!(t.check_route(&p.forward, from, to), Ok(()), "{}", p.name);
                assert_eq!(t.check_route(&p.reverse, to, from), Ok(()), "{} reverse", p.name);
            }
        }
        let t = hybrid_access(&[l("L1")], 1);
        assert_eq!(t.check_route(&[2, 2], 0, 2), Err(RouteError::Gap { at: 1 }));
        assert_eq!(t.check_route(&[], 0, 2), Err(RouteError::Empty));
        assert_eq!(t.check_route(&[2, 0], 1, 2), Err(RouteError::WrongEnds));
    }
}
