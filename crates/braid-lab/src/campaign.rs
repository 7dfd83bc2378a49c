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

use std::path::Path;

use braid_proto::Duration;
use serde::Deserialize;
use toml::{Table, Value};

use crate::scenario::{self, Scenario, ScenarioError};
use crate::units::{parse_duration, parse_rate};

/// Campaign errors name the file and key as scenario errors do (and a
/// run's scenario error names the campaign and the run).
pub type CampaignError = ScenarioError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
struct RawAxis {
    name: String,
    key: String,
    values: Vec<Value>,
    #[serde(default)]
    extra: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScores {
    scheduler_axis: Option<String>,
    controller_axis: Option<String>,
    goodput_unit: Option<String>,
    theoretical_max: Option<String>,
    flow: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReport {
    #[serde(default)]
    panels: Vec<String>,
    top_controllers: Option<usize>,
    #[serde(default)]
    conclusions: Vec<Conclusion>,
}

/// A claim the report checks against the results (seed 004 §5).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
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
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io { file: file.clone(), source })?;
    parse(&text, &file, path.parent())
}

/// Parses campaign `text`; `file` names it in errors and `dir` resolves a
/// `base` given as a path.
pub fn parse(text: &str, file: &str, dir: Option<&Path>) -> Result<Campaign, CampaignError> {
    let syntax = |e: toml::de::Error| ScenarioError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    };
    let raw: RawCampaign = toml::from_str(text).map_err(syntax)?;
    let mut resolved: Table = toml::from_str(text).map_err(syntax)?;
    let base = match raw.base {
        Value::Table(t) => t,
        Value::String(p) => {
            let path = dir.map_or_else(|| Path::new(&p).to_path_buf(), |d| d.join(&p));
            let shown = path.display().to_string();
            let t =
                std::fs::read_to_string(&path).map_err(|source| ScenarioError::Io { file: shown.clone(), source })?;
            toml::from_str(&t).map_err(|e| ScenarioError::Syntax { file: shown, message: e.to_string() })?
        }
        _ => return Err(invalid(file, "base", "must be a table of scenario keys or a scenario file's path")),
    };
    resolved.insert("base".into(), Value::Table(base.clone()));
    let text = toml::to_string(&resolved).map_err(|e| invalid(file, "base", e.to_string()))?;
    let duration = match &raw.duration {
        Some(d) => parse_duration(d).map_err(|m| invalid(file, "duration", m))?,
        None => Duration::from_secs(30),
    };
    if duration == Duration::ZERO {
        return Err(invalid(file, "duration", "must be longer than zero"));
    }
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
        if variants.iter().any(|v: &Variant| v.name == name) {
            return Err(invalid(file, format!("scenario[{i}].name"), format!("{name:?} is used twice")));
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
    let scores = ScoreSettings {
        scheduler_axis: s.scheduler_axis.unwrap_or_else(|| "scheduler".into()),
        controller_axis: s.controller_axis.unwrap_or_else(|| "cc".into()),
        goodput_unit,
        theoretical_max_mbps,
        flow: s.flow.unwrap_or(0),
    };
    let r = raw.report.unwrap_or(RawReport { panels: Vec::new(), top_controllers: None, conclusions: Vec::new() });
    if let Some(p) = r.panels.iter().find(|p| !variants.iter().any(|v| &v.name == *p)) {
        return Err(invalid(file, "report.panels", format!("no [[scenario]] is named {p:?}")));
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
    // scenario, so mistakes surface before any run starts.
    let plan = campaign.plan(Overrides { extra: true, seeds: Some(1), duration: None });
    let mut seen_variant = vec![false; campaign.variants.len()];
    let mut seen_value: Vec<Vec<bool>> =
        campaign.axes.iter().map(|a| vec![false; a.values.len() + a.extra.len()]).collect();
    for run in &plan.runs {
        let new_value = run.values.iter().enumerate().any(|(a, &k)| !seen_value[a][k]);
        if new_value || !seen_variant[run.variant] {
            plan.scenario(run)?;
            seen_variant[run.variant] = true;
            for (a, &k) in run.values.iter().enumerate() {
                seen_value[a][k] = true;
            }
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
    /// The runs, scenarios x axes x seeds.
    pub fn plan(&self, overrides: Overrides) -> Plan {
        let seeds = overrides.seeds.unwrap_or(self.seeds);
        let sizes: Vec<usize> =
            self.axes.iter().map(|a| a.values.len() + if overrides.extra { a.extra.len() } else { 0 }).collect();
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
        Plan { campaign: self.clone(), overrides, duration: overrides.duration.unwrap_or(self.duration), seeds, runs }
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
        Ok(t)
    }

    /// The run's validated scenario; errors name the campaign and the run.
    pub fn scenario(&self, run: &RunSpec) -> Result<Scenario, CampaignError> {
        let text = toml::to_string(&self.scenario_table(run)?)
            .map_err(|e| invalid(&self.campaign.file, "base", e.to_string()))?;
        let shown = format!("{} (run {})", self.campaign.file, self.run_id(run));
        let mut s = scenario::parse(&text, &shown)?;
        s.duration = self.duration;
        Ok(s)
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
        let p = c.plan(Overrides::default());
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
        let with_extra = c.plan(Overrides { extra: true, seeds: Some(1), duration: None });
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
        let p = c.plan(Overrides { duration: Some(Duration::from_secs(1)), ..Default::default() });
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
    }
}
