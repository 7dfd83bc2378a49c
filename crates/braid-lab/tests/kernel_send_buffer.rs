//! `send_buffer = "kernel:MAX"`: MPTCP v0.96's send buffer, the sum of the
//! subflows' Linux-autotuned buffers, capped at MAX (`tcp_wmem[2]`).

mod common;

use braid_lab::parse;
use braid_proto::SendAutotune;

fn fig6(send_buffer: &str) -> String {
    common::hybrid(
        "10s",
        &["rate = \"100Mbit\", rtt = \"0ms\", queue = \"1000p\"", "rate = \"50Mbit\", rtt = \"20ms\", loss = \"0.5%\""],
        &format!("cc = \"lia\", send_buffer = \"{send_buffer}\", recv_buffer = \"auto:16MiB\""),
    )
}

#[test]
fn kernel_mode_and_maxima_parse() {
    let s = parse(&fig6("kernel:16MiB"), "t.toml").unwrap();
    let c = &s.flows[0].config;
    assert_eq!((c.send_autotune, c.send_buffer), (SendAutotune::Kernel, 16 << 20));
    assert_eq!((c.recv_autotune, c.recv_buffer), (true, 16 << 20));
    let s = parse(&fig6("kernel"), "t.toml").unwrap();
    assert_eq!(s.flows[0].config.send_buffer, 4 << 20, "Linux's default tcp_wmem[2]");
    let s = parse(&fig6("auto"), "t.toml").unwrap();
    assert_eq!(s.flows[0].config.send_autotune, SendAutotune::Seed003);
    let s = parse(&fig6("2MiB"), "t.toml").unwrap();
    assert_eq!(s.flows[0].config.send_autotune, SendAutotune::Off);
    let e = parse(&fig6("turbo:1MiB"), "t.toml").unwrap_err().to_string();
    assert!(e.contains("t.toml") && e.contains("flow[0].send_buffer") && e.contains("turbo"), "{e}");
    let e = parse(&fig6("kernel:lots"), "t.toml").unwrap_err().to_string();
    assert!(e.contains("flow[0].send_buffer"), "{e}");
}

#[test]
fn kernel_buffer_grows_from_tcp_wmem1_and_stops_at_its_maximum() {
    let grown = common::simulate(&fig6("kernel:16MiB")).flows[0].send_buffer_bytes;
    let capped = common::simulate(&fig6("kernel:1MiB")).flows[0].send_buffer_bytes;
    println!("LIA on seed 004 Fig. 6 paths: kernel send buffer {grown} B (16 MiB max), {capped} B (1 MiB max)");
    // Two subflows of at least 10 segments: 2 x 2 x 10 x 4352 B at least.
    assert!((174_080..=16 << 20).contains(&grown), "{grown}");
    assert_eq!(capped, 1 << 20);
}
