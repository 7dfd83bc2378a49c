//! `braid sweep` end to end on a reduced campaign (2 families, 2
//! schedulers, 2 controllers, 2 seeds, short runs): a sweep killed midway
//! resumes without redoing finished runs and ends as an uninterrupted one
//! does; shards merged give the single sweep's folder byte for byte; the
//! report renders in headless Chromium with every figure and no console
//! error (skipped without Chromium unless BRAID_REQUIRE_CHROMIUM=1, as CI
//! sets it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

const CAMPAIGN: &str = r#"
name = "reduced"
description = "CI's reduced heterogeneity campaign"
duration = "4s"
seeds = 2
[base]
topology = { kind = "hybrid-access", link = [{ name = "SF1", rate = "50Mbit", rtt = "10ms", queue = "100p" }, { name = "SF2", rate = "50Mbit", rtt = "10ms", queue = "100p" }] }
flow = [{ name = "mptcp", send_buffer = "kernel:16MiB", recv_buffer = "auto:16MiB" }]
[[scenario]]
family = "homogeneous"
name = "equal"
[[scenario]]
family = "intense_heterogeneity"
name = "slow-lossy-second"
topology.link = [{}, { rate = "25Mbit", rtt = "40ms", loss = "0.5%" }]
[[axis]]
name = "scheduler"
key = "flow.0.scheduler"
values = ["minrtt", "rr"]
[[axis]]
name = "cc"
key = "flow.0.cc"
values = ["olia", "bbr"]
[scores]
goodput_unit = "binary"
theoretical_max = "100Mbit"
[report]
panels = ["slow-lossy-second"]
top_controllers = 2
conclusions = [
  { claim = "BBR is a top controller", check = "top_controllers", subjects = ["bbr"] },
  { claim = "RR is the worst scheduler", check = "worst_scheduler", subjects = ["rr"] },
]
"#;

const RUNS: usize = 2 * 2 * 2 * 2;

fn braid() -> Command {
    Command::new(env!("CARGO_BIN_EXE_braid"))
}

/// Runs a sweep; returns what it wrote to stderr, then to stdout.
fn sweep(campaign: &Path, out: &Path, extra: &[&str]) -> String {
    let o = braid().arg("sweep").arg(campaign).arg("--out").arg(out).args(extra).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "braid sweep failed: {err}");
    err + &String::from_utf8_lossy(&o.stdout)
}

/// Every file below `dir`, by relative path, with its bytes (a folder not
/// made yet is empty; a file renamed while a sweep runs is skipped).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for p in entries.flatten().map(|e| e.path()) {
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.insert(p.strip_prefix(root).unwrap().display().to_string(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn summaries(dir: &Path) -> BTreeMap<String, SystemTime> {
    tree(dir)
        .into_keys()
        .filter(|k| k.ends_with("summary.json"))
        .filter_map(|k| {
            let t = std::fs::metadata(dir.join(&k)).ok()?.modified().ok()?;
            Some((k, t))
        })
        .collect()
}

fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>(), "same files");
    for (k, v) in &ta {
        assert!(v == &tb[k], "{k} differs between {} and {}", a.display(), b.display());
    }
}

