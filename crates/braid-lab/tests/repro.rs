//! The reduced version of every reproduction (`braid repro NAME
//! --reduced`: fewer points, shorter runs) must bear out its paper's
//! qualitative conclusions: who beats whom. The full versions, with the
//! published figures side by side, are `braid repro NAME`
//! (docs/reproductions.md).

use braid_lab::repro::{find, Options};

fn reduced(name: &str) {
    let r = find(name).unwrap_or_else(|| panic!("no reproduction {name}"));
    let out = r.run(&Options { seeds: None, reduced: true }).unwrap_or_else(|e| panic!("{name}: {e}"));
    println!("{}", out.table());
    assert!(!out.checks.is_empty(), "{name} checks nothing");
    let failed: Vec<&str> = out.checks.iter().filter(|c| !c.holds).map(|c| c.claim.as_str()).collect();
    assert!(failed.is_empty(), "{name}: conclusions that do not hold: {failed:?}");
    assert!(
        !out.figures.is_empty() && out.figures.iter().all(|(_, svg)| svg.starts_with("<svg")),
        "{name} draws its figure"
    );
}

#[test]
fn shared_bottleneck() {
    reduced("shared-bottleneck");
}

#[test]
fn torus() {
    reduced("torus");
}

#[test]
fn bursty_cbr() {
    reduced("bursty-cbr");
}

#[test]
fn fattree() {
    reduced("fattree");
}

#[test]
fn fattree_permutation() {
    reduced("fattree-permutation");
}

#[test]
fn bcube() {
    reduced("bcube");
}

#[test]
fn wifi_3g() {
    reduced("wifi-3g");
}

#[test]
fn mobility() {
    reduced("mobility");
}

#[test]
fn khalili_a() {
    reduced("khalili-a");
}

#[test]
fn resource_pooling() {
    reduced("resource-pooling");
}

#[test]
fn flappiness() {
    reduced("flappiness");
}

#[test]
fn short_flows() {
    reduced("short-flows");
}

#[test]
fn buffer_size() {
    reduced("buffer-size");
}
