//! A Braid transfer over loopback with two subflows: a server thread
//! drives a [`Node`] and reads every connection it accepts; the client is
//! a blocking [`Stream`] that sends from two local addresses (127.0.0.1 and
//! 127.0.0.2, both loopback), so the full-mesh path manager opens one
//! subflow from each.
//!
//! ```sh
//! cargo run --release -p braid-net --example transfer -- 50000000
//! ```

use std::io::Write;
use std::net::SocketAddr;

use braid_net::{LocalAddr, NetConfig, NetEvent, Node, PathPolicy, Stream};
use braid_proto::Event;

fn main() -> std::io::Result<()> {
    let bytes: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000_000);

    // The server: accept, read until the peer closes, then close too.
    let mut server = Node::new(NetConfig::default());
    let addr = server.listen(&LocalAddr { addr: "127.0.0.1:0".parse().unwrap(), device: None })?;
    let reader = std::thread::spawn(move || -> std::io::Result<(u64, Vec<u64>)> {
        let mut got = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            server.drive(None)?;
            for h in server.handles() {
                let conn = server.connection(h).expect("listed");
                loop {
                    let n = conn.read(&mut buf);
                    if n == 0 {
                        break;
                    }
                    got += n as u64;
                }
            }
            while let Some((h, e)) = server.poll_event() {
                if e == NetEvent::Protocol(Event::PeerClosed) {
                    let conn = server.connection(h).expect("open");
                    conn.close();
                    let per_subflow = (0..conn.subflow_count())
                        .map(|i| conn.subflow_stats(i).map_or(0, |s| s.counters.bytes_received_new))
                        .collect();
                    return Ok((got, per_subflow));
                }
            }
        }
    });

    // The client: two local addresses, one subflow from each.
    let local = |ip: &str| (LocalAddr { addr: SocketAddr::new(ip.parse().unwrap(), 0), device: None }, false);
    let started = std::time::Instant::now();
    let mut stream =
        Stream::connect(addr, &[local("127.0.0.1"), local("127.0.0.2")], PathPolicy::FullMesh, NetConfig::default())?;
    let chunk: Vec<u8> = (0..1 << 16).map(|i| (i * 7) as u8).collect();
    let mut sent = 0;
    while sent < bytes {
        let n = (bytes - sent).min(chunk.len());
        stream.write_all(&chunk[..n])?;
        sent += n;
    }
    stream.finish()?;
    let secs = started.elapsed().as_secs_f64();
    let (got, per_subflow) = reader.join().expect("server thread")?;
    println!(
        "sent {sent} bytes, the server read {got} in {secs:.2} s ({:.0} Mbit/s); per subflow: {per_subflow:?}",
        got as f64 * 8.0 / secs / 1e6
    );
    Ok(())
}
