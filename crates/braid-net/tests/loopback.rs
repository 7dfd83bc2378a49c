//! The UDP driver over loopback (127.0.0.0/8 only): real sockets, the
//! wall clock, GSO/GRO where the kernel has them.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use braid_net::{ConnectionHandle, LocalAddr, NetConfig, NetEvent, Node, PathPolicy, Stream};
use braid_proto::{Event, SubflowId};
use sha2::{Digest, Sha256};

fn local(ip: &str) -> (LocalAddr, bool) {
    (LocalAddr { addr: SocketAddr::new(ip.parse().unwrap(), 0), device: None }, false)
}

fn listen(node: &mut Node) -> SocketAddr {
    node.listen(&LocalAddr { addr: "127.0.0.1:0".parse().unwrap(), device: None }).unwrap()
}

/// xorshift bytes: each client's data differs.
fn data(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// What the server got on one connection.
#[derive(Debug)]
struct Received {
    sha256: [u8; 32],
    bytes: u64,
    per_subflow: Vec<u64>,
}

/// Serves until `count` connections have closed their stream, or `limit`
/// passes; answers each close with its own.
fn serve(mut node: Node, count: usize, limit: Duration) -> (Vec<Received>, Node) {
    let start = Instant::now();
    let mut hashes: BTreeMap<ConnectionHandle, (Sha256, u64)> = BTreeMap::new();
    let mut done = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while done.len() < count && start.elapsed() < limit {
        node.drive(Some(Duration::from_millis(50))).unwrap();
        for h in node.handles() {
            let conn = node.connection(h).unwrap();
            let (hash, bytes) = hashes.entry(h).or_insert_with(|| (Sha256::new(), 0));
            loop {
                let n = conn.read(&mut buf);
                if n == 0 {
                    break;
                }
                hash.update(&buf[..n]);
                *bytes += n as u64;
            }
        }
        while let Some((h, e)) = node.poll_event() {
            if e == NetEvent::Protocol(Event::PeerClosed) {
                let conn = node.connection(h).unwrap();
                let mut rest = Vec::new();
                let mut b = [0u8; 4096];
                loop {
                    let n = conn.read(&mut b);
                    if n == 0 {
                        break;
                    }
                    rest.extend_from_slice(&b[..n]);
                }
                conn.close();
                let per_subflow = (0..conn.subflow_count())
                    .map(|i| conn.subflow_stats(i).map_or(0, |s| s.counters.bytes_received_new))
                    .collect();
                let (mut hash, bytes) = hashes.remove(&h).unwrap_or_else(|| (Sha256::new(), 0));
                hash.update(&rest);
                done.push(Received { sha256: hash.finalize().into(), bytes: bytes + rest.len() as u64, per_subflow });
            }
        }
    }
    // Let the final acknowledgements out.
    let until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < until {
        node.drive(Some(Duration::from_millis(20))).unwrap();
    }
    (done, node)
}

fn send(addr: SocketAddr, locals: &[(LocalAddr, bool)], payload: &[u8]) -> [u8; 32] {
    let mut s = Stream::connect(addr, locals, PathPolicy::FullMesh, NetConfig::default()).unwrap();
    for chunk in payload.chunks(100_000) {
        s.write_all(chunk).unwrap();
    }
    s.finish().unwrap();
    Sha256::digest(payload).into()
}

#[test]
fn two_subflows_deliver_every_byte() {
    let mut server = Node::new(NetConfig::default());
    let addr = listen(&mut server);
    let t = std::thread::spawn(move || serve(server, 1, Duration::from_secs(60)));
    let payload = data(1, 30_000_000);
    let sent = send(addr, &[local("127.0.0.1"), local("127.0.0.2")], &payload);
    let (got, node) = t.join().unwrap();
    assert_eq!(got.len(), 1, "the connection completed");
    assert_eq!(got[0].bytes, payload.len() as u64);
    assert_eq!(got[0].sha256, sent);
    assert_eq!(got[0].per_subflow.len(), 2, "one subflow per local address");
    assert!(got[0].per_subflow.iter().all(|&b| b > 0), "both subflows carried data: {:?}", got[0].per_subflow);
    let stats = node.stats();
    assert_eq!(stats.endpoint.accepted, 1);
    assert!(stats.sent.datagrams > 0 && stats.received > 0);
}

/// A write that found the send buffer full returns, as a blocking write
/// on a Linux socket does, only once a third of the buffer is free, and
/// then takes all of that room: not one write per acknowledgement.
#[test]
fn a_blocked_write_waits_for_a_third_of_the_buffer() {
    let mut server = Node::new(NetConfig::default());
    let addr = listen(&mut server);
    let t = std::thread::spawn(move || serve(server, 1, Duration::from_secs(60)));
    let mut s = Stream::connect(addr, &[local("127.0.0.1")], PathPolicy::FullMesh, NetConfig::default()).unwrap();
    let capacity = s.conn().unwrap().stats().send_buffer as usize;
    let chunk = vec![7u8; 2 * capacity];
    let mut writes = Vec::new();
    let mut total = 0;
    while total < 6 * capacity {
        let n = s.write(&chunk).unwrap();
        writes.push(n);
        total += n;
    }
    s.finish().unwrap();
    let (got, _) = t.join().unwrap();
    assert_eq!(got[0].bytes, total as u64);
    println!("{capacity} B buffer: writes of {writes:?} B");
    assert_eq!(writes[0], capacity, "the first write fills the empty buffer");
    assert!(writes[1..].iter().all(|&n| n >= capacity / 3), "{writes:?}");
}

#[test]
fn one_port_serves_concurrent_clients() {
    let mut server = Node::new(NetConfig::default());
    let addr = listen(&mut server);
    let t = std::thread::spawn(move || serve(server, 8, Duration::from_secs(60)));
    let clients: Vec<_> = (0..8u64)
        .map(|k| {
            std::thread::spawn(move || {
                let payload = data(100 + k, 1_000_000 + k as usize * 10_000);
                send(addr, &[local("127.0.0.1")], &payload)
            })
        })
        .collect();
    let mut sent: Vec<[u8; 32]> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let (got, node) = t.join().unwrap();
    let mut received: Vec<[u8; 32]> = got.iter().map(|r| r.sha256).collect();
    sent.sort();
    received.sort();
    assert_eq!(received, sent, "every client's bytes arrived intact, each on its own connection");
    assert_eq!(node.stats().endpoint.accepted, 8);
}

/// A client's sockets accept no connections: a Hello sent to one (anyone
/// who sees the client's packets knows its address) goes unanswered. Any
/// node used to answer openings on any socket, and `braid send` ended when
/// such a stranger's connection failed.
#[test]
fn a_client_node_accepts_no_connection() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut client = Node::new(NetConfig::default());
    let h = client.connect(silent.local_addr().unwrap(), &[local("127.0.0.1")], PathPolicy::FullMesh).unwrap();
    let (victim, _) = client.subflow_addrs(h, SubflowId(0)).unwrap();
    let mut stranger = Node::new(NetConfig::default());
    let s = stranger.connect(victim, &[local("127.0.0.1")], PathPolicy::FullMesh).unwrap();
    let until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < until {
        stranger.drive(Some(Duration::from_millis(5))).unwrap();
        client.drive(Some(Duration::from_millis(5))).unwrap();
    }
    let stats = client.stats().endpoint;
    assert!(stats.datagrams > 0, "the opening arrived");
    assert_eq!((stats.replies, stats.accepted), (0, 0), "and was not answered");
    assert!(std::iter::from_fn(|| client.poll_event()).all(|(c, _)| c == h), "no other connection");
    assert!(!stranger.connection(s).unwrap().subflow_stats(0).unwrap().established);
}

/// A connection to an address where nobody answers fails after the
/// failure timeout instead of waiting forever for its opening.
#[test]
fn connecting_to_nobody_fails_after_the_timeout() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let mut config = NetConfig::default();
    config.connection.failure_timeout = braid_proto::Duration::from_secs(1);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Stream::connect(addr, &[local("127.0.0.1")], PathPolicy::FullMesh, config);
        let _ = tx.send(r.map(|_| ()).map_err(|e| e.to_string()));
    });
    let r = rx.recv_timeout(Duration::from_secs(20)).expect("connect returned within 20 s");
    let e = r.expect_err("nobody answered");
    assert!(e.contains("no answer to the opening for 1.000 s"), "{e}");
}
