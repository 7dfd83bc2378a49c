//! What `send` and `recv` print: per-second lines and a summary, as text
//! or as JSON lines (one object per line, the last one the summary).

use std::io::Write;

use braid_net::{ConnectionHandle, Node};
use serde::Serialize;

/// One subflow over one report interval.
#[derive(Clone, Debug, Serialize)]
pub struct SubflowLine {
    pub id: u8,
    pub local: String,
    pub remote: String,
    /// Payload bytes over the interval: sent (sender) or newly received (receiver).
    pub mbps: f64,
    pub rtt_ms: Option<f64>,
    pub cwnd: u64,
    /// Payload bytes per packet: less than the configured MSS where the
    /// route carries less or the path lost its full-sized packets.
    pub mss: u32,
    pub retransmissions: u64,
    /// ok, joining, failed (timed out, probing) or closed.
    pub state: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct Interval {
    pub event: &'static str,
    pub connection: usize,
    /// Seconds since the start, at the end of the interval.
    pub t: f64,
    /// Goodput over the interval: bytes acknowledged (sender) or delivered in order (receiver).
    pub mbps: f64,
    pub bytes: u64,
    pub subflows: Vec<SubflowLine>,
}

/// A subflow in a summary.
#[derive(Clone, Debug, Serialize)]
pub struct SubflowTotal {
    pub id: u8,
    pub local: String,
    pub remote: String,
    /// Payload bytes: sent, retransmissions included (sender), or newly
    /// received (receiver).
    pub bytes: u64,
    pub retransmissions: u64,
    pub rtos: u64,
    pub srtt_ms: Option<f64>,
    /// Payload bytes per packet at the end (see [`SubflowLine::mss`]).
    pub mss: u32,
}

/// Per-subflow counters at one moment, to take differences between reports.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub at: f64,
    pub bytes: u64,
    pub subflows: Vec<(u64, u64)>,
}

/// Where lines go.
#[derive(Clone, Copy, Debug)]
pub struct Out {
    pub json: bool,
}

impl Out {
    /// Prints a JSON object or a text line, flushed at once (a reader of
    /// a pipe sees each second as it ends). A closed pipe ends the program
    /// quietly.
    pub fn line<T: Serialize>(&self, value: &T, text: impl FnOnce() -> String) {
        let line = if self.json { serde_json::to_string(value).expect("plain data serialises") } else { text() };
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            std::process::exit(0);
        }
    }

    /// A notice (a subflow failed, recovered, ...): a JSON object or a text line.
    pub fn notice(&self, connection: ConnectionHandle, t: f64, what: &str) {
        #[derive(Serialize)]
        struct Notice<'a> {
            event: &'static str,
            connection: usize,
            t: f64,
            what: &'a str,
        }
        let n = Notice { event: "notice", connection: connection.0, t, what };
        self.line(&n, || format!("[{t:7.2}s] {what}"));
    }
}

/// A protocol event as a notice says it.
pub fn describe(e: &braid_proto::Event) -> String {
    use braid_proto::Event;
    match e {
        Event::SubflowFailed { subflow } => format!("subflow {} timed out: its data goes on the others", subflow.0),
        Event::SubflowEstablished { subflow } => format!("subflow {} established", subflow.0),
        Event::SubflowRecovered { subflow } => format!("subflow {} works again", subflow.0),
        Event::SubflowClosed { subflow } => format!("subflow {} closed", subflow.0),
        Event::SubflowReset { subflow } => {
            format!("subflow {} reset by the peer: its data goes on the others", subflow.0)
        }
        Event::Failed(err) => format!("connection failed: {err}"),
        Event::PeerClosed => "the peer closed its side".into(),
        Event::Closed => "our close was acknowledged".into(),
        Event::AddressAdvertised { id, addr } => format!("the server advertised address {id}: {addr}"),
        Event::AddressRemoved { id } => format!("the server withdrew address {id}"),
    }
}

/// Subflow `i`'s local and remote address; `None` for a slot no packet
/// ever used (a join on a higher id leaves the ids below it empty).
fn addr_text(node: &Node, h: ConnectionHandle, i: usize) -> Option<(String, String)> {
    let (l, r) = node.subflow_addrs(h, braid_proto::SubflowId::from_index(i)?)?;
    Some((l.to_string(), r.to_string()))
}

/// Counters now; `sender` picks bytes sent, else bytes received.
pub fn snapshot(node: &mut Node, h: ConnectionHandle, at: f64, sender: bool) -> Snapshot {
    let Some(conn) = node.connection(h) else { return Snapshot { at, ..Default::default() } };
    let st = conn.stats();
    let subflows = (0..conn.subflow_count())
        .map(|i| {
            let c = conn.subflow_stats(i).map(|s| s.counters).unwrap_or_default();
            (if sender { c.bytes_sent } else { c.bytes_received_new }, c.retransmissions)
        })
        .collect();
    Snapshot { at, bytes: if sender { st.bytes_acked } else { st.bytes_received }, subflows }
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs <= 0.0 {
        0.0
    } else {
        bytes as f64 * 8.0 / secs / 1e6
    }
}

