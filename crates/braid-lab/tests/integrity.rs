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
