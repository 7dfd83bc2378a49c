//! A sweep folder's results, rebuilt from its plan and the run summaries
//! present: `runs.csv`, `scores.json` and `report/index.html`.
//!
//! `runs.csv` has one row per finished run in plan order: the run's folder,
//! family, scenario, every axis, the seed (and `extra` when extras were
//! asked for), then every figure of its `summary.json` flattened:
//! top-level numbers by name, flow figures as `FLOW.FIELD`, subflow
//! figures as `FLOW.PATH.FIELD`, link figures as `link.LINK.FIELD` (a
//! column made twice gets `~2`, `~3`, ... on the later ones). The
//! header is the union over all runs in order of first appearance; a run
//! without a column leaves it empty. The summaries are read twice (header,
//! then rows) so memory does not grow with the number of runs.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::campaign::{display_value, GoodputUnit, Plan, RunSpec};
use crate::scores::{self, Layout, Observation, Scores};
use crate::sweep::{summary_path, write_atomic, SweepError};

/// Mean figures of one cell: a scenario with one combination of axis
/// values, over its seeds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    pub variant: usize,
    pub values: Vec<usize>,
    pub runs: usize,
    /// The scored flow's goodput, Mbit/s (10^6).
    pub goodput_mbps: f64,
    pub per_packet_delay_ms: f64,
    pub ooo_bytes_mean: f64,
    /// Per subflow of the scored flow: path, goodput Mbit/s, mean SRTT ms,
    /// retransmissions.
    pub subflows: Vec<(String, f64, f64, f64)>,
}

