//! A forged join, for the end-to-end tests (`scripts/net-e2e.sh`): an
//! attacker that knows a live connection's token (as an on-path observer
//! would) but not its keys tries to add a subflow. It sends `Join` on a
//! fresh subflow, answers the server's `JoinReply` with a wrong HMAC
//! (`JoinAck`) and pushes data on the subflow. The server must refuse the
//! subflow and never deliver the data; replies must never be larger than
//! the packets that caused them.
//!
//! ```sh
//! cargo run --release -p braid-net --example forge_join -- SERVER:PORT TOKEN_HEX [ROUNDS]
//! ```
//!
//! Prints one line: `forged joins: R rounds, S datagrams sent, A answers,
//! largest answer B bytes for a request of Q bytes`.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use braid_proto::packet::{Control, DataFrame, Frame, Packet, SubflowId};
use braid_proto::wire;

/// A fresh subflow id: the legitimate client uses the lowest ones.
const SUBFLOW: SubflowId = SubflowId(7);

fn data(token: u64, pn: u64, control: Control, payload: &[u8]) -> Vec<u8> {
    let frame = DataFrame { pn, pn_floor: 0, dsn: 0, len: payload.len() as u32, payload: payload.to_vec() };
    let packet = Packet { cid: token, subflow: SUBFLOW, frame: Frame::Data(frame), control: Some(Box::new(control)) };
    let mut bytes = Vec::new();
    wire::encode(&packet, &mut bytes);
    bytes
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: forge_join SERVER:PORT TOKEN_HEX [ROUNDS]";
    let server: SocketAddr = args.next().ok_or(usage)?.parse().map_err(|e| format!("SERVER:PORT: {e}"))?;
    let token = u64::from_str_radix(&args.next().ok_or(usage)?, 16).map_err(|e| format!("TOKEN_HEX: {e}"))?;
    let rounds: u64 = args.next().map_or(Ok(20), |r| r.parse()).map_err(|e| format!("ROUNDS: {e}"))?;

    let any: SocketAddr = if server.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().expect("literal");
    let socket = UdpSocket::bind(any).map_err(|e| format!("bind: {e}"))?;
    socket.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
    let (mut sent, mut answers, mut largest, mut request) = (0u64, 0u64, 0usize, 0usize);
    let mut buf = [0u8; 65536];
    for round in 0..rounds {
        // A fresh nonce each round, and data after the bad MAC.
        let join = data(token, 2 * round, Control::Join { token, nonce: 0x5eed ^ round, backup: false }, &[]);
        let ack =
            data(token, 2 * round + 1, Control::JoinAck { mac: [0xa5; 32], echo: 0 }, b"forged bytes, never delivered");
        for datagram in [&join, &ack] {
            socket.send_to(datagram, server).map_err(|e| format!("send to {server}: {e}"))?;
            sent += 1;
            request = request.max(datagram.len());
        }
        while let Ok((n, _)) = socket.recv_from(&mut buf) {
            answers += 1;
            largest = largest.max(n);
        }
    }
    println!(
        "forged joins: {rounds} rounds, {sent} datagrams sent, {answers} answers, largest answer {largest} bytes for a request of {request} bytes"
    );
    Ok(())
}
