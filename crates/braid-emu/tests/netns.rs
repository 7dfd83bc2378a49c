//! The emulator's accuracy targets, measured on real packets between two
//! network namespaces (root, `/dev/net/tun`, iproute2).
//!
//! Run with `BRAID_NETNS_TESTS=1 cargo test -p braid-emu --test netns --
//! --nocapture` (CI does, see `.ci/run`); without the variable every test
//! says it was skipped. Traffic goes only between this test's own
//! namespaces. Delays are measured one way with the kernel's receive
//! timestamp against the sender's clock (both CLOCK_REALTIME, same
//! machine), so neither side's scheduling delay counts.
//!
//! A timing test on a shared 2-core virtual machine can be unlucky: each
//! timing test makes several attempts and prints every one. A miss while
//! the hypervisor ran other machines on our CPUs (steal time) is not held
//! against the emulator; the test fails if every attempt that counts
//! missed (see [`attempts`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use braid_emu::netns::{in_netns, Netns};
use braid_emu::plan::{client_addr, dotted, SERVER_ADDR};
use braid_emu::{Config, Emulator, Report};
use braid_lab::bench::stolen_cpu_ms;
use braid_sim::loss::LossSpec;

const SO_RCVBUFFORCE: libc::c_int = 33;
const SO_TIMESTAMPNS: libc::c_int = 35;
const UDP_SEGMENT: libc::c_int = 103;

/// How long a receiver waits for more before it stops.
const QUIET: Duration = Duration::from_millis(500);

/// One test at a time: they measure timing and share two cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn skip_reason() -> Option<String> {
    if std::env::var("BRAID_NETNS_TESTS").as_deref() != Ok("1") {
        return Some("set BRAID_NETNS_TESTS=1 to run (needs root, /dev/net/tun and iproute2)".into());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: network namespaces need root".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun on this machine".into());
    }
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        return Some("iproute2 (`ip`) is not installed".into());
    }
    None
}

