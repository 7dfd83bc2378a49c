//! Network namespaces: running code inside one, creating and deleting them
//! with iproute2 (`ip netns`, so they appear under `/run/netns` for every
//! other tool), and running `ip` commands.
//!
//! A thread may enter another network namespace (`setns`) without moving
//! the rest of the process; sockets and TUN devices it opens there stay in
//! that namespace after the thread ends. Every helper here enters a
//! namespace on a fresh thread for that reason.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::process::Command;

/// Runs `f` on a new thread inside network namespace `name` (a name under
/// `/run/netns`, as `ip netns add` creates), and returns its result.
pub fn in_netns<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    let path = format!("/run/netns/{name}");
    let ns = File::open(&path).map_err(|e| format!("network namespace {name:?}: cannot open {path}: {e}"))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: setns on a valid namespace fd affects only this thread.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                let e = std::io::Error::last_os_error();
                let hint = if e.kind() == std::io::ErrorKind::PermissionDenied { " (needs root)" } else { "" };
                return Err(format!("cannot enter network namespace {name:?}: {e}{hint}"));
            }
            Ok(f())
        })
        .join()
        .map_err(|_| format!("a thread inside network namespace {name:?} panicked"))?
    })
}

/// Runs `ip ARGS`; an error carries the command and what `ip` said.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run `ip` (iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Writes a sysctl under `/proc/sys` for the calling thread's namespace.
pub fn sysctl(key: &str, value: &str) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .open(sysctl_path(key))
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| format!("cannot set {key} = {value}: {e}"))
}

/// Reads a sysctl under `/proc/sys` for the calling thread's namespace.
pub fn sysctl_value(key: &str) -> Result<String, String> {
    std::fs::read_to_string(sysctl_path(key))
        .map(|v| v.trim().to_string())
        .map_err(|e| format!("cannot read {key}: {e}"))
}

fn sysctl_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

/// A network namespace that exists while this value lives.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates namespace `name` (removing a stale one of that name first)
    /// with its loopback up.
    pub fn create(name: &str) -> Result<Netns, String> {
        let _ = ip(&["netns", "del", name]);
        ip(&["netns", "add", name])?;
        let ns = Netns { name: name.to_string() };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}
