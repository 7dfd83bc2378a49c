//! `report/index.html`: one self-contained static page (inline SVG, no
//! external resource) with the score tables and seed 004's figures drawn
//! from the sweep's results, and the table of the campaign's conclusions
//! checked against them. It contains nothing but the plan and the run
//! summaries (no times, no paths), so merged shards render the same page.

use std::fmt::Write as _;

use crate::campaign::{display_value, Conclusion, Plan, RunSpec};
use crate::scores::Scores;
use crate::sweep_charts::{bars, curves, ecdf, heatmap, Bars};
use crate::sweep_results::Cell;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Cell values, with the scheduler and controller names resolved.
struct View<'a> {
    plan: &'a Plan,
    cells: &'a [Cell],
    sched: Option<usize>,
    cc: Option<usize>,
}

impl View<'_> {
    fn spec(cell: &Cell) -> RunSpec {
        RunSpec { index: 0, variant: cell.variant, values: cell.values.clone(), seed: 1 }
    }
    fn axis(&self, cell: &Cell, axis: Option<usize>) -> String {
        axis.map(|a| display_value(self.plan.axis_value(&Self::spec(cell), a))).unwrap_or_default()
    }
    fn scheduler(&self, cell: &Cell) -> String {
        self.axis(cell, self.sched)
    }
    fn controller(&self, cell: &Cell) -> String {
        self.axis(cell, self.cc)
    }
    fn family(&self, cell: &Cell) -> &str {
        &self.plan.campaign.variants[cell.variant].family
    }
}

struct Figures {
    html: String,
    count: usize,
}

impl Figures {
    fn add(&mut self, id: &str, caption: &str, svg: Result<String, String>) {
        self.count += 1;
        let body = svg.unwrap_or_else(|e| format!("<p class=\"error\">figure not drawn: {}</p>", esc(&e)));
        let _ = writeln!(
            self.html,
            "<figure data-figure=\"{}\">{body}<figcaption>{}</figcaption></figure>",
            esc(id),
            esc(caption)
        );
    }
}

/// Renders the page.
pub fn render(plan: &Plan, scores: Option<&Scores>, cells: &[Cell], present: usize) -> String {
    let c = &plan.campaign;
    let view = View {
        plan,
        cells,
        sched: c.axes.iter().position(|a| a.name == c.scores.scheduler_axis),
        cc: c.axes.iter().position(|a| a.name == c.scores.controller_axis),
    };
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1>\n<p>{}</p>\n<p>{present} of {} runs ({} seeds, {:.1} s simulated each).</p>\n",
        esc(&c.name),
        esc(&c.description),
        plan.runs.len(),
        plan.seeds,
        plan.duration.as_secs_f64()
    );
    let mut figs = Figures { html: String::new(), count: 0 };
    if let Some(s) = scores {
        body += &score_tables(s);
        if !c.report.conclusions.is_empty() {
            body += &agreement_table(&view, s, &c.report.conclusions);
        }
        score_figures(&mut figs, s, c.report.top_controllers);
        distribution_figures(&mut figs, &view, s, c.report.top_controllers);
    }
    for name in &c.report.panels {
        panel_figures(&mut figs, &view, name);
    }
    body += "<h2>Figures</h2>\n";
    body += &figs.html;
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body data-figures-expected=\"{n}\">\n{body}<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        title = esc(&c.name),
        n = figs.count
    )
}

const STYLE: &str = "body { font-family: sans-serif; margin: 2em; max-width: 1250px; }\n\
table { border-collapse: collapse; margin: 1em 0; }\n\
td, th { border: 1px solid #bbb; padding: 3px 8px; text-align: right; }\n\
td:first-child, th:first-child { text-align: left; }\n\
td.claim, td.evidence { text-align: left; max-width: 520px; }\n\
.agrees { background: #e3f4e1; } .differs { background: #fbe3d6; }\n\
figure { margin: 1.5em 0; } figcaption { font-size: 90%; color: #333; }\n";

/// Marks the page with how many figures rendered (an SVG with a non-empty
/// box) and any script error, for the headless-browser check.
const SCRIPT: &str = "(function () {\n\
  var errors = [];\n\
  window.addEventListener('error', function (e) { errors.push(String(e.message)); document.body.dataset.errors = errors.join(' | '); });\n\
  var figures = document.querySelectorAll('figure[data-figure]');\n\
  var loaded = 0;\n\
  figures.forEach(function (f) { var svg = f.querySelector('svg'); if (svg) { var b = svg.getBBox(); if (b.width > 0 && b.height > 0) { loaded++; } } });\n\
  document.body.dataset.figuresLoaded = String(loaded);\n\
})();\n";