/// The one-test-at-a-time lock, or `None` (saying why) when the test is skipped.
fn serial_unless_skipped(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Some(why) = skip_reason() {
        eprintln!("netns test {test} skipped: {why}");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A hybrid-access scenario: seed, core rate, and one access link per
/// entry (its keys on one line, separated by semicolons).
fn scenario((seed, core, links): (u64, &str, &[&str])) -> String {
    let mut s = format!("seed = {seed}\n[topology]\nkind = \"hybrid-access\"\ncore_rate = \"{core}\"\n");
    for l in links {
        s += &format!("[[topology.link]]\n{}\n", l.replace("; ", "\n"));
    }
    s + "[[flow]]\n"
}

/// Two namespaces joined by a running emulator.
struct Bed {
    emu: Option<Emulator>,
    client: Netns,
    server: Netns,
}

impl Bed {
    fn start(test: &str, toml: &str, loss: Vec<(String, LossSpec)>) -> Option<Bed> {
        if let Some(why) = skip_reason() {
            eprintln!("netns test {test} skipped: {why}");
            return None;
        }
        let sc = braid_lab::parse(toml, test).expect("test scenario is valid");
        let client = Netns::create(&format!("bt-{test}-c")).expect("create client namespace");
        let server = Netns::create(&format!("bt-{test}-s")).expect("create server namespace");
        let cfg = Config {
            topology: sc.topology,
            seed: sc.seed,
            loss,
            client_ns: client.name().into(),
            server_ns: server.name().into(),
            realtime: true,
        };
        let emu = Emulator::start(&cfg).expect("emulator starts");
        Some(Bed { emu: Some(emu), client, server })
    }

    fn stop(&mut self) -> Report {
        self.emu.take().expect("running").stop()
    }
}

fn spawn_in<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    let ns = ns.to_string();
    std::thread::spawn(move || in_netns(&ns, f).expect("enter namespace"))
}

fn addr(a: [u8; 4], port: u16) -> SocketAddr {
    format!("{}:{port}", dotted(a)).parse().expect("valid address")
}

fn realtime_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn setsockopt_int(fd: i32, level: i32, name: i32, v: i32) {
    // SAFETY: valid fd and int option.
    let r = unsafe { libc::setsockopt(fd, level, name, (&v as *const i32).cast(), 4) };
    assert_eq!(r, 0, "setsockopt {level}/{name}: {}", std::io::Error::last_os_error());
}

/// Runs the calling thread above the emulator and every ordinary process,
/// so that what the test measures is the emulator, not the test's own
/// threads waiting for a busy machine's CPU.
fn realtime() {
    let p = libc::sched_param { sched_priority: 20 };
    // SAFETY: sets the calling thread's scheduling policy.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) };
}

/// A UDP socket whose receptions carry the kernel's arrival time.
fn timestamped_socket(at: SocketAddr) -> UdpSocket {
    let s = UdpSocket::bind(at).expect("bind receiver");
    setsockopt_int(s.as_raw_fd(), libc::SOL_SOCKET, SO_TIMESTAMPNS, 1);
    setsockopt_int(s.as_raw_fd(), libc::SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20);
    s
}

/// Receives one datagram: (bytes, its first 8 bytes as u64, kernel arrival ns).
fn recv_stamped(s: &UdpSocket, buf: &mut [u8]) -> Option<(usize, u64, i64)> {
    let mut control = [0u64; 16];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: msghdr points at live buffers of the given sizes.
    let (n, msg) = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        (libc::recvmsg(s.as_raw_fd(), &mut msg, 0), msg)
    };
    if n < 8 {
        return None;
    }
    // SAFETY: walking the control messages the kernel wrote into `control`.
    let stamp = unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        let mut t = None;
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                t = Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        t?
    };
    Some((n as usize, u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")), stamp))
}

/// Sends `count` datagrams of `size` bytes at `pps`, each starting with
/// its sequence number (or the send time when `stamp`), `batch` per system
/// call (UDP segmentation offload when more than one). A full device queue
/// makes the sender wait and retry, so every datagram reaches the emulator.
fn send_paced(from: SocketAddr, to: SocketAddr, count: u64, pps: u64, size: usize, stamp: bool, batch: u64) {
    if stamp {
        // A probe's send time is read before the system call: the sender
        // must not be preempted between the two by the load it measures.
        realtime();
    }
    let s = UdpSocket::bind(from).expect("bind sender");
    s.connect(to).expect("connect");
    setsockopt_int(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_RECVERR, 1);
    if batch > 1 {
        setsockopt_int(s.as_raw_fd(), libc::SOL_UDP, UDP_SEGMENT, size as i32);
    }
    let mut buf = vec![0u8; size * batch as usize];
    let mut start = Instant::now();
    let mut k = 0;
    let interval = |k: u64| Duration::from_nanos(k * 1_000_000_000 / pps);
    while k < count {
        let due = start + interval(k);
        let now = Instant::now();
        match due.checked_duration_since(now) {
            Some(wait) => std::thread::sleep(wait),
            // Preempted for a while (a busy machine): carry on at the
            // rate from here rather than catch up in one burst.
            None if now - due > Duration::from_millis(1) => start = now - interval(k),
            None => {}
        }
        let n = batch.min(count - k);
        for (i, d) in buf.chunks_mut(size).take(n as usize).enumerate() {
            let head = if stamp { realtime_ns() as u64 } else { k + i as u64 };
            d[..8].copy_from_slice(&head.to_le_bytes());
        }
        loop {
            match s.send(&buf[..size * n as usize]) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => std::thread::sleep(Duration::from_micros(50)),
                Err(e) => panic!("send: {e}"),
            }
        }
        k += n;
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Datagrams arriving at `at` in namespace `ns` until none came for
/// `quiet`: (bytes, first 8 bytes as u64, kernel arrival time in ns).
fn receive(ns: &str, at: SocketAddr, quiet: Duration) -> JoinHandle<Vec<(usize, u64, i64)>> {
    let s = in_netns(ns, || timestamped_socket(at)).expect("enter namespace");
    s.set_read_timeout(Some(quiet)).expect("timeout");
    std::thread::spawn(move || {
        realtime();
        let mut buf = [0u8; 2048];
        let mut out = vec![];
        while let Some(d) = recv_stamped(&s, &mut buf) {
            out.push(d);
        }
        out
    })
}

/// One-way delays (ms) of stamped probes.
fn delays(rx: JoinHandle<Vec<(usize, u64, i64)>>) -> Vec<f64> {
    rx.join().expect("receiver").iter().map(|&(_, sent, arrived)| (arrived - sent as i64) as f64 / 1e6).collect()
}

/// Excess over the configured one-way delay: (mean, p99) in ms.
fn excess(mut delays: Vec<f64>, one_way_ms: f64) -> (f64, f64, usize) {
    assert!(delays.len() > 100, "only {} probes arrived", delays.len());
    delays.sort_by(f64::total_cmp);
    let mean = delays.iter().sum::<f64>() / delays.len() as f64;
    (mean - one_way_ms, percentile(&delays, 0.99) - one_way_ms, delays.len())
}

/// A miss during which the hypervisor stole more CPU than this is the
/// host's, not the emulator's: on this 2-core virtual machine runs with
/// 0-20 ms stolen meet every target, and p99 misses of 1-5 ms came with
/// 100 ms or more stolen per attempt.
const STEAL_LIMIT_MS: u64 = 20;

/// Waits up to 10 s for a second in which the hypervisor stole nothing.
fn wait_for_quiet_host() {
    for _ in 0..10 {
        let Some(before) = stolen_cpu_ms() else { return };
        std::thread::sleep(Duration::from_secs(1));
        if stolen_cpu_ms().is_some_and(|after| after == before) {
            return;
        }
    }
}

/// No attempt starts after this much time in [`attempts`]: on a host that
/// steals CPU throughout, eight void attempts of the delay test took about
/// four minutes of CI's twenty.
const ATTEMPTS_BUDGET: Duration = Duration::from_secs(100);

/// Tries a timing measurement until three attempts are judged, at most
/// eight in all, none started after [`ATTEMPTS_BUDGET`]. A miss while the
/// hypervisor stole more than [`STEAL_LIMIT_MS`] of CPU is void: it is
/// printed but not judged, and the next attempt waits for a quiet host. The
/// test fails if every judged attempt missed; if none could be judged (a
/// host busy throughout), it says so loudly and passes without a verdict.
fn attempts(what: &str, mut f: impl FnMut() -> Result<String, String>) {
    let mut misses = vec![];
    let start = Instant::now();
    for k in 1..=8 {
        if k > 1 && start.elapsed() > ATTEMPTS_BUDGET {
            eprintln!("{what}: no attempt after {} s", ATTEMPTS_BUDGET.as_secs());
            break;
        }
        wait_for_quiet_host();
        let before = stolen_cpu_ms();
        let result = f();
        let stolen = before.zip(stolen_cpu_ms()).map_or(0, |(b, a)| a.saturating_sub(b));
        match result {
            Ok(line) => {
                eprintln!("{what}: attempt {k}: {line} ({stolen} ms stolen)");
                return;
            }
            Err(line) if stolen > STEAL_LIMIT_MS => {
                eprintln!("{what}: attempt {k} void, the hypervisor stole {stolen} ms of CPU: {line}");
            }
            Err(line) => {
                eprintln!("{what}: attempt {k} missed ({stolen} ms stolen): {line}");
                misses.push(line);
                if misses.len() == 3 {
                    break;
                }
            }
        }
    }
    if misses.is_empty() {
        eprintln!("{what}: NOT JUDGED: the hypervisor stole CPU during every attempt");
        return;
    }
    panic!("{what}: every judged attempt missed: {misses:#?}");
}

const DELAY_SCENARIO: (u64, &str, &[&str]) = (
    7,
    "100Gbit",
    &[
        r#"name = "loaded"; rate = "1.1Gbit"; rtt = "10ms"; loss = "0.1%""#,
        r#"name = "probe"; rate = "1Gbit"; rtt = "10ms""#,
    ],
);

/// Added delay at 1 Gbit/s, both directions: a BBR bulk transfer fills the
/// `loaded` path (1.1 Gbit/s, 10 ms RTT, 0.1% loss: delay, rate and loss
/// all on) while probes cross the idle `probe` path both ways and the
/// loaded path's ACK direction, 1000 per second each. Target: at most
/// 0.5 ms mean and 1 ms p99 above the configured 5 ms one way; the bulk
/// transfer itself sustains at least 1 Gbit/s of goodput.
#[test]
fn delay_under_1gbit_load_both_directions() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut bed) = Bed::start("delay", &scenario(DELAY_SCENARIO), vec![]) else { return };
    let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
    attempts("delay under 1 Gbit/s load", || {
        let secs = 5;
        let load = bulk_tcp(&c, &s, "bbr", Duration::from_secs(secs));
        std::thread::sleep(Duration::from_millis(800));
        let probes = 4000;
        let rx_fwd = receive(&s, addr(SERVER_ADDR, 7001), QUIET);
        let rx_rev = receive(&c, addr(client_addr(1), 7002), QUIET);
        let rx_ack = receive(&c, addr(client_addr(0), 7003), QUIET);
        let tx = [
            spawn_in(&c, move || {
                send_paced(addr(client_addr(1), 0), addr(SERVER_ADDR, 7001), probes, 1000, 64, true, 1)
            }),
            spawn_in(&s, move || {
                send_paced(addr(SERVER_ADDR, 0), addr(client_addr(1), 7002), probes, 1000, 64, true, 1)
            }),
            spawn_in(&s, move || {
                send_paced(addr(SERVER_ADDR, 0), addr(client_addr(0), 7003), probes, 1000, 64, true, 1)
            }),
        ];
        tx.into_iter().for_each(|t| t.join().expect("sender"));
        let goodput = load.join().expect("bulk transfer");
        let mut line = format!("bulk goodput {:.3} Gbit/s", goodput / 1e9);
        let mut ok = goodput >= 1e9;
        for (name, rx) in [("forward", rx_fwd), ("reverse", rx_rev), ("ACK direction", rx_ack)] {
            let (mean, p99, n) = excess(delays(rx), 5.0);
            line += &format!("; {name}: {n} probes, excess mean {mean:.3} ms, p99 {p99:.3} ms");
            ok &= mean <= 0.5 && p99 <= 1.0 && mean >= -0.05;
        }
        if ok {
            Ok(line)
        } else {
            Err(line)
        }
    });
    let r = bed.stop();
    assert!(r.link("loaded").unwrap().drops_random > 0, "loss was on: {r:?}");
}