fn field<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn number(v: &Value, path: &[&str]) -> f64 {
    field(v, path).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The summary's figures as (column, text) pairs.
fn flatten(summary: &Value) -> Vec<(String, String)> {
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::Null => Some(String::new()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn scalars(prefix: &str, obj: &Value, out: &mut Vec<(String, String)>, skip: &[&str]) {
        if let Value::Object(m) = obj {
            for (k, v) in m {
                if skip.contains(&k.as_str()) {
                    continue;
                }
                if let Some(t) = text(v) {
                    out.push((format!("{prefix}{k}"), t));
                }
            }
        }
    }
    let mut out = Vec::new();
    scalars("", summary, &mut out, &["schema", "scenario", "seed"]);
    for f in summary.get("flows").and_then(Value::as_array).into_iter().flatten() {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("flow");
        scalars(&format!("{name}."), f, &mut out, &["name"]);
        for s in f.get("subflows").and_then(Value::as_array).into_iter().flatten() {
            let path = s.get("path").and_then(Value::as_str).unwrap_or("path");
            scalars(&format!("{name}.{path}."), s, &mut out, &["path"]);
        }
    }
    // Groups (with Poisson arrivals, their completion times), cross traffic
    // and links, each under its kind and name.
    for (list, kind) in [("groups", "group"), ("cross_traffic", "cross"), ("links", "link")] {
        for item in summary.get(list).and_then(Value::as_array).into_iter().flatten() {
            let name = item.get("name").and_then(Value::as_str).unwrap_or(kind);
            scalars(&format!("{kind}.{name}."), item, &mut out, &["name"]);
        }
    }
    // Names may make one column twice (flow "a.b" on path "c" and flow
    // "a" on path "b.c"; two subflows hashed onto one fabric route).
    crate::report::mark_repeats(out.iter_mut().map(|(k, _)| k));
    out
}

/// A run's `summary.json` (`bytes`, read from `path`), or why it is none:
/// not JSON, or JSON without the run summary's schema (a `{}` counted as a
/// finished run with no figures).
pub(crate) fn parse_summary(path: &Path, bytes: &[u8]) -> Result<Value, SweepError> {
    let not_one = |why: String| SweepError::Io {
        path: path.display().to_string(),
        message: format!("not a run summary ({why}); delete it and run the sweep again to redo that run"),
    };
    let v: Value = serde_json::from_slice(bytes).map_err(|e| not_one(e.to_string()))?;
    match v.get("schema").and_then(Value::as_str) {
        Some(crate::run::SUMMARY_SCHEMA) => Ok(v),
        other => Err(not_one(format!("schema {other:?}, not {:?}", crate::run::SUMMARY_SCHEMA))),
    }
}

fn read_summary(dir: &Path, plan: &Plan, run: &RunSpec) -> Result<Option<Value>, SweepError> {
    let path = summary_path(dir, plan, run);
    match std::fs::read(&path) {
        Ok(bytes) => parse_summary(&path, &bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SweepError::Io { path: path.display().to_string(), message: e.to_string() }),
    }
}

/// The fixed leading columns of a run's row.
fn axis_columns(plan: &Plan, run: &RunSpec) -> Vec<String> {
    let v = plan.variant(run);
    let mut row = vec![plan.run_id(run), v.family.clone(), v.name.clone()];
    row.extend((0..plan.campaign.axes.len()).map(|a| display_value(plan.axis_value(run, a))));
    row.push(run.seed.to_string());
    if plan.overrides.extra {
        row.push(plan.is_extra(run).to_string());
    }
    row
}

/// Writes `runs.csv`, `scores.json` and `report/index.html` into `dir`.
pub fn write(dir: &Path, plan: &Plan) -> Result<(), SweepError> {
    let c = &plan.campaign;
    let flow = c.scores.flow;
    // Pass 1: the header, and each cell's sums.
    let mut columns: Vec<String> = Vec::new();
    let mut known: std::collections::BTreeSet<String> = Default::default();
    let mut cells: BTreeMap<(usize, Vec<usize>), Cell> = BTreeMap::new();
    let mut present = 0;
    for run in &plan.runs {
        let Some(s) = read_summary(dir, plan, run)? else { continue };
        present += 1;
        for (k, _) in flatten(&s) {
            if known.insert(k.clone()) {
                columns.push(k);
            }
        }
        let f = field(&s, &["flows"]).and_then(|f| f.get(flow)).cloned().unwrap_or(Value::Null);
        let cell = cells.entry((run.variant, run.values.clone())).or_insert_with(|| Cell {
            variant: run.variant,
            values: run.values.clone(),
            ..Default::default()
        });
        cell.runs += 1;
        cell.goodput_mbps += number(&f, &["goodput_mbps"]);
        cell.per_packet_delay_ms += number(&f, &["per_packet_delay_ms"]);
        cell.ooo_bytes_mean += number(&f, &["ooo_bytes_mean"]);
        for (i, sf) in f.get("subflows").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if cell.subflows.len() <= i {
                let path = sf.get("path").and_then(Value::as_str).unwrap_or("").to_string();
                cell.subflows.push((path, 0.0, 0.0, 0.0));
            }
            let e = &mut cell.subflows[i];
            e.1 += number(sf, &["goodput_mbps"]);
            e.2 += number(sf, &["srtt_mean_ms"]);
            e.3 += number(sf, &["retransmissions"]);
        }
    }
    let cells: Vec<Cell> = cells
        .into_values()
        .map(|mut c| {
            let n = c.runs as f64;
            c.goodput_mbps /= n;
            c.per_packet_delay_ms /= n;
            c.ooo_bytes_mean /= n;
            for s in &mut c.subflows {
                (s.1, s.2, s.3) = (s.1 / n, s.2 / n, s.3 / n);
            }
            c
        })
        .collect();

    // Pass 2: the rows.
    let mut header: Vec<String> = ["run", "family", "scenario"].iter().map(|s| s.to_string()).collect();
    header.extend(c.axes.iter().map(|a| a.name.clone()));
    header.push("seed".into());
    if plan.overrides.extra {
        header.push("extra".into());
    }
    header.extend(columns.iter().cloned());
    let csv_path = dir.join("runs.csv");
    let csv_err = |e: csv::Error| SweepError::Io { path: csv_path.display().to_string(), message: e.to_string() };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).map_err(csv_err)?;
    for run in &plan.runs {
        let Some(s) = read_summary(dir, plan, run)? else { continue };
        let values: BTreeMap<String, String> = flatten(&s).into_iter().collect();
        let mut row = axis_columns(plan, run);
        row.extend(columns.iter().map(|k| values.get(k).cloned().unwrap_or_default()));
        w.write_record(&row).map_err(csv_err)?;
    }
    let bytes =
        w.into_inner().map_err(|e| SweepError::Io { path: csv_path.display().to_string(), message: e.to_string() })?;
    write_atomic(&csv_path, &bytes)?;

    let scores = compute_scores(plan, &cells, present == plan.runs.len());
    let json = serde_json::to_string_pretty(&scores)
        .map_err(|e| SweepError::Io { path: "scores.json".into(), message: e.to_string() })?;
    write_atomic(&dir.join("scores.json"), (json + "\n").as_bytes())?;
    let html = crate::sweep_report::render(plan, scores.as_ref(), &cells, present);
    write_atomic(&dir.join("report").join("index.html"), html.as_bytes())
}

