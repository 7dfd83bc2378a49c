//! Opening and joining (RFC 8684 §3.1–3.2 semantics): keys exchanged on
//! the first subflow, joins authenticated by HMACs over both keys and both
//! nonces, forged and replayed joins refused.

mod common;

use braid_proto::crypto::{token, RustCrypto};
use braid_proto::{Config, Connection, Control, DataFrame, Event, Frame, Instant, Packet, SubflowId};

const T0: Instant = Instant::ZERO;

fn deliver(from: &mut Connection, to: &mut Connection) -> Vec<Packet> {
    let mut sent = Vec::new();
    while let Some(p) = from.poll_transmit(T0) {
        sent.push(p.clone());
        to.handle_datagram(T0, p).expect("well-formed");
    }
    sent
}

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// Joins wait until the server has acknowledged an `Establish` (it may
/// have answered the opening without state, and then holds no connection
/// before that), as Linux joins once the connection is fully established.
#[test]
fn keys_on_the_first_subflow_then_authenticated_joins() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 3);
    a.write(b"hello");
    let hello = deliver(&mut a, &mut b);
    assert_eq!(hello.len(), 1, "only the first subflow opens: {hello:?}");
    assert!(matches!(hello[0].control.as_deref(), Some(Control::Hello { key: 0x1111 })));
    assert_eq!(hello[0].cid, 0, "the server's token is not known yet");
    let reply = deliver(&mut b, &mut a);
    assert!(matches!(reply[0].control.as_deref(), Some(Control::HelloReply { key: 0x2222, .. })));
    assert_eq!(reply[0].cid, token(&RustCrypto, 0x1111), "packets to the client carry its token");
    // Data on the first subflow carries both keys; nothing joins yet.
    let next = deliver(&mut a, &mut b);
    assert!(next.iter().all(|p| p.cid == b.token()));
    let data = next.iter().find(|p| p.subflow == SubflowId(0)).expect("data on subflow 0");
    assert!(matches!(data.control.as_deref(), Some(Control::Establish { client_key: 0x1111, server_key: 0x2222, .. })));
    assert_eq!(joins(&next), [], "no join before the server confirmed");
    // The server's acknowledgement confirms the connection: the others join.
    deliver(&mut b, &mut a);
    assert_eq!(joins(&deliver(&mut a, &mut b)), [1, 2]);
    for _ in 0..4 {
        deliver(&mut b, &mut a);
        deliver(&mut a, &mut b);
    }
    for i in 0..3 {
        assert!(a.subflow_stats(i).unwrap().established, "client subflow {i}");
        assert!(b.subflow_stats(i).unwrap().established, "server subflow {i}");
    }
    let opened = |e: &[Event]| e.iter().filter(|e| matches!(e, Event::SubflowEstablished { .. })).count();
    assert_eq!((opened(&events(&mut a)), opened(&events(&mut b))), (3, 3));
    let mut buf = [0u8; 16];
    let n = b.read(&mut buf);
    assert_eq!(&buf[..n], b"hello");
}

/// With `Config::early_joins` (a server that keeps state from the
/// opening, as the simulator's does) the others join as soon as the
/// server's key is known, beside the first `Establish`.
#[test]
fn early_joins_go_out_with_the_establish() {
    let (mut a, mut b) = common::pair(Config { early_joins: true, ..Config::default() }, "lia", "minrtt", 3);
    a.write(b"hello");
    deliver(&mut a, &mut b);
    deliver(&mut b, &mut a);
    let next = deliver(&mut a, &mut b);
    assert!(next.iter().any(|p| matches!(p.control.as_deref(), Some(Control::Establish { .. }))));
    assert_eq!(joins(&next), [1, 2]);
}

/// The subflows the `Join`s among `sent` open.
fn joins(sent: &[Packet]) -> Vec<u8> {
    sent.iter().filter(|p| matches!(p.control.as_deref(), Some(Control::Join { .. }))).map(|p| p.subflow.0).collect()
}

