//! The scenario format's topologies and traffic: graph files and their
//! errors, the data-centre builders with ECMP, flows that stand for many
//! (count, traffic matrices, Poisson arrivals), cross traffic, bursty loss
//! and delivery traces.

mod common;

use braid_lab::{parse, run, RunError, RunOptions, Scenario};
use braid_proto::{Duration, Instant};
use common::simulate;

fn scenario(toml: &str) -> Scenario {
    parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Each case must be refused with an error naming `test.toml`, `key` and `words`.
fn assert_refused<const N: usize>(cases: [(String, &str, &str); N]) {
    for (toml, key, words) in cases {
        let e = parse(&toml, "test.toml").err().unwrap_or_else(|| panic!("accepted:\n{toml}")).to_string();
        println!("{e}");
        assert!(e.starts_with("test.toml: key `") && e.contains(&format!("`{key}`")), "{key}: {e}");
        assert!(e.contains(words), "{words:?} not in {e}");
    }
}

/// Two hosts joined by two routes through routers R1 and R2; path `b`
/// shares its first link with `a`.
const GRAPH: &str = r#"
duration = "10s"
[topology]
kind = "graph"
[[topology.link]]
name = "s-r1"
from = "S"
to = "R1"
rate = "10Mbit"
delay = "5ms"
[[topology.link]]
name = "r1-d"
from = "R1"
to = "D"
rate = "10Mbit"
delay = "5ms"
[[topology.link]]
name = "r1-r2"
from = "R1"
to = "R2"
rate = "5Mbit"
delay = "10ms"
[[topology.link]]
name = "r2-d"
from = "R2"
to = "D"
rate = "100Mbit"
delay = "1ms"
[[topology.path]]
name = "a"
links = ["s-r1", "r1-d"]
[[topology.path]]
name = "b"
links = ["s-r1", "r1-r2", "r2-d"]
"#;

#[test]
fn graph_paths_share_links_and_return_over_mirrors() {
    let s = scenario(&format!("{GRAPH}[[flow]]\npaths = [\"a\", \"b\"]\ncc = \"lia\"\n"));
    let t = &s.topology;
    let names = |r: &[usize]| r.iter().map(|&l| t.links[l].name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&t.paths[1].forward), ["s-r1", "r1-r2", "r2-d"]);
    assert_eq!(names(&t.paths[1].reverse), ["r2-d-rev", "r1-r2-rev", "s-r1-rev"]);
    assert_eq!(t.paths[0].forward[0], t.paths[1].forward[0], "one link, shared");
    assert_eq!(t.paths[0].reverse[1], t.paths[1].reverse[2], "one mirror, made once");
    let mirror = &t.links[t.paths[1].reverse[1]];
    assert_eq!((mirror.rate_bps, mirror.delay), (5_000_000, Duration::from_millis(10)));
    let sum = run(&s, RunOptions::default(), &mut |_| {}).unwrap().1;
    let f = &sum.flows[0];
    println!("a {:.2} Mbit/s, b {:.2} Mbit/s", f.subflows[0].goodput_mbps, f.subflows[1].goodput_mbps);
    // Both paths cross s-r1 (10 Mbit/s): together they get at most that.
    assert!(f.goodput_mbps < 10.0 && f.goodput_mbps > 8.0, "{}", f.goodput_mbps);
    let rtt = f.subflows[1].min_rtt_ms.unwrap();
    assert!((32.0..34.0).contains(&rtt), "b's RTT is twice 16 ms plus serialisation: {rtt}");
}

