//! The k-ary FatTree (Al-Fares et al., SIGCOMM 2008), as the NSDI 2011
//! MPTCP paper (seed 000, §4) and htsim's `FatTreeTopology` build it.
//!
//! k pods, each with k/2 top-of-rack (ToR) and k/2 aggregation switches;
//! (k/2)^2 core switches; every ToR links to every aggregation switch of
//! its pod, aggregation switch j of every pod links to core switches
//! j·k/2 ... j·k/2 + k/2 - 1. Each ToR has k/2 hosts, or `oversubscription`
//! times as many (htsim's `OversubscribedFatTreeTopology` has 4 x k/2 for
//! 4:1), which oversubscribes the ToR uplinks by that factor. k = 8 gives
//! 128 hosts and 80 switches.
//!
//! Every link is one direction of a cable, named `FROM>TO` (`h3>t1`,
//! `t1>a0`, `a0>c2`, ...): hosts `h<i>`, ToRs `t<i>`, aggregation switches
//! `a<i>`, cores `c<i>`. Host uplinks have their own queue (`host_queue`,
//! htsim's 1000-packet sender queue) so a sender's own burst does not
//! overflow its NIC; every switch port has `queue`.
//!
//! Routes between two hosts are the shortest ones: 1 under one ToR, k/2
//! within a pod (one per aggregation switch), (k/2)^2 across pods (one per
//! core). A route's ACKs return on its mirror image (the same switches,
//! the opposite link of each cable).

use braid_proto::Duration;

use super::{HostFabric, Topology};
use crate::link::{Aqm, LinkSpec, QueueLimit};

/// A FatTree's shape and its links' parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FatTreeParams {
    /// Switch radix: even, at least 2.
    pub k: usize,
    pub rate_bps: u64,
    /// One-way propagation delay of every link.
    pub delay: Duration,
    /// Queue of every switch port.
    pub queue: QueueLimit,
    /// Discipline of every switch port (hosts' uplinks stay drop-tail, as
    /// htsim's host queues do).
    pub aqm: Aqm,
    /// Queue of each host's uplink.
    pub host_queue: QueueLimit,
    /// Hosts per ToR in multiples of k/2 (1: full bisection bandwidth).
    pub oversubscription: usize,
}

impl FatTreeParams {
    /// htsim's defaults for everything but k and the rate: 1 µs links,
    /// 100-packet switch queues, 1000-packet host queues, no oversubscription.
    pub fn new(k: usize, rate_bps: u64) -> FatTreeParams {
        FatTreeParams {
            k,
            rate_bps,
            delay: Duration::from_micros(1),
            queue: QueueLimit::Packets(100),
            aqm: Aqm::DropTail,
            host_queue: QueueLimit::Packets(1000),
            oversubscription: 1,
        }
    }
}

/// A built FatTree: its links and nodes, and how to route between hosts.
#[derive(Clone, Debug)]
pub struct FatTree {
    pub topology: Topology,
    half: usize,
    hosts_per_tor: usize,
    /// Per host: its uplink and downlink.
    host_up: Vec<usize>,
    host_down: Vec<usize>,
    /// Per ToR and aggregation switch of its pod: the link up and down.
    tor_up: Vec<Vec<usize>>,
    tor_down: Vec<Vec<usize>>,
    /// Per aggregation switch and each of its cores: up and down.
    agg_up: Vec<Vec<usize>>,
    agg_down: Vec<Vec<usize>>,
    /// Node index of each host.
    host_nodes: Vec<usize>,
}

impl HostFabric for FatTree {
    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn host_nodes(&self) -> &[usize] {
        &self.host_nodes
    }
}

impl FatTree {
    /// Builds the tree; `k` must be even and at least 2, `oversubscription`
    /// at least 1.
    pub fn new(p: &FatTreeParams) -> Result<FatTree, String> {
        if p.k < 2 || !p.k.is_multiple_of(2) || p.k > 64 {
            return Err(format!("k = {} must be even, from 2 to 64", p.k));
        }
        if !(1..=64).contains(&p.oversubscription) {
            return Err(format!("oversubscription = {} must be from 1 to 64", p.oversubscription));
        }
        let (k, half) = (p.k, p.k / 2);
        let tors = k * half;
        let hosts_per_tor = half * p.oversubscription;
        // As BCube's: beyond this, building the fabric alone takes gigabytes.
        if tors * hosts_per_tor > 100_000 {
            return Err(format!(
                "oversubscription = {} with k = {k} makes {} hosts: at most 100000",
                p.oversubscription,
                tors * hosts_per_tor
            ));
        }
        let mut t = Topology::default();
        let host_nodes: Vec<usize> = (0..tors * hosts_per_tor).map(|h| t.add_node(format!("h{h}"))).collect();
        let tor_nodes: Vec<usize> = (0..tors).map(|i| t.add_node(format!("t{i}"))).collect();
        let agg_nodes: Vec<usize> = (0..tors).map(|i| t.add_node(format!("a{i}"))).collect();
        let core_nodes: Vec<usize> = (0..half * half).map(|i| t.add_node(format!("c{i}"))).collect();
        // `from_host`: the up direction is a host's uplink (its own queue).
        let cable = |t: &mut Topology, a: usize, b: usize, from_host: bool| -> (usize, usize) {
            let name = |x: usize, y: usize| format!("{}>{}", t.nodes[x], t.nodes[y]);
            let switch_port =
                |name: String| LinkSpec { aqm: p.aqm, ..LinkSpec::new(name, p.rate_bps, p.delay, p.queue) };
            let up = match from_host {
                true => LinkSpec::new(name(a, b), p.rate_bps, p.delay, p.host_queue),
                false => switch_port(name(a, b)),
            };
            let down = switch_port(name(b, a));
            (t.add_link(up, a, b), t.add_link(down, b, a))
        };
        let (mut host_up, mut host_down) = (Vec::new(), Vec::new());
        for (h, &node) in host_nodes.iter().enumerate() {
            let (up, down) = cable(&mut t, node, tor_nodes[h / hosts_per_tor], true);
            host_up.push(up);
            host_down.push(down);
        }
        let (mut tor_up, mut tor_down) = (vec![Vec::new(); tors], vec![Vec::new(); tors]);
        for tor in 0..tors {
            let pod = tor / half;
            for j in 0..half {
                let (up, down) = cable(&mut t, tor_nodes[tor], agg_nodes[pod * half + j], false);
                tor_up[tor].push(up);
                tor_down[tor].push(down);
            }
        }
        let (mut agg_up, mut agg_down) = (vec![Vec::new(); tors], vec![Vec::new(); tors]);
        for agg in 0..tors {
            let j = agg % half;
            for m in 0..half {
                let (up, down) = cable(&mut t, agg_nodes[agg], core_nodes[j * half + m], false);
                agg_up[agg].push(up);
                agg_down[agg].push(down);
            }
        }
        Ok(FatTree {
            topology: t,
            half,
            hosts_per_tor,
            host_up,
            host_down,
            tor_up,
            tor_down,
            agg_up,
            agg_down,
            host_nodes,
        })
    }

