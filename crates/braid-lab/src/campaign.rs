//! Campaign files: a parameter matrix of scenario runs, for `braid sweep`.
//!
//! A campaign is TOML (format and examples in `docs/campaign.md`):
//!
//! - `base`: the scenario every run starts from, inline (`[base]`, any
//!   scenario keys) or the path of a scenario file, relative to the campaign.
//! - `[[scenario]]`: named variants grouped in `family`; every other key is
//!   merged into the base (tables key by key, arrays of tables element by
//!   element, anything else replaced), so `topology.link = [{ rate =
//!   "50Mbit" }, { rtt = "20ms" }]` changes one key of each link.
//! - `[[axis]]`: `name`, a dotted scenario `key` (numbers index arrays:
//!   `"flow.0.cc"`) and scalar `values`; `extra` values join only when the
//!   sweep asks for extras (`--extra`).
//! - `seeds` (runs use seeds 1..=N) and `duration`; `[scores]` and
//!   `[report]` tune the results (see [`ScoreSettings`], [`ReportSettings`]).
//!
//! The runs are the product scenarios x axes (in file order) x seeds, in
//! that nesting order; [`Plan`] enumerates them and builds each run's
//! scenario on demand, so a plan costs a few hundred bytes per run.

use std::collections::BTreeMap;
use std::path::Path;

use braid_proto::Duration;
use serde::Deserialize;
use toml::{Table, Value};

use crate::scenario::{self, Scenario, ScenarioError};
use crate::units::{parse_positive_duration, parse_rate};