#[test]
fn reduced_campaign_end_to_end() {
    let tmp = tempfile::Builder::new().prefix("braid-sweep-test-").tempdir().unwrap();
    let dir = tmp.path();
    let campaign = dir.join("reduced.toml");
    std::fs::write(&campaign, CAMPAIGN).unwrap();

    // One uninterrupted sweep: the reference.
    let single = dir.join("single");
    sweep(&campaign, &single, &["--jobs", "2"]);
    let t = tree(&single);
    assert_eq!(t.keys().filter(|k| k.ends_with("summary.json")).count(), RUNS);
    let csv = String::from_utf8(t["runs.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), RUNS + 1, "header and one row per run");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "run",
        "family",
        "scenario",
        "scheduler",
        "cc",
        "seed",
        "mptcp.goodput_mbps",
        "mptcp.SF2.srtt_mean_ms",
        "link.SF1.utilization",
    ] {
        assert!(header.contains(&col), "runs.csv lacks {col}: {header:?}");
    }
    let scores: serde_json::Value = serde_json::from_slice(&t["scores.json"]).unwrap();
    assert_eq!(scores["complete"], true);
    for cc in ["olia", "bbr"] {
        assert!(scores["cca_score"][cc].as_f64().is_some_and(|s| s > 0.0 && s < 1.0), "{scores}");
        assert!(scores["ps_score"]["homogeneous"]["minrtt"][cc].as_f64().is_some());
    }

    // Killed midway, then resumed.
    let resumed = dir.join("resumed");
    let mut child = braid()
        .arg("sweep")
        .arg(&campaign)
        .arg("--out")
        .arg(&resumed)
        .args(["--jobs", "1", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while summaries(&resumed.join("runs")).len() < 3 {
        assert!(start.elapsed() < Duration::from_secs(60), "no run finished in a minute");
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = summaries(&resumed.join("runs"));
    assert!(before.len() >= 3 && before.len() < RUNS, "killed midway: {} of {RUNS} runs done", before.len());
    std::thread::sleep(Duration::from_millis(20));
    let log = sweep(&campaign, &resumed, &["--jobs", "2"]);
    assert!(log.contains(&format!("({} already finished, skipped)", before.len())), "{log}");
    assert!(!log.contains("no scores"), "{log}");
    let after = summaries(&resumed.join("runs"));
    for (k, t) in &before {
        assert_eq!(after[k], *t, "{k} was redone");
    }
    assert_same_tree(&single, &resumed);

    // Three shards, merged.
    let shards: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("shard{k}"))).collect();
    for (k, s) in shards.iter().enumerate() {
        sweep(&campaign, s, &["--shard", &format!("{}/3", k + 1), "--quiet"]);
        assert!(summaries(s).len() < RUNS);
    }
    let merged = dir.join("merged");
    let o = braid().args(["sweep", "merge"]).args(&shards).arg("--out").arg(&merged).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("no scores"));
    assert_same_tree(&single, &merged);

    // A results folder refuses another plan.
    let o = braid().arg("sweep").arg(&campaign).arg("--out").arg(&single).args(["--seeds", "3"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("different plan"));

    check_report_in_chromium(&single.join("report").join("index.html"), dir);
}

/// Loads the page in headless Chromium: it must render, every figure's
/// SVG must have a box (the page's script counts them into
/// `data-figures-loaded`), and nothing may reach the console.
fn check_report_in_chromium(page: &Path, dir: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "self-contained");
    let expected = html.matches("<figure data-figure=").count();
    assert!(expected >= 10, "figures: {expected}");
    let Some(chromium) =
        ["chromium", "chromium-browser"].into_iter().find(|c| Command::new(c).arg("--version").output().is_ok())
    else {
        assert!(
            std::env::var("BRAID_REQUIRE_CHROMIUM").is_err(),
            "BRAID_REQUIRE_CHROMIUM is set but no chromium is installed"
        );
        eprintln!("chromium not installed: report check skipped (apt-get install chromium)");
        return;
    };
    let profile = dir.join("chromium-profile");
    let o = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    let body = dom.split("<body").nth(1).and_then(|b| b.split('>').next()).unwrap_or_default();
    assert!(body.contains(&format!("data-figures-loaded=\"{expected}\"")), "not every figure loaded: <body{body}>");
    assert!(!body.contains("data-errors"), "script errors: <body{body}>");
    let log = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}

/// A scenario's warnings reach the sweep's output: once, naming the first
/// run that gives one, then with how many runs did.
#[test]
fn warnings_name_a_run_and_count_the_rest() {
    let tmp = tempfile::Builder::new().prefix("braid-sweep-test-").tempdir().unwrap();
    let campaign = tmp.path().join("late.toml");
    let flow = |start: &str| format!("flow = [{{ start = \"{start}\" }}]");
    let text = format!(
        "name = \"late\"\nduration = \"1s\"\nseeds = 3\n[base]\n\
         topology = {{ kind = \"hybrid-access\", link = [{{ name = \"P\", rate = \"10Mbit\" }}] }}\n{}\n\
         [[scenario]]\nfamily = \"f\"\nname = \"late\"\n[[scenario]]\nfamily = \"f\"\nname = \"early\"\n{}\n",
        flow("2s"),
        flow("0s")
    );
    std::fs::write(&campaign, text).unwrap();
    let err = sweep(&campaign, &tmp.path().join("out"), &["--jobs", "2"]);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    println!("{warnings:#?}");
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(warnings[0].contains("(run late/seed") && warnings[0].contains("`flow[0].start`"), "{err}");
    // Without a scheduler and a controller axis there are no scores, and the sweep says so.
    assert!(err.contains("no scores (scores.json holds null)"), "{err}");
    assert!(warnings[1].contains("late.toml: key `flow[0].start`") && warnings[1].contains("(3 runs gave"), "{err}");
    // Resumed with nothing left to run, its results still hold those runs.
    let again = sweep(&campaign, &tmp.path().join("out"), &["--jobs", "2"]);
    let resumed: Vec<&str> = again.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(resumed.len(), 2, "{again}");
    assert!(resumed[0].contains("(run late/seed1)") && resumed[0].contains("`flow[0].start`"), "{again}");
    assert_eq!(resumed[1], warnings[1], "{again}");
    // A merge of the unscored campaign's folder says so too.
    let merged = tmp.path().join("merged");
    let o = braid().args(["sweep", "merge"]).arg(tmp.path().join("out")).arg("--out").arg(&merged).output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("no scores (scores.json holds null)"));
}

