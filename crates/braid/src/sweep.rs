//! `braid sweep`: run a campaign file's matrix of runs, or merge shards.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use braid_lab::campaign::{self, Overrides};
use braid_lab::sweep::{self, Progress, Shard, SweepOptions};
use braid_proto::Duration;
use clap::{Args, Subcommand};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    merge: Option<SweepCommand>,
    /// Campaign file (TOML): see docs/campaign.md and campaigns/.
    file: Option<PathBuf>,
    /// Results folder (created if missing; an interrupted sweep resumes in it). Default:
    /// results/NAME, NAME the campaign's `name`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once (default: one per core).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// Run only the K-th of N disjoint slices (e.g. 3/8); merge the slices with `braid sweep merge`.
    #[arg(long)]
    shard: Option<Shard>,
    /// Seeds per cell, 1..=N (overrides the campaign's `seeds`).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::whole_number(1, 1000))]
    seeds: Option<u64>,
    /// Simulated time per run, e.g. "5s" (overrides the campaign's `duration`).
    #[arg(long, allow_hyphen_values = true, value_parser = crate::parse_duration)]
    duration: Option<Duration>,
    /// Add the axes' `extra` values (Braid's other algorithms) as extra columns.
    #[arg(long)]
    extra: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand)]
enum SweepCommand {
    /// Merge the results folders of shards (or partial sweeps) of one campaign into one.
    Merge {
        /// Results folders to merge.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged results go.
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn cmd_sweep(args: SweepArgs) -> Result<(), String> {
    if let Some(SweepCommand::Merge { dirs, out }) = args.merge {
        let o = sweep::merge(&dirs, &out).map_err(|e| e.to_string())?;
        println!(
            "{} of {} runs in {} ({} copied by this merge): runs.csv, scores.json, report/index.html",
            o.present,
            o.planned,
            out.display(),
            o.copied
        );
        if let Some(why) = o.unscored {
            println!("{why}");
        }
        return Ok(());
    }
    let file = args.file.ok_or("name a campaign file: braid sweep FILE (see docs/campaign.md)")?;
    let c = campaign::load(&file).map_err(|e| e.to_string())?;
    let out = args.out.unwrap_or_else(|| PathBuf::from("results").join(&c.name));
    let opts = SweepOptions {
        jobs: args.jobs.map(|j| j as usize),
        shard: args.shard,
        overrides: Overrides { seeds: args.seeds, duration: args.duration, extra: args.extra },
    };
    let started = Instant::now();
    let reporter = Reporter::new(args.quiet);
    let outcome = sweep::sweep(&c, &out, &opts, &|p| reporter.report(p)).map_err(|e| e.to_string())?;
    reporter.finish();
    if !args.quiet {
        eprintln!(
            "{} runs done in {:.1} s ({} already finished, skipped); {} in this slice, {} in the plan",
            outcome.ran,
            started.elapsed().as_secs_f64(),
            outcome.skipped,
            outcome.in_slice,
            outcome.planned
        );
    }
    println!("results in {}: runs.csv, scores.json, report/index.html", out.display());
    if let Some(why) = c.unscored() {
        println!("{why}");
    }
    Ok(())
}

/// A progress bar on a terminal, plain lines otherwise (every 5% or 10 s).
struct Reporter {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    state: Mutex<(Instant, Instant)>,
}

impl Reporter {
    fn new(quiet: bool) -> Self {
        let terminal = std::io::stderr().is_terminal();
        Reporter { bar: None, plain: !quiet && !terminal, state: Mutex::new((Instant::now(), Instant::now())) }
            .with_bar(!quiet && terminal)
    }

    fn with_bar(mut self, on: bool) -> Self {
        if on {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} sweep [{bar:40}] {pos}/{len} runs ({per_sec}, ETA {eta}) {msg}",
                )
                .expect("static template")
                .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
        self
    }

    fn report(&self, p: Progress) {
        match p {
            Progress::Start { in_slice, to_run } => {
                if let Some(b) = &self.bar {
                    b.set_length(to_run as u64);
                    b.set_message(format!("({} finished before)", in_slice - to_run));
                } else if self.plain {
                    eprintln!("sweep: {to_run} runs to do ({} of {in_slice} finished before)", in_slice - to_run);
                }
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                *s = (Instant::now(), Instant::now());
            }
            Progress::Finished { done, to_run, .. } => {
                if let Some(b) = &self.bar {
                    b.set_position(done as u64);
                } else if self.plain {
                    let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    let step = (to_run / 20).max(1);
                    if done % step == 0 || done == to_run || s.1.elapsed().as_secs() >= 10 {
                        s.1 = Instant::now();
                        let secs = s.0.elapsed().as_secs_f64();
                        let rate = done as f64 / secs.max(1e-9);
                        let eta = (to_run - done) as f64 / rate.max(1e-9);
                        eprintln!("sweep: {done}/{to_run} runs, {rate:.1} runs/s, {secs:.0} s elapsed, ETA {eta:.0} s");
                    }
                }
            }
            Progress::Warning(w) => match &self.bar {
                Some(b) => b.println(format!("warning: {w}")),
                None => eprintln!("warning: {w}"),
            },
            Progress::Aggregating => {
                if let Some(b) = &self.bar {
                    b.set_message("writing runs.csv, scores.json, report");
                } else if self.plain {
                    eprintln!("sweep: writing runs.csv, scores.json, report/index.html");
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
