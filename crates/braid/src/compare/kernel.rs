//! One run of the Linux kernel's MPTCP over the emulated links: the
//! testbed script builds the namespaces and starts `braid emulate` with the
//! scenario, `iperf3` (wrapped by `mptcpize`) sends from the client for the
//! scenario's duration with controller `cc` (`iperf3 -C`, which MPTCP
//! passes on to every subflow; a namespace's default cannot be set to a
//! restricted controller), and the figures come from the kernel: `ss -tinH`
//! every 100 ms for each subflow (bytes acknowledged, smoothed RTT,
//! retransmitted segments), `nstat` for the namespace's TCP retransmission
//! counter, and iperf3's receiver total for the connection's goodput.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::ss;
use super::testbed::{client_ns, in_ns, path_of, run_quiet, server_addr, server_ns, Lines, Reaped, Testbed};

/// How long past its run iperf3 may take to finish and report.
const IPERF_GRACE: Duration = Duration::from_secs(30);

/// What the kernel reported for one subflow.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Subflow {
    pub bytes_acked: u64,
    pub retransmissions: u64,
    pub srtt_mean_ms: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    /// Congestion controller the kernel used, as `ss` names it.
    pub cc: String,
}

/// One `ss` sample of the data connection: seconds since the client
/// started, then per path what `ss` showed.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t: f64,
    pub paths: Vec<Option<PathSample>>,
}

/// One subflow in one `ss` sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSample {
    pub bytes_acked: u64,
    pub srtt_ms: Option<f64>,
    /// Congestion window, bytes (segments times the MSS).
    pub cwnd_bytes: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Bytes the iperf3 server read, over its seconds.
    pub goodput_mbps: f64,
    pub seconds: f64,
    /// Per path, in the scenario's order (`None`: no subflow on that path).
    pub subflows: Vec<Option<Subflow>>,
    /// Growth of the client namespace's `TcpRetransSegs`.
    pub retrans_segs: u64,
    pub samples: Vec<Sample>,
}

const PORT: &str = "5301";
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

fn retrans_segs(ns: &str) -> Result<u64, String> {
    let text = run_quiet(&mut in_ns(ns, &["nstat", "-s", "-a", "-z", "TcpRetransSegs"]), "nstat")?;
    text.lines()
        .find_map(|l| l.strip_prefix("TcpRetransSegs")?.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("nstat printed no TcpRetransSegs: {text:?}"))
}

/// Runs `cc` over the scenario's emulated links for `duration`; `paths`
/// names the client's addresses in path order.
pub fn run(
    script: &Path,
    scenario: &Path,
    seed: u64,
    cc: &str,
    duration: Duration,
    paths: usize,
) -> Result<Run, String> {
    let _bed = Testbed::up(script, scenario, seed)?;
    let (client, server) = (client_ns(), server_ns());
    let _server = Reaped::spawn(
        in_ns(&server, &["mptcpize", "run", "iperf3", "-s", "-1", "-p", PORT])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        "the iperf3 server (mptcpize from Debian's mptcpd, and iperf3)",
    )?;
    std::thread::sleep(Duration::from_millis(500));
    let retrans_before = retrans_segs(&client)?;
    let secs = duration.as_secs().max(1).to_string();
    let addr = server_addr();
    let start = Instant::now();
    // Its JSON report comes at the end, larger than a pipe holds for runs
    // of a few minutes: threads read it as it comes.
    let mut iperf = Lines::spawn(
        &mut in_ns(&client, &["mptcpize", "run", "iperf3", "-c", &addr, "-p", PORT, "-t", &secs, "-C", cc, "-J"]),
        "the iperf3 client",
    )?;
    let filter = format!("( dport = :{PORT} )");
    let mut raw = vec![];
    let sample_until = start + duration + IPERF_GRACE;
    while iperf.running()? && Instant::now() < sample_until {
        super::testbed::interrupted()?;
        let tick = Instant::now();
        let text = run_quiet(&mut in_ns(&client, &["ss", "-tinH", "state", "established", &filter]), "ss")?;
        raw.push(((tick - start).as_secs_f64(), ss::parse(&text)));
        std::thread::sleep(SAMPLE_EVERY.saturating_sub(tick.elapsed()));
    }
    let (_, stdout, stderr) = iperf.output(IPERF_GRACE)?;
    let retrans_after = retrans_segs(&client)?;
    let report: serde_json::Value =
        serde_json::from_str(&stdout).map_err(|e| format!("iperf3 printed no JSON report ({e}): {}", stderr.trim()))?;
    if let Some(err) = report.get("error") {
        return Err(format!("iperf3: {err}"));
    }
    let received = &report["end"]["sum_received"];
    let (bytes, seconds) = (received["bytes"].as_f64(), received["seconds"].as_f64());
    let (Some(bytes), Some(seconds)) = (bytes, seconds) else {
        return Err("iperf3's report has no end.sum_received".into());
    };
    let mut run = summarise(&raw, paths);
    run.goodput_mbps = bytes * 8.0 / seconds / 1e6;
    run.seconds = seconds;
    run.retrans_segs = retrans_after.saturating_sub(retrans_before);
    Ok(run)
}

