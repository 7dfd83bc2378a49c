//! Scenario files are untrusted input: whatever text `braid run` is given,
//! validation answers with a typed error or a scenario, and a scenario it
//! accepts builds and runs (its first 2 ms, so one input stays quick)
//! without a panic.
#![no_main]

use braid_lab::{parse, run, RunOptions};
use braid_proto::Duration;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(scenario) = parse(text, "fuzz.toml") else { return };
    // Large but valid fabrics and flow tables only cost time here.
    if scenario.flows.len() > 256 || scenario.topology.links.len() > 4096 {
        return;
    }
    let opts = RunOptions { seed: None, duration: Some(Duration::from_millis(2)) };
    let _ = run(&scenario, opts, &mut |_| {});
});
