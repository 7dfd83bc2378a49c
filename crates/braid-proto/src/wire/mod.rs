//! The wire format: [`Packet`]s as bytes, for real networks (one packet
//! per UDP datagram) and for the simulator's wire mode.
//!
//! Habits from smoltcp's `wire/`: a checked view over the fixed header
//! ([`Header::new_checked`]) so an endpoint can route a datagram by its
//! connection id without parsing the rest, field offsets as constants, and
//! one function each way between bytes and the value type. Parsing
//! untrusted bytes never panics: anything malformed is a [`DecodeError`].
//!
//! Layout (integers big-endian; "varint" is QUIC's variable-length
//! integer, RFC 9000 §16):
//!
//! ```text
//! header   0      version (3 bits, = 1) | control? (bit 4) | synthetic (bit 3) | kind (bits 0-2: 0 data, 1 ack)
//!          1..9   connection id: the receiver's token (0 before it is known)
//!          9      subflow id
//! control  (if the control bit is set) type byte, then its fields
//! data     pn, pn_floor, dsn: varints; len: u16; then len payload bytes,
//!          or none if the synthetic bit is set (simulator only)
//! ack      cumulative: varint; SACK block count: u8 (at most 3); each
//!          block start, end: varints; data_ack, window_end: varints
//! ```
//!
//! Controls: 1 Hello (key u64), 2 HelloReply (key u64, stamp u32), 3
//! Establish (two keys, echo u32), 4 Join (token u64, nonce u64, flags u8:
//! bit 0 backup), 5 JoinReply (8-byte MAC, nonce u64, stamp u32), 6 JoinAck
//! (32-byte MAC, echo u32), 7 AddAddr (id
//! u8, family u8 4 or 6, address, port u16, 8-byte MAC), 8 AddAddrEcho (id),
//! 9 RemoveAddr (id), 10 DataFin (dsn varint), 11 Reset (code u8), 12
//! SubflowReset.
//!
//! Zero bytes after a packet are padding and ignored; a packet carrying
//! `Hello` is padded to [`HELLO_LEN`].
//!
//! A data packet with a full 1448-byte segment is 10 (header) + about 12
//! (numbers) + 2 + 1448 bytes: 1472, under a 1500-byte MTU with the IPv4
//! and UDP headers (28).

mod varint;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::packet::{AckFrame, Control, DataFrame, Frame, Packet, PacketError, SubflowId, MAX_SACK_BLOCKS};

/// The format version this code writes and reads.
pub const VERSION: u8 = 1;

/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 10;

/// The most a data packet's datagram holds beyond its payload: the header
/// with 8-byte sequence numbers (36 bytes) and the largest control (an
/// IPv6 `AddAddr`, 29), 65, with room to spare (the braid-net driver has
/// used 70 from the start). `JoinAck` (37) rides only on a subflow's first
/// packets, whose numbers are short (61 in all). A path that carries
/// `mss + MAX_DATA_OVERHEAD` bytes carries every data packet of `mss`.
pub const MAX_DATA_OVERHEAD: u32 = 70;

/// Bytes of a data packet's header without a control, for its numbers.
pub fn data_header_len(pn: u64, pn_floor: u64, dsn: u64) -> u32 {
    (HEADER_LEN + varint::len(pn) + varint::len(pn_floor) + varint::len(dsn) + 2) as u32
}

/// A packet carrying `Hello` is padded with zeros to this size, as QUIC
/// pads its Initial: the server's stateless answer is then never larger
/// than what it answers, and the path is shown to carry datagrams this big.
pub const HELLO_LEN: usize = 1200;

mod field {
    pub const FLAGS: usize = 0;
    pub const CID: std::ops::Range<usize> = 1..9;
    pub const SUBFLOW: usize = 9;
}

const KIND_MASK: u8 = 0x07;
const SYNTHETIC: u8 = 0x08;
const HAS_CONTROL: u8 = 0x10;
const KIND_DATA: u8 = 0;
const KIND_ACK: u8 = 1;

