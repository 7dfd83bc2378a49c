//! Random loss models: Bernoulli and Gilbert–Elliott.
//!
//! A model holds only its state; the caller passes the random stream, so a
//! link keeps one seeded stream for all its draws (loss, RED) and a
//! Bernoulli model draws exactly as the simulator's links always have (one
//! `f64` per packet, drop when below `p`). Byte-identical runs stay
//! byte-identical when a link adopts this module.
//!
//! Gilbert–Elliott (Gilbert 1960, Elliott 1963): a two-state Markov chain
//! advanced once per packet. From Good the chain moves to Bad with
//! probability `p`, from Bad back to Good with probability `r`; a packet is
//! lost with probability `loss_good` in Good and `loss_bad` in Bad. The
//! chain moves first, then the packet is judged in the state it lands in.
//! (netem's `loss gemodel`, `loss_gilb_ell`, judges it in the state it
//! left: the same stationary loss and burst lengths, each packet's fate
//! shifted by one.) The stationary share of Bad is
//! `p / (p + r)`, the loss rate `(r loss_good + p loss_bad) / (p + r)`, and
//! with `loss_good = 0`, `loss_bad = 1` (Gilbert's original model) a loss
//! burst lasts `1 / r` packets on average.

use rand::Rng;

/// Which model, with its parameters (probabilities in [0, 1]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossSpec {
    /// Each packet lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state bursty loss, see the module documentation.
    GilbertElliott { p: f64, r: f64, loss_good: f64, loss_bad: f64 },
}

/// Why a [`LossSpec`] was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum LossSpecError {
    NotAProbability {
        name: &'static str,
        value: f64,
    },
    Total,
    /// Gilbert-Elliott parameters whose long run loses every packet.
    TotalInTheLongRun,
    Frozen,
}

impl std::fmt::Display for LossSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LossSpecError::NotAProbability { name, value } => {
                write!(f, "{name} = {value} is not a probability in [0, 1]")
            }
            LossSpecError::Total => write!(f, "Bernoulli loss must be below 1 (p = 1 drops every packet)"),
            LossSpecError::TotalInTheLongRun => write!(
                f,
                "these parameters drop every packet in the long run (stationary loss (r loss_good + p loss_bad) / \
                 (p + r) = 1); give r > 0 and loss_bad < 1, or loss_good < 1"
            ),
            LossSpecError::Frozen => write!(f, "p = r = 0 never leaves the starting state; give r > 0"),
        }
    }
}

impl std::error::Error for LossSpecError {}

impl LossSpec {
    /// Checks every parameter; the model's stationary figures need `p + r > 0`.
    pub fn validate(&self) -> Result<(), LossSpecError> {
        let check = |name, value: f64| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(LossSpecError::NotAProbability { name, value })
            }
        };
        match *self {
            LossSpec::Bernoulli { p } => {
                check("p", p)?;
                if p >= 1.0 {
                    return Err(LossSpecError::Total);
                }
            }
            LossSpec::GilbertElliott { p, r, loss_good, loss_bad } => {
                check("p", p)?;
                check("r", r)?;
                check("loss_good", loss_good)?;
                check("loss_bad", loss_bad)?;
                if p + r == 0.0 {
                    return Err(LossSpecError::Frozen);
                }
                if self.stationary_loss() >= 1.0 {
                    return Err(LossSpecError::TotalInTheLongRun);
                }
            }
        }
        Ok(())
    }

    /// Long-run fraction of packets lost.
    pub fn stationary_loss(&self) -> f64 {
        match *self {
            LossSpec::Bernoulli { p } => p,
            LossSpec::GilbertElliott { p, r, loss_good, loss_bad } => (r * loss_good + p * loss_bad) / (p + r),
        }
    }

    /// True when no packet can ever be lost, so callers may skip drawing.
    pub fn is_lossless(&self) -> bool {
        match *self {
            LossSpec::Bernoulli { p } => p == 0.0,
            LossSpec::GilbertElliott { p, loss_good, loss_bad, .. } => {
                loss_good == 0.0 && (loss_bad == 0.0 || p == 0.0)
            }
        }
    }
}

/// A loss model's state (the Gilbert–Elliott chain starts in Good).
#[derive(Clone, Debug, PartialEq)]
pub struct LossModel {
    spec: LossSpec,
    bad: bool,
}

impl LossModel {
    pub fn new(spec: LossSpec) -> Self {
        LossModel { spec, bad: false }
    }

    pub fn spec(&self) -> &LossSpec {
        &self.spec
    }

