//! The client's path manager: which subflows to open and close, as
//! commands a driver carries out (sans-IO, like the connection). It follows
//! the Linux MPTCP path managers:
//!
//! - `FullMesh`: a subflow from every local address to every remote one
//!   (the server's, plus those it advertises), as `mptcp_fullmesh.c`;
//! - `NDiffPorts(n)`: `n` subflows over the first address pair, told apart
//!   only by their source ports, so ECMP hashing spreads them over the
//!   equal-cost paths of a data centre (`mptcp_ndiffports.c`);
//! - `Explicit`: exactly the (local, remote, backup) triples given.
//!
//! Local addresses marked backup give backup subflows (used only when no
//! regular one works). A withdrawn remote address (REMOVE_ADDR) or a local
//! one that went away closes the subflows using it.
//!
//! The driver calls [`PathManager::poll_command`] and, for each `Open`,
//! creates the subflow (`Connection::add_subflow`) and reports its id with
//! [`PathManager::opened`]; it feeds the connection's address events to
//! [`PathManager::on_event`]. The first `Open` is the subflow that opens
//! the connection; the connection itself holds the others back until it
//! is established.

use std::collections::VecDeque;
use std::net::SocketAddr;

use crate::connection::Event;
use crate::packet::SubflowId;

/// How subflows are chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathPolicy {
    FullMesh,
    NDiffPorts(u8),
    Explicit(Vec<(SocketAddr, SocketAddr, bool)>),
}

