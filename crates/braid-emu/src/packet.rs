//! Packets as a TUN device with `IFF_VNET_HDR` hands them over: a 10-byte
//! `virtio_net_hdr`, then an IP packet that may be a segmentation offload
//! super-packet of many segments: TCP (TSO) or UDP (USO, `UDP_SEGMENT`,
//! which QUIC-like transports such as Braid's own use).
//!
//! The emulator treats every packet as a run of segments, each the size it
//! will have on the wire once the kernel segments it (IP and transport
//! headers and at most `gso_size` payload bytes), so rate, queue limits and
//! loss apply per segment exactly as if the sender had not used offloads. When only
//! some segments of a super-packet go on together, [`segment_headers`]
//! rebuilds the headers for that run (lengths, TCP sequence number, IP ID
//! and checksums, TCP flags) and hands the run back to the kernel as a smaller
//! super-packet, so the payload is never copied.
//!
//! Only checked-length arithmetic on bytes the kernel wrote is done here;
//! a packet whose headers do not add up is refused with a [`PacketError`].

/// Bytes of the `virtio_net_hdr` before every packet (TUN's default size).
pub const VNET_HDR_LEN: usize = 10;
/// Largest packet a TUN read returns: 64 KiB of IP packet plus the header.
pub const MAX_PACKET: usize = VNET_HDR_LEN + 65_535;
/// Room for rebuilt headers: vnet header + IPv4 (max 60) + TCP (max 60).
pub const MAX_HEADERS: usize = VNET_HDR_LEN + 120;

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_UDP_L4: u8 = 5;
const GSO_ECN: u8 = 0x80;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// Why a packet could not be understood.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketError {
    /// Shorter than the headers it announces.
    Truncated,
    /// Neither IPv4 nor IPv6.
    UnknownVersion,
    /// A segmentation offload the emulator did not ask for, or inconsistent
    /// segmentation fields.
    BadGso,
}

/// The destination address of a packet, for routing the return direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    V4([u8; 4]),
    V6([u8; 16]),
}

/// Transport protocol of a super-packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
}

/// What the emulator needs to know of one packet read from a TUN device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Bytes of the IP packet (without the vnet header).
    pub ip_len: u32,
    /// IP + TCP/UDP header bytes of a super-packet (0 for a single packet).
    pub hdr_len: u16,
    /// Payload bytes per segment of a super-packet (0 for a single packet).
    pub gso_size: u16,
    /// Segments this packet becomes on the wire (1 for a single packet).
    pub segments: u16,
    pub transport: Transport,
    pub dst: Addr,
}

impl Meta {
    /// Parses the vnet header and the IP/TCP headers of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Meta, PacketError> {
        let ip = buf.get(VNET_HDR_LEN..).filter(|ip| !ip.is_empty()).ok_or(PacketError::Truncated)?;
        let gso_type = buf[1] & !GSO_ECN;
        let gso_size = u16::from_le_bytes([buf[4], buf[5]]);
        let (ip_len, dst) = match ip[0] >> 4 {
            4 => {
                let hdr = ip.get(..20).ok_or(PacketError::Truncated)?;
                let total = u32::from(u16::from_be_bytes([hdr[2], hdr[3]]));
                (total, Addr::V4(hdr[16..20].try_into().expect("4 bytes")))
            }
            6 => {
                let hdr = ip.get(..40).ok_or(PacketError::Truncated)?;
                let total = 40 + u32::from(u16::from_be_bytes([hdr[4], hdr[5]]));
                (total, Addr::V6(hdr[24..40].try_into().expect("16 bytes")))
            }
            _ => return Err(PacketError::UnknownVersion),
        };
        if ip_len as usize != ip.len() {
            return Err(PacketError::Truncated);
        }
        if gso_type == GSO_NONE {
            let transport = Transport::Tcp;
            return Ok(Meta { ip_len, hdr_len: 0, gso_size: 0, segments: 1, transport, dst });
        }
        // Segmentation is split for IPv4 only; IPv6 is off in the testbed.
        let transport = match (gso_type, ip[0] >> 4, ip[9]) {
            (GSO_TCPV4, 4, PROTO_TCP) => Transport::Tcp,
            (GSO_UDP_L4, 4, PROTO_UDP) => Transport::Udp,
            _ => return Err(PacketError::BadGso),
        };
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        // A TCP header is at least 20 bytes: cutting segments rewrites its
        // flags (byte 13) and checksum.
        let (l4, least) = match transport {
            Transport::Tcp => (usize::from(*ip.get(ihl + 12).ok_or(PacketError::Truncated)? >> 4) * 4, 20),
            Transport::Udp => (8, 8),
        };
        let hdr_len = ihl + l4;
        if ihl < 20 || l4 < least || hdr_len >= ip.len() || gso_size == 0 {
            return Err(PacketError::BadGso);
        }
        let payload = ip.len() - hdr_len;
        let segments = payload.div_ceil(usize::from(gso_size));
        if segments > usize::from(u16::MAX) {
            return Err(PacketError::BadGso);
        }
        Ok(Meta { ip_len, hdr_len: hdr_len as u16, gso_size, segments: segments as u16, transport, dst })
    }

    /// Payload byte range of segments `[first, first + count)`.
    fn payload_range(&self, first: u16, count: u16) -> (usize, usize) {
        let payload = self.ip_len as usize - usize::from(self.hdr_len);
        let g = usize::from(self.gso_size);
        let start = usize::from(first) * g;
        (start, (start + usize::from(count) * g).min(payload))
    }

    /// Wire bytes (IP packet length) of segment `k`.
    pub fn segment_bytes(&self, k: u16) -> u32 {
        if self.segments == 1 {
            return self.ip_len;
        }
        let (start, end) = self.payload_range(k, 1);
        u32::from(self.hdr_len) + (end - start) as u32
    }
}