/// The line for the interval from `before` to now.
pub fn interval(node: &mut Node, h: ConnectionHandle, before: &Snapshot, now: &Snapshot) -> Interval {
    let secs = now.at - before.at;
    let subflows = (0..now.subflows.len())
        .filter_map(|i| {
            let (local, remote) = addr_text(node, h, i)?;
            let st = node.connection(h).and_then(|c| c.subflow_stats(i)).unwrap_or_default();
            let (b0, r0) = before.subflows.get(i).copied().unwrap_or((0, 0));
            let (b1, r1) = now.subflows[i];
            let state = if st.potentially_failed {
                "failed"
            } else if st.established {
                "ok"
            } else {
                "joining"
            };
            Some(SubflowLine {
                id: i as u8,
                local,
                remote,
                mbps: mbps(b1.saturating_sub(b0), secs),
                rtt_ms: st.srtt.map(|d| d.as_millis_f64()),
                cwnd: st.cwnd,
                mss: st.mss,
                retransmissions: r1.saturating_sub(r0),
                state,
            })
        })
        .collect();
    Interval {
        event: "interval",
        connection: h.0,
        t: now.at,
        mbps: mbps(now.bytes.saturating_sub(before.bytes), secs),
        bytes: now.bytes,
        subflows,
    }
}

/// The text form of an interval line.
pub fn interval_text(i: &Interval, sender: bool) -> String {
    let mut s = format!("[{:7.2}s] {:8.2} Mbit/s {:>12} B", i.t, i.mbps, i.bytes);
    for f in &i.subflows {
        s += &format!(" | sf{} {:7.2} Mbit/s", f.id, f.mbps);
        if sender {
            let rtt = f.rtt_ms.map_or("-".to_string(), |r| format!("{r:.1}"));
            s += &format!(" rtt {rtt} ms cwnd {} kB retx {}", f.cwnd / 1000, f.retransmissions);
            if f.mss < braid_net::MSS {
                s += &format!(" mss {}", f.mss);
            }
        }
        if f.state != "ok" {
            s += &format!(" ({})", f.state);
        }
    }
    s
}

/// The summary's subflows.
pub fn totals(node: &mut Node, h: ConnectionHandle, sender: bool) -> Vec<SubflowTotal> {
    let n = node.connection(h).map_or(0, |c| c.subflow_count());
    (0..n)
        .filter_map(|i| {
            let (local, remote) = addr_text(node, h, i)?;
            let st = node.connection(h)?.subflow_stats(i)?;
            let c = st.counters;
            Some(SubflowTotal {
                id: i as u8,
                local,
                remote,
                bytes: if sender { c.bytes_sent } else { c.bytes_received_new },
                retransmissions: c.retransmissions,
                rtos: c.rtos,
                srtt_ms: st.srtt.map(|d| d.as_millis_f64()),
                mss: st.mss,
            })
        })
        .collect()
}

pub fn goodput_mbps(bytes: u64, secs: f64) -> f64 {
    mbps(bytes, secs)
}

/// The summary's subflows as text.
pub fn totals_text(subflows: &[SubflowTotal]) -> String {
    subflows
        .iter()
        .map(|s| {
            format!(
                "  sf{} {} -> {}: {} B, {} retransmissions, {} RTOs\n",
                s.id, s.local, s.remote, s.bytes, s.retransmissions, s.rtos
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(mss: u32) -> Interval {
        let sf = SubflowLine {
            id: 0,
            local: "a".into(),
            remote: "b".into(),
            mbps: 1.0,
            rtt_ms: Some(10.0),
            cwnd: 14_000,
            mss,
            retransmissions: 0,
            state: "ok",
        };
        Interval { event: "interval", connection: 0, t: 1.0, mbps: 1.0, bytes: 125_000, subflows: vec![sf] }
    }

    /// The sender's text line names a subflow's MSS only when it is below
    /// the usual 1400 bytes (the path carries less); the JSON has it always.
    #[test]
    fn a_smaller_mss_shows_in_the_senders_line() {
        assert!(interval_text(&interval(1162), true).ends_with("retx 0 mss 1162"));
        assert!(!interval_text(&interval(braid_net::MSS), true).contains("mss"));
        assert!(!interval_text(&interval(1162), false).contains("mss"));
        assert!(serde_json::to_string(&interval(1400)).unwrap().contains("\"mss\":1400"));
    }
}