#[test]
fn graph_errors_name_the_key() {
    let flow = "[[flow]]\npaths = [\"a\"]\n";
    assert_refused([
        (GRAPH.replace("\"s-r1\", \"r1-r2\"", "\"s-r1\", \"nope\"") + flow, "topology.path[1].links[1]", "\"nope\""),
        (
            GRAPH.replace("\"s-r1\", \"r1-r2\", \"r2-d\"", "\"s-r1\", \"r2-d\"") + flow,
            "topology.path[1].links[1]",
            "must join",
        ),
        (
            GRAPH.replace("links = [\"s-r1\", \"r1-d\"]", "links = [\"s-r1\", \"r1-d\"]\nreverse = [\"r1-d-rev\"]")
                + flow,
            "topology.path[0].reverse",
            "back to node \"S\"",
        ),
        (format!("{GRAPH}[[flow]]\npaths = [\"a\", \"c\"]\n"), "flow[0].paths[1]", "no path named \"c\""),
        (format!("{GRAPH}[[flow]]\nsubflows = 2\n"), "flow[0].subflows", "kind = \"dumbbell\""),
        (GRAPH.replace("delay = \"1ms\"", "rtt = \"1ms\"") + flow, "topology.link[3].rtt", "one-way `delay`"),
        (GRAPH.replace("from = \"R2\"", "") + flow, "topology.link[3].from", "`from` and `to`"),
        (format!("{GRAPH}[[flow]]\n"), "flow[0].paths", "list their paths"),
    ]);
}

#[test]
fn explicit_reverse_routes_and_named_mirrors() {
    // ACKs of `a` come back the long way round, over explicitly named mirrors.
    let s = scenario(&format!(
        "{}[[flow]]\npaths = [\"a\"]\n",
        GRAPH.replace(
            "links = [\"s-r1\", \"r1-d\"]",
            "links = [\"s-r1\", \"r1-d\"]\nreverse = [\"r2-d-rev\", \"r1-r2-rev\", \"s-r1-rev\"]"
        )
    ));
    let t = &s.topology;
    let rev: Vec<&str> = t.paths[0].reverse.iter().map(|&l| t.links[l].name.as_str()).collect();
    assert_eq!(rev, ["r2-d-rev", "r1-r2-rev", "s-r1-rev"]);
}

fn fattree(k: u32, flows: &str) -> String {
    format!("duration = \"1s\"\n[topology]\nkind = \"fattree\"\nk = {k}\nrate = \"100Mbit\"\n{flows}")
}

/// Every subflow's route is a walk from its flow's source host to its
/// destination host, and its ACK route walks back.
fn check_routes(s: &Scenario) {
    let t = &s.topology;
    for (f, spec) in s.flows.iter().enumerate() {
        for (k, &(p, _)) in spec.subflows.iter().enumerate() {
            let name = &s.flow_paths[f][k];
            let (src, rest) = name.split_once('>').unwrap();
            let dst = rest.split('#').next().unwrap();
            let node = |n: &str| t.nodes.iter().position(|x| x == n).unwrap();
            let path = &t.paths[p];
            assert_eq!(t.check_route(&path.forward, node(src), node(dst)), Ok(()), "{name}");
            assert_eq!(t.check_route(&path.reverse, node(dst), node(src)), Ok(()), "{name} reverse");
        }
    }
}