/// A third party that saw the server's token on the wire (but has no key)
/// sends a join and data with a made-up HMAC: the subflow never opens, its
/// data is never acknowledged or delivered, and the subflow is reset (RFC
/// 8684 §3.2), once.
#[test]
fn a_forged_join_is_refused() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 1);
    common::open(&mut a, &mut b, T0);
    let cid = b.token();
    let probe = |pn: u64, dsn: u64, len: u32, control: Control| Packet {
        cid,
        subflow: SubflowId(7),
        frame: Frame::Data(DataFrame { pn, pn_floor: 0, dsn, len, payload: vec![0xee; len as usize] }),
        control: Some(Box::new(control)),
    };
    let join = probe(0, 0, 0, Control::Join { token: cid, nonce: 42, backup: false });
    b.handle_datagram(T0, join).unwrap();
    let answers: Vec<Packet> = std::iter::from_fn(|| b.poll_transmit(T0)).collect();
    assert!(matches!(answers.as_slice(), [p] if matches!(p.control.as_deref(), Some(Control::JoinReply { .. }))));
    let taken = |r: Result<bool, _>| r.expect("well-formed");
    assert!(!taken(b.handle_datagram(T0, probe(1, 0, 100, Control::JoinAck { mac: [7; 32], echo: 0 }))), "ignored");
    assert!(!taken(
        b.handle_datagram(T0, probe(2, 100, 100, Control::Establish { client_key: 1, server_key: 2, echo: 0 }))
    ));
    assert!(!b.subflow_stats(7).unwrap().established);
    assert_eq!(b.readable(), 0, "nothing of the forged data is delivered");
    let resets_only = |b: &mut Connection, slot: u8| {
        let sent: Vec<Packet> = std::iter::from_fn(|| b.poll_transmit(T0)).collect();
        let reset = |p: &Packet| {
            p.subflow == SubflowId(slot)
                && p.control.as_deref() == Some(&Control::SubflowReset)
                && matches!(&p.frame, Frame::Ack(a) if a.cumulative == 0 && a.sack_len == 0)
        };
        assert!(matches!(sent.as_slice(), [p] if reset(p)), "one reset, nothing acknowledged: {sent:?}");
    };
    resets_only(&mut b, 7);
    assert!(b.stats().invalid_packets >= 1);
    // A join naming another connection's token opens nothing at all.
    let wrong =
        Packet { subflow: SubflowId(8), ..probe(0, 0, 0, Control::Join { token: 99, nonce: 1, backup: false }) };
    b.handle_datagram(T0, wrong).unwrap();
    assert!(b.subflow_stats(8).is_none_or(|s| !s.established));
    resets_only(&mut b, 8);
}

/// A recorded valid join, replayed (on the same or another subflow): the
/// server answers with a fresh nonce, so the recorded HMAC-A no longer
/// matches and the replay carries no data.
#[test]
fn a_replayed_join_is_refused() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    a.write(&[1; 3000]);
    let mut recorded = Vec::new();
    for _ in 0..4 {
        recorded.extend(deliver(&mut a, &mut b));
        deliver(&mut b, &mut a);
    }
    assert!(b.subflow_stats(1).unwrap().established, "the real join worked");
    let find =
        |f: fn(&Control) -> bool| recorded.iter().find(|p| p.control.as_deref().is_some_and(f)).cloned().unwrap();
    let (mut join, mut join_ack) =
        (find(|c| matches!(c, Control::Join { .. })), find(|c| matches!(c, Control::JoinAck { .. })));
    assert_eq!((join.subflow, join_ack.subflow), (SubflowId(1), SubflowId(1)));
    // Replayed as they were: subflow 1 is open, nothing changes.
    let before = b.stats().bytes_received;
    b.handle_datagram(T0, join.clone()).unwrap();
    // Replayed on a subflow the client never opened.
    join.subflow = SubflowId(5);
    join_ack.subflow = SubflowId(5);
    b.handle_datagram(T0, join).unwrap();
    b.handle_datagram(T0, join_ack).unwrap();
    assert!(!b.subflow_stats(5).unwrap().established);
    assert_eq!(b.stats().bytes_received, before, "the replayed data is not taken");
    assert!(b.stats().invalid_packets >= 1);
    // The join whose HMAC failed is reset (RFC 8684 §3.2).
    let sent: Vec<Packet> = std::iter::from_fn(|| b.poll_transmit(T0)).collect();
    let reset = |p: &Packet| p.subflow == SubflowId(5) && p.control.as_deref() == Some(&Control::SubflowReset);
    assert!(sent.iter().any(reset), "{sent:?}");
}

/// A server that answers a join with a MAC made without the keys is not the
/// server the connection was opened with: the client closes that subflow.
#[test]
fn a_forged_join_reply_closes_the_subflow() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    a.write(&[1; 100]);
    for _ in 0..2 {
        deliver(&mut a, &mut b);
        deliver(&mut b, &mut a);
    }
    let sent = deliver(&mut a, &mut b);
    assert_eq!(joins(&sent), [1]);
    let forged = Packet {
        cid: 0,
        subflow: SubflowId(1),
        frame: Frame::Ack(braid_proto::AckFrame {
            cumulative: 1,
            sack: [(0, 0); 3],
            sack_len: 0,
            data_ack: 0,
            window_end: 1 << 20,
        }),
        control: Some(Box::new(Control::JoinReply { mac: [0; 8], nonce: 5, stamp: 0 })),
    };
    a.handle_datagram(T0, forged).unwrap();
    assert!(!a.subflow_stats(1).unwrap().established);
    assert!(a.stats().invalid_packets >= 1);
    a.write(&[2; 5000]);
    assert!(std::iter::from_fn(|| a.poll_transmit(T0)).all(|p| p.subflow != SubflowId(1)), "subflow 1 is closed");
}

