//! Pins the JSON summaries of a few scenarios byte for byte, so that work
//! on the simulator's speed either leaves every figure identical or changes
//! it on purpose: the shipped scenarios, a lossy multi-flow one
//! (`tests/golden/lossy-multiflow.toml`) and one of senders held up by
//! their buffers (`tests/golden/opportunistic.toml`: opportunistic
//! retransmission and penalisation), one with RACK-TLP on
//! (`tests/golden/rack-tlp.toml`), one behind a token-bucket policer
//! (`tests/golden/policed.toml`), each against the summary stored in
//! `tests/golden/NAME.json`.
//!
//! After an intended change of behaviour, regenerate the files with
//! `BRAID_BLESS=1 cargo test -p braid-lab --test golden` and say in the
//! commit message why the figures moved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use braid_lab::{load, run, RunOptions};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Scenario files and the golden file of each.
fn cases() -> Vec<(PathBuf, PathBuf)> {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = [shipped, dir()]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files.into_iter().map(|f| (f.clone(), dir().join(f.file_stem().unwrap()).with_extension("json"))).collect()
}

#[test]
fn summaries_match_the_golden_files() {
    if std::env::var_os("BRAID_WIRE").is_some() {
        // Wire-format datagrams differ in size from the modelled TCP
        // segments the golden files were made with.
        eprintln!("BRAID_WIRE is set: golden summaries not compared");
        return;
    }
    let bless = std::env::var_os("BRAID_BLESS").is_some();
    let mut differ = Vec::new();
    for (scenario, golden) in cases() {
        let s = load(&scenario).unwrap_or_else(|e| panic!("{e}"));
        let (_, summary) = run(&s, RunOptions::default(), &mut |_| {}).expect("builds");
        let json = serde_json::to_string_pretty(&summary).unwrap() + "\n";
        if bless {
            std::fs::write(&golden, &json).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        if json != want {
            let (mut now, mut golden) = (Vec::new(), Vec::new());
            flatten("", &serde_json::from_str(&json).unwrap(), &mut now);
            flatten("", &serde_json::from_str(&want).unwrap(), &mut golden);
            let (now, golden): (BTreeMap<_, _>, BTreeMap<_, _>) =
                (now.into_iter().collect(), golden.into_iter().collect());
            let absent = String::from("(absent)");
            let changed: Vec<String> = now
                .keys()
                .chain(golden.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|k| (k, now.get(k).unwrap_or(&absent), golden.get(k).unwrap_or(&absent)))
                .filter(|(_, a, b)| a != b)
                .map(|(k, a, b)| format!("  {k}: {b} -> {a}"))
                .collect();
            println!("{}: {} fields differ\n{}", scenario.display(), changed.len(), changed.join("\n"));
            differ.push(scenario.display().to_string());
        }
    }
    assert!(differ.is_empty(), "summaries differ from the golden files: {differ:?}");
}

/// Every leaf of `v` as (path, value), in document order.
fn flatten(path: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&format!("{path}.{k}"), v, out)),
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{path}[{i}]"), v, out)),
        leaf => out.push((path.to_string(), leaf.to_string())),
    }
}