/// Campaign errors name the file and key as scenario errors do (and a
/// run's scenario error names the campaign and the run).
pub type CampaignError = ScenarioError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawCampaign {
    name: Option<String>,
    description: Option<String>,
    duration: Option<String>,
    seeds: Option<u64>,
    base: Value,
    #[serde(default)]
    scenario: Vec<Table>,
    #[serde(default)]
    axis: Vec<RawAxis>,
    scores: Option<RawScores>,
    report: Option<RawReport>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawAxis {
    name: String,
    key: String,
    values: Vec<Value>,
    #[serde(default)]
    extra: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawScores {
    scheduler_axis: Option<String>,
    controller_axis: Option<String>,
    goodput_unit: Option<String>,
    theoretical_max: Option<String>,
    flow: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table")]
struct RawReport {
    #[serde(default)]
    panels: Vec<String>,
    top_controllers: Option<usize>,
    #[serde(default)]
    conclusions: Vec<Conclusion>,
}

/// The checks a conclusion may name (`sweep_report::check_conclusion`).
pub const CHECKS: [&str; 5] =
    ["top_controllers", "best_schedulers", "worst_scheduler", "lowest_controller", "blest_avoids_slow_path"];

/// A claim the report checks against the results (seed 004 §5).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, expecting = "a table")]
pub struct Conclusion {
    /// The claim, as the paper words it.
    pub claim: String,
    /// Which check decides it (see `campaign_report::check_conclusion`).
    pub check: String,
    /// Controllers or schedulers the check is about.
    #[serde(default)]
    pub subjects: Vec<String>,
}

/// One named variant of the base scenario.
#[derive(Clone, Debug)]
pub struct Variant {
    pub family: String,
    pub name: String,
    set: Table,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub key: String,
    pub values: Vec<Value>,
    pub extra: Vec<Value>,
}

/// How goodput is counted for the scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GoodputUnit {
    /// 10^6 bits per second.
    Si,
    /// 2^20 bits per second, as seed 004 §3.4 counts.
    Binary,
}

/// Seed 004 §4.2's score inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreSettings {
    /// Axes naming the scheduler and the congestion controller.
    pub scheduler_axis: String,
    pub controller_axis: String,
    pub goodput_unit: GoodputUnit,
    /// The theoretical maximum aggregate goodput, in the chosen unit per
    /// second (seed 004: 200 Mbps).
    pub theoretical_max_mbps: f64,
    /// Which flow of the scenario is scored.
    pub flow: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ReportSettings {
    /// Scenarios drawn as per-scheduler panels (seed 004 Fig. 5-7).
    pub panels: Vec<String>,
    /// How many of the best controllers get heatmaps and distributions.
    pub top_controllers: usize,
    pub conclusions: Vec<Conclusion>,
}

#[derive(Clone, Debug)]
pub struct Campaign {
    pub name: String,
    pub description: String,
    /// The file as given, for messages.
    pub file: String,
    /// The campaign as TOML with `base` inlined: kept with the results so
    /// they can be resumed and merged, and hashed into the plan's fingerprint.
    pub text: String,
    base: Table,
    pub duration: Duration,
    pub seeds: u64,
    pub variants: Vec<Variant>,
    pub axes: Vec<Axis>,
    pub scores: ScoreSettings,
    pub report: ReportSettings,
}

/// What the command line may change in a campaign.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    pub seeds: Option<u64>,
    pub duration: Option<Duration>,
    /// Include the axes' `extra` values.
    pub extra: bool,
}

fn invalid(file: &str, key: impl Into<String>, message: impl Into<String>) -> CampaignError {
    ScenarioError::Invalid { file: file.to_string(), key: key.into(), message: message.into() }
}

/// Reads a campaign file.
pub fn load(path: &Path) -> Result<Campaign, CampaignError> {
    let file = path.display().to_string();
    let text = scenario::read_text(path, scenario::MAX_FILE_BYTES)
        .map_err(|source| ScenarioError::Io { file: file.clone(), source })?;
    parse(&text, &file, path.parent())
}

/// Parses campaign `text`; `file` names it in errors and `dir` resolves a
/// `base` given as a path.
pub fn parse(text: &str, file: &str, dir: Option<&Path>) -> Result<Campaign, CampaignError> {
    let message = |e: &toml::de::Error| crate::scenario::in_toml_terms(&e.to_string());
    let error = |message| ScenarioError::Syntax { file: file.to_string(), message };
    let syntax = |e: toml::de::Error| error(message(&e));
    let raw: RawCampaign = scenario::from_toml(text, message).map_err(error)?;
    let mut resolved: Table = toml::from_str(text).map_err(syntax)?;
    let here = dir.unwrap_or(Path::new(""));
    let base = match raw.base {
        Value::Table(mut t) => {
            absolute_traces(&mut t, here);
            t
        }
        Value::String(p) => {
            let path = here.join(&p);
            let shown = path.display().to_string();
            let t = scenario::read_text(&path, scenario::MAX_FILE_BYTES)
                .map_err(|source| ScenarioError::Io { file: shown.clone(), source })?;
            let mut t: Table =
                toml::from_str(&t).map_err(|e| ScenarioError::Syntax { file: shown, message: e.to_string() })?;
            // Its traces sit next to it, as for `braid run`.
            absolute_traces(&mut t, path.parent().unwrap_or(here));
            t
        }
        _ => return Err(invalid(file, "base", "must be a table of scenario keys or a scenario file's path")),
    };
    for v in resolved.get_mut("scenario").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Value::Table(t) = v {
            absolute_traces(t, here);
        }
    }
    for axis in resolved.get_mut("axis").and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(a) =
            axis.as_table_mut().filter(|a| a.get("key").and_then(Value::as_str).is_some_and(|k| k.ends_with(".trace")))
        else {
            continue;
        };
        for list in ["values", "extra"] {
            for v in a.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                absolute_path(v, here);
            }
        }
    }
    resolved.insert("base".into(), Value::Table(base));
    let text = toml::to_string(&resolved).map_err(|e| invalid(file, "base", e.to_string()))?;
    // Variants and axes as resolved (trace paths made absolute).
    let raw: RawCampaign = toml::from_str(&text).map_err(syntax)?;
    let Value::Table(base) = raw.base else { return Err(invalid(file, "base", "must be a table")) };
    let duration = match &raw.duration {
        Some(d) => parse_positive_duration(d).map_err(|m| invalid(file, "duration", m))?,
        None => Duration::from_secs(30),
    };
    let seeds = raw.seeds.unwrap_or(1);
    if !(1..=1000).contains(&seeds) {
        return Err(invalid(file, "seeds", format!("{seeds} is out of range: allowed 1 to 1000")));
    }
    let mut variants = Vec::new();
    for (i, mut t) in raw.scenario.into_iter().enumerate() {
        let mut take = |k: &str| match t.remove(k) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            _ => Err(invalid(file, format!("scenario[{i}].{k}"), "needs a non-empty string")),
        };
        let (family, name) = (take("family")?, take("name")?);
        if let Some(v) = variants.iter().find(|v: &&Variant| file_safe(&v.name) == file_safe(&name)) {
            let why = match v.name == name {
                true => format!("{name:?} is used twice"),
                false => format!("{name:?} and {:?} would share the run folder {:?}", v.name, file_safe(&name)),
            };
            return Err(invalid(file, format!("scenario[{i}].name"), why));
        }
        if let Some(k) = PLAN_KEYS.iter().find(|k| t.contains_key(**k)) {
            return Err(invalid(file, format!("scenario[{i}].{k}"), plan_key_message(k)));
        }
        variants.push(Variant { family, name, set: t });
    }
    if variants.is_empty() {
        let name = base.get("name").and_then(Value::as_str).unwrap_or("base").to_string();
        variants.push(Variant { family: "all".into(), name, set: Table::new() });
    }
    let mut axes: Vec<Axis> = Vec::new();
    for (i, a) in raw.axis.into_iter().enumerate() {
        let key = format!("axis[{i}]");
        if a.values.is_empty() {
            return Err(invalid(file, format!("{key}.values"), "needs at least one value"));
        }
        if let Some(v) = a.values.iter().chain(&a.extra).find(|v| v.is_table() || v.is_array()) {
            return Err(invalid(
                file,
                format!("{key}.values"),
                format!("{v} is not a scalar; use [[scenario]] for compound settings"),
            ));
        }
        if ["run", "family", "scenario", "seed"].contains(&a.name.as_str()) || axes.iter().any(|b| b.name == a.name) {
            return Err(invalid(file, format!("{key}.name"), format!("{:?} is taken", a.name)));
        }
        if let Some(k) = PLAN_KEYS.iter().find(|k| a.key == **k) {
            return Err(invalid(file, format!("{key}.key"), plan_key_message(k)));
        }
        if let Some(b) = axes.iter().find(|b| b.key == a.key) {
            return Err(invalid(file, format!("{key}.key"), format!("{:?} is axis {:?}'s key too", a.key, b.name)));
        }
        let mut folders = BTreeMap::new();
        for v in a.values.iter().chain(&a.extra) {
            if let Some(before) = folders.insert(file_safe(&display_value(v)), v) {
                let why = match before == v {
                    true => format!("{v} is listed twice"),
                    false => format!("{before} and {v} would share a run folder"),
                };
                return Err(invalid(file, format!("{key}.values"), why));
            }
        }
        axes.push(Axis { name: a.name, key: a.key, values: a.values, extra: a.extra });
    }
    let s = raw.scores.unwrap_or(RawScores {
        scheduler_axis: None,
        controller_axis: None,
        goodput_unit: None,
        theoretical_max: None,
        flow: None,
    });
    let goodput_unit = match s.goodput_unit.as_deref() {
        None | Some("si") => GoodputUnit::Si,
        Some("binary") => GoodputUnit::Binary,
        Some(o) => return Err(invalid(file, "scores.goodput_unit", format!("{o:?}: allowed \"si\", \"binary\""))),
    };
    let theoretical_max_mbps = match &s.theoretical_max {
        Some(r) => parse_rate(r).map_err(|m| invalid(file, "scores.theoretical_max", m))? as f64 / 1e6,
        None => 200.0,
    };
    if theoretical_max_mbps <= 0.0 {
        return Err(invalid(file, "scores.theoretical_max", "must be above zero"));
    }
    // Named axes must exist; the defaults may be absent (no scores then).
    for (key, name) in [("scores.scheduler_axis", &s.scheduler_axis), ("scores.controller_axis", &s.controller_axis)] {
        if let Some(n) = name.as_ref().filter(|n| !axes.iter().any(|a| &a.name == *n)) {
            let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
            return Err(invalid(file, key, format!("no [[axis]] is named {n:?}: axes are {names:?}")));
        }
    }
    let scores = ScoreSettings {
        scheduler_axis: s.scheduler_axis.unwrap_or_else(|| "scheduler".into()),
        controller_axis: s.controller_axis.unwrap_or_else(|| "cc".into()),
        goodput_unit,
        theoretical_max_mbps,
        flow: s.flow.unwrap_or(0),
    };
    if scores.scheduler_axis == scores.controller_axis {
        return Err(invalid(file, "scores.controller_axis", "must differ from `scheduler_axis`"));
    }
    let r = raw.report.unwrap_or(RawReport { panels: Vec::new(), top_controllers: None, conclusions: Vec::new() });
    if let Some(p) = r.panels.iter().find(|p| !variants.iter().any(|v| &v.name == *p)) {
        return Err(invalid(file, "report.panels", format!("no [[scenario]] is named {p:?}")));
    }
    if r.top_controllers == Some(0) {
        return Err(invalid(file, "report.top_controllers", "must be at least 1"));
    }
    for (i, c) in r.conclusions.iter().enumerate() {
        let key = |k: &str| format!("report.conclusions[{i}].{k}");
        if !CHECKS.contains(&c.check.as_str()) {
            return Err(invalid(file, key("check"), format!("{:?}: allowed {CHECKS:?}", c.check)));
        }
        if c.subjects.is_empty() {
            return Err(invalid(
                file,
                key("subjects"),
                "the check needs the controllers, schedulers or families it is about",
            ));
        }
    }
    let report = ReportSettings {
        panels: r.panels,
        top_controllers: r.top_controllers.unwrap_or(3),
        conclusions: r.conclusions,
    };
    let campaign = Campaign {
        name: raw.name.unwrap_or_else(|| "campaign".into()),
        description: raw.description.unwrap_or_default(),
        file: file.to_string(),
        text,
        base,
        duration,
        seeds,
        variants,
        axes,
        scores,
        report,
    };
    // Every variant and every axis value (extras too) must make a valid
    // scenario, so mistakes surface before any run starts: each variant with
    // the axes' first values, each value with the first variant and the
    // other axes' first values (not the whole product, which may be huge).
    let overrides = Overrides { extra: true, seeds: Some(1), duration: None };
    let plan = Plan { campaign: campaign.clone(), overrides, duration, seeds: 1, runs: Vec::new() };
    let n = campaign.axes.len();
    let variants = (0..campaign.variants.len()).map(|variant| (variant, vec![0; n]));
    let values = campaign.axes.iter().enumerate().flat_map(|(a, axis)| {
        (1..axis.values.len() + axis.extra.len()).map(move |k| {
            let mut values = vec![0; n];
            values[a] = k;
            (0, values)
        })
    });
    for (variant, values) in variants.chain(values) {
        let s = plan.scenario(&RunSpec { index: 0, variant, values, seed: 1 })?;
        if campaign.scores.flow >= s.flows.len() {
            let what = format!(
                "{}, but scenario {:?} has {} flows (counted from 0)",
                campaign.scores.flow,
                s.name,
                s.flows.len()
            );
            return Err(invalid(file, "scores.flow", what));
        }
    }
    Ok(campaign)
}