/// Why bytes are not a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Shorter than its fields say.
    Truncated,
    /// A version this code does not speak.
    Version(u8),
    /// An unknown packet kind.
    Kind(u8),
    /// An unknown control type.
    Control(u8),
    /// An address family other than 4 or 6.
    AddressFamily(u8),
    /// More SACK blocks than an ACK carries.
    SackCount(u8),
    /// Bytes other than zero padding after the packet.
    TrailingBytes,
    /// Well-formed bytes with values the connection refuses.
    Invalid(PacketError),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("packet truncated"),
            DecodeError::Version(v) => write!(f, "unknown version {v}"),
            DecodeError::Kind(k) => write!(f, "unknown packet kind {k}"),
            DecodeError::Control(c) => write!(f, "unknown control type {c}"),
            DecodeError::AddressFamily(a) => write!(f, "unknown address family {a}"),
            DecodeError::SackCount(n) => write!(f, "{n} SACK blocks (at most {MAX_SACK_BLOCKS})"),
            DecodeError::TrailingBytes => f.write_str("non-zero bytes after the end of the packet"),
            DecodeError::Invalid(e) => write!(f, "invalid packet: {e}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A view over a packet's fixed header, for routing before parsing.
#[derive(Clone, Copy, Debug)]
pub struct Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Header<T> {
    /// The view, after checking the buffer holds a header of a known version.
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(DecodeError::Truncated);
        }
        let version = b[field::FLAGS] >> 5;
        if version != VERSION {
            return Err(DecodeError::Version(version));
        }
        Ok(Header { buffer })
    }

    /// The receiver's connection id.
    pub fn cid(&self) -> u64 {
        let b = &self.buffer.as_ref()[field::CID];
        u64::from_be_bytes(b.try_into().expect("eight bytes"))
    }

    pub fn subflow(&self) -> SubflowId {
        SubflowId(self.buffer.as_ref()[field::SUBFLOW])
    }

    fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
}

/// Bytes `packet` takes on the wire.
pub fn encoded_len(packet: &Packet) -> usize {
    let mut v = Vec::new();
    encode(packet, &mut v);
    v.len()
}

/// Appends `packet`'s bytes to `out`. The packet must pass
/// [`Packet::check`] (the connection only builds such packets).
pub fn encode(packet: &Packet, out: &mut Vec<u8>) {
    let (kind, synthetic) = match &packet.frame {
        Frame::Data(d) => (KIND_DATA, d.payload.is_empty() && d.len > 0),
        Frame::Ack(_) => (KIND_ACK, false),
    };
    let start = out.len();
    let flags = VERSION << 5
        | kind
        | if synthetic { SYNTHETIC } else { 0 }
        | if packet.control.is_some() { HAS_CONTROL } else { 0 };
    out.push(flags);
    out.extend_from_slice(&packet.cid.to_be_bytes());
    out.push(packet.subflow.0);
    if let Some(c) = packet.control.as_deref() {
        encode_control(c, out);
    }
    match &packet.frame {
        Frame::Data(d) => {
            varint::put(out, d.pn);
            varint::put(out, d.pn_floor);
            varint::put(out, d.dsn);
            out.extend_from_slice(&(d.len as u16).to_be_bytes());
            out.extend_from_slice(&d.payload);
        }
        Frame::Ack(a) => {
            varint::put(out, a.cumulative);
            let blocks = a.sack_blocks();
            out.push(blocks.len() as u8);
            for &(s, e) in blocks {
                varint::put(out, s);
                varint::put(out, e);
            }
            varint::put(out, a.data_ack);
            varint::put(out, a.window_end);
        }
    }
    if matches!(packet.control.as_deref(), Some(Control::Hello { .. })) && out.len() - start < HELLO_LEN {
        out.resize(start + HELLO_LEN, 0);
    }
}

fn encode_control(c: &Control, out: &mut Vec<u8>) {
    match c {
        Control::Hello { key } => {
            out.push(1);
            out.extend_from_slice(&key.to_be_bytes());
        }
        Control::HelloReply { key, stamp } => {
            out.push(2);
            out.extend_from_slice(&key.to_be_bytes());
            out.extend_from_slice(&stamp.to_be_bytes());
        }
        Control::Establish { client_key, server_key, echo } => {
            out.push(3);
            out.extend_from_slice(&client_key.to_be_bytes());
            out.extend_from_slice(&server_key.to_be_bytes());
            out.extend_from_slice(&echo.to_be_bytes());
        }
        Control::Join { token, nonce, backup } => {
            out.push(4);
            out.extend_from_slice(&token.to_be_bytes());
            out.extend_from_slice(&nonce.to_be_bytes());
            out.push(u8::from(*backup));
        }
        Control::JoinReply { mac, nonce, stamp } => {
            out.push(5);
            out.extend_from_slice(mac);
            out.extend_from_slice(&nonce.to_be_bytes());
            out.extend_from_slice(&stamp.to_be_bytes());
        }
        Control::JoinAck { mac, echo } => {
            out.push(6);
            out.extend_from_slice(mac);
            out.extend_from_slice(&echo.to_be_bytes());
        }
        Control::AddAddr { id, addr, mac } => {
            out.push(7);
            out.push(*id);
            match addr.ip() {
                IpAddr::V4(ip) => {
                    out.push(4);
                    out.extend_from_slice(&ip.octets());
                }
                IpAddr::V6(ip) => {
                    out.push(6);
                    out.extend_from_slice(&ip.octets());
                }
            }
            out.extend_from_slice(&addr.port().to_be_bytes());
            out.extend_from_slice(mac);
        }
        Control::AddAddrEcho { id } => out.extend_from_slice(&[8, *id]),
        Control::RemoveAddr { id } => out.extend_from_slice(&[9, *id]),
        Control::DataFin { dsn } => {
            out.push(10);
            varint::put(out, *dsn);
        }
        Control::Reset { code } => out.extend_from_slice(&[11, *code]),
        Control::SubflowReset => out.push(12),
    }
}

