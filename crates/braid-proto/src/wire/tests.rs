use proptest::prelude::*;

use super::*;
use crate::packet::MAX_SEQUENCE;

fn seq() -> impl Strategy<Value = u64> {
    prop_oneof![0..64u64, 0..20_000u64, 0..MAX_SEQUENCE]
}

fn control() -> impl Strategy<Value = Control> {
    let addr = prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| SocketAddr::from((ip, port))),
        (any::<[u8; 16]>(), any::<u16>()).prop_map(|(ip, port)| SocketAddr::from((ip, port))),
    ];
    prop_oneof![
        any::<u64>().prop_map(|key| Control::Hello { key }),
        (any::<u64>(), any::<u32>()).prop_map(|(key, stamp)| Control::HelloReply { key, stamp }),
        (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(|(client_key, server_key, echo)| Control::Establish {
            client_key,
            server_key,
            echo
        }),
        (any::<u64>(), any::<u64>(), any::<bool>()).prop_map(|(token, nonce, backup)| Control::Join {
            token,
            nonce,
            backup
        }),
        (any::<[u8; 8]>(), any::<u64>(), any::<u32>()).prop_map(|(mac, nonce, stamp)| Control::JoinReply {
            mac,
            nonce,
            stamp
        }),
        (any::<[u8; 32]>(), any::<u32>()).prop_map(|(mac, echo)| Control::JoinAck { mac, echo }),
        (any::<u8>(), addr, any::<[u8; 8]>()).prop_map(|(id, addr, mac)| Control::AddAddr { id, addr, mac }),
        any::<u8>().prop_map(|id| Control::AddAddrEcho { id }),
        any::<u8>().prop_map(|id| Control::RemoveAddr { id }),
        seq().prop_map(|dsn| Control::DataFin { dsn }),
        any::<u8>().prop_map(|code| Control::Reset { code }),
        Just(Control::SubflowReset),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    let data = (seq(), seq(), 0..MAX_SEQUENCE - 70_000, 0u32..3000, any::<bool>(), any::<u8>()).prop_map(
        |(pn, pn_floor, dsn, len, synthetic, fill)| {
            let payload = if synthetic { Vec::new() } else { vec![fill; len as usize] };
            // A sender's floor is never above the packet's number.
            Frame::Data(DataFrame { pn, pn_floor: pn_floor.min(pn), dsn, len, payload })
        },
    );
    let ack = (seq(), proptest::collection::vec((0..MAX_SEQUENCE - 1, 1..1000u64), 0..=3), seq(), seq()).prop_map(
        |(cumulative, blocks, data_ack, window_end)| {
            let mut sack = [(0, 0); MAX_SACK_BLOCKS];
            for (slot, &(s, n)) in sack.iter_mut().zip(&blocks) {
                *slot = (s, (s + n).min(MAX_SEQUENCE));
            }
            Frame::Ack(AckFrame { cumulative, sack, sack_len: blocks.len() as u8, data_ack, window_end })
        },
    );
    prop_oneof![data, ack]
}

fn packet() -> impl Strategy<Value = Packet> {
    (any::<u64>(), any::<u8>(), frame(), proptest::option::of(control()))
        .prop_map(|(cid, sf, frame, control)| Packet {
            cid,
            subflow: SubflowId(sf),
            frame,
            control: control.map(Box::new),
        })
        .prop_filter("valid packets", |p| p.check().is_ok())
}

proptest! {
    /// Encoding then decoding is the identity, and the length is what
    /// `encoded_len` says.
    #[test]
    fn round_trip(p in packet()) {
        let mut bytes = Vec::new();
        encode(&p, &mut bytes);
        prop_assert_eq!(bytes.len(), encoded_len(&p));
        prop_assert_eq!(decode(&bytes), Ok(p.clone()));
        let h = Header::new_checked(&bytes[..]).unwrap();
        prop_assert_eq!((h.cid(), h.subflow()), (p.cid, p.subflow));
    }

    /// Every strict prefix of a packet is refused, never mistaken for a
    /// shorter packet (no length is implied by the datagram's end alone).
    #[test]
    fn truncations_are_refused(p in packet(), cut in any::<prop::sample::Index>()) {
        // (A Hello's zero padding may be cut without loss.)
        prop_assume!(!matches!(p.control.as_deref(), Some(Control::Hello { .. })));
        let mut bytes = Vec::new();
        encode(&p, &mut bytes);
        let n = cut.index(bytes.len());
        prop_assert!(decode(&bytes[..n]).is_err());
    }

    /// Random bytes never panic, and whatever decodes passes the
    /// connection's checks and re-encodes to the same bytes.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), first in any::<u8>()) {
        let mut bytes = bytes;
        if let Some(b) = bytes.first_mut() {
            *b = (*b & 0x1f) | (first & 0x20) | (VERSION << 5);
        }
        if let Ok(p) = decode(&bytes) {
            prop_assert!(p.check().is_ok());
            let mut again = Vec::new();
            encode(&p, &mut again);
            prop_assert_eq!(decode(&again), Ok(p));
        }
    }
}

