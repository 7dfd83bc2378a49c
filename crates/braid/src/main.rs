//! `braid`: run multipath transport experiments in Braid's simulator.

mod buffer;
mod repro;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use braid_lab::report::TimeSeriesWriter;
use braid_lab::{bench, estimate, report, run, run_with, scenario, RunOptions, Scenario};
use braid_proto::{cc, sched, Duration};
use clap::{Parser, Subcommand};

mod compare;
mod emulate;
mod net;

/// mimalloc rather than glibc's allocator: with thousands of flows the
/// simulator touches per-flow state spread over hundreds of megabytes, and
/// mimalloc's layout of it costs fewer misses. In alternating rounds of
/// `braid bench --ack-every 1` pinned to one core it took 14% off the best
/// time at 10,000 flows (1,317 -> 1,129 ns a packet, faster in 9 of 10
/// rounds) and 4% at 1,000 (faster in 10 of 14), for 2% more at 10 flows
/// and 7-55 MB more peak memory. Results do
/// not depend on the allocator (every shipped scenario's summary is
/// byte-identical under both). docs/speed.md has the figures.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "braid",
    version,
    about = "Multipath TCP semantics, every multipath congestion controller and scheduler, in a fast deterministic simulator",
    long_about = "Braid runs multipath transport experiments in a deterministic packet-level simulator.\n\
                  The same scenario and seed always give byte-identical results.\n\n\
                  Start with `braid run`, which simulates the built-in default scenario\n\
                  (seed 004's two-path hybrid access, LIA + minRTT, 30 s)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scenario file (or the built-in default) and print a summary.
    #[command(long_about = "Simulate a scenario file (or the built-in default) and print a summary table.\n\n\
        Scenario files are TOML; see docs/scenarios.md and the examples in scenarios/.\n\
        With --out DIR the run also writes DIR/summary.json (schema in docs/summary-schema.md),\n\
        DIR/subflows.csv and DIR/links.csv (time series, one row per sample) and\n\
        DIR/timeseries.svg (goodput, cwnd, SRTT per subflow and the out-of-order queue over time).\n\n\
        Before simulating, braid warns about questionable inputs and about runs that will\n\
        obviously take long or write large time series, with an estimate (see --check).")]
    Run {
        /// Scenario file (TOML). Omit to run the built-in default, scenarios/hybrid-access.toml.
        file: Option<PathBuf>,
        /// Random seed; overrides the scenario's `seed` (0 to 2^63 - 1, what a scenario file's `seed` holds).
        #[arg(long, allow_negative_numbers = true, value_parser = seed_range())]
        seed: Option<u64>,
        /// Simulated time to run, e.g. "10s" or "500ms"; overrides the scenario's `duration`.
        #[arg(long, allow_hyphen_values = true, value_parser = parse_duration)]
        duration: Option<Duration>,
        /// Write summary.json, CSV time series and timeseries.svg into this folder (created if missing).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the summary as one JSON object on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Validate the scenario, print its warnings and an estimate of the run's cost, and exit without simulating.
        #[arg(long)]
        check: bool,
        /// No progress bar on stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a campaign: a matrix of scenarios x schedulers x controllers x seeds (any scenario key can be an axis).
    #[command(long_about = "Run every run of a campaign file in parallel and write DIR/runs.csv (one row per run),\n\
        DIR/runs/.../summary.json, DIR/scores.json (seed 004's PS_score and CCA_score) and DIR/report/index.html.\n\
        An interrupted sweep resumes where it stopped: runs already finished are never redone.\n\
        With --shard K/N only every N-th run is done; `braid sweep merge DIR... --out OUT` combines the slices.\n\
        The format is in docs/campaign.md; campaigns/heterogeneity.toml is seed 004's campaign.")]
    Sweep(sweep::SweepArgs),
    /// List the congestion controllers and schedulers a scenario can name.
    List,
    /// Measure simulator speed: the scaling series, or one scenario.
    #[command(long_about = "Measure simulator speed.\n\n\
        Without arguments: the series of the README. The two-path default (30 simulated seconds),\n\
        then N = 10, 100, 1000, 10000 two-subflow LIA flows on one dumbbell bottleneck of\n\
        N x 10 Mbit/s (20 ms RTT), each measured after a warm-up and in its own process:\n\
        CPU ns per delivered data packet (the best and the median of --repeat runs),\n\
        simulator events per packet, peak resident memory, and the CPU time a hypervisor\n\
        stole meanwhile (Linux's steal time: on a shared cloud machine, a point measured\n\
        while it was high is noisy).\n\n\
        With FILE: that scenario's whole run, --repeat times.\n\
        With --flows N: one point of the series (what the series runs in each child process).")]
    Bench {
        /// Scenario file to time instead of the series.
        file: Option<PathBuf>,
        /// How many times to run each measurement (the best, and for the series' points the median too, are reported).
        #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Measure one point of the series: this many flows.
        #[arg(long, conflicts_with = "file", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        flows: Option<u32>,
        /// Measure one point of the series: the two-path default scenario.
        #[arg(long, conflicts_with_all = ["file", "flows"])]
        two_path: bool,
        /// Acknowledge every Nth packet in the series' dumbbells (1 is htsim's setting; the
        /// two-path point and a FILE keep their scenario's).
        #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=64),
              conflicts_with_all = ["file", "two_path"])]
        ack_every: u32,
        /// Simulated time measured per dumbbell point, after a 1 s warm-up (default: enough for
        /// about 2 M packets; the two-path point and a FILE run their scenario's whole duration).
        #[arg(long, allow_hyphen_values = true, value_parser = parse_duration, conflicts_with_all = ["file", "two_path"])]
        duration: Option<Duration>,
        /// The series' access links' rate (a scenario rate, e.g. "1000Gbit"; default: the
        /// dumbbell's 10 Gbit/s, slower than the bottleneck from 1,000 flows on).
        #[arg(long, conflicts_with_all = ["file", "two_path"])]
        access_rate: Option<String>,
    },
    Emulate(emulate::Args),
    Compare(compare::Args),
    /// Re-run a published experiment of the seeds and print the paper's figures beside Braid's.
    #[command(
        long_about = "Re-run a published experiment of the seeds and print the paper's figures beside Braid's,\n\
        with a tolerance per figure and the paper's conclusions checked one by one; the figures go to\n\
        results/repro/NAME (or --out). `braid repro --list` names them; docs/reproductions.md records\n\
        the setups, the measured figures and every difference."
    )]
    Repro(repro::Args),
    /// Recommended send and receive buffers for a set of paths (seed 003's models).
    Buffer(buffer::Args),
    Send(net::send::Args),
    Recv(net::recv::Args),
}

