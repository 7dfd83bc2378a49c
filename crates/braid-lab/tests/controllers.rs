//! Behaviour of each congestion controller in the simulator, checked against
//! what its design predicts. Bottlenecks run RED so every packet sees the
//! same loss probability, the assumption behind those predictions (see
//! `docs/architecture.md` on drop-tail phase effects). Each test prints the
//! figures it checks.

mod common;

use braid_lab::Summary;
use common::{mathis_bytes_per_s, simulate_seed as simulate};

/// Mean over seeds 1 to `seeds` of `f(summary)`.
fn mean_over(toml: &str, seeds: u64, f: impl Fn(&Summary) -> f64) -> f64 {
    (1..=seeds).map(|seed| f(&simulate(toml, seed))).sum::<f64>() / seeds as f64
}

/// A scenario of one flow running `cc` over one link of the two-path
/// topology, `link` its keys (`rate = "100Mbit", rtt = "2ms", ...`).
fn one_path(duration: &str, link: &str, cc: &str) -> String {
    format!(
        "duration = {duration:?}\n[topology]\nkind = \"hybrid-access\"\nlink = [{{ {link} }}]\n\
         [[flow]]\ncc = {cc:?}\n"
    )
}

/// RFC 6356 goal 2 with one and with five competing TCP flows. The
/// multipath flow's expected share of the bottleneck, counted in TCP shares:
/// one for the coupled designs, sqrt(2) for SEMICOUPLED with a = 1, two for
/// uncoupled subflows (Reno, CUBIC; BBR is checked against BBR in
/// `tests/mpbbr.rs`, since BBR v1 also overruns a single
/// Reno flow), and at most one for delay-based wVegas.
///
/// The band is 12% of the expected share: the largest deviation measured
/// over these 16 cases, each the mean of seeds 1-4, is 8.4% (EWTCP
/// against five flows, which was 10% short over seeds 1-10 at an earlier
/// build, and at the band's edge with two seeds), and 12% still
/// separates one TCP share from SEMICOUPLED's sqrt(2) (17% apart against
/// one flow, 32% against five), so LIA with its coupling turned off
/// (alpha = 1, which is SEMICOUPLED) fails.
#[test]
fn do_no_harm_at_a_shared_bottleneck() {
    let expected_tcp_shares = [
        ("coupled", 1.0),
        ("lia", 1.0),
        ("olia", 1.0),
        ("balia", 1.0),
        ("ewtcp", 1.0),
        ("semicoupled", 2f64.sqrt()),
        ("reno", 2.0),
        ("cubic", 2.0),
    ];
    for competitors in [1usize, 5] {
        for (cc, shares) in expected_tcp_shares.into_iter().chain([("wvegas", 1.0)]) {
            let mut toml = format!(
                r#"
                duration = "60s"
                [topology]
                kind = "dumbbell"
                [topology.bottleneck]
                rate = "60Mbit"
                rtt = "20ms"
                queue = "1bdp"
                aqm = "red"
                [[flow]]
                name = "mp"
                cc = "{cc}"
                subflows = 2
                "#
            );
            for i in 0..competitors {
                toml += &format!("[[flow]]\nname = \"tcp{i}\"\ncc = \"reno\"\n");
            }
            let share = mean_over(&toml, 4, |s| {
                let total: f64 = s.flows.iter().map(|f| f.goodput_mbps).sum();
                s.flows[0].goodput_mbps / total
            });
            let expected = shares / (shares + competitors as f64);
            println!("{cc:<12} vs {competitors} TCP: multipath share {:.3}, expected {expected:.3}", share);
            if cc == "wvegas" {
                // Delay-based: it backs off before the loss-based TCP flows
                // do, so it takes at most its share (usually less).
                assert!(share <= 1.25 * expected, "wvegas vs {competitors}: share {share:.3} above {expected:.3}");
            } else {
                assert!(
                    (share - expected).abs() <= 0.12 * expected,
                    "{cc} vs {competitors}: share {share:.3} is not within 12% of {expected:.3}"
                );
            }
        }
    }
}

