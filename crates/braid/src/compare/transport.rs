//! One run of Braid's own UDP transport over the emulated links: the
//! testbed script builds the namespaces and starts `braid emulate` with the
//! scenario, `braid recv --once` (this executable) listens in the server
//! namespace and `braid send --time` sends from every client address for
//! the run's duration with the run's controller and scheduler. The figures
//! come from the two ends' JSON lines (docs/net.md): the receiver's bytes
//! per subflow and goodput (bytes delivered in order, first byte to last),
//! the sender's smoothed RTT per second and retransmitted packets.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::testbed::{client_addr, client_ns, in_ns, path_of, server_addr, server_ns, Lines, Testbed};

const PORT: u16 = 5302;

/// What Braid reported for one subflow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subflow {
    /// New payload bytes the receiver got on it.
    pub bytes_received: u64,
    /// Packets the sender retransmitted on it.
    pub retransmissions: u64,
    pub rtos: u64,
    /// Mean of the sender's once-a-second smoothed RTT.
    pub srtt_mean_ms: Option<f64>,
}

/// One second of the connection, per path: the receiver's goodput
/// (Mbit/s), the sender's congestion window (kB) and smoothed RTT (ms);
/// seconds since the connection started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    pub goodput: Vec<Vec<(f64, f64)>>,
    pub cwnd: Vec<Vec<(f64, f64)>>,
    pub srtt: Vec<Vec<(f64, f64)>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The receiver's goodput: bytes delivered in order, first byte to last.
    pub goodput_mbps: f64,
    pub seconds: f64,
    /// Per path, in the scenario's order (`None`: no subflow on that path).
    pub subflows: Vec<Option<Subflow>>,
    pub samples: Samples,
}

/// Runs Braid with `cc` and `scheduler` (and RACK-TLP if the scenario's
/// flow has it) over the scenario's emulated links for `duration`, one
/// subflow from each of the `paths` client addresses; also gives the
/// sender's and the receiver's JSON lines as printed.
/// What Braid's sender runs: the controller, the scheduler and the Linux
/// behaviours the scenario's flow turns on.
#[derive(Clone, Copy, Debug)]
pub struct Sender<'a> {
    pub cc: &'a str,
    pub scheduler: &'a str,
    pub rack_tlp: bool,
    pub tso_defer: bool,
}

pub fn run(
    script: &Path,
    scenario: &Path,
    seed: u64,
    sender: Sender,
    duration: Duration,
    paths: usize,
) -> Result<(Run, [String; 2]), String> {
    let braid = std::env::current_exe().map_err(|e| format!("cannot find the braid binary: {e}"))?;
    let braid = braid.to_str().ok_or("the braid binary's path is not UTF-8")?;
    let _bed = Testbed::up(script, scenario, seed)?;
    let server = format!("{}:{PORT}", server_addr());
    let mut recv = Lines::spawn(
        in_ns(&server_ns(), &[braid, "recv", "--listen", &server, "--once", "--json"]).args(["--cc", sender.cc]),
        "braid recv",
    )?;
    recv.wait_for("\"listening\"", Duration::from_secs(10))?;
    let via: Vec<String> = (0..paths).map(client_addr).collect();
    let send = Lines::spawn(
        in_ns(&client_ns(), &[braid, "send", "--to", &server, "--via", &via.join(",")])
            .args(send_options(sender, duration, seed)),
        "braid send",
    )?;
    // The sender gives up after 30 s without a working path (its default --timeout).
    let sent = send.finish(duration + Duration::from_secs(60))?;
    let received = recv.finish(Duration::from_secs(30))?;
    Ok((summarise(&sent, &received, paths)?, [sent, received]))
}