#[test]
fn fattree_counts_matrices_and_ecmp_spread() {
    let s = scenario(&fattree(4, "[[flow]]\nname = \"p\"\nmatrix = \"permutation\"\nsubflows = 4\n"));
    let t = &s.topology;
    let hosts = t.nodes.iter().filter(|n| n.starts_with('h')).count();
    assert_eq!((hosts, t.nodes.len() - hosts, t.links.len()), (16, 20, 2 * (16 + 8 * 2 + 8 * 2)));
    assert_eq!(s.flows.len(), 16);
    assert!(s.flows[0].name.starts_with("p-h0-h"), "{}", s.flows[0].name);
    check_routes(&s);
    // TP2 and TP3 on k = 8.
    let tp2 = scenario(&fattree(8, "[[flow]]\nmatrix = \"random\"\ndestinations = 12\n"));
    assert_eq!(tp2.flows.len(), 128 * 12);
    let tp3 = scenario(&fattree(8, "[[flow]]\nmatrix = \"sparse\"\nfraction = 0.3\n"));
    assert_eq!(tp3.flows.len(), 38);
    check_routes(&tp3);
    // ECMP: 400 connections of 8 hashed subflows between two pods spread
    // over the 16 core routes evenly (200 each, sd 13.7).
    let many = scenario(&fattree(8, "[[flow]]\nfrom = \"h0\"\nto = \"h127\"\ncount = 400\nsubflows = 8\n"));
    check_routes(&many);
    let mut per_route = [0u32; 16];
    for names in &many.flow_paths {
        for n in names {
            per_route[n.split('#').nth(1).unwrap().parse::<usize>().unwrap()] += 1;
        }
    }
    println!("subflows per core route: {per_route:?}");
    assert!(per_route.iter().all(|&c| (150..250).contains(&c)), "{per_route:?}");
    // Distinct: the 8 subflows of a connection never share a route.
    let distinct = scenario(&fattree(8, "ecmp = \"distinct\"\n[[flow]]\nfrom = \"h0\"\nto = \"h127\"\nsubflows = 8\n"));
    let mut routes = distinct.flow_paths[0].clone();
    routes.sort();
    routes.dedup();
    assert_eq!(routes.len(), 8);
}

/// `topology.aqm` puts htsim's random drop on every switch port of a
/// FatTree (host uplinks keep their drop-tail sender queue) and every port
/// of a BCube; kinds without switch ports refuse it.
#[test]
fn fabric_queues_take_a_discipline() {
    use braid_sim::{Aqm, RandomDrop};
    let s = scenario(&fattree(4, "aqm = \"random-drop\"\n[[flow]]\nmatrix = \"permutation\"\n"));
    let (hosts_up, ports): (Vec<_>, Vec<_>) =
        s.topology.links.iter().partition(|l| l.name.starts_with('h') && l.name.contains(">t"));
    assert_eq!(hosts_up.len(), 16);
    assert!(hosts_up.iter().all(|l| l.aqm == Aqm::DropTail));
    assert!(ports.iter().all(|l| l.aqm == Aqm::RandomDrop(RandomDrop::HTSIM)), "every switch port");
    let b =
        scenario("duration = \"1s\"\n[topology]\nkind = \"bcube\"\nn = 2\nk = 1\nrate = \"100Mbit\"\naqm = \"red\"\n[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n");
    assert!(b.topology.links.iter().all(|l| matches!(l.aqm, Aqm::Red(_))));
    assert!(scenario(&fattree(4, "[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n"))
        .topology
        .links
        .iter()
        .all(|l| l.aqm == Aqm::DropTail));
    assert_refused([
        (fattree(4, "aqm = \"codel\"\n[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n"), "topology.aqm", "\"random-drop\""),
        (
            "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\naqm = \"red\"\n[topology.bottleneck]\nrate = \"1Mbit\"\nrtt = \"10ms\"\n[[flow]]\n".into(),
            "topology.aqm",
            "fattree",
        ),
    ]);
}

#[test]
fn bcube_counts_and_subflows_over_parallel_paths() {
    let s = scenario(
        "duration = \"1s\"\n[topology]\nkind = \"bcube\"\nn = 5\nk = 2\nrate = \"100Mbit\"\n\
         [[flow]]\nname = \"mp\"\nmatrix = \"permutation\"\nsubflows = 3\n\
         [[flow]]\nname = \"tcp\"\nfrom = \"h0\"\nto = \"h1\"\n",
    );
    let t = &s.topology;
    let hosts = t.nodes.iter().filter(|n| n.starts_with('h')).count();
    assert_eq!((hosts, t.nodes.len() - hosts, t.links.len()), (125, 75, 750));
    check_routes(&s);
    for names in &s.flow_paths[..125] {
        let mut r = names.clone();
        r.sort();
        r.dedup();
        assert_eq!(r.len(), 3, "three subflows over the three parallel paths: {names:?}");
    }
    // h0 -> h1 differ in one digit: single-path TCP takes the one-hop path.
    let tcp = &t.paths[s.flows[125].subflows[0].0];
    assert_eq!(tcp.forward.len(), 2);
}

