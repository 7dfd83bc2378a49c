//! TUN devices with virtio-net headers and TCP segmentation offload.
//!
//! Without offloads a forwarder pays two system calls per 1500-byte packet
//! and tops out near 3 Gbit/s on two cores. With `IFF_VNET_HDR` and
//! `TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_USO4 | TUN_F_USO6)` the
//! kernel hands over and accepts TCP and UDP (`UDP_SEGMENT`) super-packets
//! of up to 64 KiB with their checksum left to the device, so one read and
//! one write move up to 44 segments. UDP segmentation offload needs Linux
//! 6.2 (and both USO flags); older kernels get TCP's only. IPv6 TCP is
//! segmented by the kernel before the device; an IPv6 UDP super-packet is
//! refused as malformed (the emulator's namespaces have IPv6 off).
//!
//! A device is created inside a given network namespace (on a thread that
//! entered it) and keeps working for this process from any namespace.

use std::fs::OpenOptions;
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::netns;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_USO4: libc::c_uint = 0x20;
const TUN_F_USO6: libc::c_uint = 0x40;

/// `struct ifreq` with the flags member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl IfReq {
    fn new(name: &str) -> io::Result<IfReq> {
        let valid = !name.is_empty()
            && name.len() < libc::IFNAMSIZ
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !valid {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name {name:?}")));
        }
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: 0, _pad: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        Ok(req)
    }
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// An open TUN device (non-blocking).
#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

impl Tun {
    /// Creates TUN device `name` in network namespace `netns` and sets it
    /// up (the namespace prepared first: `plan::Restore::prepare`).
    pub fn create(name: &str, netns: &str) -> Result<Tun, String> {
        let fail = |what: &str, e: io::Error| format!("TUN device {name:?} in namespace {netns:?}: {what}: {e}");
        netns::in_netns(netns, || {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open("/dev/net/tun")
                .map_err(|e| fail("cannot open /dev/net/tun", e))?;
            let fd = OwnedFd::from(file);
            let mut req = IfReq::new(name).map_err(|e| fail("name", e))?;
            req.flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
            // SAFETY: ioctls on an open TUN fd with a properly sized ifreq / int.
            unsafe {
                check(libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req)).map_err(|e| fail("TUNSETIFF", e))?;
                let tcp = TUN_F_CSUM | TUN_F_TSO4;
                if libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, tcp | TUN_F_USO4 | TUN_F_USO6) < 0 {
                    check(libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, tcp)).map_err(|e| fail("TUNSETOFFLOAD", e))?;
                }
            }
            set_up(name).map_err(|e| fail("cannot set it up", e))?;
            Ok(Tun { fd, name: name.to_string() })
        })?
    }

    /// A second handle on the same device (one thread reads, another writes).
    pub fn try_clone(&self) -> Result<Tun, String> {
        let fd = self.fd.try_clone().map_err(|e| format!("TUN device {:?}: cannot duplicate: {e}", self.name))?;
        Ok(Tun { fd, name: self.name.clone() })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one packet (vnet header first); `WouldBlock` when none waits.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Writes one packet gathered from `parts`.
    pub fn write(&self, parts: &[IoSlice<'_>]) -> io::Result<usize> {
        // SAFETY: IoSlice is ABI-compatible with iovec.
        let n = unsafe { libc::writev(self.fd(), parts.as_ptr().cast(), parts.len() as libc::c_int) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// Sets interface `name` of the calling thread's namespace up.
fn set_up(name: &str) -> io::Result<()> {
    // SAFETY: plain socket and SIOC[GS]IFFLAGS ioctls with a valid ifreq.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(sock)?;
        let sock = OwnedFd::from_raw_fd(sock);
        let mut req = IfReq::new(name)?;
        check(libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req))?;
        req.flags |= libc::IFF_UP as libc::c_short;
        check(libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &mut req))
    }
}
