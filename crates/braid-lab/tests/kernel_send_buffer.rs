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
    // Two subflows of at least reordering + 1 = 4 segments: 2 x 2 x 4 x
    // 4352 B at least.
    assert!((69_632..=16 << 20).contains(&grown), "{grown}");
    assert_eq!(capped, 1 << 20);
}

/// MPTCP v0.96 grows a subflow's buffer only while the application waits
/// on the connection's full buffer, and counts a subflow's window times the
/// longest SRTT over its own (`mptcp_check_snd_buf`). Over a 100 Mbit/s,
/// 2 ms path with a short queue beside a 10 Mbit/s, 100 ms one, a
/// 20 Mbit/s application keeps what its subflows were sized with when
/// established (about 10 segments each), while a bulk one gives the fast
/// subflow the room for what it sends while a slow segment crosses: many
/// times twice its window.
#[test]
fn only_a_waiting_writer_grows_the_kernel_buffer_and_windows_count_the_rtt_ratio() {
    let run = |keys: &str| {
        let s = common::hybrid(
            "10s",
            &["rate = \"100Mbit\", rtt = \"2ms\", queue = \"20p\"", "rate = \"10Mbit\", rtt = \"100ms\""],
            &format!("cc = \"lia\", send_buffer = \"kernel:64MiB\", recv_buffer = \"auto:64MiB\"{keys}"),
        );
        common::simulate(&s).flows[0].clone()
    };
    let (limited, bulk) = (run(", app_rate = \"20Mbit\"").send_buffer_bytes, run(""));
    let fast_window = bulk.subflows[0].cwnd_mean_bytes / 1448.0;
    println!(
        "kernel send buffer: 20 Mbit/s application {limited} B; bulk {} B, fast subflow's mean window {fast_window:.0} segments",
        bulk.send_buffer_bytes
    );
    // Two subflows sized at establishment: 2 x 2 x 10 to 12 segments x 4352 B.
    assert!((174_080..=2 * 2 * 12 * 4352).contains(&limited), "{limited}");
    // The fast subflow's window (about 30 segments) counted about 30 times
    // (its SRTT of a few ms against SF2's 100 ms and more): 7.9 MB measured,
    // 31 times twice the mean window's memory; without the ratio, 2.7 MB
    // (11 times).
    assert!(bulk.send_buffer_bytes as f64 > 20.0 * twice_the_memory_of(fast_window), "{} B", bulk.send_buffer_bytes);
}

/// Linux checks for room to grow after the acknowledgement's sending is
/// done (`tcp_data_snd_check`), in whole segments: a subflow whose window,
/// not its buffer, limits it has filled the window by then, so its buffer
/// grows only while the buffer is what limits it, in slow start here, and
/// stays below what its later windows would ask (the kernel's measured Fig.
/// 6 subflows stop growing within 0.4 s, docs/validation.md). Checked at
/// the acknowledgement itself, when the window has just opened, the buffer
/// follows the window's peaks: 1.2 to 1.6 times twice the mean window's
/// memory in these cases, against 0.5 to 0.7.
#[test]
fn a_window_limited_subflow_stops_growing_its_kernel_buffer() {
    for (link, cc) in [
        ("rate = \"100Mbit\", rtt = \"20ms\", queue = \"50p\"", "reno"),
        ("rate = \"200Mbit\", rtt = \"10ms\", queue = \"80p\"", "cubic"),
        ("rate = \"50Mbit\", rtt = \"40ms\", queue = \"30p\"", "lia"),
    ] {
        let keys = format!("cc = \"{cc}\", send_buffer = \"kernel:64MiB\", recv_buffer = \"auto:64MiB\"");
        let flow = common::simulate(&common::hybrid("10s", &[link], &keys)).flows[0].clone();
        let window = flow.subflows[0].cwnd_mean_bytes / 1448.0;
        let ratio = flow.send_buffer_bytes as f64 / twice_the_memory_of(window);
        println!("{cc} over {link}: buffer {} B, mean window {window:.0} segments, {ratio:.2}", flow.send_buffer_bytes);
        assert!(
            ratio < 1.0,
            "{cc} over {link}: {} B is {ratio:.2} times twice the mean window",
            flow.send_buffer_bytes
        );
    }
}

/// Twice the kernel's memory for a window of `segments` 1448-byte
/// segments (4352 B each, Linux's per-MSS cost on x86-64):
/// `tcp_sndbuf_expand`'s size for that window with factor 2.
fn twice_the_memory_of(segments: f64) -> f64 {
    2.0 * segments * 4352.0
}
