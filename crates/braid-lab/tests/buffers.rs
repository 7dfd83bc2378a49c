//! Receive-buffer autotuning (`recv_buffer = "auto"`, Linux's dynamic
//! right-sizing): the window starts at 128 KiB and grows with what the
//! application reads per round trip, so a flow gets the goodput of a
//! fixed 6 MiB buffer with less memory when its paths need less.

mod common;

use common::{hybrid, simulate};

/// (goodput, final receive buffer) for `links` with `recv_buffer`.
fn run(links: &[&str], recv_buffer: &str) -> (f64, u64) {
    let s = simulate(&hybrid("20s", links, &format!(r#"cc = "lia", recv_buffer = "{recv_buffer}""#)));
    let f = &s.flows[0];
    let n = links.len();
    println!(
        "{n} path(s), recv_buffer {recv_buffer:<5}: {:.3} Mbit/s, buffer {} B",
        f.goodput_mbps, f.recv_buffer_bytes
    );
    (f.goodput_mbps, f.recv_buffer_bytes)
}

#[test]
fn autotuned_buffer_matches_a_large_fixed_one() {
    // One 10 Mbit/s, 40 ms path: a 50 kB bandwidth-delay product.
    let one = [r#"rate = "10Mbit", rtt = "40ms""#];
    let ((auto, auto_buffer), (fixed, _)) = (run(&one, "auto"), run(&one, "6MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
    assert!(auto_buffer > 128 * 1024, "the buffer grew");
    assert!(auto_buffer < 2 << 20, "{auto_buffer} B: far below the 6 MiB ceiling");
    // Two paths with a 2:1 RTT ratio: reordering needs a larger window.
    let two = [r#"rate = "50Mbit", rtt = "40ms""#, r#"rate = "20Mbit", rtt = "80ms""#];
    let ((auto, _), (fixed, _)) = (run(&two, "auto"), run(&two, "6MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
}
