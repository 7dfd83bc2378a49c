//! BCube(n, k) (Guo et al., SIGCOMM 2009), as the NSDI 2011 MPTCP paper
//! (seed 000, §4) and htsim's `BCubeTopology` build it.
//!
//! n^(k+1) hosts, each with k+1 interfaces; k+1 levels of n^k switches with
//! n ports. A host's address is its k+1 base-n digits; the level-l switch
//! it connects to links the n hosts that differ from it only in digit l.
//! Hosts relay: a route corrects one digit per hop, host -> switch ->
//! host, so a relaying host's uplinks carry others' traffic too.
//! BCube(5, 2) has 125 hosts and 75 switches.
//!
//! Links are named `FROM>TO`, hosts `h<i>`, switches `s<level>.<i>`.
//! Routes between two hosts are BCube's k+1 parallel paths
//! (`BuildPathSet`, paper §4): path number `k - i` corrects digit i first,
//! then i-1, ... wrapping around; when the two hosts agree in digit i, it
//! first detours to the neighbour that differs there (digit i + 1 mod n;
//! htsim draws it at random) and corrects digit i last. A route's ACKs
//! return on its mirror image.

use braid_proto::Duration;

use super::{HostFabric, Topology};
use crate::link::{Aqm, LinkSpec, QueueLimit};

/// A BCube's shape and its links' parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BCubeParams {
    /// Switch ports, at least 2.
    pub n: usize,
    /// Levels above the first (a host has k+1 interfaces).
    pub k: usize,
    pub rate_bps: u64,
    pub delay: Duration,
    /// Queue of every link (host and switch ports alike).
    pub queue: QueueLimit,
    /// Discipline of every link (htsim's BCube: random drop everywhere).
    pub aqm: Aqm,
}

/// A built BCube: its links and nodes, and how to route between hosts.
#[derive(Clone, Debug)]
pub struct BCube {
    pub topology: Topology,
    n: usize,
    k: usize,
    /// Per level and host: the link host -> switch and switch -> host.
    up: Vec<Vec<usize>>,
    down: Vec<Vec<usize>>,
    host_nodes: Vec<usize>,
}

impl HostFabric for BCube {
    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn host_nodes(&self) -> &[usize] {
        &self.host_nodes
    }
}

impl BCube {
    pub fn new(p: &BCubeParams) -> Result<BCube, String> {
        if !(2..=64).contains(&p.n) {
            return Err(format!("n = {} must be from 2 to 64", p.n));
        }
        if p.k > 8 {
            return Err(format!("k = {} must be at most 8", p.k));
        }
        let hosts =
            p.n.checked_pow(p.k as u32 + 1)
                .filter(|&h| h <= 100_000)
                .ok_or_else(|| format!("n^(k+1) = {}^{} hosts is more than 100000", p.n, p.k + 1))?;
        let per_level = hosts / p.n;
        let mut t = Topology::default();
        let host_nodes: Vec<usize> = (0..hosts).map(|h| t.add_node(format!("h{h}"))).collect();
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for level in 0..=p.k {
            let switches: Vec<usize> = (0..per_level).map(|i| t.add_node(format!("s{level}.{i}"))).collect();
            let (mut u, mut d) = (Vec::new(), Vec::new());
            for (h, &node) in host_nodes.iter().enumerate() {
                let sw = switches[switch_index(h, level, p.n)];
                let name = |a: usize, b: usize| format!("{}>{}", t.nodes[a], t.nodes[b]);
                let (to_sw, to_host) = (name(node, sw), name(sw, node));
                let port = |name: String| LinkSpec { aqm: p.aqm, ..LinkSpec::new(name, p.rate_bps, p.delay, p.queue) };
                u.push(t.add_link(port(to_sw), node, sw));
                d.push(t.add_link(port(to_host), sw, node));
            }
            up.push(u);
            down.push(d);
        }
        Ok(BCube { topology: t, n: p.n, k: p.k, up, down, host_nodes })
    }

    /// Parallel routes between two distinct hosts: k+1.
    pub fn route_count(&self) -> usize {
        self.k + 1
    }

    fn digit(&self, h: usize, level: usize) -> usize {
        h / self.n.pow(level as u32) % self.n
    }

    fn with_digit(&self, h: usize, level: usize, d: usize) -> usize {
        let p = self.n.pow(level as u32);
        h - self.digit(h, level) * p + d * p
    }

    /// Appends the hops from `from` to `to` correcting digits in the order
    /// `first`, `first - 1`, ... (wrapping); returns the last host.
    fn correct(&self, route: &mut Vec<usize>, from: usize, to: usize, first: usize) {
        let mut at = from;
        for step in 0..=self.k {
            let level = (first + self.k + 1 - step) % (self.k + 1);
            let want = self.digit(to, level);
            if self.digit(at, level) != want {
                let next = self.with_digit(at, level, want);
                route.push(self.up[level][at]);
                route.push(self.down[level][next]);
                at = next;
            }
        }
    }