/// What the driver should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathCommand {
    /// Open a subflow from `local` to `remote`; `port` tells apart subflows
    /// over the same address pair (a different source port each).
    Open {
        local: SocketAddr,
        remote: SocketAddr,
        backup: bool,
        port: u8,
    },
    Close {
        subflow: SubflowId,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Planned {
    local: SocketAddr,
    /// The remote address's id: 0 for the one connected to.
    remote_id: u8,
    remote: SocketAddr,
    backup: bool,
    port: u8,
    /// The subflow carrying it, once the driver opened one.
    subflow: Option<SubflowId>,
}

#[derive(Clone, Debug)]
pub struct PathManager {
    policy: PathPolicy,
    locals: Vec<(SocketAddr, bool)>,
    remotes: Vec<(u8, SocketAddr)>,
    planned: Vec<Planned>,
    /// Index in `planned` of each `Open` handed out and not yet confirmed.
    pending: VecDeque<usize>,
    commands: VecDeque<PathCommand>,
}

impl PathManager {
    /// For a connection to `remote` from `locals` (address, backup); the
    /// first local address opens the connection.
    pub fn new(policy: PathPolicy, locals: &[(SocketAddr, bool)], remote: SocketAddr) -> Self {
        let mut pm = PathManager {
            policy,
            locals: locals.to_vec(),
            remotes: vec![(0, remote)],
            planned: Vec::new(),
            pending: VecDeque::new(),
            commands: VecDeque::new(),
        };
        pm.plan();
        pm
    }

    /// The next thing to do, if any.
    pub fn poll_command(&mut self) -> Option<PathCommand> {
        self.commands.pop_front()
    }

    /// The driver opened `subflow` for the oldest `Open` it was given.
    pub fn opened(&mut self, subflow: SubflowId) {
        if let Some(i) = self.pending.pop_front() {
            self.planned[i].subflow = Some(subflow);
        }
    }

    /// The connection reported `event`: advertised addresses may add
    /// subflows, withdrawn ones close theirs.
    pub fn on_event(&mut self, event: &Event) {
        match *event {
            Event::AddressAdvertised { id, addr } if !self.remotes.iter().any(|r| r.0 == id) => {
                self.remotes.push((id, addr));
                self.plan();
            }
            Event::AddressRemoved { id } => {
                self.remotes.retain(|r| r.0 != id);
                self.close_where(|p| p.remote_id == id);
            }
            _ => {}
        }
    }

    /// A local address came up (an interface): subflows from it open.
    pub fn add_local(&mut self, addr: SocketAddr, backup: bool) {
        if !self.locals.iter().any(|l| l.0 == addr) {
            self.locals.push((addr, backup));
            self.plan();
        }
    }

    /// A local address went away: its subflows close.
    pub fn remove_local(&mut self, addr: SocketAddr) {
        self.locals.retain(|l| l.0 != addr);
        self.close_where(|p| p.local == addr);
    }

    fn close_where(&mut self, f: impl Fn(&Planned) -> bool) {
        for p in self.planned.iter_mut().filter(|p| f(p)) {
            if let Some(subflow) = p.subflow.take() {
                self.commands.push_back(PathCommand::Close { subflow });
            }
        }
        let pending: Vec<usize> = self.pending.iter().copied().filter(|&i| !f(&self.planned[i])).collect();
        self.pending = pending.into();
        self.planned.retain(|p| !f(p) || p.subflow.is_some());
    }

    /// Adds every subflow the policy wants that is not planned yet.
    fn plan(&mut self) {
        let wanted: Vec<Planned> = match &self.policy {
            PathPolicy::FullMesh => self
                .locals
                .iter()
                .flat_map(|&(local, backup)| {
                    self.remotes.iter().filter(move |r| r.1.is_ipv4() == local.is_ipv4()).map(
                        move |&(remote_id, remote)| Planned {
                            local,
                            remote_id,
                            remote,
                            backup,
                            port: 0,
                            subflow: None,
                        },
                    )
                })
                .collect(),
            PathPolicy::NDiffPorts(n) => match (self.locals.first(), self.remotes.first()) {
                (Some(&(local, backup)), Some(&(remote_id, remote))) => (0..(*n).max(1))
                    .map(|port| Planned { local, remote_id, remote, backup, port, subflow: None })
                    .collect(),
                _ => Vec::new(),
            },
            PathPolicy::Explicit(list) => list
                .iter()
                .map(|&(local, remote, backup)| {
                    let remote_id = self.remotes.iter().find(|r| r.1 == remote).map_or(0, |r| r.0);
                    Planned { local, remote_id, remote, backup, port: 0, subflow: None }
                })
                .collect(),
        };
        for w in wanted {
            let known = self.planned.iter().any(|p| (p.local, p.remote, p.port) == (w.local, w.remote, w.port));
            if !known {
                self.pending.push_back(self.planned.len());
                self.commands.push_back(PathCommand::Open {
                    local: w.local,
                    remote: w.remote,
                    backup: w.backup,
                    port: w.port,
                });
                self.planned.push(w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// The commands, opening subflows 0, 1, 2, ... in the order asked.
    fn drain(pm: &mut PathManager) -> Vec<PathCommand> {
        let mut out = Vec::new();
        while let Some(c) = pm.poll_command() {
            if matches!(c, PathCommand::Open { .. }) {
                let next = pm.planned.iter().filter_map(|p| p.subflow).map(|s| s.0 + 1).max().unwrap_or(0);
                pm.opened(SubflowId(next));
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn fullmesh_opens_every_pair_and_follows_advertisements() {
        let (wifi, lte, server) = (a("10.0.0.2:0"), a("10.1.0.2:0"), a("192.0.2.1:443"));
        let mut pm = PathManager::new(PathPolicy::FullMesh, &[(wifi, false), (lte, true)], server);
        let open = |local, remote, backup| PathCommand::Open { local, remote, backup, port: 0 };
        assert_eq!(drain(&mut pm), [open(wifi, server, false), open(lte, server, true)]);
        let other = a("192.0.2.9:443");
        pm.on_event(&Event::AddressAdvertised { id: 1, addr: other });
        pm.on_event(&Event::AddressAdvertised { id: 1, addr: other });
        assert_eq!(drain(&mut pm), [open(wifi, other, false), open(lte, other, true)], "once per address");
        pm.on_event(&Event::AddressRemoved { id: 1 });
        assert_eq!(
            drain(&mut pm),
            [PathCommand::Close { subflow: SubflowId(2) }, PathCommand::Close { subflow: SubflowId(3) }]
        );
        pm.remove_local(lte);
        assert_eq!(drain(&mut pm), [PathCommand::Close { subflow: SubflowId(1) }]);
        // An IPv6 address is not paired with IPv4 ones.
        pm.on_event(&Event::AddressAdvertised { id: 2, addr: a("[2001:db8::1]:443") });
        assert_eq!(drain(&mut pm), []);
    }

    #[test]
    fn ndiffports_opens_n_subflows_over_one_pair() {
        let (local, server) = (a("10.0.0.2:0"), a("192.0.2.1:443"));
        let mut pm = PathManager::new(PathPolicy::NDiffPorts(4), &[(local, false)], server);
        let ports: Vec<u8> = drain(&mut pm)
            .into_iter()
            .map(|c| match c {
                PathCommand::Open { local: l, remote, port, .. } if l == local && remote == server => port,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ports, [0, 1, 2, 3]);
        pm.on_event(&Event::AddressAdvertised { id: 1, addr: a("192.0.2.9:443") });
        assert_eq!(drain(&mut pm), [], "ndiffports stays on the first pair");
    }

    #[test]
    fn explicit_opens_exactly_what_it_is_given() {
        let list = vec![(a("10.0.0.2:0"), a("192.0.2.1:443"), false), (a("10.0.0.3:0"), a("192.0.2.2:443"), true)];
        let mut pm = PathManager::new(PathPolicy::Explicit(list.clone()), &[], a("192.0.2.1:443"));
        let opened: Vec<_> = drain(&mut pm)
            .into_iter()
            .map(|c| match c {
                PathCommand::Open { local, remote, backup, .. } => (local, remote, backup),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(opened, list);
    }
}
