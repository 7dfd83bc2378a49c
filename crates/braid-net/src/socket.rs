//! UDP sockets with batched I/O through `quinn-udp`: GSO on send (one
//! `sendmsg` carries up to 64 equal-sized datagrams to one destination),
//! GRO and `recvmmsg` on receive, where the kernel has them.
//!
//! A socket is bound to a local address, and optionally to an interface
//! (`SO_BINDTODEVICE`), so its datagrams leave by that interface whatever
//! the routing table prefers: one socket per path on a multihomed client.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

use quinn_udp::{RecvMeta, Transmit, UdpSockRef, UdpSocketState};
use socket2::{Domain, Protocol, Socket as RawSocket, Type};

/// Socket buffers asked for: enough for a few hundred full datagrams at
/// multi-gigabit rates (root may exceed `net.core.[rw]mem_max`).
const BUFFER_BYTES: usize = 8 << 20;

/// Datagrams one `recvmmsg` may return.
pub(crate) const RECV_BATCH: usize = 16;
/// Room per received buffer: a GRO batch of up to 64 KiB.
pub(crate) const RECV_BUF: usize = 1 << 16;

/// Where a local socket is bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalAddr {
    pub addr: SocketAddr,
    /// Interface to bind to with `SO_BINDTODEVICE`, if any.
    pub device: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Socket {
    io: UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
}

impl Socket {
    pub(crate) fn bind(local: &LocalAddr) -> io::Result<Socket> {
        let domain = if local.addr.is_ipv4() { Domain::IPV4 } else { Domain::IPV6 };
        let raw = RawSocket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
        if let Some(dev) = &local.device {
            raw.bind_device(Some(dev.as_bytes()))
                .map_err(|e| io::Error::new(e.kind(), format!("cannot bind to interface {dev}: {e}")))?;
        }
        raw.bind(&local.addr.into())
            .map_err(|e| io::Error::new(e.kind(), format!("cannot bind a UDP socket to {}: {e}", local.addr)))?;
        force_buffers(&raw);
        let io: UdpSocket = raw.into();
        let state = UdpSocketState::new(UdpSockRef::from(&io))?;
        let local = io.local_addr()?;
        Ok(Socket { io, state, local })
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }

    /// Datagrams one send may carry (1 without GSO).
    pub(crate) fn max_segments(&self) -> usize {
        self.state.max_gso_segments()
    }

    /// Sends `contents` to `to`: one datagram, or `segment`-sized ones
    /// (the last may be shorter). `WouldBlock` is the only error returned;
    /// others (an unreachable network while an interface is down) count as
    /// losses, which the protocol recovers from.
    /// `from` picks the source address on a socket bound to a wildcard.
    pub(crate) fn send(
        &self,
        to: SocketAddr,
        from: Option<IpAddr>,
        contents: &[u8],
        segment: Option<usize>,
    ) -> io::Result<()> {
        let transmit = Transmit { destination: to, ecn: None, contents, segment_size: segment, src_ip: from };
        self.state.send(UdpSockRef::from(&self.io), &transmit)
    }

