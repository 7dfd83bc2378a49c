//! Seed 004's scores (§4.2-4.3), from the goodput of every run.
//!
//! - eq. 20: `PS_score(family, scheduler, controller) = sum over the
//!   family's sub-scenarios of avg_GP / (n_subscenarios * max_GP)`, where
//!   avg_GP is the mean over the runs (seeds) of that sub-scenario and
//!   max_GP the theoretical maximum aggregate goodput (200 Mbps there).
//! - eq. 21: `CCA_score_per_family(controller, family)`: the mean of that
//!   controller's PS_scores over the schedulers.
//! - eq. 22: `CCA_score(controller)`: the mean over families.
//! - Fig. 9: the coefficient of variation `sigma / mu` of a controller's
//!   per-family scores (population standard deviation; the paper writes
//!   only `sigma / mu`).
//! - eq. 23: `CCA_overall_score = CCA_score / CV` (null when CV is zero).
//!
//! Controllers and schedulers beyond the paper's (a campaign's extra
//! values) get scores of their own, but the per-family controller score
//! averages over the main schedulers only, so extras never move the
//! paper's figures. A sub-scenario with no runs (an unfinished sweep) is
//! left out of its family's sum and the count, and `complete` says so.

use std::collections::BTreeMap;

use serde::Serialize;

/// One run's goodput, labelled with what the scores group by.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub family: String,
    pub scenario: String,
    pub scheduler: String,
    pub controller: String,
    /// In the unit `theoretical_max` is in.
    pub goodput: f64,
}

/// The groups in display order; `schedulers` are the ones controller
/// scores average over, `extra_schedulers` are scored but not averaged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub families: Vec<String>,
    /// Sub-scenarios per family, as the campaign defines them.
    pub scenarios: BTreeMap<String, Vec<String>>,
    pub schedulers: Vec<String>,
    pub extra_schedulers: Vec<String>,
    pub controllers: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Scores {
    /// Every sub-scenario of every scored cell had at least one run (the
    /// sweep also clears it when runs of its plan are missing).
    pub complete: bool,
    pub theoretical_max_mbps: f64,
    pub families: Vec<String>,
    pub schedulers: Vec<String>,
    pub extra_schedulers: Vec<String>,
    pub controllers: Vec<String>,
    /// family -> scheduler -> controller -> PS_score (eq. 20).
    pub ps_score: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>>,
    /// controller -> family -> CCA_score_per_ScenFam (eq. 21).
    pub cca_score_per_family: BTreeMap<String, BTreeMap<String, f64>>,
    /// controller -> CCA_score (eq. 22).
    pub cca_score: BTreeMap<String, f64>,
    /// controller -> coefficient of variation of its per-family scores.
    pub cca_cv: BTreeMap<String, f64>,
    /// controller -> CCA_overall_score (eq. 23); null when CV is zero.
    pub cca_overall_score: BTreeMap<String, Option<f64>>,
    /// Controllers from the best overall score down (null last), ties (a
    /// campaign of one family, where every CV is 0) broken by CCA_score.
    pub ranking: Vec<String>,
}

fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.into_iter().fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Population coefficient of variation, sigma / mu (0 when mu is 0).
pub fn coefficient_of_variation(v: &[f64]) -> f64 {
    let Some(mu) = mean(v.iter().copied()) else { return 0.0 };
    let var = mean(v.iter().map(|x| (x - mu) * (x - mu))).unwrap_or(0.0);
    if mu == 0.0 {
        0.0
    } else {
        var.sqrt() / mu
    }
}

