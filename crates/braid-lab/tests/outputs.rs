//! Figures and files a user can rely on (issue 8): CSV that any CSV reader
//! parses, utilisation that never exceeds 1, durations printed exactly,
//! link names that never clash, errors that name the key the user wrote,
//! warnings for questionable inputs.

mod common;

use braid_lab::report::TimeSeriesWriter;
use braid_lab::{parse, run_with, RunOptions, Scenario};
use braid_proto::Duration;
use common::{hybrid, simulate};

fn scenario(toml: &str) -> Scenario {
    parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Each scenario is refused with an error that names `key` and says `what`.
fn assert_refused<S: AsRef<str>>(cases: impl IntoIterator<Item = (S, &'static str, &'static str)>) {
    for (toml, key, what) in cases {
        let e = match parse(toml.as_ref(), "test.toml") {
            Ok(_) => panic!("accepted:\n{}", toml.as_ref()),
            Err(e) => e.to_string(),
        };
        println!("{e}");
        assert!(e.contains(&format!("`{key}`")) && e.contains(what), "{key}: {e}");
    }
}

/// Runs `s` for `duration`, writing its time series into a fresh folder
/// (removed when the returned handle drops).
fn run_to_folder(s: &Scenario, duration: Duration) -> (braid_lab::Summary, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("braid-outputs-").tempdir().expect("a temporary folder");
    let mut ts = TimeSeriesWriter::create(dir.path(), s, duration).expect("folder");
    let opts = RunOptions { seed: None, duration: Some(duration) };
    let (_, summary) = run_with(s, opts, &mut ts, &mut |_| {}).expect("builds");
    ts.finish().expect("written");
    (summary, dir)
}

fn csv_rows(file: &std::path::Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(file).unwrap();
    let header = r.headers().unwrap().clone();
    (header, r.records().map(|r| r.expect("well-formed CSV")).collect())
}

/// A flow name with a comma, quotes and a newline stays one field.
#[test]
fn csv_fields_with_commas_quotes_and_newlines_stay_one_field() {
    let name = "a,\"b\"\nc";
    let s = scenario(&format!(
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"10Mbit\"\nrtt = \"10ms\"\n\
         [[flow]]\nname = {name:?}\nsubflows = 2\n"
    ));
    let (_, dir) = run_to_folder(&s, s.duration);
    let (header, rows) = csv_rows(&dir.path().join("subflows.csv"));
    assert_eq!(header.len(), 10);
    assert!(rows.len() >= 20, "{} rows", rows.len());
    for r in &rows {
        assert_eq!(r.len(), 10, "{r:?}");
        assert_eq!(&r[1], name);
        assert!(r[2] == *format!("{name}/0") || r[2] == *format!("{name}/1"), "{r:?}");
    }
    let (_, links) = csv_rows(&dir.path().join("links.csv"));
    assert!(links.iter().any(|r| r[1] == *format!("{name}/0-access")), "access links keep their names");
}

/// Per-interval and whole-run utilisation never exceed 1: in every shipped
/// scenario, and on a 1 bit/s link whose single packet outlasts the run.
#[test]
fn utilisation_never_exceeds_one() {
    let mut files: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for file in files {
        let s = braid_lab::load(&file).unwrap();
        let (summary, dir) = run_to_folder(&s, Duration::from_secs(5));
        let (_, rows) = csv_rows(&dir.path().join("links.csv"));
        let max = rows.iter().map(|r| r[2].parse::<f64>().unwrap()).fold(0.0, f64::max);
        let whole = summary.links.iter().map(|l| l.utilization).fold(0.0, f64::max);
        println!("{}: highest per-interval utilisation {max}, whole run {whole:.4}", file.display());
        assert!(max <= 1.0, "{}: {max}", file.display());
        assert!(max > 0.0, "{}: some link is busy", file.display());
        assert!(whole <= 1.0, "{}: {whole}", file.display());
    }
    let slow = simulate(&hybrid("10s", &["rate = \"1bit\", queue = \"10p\""], ""));
    let util: Vec<f64> = slow.links.iter().map(|l| l.utilization).collect();
    println!("1 bit/s link: {util:?}");
    assert!(util.iter().all(|&u| u <= 1.0), "{util:?}");
    assert_eq!(slow.links.iter().find(|l| l.name == "L1").unwrap().utilization, 1.0, "busy all along");
}

/// The time series' loss rate is a fraction: an outage drops the queue a
/// sender filled before it, which the interval it falls in must not read
/// as a loss rate of hundreds (drops over the few packets offered in it).
#[test]
fn interval_loss_rates_are_fractions() {
    let mut toml = hybrid(
        "2s",
        &["rate = \"10Mbit\", rtt = \"20ms\", queue = \"500p\", down = [{ from = \"1s\", to = \"1.5s\" }]"],
        "name = \"f\", cc = \"reno\"",
    );
    toml = toml.replace("duration = \"2s\"", "duration = \"2s\"\nsample_interval = \"1ms\"");
    toml.push_str("[[cross]]\npath = \"L1\"\nrate = \"20Mbit\"\n");
    let s = scenario(&toml);
    let (_, dir) = run_to_folder(&s, s.duration);
    let (header, rows) = csv_rows(&dir.path().join("links.csv"));
    assert_eq!(&header[5], "loss_rate");
    let l1: Vec<(f64, f64)> =
        rows.iter().filter(|r| &r[1] == "L1").map(|r| (r[0].parse().unwrap(), r[5].parse().unwrap())).collect();
    let worst = l1.iter().map(|r| r.1).fold(0.0, f64::max);
    assert!(worst <= 1.0, "loss rate {worst}");
    let outage = l1.iter().find(|r| r.0 >= 1.0).unwrap();
    assert!(outage.1 > 0.9, "the outage's interval drops nearly everything it decides: {outage:?}");
    // Before it, twice the link's rate offered: about half is dropped.
    let before: Vec<f64> = l1.iter().filter(|r| r.0 > 0.5 && r.0 < 0.99).map(|r| r.1).collect();
    let mean = before.iter().sum::<f64>() / before.len() as f64;
    assert!((0.3..0.7).contains(&mean), "mean loss rate {mean} before the outage");
}

/// The table lists every link offered a packet, the one that dropped them
/// all too, and a slow link's rate with its digits.
#[test]
fn the_table_shows_a_link_that_dropped_everything() {
    let table = |link: &str| braid_lab::report::table(&simulate(&hybrid("1s", &[link], "name = \"f\", cc = \"reno\"")));
    let rate = |table: &str, name: &str| {
        table.lines().find(|l| l.starts_with(name)).map(|l| l.split_whitespace().nth(1).unwrap().to_string())
    };
    let lossy = table("name = \"lossy\", rate = \"10Mbit\", loss = \"99%\"");
    println!("{lossy}");
    assert_eq!(rate(&lossy, "lossy").as_deref(), Some("10.0"), "{lossy}");
    let slow = table("name = \"slow\", rate = \"100kbit\"");
    println!("{slow}");
    assert_eq!(rate(&slow, "slow").as_deref(), Some("0.100"), "{slow}");
    assert_eq!(rate(&slow, "core").as_deref(), Some("2000"), "{slow}");
}

/// The sampled means (window, SRTT, out-of-order bytes) are over the time a
/// flow is active, as its goodput is: from its start until a sized flow has
/// delivered everything. A flow starting late, one done early and one that
/// never starts, against means worked out from every sample recorded.
#[test]
fn sampled_means_cover_the_flow_s_active_time() {
    let s = scenario(
        "duration = \"3s\"\n[topology]\nkind = \"hybrid-access\"\nlink = [{ rate = \"20Mbit\", rtt = \"20ms\" }]\n\
         [[flow]]\nname = \"late\"\nstart = \"2.5s\"\n\
         [[flow]]\nname = \"early\"\nsize = \"1MB\"\n\
         [[flow]]\nname = \"never\"\nstart = \"5s\"\n",
    );
    let mut rec = braid_sim::Recorder::default();
    let (_, sum) = run_with(&s, RunOptions::default(), &mut rec, &mut |_| {}).unwrap();
    let active = |f: usize| {
        let (start, size) = (s.flows[f].start, s.flows[f].size);
        rec.subflows
            .iter()
            .filter(move |r| r.flow as usize == f && r.time >= start && size.is_none_or(|n| r.delivered < n))
    };
    for (f, flow) in sum.flows.iter().enumerate() {
        let samples: Vec<_> = active(f).collect();
        let n = samples.len() as f64;
        let cwnd = samples.iter().map(|r| r.cwnd as f64).sum::<f64>() / n;
        let got = flow.subflows[0].cwnd_mean_bytes;
        println!("{}: {} samples, mean window {got} (all samples {})", flow.name, n, {
            let all: Vec<_> = rec.subflows.iter().filter(|r| r.flow as usize == f).collect();
            all.iter().map(|r| r.cwnd as f64).sum::<f64>() / all.len() as f64
        });
        if flow.name == "never" {
            assert_eq!((n, got, flow.subflows[0].srtt_mean_ms), (0.0, 0.0, None));
            continue;
        }
        assert!(n >= 4.0, "{}: {n} samples", flow.name);
        assert!((got - cwnd).abs() <= 1e-6 * cwnd, "{}: {got} against {cwnd}", flow.name);
        let srtt: Vec<f64> = samples.iter().filter_map(|r| r.srtt).map(|d| d.as_nanos() as f64 / 1e6).collect();
        let want = srtt.iter().sum::<f64>() / srtt.len() as f64;
        let got = flow.subflows[0].srtt_mean_ms.unwrap();
        assert!((got - want).abs() <= 1e-9 * want, "{}: SRTT {got} against {want}", flow.name);
    }
}

/// Eight subflows hashed onto a k = 4 fabric's four routes between pods
/// share route names; each keeps rows of its own in `subflows.csv`.
#[test]
fn subflows_on_one_route_keep_their_own_rows() {
    let s = scenario(
        "duration = \"0.3s\"\n[topology]\nkind = \"fattree\"\nk = 4\nrate = \"100Mbit\"\n\
         [[flow]]\nname = \"f\"\nfrom = \"h0\"\nto = \"h15\"\nsubflows = 8\n",
    );
    let mut routes = s.flow_paths[0].clone();
    routes.sort();
    routes.dedup();
    assert!(routes.len() < 8, "hashing shares routes: {routes:?}");
    let (_, dir) = run_to_folder(&s, s.duration);
    let (_, rows) = csv_rows(&dir.path().join("subflows.csv"));
    let first: Vec<&str> = rows.iter().filter(|r| &r[0] == "0.000").map(|r| &r[2]).collect();
    let mut distinct = first.clone();
    distinct.sort();
    distinct.dedup();
    println!("{first:?}");
    assert_eq!((first.len(), distinct.len()), (8, 8), "{first:?}");
}

/// Durations are whole nanoseconds, converted to seconds once.
#[test]
fn json_durations_are_exact() {
    let toml = hybrid(
        "4.8s",
        &["rate = \"10Mbit\", rtt = \"10ms\""],
        "start = \"0.3s\", size = \"500KB\", app_rate = \"1.6Mbit\", app_message = \"1000B\"",
    );
    let json = serde_json::to_string(&simulate(&toml)).unwrap();
    println!("{json}");
    assert!(json.contains("\"start_s\":0.3,"), "{json}");
    for (duration, printed) in [("4.8s", "4.8"), ("30s", "30.0")] {
        let bulk = serde_json::to_string(&simulate(&hybrid(duration, &["rate = \"1Mbit\""], ""))).unwrap();
        assert!(bulk.contains(&format!("\"duration_s\":{printed},")), "{bulk}");
    }
    // A completion time is a whole number of nanoseconds: nine decimals at most.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let done = v["flows"][0]["completion_time_s"].to_string();
    assert!(done.split('.').nth(1).is_some_and(|d| d.len() <= 9), "{done}");
}

#[test]
fn default_link_names_never_clash_and_duplicates_are_refused() {
    let three = scenario(&hybrid("1s", &["rate = \"10Mbit\""; 3], ""));
    let names: Vec<&str> = three.topology.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["core", "core-rev", "L1", "L1-rev", "L2", "L2-rev", "L3", "L3-rev"]);
    // An unnamed link skips a default name another link took.
    let taken = scenario(&hybrid("1s", &["rate = \"10Mbit\"", "name = \"L2\", rate = \"10Mbit\""], ""));
    assert_eq!(taken.flow_paths[0], ["L1", "L2"]);
    let taken = scenario(&hybrid("1s", &["rate = \"10Mbit\", name = \"L2\"", "rate = \"10Mbit\""], ""));
    assert_eq!(taken.flow_paths[0], ["L2", "L3"]);
    let link1 = "topology.link[1].name";
    assert_refused([
        (hybrid("1s", &["rate = \"10Mbit\"", "name = \"L1-rev\", rate = \"10Mbit\""], ""), link1, "reverse"),
        (hybrid("1s", &["rate = \"10Mbit\", name = \"x-rev\"", "name = \"x\", rate = \"10Mbit\""], ""), link1, "x-rev"),
        (hybrid("1s", &["rate = \"10Mbit\"", "name = \"core\", rate = \"10Mbit\""], ""), link1, "core link"),
        (hybrid("1s", &["rate = \"10Mbit\", name = \"x\"", "name = \"x\", rate = \"10Mbit\""], ""), link1, "already"),
        (hybrid("1s", &["rate = \"10Mbit\""], "paths = [\"L1\", \"L1\"]"), "flow[0].paths[1]", "twice"),
        (
            "[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nname = \"f/0-access\"\nrate = \"10Mbit\"\n[[flow]]\nname = \"f\"\n"
                .into(),
            "topology.bottleneck.name",
            "clashes",
        ),
    ]);
}

