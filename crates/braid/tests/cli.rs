//! The command line as a user meets it: help, the default run, bad input.

use std::process::{Command, Output};

fn braid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid")).args(args).output().expect("braid runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A folder for one test's files, removed when it drops.
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("braid-cli-test-").tempdir().expect("a temporary folder")
}

fn write_scenario(dir: &tempfile::TempDir, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Criterion 7: A broken scenario file: clear error naming file and key, non-zero exit, no panic.
#[test]
fn broken_scenarios_get_clear_errors() {
    let cases = [
        ("syntax.toml", "duration = \"30s\"\n[topology\n", "syntax.toml"),
        (
            "unknown-cc.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\ncc = \"nope\"\n",
            "flow[0].cc",
        ),
        (
            "bad-rate.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"fast\"\n[[flow]]\n",
            "topology.link[0].rate",
        ),
        (
            "bad-loss.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\nloss = 1.5\n[[flow]]\n",
            "topology.link[0].loss",
        ),
        ("unknown-key.toml", "colour = 3\n[topology]\nkind = \"dumbbell\"\n", "colour"),
        (
            "bad-path.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\npaths = [\"L9\"]\n",
            "flow[0].paths[0]",
        ),
        ("no-flow.toml", "[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"10Mbit\"\n", "flow"),
        (
            "foreign-setting.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\nscheduler = \"ecf\"\nscheduler_settings = { num_segments = 3 }\n",
            "flow[0].scheduler_settings.num_segments",
        ),
        (
            "bad-lambda.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\nscheduler = \"blest\"\n[flow.scheduler_settings]\nlambda = 2.0\n",
            "flow[0].scheduler_settings.lambda",
        ),
        (
            "unknown-setting.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\nscheduler_settings = { gamma = 1 }\n",
            "gamma",
        ),
        (
            "message-without-rate.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\napp_message = \"1KB\"\n",
            "flow[0].app_message",
        ),
        (
            "extra-rtt-on-hybrid.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\nextra_rtt = \"5ms\"\n",
            "flow[0].extra_rtt",
        ),
        (
            "core-rate-on-dumbbell.toml",
            "[topology]\nkind = \"dumbbell\"\ncore_rate = \"1Gbit\"\n[topology.bottleneck]\nrate = \"10Mbit\"\n[[flow]]\n",
            "topology.core_rate",
        ),
        (
            "bad-app-rate.toml",
            "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\napp_rate = \"0bit\"\n",
            "flow[0].app_rate",
        ),
    ];
    let dir = temp_dir();
    for (name, body, key) in cases {
        let path = write_scenario(&dir, name, body);
        let out = braid(&["run", path.to_str().unwrap(), "--quiet"]);
        let (_, err) = text(&out);
        println!("{name}: {}", err.trim());
        assert_eq!(out.status.code(), Some(2), "{name}: exit status");
        assert!(err.contains(name), "{name}: error should name the file: {err}");
        assert!(err.contains(key), "{name}: error should name `{key}`: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let out = braid(&["run", "/nonexistent/braid.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("cannot read the file"));
}

/// Errors speak the file's language (arrays and tables, not serde's
/// sequences and structs), name both flows that share a name, and do not
/// contradict themselves about what a value may be.
#[test]
fn errors_say_what_the_file_got_wrong() {
    const LINK: &str = "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nname = \"a\"\nrate = \"10Mbit\"\n";
    let cases = [
        ("topology = 5\n[[flow]]\n".to_string(), "expected a table", "Raw"),
        (format!("{LINK}[[flow]]\npaths = \"a\"\n"), "expected an array", "sequence"),
        (
            format!("{LINK}[[flow]]\nname = \"x\"\n[[flow]]\n[[flow]]\nname = \"x\"\n"),
            "`flow[2].name`: \"x\" is also a name of flow[0]",
            "two flows",
        ),
        (format!("duration = \"-5ms\"\n{LINK}[[flow]]\n"), "longer than zero", "zero or more"),
        (format!("{LINK}queue = \"5000000000p\"\n[[flow]]\n"), "at most 4294967295 packets", "at least 1 packet"),
        (format!("{LINK}[[flow]]\nmss = \"1448\"\n"), "expected a whole number, 0 or more, without quotes", "u32"),
        (format!("seed = -1\n{LINK}[[flow]]\n"), "expected a whole number, 0 or more", "u64"),
    ];
    let dir = temp_dir();
    for (i, (body, says, not)) in cases.iter().enumerate() {
        let path = write_scenario(&dir, &format!("case{i}.toml"), body);
        let out = braid(&["run", path.to_str().unwrap(), "--quiet"]);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "case {i}: {err}");
        assert!(err.contains(says) && !err.contains(not), "case {i}: {err}");
    }
}

/// A value of the wrong type, or an unknown key, is named by its key path
/// as the other errors are, and still shown where it is in the file.
#[test]
fn type_errors_name_their_key() {
    const LINK: &str = "[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nname = \"a\"\nrate = \"10Mbit\"\n";
    let cases = [
        (format!("{LINK}[[flow]]\nsubflows = \"two\"\n"), "flow[0].subflows"),
        (format!("{LINK}[[flow]]\n[[flow]]\nmss = \"1448\"\n"), "flow[1].mss"),
        (format!("{LINK}speed = 3\n[[flow]]\n"), "topology.link[0].speed"),
        (
            "[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = 5\n[[flow]]\n".to_string(),
            "topology.bottleneck.rate",
        ),
        (format!("{LINK}[[flow]]\nscheduler_settings = {{ beta = \"x\" }}\n"), "flow[0].scheduler_settings.beta"),
    ];
    let dir = temp_dir();
    for (i, (body, key)) in cases.iter().enumerate() {
        let path = write_scenario(&dir, &format!("case{i}.toml"), body);
        let out = braid(&["run", path.to_str().unwrap(), "--quiet"]);
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "case {i}: {err}");
        assert!(err.contains(&format!("key `{key}`: ")) && err.contains('^'), "case {i}: {err}");
    }
}

