//! The UDP driver over loopback (127.0.0.0/8 only): real sockets, the
//! wall clock, GSO/GRO where the kernel has them.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use braid_net::{ConnectionHandle, LocalAddr, NetConfig, NetEvent, Node, PathPolicy, Stream};
use braid_proto::Event;
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