/// A TCP transfer from the client's path 0 to the server for `time`;
/// returns the receiver's goodput (bit/s) after the first second.
fn bulk_tcp(client_ns: &str, server_ns: &str, cc: &'static str, time: Duration) -> JoinHandle<f64> {
    let listener = in_netns(server_ns, || TcpListener::bind(addr(SERVER_ADDR, 7000)).expect("listen")).unwrap();
    let rx = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let mut buf = vec![0u8; 1 << 20];
        let start = Instant::now();
        let (mut bytes, mut from) = (0u64, None);
        loop {
            let n = conn.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            if start.elapsed() >= Duration::from_secs(1) {
                from.get_or_insert_with(Instant::now);
                bytes += n as u64;
            }
        }
        from.map_or(0.0, |t| bytes as f64 * 8.0 / t.elapsed().as_secs_f64())
    });
    spawn_in(client_ns, move || {
        let mut conn = TcpStream::connect(addr(SERVER_ADDR, 7000)).expect("connect");
        // SAFETY: valid fd and option buffer.
        let r = unsafe {
            libc::setsockopt(
                conn.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                cc.as_ptr().cast(),
                cc.len() as u32,
            )
        };
        assert_eq!(r, 0, "congestion control {cc}: {}", std::io::Error::last_os_error());
        let chunk = vec![0x5au8; 1 << 20];
        let start = Instant::now();
        while start.elapsed() < time {
            conn.write_all(&chunk).expect("write");
        }
        drop(conn);
        rx.join().expect("receiver")
    })
}