/// Computes every score from `observations`.
pub fn compute(observations: &[Observation], layout: &Layout, theoretical_max: f64) -> Scores {
    // (scenario, scheduler, controller) -> goodputs of its runs.
    let mut runs: BTreeMap<(&str, &str, &str), Vec<f64>> = BTreeMap::new();
    for o in observations {
        runs.entry((&o.scenario, &o.scheduler, &o.controller)).or_default().push(o.goodput);
    }
    let mut complete = true;
    let mut ps_score: BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>> = BTreeMap::new();
    for family in &layout.families {
        let subs = layout.scenarios.get(family).map(Vec::as_slice).unwrap_or_default();
        for sched in layout.schedulers.iter().chain(&layout.extra_schedulers) {
            for cc in &layout.controllers {
                let avgs: Vec<f64> = subs
                    .iter()
                    .filter_map(|s| mean(runs.get(&(s.as_str(), sched.as_str(), cc.as_str()))?.iter().copied()))
                    .collect();
                if avgs.is_empty() {
                    continue;
                }
                complete &= avgs.len() == subs.len();
                let n = avgs.len() as f64;
                let score = avgs.iter().map(|gp| gp / (n * theoretical_max)).sum();
                ps_score.entry(family.clone()).or_default().entry(sched.clone()).or_default().insert(cc.clone(), score);
            }
        }
    }
    let mut cca_score_per_family: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let (mut cca_score, mut cca_cv, mut cca_overall_score) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for cc in &layout.controllers {
        let mut per_family = BTreeMap::new();
        for family in &layout.families {
            let of_scheds = layout.schedulers.iter().filter_map(|s| ps_score.get(family)?.get(s)?.get(cc).copied());
            if let Some(m) = mean(of_scheds) {
                per_family.insert(family.clone(), m);
            }
        }
        let values: Vec<f64> = per_family.values().copied().collect();
        if let Some(score) = mean(values.iter().copied()) {
            let cv = coefficient_of_variation(&values);
            cca_score.insert(cc.clone(), score);
            cca_cv.insert(cc.clone(), cv);
            cca_overall_score.insert(cc.clone(), (cv > 0.0).then(|| score / cv));
        }
        cca_score_per_family.insert(cc.clone(), per_family);
    }
    let mut ranking: Vec<String> = cca_overall_score.keys().cloned().collect();
    ranking.sort_by(|a, b| {
        let key = |c: &String| cca_overall_score[c].unwrap_or(f64::NEG_INFINITY);
        let score = |c: &String| cca_score.get(c).copied().unwrap_or(f64::NEG_INFINITY);
        key(b).total_cmp(&key(a)).then_with(|| score(b).total_cmp(&score(a))).then_with(|| a.cmp(b))
    });
    Scores {
        complete,
        theoretical_max_mbps: theoretical_max,
        families: layout.families.clone(),
        schedulers: layout.schedulers.clone(),
        extra_schedulers: layout.extra_schedulers.clone(),
        controllers: layout.controllers.clone(),
        ps_score,
        cca_score_per_family,
        cca_score,
        cca_cv,
        cca_overall_score,
        ranking,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(family: &str, scenario: &str, scheduler: &str, controller: &str, goodput: f64) -> Observation {
        Observation {
            family: family.into(),
            scenario: scenario.into(),
            scheduler: scheduler.into(),
            controller: controller.into(),
            goodput,
        }
    }

    fn layout() -> Layout {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        Layout {
            families: s(&["hom", "het"]),
            scenarios: [("hom".to_string(), s(&["h1"])), ("het".to_string(), s(&["x1", "x2"]))].into(),
            schedulers: s(&["minrtt", "rr"]),
            extra_schedulers: s(&["redundant"]),
            controllers: s(&["a", "b"]),
        }
    }

    /// A hand-made campaign with a theoretical maximum of 100:
    /// - hom/h1: a gets 80 (minrtt) and 60 (rr); b gets 50 and 50.
    /// - het/x1: a minrtt runs 40 and 60 (mean 50), rr 20; b 50 and 50.
    /// - het/x2: a minrtt 30, rr 40; b 50 and 50.
    /// - redundant (extra): a 10 everywhere.
    fn hand_made() -> Vec<Observation> {
        let mut v = vec![
            obs("hom", "h1", "minrtt", "a", 80.0),
            obs("hom", "h1", "rr", "a", 60.0),
            obs("het", "x1", "minrtt", "a", 40.0),
            obs("het", "x1", "minrtt", "a", 60.0),
            obs("het", "x1", "rr", "a", 20.0),
            obs("het", "x2", "minrtt", "a", 30.0),
            obs("het", "x2", "rr", "a", 40.0),
        ];
        for (f, s) in [("hom", "h1"), ("het", "x1"), ("het", "x2")] {
            v.push(obs(f, s, "minrtt", "b", 50.0));
            v.push(obs(f, s, "rr", "b", 50.0));
            v.push(obs(f, s, "redundant", "a", 10.0));
        }
        v
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn ps_score_is_the_normalised_mean_goodput_over_a_familys_subscenarios() {
        let s = compute(&hand_made(), &layout(), 100.0);
        let ps = |f: &str, sc: &str, c: &str| s.ps_score[f][sc][c];
        assert!(close(ps("hom", "minrtt", "a"), 0.8));
        assert!(close(ps("hom", "rr", "a"), 0.6));
        // (50 / (2 x 100)) + (30 / (2 x 100)) = 0.4: seeds averaged first.
        assert!(close(ps("het", "minrtt", "a"), 0.4));
        assert!(close(ps("het", "rr", "a"), 0.3));
        assert!(close(ps("het", "redundant", "a"), 0.1));
        assert!(close(ps("het", "rr", "b"), 0.5));
        assert!(s.complete, "every cell that exists is full (b has no redundant runs, never asked for)");
    }

    #[test]
    fn controller_scores_cv_and_overall_follow_eq_21_to_23() {
        let s = compute(&hand_made(), &layout(), 100.0);
        // a: hom (0.8 + 0.6) / 2 = 0.7, het (0.4 + 0.3) / 2 = 0.35; the extra
        // scheduler's 0.1 is not averaged in.
        assert!(close(s.cca_score_per_family["a"]["hom"], 0.7));
        assert!(close(s.cca_score_per_family["a"]["het"], 0.35));
        assert!(close(s.cca_score["a"], 0.525));
        // sigma = 0.175 (population), CV = 0.175 / 0.525 = 1/3, overall 1.575.
        assert!(close(s.cca_cv["a"], 1.0 / 3.0));
        assert!(close(s.cca_overall_score["a"].unwrap(), 1.575));
        // b is perfectly stable: CV 0, overall undefined, ranked last.
        assert!(close(s.cca_score["b"], 0.5) && close(s.cca_cv["b"], 0.0));
        assert_eq!(s.cca_overall_score["b"], None);
        assert_eq!(s.ranking, ["a", "b"]);
    }

    /// With one family every CV is 0 and no overall score exists: the
    /// ranking follows CCA_score (b's 0.5 over a's 0.35 in "het").
    #[test]
    fn one_family_ranks_by_cca_score() {
        let het: Vec<Observation> = hand_made().into_iter().filter(|o| o.family == "het").collect();
        let layout = Layout { families: vec!["het".into()], ..layout() };
        let s = compute(&het, &layout, 100.0);
        assert_eq!((s.cca_overall_score["a"], s.cca_overall_score["b"]), (None, None));
        assert!(close(s.cca_score["a"], 0.35) && close(s.cca_score["b"], 0.5));
        assert_eq!(s.ranking, ["b", "a"]);
    }

    #[test]
    fn missing_subscenarios_are_left_out_and_flagged() {
        let partial: Vec<Observation> = hand_made().into_iter().filter(|o| o.scenario != "x2").collect();
        let s = compute(&partial, &layout(), 100.0);
        assert!(!s.complete);
        assert!(close(s.ps_score["het"]["minrtt"]["a"], 0.5), "x1 alone: 50 / (1 x 100)");
    }

    #[test]
    fn coefficient_of_variation_uses_the_population_sigma() {
        assert!(close(coefficient_of_variation(&[1.0, 3.0]), 0.5));
        assert_eq!(coefficient_of_variation(&[]), 0.0);
        assert_eq!(coefficient_of_variation(&[0.0, 0.0]), 0.0);
    }
}
