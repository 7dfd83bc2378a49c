//! `braid send` and `braid recv`: Braid over real networks (crate
//! `braid-net`, docs/net.md), with iperf-like reports: a line per second
//! with each subflow's throughput, RTT, window and retransmissions, and a
//! summary with the goodput and the SHA-256 of what was sent or received.

pub mod recv;
mod report;
pub mod send;

use std::net::{IpAddr, SocketAddr};

use braid_net::{LocalAddr, NetConfig};
use braid_proto::{cc, sched};

/// The port `send` and `recv` use when an address has none.
pub const DEFAULT_PORT: u16 = 4747;

/// `IP`, `IP:PORT` or `[IPv6]:PORT`, for the option named `what`.
fn parse_addr(text: &str, what: &str) -> Result<SocketAddr, String> {
    let t = text.trim();
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = t.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    Err(format!("{what}: cannot read {t:?} as an address: expected IP or IP:PORT, e.g. 198.18.0.2:{DEFAULT_PORT}"))
}

/// A comma-separated list of addresses for `what`.
fn parse_addrs(text: &str, what: &str) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> =
        text.split(',').filter(|s| !s.trim().is_empty()).map(|s| parse_addr(s, what)).collect::<Result<_, _>>()?;
    // A second socket on the same address would fail with "Address already in use".
    if let Some((i, a)) = addrs.iter().enumerate().find(|(i, a)| addrs[..*i].contains(a)) {
        return Err(format!("{what}: {a} is listed twice (entry {})", i + 1));
    }
    Ok(addrs)
}

/// Local addresses or interfaces to send from (`option` names where they
/// were written), each marked as a backup path or not.
fn parse_via(
    list: &[String],
    remote: SocketAddr,
    option: &str,
    backup: bool,
) -> Result<Vec<(LocalAddr, bool)>, String> {
    list.iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
        .map(|s| braid_net::parse_local(s, remote.is_ipv4()).map(|l| (l, backup)).map_err(|e| format!("{option}: {e}")))
        .collect()
}

/// The connection settings both commands share, checked.
fn net_config(cc_name: &str, scheduler: &str) -> Result<NetConfig, String> {
    if cc::by_name(cc_name).is_none() {
        let names: Vec<&str> = cc::ALGORITHMS.iter().map(|(n, _)| *n).collect();
        return Err(format!("--cc: unknown congestion controller {cc_name:?}; one of {}", names.join(", ")));
    }
    if sched::by_name(scheduler).is_none() {
        let names: Vec<&str> = sched::ALGORITHMS.iter().map(|(n, _)| *n).collect();
        return Err(format!("--scheduler: unknown scheduler {scheduler:?}; one of {}", names.join(", ")));
    }
    Ok(NetConfig { cc: cc_name.into(), scheduler: scheduler.into(), ..NetConfig::default() })
}

/// Hex of a digest.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_take_a_default_port_and_refuse_garbage() {
        assert_eq!(parse_addr("10.0.0.1", "--to").unwrap(), "10.0.0.1:4747".parse().unwrap());
        assert_eq!(parse_addr("[::1]:9", "--to").unwrap(), "[::1]:9".parse().unwrap());
        let e = parse_addr("10.0.0.300", "--to").unwrap_err();
        assert!(e.contains("--to") && e.contains("10.0.0.300"), "{e}");
        assert_eq!(parse_addrs("10.0.0.1,10.0.0.2:5", "--listen").unwrap().len(), 2);
        let e = parse_addrs("10.0.0.1,10.0.0.2,10.0.0.1:4747", "--listen").unwrap_err();
        assert!(e.contains("--listen: 10.0.0.1:4747 is listed twice (entry 3)"), "{e}");
    }

    #[test]
    fn unknown_algorithms_are_named() {
        assert!(net_config("nope", "minrtt").unwrap_err().contains("--cc"));
        assert!(net_config("lia", "nope").unwrap_err().contains("--scheduler"));
        assert!(net_config("lia", "blest").is_ok());
    }
}
