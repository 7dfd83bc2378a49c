//! Every byte written arrives once, in order, unchanged.

mod common;

use common::simulate;

/// Issue 8's smallest case: with an autotuned send buffer the application
/// writes chunks of arbitrary size, and the payload verifier used to lose
/// its place in the byte stream (123,729 of 200,000 bytes "corrupted").
#[test]
fn autotuned_send_buffer_delivers_intact() {
    let s = simulate(
        r#"
        duration = "300s"
        [topology]
        kind = "hybrid-access"
        [[topology.link]]
        name = "P1"
        rate = "100Mbit"
        rtt = "10ms"
        queue = "3bdp"
        [[topology.link]]
        name = "P2"
        rate = "5Mbit"
        rtt = "10ms"
        queue = "3bdp"
        [[flow]]
        cc = "lia"
        scheduler = "ecf"
        size = "200KB"
        verify_payload = true
        recv_buffer = "64KiB"
        send_buffer = "auto"
        "#,
    );
    let f = &s.flows[0];
    assert!(f.completion_time_s.is_some(), "transfer did not complete");
    assert_eq!(f.bytes_delivered, 200_000);
    assert_eq!(f.corrupted_bytes, 0);
    assert!(f.send_buffer_bytes > 64 * 1024, "the send buffer grew, so writes came in odd sizes");
}

/// Issue 11's wire mode: every packet travels as the bytes of the wire
/// format and is decoded by the receiver. The transfer arrives intact, and
/// at nearly the rate of the struct mode: a full segment makes a datagram
/// of about 1500 bytes with its IPv4 and UDP headers, as a TCP segment
/// does (the link is charged the bytes a synthetic payload stands for).
#[test]
fn the_wire_format_carries_a_lossy_multipath_transfer() {
    let toml = |wire: bool| {
        format!(
            r#"
            duration = "60s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            rate = "40Mbit"
            rtt = "10ms"
            loss = "1%"
            [[topology.link]]
            rate = "20Mbit"
            rtt = "60ms"
            [[flow]]
            cc = "olia"
            size = "10MB"
            verify_payload = true
            wire = {wire}
            [[flow]]
            name = "bulk"
            cc = "lia"
            wire = {wire}
            "#
        )
    };
    let (plain, wired) = (simulate(&toml(false)), simulate(&toml(true)));
    let f = &wired.flows[0];
    println!("10 MB: {:?} s plain, {:?} s wire format", plain.flows[0].completion_time_s, f.completion_time_s);
    assert_eq!((f.bytes_delivered, f.corrupted_bytes), (10_000_000, 0));
    let (a, b) = (plain.flows[1].goodput_mbps, wired.flows[1].goodput_mbps);
    assert!((b / a - 1.0).abs() < 0.05, "bulk goodput {b:.2} Mbit/s in wire format vs {a:.2}");
}