#[test]
fn errors_name_the_key_the_user_wrote() {
    let dumbbell = |extra: &str| {
        format!("[topology]\nkind = \"dumbbell\"\n{extra}[topology.bottleneck]\nrate = \"10Mbit\"\n[[flow]]\n")
    };
    assert_refused([
        (hybrid("1s", &["rate = \"10Mbit\""], "extra_rtt = \"5ms\""), "flow[0].extra_rtt", "dumbbell"),
        (hybrid("1s", &["rate = \"10Mbit\""], "subflows = 2"), "flow[0].subflows", "dumbbell"),
        (dumbbell("core_rate = \"1Gbit\"\n"), "topology.core_rate", "hybrid-access"),
        (dumbbell("[[topology.link]]\nrate = \"1Gbit\"\n"), "topology.link", "hybrid-access"),
        (dumbbell("access_rate = \"fast\"\n"), "topology.access_rate", "rate"),
        (dumbbell("access_rate = \"0Gbit\"\n"), "topology.access_rate", "out of range"),
        (
            hybrid("1s", &["rate = \"10Mbit\""], "").replace("[topology]\n", "[topology]\naccess_rate = \"1Gbit\"\n"),
            "topology.access_rate",
            "dumbbell",
        ),
    ]);
}

/// A dumbbell's access links run at `access_rate` (10 Gbit/s unless set).
#[test]
fn dumbbell_access_links_take_their_rate_from_the_scenario() {
    let toml = |extra: &str| {
        format!("[topology]\nkind = \"dumbbell\"\n{extra}[topology.bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nname = \"f\"\nsubflows = 2\n")
    };
    let access = |toml: &str| -> Vec<u64> {
        let s = braid_lab::parse(toml, "t").unwrap();
        s.topology.links.iter().filter(|l| l.name.ends_with("-access")).map(|l| l.rate_bps).collect()
    };
    assert_eq!(access(&toml("")), vec![10_000_000_000; 2]);
    assert_eq!(access(&toml("access_rate = \"250Gbit\"\n")), vec![250_000_000_000; 2]);
}

