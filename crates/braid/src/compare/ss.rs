//! Reads the kernel's own per-subflow figures from `ss -tinH` (iproute2):
//! one header line per TCP socket (queues, local and peer address), then
//! an indented line of `key:value` fields. MPTCP subflows carry
//! `tcp-ulp-mptcp ... token:LOCAL(id:N)/REMOTE(id:M)`; the remote token
//! names the connection, so the data connection's subflows can be told
//! from iperf3's control connection.

/// One subflow's counters at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Subflow {
    /// Local address without port or device, e.g. "198.18.2.2".
    pub local: String,
    /// The peer's connection token (same for every subflow of a connection).
    pub token: String,
    pub cc: String,
    pub bytes_acked: u64,
    /// Total retransmitted segments (`retrans:CURRENT/TOTAL`).
    pub retrans: u64,
    pub srtt_ms: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    /// Congestion window in segments of `mss` bytes.
    pub cwnd: u64,
    pub mss: u64,
}

fn field<'a>(info: &'a str, key: &str) -> Option<&'a str> {
    info.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix(':'))
}

/// Parses the output of `ss -tinH`; sockets without MPTCP are skipped.
pub fn parse(text: &str) -> Vec<Subflow> {
    let mut out = vec![];
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    while let Some(head) = lines.next() {
        if head.starts_with(char::is_whitespace) {
            continue;
        }
        let Some(info) = lines.next_if(|l| l.starts_with(char::is_whitespace)) else { continue };
        // Header: [state] recv-q send-q local peer; the local address is
        // the one before the peer, the last two columns.
        let cols: Vec<&str> = head.split_whitespace().collect();
        let Some(local) = cols.len().checked_sub(2).map(|i| cols[i]) else { continue };
        let local = local.rsplit_once(':').map_or(local, |(a, _)| a);
        let local = local.split('%').next().unwrap_or(local).to_string();
        let Some(token) = field(info, "token").and_then(|t| t.split('/').nth(1)).and_then(|t| t.split('(').next())
        else {
            continue;
        };
        let ms = |key| field(info, key).and_then(|v| v.split('/').next()?.parse::<f64>().ok());
        let num = |key| field(info, key).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        out.push(Subflow {
            local,
            token: token.to_string(),
            cc: info.split_whitespace().next().unwrap_or("").to_string(),
            bytes_acked: num("bytes_acked"),
            retrans: field(info, "retrans").and_then(|v| v.split('/').nth(1)?.parse().ok()).unwrap_or(0),
            srtt_ms: ms("rtt"),
            min_rtt_ms: ms("minrtt"),
            cwnd: num("cwnd"),
            mss: num("mss"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
0      0       198.18.2.2%emu1:44643 198.18.0.2:5301
\t bbr wscale:10,10 rto:224 rtt:20.375/10.187 mss:1448 cwnd:10 bytes_acked:1 minrtt:20.375 tcp-ulp-mptcp flags:Jjec token:63b41014(id:0)/42e54668(id:1) seq:6453f6869c884cbe
0      532128  198.18.2.2%emu1:60061 198.18.0.2:5301
\t cubic wscale:10,10 rto:224 rtt:20.761/0.429 mss:1448 cwnd:73 ssthresh:70 bytes_sent:16218672 bytes_retrans:7120 bytes_acked:16110497 unacked:71 retrans:0/5 minrtt:20 tcp-ulp-mptcp flags:Jjec token:2e4d6204(id:0)/58a2a208(id:1) seq:56af35f85ffe558c
0      1163776      198.18.1.2:52198 198.18.0.2:5301
\t cubic wscale:10,10 rto:216 rtt:14.48/0.266 mss:1448 cwnd:125 bytes_acked:22704902 retrans:1/96 minrtt:10.229 tcp-ulp-mptcp flags:Mmec token:0000(id:0)/58a2a208(id:0) seq:56af35f85ffe558c
0      0      127.0.0.1:5000 127.0.0.1:40000
\t cubic rtt:0.1/0.05 bytes_acked:10
";

    #[test]
    fn reads_mptcp_subflows_and_skips_plain_tcp() {
        let s = parse(SAMPLE);
        assert_eq!(s.len(), 3);
        assert_eq!(
            s[1],
            Subflow {
                local: "198.18.2.2".into(),
                token: "58a2a208".into(),
                cc: "cubic".into(),
                bytes_acked: 16110497,
                retrans: 5,
                srtt_ms: Some(20.761),
                min_rtt_ms: Some(20.0),
                cwnd: 73,
                mss: 1448,
            }
        );
        assert_eq!((s[2].local.as_str(), s[2].token.as_str(), s[2].retrans), ("198.18.1.2", "58a2a208", 96));
        assert_eq!(s[0].token, "42e54668");
    }

    #[test]
    fn tolerates_garbage() {
        assert!(parse("").is_empty());
        assert!(parse("nonsense\n\t more nonsense token:\n").is_empty());
        assert!(parse("\t orphan info line\n").is_empty());
    }
}