const RATE_SCENARIO: (u64, &str, &[&str]) = (
    1,
    "100Gbit",
    &[
        r#"name = "slow"; rate = "100Mbit"; rtt = "10ms"; queue = "10bdp""#,
        r#"name = "fast"; rate = "1Gbit"; rtt = "10ms"; queue = "10bdp""#,
    ],
);

/// Delivered rate within 3% of the setting: UDP offered at 1.2 times the
/// link rate, 1500-byte IP packets; the rate is what arrives, by kernel
/// timestamps, over the last 1.5 s of 2 s. The queue holds 100 ms, full
/// after the first half second, so a sender preempted for less than that
/// on a busy machine does not leave the link idle (and if it is preempted
/// longer, the queue runs dry and the attempt shows it: no queue drops).
#[test]
fn rate_within_3_percent() {
    let Some(_serial) = serial_unless_skipped("rate") else { return };
    for (path, link, rate) in [(0usize, "slow", 100e6), (1, "fast", 1e9)] {
        attempts(&format!("rate {} Mbit/s", rate / 1e6), || {
            let mut bed = Bed::start("rate", &scenario(RATE_SCENARIO), vec![]).expect("capability checked");
            let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
            let port = 7100 + path as u16;
            let rx = receive(&s, addr(SERVER_ADDR, port), QUIET);
            let pps = (rate * 1.2 / 12_000.0) as u64;
            let count = pps * 2;
            spawn_in(&c, move || {
                send_paced(addr(client_addr(path), 0), addr(SERVER_ADDR, port), count, pps, 1472, false, 16)
            })
            .join()
            .expect("sender");
            let stamps: Vec<(i64, usize)> = rx.join().expect("receiver").iter().map(|&(n, _, t)| (t, n)).collect();
            let stats = *bed.stop().link(link).expect("link exists");
            let (t0, tn) = (stamps[0].0 + 500_000_000, stamps.last().expect("arrivals").0);
            let window: Vec<_> = stamps.iter().filter(|(t, _)| *t > t0).collect();
            let ip_bytes: usize = window.iter().map(|(_, n)| n + 28).sum();
            let measured = ip_bytes as f64 * 8.0 / ((tn - t0) as f64 / 1e9);
            let error = measured / rate - 1.0;
            let line = format!(
                "{:.2} Mbit/s delivered, {:+.2}%; sent {count}, link passed {} and dropped {} (queue), received {}",
                measured / 1e6,
                error * 100.0,
                stats.packets_sent,
                stats.drops_queue,
                stamps.len()
            );
            // The offered load must have exceeded the rate, or the test measured the sender.
            if error.abs() <= 0.03 && stats.drops_queue > 0 {
                Ok(line)
            } else {
                Err(line)
            }
        });
    }
}