#[test]
fn bad_arguments_are_refused() {
    for args in
        [&["run", "--duration", "soon"][..], &["run", "--seed", "-1"], &["run", "--duration", "0s"], &["frobnicate"]]
    {
        let out = braid(args);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A negative value reaches the parser, which says what is wrong (clap
    // took "-5ms" for a flag and suggested `-- -5`, and said "invalid
    // digit" of a negative seed).
    for (args, says) in [
        (&["run", "--duration", "-5ms"][..], "negative"),
        (&["send", "--to", "198.18.0.2:4747", "--bytes", "-5MB"], "negative"),
        (&["run", "--seed", "-1"], "-1 is not in 0..="),
        (&["repro", "--seeds", "-3"], "-3 is not in 1..=100"),
    ] {
        let (_, err) = text(&braid(args));
        assert!(err.contains(says) && !err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// `--seed` takes what a scenario file's `seed` can hold (TOML's integers
/// stop at 2^63 - 1), so any run can be written back as a file.
#[test]
fn a_seed_from_the_command_line_fits_in_a_file() {
    let largest = i64::MAX.to_string();
    let out = braid(&["run", "--check", "--seed", &largest]);
    assert!(out.status.success(), "{:?}", text(&out));
    let dir = temp_dir();
    let file = write_scenario(
        &dir,
        "seeded.toml",
        &include_str!("../../../scenarios/hybrid-access.toml").replace("seed = 1\n", &format!("seed = {largest}\n")),
    );
    let out = braid(&["run", "--check", file.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", text(&out));
    let out = braid(&["run", "--check", "--seed", &(i64::MAX as u64 + 1).to_string()]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("9223372036854775807"), "{:?}", text(&out));
}

/// `emulate --describe` (no root needed) checks what the emulator would:
/// a loss model for a link the topology lacks is refused there too.
#[test]
fn the_emulators_description_checks_the_loss_models_links() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/hybrid-access.toml");
    let out = braid(&["emulate", "--describe", file, "--gilbert-elliott", "L9=1%,0.25"]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("\"L9\": no such link"), "{:?}", text(&out));
    let out = braid(&["emulate", "--describe", file, "--gilbert-elliott", "L2=1%,0.25"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(text(&out).0.starts_with("L1 "), "{:?}", text(&out));
}

/// What the emulator cannot carry is refused before it starts: one
/// namespace for both ends (traffic would go over its loopback), and a
/// route longer than a segment's hop counter (it wrapped, and packets went
/// round the route forever).
#[test]
fn the_emulator_refuses_what_it_cannot_carry() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/hybrid-access.toml");
    let out = braid(&["emulate", "--describe", file, "--client-ns", "x", "--server-ns", "x"]);
    assert!(!out.status.success() && text(&out).1.contains("namespaces of their own"), "{:?}", text(&out));
    let link = |name: &str, from: &str, to: &str| {
        format!("[[topology.link]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"10Mbit\"\n")
    };
    let walk = |n: usize| {
        let links: Vec<&str> = (0..n).map(|i| if i % 2 == 0 { "\"x\"" } else { "\"y\"" }).collect();
        format!(
            "[topology]\nkind = \"graph\"\n{}{}{}[[topology.path]]\nname = \"p\"\nlinks = [{}]\nreverse = [\"z\"]\n[[flow]]\npaths = [\"p\"]\n",
            link("x", "S", "R"),
            link("y", "R", "S"),
            link("z", "R", "S"),
            links.join(", ")
        )
    };
    let dir = temp_dir();
    let long = write_scenario(&dir, "long.toml", &walk(257));
    let out = braid(&["emulate", "--describe", long.to_str().unwrap()]);
    assert!(!out.status.success() && text(&out).1.contains("crosses 257 links"), "{:?}", text(&out));
    let longest = write_scenario(&dir, "longest.toml", &walk(255));
    let out = braid(&["emulate", "--describe", longest.to_str().unwrap()]);
    assert!(out.status.success(), "{:?}", text(&out));
}

#[test]
fn help_explains_every_command() {
    let (out, _) = text(&braid(&["--help"]));
    for cmd in ["run", "list", "bench"] {
        assert!(out.contains(cmd), "--help lists {cmd}");
    }
    let (out, _) = text(&braid(&["run", "--help"]));
    for flag in ["--seed", "--duration", "--out", "--json"] {
        assert!(out.contains(flag), "run --help explains {flag}");
    }
}

#[test]
fn default_run_prints_json_and_writes_results() {
    let tmp = temp_dir();
    let dir = tmp.path();
    let out = braid(&["run", "--duration", "2s", "--json", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out).1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(v["schema"], "braid.run.v1");
    assert_eq!(v["duration_s"], 2.0);
    let flow = &v["flows"][0];
    assert_eq!((flow["cc"].as_str(), flow["scheduler"].as_str()), (Some("lia"), Some("minrtt")));
    assert!(flow["goodput_mbps"].as_f64().unwrap() > 10.0);
    assert_eq!(flow["subflows"].as_array().unwrap().len(), 2);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(written, v);
    let csv = std::fs::read_to_string(dir.join("subflows.csv")).unwrap();
    assert!(csv.starts_with("time_s,flow,path,goodput_mbps"));
    // 2 s at 100 ms: 21 samples (0.0 to 2.0) plus the final one, per subflow.
    assert!(csv.lines().count() > 40, "{} lines", csv.lines().count());
    assert!(std::fs::read_to_string(dir.join("links.csv")).unwrap().lines().count() > 20);
    let svg = std::fs::read_to_string(dir.join("timeseries.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "an SVG document");
    for panel in ["goodput (Mbit/s)", "congestion window (kB)", "smoothed RTT (ms)", "out-of-order queue (kB)"] {
        assert!(svg.contains(panel), "panel {panel}");
    }
    assert!(svg.contains("mptcp L1") && svg.contains("mptcp L2"), "one line per subflow");
    // Bulk application, fixed buffers: the summary says so.
    assert_eq!(flow["app_rate_mbps"], serde_json::Value::Null);
    assert_eq!(
        (flow["send_buffer_bytes"].as_u64(), flow["recv_buffer_bytes"].as_u64()),
        (Some(4 << 20), Some(6 << 20))
    );
}

/// The `braid` binary links mimalloc, while the library's tests (the golden
/// summaries among them) run on the system allocator: a result that hung on
/// the allocator (an address-ordered iteration, say) would pass those tests
/// and still differ for users. Every scenario with a golden summary is run
/// here through the binary and must give that summary, value for value.
#[test]
fn the_binary_gives_the_golden_summaries() {
    if std::env::var_os("BRAID_WIRE").is_some() {
        // As in the golden test: wire-format datagrams have other sizes.
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let golden = root.join("crates/braid-lab/tests/golden");
    let mut checked = 0;
    for dir in [root.join("scenarios"), golden.clone()] {
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for scenario in files.iter().filter(|p| p.extension().is_some_and(|x| x == "toml")) {
            let want = golden.join(scenario.file_stem().unwrap()).with_extension("json");
            let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&want).unwrap()).unwrap();
            let out = braid(&["run", "--json", "--quiet", scenario.to_str().unwrap()]);
            assert!(out.status.success(), "{}: {}", scenario.display(), text(&out).1);
            let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
            assert!(got == want, "{}: the binary's summary differs from the golden file", scenario.display());
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} scenarios found");
}

/// The time series name the flows the run has: with `--seed` (another draw
/// of Poisson arrivals) and a `--duration` longer than the file's (more
/// arrivals, to the new end). The series was built from the file's flows,
/// and the run panicked when another seed drew fewer.
#[test]
fn time_series_follow_the_flows_a_seed_or_a_longer_run_draws() {
    let tmp = temp_dir();
    let body = "name = \"arrivals\"\nduration = \"3s\"\n[topology]\nkind = \"hybrid-access\"\n\
        [[topology.link]]\nname = \"L1\"\nrate = \"10Mbit\"\nrtt = \"10ms\"\n\
        [[flow]]\nname = \"f\"\nsize = \"10KB\"\narrival_rate = 10\n";
    let file = write_scenario(&tmp, "arrivals.toml", body);
    for (seed, duration) in [("1", "3s"), ("2", "3s"), ("3", "3s"), ("2", "6s")] {
        let dir = tmp.path().join(format!("out-{seed}-{duration}"));
        let args = [file.to_str().unwrap(), "--seed", seed, "--duration", duration, "--json", "--quiet"];
        let out = braid(&[&["run"][..], &args, &["--out", dir.to_str().unwrap()]].concat());
        assert!(out.status.success(), "seed {seed}, {duration}: {}", text(&out).1);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: std::collections::BTreeSet<&str> =
            v["flows"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        let csv = std::fs::read_to_string(dir.join("subflows.csv")).unwrap();
        let in_csv: std::collections::BTreeSet<&str> =
            csv.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
        assert_eq!(in_csv, names, "seed {seed}, {duration}");
        let last = names.iter().map(|n| n.trim_start_matches("f-").parse::<usize>().unwrap()).max().unwrap();
        assert!(duration == "3s" || last > 40, "arrivals to the end of 6 s: {} flows", last + 1);
    }
    // A run so long that its arrivals would be too many to draw is refused
    // at once, as the same `duration` in the file is.
    let t0 = std::time::Instant::now();
    let out = braid(&["run", file.to_str().unwrap(), "--duration", "1000000s", "--check"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("flow[0].arrival_rate") && err.contains("about 10000000 flows"), "{err}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(10), "{:?}", t0.elapsed());
}

/// A scenario or campaign path that never ends (/dev/zero), or a file far
/// larger than any scenario, is refused at once: it was read until memory
/// ran out.
#[test]
fn endless_input_files_are_refused() {
    let tmp = temp_dir();
    let campaign = write_scenario(
        &tmp,
        "c.toml",
        "base = \"/dev/zero\"\n[[axis]]\nname = \"cc\"\nkey = \"flow.0.cc\"\nvalues = [\"lia\"]\n",
    );
    let out = tmp.path().join("out");
    for args in
        [vec!["run", "/dev/zero", "--check"], vec!["sweep", campaign.to_str().unwrap(), "--out", out.to_str().unwrap()]]
    {
        let o = braid(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("/dev/zero") && err.contains("larger than 16 MiB"), "{args:?}: {err}");
    }
}

#[test]
fn table_shows_reordering_and_delay_per_flow() {
    let (out, err) = text(&braid(&["run", "--duration", "2s", "--quiet"]));
    let line = out.lines().find(|l| l.contains("out-of-order queue mean")).unwrap_or_else(|| panic!("{out}{err}"));
    assert!(line.contains("write-to-read delay (send buffer included) mean") && line.contains("p99"), "{line}");
}

/// A results folder that cannot be written is refused before the run: no
/// table, no wasted simulation.
#[test]
fn unwritable_out_is_refused_before_the_run() {
    let dir = temp_dir();
    let file = write_scenario(&dir, "not-a-folder", "");
    let out = braid(&["run", "--duration", "2s", "--quiet", "--out", file.join("results").to_str().unwrap()]);
    let (stdout, err) = text(&out);
    println!("{err}");
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("cannot write results"), "{err}");
    assert!(stdout.is_empty(), "the run went ahead: {stdout}");
}

/// Questionable inputs and obviously huge runs get a warning with an
/// estimate before anything runs; `--check` stops there.
#[test]
fn warnings_and_estimates_come_before_the_run() {
    let out = braid(&["run", "--duration", "1000000s", "--check"]);
    let (stdout, err) = text(&out);
    println!("{stdout}{err}");
    assert!(out.status.success());
    assert!(err.contains("warning: this run will take long") && err.contains("of CPU"), "{err}");
    assert!(stdout.contains("valid") && stdout.contains("estimate"), "{stdout}");

    let flows: String = (0..400).map(|i| format!("[[flow]]\nname = \"f{i}\"\nsubflows = 2\n")).collect();
    let dir = temp_dir();
    let crowded = write_scenario(
        &dir,
        "crowded.toml",
        &format!("sample_interval = \"1ms\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"1Gbit\"\n{flows}"),
    );
    let out = dir.path().join("results");
    let (_, err) = text(&braid(&["run", crowded.to_str().unwrap(), "--check", "--out", out.to_str().unwrap()]));
    assert!(err.contains("time series will be large") && err.contains("GB"), "{err}");
    let (_, err) = text(&braid(&["run", crowded.to_str().unwrap(), "--check", "--json"]));
    assert!(!err.contains("warning"), "nothing is kept without --out: {err}");

    let late = write_scenario(
        &dir,
        "late.toml",
        "duration = \"10s\"\n[topology]\nkind = \"hybrid-access\"\n[[topology.link]]\nrate = \"10Mbit\"\n[[flow]]\nstart = \"11s\"\n",
    );
    let (_, err) = text(&braid(&["run", late.to_str().unwrap(), "--check"]));
    assert!(err.contains("late.toml") && err.contains("`flow[0].start`"), "{err}");
    // `bench FILE` and `compare` warn too (compare before it looks for its testbed).
    let (_, err) = text(&braid(&["bench", late.to_str().unwrap(), "--repeat", "1"]));
    assert!(err.contains("warning:") && err.contains("`flow[0].start`"), "bench: {err}");
    let (_, err) = text(&braid(&["compare", late.to_str().unwrap(), "--testbed", "/nonexistent"]));
    assert!(err.contains("warning:") && err.contains("`flow[0].start`"), "compare: {err}");
}

/// One point of the bench series prints its figures as `key=value` pairs:
/// the cost per packet of the best of the repeats and their median.
#[test]
fn bench_point_reports_cost_per_packet() {
    let out = braid(&["bench", "--flows", "10", "--duration", "200ms", "--repeat", "3"]);
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "{err}");
    let field = |k: &str| -> f64 {
        let v = stdout.split_whitespace().find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='));
        v.unwrap_or_else(|| panic!("{k} in {stdout}")).parse().unwrap()
    };
    assert_eq!(field("flows"), 10.0);
    // CPU time has scheduler-tick resolution: a window this short may read 0.
    assert!(field("delivered_pkts") > 1000.0 && field("ns_per_pkt") >= 0.0, "{stdout}");
    assert!(field("median_ns_per_pkt") >= field("ns_per_pkt"), "{stdout}");
    assert!((2.0..5.0).contains(&field("events_per_pkt")), "{stdout}");
    // Linux reports steal time (zero on a machine of its own).
    assert!(field("stolen_ms") >= 0.0, "{stdout}");
    // A bad access rate is refused with the scenario's message, point or series.
    for args in [&["bench", "--flows", "10", "--access-rate", "fast"][..], &["bench", "--access-rate", "0bit"]] {
        let out = braid(args);
        let (_, err) = text(&out);
        assert!(!out.status.success() && err.contains("--access-rate") && err.contains("access_rate"), "{err}");
    }
    // Options the two-path point and a scenario file would not use are refused, not ignored.
    for args in [&["bench", "--two-path", "--ack-every", "1"][..], &["bench", "--two-path", "--duration", "1s"]] {
        let out = braid(args);
        let (_, err) = text(&out);
        assert!(!out.status.success() && err.contains("cannot be used with"), "{args:?}: {err}");
    }
}

#[test]
fn list_names_the_algorithms() {
    let (out, _) = text(&braid(&["list"]));
    for name in ["reno", "lia", "minrtt"] {
        assert!(out.contains(name));
    }
}

/// A results folder that takes no files fails before the reproduction
/// runs (it failed after the whole run).
#[test]
fn repro_checks_its_results_folder_first() {
    let t0 = std::time::Instant::now();
    let out = braid(&["repro", "shared-bottleneck", "--out", "/proc/self"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/proc/self: cannot write results"), "{err}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "failed after {:?}", t0.elapsed());
}
