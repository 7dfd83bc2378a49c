//! Buffer sizing models for a multipath connection (seed 003 §2.2): what
//! send and receive buffer each model recommends for a set of paths.
//!
//! - eq. 1, a TCP buffer with Linux's overhead: each path's bandwidth-delay
//!   product, summed, over `1 - 2^-tcp_adv_win_scale` (Linux keeps that
//!   share of a receive buffer for bookkeeping, so the window is smaller
//!   than the buffer; the send buffer holds no such overhead).
//! - eq. 2, the MPTCP minimum: `2 x max RTT x sum of bandwidths` (a fast
//!   path must keep sending while the slowest path's data is outstanding).
//! - eq. 3, with retransmissions: `(3 x max RTT + max RTO) x sum of
//!   bandwidths` (a loss on the slow path holds up the window for an RTO).
//!
//! Seed 003 sizes the send and the receive buffer alike (`SO_SNDBUF` and
//! `SO_RCVBUF`), so eq. 2 and eq. 3 recommend the same for both.

/// One path: rate in bit/s, round-trip time and retransmission timeout in s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSpec {
    pub rate_bps: f64,
    pub rtt_s: f64,
    /// `None`: Linux's floor of 200 ms plus the RTT.
    pub rto_s: Option<f64>,
}

impl PathSpec {
    pub fn rto(&self) -> f64 {
        self.rto_s.unwrap_or(0.2 + self.rtt_s)
    }
}

/// One model's recommendation, in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    pub model: &'static str,
    pub formula: &'static str,
    pub send_bytes: f64,
    pub recv_bytes: f64,
}

/// Every model's recommendation for `paths`; `adv_win_scale` is Linux's
/// `tcp_adv_win_scale` (1 since Linux 3.x, 2 before).
pub fn recommend(paths: &[PathSpec], adv_win_scale: u32) -> Vec<Recommendation> {
    let bw: f64 = paths.iter().map(|p| p.rate_bps / 8.0).sum();
    let max_rtt = paths.iter().map(|p| p.rtt_s).fold(0.0, f64::max);
    let max_rto = paths.iter().map(PathSpec::rto).fold(0.0, f64::max);
    let bdp: f64 = paths.iter().map(|p| p.rate_bps / 8.0 * p.rtt_s).sum();
    let overhead = 1.0 - 0.5f64.powi(adv_win_scale as i32);
    let eq2 = 2.0 * max_rtt * bw;
    let eq3 = (3.0 * max_rtt + max_rto) * bw;
    vec![
        Recommendation {
            model: "eq. 1 (TCP, Linux overhead)",
            formula: "sum(BDP) / (1 - 2^-tcp_adv_win_scale)",
            send_bytes: bdp,
            recv_bytes: bdp / overhead,
        },
        Recommendation {
            model: "eq. 2 (MPTCP)",
            formula: "2 x max RTT x sum(bandwidth)",
            send_bytes: eq2,
            recv_bytes: eq2,
        },
        Recommendation {
            model: "eq. 3 (with retransmission)",
            formula: "(3 x max RTT + max RTO) x sum(bandwidth)",
            send_bytes: eq3,
            recv_bytes: eq3,
        },
    ]
}

/// Reads `RATE/RTT[/RTO]`, e.g. `100Mbit/10ms` or `20Mbit/100ms/300ms`.
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    let parts: Vec<&str> = s.split('/').collect();
    if !(2..=3).contains(&parts.len()) {
        return Err(format!("{s:?}: expected RATE/RTT or RATE/RTT/RTO, e.g. 100Mbit/10ms"));
    }
    let rate = crate::units::parse_rate(parts[0]).map_err(|e| format!("{s:?}: {e}"))?;
    let time =
        |t: &str| crate::units::parse_duration(t).map(|d| d.as_nanos() as f64 / 1e9).map_err(|e| format!("{s:?}: {e}"));
    let rtt = time(parts[1])?;
    if rtt <= 0.0 {
        return Err(format!("{s:?}: the RTT must be above zero"));
    }
    let rto = parts.get(2).map(|t| time(t)).transpose()?;
    // Milliseconds as given (from whole nanoseconds: 999us is 0.999, not 0.9990000000000001).
    let ms = |secs: f64| (secs * 1e9).round() / 1e6;
    if let Some(rto) = rto.filter(|&rto| rto < rtt) {
        // RFC 6298's timer is the smoothed RTT plus four deviations, and
        // Linux's at least 200 ms more than the RTT.
        return Err(format!(
            "{s:?}: the RTO ({} ms) is below the RTT ({} ms); it is at least a round trip",
            ms(rto),
            ms(rtt)
        ));
    }
    Ok(PathSpec { rate_bps: rate as f64, rtt_s: rtt, rto_s: rto })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heterogeneous pair of issue 10: 100 Mbit/s 10 ms + 20 Mbit/s 100 ms.
    #[test]
    fn models_on_heterogeneous_paths() {
        let paths = [parse_path("100Mbit/10ms").unwrap(), parse_path("20Mbit/100ms/300ms").unwrap()];
        let r = recommend(&paths, 1);
        // BDPs 125,000 + 250,000 bytes; half kept for overhead.
        assert!((r[0].recv_bytes - 750_000.0).abs() < 1e-6 && (r[0].send_bytes - 375_000.0).abs() < 1e-6);
        // 2 x 0.1 s x 15,000,000 B/s.
        assert!((r[1].recv_bytes - 3_000_000.0).abs() < 1e-6);
        // (0.3 + 0.3) s x 15,000,000 B/s.
        assert!((r[2].recv_bytes - 9_000_000.0).abs() < 1e-6);
        assert!((recommend(&paths, 2)[0].recv_bytes - 500_000.0).abs() < 1e-6);
        assert!((paths[0].rto() - 0.21).abs() < 1e-12);
        assert!(parse_path("100Mbit").is_err() && parse_path("fast/10ms").is_err() && parse_path("1Mbit/0ms").is_err());
        assert!(parse_path("1Mbit/100ms/50ms").unwrap_err().contains("below the RTT"));
        assert!(parse_path("1Mbit/1ms/999us").unwrap_err().contains("the RTO (0.999 ms) is below the RTT (1 ms)"));
        assert!(parse_path("1Mbit/100ms/100ms").is_ok());
    }
}