#[test]
fn a_data_packet_byte_for_byte() {
    let p = Packet {
        cid: 0x0102_0304_0506_0708,
        subflow: SubflowId(3),
        frame: Frame::Data(DataFrame { pn: 64, pn_floor: 5, dsn: 16_384, len: 2, payload: vec![0xaa, 0xbb] }),
        control: Some(Box::new(Control::DataFin { dsn: 16_386 })),
    };
    let mut bytes = Vec::new();
    encode(&p, &mut bytes);
    #[rustfmt::skip]
    let expect = [
        0x30, // version 1, control, data
        1, 2, 3, 4, 5, 6, 7, 8, 3, // cid, subflow
        10, 0x80, 0x00, 0x40, 0x02, // DataFin, dsn 16386 as a 4-byte varint
        0x40, 64, 5, 0x80, 0x00, 0x40, 0x00, // pn 64, pn_floor 5, dsn 16384
        0, 2, 0xaa, 0xbb, // len 2, payload
    ];
    assert_eq!(bytes, expect);
    assert_eq!(decode(&bytes), Ok(p));
    // The floor above the packet's number (64 and 5 swapped): refused.
    let mut swapped = expect.to_vec();
    swapped.splice(15..18, [5, 0x40, 64]);
    assert_eq!(decode(&swapped), Err(DecodeError::Invalid(PacketError::FloorAbovePacket)));
}

#[test]
fn hello_is_padded_and_padding_ignored() {
    let p = Packet {
        cid: 0,
        subflow: SubflowId(0),
        frame: Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 0, payload: vec![] }),
        control: Some(Box::new(Control::Hello { key: 5 })),
    };
    let mut bytes = Vec::new();
    encode(&p, &mut bytes);
    assert_eq!(bytes.len(), HELLO_LEN);
    assert_eq!(decode(&bytes), Ok(p));
    let last = bytes.len() - 1;
    bytes[last] = 1;
    assert_eq!(decode(&bytes), Err(DecodeError::TrailingBytes));
}

#[test]
fn malformed_headers_get_typed_errors() {
    assert_eq!(decode(&[]), Err(DecodeError::Truncated));
    assert_eq!(decode(&[0x40; 10]), Err(DecodeError::Version(2)));
    assert_eq!(decode(&[0x27, 0, 0, 0, 0, 0, 0, 0, 0, 0]), Err(DecodeError::Kind(7)));
    let ack_with_four_blocks = [0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4];
    assert_eq!(decode(&ack_with_four_blocks), Err(DecodeError::SackCount(4)));
    let unknown_control = [0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 99];
    assert_eq!(decode(&unknown_control), Err(DecodeError::Control(99)));
    // An empty SACK block is well-formed bytes but an invalid packet.
    let empty_block = [0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 5, 0, 0];
    assert_eq!(decode(&empty_block), Err(DecodeError::Invalid(PacketError::BadSackBlock)));
    let trailing = [0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9];
    assert_eq!(decode(&trailing), Err(DecodeError::TrailingBytes));
}

proptest! {
    /// A data packet's header without a control is `data_header_len`.
    #[test]
    fn data_header_len_is_what_encoding_adds(pn in seq(), pn_floor in seq(), dsn in seq(), len in 0u32..1500) {
        let frame = Frame::Data(DataFrame { pn, pn_floor, dsn, len, payload: vec![7u8; len as usize] });
        let packet = Packet { cid: 1, subflow: SubflowId(0), frame, control: None };
        prop_assert_eq!(encoded_len(&packet) as u32, len + data_header_len(pn, pn_floor, dsn));
    }
}

/// Every control a data packet carries, at its largest, with the largest
/// numbers, stays within `MAX_DATA_OVERHEAD`; `JoinAck` only with the short
/// numbers of a subflow's first packets.
#[test]
fn data_overhead_covers_every_control() {
    let v6 = SocketAddr::from(([0xfe80, 0, 0, 0, 0, 0, 0, 1], 9));
    let big = MAX_SEQUENCE - 1;
    let controls = [
        (Control::HelloReply { key: 1, stamp: 2 }, big),
        (Control::Establish { client_key: 1, server_key: 2, echo: 3 }, big),
        (Control::Join { token: 1, nonce: 2, backup: true }, big),
        (Control::JoinReply { mac: [1; 8], nonce: 2, stamp: 3 }, big),
        (Control::JoinAck { mac: [1; 32], echo: 2 }, (1 << 14) - 1),
        (Control::AddAddr { id: 1, addr: v6, mac: [2; 8] }, big),
        (Control::AddAddrEcho { id: 1 }, big),
        (Control::RemoveAddr { id: 1 }, big),
        (Control::DataFin { dsn: big }, big),
        (Control::Reset { code: 1 }, big),
        (Control::SubflowReset, big),
    ];
    for (c, pn) in controls {
        let frame = Frame::Data(DataFrame { pn, pn_floor: pn, dsn: big, len: 100, payload: vec![7; 100] });
        let packet = Packet { cid: 1, subflow: SubflowId(0), frame, control: Some(Box::new(c.clone())) };
        assert!(encoded_len(&packet) as u32 <= 100 + MAX_DATA_OVERHEAD, "{c:?}: {} bytes", encoded_len(&packet));
    }
}
