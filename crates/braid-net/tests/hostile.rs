//! Hostile input at a live server over loopback. In a test binary of its
//! own, so the process's memory reading is not disturbed by other tests
//! running beside it.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use braid_net::{LocalAddr, NetConfig, Node};

fn listen(node: &mut Node) -> SocketAddr {
    node.listen(&LocalAddr { addr: "127.0.0.1:0".parse().unwrap(), device: None }).unwrap()
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?.trim().parse().ok()).unwrap()
}

/// 100,000 random datagrams (half with a valid version byte) at a live
/// server: nothing panics, no connection appears, no answer is sent, and
/// memory stays flat.
#[test]
fn random_datagrams_at_a_live_server_create_nothing() {
    let mut server = Node::new(NetConfig::default());
    let addr = listen(&mut server);
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    attacker.set_nonblocking(true).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut buf = Vec::new();
    let mut rss_after_warmup = 0;
    for k in 0..100_000u64 {
        buf.clear();
        let n = (next() % 1400) as usize;
        buf.extend((0..n).map(|_| next() as u8));
        if k % 2 == 0 && n > 0 {
            buf[0] = 0x20 | (buf[0] & 0x1f);
        }
        attacker.send_to(&buf, addr).unwrap();
        if k % 500 == 499 {
            // Let the server take them all before sending more.
            let deadline = Instant::now() + Duration::from_secs(5);
            while server.stats().received < k + 1 && Instant::now() < deadline {
                server.drive(Some(Duration::from_millis(100))).unwrap();
            }
        }
        if k == 10_000 {
            rss_after_warmup = rss_kb();
        }
    }
    let stats = server.stats();
    assert_eq!(stats.received, 100_000, "every datagram was handled");
    assert_eq!(stats.endpoint.accepted, 0);
    assert!(server.handles().is_empty(), "no state");
    assert_eq!(stats.sent.datagrams, 0, "nothing answered");
    let mut reply = [0u8; 2048];
    assert!(attacker.recv_from(&mut reply).is_err(), "nothing arrived back");
    let growth = rss_kb().saturating_sub(rss_after_warmup);
    assert!(growth < 1024, "memory grew by {growth} kB over 90,000 datagrams");
    println!("{stats:?}, memory growth {growth} kB");
}