#[test]
fn fabric_errors_name_the_key() {
    assert_refused([
        (fattree(8, "[[flow]]\nfrom = \"h0\"\nto = \"h128\"\n"), "flow[0].to", "\"h0\" to \"h127\""),
        (fattree(8, "[[flow]]\nmatrix = \"diagonal\"\n"), "flow[0].matrix", "permutation"),
        (fattree(8, "[[flow]]\nmatrix = \"random\"\nfraction = 0.3\n"), "flow[0].fraction", "sparse"),
        (fattree(8, "[[flow]]\npaths = [\"x\"]\n"), "flow[0].paths", "name hosts"),
        (fattree(7, "[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n"), "topology.k", "even"),
        (
            fattree(8, "core_rate = \"1Gbit\"\n[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n"),
            "topology.core_rate",
            "hybrid-access",
        ),
        (fattree(8, "[[flow]]\nfrom = \"h0\"\nto = \"h1\"\nsubflows = 65\n"), "flow[0].subflows", "1 to 64"),
    ]);
}

#[test]
fn count_spreads_starts_and_names_replicas() {
    let s = scenario(&format!(
        "{GRAPH}[[flow]]\nname = \"x\"\npaths = [\"a\"]\ncount = 4\nstart = \"1s\"\nstart_spread = \"2s\"\n"
    ));
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["x-0", "x-1", "x-2", "x-3"]);
    let starts: Vec<f64> = s.flows.iter().map(|f| f.start.as_nanos() as f64 / 1e9).collect();
    assert_eq!(starts, [1.0, 1.5, 2.0, 2.5]);
    assert_eq!(s.groups[0].flows, 0..4);
}

/// Poisson arrivals of sized flows: about rate x window of them, each
/// completing, with completion-time statistics in the group summary.
#[test]
fn poisson_short_flows_report_completion_times() {
    let toml = format!(
        "{}[[flow]]\nname = \"short\"\npaths = [\"a\"]\ncc = \"reno\"\narrival_rate = 20\narrival_until = \"5s\"\n\
         size = {{ dist = \"exponential\", mean = \"50KB\" }}\n",
        GRAPH.replace("duration = \"10s\"", "duration = \"8s\"")
    );
    let s = scenario(&toml);
    println!("{} arrivals", s.flows.len());
    assert!((70..130).contains(&s.flows.len()), "about 100 arrivals in 5 s at 20/s: {}", s.flows.len());
    assert!(s.flows.windows(2).all(|w| w[0].start <= w[1].start));
    let g = &simulate(&toml).groups[0];
    println!("{g:?}");
    assert_eq!((g.flows, g.completed), (s.flows.len(), s.flows.len()));
    let (mean, sd, p50, p99) =
        (g.fct_mean_ms.unwrap(), g.fct_sd_ms.unwrap(), g.fct_p50_ms.unwrap(), g.fct_p99_ms.unwrap());
    // 50 KB over a 10 Mbit/s, 20 ms path: a few round trips, tens of ms.
    assert!(mean > 40.0 && mean < 400.0 && sd > 0.0 && p50 <= p99, "{mean} {sd} {p50} {p99}");
    // Another seed draws other arrivals.
    let other = s.redrawn(2, s.duration).unwrap().expect("arrivals depend on the seed");
    assert_ne!(
        other.flows.iter().map(|f| f.start).collect::<Vec<_>>(),
        s.flows.iter().map(|f| f.start).collect::<Vec<_>>()
    );
}

