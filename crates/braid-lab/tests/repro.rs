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

/// Over five seeds (the reduced version's own count): a flip is rare
/// (COUPLED's runs of 60 s flip 0 to 3 times, LIA's and OLIA's none), so
/// one seed decides "more often" by luck. Seeds 1 to 5 give COUPLED 1, 0,
/// 3, 1 and 1 flips.
#[test]
fn flappiness() {
    reduced("flappiness");
}

/// Over 20 seeds (the reduced version's own count): one seed cannot tell
/// OLIA's short flows from LIA's within 5%, nor can five. Seeds 1 to 5
/// give OLIA/LIA completion-time ratios from 0.82 to 1.11; the ratio of
/// the means over seeds 1-5 moved between 0.965 and 1.067 with changes to
/// loss recovery that touch neither controller (the undo of spurious
/// timeouts, the retransmission queue after one), and over seeds 1-10 and
/// 1-20 it is 1.032 and 0.975 at 88c7c7f: the 5-seed mean's own spread is
/// about the 5% the check resolves.
#[test]
fn short_flows() {
    reduced("short-flows");
}

#[test]
fn buffer_size() {
    reduced("buffer-size");
}

#[test]
fn server_balance() {
    reduced("server-balance");
}

#[test]
fn congestion_shift() {
    reduced("congestion-shift");
}
