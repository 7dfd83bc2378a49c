//! Pins the JSON summaries of a few scenarios byte for byte, so that work
//! on the simulator's speed either leaves every figure identical or changes
//! it on purpose: the shipped scenarios and a lossy multi-flow one
//! (`tests/golden/lossy-multiflow.toml`), each against the summary stored
//! in `tests/golden/NAME.json`.
//!
//! After an intended change of behaviour, regenerate the files with
//! `BRAID_BLESS=1 cargo test -p braid-lab --test golden` and say in the
//! commit message why the figures moved.

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
            let line = json.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
            println!(
                "{}: first difference at line {}:\n  now    {}\n  golden {}",
                scenario.display(),
                line + 1,
                json.lines().nth(line).unwrap_or(""),
                want.lines().nth(line).unwrap_or("")
            );
            differ.push(scenario.display().to_string());
        }
    }
    assert!(differ.is_empty(), "summaries differ from the golden files: {differ:?}");
}