const LOSS_SCENARIO: (u64, &str, &[&str]) = (
    3,
    "100Gbit",
    &[
        r#"name = "bernoulli"; rate = "10Gbit"; rtt = "2ms"; loss = "1%"; queue = "10000p""#,
        r#"name = "bursty"; rate = "10Gbit"; rtt = "2ms"; queue = "10000p""#,
    ],
);

/// Received sequence numbers → (loss rate, mean run of consecutive losses).
fn losses(received: &mut [u64], sent: u64) -> (f64, f64) {
    received.sort_unstable();
    let mut bursts = 0u64;
    let mut prev = None;
    for &k in received.iter() {
        if k != prev.map_or(0, |p| p + 1) {
            bursts += 1;
        }
        prev = Some(k);
    }
    if prev.is_none_or(|p| p + 1 < sent) {
        bursts += 1;
    }
    let lost = sent - received.len() as u64;
    (lost as f64 / sent as f64, lost as f64 / bursts.max(1) as f64)
}

/// Loss within 0.1 percentage points over 150 000 packets (Bernoulli 1%),
/// and a Gilbert–Elliott link (p = 0.5%, r = 30%: 1.64% stationary, bursts
/// of 3.3 packets) near its stationary rate and mean burst; every missing
/// packet is one the emulator counted as a random drop.
#[test]
fn loss_counts() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ge = LossSpec::GilbertElliott { p: 0.005, r: 0.3, loss_good: 0.0, loss_bad: 1.0 };
    let Some(mut bed) = Bed::start("loss", &scenario(LOSS_SCENARIO), vec![("bursty".into(), ge)]) else { return };
    let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
    let sent = 150_000u64;
    let mut measured = vec![];
    for path in 0..2usize {
        let port = 7200 + path as u16;
        let rx = receive(&s, addr(SERVER_ADDR, port), QUIET);
        spawn_in(&c, move || {
            send_paced(addr(client_addr(path), 0), addr(SERVER_ADDR, port), sent, 50_000, 100, false, 1)
        })
        .join()
        .expect("sender");
        let mut seqs: Vec<u64> = rx.join().expect("receiver").iter().map(|&(_, k, _)| k).collect();
        measured.push((sent - seqs.len() as u64, losses(&mut seqs, sent)));
    }
    let r = bed.stop();
    let (lost, (rate, burst)) = measured[0];
    eprintln!("Bernoulli 1%: {lost} of {sent} lost = {:.3}%, mean burst {burst:.2}", rate * 100.0);
    assert_eq!(lost, r.link("bernoulli").unwrap().drops_random, "only the model drops: {r:?}");
    assert!((rate - 0.01).abs() <= 0.001, "Bernoulli loss {:.3}% is not within 0.1 points of 1%", rate * 100.0);
    let (lost, (rate, burst)) = measured[1];
    let target = ge.stationary_loss();
    eprintln!(
        "Gilbert–Elliott: {lost} of {sent} lost = {:.3}% (stationary {:.3}%), mean burst {burst:.2} (1/r = {:.2})",
        rate * 100.0,
        target * 100.0,
        1.0 / 0.3
    );
    assert_eq!(lost, r.link("bursty").unwrap().drops_random, "only the model drops: {r:?}");
    // Bursts make the count vary more than Bernoulli's: about 0.09 points
    // standard deviation here; three of them allowed.
    assert!((rate - target).abs() <= 0.003, "Gilbert–Elliott loss {:.3}%", rate * 100.0);
    assert!((burst - 1.0 / 0.3).abs() < 0.5, "mean burst {burst:.2}");
}

