//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast,
//! Popovic, Le Boudec, CoNEXT 2012 / ToN 2013; seed 002; seed 004
//! Algorithm 9; Linux MPTCP v0.96 `mptcp_olia.c`).
//!
//! Per ACK on subflow r in congestion avoidance, in segments:
//! `w_r += (w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2 + alpha_r / w_r`, and a
//! loss halves w_r. `alpha_r` moves window from the paths with the largest
//! windows (M) to the best paths (B, largest `l_r / rtt_r^2`) that are not
//! among them: with `B \ M` non-empty, `alpha_r = 1 / (|R| |B \ M|)` for r in
//! `B \ M`, `-1 / (|R| |M|)` for r in M, 0 otherwise; all zero when
//! `B \ M` is empty. `l_r` is the larger of the bytes acknowledged between
//! the last two losses and since the last loss.
//!
//! Following the kernel: `l_r` comes from three marks (loss1, loss2,
//! loss3), loss3 following the cumulative acknowledged bytes outside fast
//! recovery (`mptcp_olia_cong_avoid` sets it; Linux does not call it
//! during a window reduction) and the marks
//! shifting at each loss episode (recovery or a first timeout) unless
//! nothing was acknowledged since the last; |R| counts the subflows that
//! can send (active, with an RTT estimate); B uses exact equality with the
//! best `l_r / rtt_r^2`; the per-ACK term may be negative and shrinks the
//! window, floored at one segment; a subflow in recovery counts with its
//! ssthresh, which Braid's windows equal during recovery. (Checked against
//! `mptcp_olia.c` as stored in multipath-tcp/mptcp; the kernel also adds 1
//! inside its rate sum and quantises in 1/1024 steps, integer artefacts
//! Braid does not copy.) Deviations: growth is per acknowledged
//! byte rather than per ACK event (see `cc`), loss3 counts SACKed bytes too
//! (the kernel uses snd_una), and arithmetic is f64.

use super::aimd::WindowRule;
use super::window::Window;
use super::{AckSample, PathView};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LossMarks {
    loss1: u64,
    loss2: u64,
    loss3: u64,
}

impl LossMarks {
    /// `l_r`: bytes between the last two losses, or since the last one if more.
    fn interval(&self) -> u64 {
        (self.loss3 - self.loss2).max(self.loss2 - self.loss1)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Olia {
    marks: Vec<LossMarks>,
    /// The paths `increase` considers, kept to reuse its memory (no
    /// allocation per ACK).
    set: Vec<OliaPath>,
}

/// One subflow as OLIA's alpha sees it: window (bytes), smoothed RTT
/// (seconds) and loss interval `l_r` (bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OliaPath {
    pub cwnd: f64,
    pub rtt: f64,
    pub loss_interval: f64,
}

/// `alpha_r` for every path (OLIA's `B`, `M`, `B \ M` rule).
pub fn olia_alphas(paths: &[OliaPath]) -> Vec<f64> {
    (0..paths.len()).map(|r| olia_alpha(paths, r)).collect()
}

/// `alpha_r` of path `r` alone, without allocating.
fn olia_alpha(paths: &[OliaPath], r: usize) -> f64 {
    let n = paths.len() as f64;
    let quality = |p: &OliaPath| p.loss_interval / (p.rtt * p.rtt);
    let best = paths.iter().map(quality).fold(f64::MIN, f64::max);
    let max_w = paths.iter().map(|p| p.cwnd).fold(f64::MIN, f64::max);
    let in_m = |p: &OliaPath| p.cwnd == max_w;
    let collected = |p: &OliaPath| quality(p) == best && !in_m(p);
    let n_collected = paths.iter().filter(|p| collected(p)).count() as f64;
    let n_max = paths.iter().filter(|p| in_m(p)).count() as f64;
    let p = &paths[r];
    match () {
        _ if n_collected == 0.0 => 0.0,
        _ if collected(p) => 1.0 / (n * n_collected),
        _ if in_m(p) => -1.0 / (n * n_max),
        _ => 0.0,
    }
}

impl Olia {
    fn marks(&mut self, path: usize) -> &mut LossMarks {
        if self.marks.len() <= path {
            self.marks.resize(path + 1, LossMarks::default());
        }
        &mut self.marks[path]
    }
}

impl WindowRule for Olia {
    const NAME: &'static str = "olia";

    fn observe_ack(&mut self, path: usize, ack: &AckSample) {
        self.marks(path).loss3 = ack.delivered;
    }

    fn observe_loss(&mut self, path: usize) {
        let m = self.marks(path);
        if m.loss3 != m.loss2 {
            m.loss1 = m.loss2;
            m.loss2 = m.loss3;
        }
    }