    /// Receives a batch; `WouldBlock` when nothing is waiting.
    pub(crate) fn recv(&self, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> io::Result<usize> {
        self.state.recv(UdpSockRef::from(&self.io), bufs, meta)
    }
}

/// The MTU of the route from `local` (and its interface) to `remote`, as
/// the kernel knows it (the interface's, or less once ICMP has told of a
/// smaller hop): `IP_MTU` / `IPV6_MTU` of a socket connected there. `None`
/// where the kernel cannot say (no route, another OS).
pub(crate) fn route_mtu(local: &LocalAddr, remote: SocketAddr) -> Option<u32> {
    let v4 = remote.is_ipv4();
    let raw = RawSocket::new(if v4 { Domain::IPV4 } else { Domain::IPV6 }, Type::DGRAM, Some(Protocol::UDP)).ok()?;
    if let Some(dev) = &local.device {
        raw.bind_device(Some(dev.as_bytes())).ok()?;
    }
    raw.bind(&SocketAddr::new(local.addr.ip(), 0).into()).ok()?;
    raw.connect(&remote.into()).ok()?;
    let (level, opt) = if v4 { (libc::IPPROTO_IP, libc::IP_MTU) } else { (libc::IPPROTO_IPV6, libc::IPV6_MTU) };
    let mut mtu: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket, an int option, its size and room for it.
    let ok = unsafe { libc::getsockopt(raw.as_raw_fd(), level, opt, (&mut mtu as *mut libc::c_int).cast(), &mut len) };
    (ok == 0 && mtu > 0).then_some(mtu as u32)
}

/// Large socket buffers: `SO_*BUFFORCE` as root, else what the limits allow.
fn force_buffers(raw: &RawSocket) {
    for (force, plain) in [(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF), (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)] {
        let v = BUFFER_BYTES as libc::c_int;
        let set = |opt| {
            // SAFETY: a valid socket, an int option and its size.
            unsafe {
                libc::setsockopt(
                    raw.as_raw_fd(),
                    libc::SOL_SOCKET,
                    opt,
                    (&v as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            }
        };
        if set(force) != 0 {
            set(plain);
        }
    }
}

/// The first address of interface `name` in the family of `want_v4`.
pub(crate) fn interface_addr(name: &str, want_v4: bool) -> io::Result<IpAddr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below; entries are read only
    // while it lives, and each `ifa_addr` is checked for null and family.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut found = None;
        let mut p = list;
        while !p.is_null() {
            let ifa = &*p;
            p = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || std::ffi::CStr::from_ptr(ifa.ifa_name).to_bytes() != name.as_bytes() {
                continue;
            }
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET if want_v4 => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    found = Some(IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes()));
                    break;
                }
                libc::AF_INET6 if !want_v4 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    found = Some(IpAddr::from(sin6.sin6_addr.s6_addr));
                    break;
                }
                _ => {}
            }
        }
        libc::freeifaddrs(list);
        found.ok_or_else(|| {
            let family = if want_v4 { "IPv4" } else { "IPv6" };
            io::Error::new(io::ErrorKind::NotFound, format!("no interface {name} with an {family} address"))
        })
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (`None`:
/// no limit); returns which are readable. Nanosecond resolution
/// (`ppoll`), so a pacing timer of tens of microseconds is kept.
pub(crate) fn wait_readable(fds: &[RawFd], timeout_ns: Option<u64>, ready: &mut Vec<bool>) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `polls` is a valid array of `polls.len()` entries; `tsp` is
    // null or points to a live timespec.
    let n = unsafe { libc::ppoll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, tsp, std::ptr::null()) };
    ready.clear();
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            ready.resize(fds.len(), false);
            return Ok(());
        }
        return Err(e);
    }
    ready.extend(polls.iter().map(|p| p.revents & (libc::POLLIN | libc::POLLERR) != 0));
    Ok(())
}

/// Waits up to `timeout_ms` for `fd` to accept more data.
pub(crate) fn wait_writable(fd: RawFd, timeout_ms: i32) {
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe {
        libc::poll(&mut p, 1, timeout_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loopback's MTU (65,536 on Linux; IPv4 caps a route's at 65,535,
    /// its largest packet) as the route's, IPv4 and IPv6 (where enabled).
    #[test]
    fn the_route_mtu_is_the_kernels() {
        let lo = |ip: IpAddr| LocalAddr { addr: SocketAddr::new(ip, 0), device: None };
        let v4: IpAddr = std::net::Ipv4Addr::LOCALHOST.into();
        assert_eq!(route_mtu(&lo(v4), SocketAddr::new(v4, 9)), Some(65_535));
        let v6: IpAddr = std::net::Ipv6Addr::LOCALHOST.into();
        if let Some(mtu) = route_mtu(&lo(v6), SocketAddr::new(v6, 9)) {
            assert_eq!(mtu, 65_536);
        }
        // Nowhere to go from an address this machine does not have.
        let elsewhere: IpAddr = std::net::Ipv4Addr::new(192, 0, 2, 1).into();
        assert_eq!(route_mtu(&lo(elsewhere), SocketAddr::new(v4, 9)), None);
    }
}
