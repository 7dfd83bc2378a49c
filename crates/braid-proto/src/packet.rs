//! The packets two connections exchange, as values (the "Repr" in
//! smoltcp's terms; [`crate::wire`] turns them into bytes and back).
//!
//! The simulator passes these structs without encoding them (unless a flow
//! asks for the wire format). Each packet belongs to one subflow, named by
//! its [`SubflowId`], and carries the receiver's connection id so a
//! subflow survives an address change. A packet is either data or an
//! acknowledgement, and may carry one [`Control`]: the handshake's keys and
//! MACs, address advertisements, the end of the stream or a reset, as
//! MPTCP carries its options on TCP segments.

/// Bytes of header charged on the wire for a data packet: IPv4 (20) + TCP
/// with timestamps (32), so a full 1448-byte segment makes a 1500-byte packet.
/// The MPTCP DSS option is assumed to fit the TCP option space like Linux's.
pub const DATA_HEADER_BYTES: u32 = 52;
/// Wire size of a pure acknowledgement (IPv4 + TCP + SACK/DSS options).
pub const ACK_WIRE_BYTES: u32 = 84;
/// SACK blocks carried per acknowledgement, as TCP with timestamps allows.
pub const MAX_SACK_BLOCKS: usize = 3;
/// Packet numbers and sequence numbers are below 2^62 (they travel as
/// QUIC-style variable-length integers), so arithmetic on them never overflows.
pub const MAX_SEQUENCE: u64 = (1 << 62) - 1;
/// Largest segment a data packet may carry.
pub const MAX_SEGMENT: u32 = 65_535;

/// Why a received packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketError {
    /// A packet or sequence number at or beyond 2^62.
    SequenceOutOfRange,
    /// `len` exceeds the largest segment, or a payload is not `len` bytes long.
    BadLength,
    /// A SACK block that is empty or reversed.
    BadSackBlock,
    /// A data packet whose packet-number floor is above its own number: a
    /// sender's floor is the oldest packet it still waits for, never one
    /// after the packet it sends. The receiver would acknowledge packets
    /// never sent, and the sender take every later packet as acknowledged.
    FloorAbovePacket,
}

impl std::fmt::Display for PacketError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PacketError::SequenceOutOfRange => "sequence number out of range",
            PacketError::BadLength => "segment length out of range or inconsistent with payload",
            PacketError::BadSackBlock => "empty or reversed SACK block",
            PacketError::FloorAbovePacket => "packet-number floor above the packet's own number",
        })
    }
}

impl std::error::Error for PacketError {}

/// Names a subflow on the wire and in the API: its position in both
/// endpoints' subflow lists (both open subflows in the same order). One
/// byte on the wire, so a connection has at most [`SubflowId::LIMIT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubflowId(pub u8);

impl SubflowId {
    /// Most subflows one connection can have.
    pub const LIMIT: usize = 256;

    /// The id of the subflow at `index`, if one can have it.
    pub fn from_index(index: usize) -> Option<Self> {
        u8::try_from(index).ok().map(SubflowId)
    }

    /// Position in the subflow list.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The receiver's connection id (its token); 0 before the sender knows it.
    pub cid: u64,
    /// The subflow this packet travels on.
    pub subflow: SubflowId,
    pub frame: Frame,
    /// Boxed: few packets carry one (the handshake's, a FIN until it is
    /// acknowledged, address signalling), and inline it would make every
    /// packet 40 bytes larger (152 rather than 112), bytes that each move of
    /// a packet copies and that a simulator holding many in flight keeps in
    /// cache.
    pub control: Option<Box<Control>>,
}