const UNSHAPED_SCENARIO: (u64, &str, &[&str]) =
    (1, "1000Gbit", &[r#"name = "unshaped"; rate = "1000Gbit"; queue = "100000p""#]);

/// At least 5 Gbit/s through a link without rate limit or loss: one CUBIC
/// transfer, goodput after its first second.
#[test]
fn throughput_unshaped() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut bed) = Bed::start("unshaped", &scenario(UNSHAPED_SCENARIO), vec![]) else { return };
    let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
    attempts("unshaped throughput", || {
        let goodput = bulk_tcp(&c, &s, "cubic", Duration::from_secs(4)).join().expect("bulk transfer");
        let line = format!("{:.2} Gbit/s", goodput / 1e9);
        if goodput >= 5e9 {
            Ok(line)
        } else {
            Err(line)
        }
    });
    let r = bed.stop();
    eprintln!("packets read {}, buffers {}", r.read, r.buffers);
}

const OUTAGE_SCENARIO: (u64, &str, &[&str]) =
    (1, "10Gbit", &[r#"name = "flaky"; rate = "1Gbit"; rtt = "2ms"; down = [{ from = "1s", to = "2s" }]"#]);

/// An up/down schedule on real packets: 10 000 datagrams per second for
/// three seconds; the link is down from 1 s to 2 s after the emulator
/// started, so arrivals stop for that second and the emulator counts the
/// datagrams offered meanwhile as dropped while down.
#[test]
fn outage_schedule() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut bed) = Bed::start("outage", &scenario(OUTAGE_SCENARIO), vec![]) else { return };
    let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
    let rx = receive(&s, addr(SERVER_ADDR, 7300), Duration::from_secs(2));
    spawn_in(&c, || send_paced(addr(client_addr(0), 0), addr(SERVER_ADDR, 7300), 30_000, 10_000, 100, false, 1))
        .join()
        .expect("sender");
    let arrivals: Vec<i64> = rx.join().expect("receiver").iter().map(|&(_, _, t)| t).collect();
    let gap = arrivals.windows(2).map(|w| w[1] - w[0]).max().expect("arrivals") as f64 / 1e9;
    let r = bed.stop();
    let down = r.link("flaky").unwrap().drops_down;
    eprintln!("outage: longest gap {gap:.3} s, {down} dropped while down, {} arrived", arrivals.len());
    assert!((0.95..1.05).contains(&gap), "arrivals stopped for {gap:.3} s, not 1 s");
    // About 10 000 at the nominal rate; the sender's sleeps make it slower.
    assert!((5_000..=10_100).contains(&down), "{down} datagrams dropped while down");
    assert_eq!(arrivals.len() as u64 + down, 30_000, "every datagram arrived or was dropped while down");
}