/// One run of a plan: indices into the campaign's variants and axis values.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Position in the plan (shards take every N-th).
    pub index: usize,
    pub variant: usize,
    /// Per axis, the index into `values` followed by `extra`.
    pub values: Vec<usize>,
    pub seed: u64,
}

/// The most runs a plan may hold (each is a few dozen bytes in memory, a
/// folder and a summary on disk): far beyond any campaign that finishes,
/// short of one that exhausts memory before the first run.
pub const MAX_RUNS: u64 = 1_000_000;

/// The enumerated runs of a campaign under given overrides.
#[derive(Clone, Debug)]
pub struct Plan {
    pub campaign: Campaign,
    pub overrides: Overrides,
    pub duration: Duration,
    pub seeds: u64,
    pub runs: Vec<RunSpec>,
}

impl Campaign {
    /// The positions of the scheduler and controller axes seed 004's scores
    /// need (`[scores]`'s names, `scheduler` and `cc` by default), or
    /// `None` when the campaign lacks either and is not scored.
    pub fn score_axes(&self) -> Option<(usize, usize)> {
        let position = |name: &str| self.axes.iter().position(|a| a.name == name);
        Some((position(&self.scores.scheduler_axis)?, position(&self.scores.controller_axis)?))
    }

    /// Why the campaign is not scored, for the user, or `None` if it is.
    pub fn unscored(&self) -> Option<String> {
        self.score_axes().is_none().then(|| {
            format!(
                "no scores (scores.json holds null): seed 004's scores need a scheduler axis named `{}` and a \
                 controller axis named `{}` ([scores] in docs/campaign.md)",
                self.scores.scheduler_axis, self.scores.controller_axis
            )
        })
    }