/// A join that never completes (a third party that knows the token, or a
/// client that went away) holds its subflow slot only for a while, and a
/// new join on that subflow id takes the slot over at once: a forger cannot
/// lock the real client out of a subflow id.
#[test]
fn a_half_open_join_gives_its_slot_back() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    let cid = b.token();
    a.write(&[1; 3000]);
    // The first subflow opens; the forger starts a join on subflow 1 first.
    deliver(&mut a, &mut b);
    deliver(&mut b, &mut a);
    let forged = Packet {
        cid,
        subflow: SubflowId(1),
        frame: Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 0, payload: vec![] }),
        control: Some(Box::new(Control::Join { token: cid, nonce: 42, backup: false })),
    };
    assert!(b.handle_datagram(T0, forged.clone()).unwrap(), "a join is taken (and answered)");
    while b.poll_transmit(T0).is_some() {}
    let expiry = b.poll_timeout().expect("the half-open join expires");
    assert!(expiry <= T0 + Config::default().failure_timeout);
    b.handle_timeout(expiry);
    assert!(b.subflow_stats(1).is_none_or(|s| !s.established));
    assert!(b.poll_timeout().is_none_or(|t| t > expiry), "nothing left to expire");
    // Held again by the forger, the slot goes to the real client's join.
    b.handle_datagram(expiry, forged).unwrap();
    for _ in 0..4 {
        deliver(&mut a, &mut b);
        deliver(&mut b, &mut a);
    }
    assert!(a.subflow_stats(1).unwrap().established && b.subflow_stats(1).unwrap().established);
}

/// On the client, a joining subflow opens only with the server's reply:
/// data arriving there before it (a third party that knows the client's
/// token) is dropped, neither delivered nor acknowledged.
#[test]
fn a_joining_subflow_takes_nothing_before_the_reply() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    a.write(b"hi");
    deliver(&mut a, &mut b); // Hello
    deliver(&mut b, &mut a); // HelloReply
    deliver(&mut a, &mut b); // data with Establish
    deliver(&mut b, &mut a); // its acknowledgement
    assert_eq!(joins(&deliver(&mut a, &mut b)), [1]);
    let forged = Packet {
        cid: a.token(),
        subflow: SubflowId(1),
        frame: Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 3, payload: b"bad".to_vec() }),
        control: None,
    };
    assert!(!a.handle_datagram(T0, forged).expect("well-formed"), "dropped");
    assert_eq!(a.readable(), 0);
    assert!(!a.subflow_stats(1).unwrap().established);
}

/// A Hello opening a second subflow (a client re-opening after its first
/// path died, not knowing whether the server kept the connection) is
/// accepted when it carries the connection's key and refused with another;
/// a client never accepts a subflow its peer opens.
#[test]
fn a_second_hello_opens_a_subflow_only_with_the_connections_key() {
    let (mut a, mut b) = common::pair(Config::default(), "reno", "minrtt", 1);
    common::open(&mut a, &mut b, T0);
    let server = b.token();
    let hello = |key: u64, slot: u8| Packet {
        cid: server,
        subflow: SubflowId(slot),
        frame: Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 0, payload: Vec::new() }),
        control: Some(Box::new(Control::Hello { key })),
    };
    let (same, other) = (hello(0x1111, 1), hello(0x7777, 2));
    assert_eq!(b.handle_datagram(T0, other), Ok(false), "another key");
    assert_eq!(b.subflow_count(), 1);
    assert_eq!(b.handle_datagram(T0, same), Ok(true), "the connection's key");
    assert_eq!(b.subflow_count(), 2);
    // The same from the server's side to the client: refused.
    let to_client =
        Packet { cid: a.token(), control: Some(Box::new(Control::Hello { key: 0x2222 })), ..hello(0x2222, 3) };
    assert_eq!(a.handle_datagram(T0, to_client), Ok(false));
    assert_eq!(a.subflow_count(), 1);
}

