//! `braid send` and `braid recv` over loopback (127.0.0.0/8 only): the
//! JSON lines a script reads, a dead path's error, bad input.

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn braid() -> Command {
    Command::new(env!("CARGO_BIN_EXE_braid"))
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

/// A free UDP port on loopback (bound, then released).
fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs `braid recv --once --json RECV_ARGS` on a free loopback port, then
/// `braid send --to THAT --json SEND_ARGS`; both must succeed. Returns
/// their JSON lines.
fn transfer(recv_args: &[&OsStr], send_args: &[&OsStr]) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let listen = format!("127.0.0.1:{}", free_port());
    let recv = Running::start(
        braid().args(["recv", "--listen", &listen, "--once", "--json", "--idle-timeout", "20s"]).args(recv_args),
    );
    std::thread::sleep(Duration::from_millis(300));
    let send = Running::start(braid().args(["send", "--to", &listen, "--json"]).args(send_args));
    let send = send.finish("send");
    let recv = recv.finish("recv");
    assert!(send.status.success(), "send failed: {}", String::from_utf8_lossy(&send.stderr));
    assert!(recv.status.success(), "recv --once did not end cleanly after its connection");
    (json_lines(&String::from_utf8_lossy(&send.stdout)), json_lines(&String::from_utf8_lossy(&recv.stdout)))
}

/// A thread reading a pipe to its end.
type Drain = std::thread::JoinHandle<Vec<u8>>;

/// A child whose output is read as it comes (so a full pipe never blocks
/// it), killed and reaped if the test gives up on it or fails first.
struct Running {
    child: std::process::Child,
    output: Option<(Drain, Drain)>,
}