/// The scores, when the campaign has both a scheduler and a controller axis.
fn compute_scores(plan: &Plan, cells: &[Cell], all_present: bool) -> Option<Scores> {
    let c = &plan.campaign;
    let (sched, cc) = c.score_axes()?;
    let names = |a: usize, extra: bool| -> Vec<String> {
        let axis = &c.axes[a];
        let mut v: Vec<String> = axis.values.iter().map(display_value).collect();
        if extra && plan.overrides.extra {
            v.extend(axis.extra.iter().map(display_value));
        }
        v
    };
    let mut layout = Layout {
        schedulers: names(sched, false),
        extra_schedulers: if plan.overrides.extra {
            c.axes[sched].extra.iter().map(display_value).collect()
        } else {
            vec![]
        },
        controllers: names(cc, true),
        ..Default::default()
    };
    for v in &c.variants {
        if !layout.families.contains(&v.family) {
            layout.families.push(v.family.clone());
        }
        layout.scenarios.entry(v.family.clone()).or_default().push(v.name.clone());
    }
    let scale = match c.scores.goodput_unit {
        GoodputUnit::Si => 1.0,
        GoodputUnit::Binary => 1e6 / (1u64 << 20) as f64,
    };
    let observations: Vec<Observation> = cells
        .iter()
        .map(|cell| {
            let run = RunSpec { index: 0, variant: cell.variant, values: cell.values.clone(), seed: 1 };
            let v = plan.variant(&run);
            Observation {
                family: v.family.clone(),
                scenario: v.name.clone(),
                scheduler: display_value(plan.axis_value(&run, sched)),
                controller: display_value(plan.axis_value(&run, cc)),
                goodput: cell.goodput_mbps * scale,
            }
        })
        .collect();
    let mut s = scores::compute(&observations, &layout, c.scores.theoretical_max_mbps);
    s.complete &= all_present;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_flatten_by_flow_path_and_link_names() {
        let s: Value = serde_json::json!({
            "schema": "braid.run.v1", "scenario": "x", "seed": 1, "duration_s": 30.0,
            "flows": [{ "name": "mp", "goodput_mbps": 1.5, "completion_time_s": null,
                        "subflows": [{ "path": "L1", "retransmissions": 3 }] }],
            "links": [{ "name": "L3", "utilization": 0.5 }],
            "groups": [{ "name": "short", "fct_p99_ms": 41.5, "completed": 12 }],
            "cross_traffic": [{ "name": "cbr", "path": "L1", "mean_rate_mbps": 2.0 }]
        });
        let cols: Vec<(String, String)> = flatten(&s);
        let get = |k: &str| cols.iter().find(|(c, _)| c == k).map(|(_, v)| v.as_str());
        assert_eq!(get("duration_s"), Some("30.0"));
        assert_eq!(get("mp.goodput_mbps"), Some("1.5"));
        assert_eq!(get("mp.completion_time_s"), Some(""));
        assert_eq!(get("mp.L1.retransmissions"), Some("3"));
        assert_eq!(get("link.L3.utilization"), Some("0.5"));
        assert_eq!(get("group.short.fct_p99_ms"), Some("41.5"), "completion times, for Poisson campaigns");
        assert_eq!(get("cross.cbr.mean_rate_mbps"), Some("2.0"));
        assert_eq!(get("schema"), None, "constant, and the axes already name scenario and seed");
    }

    /// Names that make one column twice keep both figures.
    #[test]
    fn colliding_names_keep_every_figure() {
        let s: Value = serde_json::json!({
            "flows": [
                { "name": "a.b", "subflows": [{ "path": "c", "packets_sent": 108 }] },
                { "name": "a", "subflows": [{ "path": "b.c", "packets_sent": 111 }, { "path": "b.c", "packets_sent": 7 }] }
            ]
        });
        let cols = flatten(&s);
        let sent: Vec<(&str, &str)> =
            cols.iter().filter(|(c, _)| c.contains("packets_sent")).map(|(c, v)| (c.as_str(), v.as_str())).collect();
        assert_eq!(
            sent,
            [("a.b.c.packets_sent", "108"), ("a.b.c.packets_sent~2", "111"), ("a.b.c.packets_sent~3", "7")]
        );
    }
}