/// Poisson arrivals without `arrival_until` last to the run's end: a run
/// longer than the scenario's `duration` (`--duration`) draws them to its
/// own end (they stopped at the file's), one with `arrival_until` keeps
/// it, and a shorter run keeps the scenario's flows.
#[test]
fn arrivals_last_to_the_end_of_a_longer_run() {
    let table = "[[flow]]\nname = \"short\"\npaths = [\"a\"]\narrival_rate = 10\nsize = \"10KB\"\n";
    let toml = format!("{}{table}", GRAPH.replace("duration = \"10s\"", "duration = \"1s\""));
    let s = scenario(&toml);
    assert!(s.flows.len() < 30, "about 10 arrivals in 1 s: {}", s.flows.len());
    let opts = RunOptions { seed: None, duration: Some(Duration::from_secs(10)) };
    let (_, sum) = run(&s, opts, &mut |_| {}).unwrap();
    let n = sum.flows.len();
    assert!((60..150).contains(&n), "about 100 arrivals in 10 s: {n}");
    assert!(sum.duration_s > 9.0, "the run lasts its 10 s: {}", sum.duration_s);
    let longer = s.redrawn(s.seed, Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!((longer.duration, longer.flows.len()), (Duration::from_secs(10), n));
    assert!(longer.flows.last().unwrap().start > Instant::ZERO + Duration::from_secs(8));
    assert!(s.redrawn(s.seed, Duration::from_millis(500)).unwrap().is_none(), "a shorter run keeps the flows");
    // A benchmark of the longer run counts every flow it ran: 10 KB is
    // seven packets (the last short), and all but the last arrivals finish.
    let m = braid_lab::bench::measure(&s, Duration::ZERO, Duration::from_secs(10)).unwrap();
    let finished = sum.flows.iter().filter(|f| f.completion_time_s.is_some()).count() as u64;
    assert!(
        m.delivered_packets >= 6 * finished && finished + 5 >= n as u64,
        "{} packets, {finished} of {n} flows done",
        m.delivered_packets
    );
    let until = scenario(&toml.replace("arrival_rate = 10\n", "arrival_rate = 10\narrival_until = \"1s\"\n"));
    assert!(until.redrawn(until.seed, Duration::from_secs(10)).unwrap().is_none(), "arrivals end at `arrival_until`");
}

/// A run so long that its Poisson arrivals would make more flows than a
/// scenario may have is refused before any is drawn, whoever asks for it
/// (the command line checks first; a library caller goes through
/// `RunOptions::scenario` alone).
#[test]
fn a_run_too_long_for_its_arrivals_is_refused() {
    let table = "[[flow]]\nname = \"short\"\npaths = [\"a\"]\narrival_rate = 1000\nsize = \"10KB\"\n";
    let s = scenario(&format!("{GRAPH}{table}"));
    // 1,000 arrivals a second for 1,200 s: 1.2 million flows.
    let opts = RunOptions { seed: None, duration: Some(Duration::from_secs(1_200)) };
    assert!(opts.scenario(&s).is_err(), "drawn");
    let err = run(&s, opts, &mut |_| {}).expect_err("refused");
    assert!(matches!(err, RunError::Scenario(_)), "{err}");
    assert!(err.to_string().contains("flow[0].arrival_rate"), "{err}");
    // Within the limit, the same options draw the flows.
    let opts = RunOptions { seed: None, duration: Some(Duration::from_secs(20)) };
    assert!(opts.scenario(&s).unwrap().flows.len() > 15_000);
}

#[test]
fn seed_redraws_the_matrix_but_not_a_fixed_scenario() {
    let s = scenario(&fattree(4, "[[flow]]\nmatrix = \"permutation\"\n"));
    let other = s.redrawn(9, s.duration).unwrap().unwrap();
    assert_ne!(s.flow_paths, other.flow_paths);
    let fixed = scenario(&format!("{GRAPH}[[flow]]\npaths = [\"a\"]\n"));
    assert!(fixed.redrawn(9, fixed.duration + fixed.duration).unwrap().is_none());
    // A run with --seed uses the redrawn flows.
    let (_, sum) =
        run(&s, RunOptions { seed: Some(9), duration: Some(Duration::from_millis(50)) }, &mut |_| {}).unwrap();
    let names: Vec<&str> = sum.flows.iter().map(|f| f.name.as_str()).collect();
    let drawn: Vec<&str> = other.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, drawn);
}

