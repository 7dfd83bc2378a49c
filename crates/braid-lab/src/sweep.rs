//! Running a campaign: every run of its plan (or of one shard of it) in
//! parallel, resumable, then the results folder.
//!
//! Layout of a results folder `DIR`:
//! - `sweep.json`: the plan's fingerprint and the command-line overrides;
//!   `campaign.toml`: the campaign with its base inlined. Together they
//!   rebuild the plan, so a folder can be resumed and merged on its own.
//! - `runs/SCENARIO/VALUE.../seedN/summary.json`: one per finished run,
//!   written to a temporary name and renamed, so a file that exists is
//!   complete. A resumed sweep skips every run whose file exists.
//! - `runs.csv`, `scores.json`, `report/index.html`: rebuilt from the plan
//!   and the summaries present (`crate::sweep_results`), so they depend on
//!   nothing else: shards merged into one folder give byte for byte what
//!   one sweep gives.
//!
//! Memory stays bounded however many runs: the plan holds indices only,
//! each worker holds one simulation, and summaries go to disk as they finish.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::campaign::{self, Campaign, CampaignError, Overrides, Plan, RunSpec};
use crate::run::{run, RunOptions};

/// Version tag of `sweep.json`.
pub const SWEEP_SCHEMA: &str = "braid.sweep.v1";

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{dir}: holds results of a different plan (fingerprint {found}, this one is {expected}); use another --out, or the same campaign file, --seeds, --duration and --extra")]
    OtherPlan { dir: String, found: String, expected: String },
    #[error("shard {0}: expected K/N with 1 <= K <= N, e.g. 2/8")]
    Shard(String),
    #[error("{failed} of the runs failed; first: {first}")]
    Runs { failed: usize, first: String },
}

fn io(path: &Path, e: impl std::fmt::Display) -> SweepError {
    SweepError::Io { path: path.display().to_string(), message: e.to_string() }
}

/// One of N disjoint slices of a plan: runs whose index is K-1 modulo N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl std::str::FromStr for Shard {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<Self, SweepError> {
        let bad = || SweepError::Shard(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl Shard {
    pub fn contains(&self, run: &RunSpec) -> bool {
        run.index % self.n == self.k - 1
    }
}

#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Worker threads (default: one per core).
    pub jobs: Option<usize>,
    pub shard: Option<Shard>,
    pub overrides: Overrides,
}

/// Progress reports, from any worker thread.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// `to_run` of the slice's `in_slice` runs are left (the rest finished before).
    Start { in_slice: usize, to_run: usize },
    /// A run finished; `done` of `to_run` so far.
    Finished { id: String, done: usize, to_run: usize },
    /// A run's scenario is valid but probably not what was meant
    /// ([`crate::Scenario::warnings`]): sent for the first run that gives
    /// it, naming that run, and once more before `Aggregating` with how
    /// many runs gave it, when more than one did.
    Warning(String),
    /// Writing `runs.csv`, `scores.json` and the report.
    Aggregating,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOutcome {
    pub planned: usize,
    pub in_slice: usize,
    /// Runs already finished in the folder, not redone.
    pub skipped: usize,
    pub ran: usize,
}

/// What `sweep.json` holds.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Manifest {
    schema: String,
    campaign: String,
    fingerprint: String,
    runs: usize,
    seeds: Option<u64>,
    duration_ns: Option<u64>,
    extra: bool,
}