/// One's-complement sum of big-endian 16-bit words (odd byte padded).
fn sum16(bytes: &[u8], mut acc: u32) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        acc += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Internet checksum of `bytes` (the value a header carries).
pub fn checksum(bytes: &[u8]) -> u16 {
    !fold(sum16(bytes, 0))
}

/// Writes the headers of segments `[first, first + count)` of the
/// super-packet `buf` (vnet header included) into `out`, and returns how
/// many header bytes it wrote and the payload byte range the run carries
/// (relative to the end of the packet's headers). The result, followed by
/// that payload, is a valid packet for a TUN write: one segment as a plain
/// packet, several as a smaller super-packet; the TCP or UDP checksum is
/// left to the kernel (`NEEDS_CSUM` with the pseudo-header sum in place),
/// as the sender's kernel left it to its device.
pub fn segment_headers(
    buf: &[u8],
    meta: &Meta,
    first: u16,
    count: u16,
    out: &mut [u8; MAX_HEADERS],
) -> (usize, (usize, usize)) {
    debug_assert!(meta.segments > 1 && count >= 1 && first + count <= meta.segments);
    let h = usize::from(meta.hdr_len);
    let n = VNET_HDR_LEN + h;
    out[..n].copy_from_slice(&buf[..n]);
    let (start, end) = meta.payload_range(first, count);
    let ip_len = (h + end - start) as u16;
    let ihl = usize::from(buf[VNET_HDR_LEN] & 0x0f) * 4;
    let (proto, csum_offset) = match meta.transport {
        Transport::Tcp => (PROTO_TCP, 16),
        Transport::Udp => (PROTO_UDP, 6),
    };
    let l4_len = (h - ihl + end - start) as u16;
    {
        let (vnet, ip) = out.split_at_mut(VNET_HDR_LEN);
        // virtio_net_hdr: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
        vnet[0] = F_NEEDS_CSUM;
        if count == 1 {
            vnet[1] = GSO_NONE;
            vnet[4..6].copy_from_slice(&0u16.to_le_bytes());
        }
        vnet[2..4].copy_from_slice(&(h as u16).to_le_bytes());
        vnet[6..8].copy_from_slice(&(ihl as u16).to_le_bytes());
        vnet[8..10].copy_from_slice(&(csum_offset as u16).to_le_bytes());
        // IPv4: total length, ID (the kernel numbers segments consecutively), checksum.
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(first);
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[10..12].copy_from_slice(&[0, 0]);
        let c = checksum(&ip[..ihl]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let l4 = &mut ip[ihl..h];
        match meta.transport {
            // TCP: sequence number, flags only where the kernel's segmentation
            // keeps them (CWR on the first segment, FIN and PSH on the last).
            Transport::Tcp => {
                let seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]).wrapping_add(start as u32);
                l4[4..8].copy_from_slice(&seq.to_be_bytes());
                if first > 0 {
                    l4[13] &= !TCP_CWR;
                }
                if first + count < meta.segments {
                    l4[13] &= !(TCP_FIN | TCP_PSH);
                }
            }
            // UDP: the length of the run, as the kernel writes it for a
            // super-packet (and as GRO does when it builds one).
            Transport::Udp => l4[4..6].copy_from_slice(&l4_len.to_be_bytes()),
        }
    }
    // Pseudo-header sum (addresses, protocol, length), not complemented.
    let ip = &out[VNET_HDR_LEN..n];
    let pseudo = fold(sum16(&ip[12..20], u32::from(proto) + u32::from(l4_len)));
    let at = VNET_HDR_LEN + ihl + csum_offset;
    out[at..at + 2].copy_from_slice(&pseudo.to_be_bytes());
    (n, (start, end))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A TCP/IPv4 super-packet as the kernel hands it to a TUN device with
    /// TSO: `payload` bytes cut into `mss` segments, flags `flags`.
    pub(crate) fn super_packet(payload: usize, mss: u16, flags: u8) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut b = vec![0u8; VNET_HDR_LEN + total];
        b[0] = F_NEEDS_CSUM;
        b[1] = if payload > usize::from(mss) { GSO_TCPV4 } else { GSO_NONE };
        b[2..4].copy_from_slice(&52u16.to_le_bytes());
        b[4..6].copy_from_slice(&mss.to_le_bytes());
        b[6..8].copy_from_slice(&20u16.to_le_bytes());
        b[8..10].copy_from_slice(&16u16.to_le_bytes());
        let ip = &mut b[VNET_HDR_LEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&0xfff0u16.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = PROTO_TCP;
        ip[12..16].copy_from_slice(&[198, 18, 1, 2]);
        ip[16..20].copy_from_slice(&[198, 18, 0, 2]);
        let c = checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let tcp = &mut ip[20..52];
        tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&5201u16.to_be_bytes());
        tcp[4..8].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
        tcp[12] = 8 << 4;
        tcp[13] = flags | 0x10; // ACK
        for (i, byte) in ip[52..].iter_mut().enumerate() {
            *byte = (i % 251) as u8;
        }
        b
    }

    /// A UDP/IPv4 super-packet as `UDP_SEGMENT` hands it to a device with USO.
    fn udp_super_packet(payload: usize, gso: u16) -> Vec<u8> {
        let total = 28 + payload;
        let mut b = vec![0u8; VNET_HDR_LEN + total];
        b[0] = F_NEEDS_CSUM;
        b[1] = GSO_UDP_L4;
        b[4..6].copy_from_slice(&gso.to_le_bytes());
        let ip = &mut b[VNET_HDR_LEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[9] = PROTO_UDP;
        ip[12..16].copy_from_slice(&[198, 18, 1, 2]);
        ip[16..20].copy_from_slice(&[198, 18, 0, 2]);
        ip[24..26].copy_from_slice(&((total - 20) as u16).to_be_bytes());
        for (i, byte) in ip[28..].iter_mut().enumerate() {
            *byte = (i % 13) as u8;
        }
        b
    }

    /// Checks that the partial checksum the run carries, completed as the
    /// kernel completes it, equals the checksum computed from scratch over
    /// the transport header and payload.
    fn assert_checksum_completes(ip: &[u8], proto: u8, offset: usize) {
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let mut l4 = ip[ihl..].to_vec();
        let partial = u16::from_be_bytes([l4[offset], l4[offset + 1]]);
        l4[offset..offset + 2].copy_from_slice(&[0, 0]);
        let completed = !fold(sum16(&l4, u32::from(partial)));
        let scratch = !fold(sum16(&l4, sum16(&ip[12..20], u32::from(proto) + l4.len() as u32)));
        assert_eq!(completed, scratch);
    }

    #[test]
    fn parses_segments_and_their_wire_sizes() {
        let b = super_packet(3 * 1448 + 100, 1448, 0);
        let m = Meta::parse(&b).unwrap();
        assert_eq!((m.segments, m.hdr_len, m.gso_size), (4, 52, 1448));
        assert_eq!(m.dst, Addr::V4([198, 18, 0, 2]));
        assert_eq!((0..4).map(|k| m.segment_bytes(k)).collect::<Vec<_>>(), [1500, 1500, 1500, 152]);
        let single = super_packet(500, 1448, 0);
        let m = Meta::parse(&single).unwrap();
        assert_eq!((m.segments, m.segment_bytes(0)), (1, 552));
    }

    #[test]
    fn refuses_truncated_and_foreign_packets() {
        let mut b = super_packet(3000, 1448, 0);
        assert_eq!(Meta::parse(&b[..VNET_HDR_LEN + 10]), Err(PacketError::Truncated));
        assert_eq!(Meta::parse(&b[..b.len() - 1]), Err(PacketError::Truncated));
        // A TCP header of 8 bytes (data offset 2): cutting it into segments
        // would write its flags past its end.
        let mut short = b.clone();
        short[VNET_HDR_LEN + 32] = 2 << 4;
        assert_eq!(Meta::parse(&short), Err(PacketError::BadGso));
        short[VNET_HDR_LEN + 32] = 5 << 4;
        assert!(Meta::parse(&short).is_ok(), "20 bytes, the least TCP header");
        b[4..6].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(Meta::parse(&b), Err(PacketError::BadGso));
        b[VNET_HDR_LEN] = 0x55;
        assert_eq!(Meta::parse(&b), Err(PacketError::UnknownVersion));
        assert_eq!(Meta::parse(&[0u8; 4]), Err(PacketError::Truncated));
    }

    /// Splitting a super-packet anywhere gives segments whose headers and
    /// payload are what the kernel's own segmentation would produce.
    #[test]
    fn rebuilt_runs_are_valid_segments() {
        let mss = 1000u16;
        let b = super_packet(4 * 1000 + 300, mss, TCP_PSH | TCP_FIN | TCP_CWR);
        let m = Meta::parse(&b).unwrap();
        assert_eq!(m.segments, 5);
        let payload = &b[VNET_HDR_LEN + 52..];
        let mut out = [0u8; MAX_HEADERS];
        for (first, count) in [(0, 1), (1, 2), (4, 1), (2, 3), (0, 4)] {
            let (n, (start, end)) = segment_headers(&b, &m, first, count, &mut out);
            let mut pkt = out[..n].to_vec();
            pkt.extend_from_slice(&payload[start..end]);
            let meta = Meta::parse(&pkt).unwrap();
            assert_eq!(meta.segments, count, "run {first}+{count}");
            assert_eq!(meta.ip_len as usize, pkt.len() - VNET_HDR_LEN);
            let ip = &pkt[VNET_HDR_LEN..];
            assert_eq!(checksum(&ip[..20]), 0, "IP header checksum");
            assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 0xfff0u16.wrapping_add(first));
            let seq = u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]);
            assert_eq!(seq, 0xffff_fff0u32.wrapping_add(u32::from(first) * 1000));
            assert_eq!(start, usize::from(first) * 1000);
            let flags = ip[33];
            assert_eq!(flags & TCP_CWR != 0, first == 0);
            assert_eq!(flags & (TCP_FIN | TCP_PSH) != 0, first + count == 5);
            assert_checksum_completes(ip, PROTO_TCP, 16);
            assert_eq!(pkt[1], if count == 1 { GSO_NONE } else { GSO_TCPV4 });
        }
    }

    #[test]
    fn udp_super_packets_split_into_datagrams() {
        let b = udp_super_packet(3 * 1200 + 7, 1200);
        let m = Meta::parse(&b).unwrap();
        assert_eq!((m.segments, m.hdr_len, m.transport), (4, 28, Transport::Udp));
        assert_eq!(m.segment_bytes(3), 35);
        let payload = &b[VNET_HDR_LEN + 28..];
        let mut out = [0u8; MAX_HEADERS];
        for (first, count) in [(0, 1), (1, 2), (3, 1), (1, 3)] {
            let (n, (start, end)) = segment_headers(&b, &m, first, count, &mut out);
            let mut pkt = out[..n].to_vec();
            pkt.extend_from_slice(&payload[start..end]);
            let meta = Meta::parse(&pkt).unwrap();
            assert_eq!(meta.segments, count);
            let ip = &pkt[VNET_HDR_LEN..];
            assert_eq!(checksum(&ip[..20]), 0);
            assert_eq!(usize::from(u16::from_be_bytes([ip[24], ip[25]])), 8 + end - start, "UDP length");
            assert_eq!(u16::from_le_bytes([pkt[8], pkt[9]]), 6, "checksum offset");
            assert_checksum_completes(ip, PROTO_UDP, 6);
        }
    }
}
