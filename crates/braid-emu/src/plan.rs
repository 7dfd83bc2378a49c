//! The emulated network's names and addresses, and the routing that makes
//! a client with one device per path work.
//!
//! Addresses come from 198.18.0.0/15, the range set aside for network
//! benchmarks (RFC 2544), and exist only inside the two namespaces:
//!
//! | what | device | address |
//! | --- | --- | --- |
//! | client, path `i` (0-based) | `emu{i}` in the client namespace | `198.18.{i+1}.2/24` |
//! | server | `emu` in the server namespace | `198.18.0.2/24` |
//!
//! The client sends from path `i`'s address through `emu{i}` (a policy
//! rule per address, table `100 + i`); its main table reaches the server
//! through path 0. The server reaches every client address through `emu`.
//! `scripts/testbed.sh` uses the same addresses when it shapes with `tbf`.
//!
//! The namespaces may be the user's own: what the emulator changes in them
//! beyond its devices (which take their addresses and routes with them)
//! is put back when it stops ([`Restore`]).

use crate::netns::{in_netns, ip, sysctl, sysctl_value};

/// Most paths one client may have.
pub const MAX_PATHS: usize = 200;
pub const SERVER_DEVICE: &str = "emu";
pub const SERVER_ADDR: [u8; 4] = [198, 18, 0, 2];

pub fn client_device(path: usize) -> String {
    format!("emu{path}")
}

pub fn client_addr(path: usize) -> [u8; 4] {
    [198, 18, path as u8 + 1, 2]
}

pub fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// Packets a device holds for the emulator to read (TUN's default is 500):
/// room for a burst of small packets while the emulator is writing.
const DEVICE_QUEUE: &str = "10000";

/// Sysctls a namespace with emulator devices needs: reverse-path filtering
/// off (a client with one address per device receives replies on the
/// device its address belongs to, not where its main route points), and
/// IPv6 off on new devices, so no neighbour discovery or router
/// solicitation crosses the emulated links (a kernel without IPv6 has no
/// such key: nothing to disable).
const SYSCTLS: [(&str, &str, bool); 3] = [
    ("net.ipv4.conf.all.rp_filter", "0", true),
    ("net.ipv4.conf.default.rp_filter", "0", true),
    ("net.ipv6.conf.default.disable_ipv6", "1", false),
];

/// What the emulator changed in its namespaces beyond its devices, put
/// back when dropped (also when it fails to start): sysctls, and the
/// client's routing rules, which outlive the devices.
#[derive(Debug, Default)]
pub struct Restore {
    /// Namespace, key and the value it had.
    sysctls: Vec<(String, &'static str, String)>,
    /// `ip` arguments that delete a rule added.
    rules: Vec<Vec<String>>,
}

impl Restore {
    /// Sets [`SYSCTLS`] in namespace `ns`, remembering what they were.
    pub fn prepare(&mut self, ns: &str) -> Result<(), String> {
        for (key, value, required) in SYSCTLS {
            let set = in_netns(ns, || {
                let old = sysctl_value(key)?;
                sysctl(key, value).map(|()| old)
            })?;
            match set {
                Ok(old) => self.sysctls.push((ns.to_string(), key, old)),
                Err(e) if required => return Err(format!("namespace {ns:?}: {e}")),
                Err(_) => {}
            }
        }
        Ok(())
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        for rule in &self.rules {
            let _ = ip(&rule.iter().map(String::as_str).collect::<Vec<_>>());
        }
        for (ns, key, old) in self.sysctls.iter().rev() {
            let _ = in_netns(ns, || sysctl(key, old));
        }
    }
}

/// Addresses and routes for devices that already exist and are up; the
/// rules it adds are deleted when `restore` is dropped.
pub fn configure(client_ns: &str, server_ns: &str, paths: usize, restore: &mut Restore) -> Result<(), String> {
    let server_net = "198.18.0.0/24";
    ip(&["-n", server_ns, "link", "set", SERVER_DEVICE, "txqueuelen", DEVICE_QUEUE])?;
    for i in 0..paths {
        let (dev, addr, table) = (client_device(i), dotted(client_addr(i)), (100 + i).to_string());
        ip(&["-n", client_ns, "link", "set", &dev, "txqueuelen", DEVICE_QUEUE])?;
        ip(&["-n", client_ns, "addr", "add", &format!("{addr}/24"), "dev", &dev])?;
        ip(&["-n", client_ns, "route", "add", server_net, "dev", &dev, "src", &addr, "table", &table])?;
        // Rules outlive devices: one left by an earlier run is replaced.
        let rule = ["-n", client_ns, "rule", "del", "from", &addr, "table", &table, "priority", &table];
        let _ = ip(&rule);
        ip(&[&rule[..3], &["add"], &rule[4..]].concat())?;
        restore.rules.push(rule.iter().map(|a| a.to_string()).collect());
    }
    ip(&["-n", client_ns, "route", "add", server_net, "dev", &client_device(0), "src", &dotted(client_addr(0))])?;
    ip(&["-n", server_ns, "addr", "add", &format!("{}/24", dotted(SERVER_ADDR)), "dev", SERVER_DEVICE])?;
    ip(&["-n", server_ns, "route", "add", "198.18.0.0/16", "dev", SERVER_DEVICE])
}

/// One line per path for people and scripts.
pub fn describe(paths: &[String]) -> String {
    let mut s = format!("server  {SERVER_DEVICE} {}\n", dotted(SERVER_ADDR));
    for (i, p) in paths.iter().enumerate() {
        s += &format!("path {p}  {} {}\n", client_device(i), dotted(client_addr(i)));
    }
    s
}