#[test]
fn questionable_inputs_are_refused_or_warned_about() {
    assert_refused([
        (
            hybrid(
                "10s",
                &["rate = \"10Mbit\", down = [{ from = \"1s\", to = \"3s\" }, { from = \"2s\", to = \"4s\" }]"],
                "",
            ),
            "topology.link[0].down[1]",
            "overlaps",
        ),
        (
            hybrid(
                "10s",
                &["rate = \"10Mbit\", down = [{ from = \"5s\", to = \"6s\" }, { from = \"1s\", to = \"9s\" }]"],
                "",
            ),
            "topology.link[0].down[1]",
            "overlaps",
        ),
        (hybrid("10s", &["rate = \"10Mbit\""], "size = \"1.5B\""), "flow[0].size", "whole number"),
        (hybrid("10s", &["rate = \"10Mbit\""], "recv_buffer = \"64.0001KB\""), "flow[0].recv_buffer", "whole number"),
        (hybrid("10s", &["rate = \"10Mbit\", queue = \"1000B\""], ""), "topology.link[0].queue", "no full packet"),
        (
            hybrid("10s", &["rate = \"10Mbit\", queue = \"1520B\""], "mss = 1500"),
            "topology.link[0].queue",
            "no full packet",
        ),
        (hybrid("10s", &["rate = \"10Mbit\", mtu = 500"], ""), "topology.link[0].mtu", "576 to 65535"),
        (hybrid("10s", &["rate = \"10Mbit\""], "send_buffer = \"Auto\""), "flow[0].send_buffer", "\"kernel:MAX\""),
        (hybrid("10s", &["rate = \"10Mbit\""], "recv_buffer = \"kernel\""), "flow[0].recv_buffer", "\"auto:MAX\""),
        (
            hybrid("10s", &["rate = \"10Mbit\""], "") + "[[cross]]\npath = \"L1\"\nrate = \"1Mbit\"\n[[cross]]\nname = \"cross0\"\npath = \"L1\"\nrate = \"1Mbit\"\n",
            "cross[1].name",
            "already the name of cross[0]",
        ),
        (
            "[topology]\nkind = \"bcube\"\nn = 2\nk = 63\nrate = \"10Mbit\"\n[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n".to_string(),
            "topology.k",
            "at most 8",
        ),
        (
            hybrid("10s", &["rate = \"10Mbit\", policer = { rate = \"5Mbit\", burst = \"1500B\" }"], "mss = 4000"),
            "topology.link[0].policer.burst",
            "no full packet",
        ),
        (
            hybrid("10s", &["rate = \"10Mbit\", queue = \"1520B\""], "wire = true"),
            "topology.link[0].queue",
            "1546 bytes on the wire",
        ),
        (
            "[topology]\nkind = \"fattree\"\nk = 4\nrate = \"10Mbit\"\nmtu = 70000\n[[flow]]\nfrom = \"h0\"\nto = \"h1\"\n"
                .to_string(),
            "topology.mtu",
            "576 to 65535",
        ),
        (
            "[topology]\nkind = \"hybrid-access\"\nmtu = 1400\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\n"
                .to_string(),
            "topology.mtu",
            "set `mtu` on each link",
        ),
        (hybrid("10s", &["rate = \"10Mbit\""], "mss = 1200, mss_floor = 1300"), "flow[0].mss_floor", "mss (1200)"),
    ]);
    // Back-to-back outages and a queue of exactly one packet are fine.
    scenario(&hybrid("10s", &["rate = \"10Mbit\", queue = \"1500B\", down = [{ from = \"1s\", to = \"2s\" }, { from = \"2s\", to = \"3s\" }]"], ""));

    let late = scenario(&hybrid("10s", &["rate = \"10Mbit\""], "start = \"12s\""));
    let w = late.warnings(late.duration);
    println!("{w:?}");
    assert!(w.len() == 1 && w[0].contains("`flow[0].start`") && w[0].contains("test.toml"), "{w:?}");
    assert!(late.warnings(Duration::from_secs(20)).is_empty(), "a longer --duration lets it run");
    let big = scenario(&hybrid("10s", &["rate = \"10Mbit\""], "app_rate = \"1Mbit\", app_message = \"2MB\""));
    let w = big.warnings(big.duration);
    println!("{w:?}");
    assert!(w.len() == 1 && w[0].contains("`flow[0].app_message`"), "{w:?}");
    assert!(big.warnings(Duration::from_secs(17)).is_empty(), "17 s leaves time for the second message");
    assert!(scenario(braid_lab::DEFAULT_SCENARIO).warnings(Duration::from_secs(30)).is_empty());
    // On/off cross traffic sends whole packets: a 4 ms on period at 100
    // kbit/s (one 1500-byte packet takes 120 ms) sends one packet every 5.5
    // ms, 2.2 Mbit/s rather than 73 kbit/s.
    let cross = |on: &str| {
        scenario(
            &(hybrid("10s", &["name = \"P\", rate = \"10Mbit\""], "")
                + &format!("[[cross]]\npath = \"P\"\nrate = \"100kbit\"\non = \"{on}\"\noff = \"1.5ms\"\n")),
        )
    };
    let w = cross("4ms").warnings(Duration::from_secs(10));
    println!("{w:?}");
    assert!(w.len() == 1 && w[0].contains("`cross[0].on`") && w[0].contains("2181818 bit/s"), "{w:?}");
    assert!(cross("1200ms").warnings(Duration::from_secs(10)).is_empty(), "ten packets an on period");
    // A dumbbell whose access links (one per subflow, deep queues) cannot
    // fill the bottleneck together: two flows of two subflows need 25 Mbit/s each.
    let dumbbell = |access: &str| {
        scenario(&format!(
            "[topology]\nkind = \"dumbbell\"\naccess_rate = \"{access}\"\n\
             [topology.bottleneck]\nrate = \"100Mbit\"\n\
             [[flow]]\ncount = 2\nsubflows = 2\n"
        ))
    };
    let w = dumbbell("24Mbit").warnings(Duration::from_secs(10));
    println!("{w:?}");
    assert!(
        w.len() == 1 && w[0].contains("`topology.access_rate`") && w[0].contains("at least 25000000 bit/s"),
        "{w:?}"
    );
    assert!(dumbbell("25Mbit").warnings(Duration::from_secs(10)).is_empty(), "together as fast as the bottleneck");
    // Hybrid-access: the core (2 Gbit/s by default, deep queue) slower than
    // the access links together.
    let links = ["rate = \"1Gbit\"", "rate = \"1.5Gbit\""];
    let w = scenario(&hybrid("10s", &links, "")).warnings(Duration::from_secs(10));
    println!("{w:?}");
    assert!(
        w.len() == 1 && w[0].contains("`topology.core_rate`") && w[0].contains("at least 2500000000 bit/s"),
        "{w:?}"
    );
    let fast_core = hybrid("10s", &links, "") + "core_rate = \"2.5Gbit\"\n";
    assert!(scenario(&fast_core).warnings(Duration::from_secs(10)).is_empty(), "a core as fast as the links together");
    // A link with an MTU keeps full-sized packets (1448 + 52 bytes) from a
    // flow without black-hole detection, and the wire format's padded
    // opening (1228 bytes) from any.
    let mtu = |mtu: u32, flow: &str| {
        let links = [format!("rate = \"10Mbit\", mtu = {mtu}"), "rate = \"10Mbit\"".to_string()];
        let links: Vec<&str> = links.iter().map(String::as_str).collect();
        scenario(&hybrid("10s", &links, flow)).warnings(Duration::from_secs(10))
    };
    let w = mtu(1420, "");
    println!("{w:?}");
    assert!(w.len() == 1 && w[0].contains("`flow[0].paths`") && w[0].contains("at most 1368"), "{w:?}");
    assert!(mtu(1420, "mss_floor = 1368").is_empty(), "the floor's packets fit");
    assert!(mtu(1500, "").is_empty(), "1500 bytes carry 1448 + 52");
    let w = mtu(1220, "mss_floor = 1000, wire = true");
    println!("{w:?}");
    assert!(w.len() == 1 && w[0].contains("1228 of an opening packet"), "{w:?}");
    assert!(mtu(1228, "mss_floor = 1000, wire = true").is_empty(), "the opening fits");
    // Cross traffic the run or a link's MTU keeps out entirely, and a table
    // of Poisson arrivals that draws no flow.
    let cross = |link: &str, cross: &str| {
        let text = hybrid("10s", &[link], "") + &format!("[[cross]]\npath = \"L1\"\nrate = \"1Mbit\"\n{cross}\n");
        scenario(&text).warnings(Duration::from_secs(10))
    };
    let w = cross("rate = \"10Mbit\", mtu = 1420", "");
    assert!(w.len() == 2 && w[1].contains("`cross[0].packet`") && w[1].contains("1420"), "{w:?}");
    assert!(cross("rate = \"10Mbit\", mtu = 1420", "packet = \"1420B\"").len() == 1, "1420 bytes fit");
    let w = cross("rate = \"10Mbit\"", "start = \"10s\"");
    assert!(w.len() == 1 && w[0].contains("`cross[0].start`"), "{w:?}");
    assert!(cross("rate = \"10Mbit\"", "start = \"9.9s\"").is_empty());
    let arrivals = |until: &str| {
        let flow = format!("arrival_rate = 5, size = \"10KB\", start = \"1s\", arrival_until = \"{until}\"");
        scenario(&hybrid("10s", &["rate = \"10Mbit\""], &flow)).warnings(Duration::from_secs(10))
    };
    let w = arrivals("0.5s");
    assert!(w.len() == 1 && w[0].contains("`flow[0].arrival_rate`") && w[0].contains("no flow"), "{w:?}");
    assert!(arrivals("5s").is_empty());
    // More random destinations than a k = 4 FatTree's 15 other hosts.
    let fabric = |d: u32| {
        let text = format!(
            "[topology]\nkind = \"fattree\"\nk = 4\nrate = \"10Mbit\"\n[[flow]]\nmatrix = \"random\"\ndestinations = {d}\n"
        );
        scenario(&text).warnings(Duration::from_secs(10))
    };
    let w = fabric(16);
    assert!(w.len() == 1 && w[0].contains("`flow[0].destinations`") && w[0].contains("only 15 others"), "{w:?}");
    assert!(fabric(15).is_empty());
    // A trace sets the capacity; a `rate` far from its mean only sizes queues and reports.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    std::fs::write(&trace, "1\n2\n3\n4\n5\n").unwrap(); // 1504 bytes a ms: 12.032 Mbit/s
    let traced = |rate: &str| {
        let link = format!("trace = {:?}{rate}", trace.display().to_string());
        scenario(&hybrid("10s", &[&link], "")).warnings(Duration::from_secs(10))
    };
    let w = traced(", rate = \"10Mbit\"");
    assert!(w.len() == 1 && w[0].contains("mean 12032000 bit/s"), "{w:?}");
    assert!(traced("").is_empty() && traced(", rate = \"12Mbit\"").is_empty());
    // Every path a backup: they all carry data, as regular ones would.
    let backups = |backup: &str| {
        scenario(&hybrid("10s", &["rate = \"10Mbit\"", "rate = \"10Mbit\""], backup)).warnings(Duration::from_secs(10))
    };
    let w = backups("backup = [\"L1\", \"L2\"]");
    assert!(w.len() == 1 && w[0].contains("`flow[0].backup`") && w[0].contains("every path is a backup"), "{w:?}");
    assert!(backups("backup = [\"L2\"]").is_empty());
}

