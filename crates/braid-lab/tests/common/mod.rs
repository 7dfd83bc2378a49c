//! Helpers shared by the lab's scenario tests.
#![allow(dead_code)]

use braid_lab::{parse, run, RunOptions, Summary};

/// Runs scenario `toml` with its own seed.
pub fn simulate(toml: &str) -> Summary {
    let scenario = parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run(&scenario, RunOptions::default(), &mut |_| {}).expect("builds").1
}

/// Runs scenario `toml` with `seed`.
pub fn simulate_seed(toml: &str, seed: u64) -> Summary {
    let scenario = parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run(&scenario, RunOptions { seed: Some(seed), duration: None }, &mut |_| {}).expect("builds").1
}

/// A hybrid-access scenario lasting `duration`: one access link per entry
/// of `links` and one flow, each given as the keys of a TOML inline table
/// (`rate = "10Mbit", rtt = "5ms"`).
pub fn hybrid(duration: &str, links: &[&str], flow: &str) -> String {
    let links: Vec<String> = links.iter().map(|l| format!("{{ {l} }}")).collect();
    format!(
        "duration = \"{duration}\"\nflow = [{{ {flow} }}]\n[topology]\nkind = \"hybrid-access\"\nlink = [{}]\n",
        links.join(", ")
    )
}

/// The message of a caught panic.
pub fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// TCP's loss-limited rate (Mathis et al.), 1.22 MSS / (RTT sqrt p), in
/// bytes a second for 1448-byte segments.
pub fn mathis_bytes_per_s(rtt_s: f64, loss: f64) -> f64 {
    1.22 * 1448.0 / (rtt_s * loss.sqrt())
}
