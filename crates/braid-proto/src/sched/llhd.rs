//! LLHD, Low-Latency and High-Delivery (Lubna, Mahmud, Kandel, Ahmed, 2022;
//! seed 004 §2.2.5 and Algorithm 5; the authors' published kernel module).
//!
//! Among eligible subflows with window space, choose the one maximising
//! `gamma = GP / GP_max + beta * RTT_max / RTT`, with the normalising
//! constants of the pseudo-code, `GP_max = 9999` and `RTT_max = 9999999`.
//!
//! beta: the paper gives 0.001, the published code 10; Braid uses the
//! paper's value (`Llhd::beta` can be set). Units are not stated in the
//! seed; Braid takes GP in Mbit/s (from the subflow's latest delivery-rate
//! sample) and RTT in microseconds (SRTT), the kernel's native RTT unit.
//! With beta = 10 the RTT term dominates and LLHD behaves like minRTT.

use super::{eligible, Decision, SchedConn, SchedPath, Scheduler};

pub const LLHD_GP_MAX: f64 = 9999.0;
pub const LLHD_RTT_MAX: f64 = 9_999_999.0;
pub const LLHD_BETA_PAPER: f64 = 0.001;
pub const LLHD_BETA_CODE: f64 = 10.0;

#[derive(Clone, Copy, Debug)]
pub struct Llhd {
    pub beta: f64,
}

impl Default for Llhd {
    fn default() -> Self {
        Llhd { beta: LLHD_BETA_PAPER }
    }
}

impl Llhd {
    /// LLHD's score of one subflow.
    pub fn gamma(&self, p: &SchedPath) -> f64 {
        let gp = p.delivery_rate * 8.0 / 1e6;
        let rtt_us = (p.rtt() * 1e6).max(1.0);
        gp / LLHD_GP_MAX + self.beta * LLHD_RTT_MAX / rtt_us
    }
}

impl Scheduler for Llhd {
    fn name(&self) -> &'static str {
        "llhd"
    }

    fn select(&mut self, _conn: &SchedConn, paths: &[SchedPath]) -> Decision {
        eligible(paths)
            .filter(|&i| paths[i].has_window_space())
            .max_by(|&a, &b| self.gamma(&paths[a]).total_cmp(&self.gamma(&paths[b])).then(b.cmp(&a)))
            .map_or(Decision::Wait, Decision::Send)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::path;
    use super::*;

    #[test]
    fn gamma_weighs_goodput_against_rtt() {
        let mut fast_thin = path(10, 0);
        fast_thin.delivery_rate = 1.25e6; // 10 Mbit/s
        let mut slow_fat = path(40, 0);
        slow_fat.delivery_rate = 12.5e6; // 100 Mbit/s
        let paper = Llhd::default();
        // 10/9999 + 0.001 * 9999999/10000 = 0.0010001 + 0.9999999 = 1.0010
        assert!((paper.gamma(&fast_thin) - (10.0 / 9999.0 + 0.001 * 999.9999)).abs() < 1e-9);
        // 100/9999 + 0.001 * 9999999/40000 = 0.0100 + 0.2500 = 0.2600
        assert!((paper.gamma(&slow_fat) - (100.0 / 9999.0 + 0.001 * 249.999_975)).abs() < 1e-9);
        let mut llhd = Llhd::default();
        assert_eq!(llhd.select(&SchedConn::default(), &[slow_fat, fast_thin]), Decision::Send(1));
        // Equal RTTs: goodput decides.
        let mut a = path(20, 0);
        a.delivery_rate = 1e6;
        let mut b = path(20, 0);
        b.delivery_rate = 5e6;
        assert_eq!(llhd.select(&SchedConn::default(), &[a, b]), Decision::Send(1));
    }
}