    /// The other hosts under `h`'s ToR switch.
    pub fn neighbours(&self, h: usize) -> Vec<usize> {
        let first = h / self.hosts_per_tor * self.hosts_per_tor;
        (first..first + self.hosts_per_tor).filter(|&x| x != h).collect()
    }

    /// How many equal-cost routes join hosts `src` and `dst` (distinct).
    pub fn route_count(&self, src: usize, dst: usize) -> usize {
        let (ts, td) = (src / self.hosts_per_tor, dst / self.hosts_per_tor);
        if ts == td {
            1
        } else if ts / self.half == td / self.half {
            self.half
        } else {
            self.half * self.half
        }
    }

    /// Route `choice` (below [`route_count`]) from host `src` to `dst`, as
    /// links. The reverse route is `route(dst, src, choice)`.
    ///
    /// [`route_count`]: FatTree::route_count
    pub fn route(&self, src: usize, dst: usize, choice: usize) -> Vec<usize> {
        let (ts, td) = (src / self.hosts_per_tor, dst / self.hosts_per_tor);
        let (ps, pd) = (ts / self.half, td / self.half);
        if ts == td {
            return vec![self.host_up[src], self.host_down[dst]];
        }
        let (j, m) = (choice % self.half, choice / self.half);
        let (up, down) = (self.tor_up[ts][j], self.tor_down[td][j]);
        if ps == pd {
            return vec![self.host_up[src], up, down, self.host_down[dst]];
        }
        let (agg_s, agg_d) = (ps * self.half + j, pd * self.half + j);
        vec![self.host_up[src], up, self.agg_up[agg_s][m], self.agg_down[agg_d][m], down, self.host_down[dst]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// k = 8: 128 hosts, 80 switches, 2 links per cable: 128 host cables,
    /// 32 ToRs x 4 aggregation cables, 32 aggregation switches x 4 cores.
    #[test]
    fn k8_has_the_papers_counts_and_every_route_is_a_walk() {
        let ft = FatTree::new(&FatTreeParams::new(8, 100_000_000)).unwrap();
        assert_eq!((ft.hosts(), ft.switches()), (128, 80));
        assert_eq!(ft.topology.links.len(), 2 * (128 + 32 * 4 + 32 * 4));
        let t = &ft.topology;
        for (src, dst, routes) in [(0, 1, 1), (0, 5, 4), (0, 127, 16), (77, 3, 16), (20, 18, 4)] {
            assert_eq!(ft.route_count(src, dst), routes, "{src} -> {dst}");
            let mut seen = Vec::new();
            for c in 0..routes {
                let r = ft.route(src, dst, c);
                assert_eq!(t.check_route(&r, ft.host_node(src), ft.host_node(dst)), Ok(()));
                let back = ft.route(dst, src, c);
                let mirror: Vec<usize> = r.iter().rev().map(|&l| l ^ 1).collect();
                assert_eq!(back, mirror, "ACKs return on the mirror of route {c}");
                seen.push(r);
            }
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), routes, "routes are distinct");
        }
        assert_eq!(t.links[ft.route(0, 127, 5)[2]].name, "a1>c5");
        assert_eq!(ft.neighbours(5), [4, 6, 7]);
        assert_eq!(t.links[ft.host_up[0]].queue, QueueLimit::Packets(1000));
        assert_eq!(t.links[ft.host_down[0]].queue, QueueLimit::Packets(100));
        let over = FatTree::new(&FatTreeParams { oversubscription: 4, ..FatTreeParams::new(8, 1) }).unwrap();
        assert_eq!((over.hosts(), over.switches()), (512, 80));
        assert!(FatTree::new(&FatTreeParams::new(7, 1)).is_err());
        // At most 100,000 hosts, as BCube: k = 64 has 65,536, twice that not.
        assert_eq!(FatTree::new(&FatTreeParams::new(64, 1)).unwrap().hosts(), 65_536);
        let e = FatTree::new(&FatTreeParams { oversubscription: 2, ..FatTreeParams::new(64, 1) }).unwrap_err();
        assert_eq!(e, "oversubscription = 2 with k = 64 makes 131072 hosts: at most 100000");
    }
}
