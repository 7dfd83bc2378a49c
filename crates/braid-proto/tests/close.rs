//! Ending connections: orderly close in both directions (DATA_FIN), resets,
//! and the server's address advertisements.

mod common;

use std::net::SocketAddr;

use braid_proto::{Config, Connection, ConnectionError, Control, Event, Frame, Packet};

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn read_all(c: &mut Connection) -> Vec<u8> {
    let mut got = Vec::new();
    common::read_all(c, &mut got);
    got
}

/// The client writes, closes; the server reads to the end, sees the close,
/// closes its side; both finish knowing every byte arrived. The first two
/// packets carrying the client's FIN are lost: it is re-sent.
#[test]
fn both_sides_close_and_finish_even_when_fins_are_lost() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 2);
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
    assert_eq!(a.write(&data), data.len());
    a.close();
    assert_eq!(a.write(b"late"), 0, "no writes after close");
    let (mut got, mut fins_lost) = (Vec::new(), 0);
    let done = common::drive(
        &mut a,
        &mut b,
        10,
        60_000,
        |a, b| {
            got.extend(read_all(b));
            if b.peer_closed() {
                b.close();
            }
            a.is_finished() && b.is_finished()
        },
        |_, to_b, p| {
            let fin = to_b && matches!(p.control.as_deref(), Some(Control::DataFin { .. }));
            fin && {
                fins_lost += 1;
                fins_lost <= 2
            }
        },
    );
    assert!(done.is_ok(), "{done:?}");
    assert!(got == data, "the server read {} of {} bytes", got.len(), data.len());
    let (ea, eb) = (events(&mut a), events(&mut b));
    assert!(ea.contains(&Event::Closed) && ea.contains(&Event::PeerClosed), "{ea:?}");
    assert!(eb.contains(&Event::Closed) && eb.contains(&Event::PeerClosed), "{eb:?}");
    assert!(fins_lost > 2);
}

#[test]
fn a_reset_ends_both_sides() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    a.write(&[1; 10_000]);
    let r = common::drive(&mut a, &mut b, 10, 10_000, |_, b| b.stats().bytes_received > 0, |_, _, _| false);
    assert!(r.is_ok());
    a.reset(9);
    assert_eq!(a.error(), Some(ConnectionError::Reset { code: 9 }));
    let reset: Vec<Packet> = std::iter::from_fn(|| a.poll_transmit(braid_proto::Instant::ZERO)).collect();
    assert!(matches!(reset.as_slice(), [p] if p.control.as_deref() == Some(&Control::Reset { code: 9 })), "{reset:?}");
    b.handle_datagram(braid_proto::Instant::ZERO, reset[0].clone()).unwrap();
    assert_eq!(b.error(), Some(ConnectionError::PeerReset { code: 9 }));
    assert!(events(&mut b).contains(&Event::Failed(ConnectionError::PeerReset { code: 9 })));
    assert!(b.poll_transmit(braid_proto::Instant::ZERO).is_none(), "a reset connection sends nothing");
    assert_eq!((a.poll_timeout(), b.poll_timeout()), (None, None));
}