    /// Advances the model by one packet: true when that packet is lost.
    /// A lossless model draws nothing from `rng`.
    pub fn drops(&mut self, rng: &mut impl Rng) -> bool {
        match self.spec {
            LossSpec::Bernoulli { p } => p > 0.0 && rng.gen::<f64>() < p,
            LossSpec::GilbertElliott { p, r, loss_good, loss_bad } => {
                let leave = if self.bad { r } else { p };
                if leave > 0.0 && rng.gen::<f64>() < leave {
                    self.bad = !self.bad;
                }
                let loss = if self.bad { loss_bad } else { loss_good };
                loss > 0.0 && rng.gen::<f64>() < loss
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Runs `n` packets; returns the loss rate and the mean length of runs
    /// of consecutive losses.
    fn run(spec: LossSpec, n: usize, seed: u64) -> (f64, f64) {
        let mut model = LossModel::new(spec);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut lost, mut bursts, mut in_burst) = (0usize, 0usize, false);
        for _ in 0..n {
            let l = model.drops(&mut rng);
            lost += usize::from(l);
            bursts += usize::from(l && !in_burst);
            in_burst = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn bernoulli_matches_its_rate_and_draws_like_the_simulator_links() {
        let (rate, burst) = run(LossSpec::Bernoulli { p: 0.02 }, 1_000_000, 1);
        assert!((rate - 0.02).abs() < 0.0005, "{rate}");
        // Independent losses: runs last 1 / (1 - p) packets.
        assert!((burst - 1.0 / 0.98).abs() < 0.01, "{burst}");
        // Same stream, same decisions as `rng.gen::<f64>() < p` (link.rs).
        let mut a = ChaCha8Rng::seed_from_u64(9);
        let mut b = a.clone();
        let mut m = LossModel::new(LossSpec::Bernoulli { p: 0.3 });
        for _ in 0..1000 {
            assert_eq!(m.drops(&mut a), b.gen::<f64>() < 0.3);
        }
    }

    #[test]
    fn gilbert_matches_stationary_rate_and_mean_burst() {
        // Gilbert's model: bad state always loses, good never.
        let spec = LossSpec::GilbertElliott { p: 0.01, r: 0.25, loss_good: 0.0, loss_bad: 1.0 };
        assert!((spec.stationary_loss() - 0.01 / 0.26).abs() < 1e-12);
        let (rate, burst) = run(spec, 2_000_000, 2);
        assert!((rate - spec.stationary_loss()).abs() < 0.002, "{rate} vs {}", spec.stationary_loss());
        assert!((burst - 4.0).abs() < 0.15, "mean burst {burst}, expected 1 / r = 4");
    }

    #[test]
    fn elliott_partial_loss_in_both_states() {
        let spec = LossSpec::GilbertElliott { p: 0.05, r: 0.2, loss_good: 0.01, loss_bad: 0.5 };
        let expected = (0.2 * 0.01 + 0.05 * 0.5) / 0.25;
        assert!((spec.stationary_loss() - expected).abs() < 1e-12);
        let (rate, _) = run(spec, 2_000_000, 3);
        assert!((rate - expected).abs() < 0.002, "{rate} vs {expected}");
    }

    #[test]
    fn same_seed_same_losses() {
        let spec = LossSpec::GilbertElliott { p: 0.1, r: 0.3, loss_good: 0.0, loss_bad: 0.9 };
        assert_eq!(run(spec, 10_000, 5), run(spec, 10_000, 5));
        assert_ne!(run(spec, 10_000, 5), run(spec, 10_000, 6));
    }

    #[test]
    fn lossless_models_draw_nothing() {
        for spec in
            [LossSpec::Bernoulli { p: 0.0 }, LossSpec::GilbertElliott { p: 0.0, r: 1.0, loss_good: 0.0, loss_bad: 1.0 }]
        {
            assert!(spec.is_lossless());
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let before = rng.clone();
            let mut m = LossModel::new(spec);
            assert!(!(0..100).any(|_| m.drops(&mut rng)));
            assert_eq!(rng, before);
        }
    }

    #[test]
    fn invalid_parameters_are_refused() {
        assert_eq!(LossSpec::Bernoulli { p: 1.0 }.validate(), Err(LossSpecError::Total));
        let total = Err(LossSpecError::TotalInTheLongRun);
        assert_eq!(LossSpec::GilbertElliott { p: 1.0, r: 0.0, loss_good: 0.0, loss_bad: 1.0 }.validate(), total);
        assert_eq!(LossSpec::GilbertElliott { p: 0.1, r: 0.3, loss_good: 1.0, loss_bad: 1.0 }.validate(), total);
        assert_eq!(LossSpec::GilbertElliott { p: 1.0, r: 0.0, loss_good: 0.0, loss_bad: 0.5 }.validate(), Ok(()));
        assert!(matches!(
            LossSpec::GilbertElliott { p: 1.5, r: 0.1, loss_good: 0.0, loss_bad: 1.0 }.validate(),
            Err(LossSpecError::NotAProbability { name: "p", .. })
        ));
        assert_eq!(
            LossSpec::GilbertElliott { p: 0.0, r: 0.0, loss_good: 0.0, loss_bad: 1.0 }.validate(),
            Err(LossSpecError::Frozen)
        );
        assert!(LossSpec::GilbertElliott { p: 0.01, r: 0.3, loss_good: 0.0, loss_bad: 1.0 }.validate().is_ok());
    }
}