/// A mahimahi delivery trace on real packets: 2000 opportunities in the
/// first half of each second (four a millisecond) and one at its end, so
/// the link carries 48 Mbit/s for half a second, then nothing. UDP is
/// offered at 60 Mbit/s for 3 s; over any two whole periods after the
/// queue has filled, what arrives must be the trace's 2 x 2001
/// opportunities of 1504 bytes (within 3%), and arrivals must pause for
/// the half second without opportunities.
#[test]
fn delivery_trace() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = skip_reason() {
        eprintln!("netns test trace skipped: {why}");
        return;
    }
    let file = tempfile::Builder::new().prefix("braid-netns-trace-").suffix(".txt").tempfile().expect("a trace file");
    let text: String = (1..=500).flat_map(|ms| [ms; 4]).chain([1000]).map(|ms| format!("{ms}\n")).collect();
    std::fs::write(file.path(), text).expect("write the trace");
    let link = format!(r#"name = "traced"; trace = "{}"; rtt = "2ms"; queue = "500p""#, file.path().display());
    let toml = scenario((1, "10Gbit", &[link.as_str()]));
    let want_bytes = 2.0 * 2001.0 * 1504.0;
    attempts("delivery trace", || {
        let mut bed = Bed::start("trace", &toml, vec![]).expect("capability checked");
        let (c, s) = (bed.client.name().to_string(), bed.server.name().to_string());
        let rx = receive(&s, addr(SERVER_ADDR, 7400), Duration::from_secs(2));
        spawn_in(&c, || send_paced(addr(client_addr(0), 0), addr(SERVER_ADDR, 7400), 15_000, 5_000, 1472, false, 1))
            .join()
            .expect("sender");
        let stamps: Vec<(i64, usize)> = rx.join().expect("receiver").iter().map(|&(n, _, t)| (t, n)).collect();
        let stats = *bed.stop().link("traced").expect("link exists");
        let t0 = stamps[0].0 + 100_000_000;
        let window = t0..t0 + 2_000_000_000;
        let bytes: usize = stamps.iter().filter(|(t, _)| window.contains(t)).map(|(_, n)| n + 28).sum();
        let error = bytes as f64 / want_bytes - 1.0;
        let gap = stamps.windows(2).map(|w| w[1].0 - w[0].0).max().expect("arrivals") as f64 / 1e9;
        let line = format!(
            "{bytes} bytes in two periods, {:+.2}% off the trace's {want_bytes}; longest pause {gap:.3} s; \
             link passed {} and dropped {} (queue)",
            error * 100.0,
            stats.packets_sent,
            stats.drops_queue
        );
        if error.abs() <= 0.03 && (0.45..0.55).contains(&gap) && stats.drops_queue > 0 {
            Ok(line)
        } else {
            Err(line)
        }
    });
}

/// Namespaces a user gives the emulator are left as it found them: the
/// sysctls it set and the client's routing rules (which outlive its
/// devices) are put back when it stops.
#[test]
fn the_namespaces_are_left_as_found() {
    let Some(_serial) = serial_unless_skipped("restore") else { return };
    let (client, server) = (Netns::create("bt-restore-c").unwrap(), Netns::create("bt-restore-s").unwrap());
    let read = |ns: &str, key: &str| in_netns(ns, || braid_emu::netns::sysctl_value(key).unwrap()).unwrap();
    let rules = |ns: &str| {
        let out = std::process::Command::new("ip").args(["-n", ns, "rule"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("lookup 10")).count()
    };
    let rp = "net.ipv4.conf.all.rp_filter";
    in_netns(client.name(), || braid_emu::netns::sysctl(rp, "2").unwrap()).unwrap();
    in_netns(server.name(), || braid_emu::netns::sysctl("net.ipv4.conf.default.rp_filter", "1").unwrap()).unwrap();
    let before = (read(client.name(), rp), read(server.name(), "net.ipv4.conf.default.rp_filter"));
    let sc = braid_lab::parse(
        &scenario((1, "1Gbit", &["name = \"a\"; rate = \"10Mbit\"", "name = \"b\"; rate = \"10Mbit\""])),
        "restore",
    )
    .unwrap();
    let cfg = Config {
        topology: sc.topology,
        seed: 1,
        loss: vec![],
        client_ns: client.name().into(),
        server_ns: server.name().into(),
        realtime: false,
    };
    let emu = Emulator::start(&cfg).expect("emulator starts");
    assert_eq!((read(client.name(), rp).as_str(), rules(client.name())), ("0", 2), "set while running");
    emu.stop();
    let after = (read(client.name(), rp), read(server.name(), "net.ipv4.conf.default.rp_filter"));
    assert_eq!((after, rules(client.name())), (before, 0));
}