/// Keeps the data connection (the token that acknowledged the most bytes)
/// and condenses its samples per path.
fn summarise(raw: &[(f64, Vec<ss::Subflow>)], paths: usize) -> Run {
    let mut acked: Vec<(&str, u64)> = vec![];
    for s in raw.iter().flat_map(|(_, v)| v) {
        match acked.iter_mut().find(|(t, _)| *t == s.token) {
            Some(e) => e.1 = e.1.max(s.bytes_acked),
            None => acked.push((&s.token, s.bytes_acked)),
        }
    }
    let data = acked.iter().max_by_key(|(_, b)| *b).map(|(t, _)| t.to_string()).unwrap_or_default();
    let mut subflows: Vec<Option<Subflow>> = vec![None; paths];
    let mut srtt: Vec<Vec<f64>> = vec![vec![]; paths];
    let mut samples = vec![];
    for (t, v) in raw {
        let mut sample = Sample { t: *t, paths: vec![None; paths] };
        for s in v.iter().filter(|s| s.token == data) {
            let Some(p) = path_of(&s.local, paths) else { continue };
            let sf = subflows[p].get_or_insert_with(Subflow::default);
            sf.bytes_acked = sf.bytes_acked.max(s.bytes_acked);
            sf.retransmissions = sf.retransmissions.max(s.retrans);
            sf.min_rtt_ms = s.min_rtt_ms.or(sf.min_rtt_ms);
            sf.cc.clone_from(&s.cc);
            srtt[p].extend(s.srtt_ms);
            sample.paths[p] =
                Some(PathSample { bytes_acked: s.bytes_acked, srtt_ms: s.srtt_ms, cwnd_bytes: s.cwnd * s.mss });
        }
        samples.push(sample);
    }
    for (sf, r) in subflows.iter_mut().zip(&srtt) {
        if let Some(sf) = sf {
            sf.srtt_mean_ms = (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64);
        }
    }
    Run { goodput_mbps: 0.0, seconds: 0.0, subflows, retrans_segs: 0, samples }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sf(local: &str, token: &str, acked: u64, srtt: f64) -> ss::Subflow {
        ss::Subflow {
            local: local.into(),
            token: token.into(),
            cc: "cubic".into(),
            bytes_acked: acked,
            retrans: acked / 1000,
            srtt_ms: Some(srtt),
            min_rtt_ms: Some(srtt / 2.0),
            cwnd: 10,
            mss: 1448,
        }
    }

    #[test]
    fn keeps_the_data_connection_per_path() {
        let raw = vec![
            (0.1, vec![sf("198.18.1.2", "ctl", 100, 10.0), sf("198.18.1.2", "data", 5000, 12.0)]),
            (
                0.2,
                vec![
                    sf("198.18.1.2", "ctl", 100, 10.0),
                    sf("198.18.1.2", "data", 9000, 14.0),
                    sf("198.18.2.2", "data", 3000, 20.0),
                ],
            ),
        ];
        let run = summarise(&raw, 2);
        let l1 = run.subflows[0].as_ref().unwrap();
        assert_eq!((l1.bytes_acked, l1.retransmissions, l1.srtt_mean_ms), (9000, 9, Some(13.0)));
        assert_eq!(run.subflows[1].as_ref().unwrap().bytes_acked, 3000);
        let at = |acked, srtt| Some(PathSample { bytes_acked: acked, srtt_ms: Some(srtt), cwnd_bytes: 14_480 });
        assert_eq!(run.samples[0].paths, vec![at(5000, 12.0), None]);
        assert_eq!(run.samples[1].paths[1], at(3000, 20.0));
    }
}