/// RFC 6356 goal 3: a multipath flow over two equal links, one shared with
/// one TCP flow and the other with three. COUPLED moves (almost) all its
/// traffic to the less congested link, LIA most of it while still probing
/// the other, EWTCP only what its per-path TCP weighting gives, and
/// uncoupled Reno what two independent TCP flows would get.
#[test]
fn balance_congestion_across_disjoint_paths() {
    let share_on_l1 = |cc: &str| {
        let toml = format!(
            r#"
            duration = "60s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            name = "L1"
            rate = "50Mbit"
            rtt = "20ms"
            aqm = "red"
            [[topology.link]]
            name = "L2"
            rate = "50Mbit"
            rtt = "20ms"
            aqm = "red"
            [[flow]]
            name = "mp"
            cc = "{cc}"
            [[flow]]
            name = "one"
            cc = "reno"
            paths = ["L1"]
            [[flow]]
            name = "two"
            cc = "reno"
            paths = ["L2"]
            [[flow]]
            name = "three"
            cc = "reno"
            paths = ["L2"]
            [[flow]]
            name = "four"
            cc = "reno"
            paths = ["L2"]
            "#
        );
        let share = mean_over(&toml, 2, |s| {
            let sf = &s.flows[0].subflows;
            sf[0].goodput_mbps / (sf[0].goodput_mbps + sf[1].goodput_mbps)
        });
        println!("{cc:<12} sends {:.1}% of its traffic on the less congested link", share * 100.0);
        share
    };
    let (coupled, lia, ewtcp, reno) =
        (share_on_l1("coupled"), share_on_l1("lia"), share_on_l1("ewtcp"), share_on_l1("reno"));
    let (olia, balia) = (share_on_l1("olia"), share_on_l1("balia"));
    assert!(olia > lia && olia > 0.8, "OLIA ({olia:.3}) balances better than LIA ({lia:.3})");
    assert!(balia > lia, "BALIA ({balia:.3}) balances better than LIA ({lia:.3})");
    // EWTCP subflows are TCPs of weight 1/4, i.e. half a TCP's rate at their
    // link's loss rate: L1 carries 1 + 1/2 TCP-equivalents, L2 3 + 1/2, so
    // its L1 share is (0.5/1.5) / (0.5/1.5 + 0.5/3.5) = 0.70. Uncoupled: 1/2
    // and 1/4 of the links, 0.667.
    let ewtcp_theory = (0.5 / 1.5) / (0.5 / 1.5 + 0.5 / 3.5);
    assert!(coupled > 0.85, "COUPLED keeps {:.1}% on the congested link", (1.0 - coupled) * 100.0);
    assert!(
        lia > ewtcp + 0.03 && lia < coupled,
        "LIA ({lia:.3}) sits between EWTCP ({ewtcp:.3}) and COUPLED ({coupled:.3})"
    );
    assert!(1.0 - lia > 0.05, "LIA keeps a probing share on the congested link");
    assert!((ewtcp - ewtcp_theory).abs() < 0.05, "EWTCP {ewtcp:.3} vs its theory {ewtcp_theory:.3}");
    assert!((reno - 2.0 / 3.0).abs() < 0.05, "uncoupled {reno:.3} vs 0.667");
}