/// The server advertises an address: the client learns it once (the
/// advertisement stops once echoed), a tampered copy is refused, and a
/// withdrawal is reported.
#[test]
fn address_advertisements_are_authenticated_and_echoed() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, braid_proto::Instant::ZERO);
    let addr: SocketAddr = "192.0.2.7:4433".parse().unwrap();
    b.advertise_address(3, addr);
    // Sends 50 kB from the client and counts the server's ADD_ADDRs.
    let adds_during_a_transfer = |a: &mut Connection, b: &mut Connection| {
        a.write(&[0; 50_000]);
        let mut adds = 0;
        let r = common::drive(
            a,
            b,
            5,
            5_000,
            |a, _| a.all_acked(),
            |_, to_b, p| {
                adds += usize::from(!to_b && matches!(p.control.as_deref(), Some(Control::AddAddr { .. })));
                false
            },
        );
        assert!(r.is_ok());
        adds
    };
    let adds = adds_during_a_transfer(&mut a, &mut b);
    let ea = events(&mut a);
    assert_eq!(ea.iter().filter(|e| matches!(e, Event::AddressAdvertised { .. })).count(), 1, "{ea:?}");
    assert!(ea.contains(&Event::AddressAdvertised { id: 3, addr }));
    assert!(adds >= 1);
    // Echoed: later packets no longer carry it.
    let later = adds_during_a_transfer(&mut a, &mut b);
    assert_eq!(later, 0, "advertised again after the echo");
    // An on-path party changes the address: the MAC no longer matches.
    let mut forged = Packet::new(
        braid_proto::SubflowId(0),
        braid_proto::Frame::Ack(braid_proto::AckFrame {
            cumulative: 0,
            sack: [(0, 0); 3],
            sack_len: 0,
            data_ack: 0,
            window_end: 1 << 20,
        }),
    );
    let before = a.stats().invalid_packets;
    forged.control = Some(Box::new(Control::AddAddr { id: 4, addr: "198.51.100.1:1".parse().unwrap(), mac: [1; 8] }));
    a.handle_datagram(braid_proto::Instant::ZERO, forged).unwrap();
    assert_eq!(a.stats().invalid_packets, before + 1);
    assert!(events(&mut a).is_empty(), "nothing learned from a forged advertisement");
    b.withdraw_address(3);
    let r = common::drive(&mut a, &mut b, 5, 5_000, |a, _| a.poll_event().is_some(), |_, _, _| false);
    assert!(r.is_ok(), "{r:?}");
}

/// Every packet `from` sends at `now`, each delivered to `to`.
fn exchange(from: &mut Connection, to: &mut Connection, now: braid_proto::Instant) -> Vec<Packet> {
    let mut sent = Vec::new();
    while let Some(p) = from.poll_transmit(now) {
        sent.push(p.clone());
        to.handle_datagram(now, p).expect("well-formed");
    }
    sent
}

/// An opened client and server that acknowledge every packet at once.
fn acking_every_packet() -> (Connection, Connection) {
    let cfg = Config { ack_every: 1, ..Config::default() };
    let (mut a, mut b) = common::pair(cfg, "reno", "minrtt", 1);
    common::open(&mut a, &mut b, braid_proto::Instant::ZERO);
    (a, b)
}

/// Closing with everything acknowledged and nothing else to send: the FIN
/// goes out at once on a probe of its own, once; when it is acknowledged,
/// later packets no longer carry it.
#[test]
fn an_idle_close_sends_its_fin_on_a_probe_until_acknowledged() {
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = acking_every_packet();
    a.write(b"abc");
    for _ in 0..4 {
        exchange(&mut a, &mut b, now);
        exchange(&mut b, &mut a, now);
    }
    assert!(a.all_acked());
    a.close();
    let probe = exchange(&mut a, &mut b, now);
    assert_eq!(probe.len(), 1, "{probe:?}");
    assert_eq!(probe[0].control.as_deref(), Some(&Control::DataFin { dsn: 3 }));
    assert!(exchange(&mut a, &mut b, now).is_empty(), "one probe");
    exchange(&mut b, &mut a, now);
    assert!(b.peer_closed());
    // The server sends data; the client's ACKs carry no FIN any more.
    b.write(b"more");
    for _ in 0..4 {
        exchange(&mut b, &mut a, now);
        for p in exchange(&mut a, &mut b, now) {
            assert_eq!(p.control, None, "{p:?}");
        }
    }
    assert_eq!(read_all(&mut a), b"more");
}

