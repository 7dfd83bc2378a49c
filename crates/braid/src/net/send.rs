//! `braid send`: open a connection over one or more local addresses or
//! interfaces and send a number of bytes, for a time, or a file.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use braid_net::{NetEvent, Node, PathPolicy};
use braid_proto::{Duration, Event};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::report::{self, Out, Snapshot};

/// Send data to a `braid recv` over one or more paths (real network).
#[derive(clap::Args)]
#[command(
    group(clap::ArgGroup::new("amount").required(true).args(["bytes", "time", "file"])),
    long_about = "Open a Braid connection to a `braid recv` and send data over one or more paths.\n\n\
    Every --via address or interface gets its own UDP socket; the path manager opens subflows\n\
    from them (fullmesh: every local address to every server address, including those the server\n\
    advertises; ndiffports:N: N subflows over the first pair, each from its own port).\n\
    Prints a line per second (goodput, and per subflow: throughput, smoothed RTT, congestion\n\
    window, retransmissions) and a summary with the goodput and the SHA-256 of what was sent;\n\
    --json prints the same as JSON lines, the last one the summary.\n\n\
    Exits non-zero if the connection fails, e.g. when no path works for --timeout."
)]
pub struct Args {
    /// The receiver: IP or IP:PORT (port 4747 by default).
    #[arg(long)]
    to: String,
    /// Local addresses or interfaces to send from, comma-separated (e.g. 198.18.1.2,198.18.2.2 or
    /// eth0,wlan0); default: one subflow from whatever address the routing table picks.
    #[arg(long, value_name = "ADDR_OR_IFACE,...")]
    via: Vec<String>,
    /// Local addresses or interfaces for backup subflows, comma-separated: opened like --via, used
    /// only while no other subflow works (MPTCP's backup flag).
    #[arg(long, value_name = "ADDR_OR_IFACE,...")]
    backup: Vec<String>,
    /// Congestion controller (`braid list` names them).
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// Scheduler (`braid list` names them).
    #[arg(long, default_value = "minrtt")]
    scheduler: String,
    /// Detect losses by time and probe tail losses as Linux does on its subflows (RACK-TLP, the
    /// scenario key `rack_tlp`); without it a packet is lost once 3 sent after it are acknowledged.
    #[arg(long)]
    rack_tlp: bool,
    /// Hold new data back as Linux does with segmentation offload on (`tcp_tso_should_defer`, the
    /// scenario key `tso_defer`): while an acknowledgement is due and the window has room for less
    /// than an offload burst and a third of itself.
    #[arg(long)]
    tso_defer: bool,
    /// fullmesh or ndiffports:N.
    #[arg(long, default_value = "fullmesh", value_parser = parse_path_manager)]
    path_manager: PathPolicy,
    /// Send this many bytes (e.g. 200MB, 1GiB, 5000).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_bytes)]
    bytes: Option<u64>,
    /// Send for this long (e.g. 10s).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::parse_duration)]
    time: Option<Duration>,
    /// Send this file.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Give up when no path has worked for this long while data waits.
    #[arg(long, default_value = "30s", allow_hyphen_values = true, value_parser = crate::parse_duration)]
    timeout: Duration,
    /// Seed of the generated data (--bytes, --time): different seeds give different bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_path_manager(s: &str) -> Result<PathPolicy, String> {
    match s.trim() {
        "fullmesh" => Ok(PathPolicy::FullMesh),
        other => match other.strip_prefix("ndiffports:").map(str::parse::<u8>) {
            Some(Ok(n)) if n >= 1 => Ok(PathPolicy::NDiffPorts(n)),
            _ => Err(format!("{other:?}: expected fullmesh or ndiffports:N with N from 1 to 255")),
        },
    }
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let n = match s.trim().parse::<u64>() {
        Ok(n) => n,
        Err(_) => braid_lab::units::parse_size(s)?,
    };
    if n == 0 {
        return Err("must be more than zero bytes".into());
    }
    Ok(n)
}

/// Where the bytes come from.
enum Source {
    /// Generated (xorshift), up to a count or a deadline.
    Generated {
        state: u64,
        left: Option<u64>,
        until: Option<Instant>,
    },
    File(File),
}