fn f3(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn score_tables(s: &Scores) -> String {
    let mut h = String::from("<h2>Congestion controllers (seed 004 eq. 21-23)</h2>\n<table>\n<tr><th>controller</th>");
    for f in &s.families {
        let _ = write!(h, "<th>{}</th>", esc(f));
    }
    h += "<th>CCA_score</th><th>CV</th><th>overall</th><th>rank</th></tr>\n";
    for cc in &s.controllers {
        let _ = write!(h, "<tr><td>{}</td>", esc(cc));
        for f in &s.families {
            let _ = write!(h, "<td>{}</td>", f3(s.cca_score_per_family.get(cc).and_then(|m| m.get(f)).copied()));
        }
        let rank = s.ranking.iter().position(|r| r == cc).map_or("-".into(), |p| (p + 1).to_string());
        let _ = writeln!(
            h,
            "<td>{}</td><td>{}</td><td>{}</td><td>{rank}</td></tr>",
            f3(s.cca_score.get(cc).copied()),
            f3(s.cca_cv.get(cc).copied()),
            f3(s.cca_overall_score.get(cc).copied().flatten())
        );
    }
    h += "</table>\n";
    let scheds: Vec<&String> = s.schedulers.iter().chain(&s.extra_schedulers).collect();
    for f in &s.families {
        let _ = write!(h, "<h3>PS_score, family {} (eq. 20)</h3>\n<table>\n<tr><th>scheduler</th>", esc(f));
        for cc in &s.controllers {
            let _ = write!(h, "<th>{}</th>", esc(cc));
        }
        h += "</tr>\n";
        for sc in &scheds {
            let _ = write!(h, "<tr><td>{}</td>", esc(sc));
            for cc in &s.controllers {
                let v = s.ps_score.get(f).and_then(|m| m.get(*sc)).and_then(|m| m.get(cc)).copied();
                let _ = write!(h, "<td>{}</td>", f3(v));
            }
            h += "</tr>\n";
        }
        h += "</table>\n";
    }
    h
}

fn top(s: &Scores, n: usize) -> Vec<String> {
    s.ranking.iter().take(n).cloned().collect()
}

fn score_figures(figs: &mut Figures, s: &Scores, top_n: usize) {
    let per_family: Vec<Bars> = s
        .controllers
        .iter()
        .map(|cc| Bars {
            label: cc.clone(),
            values: s
                .families
                .iter()
                .map(|f| s.cca_score_per_family.get(cc).and_then(|m| m.get(f)).copied().unwrap_or(0.0))
                .collect(),
        })
        .collect();
    figs.add(
        "fig8",
        "Fig. 8: CCA score per scenario family",
        bars("CCA score per scenario family", "CCA_score_per_ScenFam", &s.families, &per_family, false, (1100, 420)),
    );
    let one = |label: &str, f: &dyn Fn(&String) -> f64| {
        vec![Bars { label: label.into(), values: s.controllers.iter().map(f).collect() }]
    };
    figs.add(
        "fig9",
        "Fig. 9: coefficient of variation of each controller's per-family scores",
        bars(
            "CCA_score CV",
            "CV",
            &s.controllers,
            &one("CV", &|c| s.cca_cv.get(c).copied().unwrap_or(0.0)),
            false,
            (800, 360),
        ),
    );
    figs.add(
        "fig10",
        "Fig. 10: CCA_overall_score = CCA_score / CV",
        bars(
            "CCA_overall_score",
            "score",
            &s.controllers,
            &one("overall", &|c| s.cca_overall_score.get(c).copied().flatten().unwrap_or(0.0)),
            false,
            (800, 360),
        ),
    );
    let scheds: Vec<String> = s.schedulers.iter().chain(&s.extra_schedulers).cloned().collect();
    for (k, cc) in top(s, top_n).iter().enumerate() {
        let values: Vec<Vec<Option<f64>>> = scheds
            .iter()
            .map(|sc| {
                s.families
                    .iter()
                    .map(|f| s.ps_score.get(f).and_then(|m| m.get(sc)).and_then(|m| m.get(cc)).copied())
                    .collect()
            })
            .collect();
        figs.add(
            &format!("fig{}", 15 + k),
            &format!("Fig. {}: PS_score heatmap per scenario family for {cc} (rank {})", 15 + k, k + 1),
            heatmap(&format!("PS_score, {cc}"), &scheds, &s.families, &values, (900, 80 + 60 * scheds.len() as u32)),
        );
    }
}

fn distribution_figures(figs: &mut Figures, view: &View, s: &Scores, top_n: usize) {
    let scheds: Vec<String> = s.schedulers.iter().chain(&s.extra_schedulers).cloned().collect();
    for (id, caption, complementary, metric, x) in [
        (
            "fig18",
            "Fig. 18: ECCDF of the schedulers' goodput (per sub-scenario, mean over seeds) across all families",
            true,
            0,
            "goodput (Mbit/s)",
        ),
        (
            "fig23",
            "Fig. 23: ECDF of the schedulers' per-packet delay (seed 004 eq. 18-19) across all families",
            false,
            1,
            "per-packet delay (ms)",
        ),
    ] {
        for cc in top(s, top_n) {
            let series: Vec<(String, Vec<(f64, f64)>)> = scheds
                .iter()
                .map(|sc| {
                    let values: Vec<f64> = view
                        .cells
                        .iter()
                        .filter(|c| view.scheduler(c) == *sc && view.controller(c) == cc)
                        .map(|c| if metric == 0 { c.goodput_mbps } else { c.per_packet_delay_ms })
                        .collect();
                    (sc.clone(), ecdf(&values, complementary))
                })
                .collect();
            let y = if complementary { "P(X >= x)" } else { "P(X <= x)" };
            figs.add(&format!("{id}-{cc}"), &format!("{caption}: {cc}"), curves(&cc, x, y, &series, (700, 380)));
        }
    }
}

/// Seed 004 Fig. 5-7: per-subflow goodput, SRTT, out-of-order queue and
/// retransmissions for every scheduler under every controller.
fn panel_figures(figs: &mut Figures, view: &View, scenario: &str) {
    let c = &view.plan.campaign;
    let Some(vi) = c.variants.iter().position(|v| v.name == scenario) else { return };
    let mine: Vec<&Cell> = view.cells.iter().filter(|x| x.variant == vi).collect();
    let (Some(sa), Some(ca)) = (view.sched, view.cc) else { return };
    let names = |a: usize| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for x in &mine {
            let n = view.axis(x, Some(a));
            if !v.contains(&n) {
                v.push(n);
            }
        }
        v
    };
    let (scheds, ccs) = (names(sa), names(ca));
    let paths: Vec<String> =
        mine.iter().flat_map(|x| x.subflows.iter().map(|s| s.0.clone())).fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });
    // Categories: controller / scheduler.
    let mut cats = Vec::new();
    let mut lookup: Vec<Option<&Cell>> = Vec::new();
    for cc in &ccs {
        for sc in &scheds {
            cats.push(format!("{cc}/{sc}"));
            lookup.push(mine.iter().copied().find(|x| &view.controller(x) == cc && &view.scheduler(x) == sc));
        }
    }
    let per_path = |k: usize| -> Vec<Bars> {
        paths
            .iter()
            .enumerate()
            .map(|(pi, p)| Bars {
                label: p.clone(),
                values: lookup
                    .iter()
                    .map(|x| {
                        x.and_then(|x| x.subflows.get(pi)).map_or(0.0, |s| match k {
                            0 => s.1,
                            1 => s.2,
                            _ => s.3,
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    let w = (160 + 32 * cats.len() as u32).max(700);
    let title = |what: &str| format!("{scenario}: {what} (controller/scheduler)");
    let id = |k: &str| format!("panel-{scenario}-{k}");
    figs.add(
        &id("goodput"),
        &format!("{scenario} (seed 004 Fig. 5-7 style): per-subflow goodput, mean over seeds"),
        bars(&title("goodput, Mbit/s"), "Mbit/s", &cats, &per_path(0), true, (w, 380)),
    );
    figs.add(
        &id("srtt"),
        &format!("{scenario}: per-subflow mean SRTT"),
        bars(&title("SRTT, ms"), "ms", &cats, &per_path(1), false, (w, 380)),
    );
    let ooo = vec![Bars {
        label: "out-of-order queue".into(),
        values: lookup.iter().map(|x| x.map_or(0.0, |x| x.ooo_bytes_mean / 1e3)).collect(),
    }];
    figs.add(
        &id("ooo"),
        &format!("{scenario}: mean connection-level out-of-order queue"),
        bars(&title("out-of-order queue, kB"), "kB", &cats, &ooo, false, (w, 380)),
    );
    figs.add(
        &id("retx"),
        &format!("{scenario}: retransmissions per subflow"),
        bars(&title("retransmissions"), "segments", &cats, &per_path(2), true, (w, 380)),
    );
}

/// Mean PS_score of each scheduler over families and `controllers`.
fn scheduler_means(s: &Scores, controllers: &[String]) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = s
        .schedulers
        .iter()
        .map(|sc| {
            let xs: Vec<f64> = s
                .families
                .iter()
                .flat_map(|f| controllers.iter().filter_map(move |cc| s.ps_score.get(f)?.get(sc)?.get(cc).copied()))
                .collect();
            (sc.clone(), xs.iter().sum::<f64>() / xs.len().max(1) as f64)
        })
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn list(v: &[(String, f64)]) -> String {
    v.iter().map(|(n, x)| format!("{n} {x:.3}")).collect::<Vec<_>>().join(", ")
}

/// Decides one conclusion: (agrees, evidence).
pub fn check_conclusion(view_plan: &Plan, cells: &[Cell], s: &Scores, c: &Conclusion) -> (Option<bool>, String) {
    let view = View {
        plan: view_plan,
        cells,
        sched: view_plan.campaign.axes.iter().position(|a| a.name == view_plan.campaign.scores.scheduler_axis),
        cc: view_plan.campaign.axes.iter().position(|a| a.name == view_plan.campaign.scores.controller_axis),
    };
    let subjects: Vec<String> = c.subjects.clone();
    let paper_top: Vec<String> = ["bbr", "mpbbr", "olia"].iter().map(|x| x.to_string()).collect();
    match c.check.as_str() {
        "top_controllers" => {
            let best = top(s, subjects.len());
            let ok = subjects.iter().all(|x| best.contains(x));
            let ranked: Vec<(String, f64)> =
                s.ranking.iter().map(|r| (r.clone(), s.cca_overall_score[r].unwrap_or(0.0))).collect();
            (Some(ok), format!("overall score ranking: {}", list(&ranked)))
        }
        "best_schedulers" | "worst_scheduler" => {
            let means = scheduler_means(s, &paper_top);
            let pick: Vec<String> = if c.check == "best_schedulers" {
                means.iter().take(subjects.len()).map(|x| x.0.clone()).collect()
            } else {
                means.iter().rev().take(subjects.len()).map(|x| x.0.clone()).collect()
            };
            let ok = subjects.iter().all(|x| pick.contains(x));
            (Some(ok), format!("mean PS_score over families with bbr, mpbbr, olia: {}", list(&means)))
        }
        "lowest_controller" => {
            let mut v: Vec<(String, f64)> = s.cca_score.iter().map(|(k, v)| (k.clone(), *v)).collect();
            v.sort_by(|a, b| a.1.total_cmp(&b.1));
            let ok = v.first().is_some_and(|x| subjects.contains(&x.0));
            (Some(ok), format!("CCA_score from the lowest: {}", list(&v)))
        }
        "blest_avoids_slow_path" => {
            // Share of goodput on the second path (SF2, the degraded one)
            // in the families named, with the paper's top controllers.
            let share = |sched: &str| -> Option<f64> {
                let xs: Vec<f64> = view
                    .cells
                    .iter()
                    .filter(|x| {
                        subjects.iter().any(|f| f == view.family(x))
                            && view.scheduler(x) == sched
                            && paper_top.contains(&view.controller(x))
                    })
                    .filter_map(|x| {
                        let total: f64 = x.subflows.iter().map(|s| s.1).sum();
                        (total > 0.0).then(|| x.subflows.get(1).map_or(0.0, |s| s.1) / total)
                    })
                    .collect();
                (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
            };
            // Skipping means well under what the default scheduler puts there.
            let all: Vec<(String, f64)> = s.schedulers.iter().filter_map(|sc| Some((sc.clone(), share(sc)?))).collect();
            let ok = share("blest").zip(share("minrtt")).map(|(b, m)| b < 0.5 * m);
            (ok, format!("mean share of goodput on SF2 ({}; bbr, mpbbr, olia): {}", subjects.join(", "), list(&all)))
        }
        other => (None, format!("unknown check {other:?}")),
    }
}

fn agreement_table(view: &View, s: &Scores, conclusions: &[Conclusion]) -> String {
    let mut h = String::from("<h2>Seed 004's conclusions (§5) against these results</h2>\n<table>\n<tr><th>conclusion</th><th>Braid</th><th>evidence</th></tr>\n");
    for c in conclusions {
        let (ok, evidence) = check_conclusion(view.plan, view.cells, s, c);
        let (class, word) = match ok {
            Some(true) => ("agrees", "agrees"),
            Some(false) => ("differs", "differs"),
            None => ("", "undecided"),
        };
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td class=\"claim\">{}</td><td>{word}</td><td class=\"evidence\">{}</td></tr>",
            esc(&c.claim),
            esc(&evidence)
        );
    }
    h += "</table>\n";
    h
}