/// CUBIC's purpose (RFC 9438 §1): on a long fat path with rare random loss,
/// Reno's one segment per RTT recovers far too slowly; CUBIC's window
/// returns to W_max within K seconds whatever the RTT.
#[test]
fn cubic_outpaces_reno_on_a_long_fat_path() {
    let goodput = |cc: &str| {
        let toml = one_path("60s", r#"rate = "200Mbit", rtt = "100ms", loss = "0.002%""#, cc);
        let g = (1..=3).map(|seed| simulate(&toml, seed).flows[0].goodput_mbps).sum::<f64>() / 3.0;
        println!("{cc}: {g:.1} Mbit/s on 200 Mbit/s, 100 ms, 0.002% loss (mean of 3 seeds)");
        g
    };
    let (reno, cubic) = (goodput("reno"), goodput("cubic"));
    assert!(cubic > 1.5 * reno, "CUBIC {cubic:.1} vs Reno {reno:.1}");
}

/// On a short lossy path (seed 004 Fig. 7's SF2 alone: 100 Mbit/s, 2 ms,
/// 0.5%) Linux's CUBIC gets less than its Reno (docs/validation.md,
/// difference 1): it works out its growth rate again only when the whole
/// window changes or 1/32 s has passed, about ten round trips here, so
/// after a loss the window lags the Reno-friendly estimate it would
/// otherwise follow. Without that clock Braid's CUBIC matched Reno here
/// (75.7 Mbit/s each), and set to the estimate at every ACK, as RFC 9438
/// reads, it got 4% more.
#[test]
fn cubic_stays_below_reno_on_a_short_lossy_path() {
    let goodput = |cc: &str| {
        let toml = one_path("10s", r#"rate = "100Mbit", rtt = "2ms", loss = "0.5%", queue = "100p""#, cc);
        let g = mean_over(&toml, 2, |s| s.flows[0].goodput_mbps);
        println!("{cc}: {g:.1} Mbit/s on 100 Mbit/s, 2 ms, 0.5% loss (mean of 2 seeds)");
        g
    };
    let (reno, cubic) = (goodput("reno"), goodput("cubic"));
    assert!(cubic < 0.95 * reno, "CUBIC {cubic:.1} vs Reno {reno:.1}");
}

/// BBR on a 50 Mbit/s path with a ten-BDP buffer: without loss it keeps the
/// queue (and so the RTT) far below CUBIC's at similar goodput; with 0.5%
/// random loss it holds most of the link while Reno and CUBIC collapse, the
/// effect seed 004 reports (§4, Fig. 6).
#[test]
fn bbr_keeps_queues_short_and_survives_random_loss() {
    let run_one = |cc: &str, loss: &str| {
        let link = format!(r#"rate = "50Mbit", rtt = "20ms", queue = "10bdp", loss = "{loss}""#);
        let s = simulate(&one_path("30s", &link, cc), 1);
        let f = &s.flows[0];
        let srtt = f.subflows[0].srtt_mean_ms.unwrap();
        println!("{cc:<6} loss {loss:<5}: {:.1} Mbit/s, mean SRTT {srtt:.1} ms", f.goodput_mbps);
        (f.goodput_mbps, srtt)
    };
    let (bbr, bbr_rtt) = run_one("bbr", "0%");
    let (cubic, cubic_rtt) = run_one("cubic", "0%");
    assert!(bbr > 0.9 * cubic, "BBR goodput {bbr:.1} vs CUBIC {cubic:.1}");
    assert!(bbr_rtt < 0.3 * cubic_rtt, "BBR SRTT {bbr_rtt:.1} ms vs CUBIC {cubic_rtt:.1} ms");
    let (bbr, _) = run_one("bbr", "0.5%");
    let (cubic, _) = run_one("cubic", "0.5%");
    let (reno, _) = run_one("reno", "0.5%");
    assert!(bbr > 0.8 * 48.2, "BBR keeps most of the link under random loss: {bbr:.1}");
    assert!(bbr > 3.0 * cubic.max(reno), "BBR {bbr:.1} vs CUBIC {cubic:.1}, Reno {reno:.1}");
}

/// RFC 6356 goal 1 on seed 000's Wi-Fi + 3G case: a fast lossy path (20
/// Mbit/s, 10 ms, 1% loss) and a slow clean one with a deep buffer (4
/// Mbit/s, 150 ms). LIA's equilibrium gives exactly the best single-path
/// TCP's rate in the fluid model (x_wifi + x_3g = sqrt(2/p) / rtt_wifi); the
/// packet-level run lands within a few percent of it (measured 94.5%), so
/// the check is 90% to 110% (BALIA behaves alike, 95.8%). OLIA's alpha
/// gives the Wi-Fi path extra window and exceeds the best path by a third
/// (134%): the check is above 120%.
/// COUPLED shows the paper's RTT-mismatch failure: it moves nearly all
/// traffic to the low-loss 3G path and falls far below Wi-Fi alone.
#[test]
fn improve_throughput_over_wifi_and_3g() {
    let goodput = |cc: &str, paths: &str| {
        let toml = format!(
            r#"
            duration = "60s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            name = "wifi"
            rate = "20Mbit"
            rtt = "10ms"
            loss = "1%"
            [[topology.link]]
            name = "3g"
            rate = "4Mbit"
            rtt = "150ms"
            queue = "5bdp"
            [[flow]]
            cc = "{cc}"
            paths = {paths}
            "#
        );
        let g = (1..=3).map(|seed| simulate(&toml, seed).flows[0].goodput_mbps).sum::<f64>() / 3.0;
        println!("{cc:<8} over {paths:<16}: {g:.2} Mbit/s (mean of 3 seeds)");
        g
    };
    let best = goodput("reno", r#"["wifi"]"#).max(goodput("reno", r#"["3g"]"#));
    let lia = goodput("lia", r#"["wifi", "3g"]"#);
    let coupled = goodput("coupled", r#"["wifi", "3g"]"#);
    let (olia, balia) = (goodput("olia", r#"["wifi", "3g"]"#), goodput("balia", r#"["wifi", "3g"]"#));
    for (cc, g) in [("lia", lia), ("olia", olia), ("balia", balia)] {
        println!("{cc} reaches {:.1}% of the best single path", 100.0 * g / best);
    }
    for (cc, g) in [("lia", lia), ("balia", balia)] {
        assert!((0.9 * best..=1.1 * best).contains(&g), "{cc} {g:.2} vs best single path {best:.2}");
    }
    assert!(olia > 1.2 * best, "OLIA {olia:.2} vs best single path {best:.2}");
    assert!(coupled < 0.6 * best, "COUPLED {coupled:.2} should be trapped on 3G");
}

/// wVegas alone on a deep buffer: the delay signal keeps the queue (and so
/// the RTT) near the base RTT with no losses at all, and the window stays
/// well below what a loss-based controller would push. Seed 004 (§4)
/// reports the same trade: wVegas "capping aggressively the congestion
/// window", with low aggregate goodput.
#[test]
fn wvegas_keeps_queues_near_empty() {
    let toml = |cc: &str| {
        format!(
            r#"
            duration = "30s"
            [topology]
            kind = "hybrid-access"
            [[topology.link]]
            rate = "50Mbit"
            rtt = "20ms"
            queue = "10bdp"
            [[flow]]
            cc = "{cc}"
            "#
        )
    };
    let (wv, lia) = (simulate(&toml("wvegas"), 1), simulate(&toml("lia"), 1));
    let (w, l) = (&wv.flows[0], &lia.flows[0]);
    let (w_rtt, l_rtt) = (w.subflows[0].srtt_mean_ms.unwrap(), l.subflows[0].srtt_mean_ms.unwrap());
    println!(
        "wvegas: {:.1} Mbit/s, SRTT {w_rtt:.1} ms, {} retransmissions; lia: {:.1} Mbit/s, SRTT {l_rtt:.1} ms, {} retransmissions",
        w.goodput_mbps, w.subflows[0].retransmissions, l.goodput_mbps, l.subflows[0].retransmissions
    );
    assert_eq!(w.subflows[0].retransmissions, 0, "no queue overflow");
    assert!(w_rtt < 25.0 && w_rtt < 0.3 * l_rtt, "queueing kept small: {w_rtt:.1} ms vs LIA {l_rtt:.1} ms");
    assert!(w.goodput_mbps > 5.0, "still moves data: {:.1}", w.goodput_mbps);
}

/// Linux grows a window only while it is used (`tcp_is_cwnd_limited`, in
/// every loss-based module of MPTCP v0.96): a 2 Mbit/s application on a
/// 100 Mbit/s path keeps a few packets in flight, and its window stays
/// near the initial 10 segments (slow start may reach twice the largest
/// flight) instead of growing by every byte acknowledged, to megabytes a
/// burst could then fill. The same for a connection held back by a
/// 64 KiB receive window: the window ends near that, not without bound.
/// wVegas gates only its Reno steps, as `mptcp_wvegas.c` does (its slow
/// start between rounds is ungated there too, and Linux then relies on
/// RFC 2861's decay of unused windows, which Braid does not model), so its
/// window is not checked: with no queue its `diff` stays below the two
/// whole packets that end slow start, and the window grows.
#[test]
fn windows_grow_only_while_used() {
    let toml = |cc: &str, flow: &str| {
        common::hybrid("20s", &[r#"rate = "100Mbit", rtt = "20ms""#], &format!("cc = \"{cc}\", {flow}"))
    };
    for cc in ["reno", "cubic", "lia", "olia", "balia", "ewtcp", "coupled", "semicoupled", "wvegas"] {
        let app = simulate(&toml(cc, r#"app_rate = "2Mbit", app_message = "1448B""#), 1);
        let rwnd = simulate(&toml(cc, r#"recv_buffer = "64KiB""#), 1);
        let (a, r) = (&app.flows[0].subflows[0], &rwnd.flows[0].subflows[0]);
        println!(
            "{cc}: app-limited {:.2} Mbit/s, mean window {:.0} B; receive-window-limited {:.1} Mbit/s, mean window {:.0} B",
            app.flows[0].goodput_mbps, a.cwnd_mean_bytes, rwnd.flows[0].goodput_mbps, r.cwnd_mean_bytes
        );
        assert!(app.flows[0].goodput_mbps > 1.9, "{cc}: the application's rate gets through");
        assert!(cc == "wvegas" || a.cwnd_mean_bytes < 40_000.0, "{cc}: app-limited window {:.0} B", a.cwnd_mean_bytes);
        assert!(rwnd.flows[0].goodput_mbps > 20.0, "{cc}: 64 KiB per 20 ms gets through");
        assert!(
            cc == "wvegas" || r.cwnd_mean_bytes < 200_000.0,
            "{cc}: receive-window-limited window {:.0} B",
            r.cwnd_mean_bytes
        );
    }
}

/// Slow start after idle (`restart_after_idle`, RFC 5681 section 4.1,
/// Linux's `tcp_cwnd_restart`): an application writing 500 kB every 2 s
/// over a 100 Mbit/s, 40 ms path leaves the subflow idle for far longer
/// than its RTO between bursts. With the restart each burst starts from
/// the initial window again and takes several round trips, so bytes wait
/// longer; without it the window learnt in the first bursts sends each
/// burst in about one round trip. BBR, which Linux exempts, is unchanged.
#[test]
fn restart_after_idle_slows_each_burst_of_a_bursty_writer() {
    let delay = |cc: &str, restart: bool| {
        let flow = format!(
            "cc = \"{cc}\", app_rate = \"2Mbit\", app_message = \"500KB\", restart_after_idle = {restart}, nodelay = true"
        );
        let s = simulate(&common::hybrid("30s", &[r#"rate = "100Mbit", rtt = "40ms""#], &flow), 1);
        let f = &s.flows[0];
        println!("{cc}, restart {restart}: mean write-to-read delay {:?} ms", f.delay_mean_ms);
        f.delay_mean_ms.expect("bytes delivered")
    };
    for cc in ["reno", "lia", "cubic"] {
        let (kept, restarted) = (delay(cc, false), delay(cc, true));
        // A 500 kB burst is 345 segments: from 10 segments slow start needs
        // about five round trips (200 ms) more than a window that holds
        // most of it; the mean over the burst's bytes rises by half that.
        assert!(restarted > kept + 50.0, "{cc}: {restarted:.1} ms with the restart, {kept:.1} without");
    }
    assert_eq!(delay("bbr", false), delay("bbr", true));
}

/// RACK-TLP (`rack_tlp`, Linux's loss detection on MPTCP v0.96's
/// subflows): short transfers of 30 kB over a path losing 2% of packets
/// often lose their last segments, which leave too few acknowledgements
/// to count three. Counting packets, each such loss waits for the
/// retransmission timer; with RACK-TLP a probe two round trips later finds
/// it. Most timeouts go, and the flows complete sooner on the mean and at
/// the 95th percentile (the median flow loses nothing).
#[test]
fn rack_tlp_replaces_most_timeouts_of_short_flows_on_a_lossy_path() {
    let run = |cc: &str, rack_tlp: bool| {
        let flow = format!("cc = \"{cc}\", size = \"30KB\", arrival_rate = 5, rack_tlp = {rack_tlp}");
        let s = simulate(&common::hybrid("60s", &[r#"rate = "20Mbit", rtt = "40ms", loss = "2%""#], &flow), 1);
        let rtos: u64 = s.flows.iter().flat_map(|f| &f.subflows).map(|sf| sf.rtos).sum();
        let g = &s.groups[0];
        println!("{cc}, rack_tlp {rack_tlp}: {rtos} timeouts, FCT mean {:?} p95 {:?} ms", g.fct_mean_ms, g.fct_p95_ms);
        (rtos, g.fct_mean_ms.expect("flows completed"), g.fct_p95_ms.expect("flows completed"))
    };
    for cc in ["reno", "cubic", "olia"] {
        let (counting, rack) = (run(cc, false), run(cc, true));
        assert!(rack.0 * 2 < counting.0, "{cc}: {} timeouts with RACK-TLP, {} counting", rack.0, counting.0);
        assert!(rack.1 < 0.95 * counting.1, "{cc}: mean FCT {:.1} ms against {:.1}", rack.1, counting.1);
        assert!(rack.2 < counting.2, "{cc}: p95 FCT {:.1} ms against {:.1}", rack.2, counting.2);
    }
}

/// BBR behind a token-bucket policer (2 Mbit/s, 1 MB bucket, on a 100
/// Mbit/s path of 100 ms): Startup overruns it and loses about a thousand
/// packets; two intervals that lose over 20% at the same rate then set
/// Linux's long-term rate (`cc/long_term_bw.rs`), which BBR paces at for
/// 48 rounds, about 5 s, without a drop at the policer while still
/// delivering close to its rate. BtlBw alone keeps probing above the rate
/// and the policer drops about 14 packets a second over the same seconds.
/// (Nothing in this scenario is random: one seed.)
#[test]
fn bbr_paces_at_a_policers_rate_once_it_has_modelled_it() {
    use braid_lab::{parse, RunOptions, Runner};
    use braid_proto::Instant;
    let link = r#"rate = "100Mbit", rtt = "100ms", policer = { rate = "2Mbit", burst = "1MB" }"#;
    let scenario = parse(&one_path("7s", link, "bbr"), "policed.toml").unwrap();
    let mut runner = Runner::new(&scenario, RunOptions::default()).unwrap();
    // The policed link's drops and bytes sent at `s` seconds.
    let mut at = |s: f64| {
        let t = Instant::from_nanos((s * 1e9) as u64);
        runner.advance(t, &mut None::<braid_sim::Recorder>);
        let l = runner.sim().links().iter().find(|l| l.spec().name == "L1").expect("the path's link");
        let stats = l.stats(t);
        (stats.drops_policed, stats.bytes_sent)
    };
    let (drops_before, bytes_before) = at(2.5);
    let (drops_after, bytes_after) = at(6.5);
    let mbps = (bytes_after - bytes_before) as f64 * 8.0 / 4.0 / 1e6;
    let dropped = drops_after - drops_before;
    println!("{drops_before} policed drops by 2.5 s, {dropped} from 2.5 to 6.5 s, {mbps:.2} Mbit/s");
    assert!(drops_before > 500, "Startup overran the policer: {drops_before}");
    assert_eq!(dropped, 0, "paced at the policer's rate");
    assert!(mbps > 1.8, "{mbps:.2} Mbit/s through a 2 Mbit/s policer");
}

/// Linux's TSO deferral (`tso_defer`, `tcp_tso_should_defer`): on seed 004's
/// 2 ms, 0.5%-loss path the window is a dozen segments, and holding new
/// data until a third of it is free leaves the pipe partly idle: CUBIC
/// falls from about 69 to 54 Mbit/s (the kernel: 57), Reno from 76 to 62
/// (the kernel: 63). The deferring window must still count as used, or
/// it stops growing (21 Mbit/s). On a clean 10 ms path, where the window
/// is 80 segments, nothing changes.
#[test]
fn tso_deferral_idles_only_a_short_path() {
    let goodput = |link: &str, cc: &str, defer: bool| {
        let toml = format!(
            "duration = \"10s\"\n[topology]\nkind = \"hybrid-access\"\nlink = [{{ {link} }}]\n\
             [[flow]]\ncc = {cc:?}\ntso_defer = {defer}\n"
        );
        let g = mean_over(&toml, 2, |s| s.flows[0].goodput_mbps);
        println!("{cc:<5} {link}, deferral {defer}: {g:.1} Mbit/s (mean of 2 seeds)");
        g
    };
    let lossy = r#"rate = "100Mbit", rtt = "2ms", loss = "0.5%", queue = "100p""#;
    let clean = r#"rate = "100Mbit", rtt = "10ms", queue = "100p""#;
    for cc in ["cubic", "reno"] {
        let (eager, deferring) = (goodput(lossy, cc, false), goodput(lossy, cc, true));
        assert!(deferring < 0.88 * eager && deferring > 0.7 * eager, "{cc}: {deferring:.1} vs {eager:.1}");
        let (eager, deferring) = (goodput(clean, cc, false), goodput(clean, cc, true));
        assert!((deferring - eager).abs() < 0.01 * eager, "{cc} clean: {deferring:.1} vs {eager:.1}");
    }
}

/// Reno on random lossy paths (Bernoulli loss 0.1-2%, RTT 10-200 ms, the
/// link four times faster than the loss allows, so the loss, not the
/// link, limits it) against Mathis et al.'s loss-limited rate, 1.22 MSS /
/// (RTT sqrt p) with the run's mean SRTT, over 2,000 round trips and at
/// least a minute. Braid grows the window by the bytes acknowledged, as
/// Linux does, so delayed ACKs do not slow it and the constant is the one
/// for an ACK per segment. Timeouts, which the formula leaves out, pull
/// the rate below it as the loss grows. Over these 40 paths the ratio runs
/// from 0.85 to 1.12 (0.88 to 1.13 over 60 others); the band is 0.75 to
/// 1.3. A Reno that cut its window to 0.7 of itself instead of half fails
/// on the first path, at 1.35.
#[test]
fn reno_follows_the_mathis_rate_on_random_lossy_paths() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for case in 0..40 {
        let rtt_ms: f64 = rng.gen_range(10f64.ln()..200f64.ln()).exp();
        let p: f64 = rng.gen_range(0.001f64.ln()..0.02f64.ln()).exp();
        let mathis = |rtt_s: f64| mathis_bytes_per_s(rtt_s, p) * 8.0 / 1e6;
        let link = format!(
            r#"rate = "{:.3}Mbit", rtt = "{rtt_ms:.3}ms", loss = "{:.5}%""#,
            4.0 * mathis(rtt_ms / 1e3),
            p * 100.0
        );
        let duration = format!("{:.0}s", (2.0 * rtt_ms).max(60.0));
        let s = simulate(&one_path(&duration, &link, "reno"), case + 1);
        let (f, sub) = (&s.flows[0], &s.flows[0].subflows[0]);
        let srtt_s = sub.srtt_mean_ms.expect("an RTT was measured") / 1e3;
        let ratio = f.goodput_mbps / mathis(srtt_s);
        println!(
            "case {case}: RTT {rtt_ms:.1} ms (SRTT {:.1}), loss {:.3}%: {:.2} Mbit/s, {ratio:.2} of Mathis, {} timeouts",
            srtt_s * 1e3,
            p * 100.0,
            f.goodput_mbps,
            sub.rtos
        );
        assert!((0.75..=1.3).contains(&ratio), "case {case}: {ratio:.2} of the Mathis rate");
    }
}