    /// Route `choice` (0 to k) from host `src` to host `dst`.
    pub fn route(&self, src: usize, dst: usize, choice: usize) -> Vec<usize> {
        let i = self.k - choice % (self.k + 1);
        let mut route = Vec::new();
        if self.digit(src, i) != self.digit(dst, i) {
            self.correct(&mut route, src, dst, i);
        } else {
            let detour = self.with_digit(src, i, (self.digit(src, i) + 1) % self.n);
            route.push(self.up[i][src]);
            route.push(self.down[i][detour]);
            self.correct(&mut route, detour, dst, (i + self.k) % (self.k + 1));
        }
        route
    }

    /// The reverse of `route`: the same hosts and switches backwards.
    pub fn mirror(&self, route: &[usize]) -> Vec<usize> {
        route.iter().rev().map(|&l| l ^ 1).collect()
    }

    /// The hosts one hop from `h` (differing in one digit): k+1 times n-1.
    pub fn neighbours(&self, h: usize) -> Vec<usize> {
        let mut out: Vec<usize> = (0..=self.k)
            .flat_map(|level| (0..self.n).map(move |d| (level, d)))
            .filter(|&(level, d)| d != self.digit(h, level))
            .map(|(level, d)| self.with_digit(h, level, d))
            .collect();
        out.sort_unstable();
        out
    }

    /// The first shortest of the parallel routes (single-path TCP's choice).
    pub fn shortest(&self, src: usize, dst: usize) -> usize {
        (0..self.route_count()).min_by_key(|&c| self.route(src, dst, c).len()).unwrap_or(0)
    }
}

/// Index among its level's switches of the level-`level` switch of host `h`:
/// `h` without digit `level`.
fn switch_index(h: usize, level: usize, n: usize) -> usize {
    let p = n.pow(level as u32);
    h / (p * n) * p + h % p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcube(n: usize, k: usize) -> BCube {
        BCube::new(&BCubeParams {
            n,
            k,
            rate_bps: 1,
            delay: Duration::ZERO,
            queue: QueueLimit::Packets(10),
            aqm: Aqm::DropTail,
        })
        .unwrap()
    }

    /// BCube(5, 2): 125 hosts with 3 interfaces, 75 switches of 5 ports;
    /// every pair of hosts has 3 routes, each a walk through the graph,
    /// pairwise link-disjoint (BCube's parallel paths), mirrored for ACKs.
    #[test]
    fn bcube_5_2_counts_and_parallel_routes() {
        let b = bcube(5, 2);
        assert_eq!((b.hosts(), b.switches(), b.topology.links.len()), (125, 75, 2 * 3 * 125));
        let t = &b.topology;
        for (node, degree) in [(b.host_node(7), 3), (125, 5)] {
            assert_eq!(t.ends.iter().filter(|e| e.0 == node).count(), degree, "{}", t.nodes[node]);
        }
        for src in 0..b.hosts() {
            for dst in (0..b.hosts()).filter(|&d| d != src).step_by(7) {
                let routes: Vec<Vec<usize>> = (0..3).map(|c| b.route(src, dst, c)).collect();
                for r in &routes {
                    assert_eq!(t.check_route(r, b.host_node(src), b.host_node(dst)), Ok(()), "{src} -> {dst}");
                    assert_eq!(t.check_route(&b.mirror(r), b.host_node(dst), b.host_node(src)), Ok(()));
                }
                for (x, y) in [(0, 1), (0, 2), (1, 2)] {
                    assert!(
                        routes[x].iter().all(|l| !routes[y].contains(l)),
                        "{src} -> {dst}: {x} and {y} share a link"
                    );
                }
                let len = |c: usize| routes[c].len();
                assert!((0..3).all(|c| len(b.shortest(src, dst)) <= len(c)));
            }
        }
        // Hosts 0 and 1 differ in digit 0 only: one route is one hop, two detour.
        let lens: Vec<usize> = (0..3).map(|c| b.route(0, 1, c).len()).collect();
        assert_eq!(lens, [6, 6, 2]);
        assert_eq!(b.shortest(0, 1), 2);
        // Twelve neighbours, each one hop away.
        let n = b.neighbours(7);
        assert_eq!(n.len(), 12);
        assert!(n.iter().all(|&d| b.route(7, d, b.shortest(7, d)).len() == 2));
        assert_eq!(t.links[b.route(0, 1, 2)[0]].name, "h0>s0.0");
    }
}