impl Source {
    /// Fills `buf` with the next bytes; `Ok(0)` at the end.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, String> {
        match self {
            Source::Generated { state, left, until } => {
                if until.is_some_and(|u| Instant::now() >= u) {
                    return Ok(0);
                }
                let n = left.map_or(buf.len() as u64, |l| l.min(buf.len() as u64)) as usize;
                for chunk in buf[..n].chunks_mut(8) {
                    *state ^= *state << 13;
                    *state ^= *state >> 7;
                    *state ^= *state << 17;
                    chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
                }
                if let Some(l) = left {
                    *l -= n as u64;
                }
                Ok(n)
            }
            Source::File(f) => f.read(buf).map_err(|e| format!("--file: cannot read: {e}")),
        }
    }
}

#[derive(Serialize)]
struct Start {
    event: &'static str,
    to: String,
    cc: String,
    scheduler: String,
    /// Whether the connection detects losses as Linux does (`--rack-tlp`).
    rack_tlp: bool,
    /// Whether it defers new data as Linux's offload does (`--tso-defer`).
    tso_defer: bool,
    /// The receiver's connection id on this connection's packets.
    token: Option<String>,
}

#[derive(Serialize)]
struct Summary {
    event: &'static str,
    role: &'static str,
    bytes: u64,
    sha256: String,
    seconds: f64,
    goodput_mbps: f64,
    subflows: Vec<report::SubflowTotal>,
}