/// Connection-level signalling carried on a data or ACK packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// Client to server on the first subflow's opening packet: the client's
    /// key (MP_CAPABLE on the SYN).
    Hello { key: u64 },
    /// Server to client on the ACK that answers `Hello`: the server's key,
    /// and its clock in microseconds (`stamp`, wrapping) for an RTT sample.
    HelloReply { key: u64, stamp: u32 },
    /// Client to server on the first subflow's packets until one is
    /// acknowledged: both keys, so a server that answered `Hello` without
    /// keeping state can set the connection up (MP_CAPABLE on the third ACK),
    /// and the reply's `stamp` plus the microseconds the client held it
    /// before this packet left (`echo`): the server's first RTT sample, as
    /// a SYN cookie's echoed timestamp gives Linux's.
    Establish { client_key: u64, server_key: u64, echo: u32 },
    /// Client to server on a new subflow's opening packet: the server's
    /// token, a fresh nonce, and whether the subflow is a backup (MP_JOIN).
    Join { token: u64, nonce: u64, backup: bool },
    /// Server to client on the ACK that answers `Join`: its nonce and a
    /// truncated HMAC proving it knows both keys.
    JoinReply { mac: [u8; 8], nonce: u64, stamp: u32 },
    /// Client to server on the joining subflow's packets until one is
    /// acknowledged: the full HMAC proving the client knows both keys.
    JoinAck { mac: [u8; 32], echo: u32 },
    /// Server to client until echoed: another address the client may join
    /// (ADD_ADDR), with a truncated HMAC over it.
    AddAddr { id: u8, addr: std::net::SocketAddr, mac: [u8; 8] },
    /// Client to server: address `id` was received.
    AddAddrEcho { id: u8 },
    /// The address `id` is gone: close the subflows using it (REMOVE_ADDR).
    RemoveAddr { id: u8 },
    /// The sender's stream ends at `dsn` (DATA_FIN): repeated until the
    /// Data ACK passes it.
    DataFin { dsn: u64 },
    /// Abort: the connection is over, with a reason code (MP_FASTCLOSE).
    Reset { code: u8 },
    /// The subflow this packet travels on is closed or unknown at its
    /// sender: the receiver closes its end (TCP's RST on a subflow, RFC
    /// 8684's MP_TCPRST). Never answered.
    SubflowReset,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Data(DataFrame),
    Ack(AckFrame),
}

/// A segment of the connection's byte stream carried on one subflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataFrame {
    /// Subflow packet number: every transmission, retransmissions included,
    /// gets a fresh one, so an acknowledgement is never ambiguous.
    pub pn: u64,
    /// The sender no longer waits for packet numbers below this one (they
    /// were acknowledged or declared lost and their data re-sent under new
    /// numbers), so the receiver moves its cumulative point up to it. It
    /// stays below the packets a timeout declared lost while an
    /// acknowledgement may still show they arrived: until one reaches a
    /// packet sent after the timeout, or every one of them is accounted for.
    pub pn_floor: u64,
    /// Data sequence number of the first byte.
    pub dsn: u64,
    pub len: u32,
    /// The bytes, or empty when the sender writes synthetic (length-only)
    /// data, which the simulator uses for bulk transfers.
    pub payload: Vec<u8>,
}

/// Subflow acknowledgement plus the connection-level Data ACK and window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// Every packet number below this one has been received.
    pub cumulative: u64,
    /// Received ranges `[start, end)` above `cumulative`, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// Connection-level cumulative acknowledgement: next expected DSN.
    pub data_ack: u64,
    /// Right edge of the receive window: the peer may send DSNs below this.
    pub window_end: u64,
}

impl AckFrame {
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..usize::from(self.sack_len).min(MAX_SACK_BLOCKS)]
    }
}

impl Packet {
    /// A packet on `subflow` with no connection id and no control.
    pub fn new(subflow: SubflowId, frame: Frame) -> Self {
        Packet { cid: 0, subflow, frame, control: None }
    }

    /// Checks the invariants the connection relies on. Packets from the
    /// network must pass this before they touch any state.
    pub fn check(&self) -> Result<(), PacketError> {
        let in_range = |v: u64| if v <= MAX_SEQUENCE { Ok(()) } else { Err(PacketError::SequenceOutOfRange) };
        if let Some(Control::DataFin { dsn }) = self.control.as_deref() {
            in_range(*dsn)?;
        }
        match &self.frame {
            Frame::Data(d) => {
                in_range(d.pn)?;
                in_range(d.pn_floor)?;
                if d.pn_floor > d.pn {
                    return Err(PacketError::FloorAbovePacket);
                }
                in_range(d.dsn.saturating_add(u64::from(d.len)))?;
                // A payload is all `len` bytes, or absent (synthetic data).
                if d.len > MAX_SEGMENT || !(d.payload.is_empty() || d.payload.len() == d.len as usize) {
                    return Err(PacketError::BadLength);
                }
                Ok(())
            }
            Frame::Ack(a) => {
                in_range(a.cumulative)?;
                in_range(a.data_ack)?;
                in_range(a.window_end)?;
                if usize::from(a.sack_len) > MAX_SACK_BLOCKS {
                    return Err(PacketError::BadSackBlock);
                }
                for &(s, e) in a.sack_blocks() {
                    in_range(e)?;
                    if s >= e {
                        return Err(PacketError::BadSackBlock);
                    }
                }
                Ok(())
            }
        }
    }

    /// Bytes this packet occupies on a link.
    pub fn wire_len(&self) -> u32 {
        match &self.frame {
            Frame::Data(d) => DATA_HEADER_BYTES + d.len,
            Frame::Ack(_) => ACK_WIRE_BYTES,
        }
    }
}