/// On/off CBR cross traffic takes its share of the link while on and none
/// while off; nothing slows it down.
#[test]
fn on_off_cross_traffic_takes_its_share() {
    let toml = format!(
        "{GRAPH}[[flow]]\npaths = [\"a\"]\ncc = \"reno\"\n\
         [[cross]]\nname = \"burst\"\npath = \"a\"\nrate = \"10Mbit\"\non = \"10ms\"\noff = \"100ms\"\n"
    );
    let s = simulate(&toml);
    let c = &s.cross_traffic[0];
    println!("{c:?}, flow {:.2} Mbit/s", s.flows[0].goodput_mbps);
    // 10 ms at 10 Mbit/s every 110 ms: 9 packets a burst, 91 bursts in 10 s.
    assert_eq!(c.packets_sent, 9 * 91);
    assert!((c.mean_rate_mbps - 9.0 * 12_000.0 / 0.11 / 1e6).abs() < 1e-9);
    assert!(c.packets_delivered > c.packets_sent * 8 / 10, "{c:?}");
    let alone = simulate(&format!("{GRAPH}[[flow]]\npaths = [\"a\"]\ncc = \"reno\"\n"));
    let lost = alone.flows[0].goodput_mbps - s.flows[0].goodput_mbps;
    assert!(lost > 0.3 && lost < 2.5, "the flow cedes about the cross traffic's 0.98 Mbit/s: {lost:.2}");
}

/// Gilbert–Elliott loss on a link loses in bursts at its stationary rate,
/// reported as the link's loss rate (drops / packets offered).
#[test]
fn bursty_loss_on_a_link_and_its_loss_rate() {
    let lossy = GRAPH.replace(
        "name = \"r1-d\"",
        "name = \"r1-d\"\nloss_model = { kind = \"gilbert-elliott\", p = 0.002, r = 0.25 }",
    );
    let s = simulate(&format!("{lossy}[[flow]]\npaths = [\"a\"]\ncc = \"reno\"\n"));
    let l = s.links.iter().find(|l| l.name == "r1-d").unwrap();
    let expected = 0.002 / 0.252;
    println!("loss rate {:.5} (stationary {expected:.5}), offered {}", l.loss_rate, l.packets_offered);
    assert_eq!(l.drops_random as f64 / l.packets_offered as f64, l.loss_rate);
    assert!((l.loss_rate - expected).abs() < 0.4 * expected, "{} vs {expected}", l.loss_rate);
    assert_refused([
        (
            GRAPH.replace(
                "name = \"r1-d\"",
                "name = \"r1-d\"\nloss = 0.1\nloss_model = { kind = \"bernoulli\", p = 0.1 }",
            ) + "[[flow]]\npaths = [\"a\"]\n",
            "topology.link[1].loss_model",
            "not both",
        ),
        (
            GRAPH.replace("name = \"r1-d\"", "name = \"r1-d\"\nloss_model = { kind = \"gilbert-elliott\", p = 0.1 }")
                + "[[flow]]\npaths = [\"a\"]\n",
            "topology.link[1].loss_model.r",
            "needs `r`",
        ),
    ]);
}