/// A slot a half-open join gave back is vacant again: a Hello with the
/// connection's key may open it; a closed subflow's slot is not re-opened.
#[test]
fn a_hello_may_open_a_slot_given_back() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 1);
    common::open(&mut a, &mut b, T0);
    let cid = b.token();
    let data = || Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 0, payload: vec![] });
    let join = Packet {
        cid,
        subflow: SubflowId(1),
        frame: data(),
        control: Some(Box::new(Control::Join { token: cid, nonce: 42, backup: false })),
    };
    assert!(b.handle_datagram(T0, join).unwrap());
    while b.poll_transmit(T0).is_some() {}
    let expiry = b.poll_timeout().expect("the half-open join expires");
    b.handle_timeout(expiry);
    let hello = |slot: u8| Packet {
        cid,
        subflow: SubflowId(slot),
        frame: data(),
        control: Some(Box::new(Control::Hello { key: 0x1111 })),
    };
    assert_eq!(b.handle_datagram(expiry, hello(1)), Ok(true), "the vacant slot opens");
    b.remove_subflow(SubflowId(1));
    assert_eq!(b.handle_datagram(expiry, hello(1)), Ok(false), "a closed slot stays closed");
}

/// The client's confirmation of a join (MPTCP's third ACK, `JoinAck` on a
/// probe of its own) is lost on a subflow with no data to carry it: when
/// the retransmission timer fires it goes out again, and the server opens
/// the subflow. (Taken for a lost zero-window probe, it was never re-sent,
/// and the server, still waiting, dropped everything on the subflow.)
#[test]
fn a_lost_join_confirmation_is_sent_again() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    let mut now = T0;
    let mut lost = 0;
    let exchange = |a: &mut Connection, b: &mut Connection, now: Instant, lost: &mut usize| {
        while let Some(p) = a.poll_transmit(now) {
            if p.subflow == SubflowId(1) && matches!(p.control.as_deref(), Some(Control::JoinAck { .. })) && *lost == 0
            {
                *lost += 1;
                continue;
            }
            b.handle_datagram(now, p).expect("well-formed");
        }
        while let Some(p) = b.poll_transmit(now) {
            a.handle_datagram(now, p).expect("well-formed");
        }
    };
    for _ in 0..4 {
        exchange(&mut a, &mut b, now, &mut lost);
    }
    assert_eq!(lost, 1, "the confirmation went out once and was lost");
    assert!(a.subflow_stats(1).unwrap().established, "the client opened subflow 1 on the reply");
    assert!(b.subflow_stats(1).is_none_or(|s| !s.established), "the server waits for the confirmation");
    // Time passes: the client's timers fire and it sends what is due.
    for _ in 0..3 {
        let Some(t) = a.poll_timeout() else { break };
        now = now.max(t);
        a.handle_timeout(now);
        exchange(&mut a, &mut b, now, &mut lost);
    }
    assert!(b.subflow_stats(1).unwrap().established, "the server opened subflow 1 on the re-sent confirmation");
}

/// A server with data waiting whose only path died, holding a slot a late
/// `Hello` opened (waiting for an `Establish` that never comes: the client
/// gave that subflow up), fails after the failure timeout like any
/// connection without a usable path. It waited forever: the half-open slot
/// counted as a path still trying, though only a client retries. (Found by
/// the `connection` fuzz target's driver, `tests/driven.rs`.)
#[test]
fn a_half_open_slot_does_not_keep_a_stuck_server_alive() {
    let config = Config { failure_timeout: braid_proto::Duration::from_secs(20), ..Config::default() };
    let (mut a, mut b) = common::pair(config, "reno", "minrtt", 1);
    common::open(&mut a, &mut b, T0);
    b.write(b"the client never gets this");
    let late_hello = Packet {
        cid: b.token(),
        subflow: SubflowId(1),
        frame: Frame::Data(DataFrame { pn: 0, pn_floor: 0, dsn: 0, len: 0, payload: Vec::new() }),
        control: Some(Box::new(Control::Hello { key: 0x1111 })),
    };
    assert_eq!(b.handle_datagram(T0, late_hello), Ok(true));
    // Everything the server sends from now on is lost.
    let mut now = T0;
    while b.error().is_none() && now < T0 + braid_proto::Duration::from_secs(600) {
        while b.poll_transmit(now).is_some() {}
        let Some(next) = b.poll_timeout() else { break };
        now = next.max(now);
        b.handle_timeout(now);
    }
    assert!(matches!(b.error(), Some(braid_proto::ConnectionError::AllPathsDown { .. })), "{:?} at {now:?}", b.error());
}