fn manifest(plan: &Plan) -> Manifest {
    let o = plan.overrides;
    Manifest {
        schema: SWEEP_SCHEMA.into(),
        campaign: plan.campaign.name.clone(),
        fingerprint: plan.fingerprint(),
        runs: plan.runs.len(),
        seeds: o.seeds,
        duration_ns: o.duration.map(|d| d.as_nanos()),
        extra: o.extra,
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader (or a resumed sweep) never sees half a file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Where a run's summary lives in results folder `dir`.
pub fn summary_path(dir: &Path, plan: &Plan, run: &RunSpec) -> PathBuf {
    dir.join("runs").join(plan.run_id(run)).join("summary.json")
}

/// A results folder to write: refused when it is a file.
fn folder(dir: &Path) -> Result<(), SweepError> {
    match dir.exists() && !dir.is_dir() {
        true => Err(io(dir, "is a file, not a folder; name a folder for the results")),
        false => Ok(()),
    }
}

/// Claims `dir` for `plan`, or checks that it already belongs to it.
fn claim(dir: &Path, plan: &Plan) -> Result<(), SweepError> {
    folder(dir)?;
    let mine = manifest(plan);
    let path = dir.join("sweep.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let found: Manifest = serde_json::from_str(&text).map_err(|e| io(&path, e))?;
            if found.fingerprint != mine.fingerprint {
                return Err(SweepError::OtherPlan {
                    dir: dir.display().to_string(),
                    found: found.fingerprint,
                    expected: mine.fingerprint,
                });
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            write_atomic(&dir.join("campaign.toml"), plan.campaign.text.as_bytes())?;
            let json = serde_json::to_string_pretty(&mine).map_err(|e| io(&path, e))?;
            write_atomic(&path, (json + "\n").as_bytes())
        }
        Err(e) => Err(io(&path, e)),
    }
}

/// Rebuilds the plan a results folder was made for.
pub fn plan_of(dir: &Path) -> Result<Plan, SweepError> {
    let path = dir.join("sweep.json");
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if !dir.exists() => io(dir, "no such folder"),
        std::io::ErrorKind::NotFound => io(dir, "not a results folder of braid sweep (it has no sweep.json)"),
        _ => io(&path, e),
    })?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| io(&path, e))?;
    let campaign = campaign::load(&dir.join("campaign.toml"))?;
    let overrides =
        Overrides { seeds: m.seeds, duration: m.duration_ns.map(braid_proto::Duration::from_nanos), extra: m.extra };
    let plan = campaign.plan(overrides)?;
    if plan.fingerprint() != m.fingerprint {
        return Err(io(&path, "does not match the campaign.toml beside it"));
    }
    Ok(plan)
}

