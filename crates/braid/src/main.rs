//! `braid`: run multipath transport experiments in Braid's simulator.

use std::path::PathBuf;
use std::process::ExitCode;

use braid_lab::report::TimeSeriesWriter;
use braid_lab::{estimate, report, run, run_with, scenario, RunOptions, Scenario};
use braid_proto::{cc, sched, Duration};
use clap::{Parser, Subcommand};

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
        /// Random seed; overrides the scenario's `seed`.
        #[arg(long)]
        seed: Option<u64>,
        /// Simulated time to run, e.g. "10s" or "500ms"; overrides the scenario's `duration`.
        #[arg(long, value_parser = parse_duration)]
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
    /// List the congestion controllers and schedulers a scenario can name.
    List,
    /// Measure simulator speed on a scenario (default: the built-in one).
    #[command(long_about = "Measure simulator speed: wall time and simulator events per wall-clock second\n\
        for a scenario (default: the built-in one, 30 simulated seconds).\n\
        Runs it --repeat times and reports the best and median.")]
    Bench {
        /// Scenario file; omit for the built-in default.
        file: Option<PathBuf>,
        /// How many times to run it.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = braid_lab::units::parse_duration(s)?;
    if d == Duration::ZERO {
        return Err("must be longer than zero".into());
    }
    Ok(d)
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
        Command::List => {
            cmd_list();
            Ok(())
        }
        Command::Bench { file, repeat } => cmd_bench(&file, repeat),
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
    let scenario = load(file)?;
    let duration = opts.duration.unwrap_or(scenario.duration);
    let cost = estimate::estimate(&scenario, duration, out.is_some());
    for w in scenario.warnings(duration).into_iter().chain(cost.warnings()) {
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

fn cmd_bench(file: &Option<PathBuf>, repeat: u32) -> Result<(), String> {
    let scenario = load(file)?;
    let mut walls = Vec::new();
    let (mut events, mut packets) = (0, 0);
    for i in 0..repeat {
        let t0 = std::time::Instant::now();
        let (_, summary) = run(&scenario, RunOptions::default(), &mut |_| {}).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        (events, packets) = (summary.events, summary.packets);
        eprintln!(
            "run {}/{repeat}: {wall:.3} s wall, {:.2} M packets/s, {:.2} M events/s",
            i + 1,
            packets as f64 / wall / 1e6,
            events as f64 / wall / 1e6
        );
        walls.push(wall);
    }
    walls.sort_by(f64::total_cmp);
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    emit(&format!(
        "scenario          {}\nsimulated         {:.1} s\npackets per run   {packets}\nevents per run    {events}\nwall time         best {best:.3} s, median {median:.3} s\nspeed             {:.2} M packets/s, {:.2} M events/s (best), {:.1}x real time\n",
        scenario.name,
        scenario.duration.as_secs_f64(),
        packets as f64 / best / 1e6,
        events as f64 / best / 1e6,
        scenario.duration.as_secs_f64() / best
    ));
    Ok(())
}