    /// The runs, scenarios x axes x seeds; refused beyond [`MAX_RUNS`].
    pub fn plan(&self, overrides: Overrides) -> Result<Plan, CampaignError> {
        let seeds = overrides.seeds.unwrap_or(self.seeds);
        let sizes: Vec<usize> =
            self.axes.iter().map(|a| a.values.len() + if overrides.extra { a.extra.len() } else { 0 }).collect();
        let count =
            sizes.iter().try_fold((self.variants.len() as u64).saturating_mul(seeds), |n, &k| n.checked_mul(k as u64));
        if count.is_none_or(|n| n > MAX_RUNS) {
            let factors: Vec<String> = std::iter::once(format!("{} scenarios", self.variants.len()))
                .chain(self.axes.iter().zip(&sizes).map(|(a, k)| format!("{k} {}", a.name)))
                .chain(std::iter::once(format!("{seeds} seeds")))
                .collect();
            let n = count.map_or("more than 2^64".to_string(), |n| n.to_string());
            return Err(invalid(
                &self.file,
                "axis",
                format!(
                    "{n} runs ({}): more than the {MAX_RUNS} a sweep may plan; split it into smaller campaigns",
                    factors.join(" x ")
                ),
            ));
        }
        let mut runs = Vec::new();
        for variant in 0..self.variants.len() {
            let mut values = vec![0; sizes.len()];
            loop {
                for seed in 1..=seeds {
                    runs.push(RunSpec { index: runs.len(), variant, values: values.clone(), seed });
                }
                // Odometer over the axes, the last axis fastest.
                let mut a = sizes.len();
                loop {
                    if a == 0 {
                        break;
                    }
                    a -= 1;
                    values[a] += 1;
                    if values[a] < sizes[a] {
                        break;
                    }
                    values[a] = 0;
                }
                if values.iter().all(|&v| v == 0) {
                    break;
                }
            }
        }
        Ok(Plan {
            campaign: self.clone(),
            overrides,
            duration: overrides.duration.unwrap_or(self.duration),
            seeds,
            runs,
        })
    }
}

/// A value as it appears in run names and tables.
pub fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Keeps letters, digits, `.`, `-` and `_`, for file names.
/// Makes the relative trace files of a scenario table's links absolute,
/// from `dir`: runs are parsed with their campaign's name, not a file of
/// their own, and a results folder keeps the campaign (for merging and
/// resuming) away from the traces.
fn absolute_traces(scenario: &mut Table, dir: &Path) {
    let Some(topology) = scenario.get_mut("topology").and_then(Value::as_table_mut) else { return };
    for (key, v) in topology.iter_mut() {
        let links = match (key.as_str(), v) {
            ("link", Value::Array(links)) => links.iter_mut().collect(),
            ("bottleneck", link) => vec![link],
            _ => continue,
        };
        for trace in links.into_iter().filter_map(|l| l.as_table_mut()?.get_mut("trace")) {
            absolute_path(trace, dir);
        }
    }
}

