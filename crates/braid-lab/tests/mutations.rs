//! Randomised robustness test for the scenario and campaign files, which
//! are untrusted input: every shipped scenario (and the golden and
//! chaos-found ones), and the shipped campaign, mutated from a seed, with
//! values swapped for extremes (zero, negative, huge, NaN, empty strings,
//! wrong types, nonsense units), keys from the scenario reference inserted
//! into random tables, and lines deleted.
//!
//! Parsing and building must answer with a scenario or a typed error, and
//! what builds must run a short stretch of simulated time, all without a
//! panic. A panicking case is printed as a ready-to-run file.
//!
//! `cargo test -p braid-lab --test mutations` runs a few hundred cases per
//! file set; `BRAID_MUTATIONS=N` runs N, and `BRAID_MUTATIONS_FIRST=K`
//! starts at case K.

use std::path::{Path, PathBuf};
use std::time::Instant as WallClock;

use braid_lab::campaign::{self, Overrides};
use braid_lab::{parse, RunOptions, Runner};
use braid_proto::{Duration, Instant};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Values that have broken parsers and builders elsewhere: edges of every
/// numeric type, non-finite floats, units at their limits, wrong types.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "0.5",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "9223372036854775807",
    "4294967296",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"x\"",
    "\"0s\"",
    "\"1ns\"",
    "\"-5ms\"",
    "\"99999999h\"",
    "\"1e-300s\"",
    "\"18446744073709551615ms\"",
    "\"0bit\"",
    "\"1bit\"",
    "\"1e300Gbit\"",
    "\"5Mbit\"",
    "\"0%\"",
    "\"100%\"",
    "\"101%\"",
    "\"0p\"",
    "\"1p\"",
    "\"0bdp\"",
    "\"1e9bdp\"",
    "\"0B\"",
    "\"1MiB\"",
    "\"auto:0B\"",
    "\"kernel:1B\"",
    "\"lia\"",
    "\"mpbbr\"",
    "\"redundant\"",
    "[\"L1\"]",
    "[\"nowhere\"]",
    "{ every = 0 }",
    "{ every = 3, offset = [99] }",
];

/// Keys the scenario reference documents (docs/scenarios.md), so the test
/// follows the format as it grows.
fn documented_keys() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/scenarios.md")).expect("docs/scenarios.md");
    let mut keys: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_string)
        .collect();
    keys.sort();
    keys.dedup();
    assert!(keys.len() > 30, "found only {} keys in docs/scenarios.md", keys.len());
    keys
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// One mutation of `text`: one to three edits.
fn mutate(text: &str, keys: &[String], rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..rng.gen_range(1..=3) {
        let assignments: Vec<usize> =
            (0..lines.len()).filter(|&i| lines[i].contains('=') && !lines[i].trim_start().starts_with('#')).collect();
        let value = EXTREMES.choose(rng).unwrap();
        match rng.gen_range(0..10) {
            0..=5 if !assignments.is_empty() => {
                let i = *assignments.choose(rng).unwrap();
                let key = lines[i].split('=').next().unwrap().to_string();
                lines[i] = format!("{key}= {value}");
            }
            6..=7 => {
                let headers: Vec<usize> =
                    (0..lines.len()).filter(|&i| lines[i].trim_start().starts_with('[')).collect();
                let at = headers.choose(rng).map_or(0, |&h| h + 1);
                lines.insert(at, format!("{} = {value}", keys.choose(rng).unwrap()));
            }
            _ if !assignments.is_empty() => {
                lines.remove(*assignments.choose(rng).unwrap());
            }
            _ => {}
        }
    }
    lines.join("\n")
}

fn cases() -> (u64, u64) {
    let var = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    (var("BRAID_MUTATIONS_FIRST", 0), var("BRAID_MUTATIONS", 400))
}

/// Runs `case` with its text printed if it panics.
fn guarded(what: &str, text: &str, case: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case)) {
        eprintln!("---- {what} panicked; the mutated file:\n{text}\n----");
        std::panic::resume_unwind(panic);
    }
}

/// Parses, builds and runs up to 20 ms of simulated time, in 1 ms steps,
/// for at most about a second of wall time (an extreme rate or RTT can
/// make a scenario arbitrarily expensive; it only has to not panic), then
/// builds the summary. False: refused with an error.
fn parse_build_run(text: &str) -> bool {
    let Ok(scenario) = parse(text, "mutated.toml") else { return false };
    let opts = RunOptions { seed: None, duration: Some(Duration::from_millis(20)) };
    let Ok(mut runner) = Runner::new(&scenario, opts) else { return false };
    let started = WallClock::now();
    let mut t = Instant::ZERO;
    while !runner.finished() && started.elapsed().as_secs_f64() < 1.0 {
        t += Duration::from_millis(1);
        runner.advance(t, &mut None::<braid_sim::Recorder>);
    }
    runner.finish();
    true
}

#[test]
fn mutated_scenarios_never_panic() {
    let mut files = Vec::new();
    toml_files(&repo().join("scenarios"), &mut files);
    toml_files(&repo().join("crates/braid-lab/tests/golden"), &mut files);
    toml_files(&repo().join("crates/braid-lab/tests/chaos-found"), &mut files);
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    let keys = documented_keys();
    let (first, n) = cases();
    let (mut built, mut rejected) = (0, 0);
    for case in first..first + n {
        let mut rng = ChaCha8Rng::seed_from_u64(case);
        let text = mutate(texts.choose(&mut rng).unwrap(), &keys, &mut rng);
        guarded(&format!("scenario case {case}"), &text, || {
            if parse_build_run(&text) {
                built += 1;
            } else {
                rejected += 1;
            }
        });
    }
    eprintln!("{n} mutated scenarios from case {first}: {built} built and ran, {rejected} rejected with an error");
    // The mutations must exercise both sides, or the test checks nothing.
    assert!(built > n / 20 && rejected > n / 20, "built {built}, rejected {rejected} of {n}");
}

#[test]
fn mutated_campaigns_never_panic() {
    let mut files = Vec::new();
    toml_files(&repo().join("campaigns"), &mut files);
    let keys = documented_keys();
    let (first, n) = cases();
    let (mut planned, mut rejected) = (0, 0);
    for case in first..first + n {
        let mut rng = ChaCha8Rng::seed_from_u64(case);
        let path = files.choose(&mut rng).unwrap();
        let text = mutate(&std::fs::read_to_string(path).unwrap(), &keys, &mut rng);
        guarded(&format!("campaign case {case}"), &text, || {
            match campaign::parse(&text, "mutated.toml", path.parent()) {
                Ok(c) => match c.plan(Overrides::default()) {
                    Ok(_) => planned += 1,
                    Err(_) => rejected += 1,
                },
                Err(_) => rejected += 1,
            }
        });
    }
    eprintln!("{n} mutated campaigns from case {first}: {planned} planned, {rejected} rejected with an error");
    assert!(planned > n / 20 && rejected > n / 20, "planned {planned}, rejected {rejected} of {n}");
}