    fn increase(&mut self, windows: &[Window], path: usize, acked: f64, paths: &[PathView]) -> f64 {
        let w = windows[path];
        let reno = acked * w.mss / w.cwnd;
        let set = &mut self.set;
        set.clear();
        let mut me = None;
        for (r, (win, view)) in windows.iter().zip(paths).enumerate() {
            let Some(rtt) = view.srtt.filter(|_| win.active && view.active).map(|d| d.as_secs_f64()) else { continue };
            if rtt <= 0.0 {
                continue;
            }
            if r == path {
                me = Some(set.len());
            }
            let loss_interval = self.marks.get(r).map_or(0, LossMarks::interval) as f64;
            set.push(OliaPath { cwnd: win.cwnd, rtt, loss_interval });
        }
        let Some(me) = me else { return reno };
        let alpha = olia_alpha(set, me);
        let denom: f64 = set.iter().map(|p| p.cwnd / p.rtt).sum();
        let mine = set[me];
        let coupled = (mine.cwnd / (mine.rtt * mine.rtt)) / (denom * denom);
        acked * w.mss * (coupled + alpha / w.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::super::aimd::test_support::{ack, in_avoidance};
    use super::super::Controller;
    use super::*;
    use crate::time::{Duration, Instant};

    fn p(cwnd: f64, rtt: f64, l: f64) -> OliaPath {
        OliaPath { cwnd, rtt, loss_interval: l }
    }

    #[test]
    fn alpha_follows_best_and_max_window_sets() {
        // Path 0 is best (l/rtt^2 = 1e9 vs 1.25e8), path 1 has the max window:
        // B \ M = {0}, |R| = 2: alpha = +1/2 and -1/2.
        let a = olia_alphas(&[p(10_000.0, 0.010, 100_000.0), p(20_000.0, 0.020, 50_000.0)]);
        assert_eq!(a, vec![0.5, -0.5]);
        // The best path also has the max window: B \ M empty, all zero.
        let a = olia_alphas(&[p(30_000.0, 0.010, 100_000.0), p(20_000.0, 0.020, 50_000.0)]);
        assert_eq!(a, vec![0.0, 0.0]);
        // Three paths, two best ones outside M: 1/(3*2) each; M gets -1/3.
        let a = olia_alphas(&[p(1.0, 0.01, 10.0), p(2.0, 0.01, 10.0), p(9.0, 0.01, 1.0)]);
        assert_eq!(a, vec![1.0 / 6.0, 1.0 / 6.0, -1.0 / 3.0]);
        // Three paths, one best outside M and two sharing the max window:
        // +1/(3*1) for the best, -1/(3*2) for each of M.
        let a = olia_alphas(&[p(1.0, 0.01, 10.0), p(9.0, 0.01, 1.0), p(9.0, 0.02, 1.0)]);
        assert_eq!(a, vec![1.0 / 3.0, -1.0 / 6.0, -1.0 / 6.0]);
        // Quality is l / rtt^2: 10 kB over (10 ms)^2 beats 30 kB over (20 ms)^2,
        // though the second delivers more per RTT; it also has the max window.
        let a = olia_alphas(&[p(10.0, 0.01, 10_000.0), p(20.0, 0.02, 30_000.0)]);
        assert_eq!(a, vec![0.5, -0.5]);
    }

    #[test]
    fn increase_matches_hand_computation() {
        let mut o = in_avoidance::<Olia>(&[10, 20]);
        // l_0 = 100 kB, l_1 = 50 kB.
        o.rule.marks = vec![
            LossMarks { loss1: 0, loss2: 100_000, loss3: 100_000 },
            LossMarks { loss1: 0, loss2: 50_000, loss3: 50_000 },
        ];
        let view =
            |ms| PathView { srtt: Some(Duration::from_millis(ms)), mss: 1000, active: true, ..Default::default() };
        let paths = [view(10), view(20)];
        // Path 0: (1e4/1e-4) / (1e6 + 1e6)^2 * 1e6 = 25 B, plus 0.5 * 1e6 / 1e4 = 50 B.
        let inc = o.rule.increase(&o.windows, 0, 1000.0, &paths);
        assert!((inc - 75.0).abs() < 1e-9, "{inc}");
        // Path 1: 12.5 B coupled, minus 0.5 * 1e6 / 2e4 = 25 B: shrinks by 12.5 B.
        let inc = o.rule.increase(&o.windows, 1, 1000.0, &paths);
        assert!((inc + 12.5).abs() < 1e-9, "{inc}");
        // Without an RTT estimate a subflow grows like Reno: 1e6 / 2e4 = 50 B.
        let unmeasured = [view(10), PathView { srtt: None, ..view(20) }];
        let inc = o.rule.increase(&o.windows, 1, 1000.0, &unmeasured);
        assert!((inc - 50.0).abs() < 1e-9, "{inc}");
        // A subflow still joining does not count: path 0 alone is Reno,
        // 1e6 / 1e4 = 100 B.
        let joining = [view(10), PathView { active: false, ..view(20) }];
        let inc = o.rule.increase(&o.windows, 0, 1000.0, &joining);
        assert!((inc - 100.0).abs() < 1e-9, "{inc}");
        // Through the controller: the marks follow acknowledged bytes and
        // shift at losses, and the window may shrink.
        let mut a = ack(1000);
        a.delivered = 50_000;
        o.on_ack(1, &a, &paths);
        assert_eq!(o.window(1), 19_987);
        a.delivered = 70_000;
        o.on_ack(1, &a, &paths);
        o.on_congestion_event(Instant::ZERO, 1, &paths);
        assert_eq!(o.rule.marks[1], LossMarks { loss1: 50_000, loss2: 70_000, loss3: 70_000 });
        assert_eq!(o.rule.marks[1].interval(), 20_000);
        // In recovery the marks stay: a timeout then (a loss episode with
        // nothing acknowledged since the last) does not shift them.
        (a.delivered, a.in_recovery) = (90_000, true);
        o.on_ack(1, &a, &paths);
        o.on_rto(Instant::ZERO, 1, &paths, false);
        assert_eq!(o.rule.marks[1], LossMarks { loss1: 50_000, loss2: 70_000, loss3: 70_000 });
    }
}