/// What `braid send` is told besides where to send: how long, the
/// controller, scheduler, loss detection and deferral, the data's seed,
/// JSON lines.
fn send_options(sender: Sender, duration: Duration, seed: u64) -> Vec<String> {
    let time = format!("{}ms", duration.as_millis().max(1));
    let mut o: Vec<String> =
        ["--time", &time, "--cc", sender.cc, "--scheduler", sender.scheduler, "--seed", &seed.to_string(), "--json"]
            .map(String::from)
            .to_vec();
    for (on, flag) in [(sender.rack_tlp, "--rack-tlp"), (sender.tso_defer, "--tso-defer")] {
        if on {
            o.push(flag.into());
        }
    }
    o
}

/// The JSON lines of `braid send --json` and `braid recv --json` this
/// module reads (docs/net.md); other events and fields are ignored.
#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Line {
    Notice {
        t: f64,
        what: String,
    },
    Interval {
        t: f64,
        subflows: Vec<IntervalSubflow>,
    },
    Summary(Summary),
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct IntervalSubflow {
    local: String,
    remote: String,
    mbps: f64,
    rtt_ms: Option<f64>,
    cwnd: Option<u64>,
}

#[derive(Deserialize)]
struct TotalSubflow {
    local: String,
    remote: String,
    bytes: u64,
    retransmissions: u64,
    rtos: u64,
}

#[derive(Deserialize)]
struct Summary {
    bytes: u64,
    sha256: String,
    seconds: f64,
    goodput_mbps: f64,
    subflows: Vec<TotalSubflow>,
}

/// What one end printed.
struct End {
    /// Seconds since the end started, and the subflows over the second before.
    intervals: Vec<(f64, Vec<IntervalSubflow>)>,
    /// When the receiver accepted the connection (its first "accepted" notice).
    accepted: Option<f64>,
    summary: Summary,
}

fn read(text: &str, who: &str) -> Result<End, String> {
    let (mut intervals, mut accepted, mut summary) = (vec![], None, None);
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line: Line = serde_json::from_str(line)
            .map_err(|e| format!("{who}: cannot read line {} of its JSON output ({e}): {line:?}", n + 1))?;
        match line {
            Line::Notice { t, what } if what.ends_with("accepted") => {
                accepted.get_or_insert(t);
            }
            Line::Interval { t, subflows } => intervals.push((t, subflows)),
            Line::Summary(s) => summary = Some(s),
            Line::Notice { .. } | Line::Other => {}
        }
    }
    let summary = summary.ok_or_else(|| format!("{who} printed no summary"))?;
    Ok(End { intervals, accepted, summary })
}

/// The path of an address with its port ("198.18.2.2:40000").
fn path_of_socket(addr: &str, paths: usize) -> Option<usize> {
    path_of(addr.rsplit_once(':').map_or(addr, |(ip, _)| ip), paths)
}

