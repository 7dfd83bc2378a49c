//! `braid recv`: accept Braid connections on one or more addresses, read
//! everything each sends, and report per second and per connection.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use braid_net::{ConnectionHandle, LocalAddr, NetEvent, Node};
use braid_proto::{Duration, Event};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::report::{self, Out, Snapshot};

/// Receive data from `braid send` (real network).
#[derive(clap::Args)]
#[command(long_about = "Accept Braid connections and read everything they send.\n\n\
    Listens on every --listen address (one UDP socket each; a connection opened on one is told of\n\
    the others, so a full-mesh sender opens subflows to them too) and serves any number of\n\
    connections at once. Prints a line per second per connection with each subflow's\n\
    throughput, and when a sender closes, a summary: bytes, SHA-256 of what arrived, goodput,\n\
    the longest stall in delivered bytes, bytes per subflow. --json prints JSON lines.\n\n\
    Runs until interrupted, or with --once until its first connection ends (non-zero exit if it\n\
    failed).")]
pub struct Args {
    /// Addresses to listen on, comma-separated: IP or IP:PORT (port 4747 by default).
    #[arg(long, value_name = "ADDR[,ADDR...]")]
    listen: String,
    /// Exit after the first connection ends.
    #[arg(long)]
    once: bool,
    /// Write the received bytes to this file (with --once: the first connection's).
    #[arg(long, requires = "once")]
    file: Option<PathBuf>,
    /// Forget a connection that sends nothing for this long.
    #[arg(long, default_value = "60s", allow_hyphen_values = true, value_parser = crate::parse_duration)]
    idle_timeout: Duration,
    /// Congestion controller of the return direction (acknowledgements only in a `send`).
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// Scheduler of the return direction.
    #[arg(long, default_value = "minrtt")]
    scheduler: String,
    /// JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

/// One connection being received.
struct Incoming {
    /// The connection's token: a handle freed by one connection may be
    /// the next one's before the first one's `Removed` is read.
    token: u64,
    /// Its bytes go to `--file` (the first connection's only).
    to_file: bool,
    started: Instant,
    hash: Sha256,
    first_byte: Option<Instant>,
    /// When in-order bytes last arrived, and the longest gap between arrivals.
    last_progress: Option<Instant>,
    max_stall: std::time::Duration,
    last: Snapshot,
    next_report: f64,
    done: bool,
}

#[derive(Serialize)]
struct Listening {
    event: &'static str,
    addrs: Vec<String>,
}

#[derive(Serialize)]
struct Summary {
    event: &'static str,
    role: &'static str,
    connection: usize,
    bytes: u64,
    sha256: String,
    /// From the first byte to the last.
    seconds: f64,
    goodput_mbps: f64,
    /// Longest time without new in-order bytes between the first and the last.
    max_stall_ms: f64,
    /// Packets the connection refused (forged joins, bad MACs, malformed values).
    invalid_packets: u64,
    subflows: Vec<report::SubflowTotal>,
}

pub fn run(args: Args) -> Result<(), String> {
    let addrs = super::parse_addrs(&args.listen, "--listen")?;
    if addrs.is_empty() {
        return Err("--listen: no address given".into());
    }
    let mut config = super::net_config(&args.cc, &args.scheduler)?;
    config.idle_timeout = std::time::Duration::from_nanos(args.idle_timeout.as_nanos());
    let out = Out { json: args.json };
    let mut file = match &args.file {
        Some(p) => Some(File::create(p).map_err(|e| format!("--file {}: {e}", p.display()))?),
        None => None,
    };
    let mut node = Node::new(config);
    let mut bound = Vec::new();
    for a in &addrs {
        bound.push(node.listen(&LocalAddr { addr: *a, device: None }).map_err(|e| e.to_string())?.to_string());
    }
    out.line(&Listening { event: "listening", addrs: bound.clone() }, || format!("listening on {}", bound.join(", ")));

    let start = Instant::now();
    let mut incoming: BTreeMap<ConnectionHandle, Incoming> = BTreeMap::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut first_done: Option<Result<(), String>> = None;
    let mut file_taken = false;
    loop {
        node.drive(Some(std::time::Duration::from_millis(100))).map_err(|e| format!("network: {e}"))?;
        let now = Instant::now();
        for (&h, inc) in incoming.iter_mut() {
            read_arrived(&mut node, h, inc, &mut file, &mut buf, now)?;
        }
        while let Some((h, e)) = node.poll_event() {
            let t = start.elapsed().as_secs_f64();
            match e {
                NetEvent::Accepted => {
                    let Some(token) = node.connection(h).map(|c| c.token()) else { continue };
                    let to_file = file.is_some() && !file_taken;
                    file_taken |= to_file;
                    let inc = Incoming {
                        token,
                        to_file,
                        started: now,
                        hash: Sha256::new(),
                        first_byte: None,
                        last_progress: None,
                        max_stall: std::time::Duration::ZERO,
                        last: Snapshot { at: t, ..Default::default() },
                        next_report: t + 1.0,
                        done: false,
                    };
                    incoming.insert(h, inc);
                    out.notice(h, t, &format!("connection {} accepted", h.0));
                }
                NetEvent::Protocol(Event::PeerClosed) => {
                    // The connection that holds the handle now, not one
                    // that held it before.
                    let token = node.connection(h).map(|c| c.token());
                    if let Some(inc) = incoming.get_mut(&h).filter(|inc| Some(inc.token) == token) {
                        // What arrived since the reads above (a connection
                        // accepted and closed in one turn was never read).
                        read_arrived(&mut node, h, inc, &mut file, &mut buf, now)?;
                        inc.done = true;
                        summarise(&mut node, h, inc, &out);
                        if let Some(c) = node.connection(h) {
                            c.close();
                        }
                        first_done.get_or_insert(Ok(()));
                    }
                }
                NetEvent::TimedOut | NetEvent::Protocol(Event::Failed(_)) => {
                    let what = match &e {
                        NetEvent::Protocol(Event::Failed(err)) => format!("connection {} failed: {err}", h.0),
                        _ => format!("connection {} timed out: nothing heard for {}", h.0, fmt_secs(args.idle_timeout)),
                    };
                    if incoming.remove(&h).is_some_and(|inc| !inc.done) {
                        out.notice(h, t, &what);
                        first_done.get_or_insert(Err(what));
                    }
                }
                NetEvent::Removed => {
                    incoming.remove(&h);
                }
                NetEvent::Protocol(
                    e @ (Event::SubflowEstablished { .. }
                    | Event::SubflowFailed { .. }
                    | Event::SubflowRecovered { .. }
                    | Event::SubflowReset { .. }),
                ) => out.notice(h, t, &format!("connection {}: {}", h.0, report::describe(&e))),
                _ => {}
            }
        }
        if args.once {
            // The first connection is over once it is removed (after its
            // close was acknowledged) or failed.
            match &first_done {
                Some(Err(e)) => return Err(e.clone()),
                Some(Ok(())) if incoming.values().all(|i| i.done) && node.handles().is_empty() => return Ok(()),
                _ => {}
            }
        }
        let t = start.elapsed().as_secs_f64();
        for (&h, inc) in incoming.iter_mut().filter(|(_, i)| !i.done && t >= i.next_report) {
            let snap = report::snapshot(&mut node, h, t, false);
            let line = report::interval(&mut node, h, &inc.last, &snap);
            out.line(&line, || format!("conn {} {}", h.0, report::interval_text(&line, false)));
            inc.last = snap;
            inc.next_report += 1.0;
        }
    }
}

fn fmt_secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// Reads everything that arrived in order on connection `h`, if it is
/// still `inc`'s.
fn read_arrived(
    node: &mut Node,
    h: ConnectionHandle,
    inc: &mut Incoming,
    file: &mut Option<File>,
    buf: &mut [u8],
    now: Instant,
) -> Result<(), String> {
    let Some(conn) = node.connection(h).filter(|c| c.token() == inc.token) else { return Ok(()) };
    let mut progressed = false;
    loop {
        let n = conn.read(buf);
        if n == 0 {
            break;
        }
        progressed = true;
        inc.hash.update(&buf[..n]);
        if let Some(f) = file.as_mut().filter(|_| inc.to_file) {
            f.write_all(&buf[..n]).map_err(|e| format!("--file: cannot write: {e}"))?;
        }
    }
    if progressed && !inc.done {
        inc.first_byte.get_or_insert(now);
        if let Some(p) = inc.last_progress {
            inc.max_stall = inc.max_stall.max(now - p);
        }
        inc.last_progress = Some(now);
    }
    Ok(())
}

fn summarise(node: &mut Node, h: ConnectionHandle, inc: &mut Incoming, out: &Out) {
    let Some(conn) = node.connection(h) else { return };
    let st = conn.stats();
    let bytes = st.bytes_read;
    let first = inc.first_byte.unwrap_or(inc.started);
    let secs = inc.last_progress.map_or(0.0, |l| (l - first).as_secs_f64());
    let summary = Summary {
        event: "summary",
        role: "recv",
        connection: h.0,
        bytes,
        sha256: super::hex(&std::mem::take(&mut inc.hash).finalize()),
        seconds: secs,
        goodput_mbps: report::goodput_mbps(bytes, secs),
        max_stall_ms: inc.max_stall.as_secs_f64() * 1e3,
        invalid_packets: st.invalid_packets,
        subflows: report::totals(node, h, false),
    };
    out.line(&summary, || {
        format!(
            "connection {}: received {} bytes in {:.3} s: {:.2} Mbit/s goodput, longest stall {:.0} ms\nsha256 {}\n{}",
            h.0,
            summary.bytes,
            summary.seconds,
            summary.goodput_mbps,
            summary.max_stall_ms,
            summary.sha256,
            report::totals_text(&summary.subflows).trim_end()
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incoming(token: u64) -> Incoming {
        Incoming {
            token,
            to_file: false,
            started: Instant::now(),
            hash: Sha256::new(),
            first_byte: None,
            last_progress: None,
            max_stall: std::time::Duration::ZERO,
            last: Snapshot::default(),
            next_report: 1.0,
            done: false,
        }
    }

    /// Bytes are read only into the entry of the connection that holds the
    /// handle now: an entry left by an earlier connection on the same
    /// handle (its `Removed` not read yet) gets none of them.
    #[test]
    fn a_reused_handle_reads_only_into_its_own_entry() {
        let local = |a: &str| LocalAddr { addr: a.parse().unwrap(), device: None };
        let mut server = Node::new(braid_net::NetConfig::default());
        let addr = server.listen(&local("127.0.0.1:0")).unwrap();
        let mut client = Node::new(braid_net::NetConfig::default());
        let c = client.connect(addr, &[(local("127.0.0.1:0"), false)], braid_net::PathPolicy::FullMesh).unwrap();
        client.connection(c).unwrap().write(b"abc");
        let until = Instant::now() + std::time::Duration::from_secs(10);
        let h = loop {
            client.drive(Some(std::time::Duration::from_millis(5))).unwrap();
            server.drive(Some(std::time::Duration::from_millis(5))).unwrap();
            let arrived =
                server.handles().into_iter().find(|&h| server.connection(h).unwrap().stats().bytes_received == 3);
            if let Some(h) = arrived {
                break h;
            }
            assert!(Instant::now() < until, "the bytes did not arrive");
        };
        let token = server.connection(h).unwrap().token();
        let (mut buf, mut file) = (vec![0u8; 64], None);
        let mut stale = incoming(token ^ 1);
        read_arrived(&mut server, h, &mut stale, &mut file, &mut buf, Instant::now()).unwrap();
        assert!(stale.first_byte.is_none(), "nothing read into another connection's entry");
        let mut own = incoming(token);
        read_arrived(&mut server, h, &mut own, &mut file, &mut buf, Instant::now()).unwrap();
        assert!(own.first_byte.is_some());
        assert_eq!(super::super::hex(&own.hash.finalize()), super::super::hex(&Sha256::digest(b"abc")));
    }
}