fn absolute_path(v: &mut Value, dir: &Path) {
    if let Value::String(s) = v {
        if let Ok(p) = std::path::absolute(dir.join(&*s)) {
            *s = p.display().to_string();
        }
    }
}

/// Scenario keys a sweep sets itself, which variants and axes may not.
const PLAN_KEYS: [&str; 3] = ["name", "seed", "duration"];

fn plan_key_message(key: &str) -> String {
    match key {
        "seed" => "seeds come from the campaign's `seeds` (1 to N) or `--seeds`".into(),
        "duration" => "every run lasts the campaign's `duration` (or `--duration`)".into(),
        _ => "a run's name is its [[scenario]]'s `name`".into(),
    }
}

fn file_safe(s: &str) -> String {
    let out: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with('.') {
        format!("_{out}")
    } else {
        out
    }
}

impl Plan {
    pub fn axis_value(&self, run: &RunSpec, axis: usize) -> &Value {
        let a = &self.campaign.axes[axis];
        let k = run.values[axis];
        a.values.get(k).unwrap_or_else(|| &a.extra[k - a.values.len()])
    }

    /// Whether the run uses an axis's extra value.
    pub fn is_extra(&self, run: &RunSpec) -> bool {
        run.values.iter().zip(&self.campaign.axes).any(|(&k, a)| k >= a.values.len())
    }

    pub fn variant(&self, run: &RunSpec) -> &Variant {
        &self.campaign.variants[run.variant]
    }

    /// The run's folder below `runs/`: `SCENARIO/VALUE/VALUE/seedN`.
    pub fn run_id(&self, run: &RunSpec) -> String {
        let mut parts = vec![file_safe(&self.variant(run).name)];
        parts.extend((0..self.campaign.axes.len()).map(|a| file_safe(&display_value(self.axis_value(run, a)))));
        parts.push(format!("seed{}", run.seed));
        parts.join("/")
    }

    /// The run's scenario as TOML: base, variant merged in, axis values set.
    pub fn scenario_table(&self, run: &RunSpec) -> Result<Table, CampaignError> {
        let c = &self.campaign;
        let file = &c.file;
        let v = self.variant(run);
        let mut t = c.base.clone();
        merge(&mut t, &v.set);
        for (a, axis) in c.axes.iter().enumerate() {
            set_path(&mut t, &axis.key, self.axis_value(run, a).clone())
                .map_err(|m| invalid(file, format!("axis[{a}].key"), m))?;
        }
        t.insert("name".into(), Value::String(v.name.clone()));
        t.insert("seed".into(), Value::Integer(run.seed as i64));
        // The run's length decides how long Poisson arrivals last.
        t.insert("duration".into(), Value::String(format!("{}ns", self.duration.as_nanos())));
        Ok(t)
    }

    /// The run's validated scenario; errors name the campaign and the run.
    pub fn scenario(&self, run: &RunSpec) -> Result<Scenario, CampaignError> {
        let text = toml::to_string(&self.scenario_table(run)?)
            .map_err(|e| invalid(&self.campaign.file, "base", e.to_string()))?;
        let shown = format!("{} (run {})", self.campaign.file, self.run_id(run));
        scenario::parse_generated(&text, &shown)
    }