/// A policer on a graph link: what passes over the run is at most its
/// rate plus its burst, the rest is counted as `drops_policed` (the
/// queue, 1 BDP of a 10 Mbit/s link, never fills at 2 Mbit/s), and bad
/// policers are refused with the key named.
#[test]
fn a_policed_link_passes_its_rate_and_counts_its_drops() {
    let policed = |p: &str| GRAPH.replace("name = \"r1-d\"", &format!("name = \"r1-d\"\npolicer = {p}"));
    let s = simulate(&format!(
        "{}[[flow]]\npaths = [\"a\"]\ncc = \"reno\"\n",
        policed(r#"{ rate = "2Mbit", burst = "30KB" }"#)
    ));
    let l = s.links.iter().find(|l| l.name == "r1-d").unwrap();
    let allowed = 2e6 / 8.0 * 10.0 + 30e3;
    println!("{} bytes sent of {allowed} allowed, {} policed drops", l.bytes_sent, l.drops_policed);
    assert!(l.bytes_sent as f64 <= allowed && l.bytes_sent as f64 > 0.8 * allowed, "{}", l.bytes_sent);
    assert!(l.drops_policed > 0 && l.drops_queue == 0, "{l:?}");
    assert_eq!(l.loss_rate, l.drops_policed as f64 / l.packets_offered as f64);
    // The run's table gives the policer's drops a column, only when there are some.
    let table = braid_lab::report::table(&s);
    let row = table.lines().find(|r| r.starts_with("r1-d ")).unwrap();
    assert!(table.contains("pol-drops") && row.ends_with(&format!(" {}", l.drops_policed)), "{table}");
    let plain = simulate(&format!("{GRAPH}[[flow]]\npaths = [\"a\"]\ncc = \"reno\"\n"));
    assert!(!braid_lab::report::table(&plain).contains("pol-drops"));
    let flow = "[[flow]]\npaths = [\"a\"]\n";
    assert_refused([
        (policed(r#"{ rate = "2Mbit", burst = "1000B" }"#) + flow, "topology.link[1].policer.burst", "full packet"),
        (policed(r#"{ rate = "fast", burst = "30KB" }"#) + flow, "topology.link[1].policer.rate", "rate"),
        (policed(r#"{ rate = "2Mbit", burst = "2GB" }"#) + flow, "topology.link[1].policer.burst", "1GB"),
    ]);
    let e = parse(&(policed(r#"{ rate = "2Mbit" }"#) + flow), "test.toml").unwrap_err().to_string();
    assert!(e.contains("burst"), "{e}");
}

/// A link whose capacity follows a mahimahi trace: 1 opportunity a
/// millisecond is 12.03 Mbit/s, whatever `rate` would say.
#[test]
fn trace_driven_link() {
    let tmp = tempfile::Builder::new().prefix("braid-trace-test-").tempdir().unwrap();
    let dir = tmp.path();
    let trace: String = (1..=1000).map(|ms| format!("{ms}\n")).collect();
    std::fs::write(dir.join("one-per-ms.trace"), trace).unwrap();
    let toml = GRAPH.replace("rate = \"100Mbit\"", "trace = \"one-per-ms.trace\"")
        + "[[flow]]\npaths = [\"b\"]\ncc = \"reno\"\n";
    let file = dir.join("s.toml");
    std::fs::write(&file, &toml).unwrap();
    let s = braid_lab::load(&file).unwrap();
    let link = s.topology.links.iter().find(|l| l.name == "r2-d").unwrap();
    assert_eq!(link.rate_bps, 12_032_000, "the trace's mean rate");
    // Path b: 5 Mbit/s middle link; make the trace the bottleneck instead.
    let slow: String = (1..=1000).filter(|ms| ms % 4 == 0).map(|ms| format!("{ms}\n")).collect();
    std::fs::write(dir.join("one-per-ms.trace"), slow).unwrap();
    let s = braid_lab::load(&file).unwrap();
    let sum = run(&s, RunOptions::default(), &mut |_| {}).unwrap().1;
    let g = sum.flows[0].goodput_mbps;
    println!("goodput over a 3.0 Mbit/s trace: {g:.2}");
    assert!(g > 2.5 && g < 3.0, "{g}");
    std::fs::write(dir.join("one-per-ms.trace"), "5\n3\n").unwrap();
    let e = braid_lab::load(&file).unwrap_err().to_string();
    assert!(e.contains("topology.link[3].trace") && e.contains("line 2"), "{e}");
}

/// Scenarios too large to build are refused before anything is built,
/// naming the key: a million two-subflow dumbbell flows, Poisson arrivals
/// of hundreds of millions of flows, a FatTree of four million hosts. Each
/// was accepted and ran out of memory while the scenario was expanded.
#[test]
fn scenarios_too_large_to_build_are_refused_by_key() {
    let dumbbell = "[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"10Mbit\"\n";
    let arrivals = "[[flow]]\npaths = [\"a\"]\nsize = \"1KB\"\ncount = 1000\narrival_rate = 10000\n";
    let cases = [
        (format!("{dumbbell}[[flow]]\ncount = 1000000\nsubflows = 2\n"), "flow[0].count", "2000000 subflows"),
        (format!("{dumbbell}[[flow]]\ncount = 100000\nsubflows = 2\n"), "", ""),
        (format!("{GRAPH}{arrivals}"), "flow[0].arrival_rate", "about 100000000 flows"),
        (
            fattree(64, "oversubscription = 64\n[[flow]]\nmatrix = \"permutation\"\n"),
            "topology.oversubscription",
            "4194304 hosts",
        ),
        (fattree(16, "[[flow]]\nmatrix = \"random\"\ndestinations = 1000\n"), "flow[0].count", "about 1024000 flows"),
    ];
    for (toml, key, what) in cases {
        let t0 = std::time::Instant::now();
        match parse(&toml, "big.toml") {
            Ok(s) => assert!(key.is_empty(), "accepted {} flows", s.flows.len()),
            Err(e) => {
                let e = e.to_string();
                assert!(!key.is_empty() && e.contains(key) && e.contains(what), "{e}");
            }
        }
        assert!(t0.elapsed() < std::time::Duration::from_secs(30), "{key}: {:?}", t0.elapsed());
    }
}

/// Outages that meet (one ends as the next begins) take the link down for
/// both, in whatever order the file lists them (in file order the second's
/// "down" ran before the first's "up", and the link was up during it).
#[test]
fn outages_that_meet_hold_the_link_down_in_any_order() {
    let drops = |down: &str| {
        let toml = format!(
            "duration = \"4s\"\n[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nname = \"L1\"\n\
             rate = \"10Mbit\"\nrtt = \"10ms\"\ndown = {down}\n[[flow]]\npaths = [\"L1\"]\n\
             [[cross]]\npath = \"L1\"\nrate = \"1.2Mbit\"\n"
        );
        let (_, sum) = run(&scenario(&toml), RunOptions::default(), &mut |_| {}).unwrap();
        sum.links.iter().find(|l| l.name == "L1").unwrap().drops_down
    };
    let text = |down: &str| {
        format!("[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nname = \"L1\"\nrate = \"10Mbit\"\ndown = {down}\n[[flow]]\n")
    };
    let listed = scenario(&text(r#"[{from = "2s", to = "3s"}, {from = "1s", to = "2s"}]"#));
    let l1 = listed.topology.links.iter().find(|l| l.name == "L1").unwrap();
    assert!(l1.outages.is_sorted(), "the emulator walks them in order: {:?}", l1.outages);
    let forward = drops(r#"[{from = "1s", to = "2s"}, {from = "2s", to = "3s"}]"#);
    let reversed = drops(r#"[{from = "2s", to = "3s"}, {from = "1s", to = "2s"}]"#);
    let whole = drops(r#"[{from = "1s", to = "3s"}]"#);
    assert!(whole > 150, "two seconds of 100 packets a second: {whole}");
    assert_eq!((forward, reversed), (whole, whole));
}
