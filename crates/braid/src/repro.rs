//! `braid repro`: the seeds' published experiments, side by side with Braid.

use std::path::PathBuf;

use braid_lab::repro::{self, Options};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// The experiment to reproduce (see --list).
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// List the reproductions and what each compares.
    #[arg(long, conflicts_with = "name")]
    list: bool,
    /// Seeds 1 to N to average over (default: the reproduction's own count, 1 to 10; with --reduced, 1 to 20).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::whole_number(1, 100))]
    seeds: Option<u64>,
    /// The reduced version the test suite runs: fewer points, shorter runs.
    #[arg(long)]
    reduced: bool,
    /// Folder for the figures (default: results/repro/NAME).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the outcome as one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<(), String> {
    if a.list {
        let mut text = String::new();
        for r in repro::ALL {
            text += &format!("{:<20} {}\n{:<20} {}\n", r.name, r.source, "", r.compares);
        }
        crate::emit(&text);
        return Ok(());
    }
    let name = a.name.unwrap_or_default();
    let r = repro::find(&name).ok_or_else(|| {
        let names: Vec<&str> = repro::ALL.iter().map(|r| r.name).collect();
        format!("no reproduction named {name:?}: allowed {}", names.join(", "))
    })?;
    let dir = a.out.unwrap_or_else(|| PathBuf::from("results/repro").join(r.name));
    // Checked before the run (minutes long for some): a folder that exists
    // but takes no files, such as /proc/self, failed only at the end.
    let probe = dir.join(".braid-write-check");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| format!("{}: cannot write results: {e}", dir.display()))?;
    if !a.json {
        eprintln!("running {} ({})...", r.name, r.source);
    }
    let started = std::time::Instant::now();
    let mut outcome = r.run(&Options { seeds: a.seeds, reduced: a.reduced })?;
    let wall = started.elapsed().as_secs_f64();
    outcome.metrics.insert("repro_wall_s".into(), wall.into());
    for (file, svg) in &outcome.figures {
        let path = dir.join(file);
        std::fs::write(&path, svg).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    if a.json {
        let mut v = serde_json::to_value(&outcome).map_err(|e| e.to_string())?;
        if let serde_json::Value::Object(m) = &mut v {
            for (k, x) in outcome.metrics.clone() {
                m.insert(k, x);
            }
        }
        crate::emit(&(v.to_string() + "\n"));
    } else {
        let files: Vec<String> = outcome.figures.iter().map(|(f, _)| dir.join(f).display().to_string()).collect();
        crate::emit(&format!("{}wall time {wall:.1} s\nfigures: {}\n", outcome.table(), files.join(", ")));
    }
    Ok(())
}