impl Running {
    fn start(command: &mut Command) -> Running {
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        };
        let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        Running { child, output: Some((drain(Box::new(out)), drain(Box::new(err)))) }
    }

    /// Its output once it exits, or a failed test after two minutes: a
    /// transfer that stalls must not hang the suite.
    fn finish(mut self, what: &str) -> std::process::Output {
        let deadline = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{what} did not end within two minutes");
            std::thread::sleep(Duration::from_millis(20));
        };
        let (out, err) = self.output.take().unwrap();
        std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn os(args: &[&'static str]) -> Vec<&'static OsStr> {
    args.iter().map(|a| OsStr::new(*a)).collect()
}

#[test]
fn send_and_recv_agree_over_two_loopback_subflows() {
    let (sent, got) = transfer(&[], &os(&["--via", "127.0.0.1,127.0.0.2", "--bytes", "30MB", "--seed", "7"]));
    let (s, r) = (sent.last().unwrap(), got.last().unwrap());
    assert_eq!((s["event"].as_str(), r["event"].as_str()), (Some("summary"), Some("summary")));
    assert_eq!(s["bytes"], 30_000_000);
    assert_eq!(r["bytes"], 30_000_000);
    assert_eq!(s["sha256"], r["sha256"], "the same bytes arrived");
    assert!(s["goodput_mbps"].as_f64().unwrap() > 0.0);
    let per_subflow: Vec<u64> =
        r["subflows"].as_array().unwrap().iter().map(|f| f["bytes"].as_u64().unwrap()).collect();
    assert_eq!(per_subflow.len(), 2);
    assert_eq!(per_subflow.iter().sum::<u64>(), 30_000_000, "each byte counted once, on the subflow that brought it");
    assert!(per_subflow.iter().all(|&b| b > 0), "both subflows carried data: {per_subflow:?}");
    assert!(sent.iter().any(|l| l["event"] == "start" && l["token"].is_string()));
}

/// `--rack-tlp`: the sender detects losses by time and arms its probe
/// timer on every send and acknowledgement, under the wall clock; every
/// byte arrives once, in order.
#[test]
fn a_sender_with_rack_tlp_delivers_every_byte() {
    let (sent, got) = transfer(&[], &os(&["--via", "127.0.0.1,127.0.0.2", "--bytes", "10MB", "--rack-tlp"]));
    let (s, r) = (sent.last().unwrap(), got.last().unwrap());
    assert_eq!((s["bytes"].as_u64(), r["bytes"].as_u64()), (Some(10_000_000), Some(10_000_000)));
    assert_eq!(s["sha256"], r["sha256"], "the same bytes arrived");
    assert!(sent.iter().any(|l| l["event"] == "start" && l["rack_tlp"] == true), "the connection runs RACK-TLP");
}

#[test]
fn a_backup_path_opens_but_stays_idle_while_the_other_works() {
    let (_, got) = transfer(&[], &os(&["--via", "127.0.0.1", "--backup", "127.0.0.2", "--bytes", "5MB"]));
    let r = got.last().unwrap();
    let subflows = r["subflows"].as_array().unwrap();
    assert_eq!(subflows.len(), 2, "the backup subflow was opened: {subflows:?}");
    assert_eq!(subflows[0]["bytes"], 5_000_000, "all data on the regular path: {subflows:?}");
    assert_eq!(subflows[1]["bytes"], 0, "nothing on the backup: {subflows:?}");
}

#[test]
fn a_file_arrives_on_disk_byte_for_byte() {
    let tmp = tempfile::Builder::new().prefix("braid-net-file-").tempdir().unwrap();
    let dir = tmp.path();
    let (src, dst) = (dir.join("sent.bin"), dir.join("received.bin"));
    // Not a multiple of any buffer size, not all the same byte.
    let data: Vec<u8> = (0..3_000_017u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let file = OsStr::new("--file");
    let (sent, got) = transfer(&[file, dst.as_os_str()], &[file, src.as_os_str()]);
    let on_disk = std::fs::read(&dst).unwrap();
    assert!(on_disk == data, "the file on disk differs ({} of {} bytes)", on_disk.len(), data.len());
    let (s, r) = (sent.last().unwrap(), got.last().unwrap());
    assert_eq!(s["sha256"], r["sha256"]);
    assert_eq!(r["bytes"], data.len());
}

/// Transfers of a byte to two segments: less than one segment, one short
/// of a full one, and a tail after two. (The other tests move megabytes.)
#[test]
fn tiny_transfers_arrive_whole() {
    for bytes in ["1", "100", "1399", "2801"] {
        let (sent, got) = transfer(&[], &os(&["--via", "127.0.0.1", "--bytes", bytes]));
        let (s, r) = (sent.last().unwrap(), got.last().unwrap());
        let n: u64 = bytes.parse().unwrap();
        assert_eq!((s["bytes"].as_u64(), r["bytes"].as_u64()), (Some(n), Some(n)), "{bytes} bytes");
        assert_eq!(s["sha256"], r["sha256"], "{bytes} bytes: the same bytes arrived");
    }
}

/// Nobody at the address: the opening goes unanswered, and the sender
/// says so after the timeout (a path that dies after the opening gives "no
/// usable path", `scripts/net-e2e.sh` case 3).
#[test]
fn a_dead_path_ends_with_a_clear_error_after_the_timeout() {
    let to = format!("127.0.0.1:{}", free_port());
    let t0 = Instant::now();
    let out = braid().args(["send", "--to", &to, "--bytes", "1MB", "--timeout", "1s"]).output().unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("no answer to the opening for 1.000 s"), "{err}");
    assert!(took < Duration::from_secs(6), "gave up after {took:?}");
}

#[test]
fn bad_input_is_named() {
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    let is_a_directory = format!("--file {dir}: is a directory");
    let cases: [(&[&str], &str); 7] = [
        (&["send", "--to", "nowhere", "--bytes", "1"], "--to"),
        (&["send", "--to", "127.0.0.1", "--bytes", "1", "--via", "no-such-if"], "no-such-if"),
        (&["send", "--to", "127.0.0.1", "--bytes", "1", "--path-manager", "ndiffports:0"], "ndiffports"),
        (&["send", "--to", "127.0.0.1", "--bytes", "1", "--scheduler", "fastest"], "--scheduler"),
        (&["send", "--to", "127.0.0.1", "--file", "/no/such/file"], "/no/such/file"),
        (&["send", "--to", "127.0.0.1", "--file", dir], &is_a_directory),
        (&["recv", "--listen", "127.0.0.1:70000"], "--listen"),
    ];
    for (args, needle) in cases {
        let out = braid().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
