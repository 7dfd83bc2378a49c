//! Buffer autotuning. Receive side (`recv_buffer = "auto"`, Linux's
//! dynamic right-sizing): the window starts at 128 KiB and grows with what
//! the application reads per round trip. Send side (`send_buffer = "auto"`,
//! seed 003 eq. 2): twice the summed subflow rates times the longest RTT.
//! Either way a flow gets the goodput of the large fixed buffers with less
//! memory when its paths need less.

mod common;

use common::{hybrid, simulate};

/// (goodput, final buffer) for `links` with the `which` ("recv" or
/// "send") buffer set to `size`.
fn run(links: &[&str], which: &str, size: &str) -> (f64, u64) {
    let s = simulate(&hybrid("20s", links, &format!(r#"cc = "lia", {which}_buffer = "{size}""#)));
    let f = &s.flows[0];
    let buffer = if which == "recv" { f.recv_buffer_bytes } else { f.send_buffer_bytes };
    let n = links.len();
    println!("{n} path(s), {which}_buffer {size:<5}: {:.3} Mbit/s, buffer {buffer} B", f.goodput_mbps);
    (f.goodput_mbps, buffer)
}

const ONE_PATH: [&str; 1] = [r#"rate = "10Mbit", rtt = "40ms""#];
const TWO_PATHS: [&str; 2] = [r#"rate = "50Mbit", rtt = "40ms""#, r#"rate = "20Mbit", rtt = "80ms""#];

#[test]
fn autotuned_receive_buffer_matches_a_large_fixed_one() {
    // One 10 Mbit/s, 40 ms path: a 50 kB bandwidth-delay product.
    let ((auto, auto_buffer), (fixed, _)) = (run(&ONE_PATH, "recv", "auto"), run(&ONE_PATH, "recv", "6MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
    assert!(auto_buffer > 128 * 1024, "the buffer grew");
    assert!(auto_buffer < 2 << 20, "{auto_buffer} B: far below the 6 MiB ceiling");
    // Two paths with a 2:1 RTT ratio: reordering needs a larger window.
    let ((auto, _), (fixed, _)) = (run(&TWO_PATHS, "recv", "auto"), run(&TWO_PATHS, "recv", "6MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
}

#[test]
fn autotuned_send_buffer_matches_a_large_fixed_one() {
    let ((auto, auto_buffer), (fixed, _)) = (run(&ONE_PATH, "send", "auto"), run(&ONE_PATH, "send", "4MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
    // On one path the target is twice the window, whose slow-start peak
    // here is about 200 kB: an eighth of the fixed 4 MiB is plenty.
    assert!((64 * 1024..=(4 << 20) / 8).contains(&auto_buffer), "{auto_buffer} B");
    let ((auto, auto_buffer), (fixed, _)) = (run(&TWO_PATHS, "send", "auto"), run(&TWO_PATHS, "send", "4MiB"));
    assert!(auto >= 0.99 * fixed, "{auto:.3} vs {fixed:.3} Mbit/s");
    assert!(auto_buffer < 4 << 20, "{auto_buffer} B");
}