/// The first FIN stands: a later one at another DSN (a bogus or replayed
/// packet) does not move the end of the peer's stream, which the Data ACK
/// acknowledges one past.
#[test]
fn a_second_fin_does_not_move_the_end_of_the_stream() {
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = acking_every_packet();
    a.write(b"abcde");
    a.close();
    let sent = exchange(&mut a, &mut b, now);
    let data =
        sent.iter().find(|p| p.control.as_deref() == Some(&Control::DataFin { dsn: 5 })).expect("data with the FIN");
    assert!(b.peer_closed());
    let mut data_acks = |b: &mut Connection| -> Vec<u64> {
        exchange(b, &mut a, now)
            .iter()
            .filter_map(|p| match &p.frame {
                braid_proto::Frame::Ack(ack) => Some(ack.data_ack),
                _ => None,
            })
            .collect()
    };
    assert_eq!(data_acks(&mut b), [6], "5 bytes and the FIN");
    let mut replay = data.clone();
    replay.control = Some(Box::new(Control::DataFin { dsn: 9 }));
    b.handle_datagram(now, replay).expect("well-formed");
    assert_eq!(data_acks(&mut b), [6]);
}

/// An advertisement carries RFC 8684's HMAC (section 3.4.1): key = the
/// sender's key then the receiver's, message = address id, IP, port; the
/// leftmost 64 bits.
#[test]
fn an_advertisement_carries_the_rfc_8684_hmac() {
    use braid_proto::crypto::{truncated, Crypto, RustCrypto};
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, now);
    let addr: SocketAddr = "192.0.2.7:4433".parse().unwrap();
    b.advertise_address(3, addr);
    let add = exchange(&mut b, &mut a, now).into_iter().find_map(|p| match p.control.as_deref() {
        Some(&Control::AddAddr { id, addr, mac }) => Some((id, addr, mac)),
        _ => None,
    });
    let key = [0x2222u64.to_be_bytes(), 0x1111u64.to_be_bytes()].concat();
    let mac = truncated(RustCrypto.hmac_sha256(&key, &[&[3], &[192, 0, 2, 7], &4433u16.to_be_bytes()]));
    assert_eq!(add, Some((3, addr, mac)));
}

/// Withdrawing an address goes out in several copies (REMOVE_ADDR may be
/// lost); the client reports the removal once.
#[test]
fn a_withdrawn_address_is_reported_removed_once() {
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = acking_every_packet();
    b.advertise_address(3, "192.0.2.7:4433".parse().unwrap());
    for _ in 0..4 {
        exchange(&mut b, &mut a, now);
        exchange(&mut a, &mut b, now);
    }
    assert!(events(&mut a).contains(&Event::AddressAdvertised { id: 3, addr: "192.0.2.7:4433".parse().unwrap() }));
    b.withdraw_address(3);
    for _ in 0..8 {
        b.write(b"x");
        exchange(&mut b, &mut a, now);
        exchange(&mut a, &mut b, now);
    }
    let removed: Vec<Event> =
        events(&mut a).into_iter().filter(|e| matches!(e, Event::AddressRemoved { .. })).collect();
    assert_eq!(removed, [Event::AddressRemoved { id: 3 }]);
}

/// Two addresses advertised at once both reach the client, and
/// withdrawing one before it was echoed leaves the other advertised.
#[test]
fn several_addresses_are_advertised_and_withdrawn_one_by_one() {
    let now = braid_proto::Instant::ZERO;
    let (one, two, three): (SocketAddr, SocketAddr, SocketAddr) =
        ("192.0.2.7:4433".parse().unwrap(), "198.51.100.9:4433".parse().unwrap(), "203.0.113.5:80".parse().unwrap());
    let (mut a, mut b) = acking_every_packet();
    b.advertise_address(1, one);
    b.advertise_address(2, two);
    b.advertise_address(3, three);
    b.withdraw_address(3);
    for _ in 0..6 {
        b.write(b"x");
        exchange(&mut b, &mut a, now);
        exchange(&mut a, &mut b, now);
    }
    let learnt: Vec<Event> =
        events(&mut a).into_iter().filter(|e| matches!(e, Event::AddressAdvertised { .. })).collect();
    assert_eq!(learnt, [Event::AddressAdvertised { id: 1, addr: one }, Event::AddressAdvertised { id: 2, addr: two }]);
}