pub fn run(args: Args) -> Result<(), String> {
    let remote = super::parse_addr(&args.to, "--to")?;
    let mut locals = super::parse_via(&args.via, remote, "--via", false)?;
    locals.extend(super::parse_via(&args.backup, remote, "--backup", true)?);
    let mut config = super::net_config(&args.cc, &args.scheduler)?;
    config.connection.failure_timeout = args.timeout;
    config.connection.rack_tlp = args.rack_tlp;
    config.connection.tso_defer = args.tso_defer;
    let out = Out { json: args.json };
    let mut source = match (&args.file, args.bytes, args.time) {
        // Linux opens a directory as a file; only reading it fails, after
        // the connection is made.
        (Some(p), _, _) if p.is_dir() => return Err(format!("--file {}: is a directory", p.display())),
        (Some(p), _, _) => Source::File(File::open(p).map_err(|e| format!("--file {}: {e}", p.display()))?),
        (None, left, time) => Source::Generated {
            state: args.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            left,
            until: time.map(|t| Instant::now() + std::time::Duration::from_nanos(t.as_nanos())),
        },
    };

    let mut node = Node::new(config);
    let start = Instant::now();
    let h = node.connect(remote, &locals, args.path_manager.clone()).map_err(|e| e.to_string())?;
    let mut hash = Sha256::new();
    let mut pending = vec![0u8; 1 << 16];
    let (mut offset, mut filled) = (0, 0);
    let mut closed = false;
    let mut all_acked: Option<Instant> = None;
    let mut announced = false;
    let mut last = Snapshot::default();
    let mut next_report = 1.0;
    loop {
        let conn = node.connection(h).ok_or("the connection is gone")?;
        // Keep the send buffer full; once it was found full, write again
        // only when Linux would wake a writer (a third of it free), as the
        // simulator's applications do.
        while !closed && conn.may_write() {
            if offset == filled {
                filled = source.fill(&mut pending)?;
                offset = 0;
                if filled == 0 {
                    conn.close();
                    closed = true;
                    break;
                }
            }
            let n = conn.write(&pending[offset..filled]);
            if n == 0 {
                break;
            }
            hash.update(&pending[offset..offset + n]);
            offset += n;
        }
        if let Some(e) = conn.error() {
            return Err(format!("connection to {remote} failed: {e}"));
        }
        let finished = conn.is_finished();
        // Done once everything is acknowledged and the receiver closed its
        // side too (or did not within a second).
        if all_acked.is_some_and(|t| finished || t.elapsed().as_secs_f64() > 1.0) {
            break;
        }
        let t = start.elapsed().as_secs_f64();
        let wait = std::time::Duration::from_secs_f64((next_report - t).max(0.0));
        node.drive(Some(wait)).map_err(|e| format!("network: {e}"))?;
        let t = start.elapsed().as_secs_f64();
        // Only this connection's events (the node accepts no others).
        while let Some((c, e)) = node.poll_event() {
            if c != h {
                continue;
            }
            match e {
                NetEvent::Protocol(Event::Closed) => {
                    all_acked.get_or_insert_with(Instant::now);
                }
                NetEvent::Protocol(Event::Failed(e)) => return Err(format!("connection to {remote} failed: {e}")),
                NetEvent::Protocol(Event::SubflowEstablished { subflow }) if !announced => {
                    announced = true;
                    let token = node.peer_token(h).map(|t| format!("{t:016x}"));
                    let s = Start {
                        event: "start",
                        to: remote.to_string(),
                        cc: args.cc.clone(),
                        scheduler: args.scheduler.clone(),
                        rack_tlp: node.config().connection.rack_tlp,
                        tso_defer: node.config().connection.tso_defer,
                        token: token.clone(),
                    };
                    out.line(&s, || {
                        format!("connected to {remote} on subflow {} ({} + {})", subflow.0, args.cc, args.scheduler)
                    });
                }
                NetEvent::Protocol(
                    e @ (Event::SubflowEstablished { .. }
                    | Event::SubflowFailed { .. }
                    | Event::SubflowRecovered { .. }
                    | Event::SubflowClosed { .. }
                    | Event::SubflowReset { .. }
                    | Event::AddressAdvertised { .. }
                    | Event::AddressRemoved { .. }),
                ) => out.notice(h, t, &report::describe(&e)),
                NetEvent::PathError { subflow, error } => out.notice(h, t, &format!("subflow {subflow:?}: {error}")),
                _ => {}
            }
        }
        if t >= next_report {
            let now = report::snapshot(&mut node, h, t, true);
            let line = report::interval(&mut node, h, &last, &now);
            out.line(&line, || report::interval_text(&line, true));
            last = now;
            next_report += 1.0;
        }
    }
    let secs = all_acked.map_or(start.elapsed(), |t| t - start).as_secs_f64();
    let conn = node.connection(h).ok_or("the connection is gone")?;
    let bytes = conn.stats().bytes_acked;
    let summary = Summary {
        event: "summary",
        role: "send",
        bytes,
        sha256: super::hex(&hash.finalize()),
        seconds: secs,
        goodput_mbps: report::goodput_mbps(bytes, secs),
        subflows: report::totals(&mut node, h, true),
    };
    out.line(&summary, || {
        format!(
            "sent {} bytes in {:.3} s: {:.2} Mbit/s goodput\nsha256 {}\n{}",
            summary.bytes,
            summary.seconds,
            summary.goodput_mbps,
            summary.sha256,
            report::totals_text(&summary.subflows).trim_end()
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_managers_and_sizes_parse() {
        assert_eq!(parse_path_manager("ndiffports:4").unwrap(), PathPolicy::NDiffPorts(4));
        assert_eq!(parse_path_manager("fullmesh").unwrap(), PathPolicy::FullMesh);
        for bad in ["ndiffports:0", "ndiffports:x", "mesh", "ndiffports:300"] {
            assert!(parse_path_manager(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_bytes("200MB").unwrap(), 200_000_000);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert!(parse_bytes("0").is_err() && parse_bytes("lots").is_err());
    }

    #[test]
    fn generated_data_depends_on_the_seed_and_stops_at_the_count() {
        let mut a = Source::Generated { state: 3, left: Some(20), until: None };
        let mut buf = [0u8; 16];
        assert_eq!(a.fill(&mut buf).unwrap(), 16);
        let first = buf;
        assert_eq!(a.fill(&mut buf).unwrap(), 4);
        assert_eq!(a.fill(&mut buf).unwrap(), 0);
        let mut b = Source::Generated { state: 5, left: Some(16), until: None };
        b.fill(&mut buf).unwrap();
        assert_ne!(first, buf);
    }
}