/// Condenses the sender's and the receiver's JSON lines per path; an error
/// if the receiver did not get exactly the bytes sent.
pub fn summarise(sent: &str, received: &str, paths: usize) -> Result<Run, String> {
    let End { intervals: send_intervals, summary: send, .. } = read(sent, "braid send")?;
    let End { intervals: recv_intervals, accepted, summary: recv } = read(received, "braid recv")?;
    if (recv.bytes, &recv.sha256) != (send.bytes, &send.sha256) {
        return Err(format!(
            "braid recv got {} bytes (sha256 {}) where braid send sent {} (sha256 {})",
            recv.bytes, recv.sha256, send.bytes, send.sha256
        ));
    }
    let mut subflows: Vec<Option<Subflow>> = vec![None; paths];
    for s in &recv.subflows {
        if let Some(p) = path_of_socket(&s.remote, paths) {
            subflows[p].get_or_insert_with(Subflow::default).bytes_received += s.bytes;
        }
    }
    for s in &send.subflows {
        if let Some(p) = path_of_socket(&s.local, paths) {
            let sf = subflows[p].get_or_insert_with(Subflow::default);
            sf.retransmissions += s.retransmissions;
            sf.rtos += s.rtos;
        }
    }
    let mut samples = Samples { goodput: vec![vec![]; paths], cwnd: vec![vec![]; paths], srtt: vec![vec![]; paths] };
    let start = accepted.unwrap_or(0.0);
    for (t, line) in &recv_intervals {
        for s in line {
            if let Some(p) = path_of_socket(&s.remote, paths) {
                samples.goodput[p].push((t - start, s.mbps));
            }
        }
    }
    for (t, line) in &send_intervals {
        for s in line {
            let Some(p) = path_of_socket(&s.local, paths) else { continue };
            if let Some(rtt) = s.rtt_ms {
                samples.srtt[p].push((*t, rtt));
            }
            if let Some(cwnd) = s.cwnd {
                samples.cwnd[p].push((*t, cwnd as f64 / 1e3));
            }
        }
    }
    for (sf, rtts) in subflows.iter_mut().zip(&samples.srtt) {
        if let Some(sf) = sf {
            sf.srtt_mean_ms = (!rtts.is_empty()).then(|| rtts.iter().map(|r| r.1).sum::<f64>() / rtts.len() as f64);
        }
    }
    Ok(Run { goodput_mbps: recv.goodput_mbps, seconds: recv.seconds, subflows, samples })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scenario's loss detection and deferral reach Braid's sender.
    #[test]
    fn the_sender_is_told_the_scenarios_settings() {
        let plain = Sender { cc: "lia", scheduler: "blest", rack_tlp: false, tso_defer: false };
        let o = send_options(plain, Duration::from_secs(15), 3);
        assert_eq!(o.join(" "), "--time 15000ms --cc lia --scheduler blest --seed 3 --json");
        let o = send_options(Sender { rack_tlp: true, ..plain }, Duration::from_secs(15), 3);
        assert_eq!(o.last().map(String::as_str), Some("--rack-tlp"));
        let o = send_options(Sender { rack_tlp: true, tso_defer: true, ..plain }, Duration::from_secs(15), 3);
        assert_eq!(o[o.len() - 2..].join(" "), "--rack-tlp --tso-defer");
    }

    /// Lines as `braid send --json` printed them over fig7-mixed's
    /// testbed (trimmed to two seconds).
    const SENT: &str = r#"{"event":"start","to":"198.18.0.2:5302","cc":"cubic","scheduler":"minrtt","token":"db9d6474e4ef89ce"}
{"event":"interval","connection":0,"t":1.000193501,"mbps":89.7,"bytes":11218200,"subflows":[{"id":0,"local":"198.18.1.2:52929","remote":"198.18.0.2:5302","mbps":94.5,"rtt_ms":17.5,"cwnd":216336,"retransmissions":271,"state":"ok"},{"id":1,"local":"198.18.2.2:54454","remote":"198.18.0.2:5302","mbps":0.0,"rtt_ms":null,"cwnd":14000,"retransmissions":0,"state":"joining"}]}
{"event":"notice","connection":0,"t":1.025912811,"what":"subflow 1 timed out: its data goes on the others"}
{"event":"interval","connection":0,"t":2.000049605,"mbps":163.7,"bytes":31679200,"subflows":[{"id":0,"local":"198.18.1.2:52929","remote":"198.18.0.2:5302","mbps":96.0,"rtt_ms":15.5,"cwnd":190785,"retransmissions":23,"state":"ok"},{"id":1,"local":"198.18.2.2:54454","remote":"198.18.0.2:5302","mbps":68.3,"rtt_ms":2.5,"cwnd":13677,"retransmissions":29,"state":"ok"}]}
{"event":"summary","role":"send","bytes":77070336,"sha256":"3198","seconds":4.2,"goodput_mbps":146.5,"subflows":[{"id":0,"local":"198.18.1.2:52929","remote":"198.18.0.2:5302","bytes":49925736,"retransmissions":383,"rtos":0,"srtt_ms":18.1},{"id":1,"local":"198.18.2.2:54454","remote":"198.18.0.2:5302","bytes":27818000,"retransmissions":98,"rtos":1,"srtt_ms":4.5}]}
"#;

    /// The receiver's lines of the same run.
    const RECEIVED: &str = r#"{"event":"listening","addrs":["198.18.0.2:5302"]}
{"event":"notice","connection":0,"t":0.5,"what":"connection 0 accepted"}
{"event":"notice","connection":0,"t":1.5,"what":"connection 0: subflow 1 established"}
{"event":"interval","connection":0,"t":1.5,"mbps":93.3,"bytes":11653600,"subflows":[{"id":0,"local":"198.18.0.2:5302","remote":"198.18.1.2:52929","mbps":93.2,"rtt_ms":null,"cwnd":14000,"retransmissions":0,"state":"ok"},{"id":1,"local":"198.18.0.2:5302","remote":"198.18.2.2:54454","mbps":0.1,"rtt_ms":null,"cwnd":14000,"retransmissions":0,"state":"ok"}]}
{"event":"summary","role":"recv","connection":0,"bytes":77070336,"sha256":"3198","seconds":4.17,"goodput_mbps":147.8,"max_stall_ms":35.0,"invalid_packets":0,"subflows":[{"id":0,"local":"198.18.0.2:5302","remote":"198.18.1.2:52929","bytes":49389536,"retransmissions":0,"rtos":0,"srtt_ms":null},{"id":1,"local":"198.18.0.2:5302","remote":"198.18.2.2:54454","bytes":27680800,"retransmissions":0,"rtos":0,"srtt_ms":null}]}
"#;

    #[test]
    fn reads_both_ends_per_path() {
        let run = summarise(SENT, RECEIVED, 2).unwrap();
        assert_eq!((run.goodput_mbps, run.seconds), (147.8, 4.17));
        let sf1 = run.subflows[0].as_ref().unwrap();
        // Bytes from the receiver, retransmissions and RTT from the sender.
        assert_eq!(*sf1, Subflow { bytes_received: 49389536, retransmissions: 383, rtos: 0, srtt_mean_ms: Some(16.5) });
        let sf2 = run.subflows[1].as_ref().unwrap();
        assert_eq!((sf2.bytes_received, sf2.rtos, sf2.srtt_mean_ms), (27680800, 1, Some(2.5)));
        // Receiver seconds count from the connection's acceptance.
        assert_eq!(run.samples.goodput, vec![vec![(1.0, 93.2)], vec![(1.0, 0.1)]]);
        assert_eq!(run.samples.srtt[0], vec![(1.000193501, 17.5), (2.000049605, 15.5)]);
        assert_eq!(run.samples.srtt[1], vec![(2.000049605, 2.5)]);
        assert_eq!(run.samples.cwnd[0], vec![(1.000193501, 216.336), (2.000049605, 190.785)]);
    }

    #[test]
    fn a_path_without_a_subflow_stays_empty() {
        let run = summarise(SENT, RECEIVED, 3).unwrap();
        assert_eq!(run.subflows[2], None);
        assert!(run.samples.goodput[2].is_empty());
        // Addresses of no path of a one-path scenario are left out.
        let one = summarise(SENT, RECEIVED, 1).unwrap();
        assert_eq!(one.subflows.len(), 1);
        assert_eq!(one.subflows[0].as_ref().unwrap().bytes_received, 49389536);
    }

    #[test]
    fn refuses_different_bytes_garbage_and_no_summary() {
        let e = summarise(SENT, &RECEIVED.replace("\"3198\"", "\"ffff\""), 2).unwrap_err();
        assert!(e.contains("sha256 ffff") && e.contains("sha256 3198"), "{e}");
        let e = summarise(&format!("{SENT}not json\n"), RECEIVED, 2).unwrap_err();
        assert!(e.contains("braid send") && e.contains("line 6") && e.contains("not json"), "{e}");
        let cut: String = RECEIVED.lines().take(4).map(|l| format!("{l}\n")).collect();
        assert_eq!(summarise(SENT, &cut, 2).unwrap_err(), "braid recv printed no summary");
    }
}