/// A client that closes before the connection is open: its FIN waits for
/// a packet that can carry it. (The probe confirming the opening carries
/// the handshake's control, not the FIN; it counted as the FIN's probe,
/// and once it was acknowledged nothing sent the FIN again. Found by the
/// `connection` fuzz target's driver, `tests/driven.rs`.)
#[test]
fn a_close_before_the_connection_opens_still_sends_the_fin() {
    let now = braid_proto::Instant::ZERO;
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    a.close();
    for _ in 0..6 {
        exchange(&mut a, &mut b, now);
        exchange(&mut b, &mut a, now);
    }
    assert!(b.peer_closed(), "the server learned of the close");
    b.close();
    for _ in 0..4 {
        exchange(&mut b, &mut a, now);
        exchange(&mut a, &mut b, now);
    }
    assert!(a.is_finished() && b.is_finished());
}

/// The probe carrying an idle side's FIN is lost: when the subflow's timer
/// fires with only that probe out, the FIN goes out again. (Nothing re-sent
/// it: a lost lone probe was taken for a zero-window probe.)
#[test]
fn a_lost_fin_probe_is_sent_again() {
    let (mut a, mut b) = acking_every_packet();
    let mut now = braid_proto::Instant::ZERO;
    a.close();
    let lost: Vec<Packet> = std::iter::from_fn(|| a.poll_transmit(now)).collect();
    assert!(lost.iter().any(|p| matches!(p.control.as_deref(), Some(Control::DataFin { .. }))), "{lost:?}");
    for _ in 0..3 {
        now = a.poll_timeout().expect("the FIN's probe is timed");
        a.handle_timeout(now);
        exchange(&mut a, &mut b, now);
        exchange(&mut b, &mut a, now);
        if b.peer_closed() {
            break;
        }
    }
    assert!(b.peer_closed(), "the FIN was sent again");
}

/// An idle server whose advertisement waits for its echo closes: the
/// probe for its FIN carries the FIN, not the advertisement again (which
/// rides on later packets). It carried the advertisement and the FIN was
/// never sent.
#[test]
fn an_idle_sides_fin_probe_carries_the_fin_before_address_signals() {
    let (mut a, mut b) = acking_every_packet();
    let now = braid_proto::Instant::ZERO;
    b.advertise_address(3, "192.0.2.7:4433".parse().unwrap());
    b.close();
    let sent = exchange(&mut b, &mut a, now);
    let probes: Vec<&Packet> = sent.iter().filter(|p| matches!(p.frame, Frame::Data(_))).collect();
    assert_eq!(probes.len(), 1, "{sent:?}");
    assert_eq!(probes[0].control.as_deref(), Some(&Control::DataFin { dsn: 0 }));
    assert!(a.peer_closed());
    // The advertisement follows on the next packets, until echoed.
    for _ in 0..3 {
        exchange(&mut a, &mut b, now);
        exchange(&mut b, &mut a, now);
    }
    assert!(events(&mut a).iter().any(|e| matches!(e, Event::AddressAdvertised { id: 3, .. })));
}

/// A side that closes its stream and its last subflow (in either order)
/// before the FIN is acknowledged fails after the failure timeout, like
/// one with data waiting and no path; it waited forever with no timer.
/// (Found by the `connection` fuzz target's driver, `tests/driven.rs`.)
#[test]
fn closing_the_last_subflow_before_the_fin_is_acknowledged_fails() {
    for fin_first in [true, false] {
        let (a, mut b) = acking_every_packet();
        let mut now = braid_proto::Instant::ZERO;
        if fin_first {
            b.close();
        }
        b.remove_subflow(braid_proto::SubflowId(0));
        assert!(std::iter::from_fn(|| b.poll_transmit(now)).next().is_none(), "no subflow to send on");
        if !fin_first {
            b.close();
            assert!(b.poll_transmit(now).is_none());
        }
        for _ in 0..3 {
            let Some(t) = b.poll_timeout() else { break };
            now = t;
            b.handle_timeout(now);
        }
        let failed = matches!(b.error(), Some(ConnectionError::AllPathsDown { .. }));
        assert!(failed, "FIN first: {fin_first}; {:?} at {now:?}", b.error());
        assert!(!a.peer_closed());
    }
}