/// Reads `N` bytes from the front of `buf`.
fn take<const N: usize>(buf: &mut &[u8]) -> Result<[u8; N], DecodeError> {
    let bytes = buf.get(..N).ok_or(DecodeError::Truncated)?;
    *buf = &buf[N..];
    Ok(bytes.try_into().expect("N bytes"))
}

fn take_u64(buf: &mut &[u8]) -> Result<u64, DecodeError> {
    take::<8>(buf).map(u64::from_be_bytes)
}

fn take_u32(buf: &mut &[u8]) -> Result<u32, DecodeError> {
    take::<4>(buf).map(u32::from_be_bytes)
}

fn take_u8(buf: &mut &[u8]) -> Result<u8, DecodeError> {
    take::<1>(buf).map(|[b]| b)
}

/// Parses one packet from untrusted bytes: all of `bytes`, nothing more.
/// The result passes [`Packet::check`].
pub fn decode(bytes: &[u8]) -> Result<Packet, DecodeError> {
    let header = Header::new_checked(bytes)?;
    let flags = header.flags();
    let mut rest = &bytes[HEADER_LEN..];
    let control = if flags & HAS_CONTROL != 0 { Some(decode_control(&mut rest)?) } else { None };
    let frame = match flags & KIND_MASK {
        KIND_DATA => {
            let (pn, pn_floor, dsn) = (varint::take(&mut rest)?, varint::take(&mut rest)?, varint::take(&mut rest)?);
            let len = u32::from(u16::from_be_bytes(take::<2>(&mut rest)?));
            let payload = if flags & SYNTHETIC != 0 {
                Vec::new()
            } else {
                let p = rest.get(..len as usize).ok_or(DecodeError::Truncated)?.to_vec();
                rest = &rest[len as usize..];
                p
            };
            Frame::Data(DataFrame { pn, pn_floor, dsn, len, payload })
        }
        KIND_ACK => {
            let cumulative = varint::take(&mut rest)?;
            let n = take_u8(&mut rest)?;
            if usize::from(n) > MAX_SACK_BLOCKS {
                return Err(DecodeError::SackCount(n));
            }
            let mut sack = [(0, 0); MAX_SACK_BLOCKS];
            for block in sack.iter_mut().take(usize::from(n)) {
                *block = (varint::take(&mut rest)?, varint::take(&mut rest)?);
            }
            let (data_ack, window_end) = (varint::take(&mut rest)?, varint::take(&mut rest)?);
            Frame::Ack(AckFrame { cumulative, sack, sack_len: n, data_ack, window_end })
        }
        k => return Err(DecodeError::Kind(k)),
    };
    // Zero padding may follow (a padded Hello); anything else is an error.
    if rest.iter().any(|&b| b != 0) {
        return Err(DecodeError::TrailingBytes);
    }
    let packet = Packet { cid: header.cid(), subflow: header.subflow(), frame, control: control.map(Box::new) };
    packet.check().map_err(DecodeError::Invalid)?;
    Ok(packet)
}

fn decode_control(rest: &mut &[u8]) -> Result<Control, DecodeError> {
    Ok(match take_u8(rest)? {
        1 => Control::Hello { key: take_u64(rest)? },
        2 => Control::HelloReply { key: take_u64(rest)?, stamp: take_u32(rest)? },
        3 => Control::Establish { client_key: take_u64(rest)?, server_key: take_u64(rest)?, echo: take_u32(rest)? },
        4 => Control::Join { token: take_u64(rest)?, nonce: take_u64(rest)?, backup: take_u8(rest)? & 1 == 1 },
        5 => Control::JoinReply { mac: take(rest)?, nonce: take_u64(rest)?, stamp: take_u32(rest)? },
        6 => Control::JoinAck { mac: take(rest)?, echo: take_u32(rest)? },
        7 => {
            let id = take_u8(rest)?;
            let ip = match take_u8(rest)? {
                4 => IpAddr::V4(Ipv4Addr::from(take::<4>(rest)?)),
                6 => IpAddr::V6(Ipv6Addr::from(take::<16>(rest)?)),
                f => return Err(DecodeError::AddressFamily(f)),
            };
            let port = u16::from_be_bytes(take(rest)?);
            Control::AddAddr { id, addr: SocketAddr::new(ip, port), mac: take(rest)? }
        }
        8 => Control::AddAddrEcho { id: take_u8(rest)? },
        9 => Control::RemoveAddr { id: take_u8(rest)? },
        10 => Control::DataFin { dsn: varint::take(rest)? },
        11 => Control::Reset { code: take_u8(rest)? },
        12 => Control::SubflowReset,
        t => return Err(DecodeError::Control(t)),
    })
}

#[cfg(test)]
mod tests;