/// A results folder that is a file, for a sweep and for a merge: refused
/// by name before anything is written (the error had named `FILE/sweep.json`).
#[test]
fn a_file_is_not_a_results_folder() {
    let tmp = tempfile::Builder::new().prefix("braid-sweep-test-").tempdir().unwrap();
    let campaign = tmp.path().join("c.toml");
    std::fs::write(&campaign, CAMPAIGN).unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for args in
        [vec!["sweep".as_ref(), campaign.as_os_str()], vec!["sweep".as_ref(), "merge".as_ref(), tmp.path().as_os_str()]]
    {
        let o = braid().args(args).arg("--out").arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("a-file: is a file, not a folder"), "{err}");
    }
}

/// A run's summary that is not one (a disk filled mid-write by another
/// tool, an edit) is named with what to do: delete it and resume.
#[test]
fn a_broken_summary_says_how_to_redo_its_run() {
    let tmp = tempfile::Builder::new().prefix("braid-sweep-test-").tempdir().unwrap();
    let campaign = tmp.path().join("one.toml");
    let base = "topology = { kind = \"hybrid-access\", link = [{ rate = \"10Mbit\" }] }\nflow = [{}]";
    std::fs::write(&campaign, format!("name = \"one\"\nduration = \"0.1s\"\n[base]\n{base}\n")).unwrap();
    let out = tmp.path().join("out");
    sweep(&campaign, &out, &[]);
    let summary = out.join("runs/base/seed1/summary.json");
    let good = std::fs::read(&summary).unwrap();
    // Cut short, or JSON that is no run's summary (it counted as a finished
    // run with no figures).
    for broken in ["{\"x\":", "{}"] {
        std::fs::write(&summary, broken).unwrap();
        let o = braid().arg("sweep").arg(&campaign).arg("--out").arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("not a run summary") && err.contains("delete it"),
            "{broken}: {err}"
        );
    }
    // A folder to merge that is not there is named as such.
    let missing = tmp.path().join("missing");
    let o = braid().args(["sweep", "merge"]).arg(&missing).arg("--out").arg(tmp.path().join("m")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("missing: no such folder"), "{err}");
    // Merged, the broken summary is named in the folder that holds it.
    let merged = tmp.path().join("merged");
    let o = braid().args(["sweep", "merge"]).arg(&out).arg("--out").arg(&merged).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains(&summary.display().to_string()), "{err}");
    std::fs::write(&summary, good).unwrap();
    sweep(&campaign, &out, &[]);
}