    /// A digest of everything that decides the runs' results, so a results
    /// folder can refuse runs from a different plan.
    pub fn fingerprint(&self) -> String {
        // FNV-1a over the campaign text and the overrides: stable across
        // builds and platforms, unlike std's hasher.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let o = &self.overrides;
        let extra = format!("|{:?}|{:?}|{}", o.seeds, o.duration.map(|d| d.as_nanos()), o.extra);
        for b in self.campaign.text.bytes().chain(extra.bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// Merges `over` into `into`: tables key by key, arrays of tables element
/// by element (longer arrays append), anything else replaced.
fn merge(into: &mut Table, over: &Table) {
    for (k, v) in over {
        match (into.get_mut(k), v) {
            (Some(Value::Table(a)), Value::Table(b)) => merge(a, b),
            (Some(Value::Array(a)), Value::Array(b)) if b.iter().all(Value::is_table) => {
                for (i, item) in b.iter().enumerate() {
                    match (a.get_mut(i), item) {
                        (Some(Value::Table(x)), Value::Table(y)) => merge(x, y),
                        (Some(slot), _) => *slot = item.clone(),
                        (None, _) => a.push(item.clone()),
                    }
                }
            }
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Sets dotted `path` (numbers index arrays) to `value`, creating tables.
fn set_path(t: &mut Table, path: &str, value: Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("{path:?} is not a dotted key like \"flow.0.cc\""));
    }
    let mut cur = t.entry(parts[0].to_string()).or_insert_with(|| Value::Table(Table::new()));
    for p in &parts[1..] {
        cur = match (cur, p.parse::<usize>()) {
            (Value::Array(a), Ok(i)) => {
                let len = a.len();
                a.get_mut(i).ok_or_else(|| format!("{path:?}: index {i} is past the {len} entries there"))?
            }
            (Value::Table(_), Ok(_)) => {
                return Err(format!("{path:?}: {p} indexes a list, but there is a table (or nothing) there"))
            }
            (Value::Table(m), _) => m.entry(p.to_string()).or_insert_with(|| Value::Table(Table::new())),
            (other, _) => return Err(format!("{path:?}: cannot go into {p:?} of {}", other.type_str())),
        };
    }
    *cur = value;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
        name = "small"
        duration = "2s"
        seeds = 2
        [base]
        topology = { kind = "hybrid-access", link = [{ rate = "10Mbit", rtt = "10ms" }, { rate = "10Mbit", rtt = "10ms" }] }
        flow = [{ cc = "lia" }]
        [[scenario]]
        family = "homogeneous"
        name = "same"
        [[scenario]]
        family = "mixed"
        name = "slow second"
        topology.link = [{}, { rate = "5Mbit", rtt = "40ms" }]
        [[axis]]
        name = "scheduler"
        key = "flow.0.scheduler"
        values = ["minrtt", "rr"]
        extra = ["redundant"]
        [[axis]]
        name = "cc"
        key = "flow.0.cc"
        values = ["lia", "bbr"]
    "#;

    #[test]
    fn plan_is_the_product_in_file_order_with_seeds_innermost() {
        let c = parse(SMALL, "small.toml", None).unwrap();
        let p = c.plan(Overrides::default()).unwrap();
        assert_eq!(p.runs.len(), 2 * 2 * 2 * 2);
        let ids: Vec<String> = p.runs.iter().take(5).map(|r| p.run_id(r)).collect();
        assert_eq!(
            ids,
            [
                "same/minrtt/lia/seed1",
                "same/minrtt/lia/seed2",
                "same/minrtt/bbr/seed1",
                "same/minrtt/bbr/seed2",
                "same/rr/lia/seed1"
            ]
        );
        assert_eq!(p.run_id(&p.runs[8]), "slow_second/minrtt/lia/seed1");
        let with_extra = c.plan(Overrides { extra: true, seeds: Some(1), duration: None }).unwrap();
        assert_eq!(with_extra.runs.len(), 2 * 3 * 2);
        assert!(with_extra
            .runs
            .iter()
            .any(|r| with_extra.is_extra(r) && with_extra.run_id(r) == "same/redundant/bbr/seed1"));
        assert_ne!(p.fingerprint(), with_extra.fingerprint());
    }

    #[test]
    fn variants_merge_into_the_base_and_axes_set_keys() {
        let c = parse(SMALL, "small.toml", None).unwrap();
        let p = c.plan(Overrides { duration: Some(Duration::from_secs(1)), ..Default::default() }).unwrap();
        let run = &p.runs[8 + 7]; // slow second, rr, bbr, seed 2
        let s = p.scenario(run).unwrap();
        assert_eq!((s.name.as_str(), s.seed, s.duration), ("slow second", 2, Duration::from_secs(1)));
        assert_eq!((s.flows[0].cc.as_str(), s.flows[0].scheduler.as_str()), ("bbr", "rr"));
        let t = p.scenario_table(run).unwrap();
        let l = t["topology"]["link"].as_array().unwrap();
        assert_eq!(
            (l[0]["rate"].as_str(), l[1]["rate"].as_str(), l[1]["rtt"].as_str()),
            (Some("10Mbit"), Some("5Mbit"), Some("40ms"))
        );
    }

    /// A campaign's value of the wrong type is named by its key, as a
    /// scenario's is.
    #[test]
    fn type_errors_name_their_key() {
        for (from, to, key) in
            [("seeds = 2", "seeds = \"two\"", "seeds"), ("name = \"cc\"", "name = 5", "axis[1].name")]
        {
            let e = parse(&SMALL.replace(from, to), "small.toml", None).unwrap_err().to_string();
            assert!(e.contains(&format!("key `{key}`: ")), "{e}");
        }
    }

    /// Poisson arrivals last to the end of the campaign's runs, whether
    /// the base sets another `duration` or none (they lasted the base's,
    /// or the default 30 s, and most flows started after the run).
    #[test]
    fn arrivals_last_as_long_as_the_campaign_s_runs() {
        let arrivals =
            SMALL.replace("flow = [{ cc = \"lia\" }]", "flow = [{ cc = \"lia\", arrival_rate = 10, size = \"10KB\" }]");
        let c = parse(&arrivals, "small.toml", None).unwrap();
        for (over, secs) in [(None, 2), (Some(Duration::from_secs(20)), 20)] {
            let p = c.plan(Overrides { duration: over, ..Default::default() }).unwrap();
            let s = p.scenario(&p.runs[0]).unwrap();
            let last = s.flows.last().unwrap().start.as_nanos() as f64 / 1e9;
            assert_eq!(s.duration, Duration::from_secs(secs));
            assert!(last < secs as f64 && last > secs as f64 * 0.7, "last of {} arrivals at {last} s", s.flows.len());
        }
    }

    #[test]
    fn mistakes_name_the_file_and_the_key() {
        let bad_cc = SMALL.replace("values = [\"lia\", \"bbr\"]", "values = [\"lia\", \"warp\"]");
        let e = parse(&bad_cc, "small.toml", None).unwrap_err().to_string();
        assert!(e.contains("small.toml") && e.contains("flow[0].cc") && e.contains("warp"), "{e}");
        let e = parse("base = {}\n[[axis]]\nname = \"cc\"\nkey = \"flow.0.cc\"\nvalues = [\"lia\"]", "x.toml", None)
            .unwrap_err();
        assert!(e.to_string().contains("axis[0].key") && e.to_string().contains("indexes a list"), "{e}");
        let bad_key = SMALL.replace("key = \"flow.0.cc\"", "key = \"flow.3.cc\"");
        let e = parse(&bad_key, "small.toml", None).unwrap_err().to_string();
        assert!(e.contains("axis[1].key") && e.contains("index 3"), "{e}");
        let dup = SMALL.replace("name = \"slow second\"", "name = \"same\"");
        assert!(parse(&dup, "small.toml", None).unwrap_err().to_string().contains("scenario[1].name"));
        let e = parse("seeds = 0\nbase = {}", "x.toml", None).unwrap_err().to_string();
        assert!(e.contains("seeds"), "{e}");
        let e = parse("base = 3", "x.toml", None).unwrap_err().to_string();
        assert!(e.contains("`base`"), "{e}");
        let e = parse(&SMALL.replace("values = [\"minrtt\", \"rr\"]", "values = [[1]]"), "x.toml", None).unwrap_err();
        assert!(e.to_string().contains("axis[0].values"), "{e}");
        assert!(parse("nonsense = 1\nbase = {}", "x.toml", None).unwrap_err().to_string().contains("x.toml"));
        // A value of the wrong type: the generated line quoted, no line
        // number of text the user never wrote.
        let e = parse(&SMALL.replace("values = [\"lia\", \"bbr\"]", "values = [\"lia\", 5]"), "x.toml", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`cc = 5`: invalid type: integer `5`") && !e.contains("line"), "{e}");
    }

    /// Runs that would share a folder (one summary reported for two runs),
    /// and keys the sweep sets itself (the value would be ignored).
    #[test]
    fn colliding_runs_and_ignored_keys_are_refused() {
        let refused = |text: &str, key: &str, phrase: &str| {
            let e = parse(text, "small.toml", None).unwrap_err().to_string();
            assert!(e.contains(&format!("`{key}`")) && e.contains(phrase), "{e}");
        };
        refused(
            &SMALL.replace("name = \"same\"", "name = \"slow/second\""),
            "scenario[1].name",
            "share the run folder",
        );
        refused(&SMALL.replace("[\"lia\", \"bbr\"]", "[\"lia\", \"lia\"]"), "axis[1].values", "listed twice");
        refused(&SMALL.replace("[\"lia\", \"bbr\"]", "[\"a/b\", \"a_b\"]"), "axis[1].values", "share a run folder");
        refused(&SMALL.replace("extra = [\"redundant\"]", "extra = [\"rr\"]"), "axis[0].values", "listed twice");
        refused(&SMALL.replace("key = \"flow.0.cc\"", "key = \"seed\""), "axis[1].key", "--seeds");
        refused(&SMALL.replace("key = \"flow.0.cc\"", "key = \"duration\""), "axis[1].key", "--duration");
        refused(&SMALL.replace("key = \"flow.0.cc\"", "key = \"name\""), "axis[1].key", "[[scenario]]");
        refused(&SMALL.replace("key = \"flow.0.cc\"", "key = \"flow.0.scheduler\""), "axis[1].key", "\"scheduler\"");
        refused(&SMALL.replace("name = \"same\"", "name = \"same\"\nseed = 7"), "scenario[0].seed", "--seeds");
        assert!(parse(SMALL, "small.toml", None).is_ok());
    }

    /// Score and report settings that would give empty or nonsense results
    /// are refused by key (each ran the whole campaign and then reported
    /// null scores, zeros or "undecided").
    #[test]
    fn score_and_report_settings_are_checked() {
        let refused = |extra: &str, key: &str, phrase: &str| {
            let e = parse(&format!("{SMALL}\n{extra}"), "small.toml", None).unwrap_err().to_string();
            assert!(e.contains(&format!("`{key}`")) && e.contains(phrase), "{extra}: {e}");
        };
        refused("[scores]\nscheduler_axis = \"nope\"", "scores.scheduler_axis", "axes are [\"scheduler\", \"cc\"]");
        refused("[scores]\ncontroller_axis = \"scheduler\"", "scores.controller_axis", "must differ");
        refused("[scores]\nflow = 1", "scores.flow", "has 1 flows");
        refused("[report]\ntop_controllers = 0", "report.top_controllers", "at least 1");
        let conclusion = |check: &str, subjects: &str| {
            format!("[report]\nconclusions = [{{ claim = \"x\", check = \"{check}\", subjects = {subjects} }}]")
        };
        refused(&conclusion("nope", "[\"lia\"]"), "report.conclusions[0].check", "allowed [\"top_controllers\"");
        refused(&conclusion("top_controllers", "[]"), "report.conclusions[0].subjects", "needs");
        for ok in [conclusion("top_controllers", "[\"lia\"]"), "[scores]\nflow = 0\ncontroller_axis = \"cc\"".into()] {
            assert!(parse(&format!("{SMALL}\n{ok}"), "small.toml", None).is_ok(), "{ok}");
        }
    }

    /// Trace files sit next to the scenario that names them: the base file,
    /// or the campaign for its own tables and axes. Their paths are made
    /// absolute, so runs (parsed under the campaign's name) and a results
    /// folder merged elsewhere still find them.
    #[test]
    fn traces_are_found_next_to_the_file_that_names_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/t.trace"), "1\n2\n3\n").unwrap();
        let scenario = "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\ntrace = \"t.trace\"\n[[flow]]\n";
        std::fs::write(dir.path().join("sub/scen.toml"), scenario).unwrap();
        let axis = "[[axis]]\nname = \"cc\"\nkey = \"flow.0.cc\"\nvalues = [\"lia\", \"olia\"]\n";
        let inline = format!(
            "{axis}[base]\n{}",
            scenario
                .replace("[topology]", "[base.topology]")
                .replace("[[topology", "[[base.topology")
                .replace("[[flow", "[[base.flow")
                .replace("t.trace", "sub/t.trace")
        );
        for text in [format!("base = \"sub/scen.toml\"\n{axis}"), inline] {
            let c = parse(&text, "c.toml", Some(dir.path())).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let plan = c.plan(Overrides::default()).unwrap();
            let s = plan.scenario(&plan.runs[1]).unwrap();
            assert!(s.topology.links.iter().any(|l| l.trace.is_some()));
            assert!(c.text.contains(&dir.path().join("sub/t.trace").display().to_string()), "{}", c.text);
        }
        let text = format!("base = \"sub/scen.toml\"\n{axis}");
        let kept = parse(&text, "c.toml", Some(dir.path())).unwrap().text;
        assert!(
            parse(&kept, "elsewhere/campaign.toml", Some(Path::new("elsewhere"))).is_ok(),
            "the kept copy finds them"
        );
    }

    /// A plan beyond [`MAX_RUNS`] is refused before it is built, and parsing
    /// checks each value once rather than walking the product (twenty axes
    /// of ten values: 10^20 runs).
    #[test]
    fn huge_products_are_refused_not_built() {
        let mut text = String::from(
            "base = { topology = { kind = \"hybrid-access\", link = [{ rate = \"10Mbit\" }] }, flow = [{}] }\n",
        );
        for a in 0..20 {
            text += &format!("[[axis]]\nname = \"a{a}\"\nkey = \"flow.0.initial_window\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
        }
        let e = parse(&text, "big.toml", None).unwrap_err().to_string();
        assert!(e.contains("axis[1].key") && e.contains("axis \"a0\"'s key too"), "{e}");
        let mut text = String::from(
            "base = { topology = { kind = \"hybrid-access\", link = [{ rate = \"10Mbit\" }] }, flow = [{}] }\n",
        );
        let quoted = |v: &[&str]| v.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>();
        let ms: Vec<String> = (1..=10).map(|v| format!("\"{v}ms\"")).collect();
        let axes = [
            ("initial_window", (1..=10).map(|v| v.to_string()).collect()),
            ("ack_every", (1..=10).map(|v| v.to_string()).collect()),
            ("mss", (1..=10).map(|v| (500 + v).to_string()).collect()),
            ("min_rto", ms.clone()),
            ("max_ack_delay", ms),
            ("scheduler", quoted(&["minrtt", "rr", "blest", "ecf", "llhd", "redundant"])),
            (
                "cc",
                quoted(&["lia", "olia", "balia", "reno", "cubic", "wvegas", "bbr", "ewtcp", "coupled", "semicoupled"]),
            ),
        ];
        for (a, (key, values)) in axes.iter().enumerate() {
            text += &format!("[[axis]]\nname = \"a{a}\"\nkey = \"flow.0.{key}\"\nvalues = [{}]\n", values.join(", "));
        }
        let c = parse(&text, "big.toml", None).unwrap();
        let e = c.plan(Overrides::default()).unwrap_err().to_string();
        assert!(e.contains("6000000 runs") && e.contains("1000000"), "{e}");
        assert!(c.plan(Overrides { seeds: Some(1), ..Default::default() }).is_err());
    }
}
