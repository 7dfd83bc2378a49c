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