/// Runs `campaign` into `dir` and writes its results.
pub fn sweep(
    campaign: &Campaign,
    dir: &Path,
    opts: &SweepOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<SweepOutcome, SweepError> {
    let plan = campaign.plan(opts.overrides)?;
    claim(dir, &plan)?;
    let slice: Vec<&RunSpec> = plan.runs.iter().filter(|r| opts.shard.is_none_or(|s| s.contains(r))).collect();
    let (finished, pending): (Vec<&RunSpec>, Vec<&RunSpec>) =
        slice.iter().copied().partition(|r| summary_path(dir, &plan, r).exists());
    let to_run = pending.len();
    progress(Progress::Start { in_slice: slice.len(), to_run });
    let done = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    // Each warning without the run it names, and how many runs gave it.
    let warned: Mutex<BTreeMap<String, usize>> = Mutex::default();
    let note = |warnings: Vec<(String, String)>| {
        for (full, general) in warnings {
            let mut w = warned.lock().unwrap_or_else(|p| p.into_inner());
            let n = w.entry(general).or_default();
            *n += 1;
            if *n == 1 {
                progress(Progress::Warning(full));
            }
        }
    };
    // A resumed sweep's results include the runs finished before: their
    // warnings count too (a scenario's warnings cost no run).
    for r in finished {
        note(warnings(&plan.scenario(r)?, &plan));
    }
    let work = || {
        pending.par_iter().for_each(|r| {
            let id = plan.run_id(r);
            match run_one(dir, &plan, r) {
                Ok(warnings) => note(warnings),
                Err(e) => failures.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{id}: {e}")),
            }
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(Progress::Finished { id, done: n, to_run });
        })
    };
    match opts.jobs {
        Some(j) => rayon::ThreadPoolBuilder::new().num_threads(j.max(1)).build().map_err(|e| io(dir, e))?.install(work),
        None => work(),
    }
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    for (general, n) in warned.into_inner().unwrap_or_else(|p| p.into_inner()) {
        if n > 1 {
            progress(Progress::Warning(format!("{}{general} ({n} runs gave this warning)", campaign.file)));
        }
    }
    progress(Progress::Aggregating);
    crate::sweep_results::write(dir, &plan)?;
    if let Some(first) = failures.first() {
        return Err(SweepError::Runs { failed: failures.len(), first: first.clone() });
    }
    Ok(SweepOutcome { planned: plan.runs.len(), in_slice: slice.len(), skipped: slice.len() - to_run, ran: to_run })
}

/// Runs `r` and writes its summary; returns its scenario's [`warnings`].
fn run_one(dir: &Path, plan: &Plan, r: &RunSpec) -> Result<Vec<(String, String)>, SweepError> {
    let scenario = plan.scenario(r)?;
    let warnings = warnings(&scenario, plan);
    let opts = RunOptions { seed: Some(r.seed), duration: Some(plan.duration) };
    let (_, summary) = run(&scenario, opts, &mut |_| {}).map_err(|e| io(dir, e))?;
    let path = summary_path(dir, plan, r);
    let json = serde_json::to_string_pretty(&summary).map_err(|e| io(&path, e))?;
    write_atomic(&path, (json + "\n").as_bytes())?;
    Ok(warnings)
}

/// A run's scenario's warnings, each as written (naming the run) and
/// without the run.
fn warnings(scenario: &crate::Scenario, plan: &Plan) -> Vec<(String, String)> {
    let warnings = scenario.warnings(plan.duration).into_iter();
    warnings.map(|w| (w.clone(), w.strip_prefix(&scenario.file).unwrap_or(&w).to_string())).collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeOutcome {
    pub planned: usize,
    /// Runs with a summary in the merged folder.
    pub present: usize,
    /// Summaries copied in by this merge.
    pub copied: usize,
    /// Why the campaign is not scored ([`Campaign::unscored`]).
    pub unscored: Option<String>,
}

/// Combines the results folders of shards (or of partial sweeps) of one
/// plan into `out`, and writes the results there.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeOutcome, SweepError> {
    let Some(first) = dirs.first() else {
        return Err(io(out, "nothing to merge: name at least one results folder"));
    };
    folder(out)?;
    let plan = plan_of(first)?;
    for d in &dirs[1..] {
        let other = plan_of(d)?;
        if other.fingerprint() != plan.fingerprint() {
            return Err(SweepError::OtherPlan {
                dir: d.display().to_string(),
                found: other.fingerprint(),
                expected: plan.fingerprint(),
            });
        }
    }
    claim(out, &plan)?;
    let mut copied = 0;
    for r in &plan.runs {
        let target = summary_path(out, &plan, r);
        for d in dirs {
            let source = summary_path(d, &plan, r);
            let Ok(bytes) = std::fs::read(&source) else { continue };
            // A broken one is named where it is, not after it was copied.
            crate::sweep_results::parse_summary(&source, &bytes)?;
            match std::fs::read(&target) {
                Ok(have) if have == bytes => {}
                Ok(_) => {
                    return Err(io(
                        &source,
                        format!("differs from {}: the same run gave two results", target.display()),
                    ))
                }
                Err(_) => {
                    write_atomic(&target, &bytes)?;
                    copied += 1;
                }
            }
        }
    }
    crate::sweep_results::write(out, &plan)?;
    let present = plan.runs.iter().filter(|r| summary_path(out, &plan, r).exists()).count();
    Ok(MergeOutcome { planned: plan.runs.len(), present, copied, unscored: plan.campaign.unscored() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_a_plan_into_disjoint_slices() {
        let s: Shard = "2/3".parse().unwrap();
        let runs: Vec<RunSpec> = (0..7).map(|index| RunSpec { index, variant: 0, values: vec![], seed: 1 }).collect();
        let mine: Vec<usize> = runs.iter().filter(|r| s.contains(r)).map(|r| r.index).collect();
        assert_eq!(mine, [1, 4]);
        for bad in ["0/3", "4/3", "x/2", "2", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