/// Percentiles within 0.1%: the default run's p50, p95 and p99 differ
/// (12%-wide buckets made them all 316.2 ms).
#[test]
fn delay_percentiles_are_precise() {
    let s = simulate(&braid_lab::DEFAULT_SCENARIO.replace("duration = \"30s\"", "duration = \"10s\""));
    let f = &s.flows[0];
    let (p50, p95, p99) = (f.delay_p50_ms.unwrap(), f.delay_p95_ms.unwrap(), f.delay_p99_ms.unwrap());
    println!("write-to-read delay mean {:.2} ms, p50 {p50} ms, p95 {p95} ms, p99 {p99} ms", f.delay_mean_ms.unwrap());
    assert!(p50 < p95 && p95 < p99, "{p50} {p95} {p99}");
}

/// No name is empty (a link, path or flow named "" was accepted); any other
/// characters are kept (CSV files quote them).
#[test]
fn empty_names_are_refused() {
    let hybrid = |link: &str, flow: &str| {
        format!("[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nname = {link:?}\nrate = \"10Mbit\"\n[[flow]]\nname = {flow:?}\n")
    };
    let graph = |path: &str| {
        format!(
            "[topology]\nkind = \"graph\"\n[[topology.link]]\nname = \"l\"\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbit\"\n\
             [[topology.path]]\nname = {path:?}\nlinks = [\"l\"]\n[[flow]]\npaths = [{path:?}]\n"
        )
    };
    assert_refused([
        (hybrid("", "f"), "topology.link[0].name", "cannot be empty"),
        (hybrid("L1", ""), "flow[0].name", "cannot be empty"),
        (graph(""), "topology.path[0].name", "cannot be empty"),
    ]);
    scenario(&hybrid("my link", "a flow, \"quoted\""));
    scenario(&graph("p 1"));
}