/// A subflow the server closed is reset when the client uses it (TCP's
/// RST on a subflow, RFC 8684's MP_TCPRST): the client closes its end and
/// the data goes on the other subflow, with no timeout. (Nothing told the
/// client: it waited for timeouts, and a FIN sent alone on that subflow
/// was never acknowledged. Found by the `connection` fuzz target's
/// driver, `tests/driven.rs`.)
#[test]
fn a_subflow_closed_at_one_end_is_reset_at_the_other() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    common::open(&mut a, &mut b, T0);
    b.remove_subflow(SubflowId(0));
    let data = vec![5u8; 100_000];
    a.write(&data);
    a.close();
    let mut got = Vec::new();
    let done = common::drive(
        &mut a,
        &mut b,
        10,
        10_000,
        |a, b| {
            common::read_all(b, &mut got);
            a.is_finished() || got.len() == data.len() && b.peer_closed()
        },
        |_, _, _| false,
    );
    let at = done.expect("delivered and closed");
    assert!(got == data);
    assert!(at < T0 + braid_proto::Duration::from_millis(500), "no timeout waited for: {at:?}");
    assert!(events(&mut a).contains(&Event::SubflowReset { subflow: SubflowId(0) }));
    assert!(!a.subflow_stats(0).unwrap().established, "closed at the client too");
    assert_eq!(a.subflow_stats(0).unwrap().counters.rtos, 0);
}

/// A client with nothing to send confirms the connection on a probe of its
/// own, and its path dies just after the server took it. The confirmation
/// is never acknowledged, and a lone probe's timeout says nothing about
/// the path, so a client that waited for the acknowledgement before
/// joining would never open its other subflow: once the probe has timed
/// out, the other subflow joins, and the server's data arrives over it.
#[test]
fn a_silent_client_joins_once_its_confirmation_timed_out() {
    let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 2);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 249) as u8).collect();
    assert_eq!(b.write(&data), data.len());
    let mut path0_dead = false;
    let drop = |_, to_b: bool, p: &Packet| {
        if p.subflow != SubflowId(0) {
            return false;
        }
        let lost = path0_dead;
        path0_dead |= to_b && matches!(p.control.as_deref(), Some(Control::Establish { .. }));
        lost
    };
    let mut got = Vec::new();
    let done = |a: &mut Connection, _: &mut Connection| {
        common::read_all(a, &mut got);
        got.len() == data.len()
    };
    let end = common::drive(&mut a, &mut b, 10, 60_000, done, drop).expect("the server's data arrives");
    assert!(got == data);
    assert!(a.subflow_stats(1).unwrap().established && b.subflow_stats(1).unwrap().established);
    println!("delivered by {end:?}");
}

/// The server's first RTT sample is the time since its reply less what the
/// client says it held the reply (`echo`), which nothing authenticates: an
/// echo claiming a reply from over a minute ago, or from the future (the
/// microsecond clock wraps), gives no sample, and one claiming the reply
/// was sent when it was received gives the smallest sample, 1 us, not 0.
#[test]
fn an_implausible_echo_gives_no_rtt_sample() {
    let at = |ms: u64| T0 + braid_proto::Duration::from_millis(ms);
    let srtt_after = |shift: fn(u32) -> u32| {
        let (mut a, mut b) = common::pair(Config::default(), "lia", "minrtt", 1);
        a.write(b"hello");
        for p in std::iter::from_fn(|| a.poll_transmit(at(0))).collect::<Vec<_>>() {
            b.handle_datagram(at(10), p).expect("well-formed");
        }
        for p in std::iter::from_fn(|| b.poll_transmit(at(10))).collect::<Vec<_>>() {
            a.handle_datagram(at(20), p).expect("well-formed");
        }
        for mut p in std::iter::from_fn(|| a.poll_transmit(at(20))).collect::<Vec<_>>() {
            if let Some(Control::Establish { echo, .. }) = p.control.as_deref_mut() {
                *echo = shift(*echo);
            }
            b.handle_datagram(at(30), p).expect("well-formed");
        }
        assert!(b.subflow_stats(0).unwrap().established);
        b.subflow_stats(0).unwrap().srtt
    };
    let us = braid_proto::Duration::from_micros;
    assert_eq!(srtt_after(|e| e), Some(us(20_000)), "the reply left at 10 ms, the Establish arrived at 30");
    assert_eq!(srtt_after(|e| e.wrapping_sub(59_000_000)), Some(us(59_020_000)), "a minute less a second");
    assert_eq!(srtt_after(|e| e.wrapping_sub(61_000_000)), None, "over a minute");
    assert_eq!(srtt_after(|e| e.wrapping_add(21_000)), None, "from the future");
    assert_eq!(srtt_after(|e| e.wrapping_add(20_000)), Some(us(1)), "no time at all: 1 us");
}