/// Seeds a scenario file can hold too: TOML's integers stop at 2^63 - 1, so a
/// run's seed can always be written back into its file.
pub(crate) fn seed_range() -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    whole_number(0, i64::MAX as u64)
}

/// A parser of whole numbers from `lo` to `hi` that names a negative or
/// out-of-range value as such (clap's says "invalid digit").
pub(crate) fn whole_number(lo: u64, hi: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| match s.trim().parse::<i128>() {
        Ok(n) if (i128::from(lo)..=i128::from(hi)).contains(&n) => Ok(n as u64),
        Ok(n) => Err(format!("{n} is not in {lo}..={hi}")),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    braid_lab::units::parse_positive_duration(s)
}

fn load(file: &Option<PathBuf>) -> Result<Scenario, String> {
    match file {
        Some(p) => scenario::load(p).map_err(|e| e.to_string()),
        None => {
            scenario::parse(braid_lab::DEFAULT_SCENARIO, braid_lab::DEFAULT_SCENARIO_NAME).map_err(|e| e.to_string())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { file, seed, duration, out, json, check, quiet } => {
            cmd_run(&file, RunOptions { seed, duration }, out, json, check, quiet)
        }
        Command::Sweep(args) => sweep::cmd_sweep(args),
        Command::List => {
            cmd_list();
            Ok(())
        }
        Command::Bench { file: Some(file), repeat, .. } => cmd_bench_file(&file, repeat),
        Command::Bench { two_path: true, repeat, .. } => {
            cmd_bench_point(None, &Series { ack_every: 2, duration: None, repeat, access_rate: None })
        }
        Command::Bench { flows, repeat, ack_every, duration, access_rate, .. } => {
            let series = Series { ack_every, duration, repeat, access_rate };
            match flows {
                Some(n) => cmd_bench_point(Some(n as usize), &series),
                None => cmd_bench_series(&series),
            }
        }
        Command::Emulate(args) => emulate::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Repro(args) => repro::run(args),
        Command::Buffer(args) => buffer::run(args),
        Command::Send(args) => net::send::run(args),
        Command::Recv(args) => net::recv::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn cmd_run(
    file: &Option<PathBuf>,
    opts: RunOptions,
    out: Option<PathBuf>,
    json: bool,
    check: bool,
    quiet: bool,
) -> Result<(), String> {
    let loaded = load(file)?;
    let duration = opts.duration.unwrap_or(loaded.duration);
    // The flows the run has (another seed's, or arrivals to a longer end):
    // the warnings and the time series name them. A run so long that it
    // would draw too many flows is refused here.
    let scenario = opts.scenario(&loaded).map_err(|e| e.to_string())?;
    let cost = estimate::estimate(&scenario, duration, out.is_some());
    warn_about(&scenario, duration);
    for w in cost.warnings() {
        eprintln!("warning: {w}");
    }
    if check {
        emit(&format!("{}: valid\n{}\n", scenario.file, cost.describe()));
        return Ok(());
    }
    let cannot_write = |dir: &PathBuf, e: std::io::Error| format!("{}: cannot write results: {e}", dir.display());
    // Opened before the run, so a folder that cannot be written fails now.
    let mut timeseries = match &out {
        Some(dir) => Some(TimeSeriesWriter::create(dir, &scenario, duration).map_err(|e| cannot_write(dir, e))?),
        None => None,
    };
    let bar = if quiet { indicatif::ProgressBar::hidden() } else { indicatif::ProgressBar::new(1000) };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} simulating [{bar:40}] {percent:>3}% ({elapsed})")
            .expect("static template")
            .progress_chars("=> "),
    );
    let (_, summary) = run_with(&scenario, opts, &mut timeseries, &mut |f| bar.set_position((f * 1000.0) as u64))
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    if json {
        emit(&(serde_json::to_string(&summary).map_err(|e| e.to_string())? + "\n"));
    } else {
        emit(&report::table(&summary));
    }
    if let (Some(dir), Some(timeseries)) = (&out, timeseries) {
        timeseries.finish().and_then(|()| report::write_summary(dir, &summary)).map_err(|e| cannot_write(dir, e))?;
        if !json {
            emit(&format!("\nresults written to {}\n", dir.display()));
        }
    }
    Ok(())
}

/// Writes to stdout; a closed pipe (`braid run | head`) ends the program
/// quietly instead of panicking like `print!` would.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

fn cmd_list() {
    let mut text = String::from("congestion controllers (flow key `cc`):\n");
    for (name, what) in cc::ALGORITHMS {
        text += &format!("  {name:<12} {what}\n");
    }
    text += "\nschedulers (flow key `scheduler`):\n";
    for (name, what) in sched::ALGORITHMS {
        text += &format!("  {name:<12} {what}\n");
    }
    text += "\nscheduler settings (flow key `scheduler_settings = { ... }`):\n";
    for (name, owners, what) in sched::SETTINGS {
        text += &format!("  {name:<12} {:<10} {what}\n", owners.join(", "));
    }
    emit(&text);
}

/// Prints what in `scenario` is valid but probably not what was meant
/// ([`Scenario::warnings`]) for a run of `duration`.
fn warn_about(scenario: &Scenario, duration: Duration) {
    for w in scenario.warnings(duration) {
        eprintln!("warning: {w}");
    }
}

fn cmd_bench_file(file: &std::path::Path, repeat: u32) -> Result<(), String> {
    let scenario = load(&Some(file.to_path_buf()))?;
    warn_about(&scenario, scenario.duration);
    let mut walls = Vec::new();
    let (mut events, mut packets) = (0, 0);
    for i in 0..repeat {
        let t0 = std::time::Instant::now();
        let (_, summary) = run(&scenario, RunOptions::default(), &mut |_| {}).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        (events, packets) = (summary.events, summary.packets);
        eprintln!("run {}/{repeat}: {wall:.3} s wall, {:.2} M events/s", i + 1, events as f64 / wall / 1e6);
        walls.push(wall);
    }
    walls.sort_by(f64::total_cmp);
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    emit(&format!(
        "scenario          {}\nsimulated         {:.1} s\npackets per run   {packets}\nevents per run    {events}\nwall time         best {best:.3} s, median {median:.3} s\nspeed             {:.2} M packets/s, {:.2} M events/s (best), {:.1}x real time\npeak memory       {}\n",
        scenario.name,
        scenario.duration.as_nanos() as f64 / 1e9,
        packets as f64 / best / 1e6,
        events as f64 / best / 1e6,
        scenario.duration.as_nanos() as f64 / 1e9 / best,
        bench::peak_rss_bytes().map_or("-".into(), |b| format!("{:.1} MB", b as f64 / 1e6))
    ));
    Ok(())
}

/// Flows in the scaling series.
const SERIES: [usize; 4] = [10, 100, 1_000, 10_000];
/// Data packets each point of the series measures, by default.
const PACKETS_PER_POINT: f64 = 2e6;

/// How the series' points run.
struct Series {
    ack_every: u32,
    /// Measured window per point (default: about 2 M packets).
    duration: Option<Duration>,
    repeat: u32,
    access_rate: Option<String>,
}

/// One point of the series (`flows`, or the two-path default for `None`),
/// printed as one line `key=value ...` for the parent process.
fn cmd_bench_point(flows: Option<usize>, series: &Series) -> Result<(), String> {
    let (scenario, warmup, window) = if let Some(flows) = flows {
        let pkts_per_s = (flows as u64 * bench::MBIT_PER_FLOW * 1_000_000) as f64 / 8.0 / 1500.0;
        let window =
            series.duration.unwrap_or(Duration::from_millis((PACKETS_PER_POINT / pkts_per_s * 1e3).ceil() as u64));
        let scenario = bench::dumbbell(flows, series.ack_every, series.access_rate.as_deref())
            .map_err(|e| format!("--access-rate: {e}"))?;
        (scenario, Duration::from_secs(1), window)
    } else {
        // The two-path default, its whole 30 s run.
        (load(&None)?, Duration::ZERO, Duration::from_secs(30))
    };
    let mut runs = Vec::new();
    for _ in 0..series.repeat {
        runs.push(bench::measure(&scenario, warmup, window).map_err(|e| e.to_string())?);
    }
    // On a shared machine the best run is the closest to the code's own
    // cost; the median beside it (the upper one of an even count) shows how
    // far the host moved the rest.
    runs.sort_by(|a, b| a.cpu_s.total_cmp(&b.cpu_s));
    let (m, median) = (runs.first().expect("at least one repeat"), &runs[runs.len() / 2]);
    emit(&format!(
        "flows={} simulated_s={:.3} delivered_pkts={} events={} cpu_s={:.4} ns_per_pkt={:.1} median_ns_per_pkt={:.1} events_per_pkt={:.2} peak_rss_mb={:.1} stolen_ms={}\n",
        flows.map_or("two-path".into(), |n| n.to_string()),
        window.as_nanos() as f64 / 1e9,
        m.delivered_packets,
        m.events,
        m.cpu_s,
        m.ns_per_packet(),
        median.ns_per_packet(),
        m.events_per_packet(),
        bench::peak_rss_bytes().unwrap_or(0) as f64 / 1e6,
        m.stolen_ms.map_or("-".into(), |ms| ms.to_string())
    ));
    Ok(())
}

/// A point line's `stolen_ms` as a share of its `cpu_s` (both from the
/// window of the best repeat).
fn stolen_share(line: &str) -> String {
    let field = |k: &str| point_field(line, k)?.parse::<f64>().ok();
    match (field("stolen_ms"), field("cpu_s")) {
        (Some(ms), Some(cpu)) if cpu > 0.0 => format!("{:.1}%", ms / 1e3 / cpu * 100.0),
        _ => "-".into(),
    }
}

/// The value of `key` in a point line (`key=value ...`).
fn point_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace().find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The series, each point in a child process so its peak memory is its own.
fn cmd_bench_series(series: &Series) -> Result<(), String> {
    let Series { ack_every, duration, repeat, .. } = *series;
    // A bad rate is refused before the first point, not minutes into the series.
    bench::dumbbell(1, ack_every, series.access_rate.as_deref()).map_err(|e| format!("--access-rate: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the braid executable: {e}"))?;
    let mut text = format!(
        "{:<46} {:>9} {:>12} {:>10} {:>10} {:>11} {:>9} {:>9}\n",
        "experiment", "sim s", "data pkts", "ns/pkt", "median", "events/pkt", "peak MB", "stolen"
    );
    for flows in std::iter::once(None).chain(SERIES.map(Some)) {
        let mut cmd = std::process::Command::new(&exe);
        match flows {
            Some(n) => cmd.args(["bench", "--flows", &n.to_string(), "--ack-every", &ack_every.to_string()]),
            None => cmd.args(["bench", "--two-path"]),
        };
        cmd.args(["--repeat", &repeat.to_string()]);
        if let (Some(d), Some(_)) = (duration, flows) {
            cmd.args(["--duration", &format!("{}ns", d.as_nanos())]);
        }
        if let (Some(r), Some(_)) = (&series.access_rate, flows) {
            cmd.args(["--access-rate", r]);
        }
        let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("bench point failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        eprint!("{line}");
        let field = |k: &str| point_field(&line, k).unwrap_or("-");
        let label = match flows {
            Some(n) => match &series.access_rate {
                Some(r) => format!("dumbbell {n} flows (ack {ack_every}, access {r})"),
                None => format!("dumbbell {n} flows (ack every {ack_every})"),
            },
            None => "two-path default (ack every 2nd)".to_string(),
        };
        text += &format!(
            "{label:<46} {:>9} {:>12} {:>10} {:>10} {:>11} {:>9} {:>9}\n",
            field("simulated_s"),
            field("delivered_pkts"),
            field("ns_per_pkt"),
            field("median_ns_per_pkt"),
            field("events_per_pkt"),
            field("peak_rss_mb"),
            stolen_share(&line)
        );
    }
    text += "ns/pkt: the best of --repeat runs; median: their median (far above the best, the host was busy).\n";
    text += "stolen: CPU time the hypervisor gave to other machines during the measured windows, as a share of\n\
             the measured CPU time (over every CPU of the machine); above a few per cent the figure is the host's too.\n";
    emit(&text);
    Ok(())
}
