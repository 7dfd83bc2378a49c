//! Braid over real networks: the sans-IO core ([`braid_proto`]) driven
//! over UDP sockets with the wall clock.
//!
//! - [`Node`]: the event loop. One endpoint of the core, the sockets it
//!   listens on and one per client subflow (bound to a local address or an
//!   interface), the address-to-subflow map, timers from the connections'
//!   `poll_timeout`, batched I/O with GSO and GRO through `quinn-udp`, and
//!   each client connection's path manager carried out. A server node
//!   accepts any number of connections on one port.
//! - [`Stream`]: a blocking client connection with `std::io::Read` and
//!   `std::io::Write`.
//!
//! `examples/transfer.rs` shows both over loopback; `docs/net.md` explains
//! what is and is not supported.

mod batch;
pub mod clock;
mod config;
mod node;
mod socket;
mod stream;

pub use batch::SendStats;
pub use config::{mss_for_mtu, NetConfig, DATAGRAM_OVERHEAD, MSS, MSS_FLOOR};
pub use node::{NetEvent, Node, NodeStats};
pub use socket::LocalAddr;
pub use stream::Stream;

pub use braid_proto::endpoint::ConnectionHandle;
pub use braid_proto::path_manager::PathPolicy;

/// A local address or interface to send from, as a user writes it:
/// `198.18.1.2`, `198.18.1.2:4000` or `eth1` (its first address, and the
/// socket bound to the interface).
pub fn parse_local(text: &str, remote_is_v4: bool) -> Result<LocalAddr, String> {
    use std::net::{IpAddr, SocketAddr};
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(LocalAddr { addr, device: None });
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(LocalAddr { addr: SocketAddr::new(ip, 0), device: None });
    }
    let valid_name = !text.is_empty() && text.len() < 16 && !text.contains(['/', ' ', ':']);
    if !valid_name {
        return Err(format!("{text:?} is neither an IP address nor an interface name"));
    }
    let ip = socket::interface_addr(text, remote_is_v4).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(LocalAddr { addr: SocketAddr::new(ip, 0), device: Some(text.to_string()) })
}
