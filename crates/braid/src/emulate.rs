//! `braid emulate`: a scenario's links applied to real packets between two
//! network namespaces (crate `braid-emu`, docs/emulator.md).

use std::io::Write;
use std::path::PathBuf;

use braid_emu::{plan, signals, Config, Emulator, Report};
use braid_lab::scenario;
use braid_proto::Duration;
use braid_sim::loss::LossSpec;
use braid_sim::{QueueLimit, Topology};

/// Emulate a scenario's links for real packets (root, Linux).
#[derive(clap::Args)]
#[command(long_about = "Emulate a scenario's links for real packets, in real time (root, Linux).\n\n\
    Creates one TUN device per path in the client namespace (emu0, emu1, ...) and one (emu) in the\n\
    server namespace, gives them the addresses of docs/emulator.md (client path i 198.18.{i+1}.2,\n\
    server 198.18.0.2) and forwards packets between them through the scenario's links: rate (or\n\
    a mahimahi delivery trace), queue, RED or random drop, loss, policer, MTU and outages per\n\
    direction, as the simulator applies them. Both namespaces\n\
    must exist (`ip netns add`); scripts/testbed.sh builds the whole testbed.\n\n\
    Prints `ready` once packets flow, runs until SIGINT/SIGTERM or --duration, then prints each\n\
    link's counters. Outage and trace times count from `ready`.")]
pub struct Args {
    /// Scenario file (TOML) whose topology to emulate.
    file: PathBuf,
    /// Network namespace of the client (the sender of the data direction).
    #[arg(long, default_value = "braid-client")]
    client_ns: String,
    /// Network namespace of the server.
    #[arg(long, default_value = "braid-server")]
    server_ns: String,
    /// Seed of the links' random streams; overrides the scenario's `seed` (0 to 2^63 - 1).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::seed_range())]
    seed: Option<u64>,
    /// Stop after this long (e.g. "30s"); default: until SIGINT/SIGTERM.
    #[arg(long, allow_hyphen_values = true, value_parser = crate::parse_duration)]
    duration: Option<Duration>,
    /// Bursty loss on a link instead of its Bernoulli `loss`:
    /// LINK=P,R[,LOSS_GOOD,LOSS_BAD] (Gilbert–Elliott; defaults 0 and 1, fractions or percentages,
    /// e.g. L2=1%,25%). Repeatable.
    #[arg(long = "gilbert-elliott", value_name = "LINK=P,R[,GOOD,BAD]", value_parser = parse_gilbert_elliott)]
    gilbert_elliott: Vec<(String, LossSpec)>,
    /// Run the forwarding threads at normal priority. By default they run under SCHED_FIFO, as
    /// the kernel's own qdiscs run in softirq before any process: on a busy two-core machine that
    /// cuts the emulator's p99 added delay from 2-4 ms to under 1 ms (docs/emulator.md).
    #[arg(long)]
    no_realtime: bool,
    /// Print the counters as one JSON object (the address plan and `ready` then go to stderr).
    #[arg(long)]
    json: bool,
    /// Print one line per path (name, bottleneck rate in bit/s, its queue in bytes, one-way delay
    /// in ms, loss) and exit; scripts/testbed.sh reads this for its tbf shaper.
    #[arg(long)]
    describe: bool,
}

fn probability(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.parse::<f64>(),
    }
    .map_err(|_| {
        format!("cannot read {s:?} as a probability: expected a fraction like 0.01 or a percentage like 1%")
    })?;
    Ok(v)
}

fn parse_gilbert_elliott(s: &str) -> Result<(String, LossSpec), String> {
    let (link, values) =
        s.split_once('=').ok_or_else(|| format!("{s:?}: expected LINK=P,R[,LOSS_GOOD,LOSS_BAD], e.g. L2=1%,25%"))?;
    let v = values.split(',').map(probability).collect::<Result<Vec<_>, _>>()?;
    let spec = match v[..] {
        [p, r] => LossSpec::GilbertElliott { p, r, loss_good: 0.0, loss_bad: 1.0 },
        [p, r, loss_good, loss_bad] => LossSpec::GilbertElliott { p, r, loss_good, loss_bad },
        _ => return Err(format!("{s:?}: expected two values (P,R) or four (P,R,LOSS_GOOD,LOSS_BAD)")),
    };
    spec.validate().map_err(|e| format!("{s:?}: {e}"))?;
    Ok((link.trim().to_string(), spec))
}

/// Per path: name, bottleneck rate and queue, one-way delay, loss (in the
/// long run, with the `--gilbert-elliott` models in place), forward direction.
fn describe(t: &Topology, models: &[(String, LossSpec)]) -> Result<String, String> {
    let mut out = String::new();
    for p in &t.paths {
        // scripts/testbed.sh reads each line as words.
        if p.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("path {:?}: --describe needs names without spaces or control characters", p.name));
        }
        let links: Vec<_> = p.forward.iter().map(|&l| &t.links[l]).collect();
        let neck = links.iter().min_by_key(|l| l.rate_bps).expect("a path has links");
        let queue_bytes = match neck.queue {
            QueueLimit::Packets(n) => u64::from(n) * 1500,
            QueueLimit::Bytes(b) => b,
        };
        let delay: f64 = links.iter().map(|l| l.delay.as_millis_f64()).sum();
        let kept: f64 = links
            .iter()
            .map(|l| match models.iter().find(|(name, _)| *name == l.name) {
                Some((_, model)) => 1.0 - model.stationary_loss(),
                None => 1.0 - l.loss.stationary_loss(),
            })
            .product();
        out += &format!("{} {} {} {:.3} {:.6}\n", p.name, neck.rate_bps, queue_bytes, delay, 1.0 - kept);
    }
    Ok(out)
}

fn table(r: &Report) -> String {
    let mut out = format!(
        "{:<12} {:>10} {:>14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "link", "packets", "bytes", "queue", "early", "random", "down", "policed", "mtu"
    );
    for l in &r.links {
        let s = &l.stats;
        out += &format!(
            "{:<12} {:>10} {:>14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            l.name,
            s.packets_sent,
            s.bytes_sent,
            s.drops_queue,
            s.drops_early,
            s.drops_random,
            s.drops_down,
            s.drops_policed,
            s.drops_mtu
        );
    }
    out += &format!(
        "(drops by cause in the last six columns; malformed {}, unroutable {}, write errors {}, buffers {})\n",
        r.malformed, r.unroutable, r.write_errors, r.buffers
    );
    if let Some(why) = &r.realtime_refused {
        out += &format!("warning: no real-time priority ({why}): delays depended on what else ran\n");
    }
    out
}

fn json(r: &Report) -> String {
    let links: Vec<_> = r
        .links
        .iter()
        .map(|l| {
            let s = &l.stats;
            serde_json::json!({
                "name": l.name, "packets_sent": s.packets_sent, "bytes_sent": s.bytes_sent,
                "drops_queue": s.drops_queue, "drops_early": s.drops_early,
                "drops_random": s.drops_random, "drops_down": s.drops_down,
                "drops_policed": s.drops_policed, "drops_mtu": s.drops_mtu,
            })
        })
        .collect();
    serde_json::json!({
        "links": links, "malformed": r.malformed, "unroutable": r.unroutable,
        "write_errors": r.write_errors, "buffers": r.buffers, "error": r.error,
        "realtime_refused": r.realtime_refused,
    })
    .to_string()
        + "\n"
}

pub fn run(a: Args) -> Result<(), String> {
    let sc = scenario::load(&a.file).map_err(|e| e.to_string())?;
    let cfg = Config {
        topology: sc.topology,
        seed: a.seed.unwrap_or(sc.seed),
        loss: a.gilbert_elliott,
        client_ns: a.client_ns,
        server_ns: a.server_ns,
        realtime: !a.no_realtime,
    };
    cfg.check()?;
    if a.describe {
        crate::emit(&describe(&cfg.topology, &cfg.loss)?);
        return Ok(());
    }
    signals::install();
    let emu = Emulator::start(&cfg)?;
    let started = std::time::Instant::now();
    let names: Vec<String> = cfg.topology.paths.iter().map(|p| p.name.clone()).collect();
    // With --json, standard output holds the report alone.
    let mut out: Box<dyn Write> = match a.json {
        true => Box::new(std::io::stderr().lock()),
        false => Box::new(std::io::stdout().lock()),
    };
    let _ = writeln!(out, "{}ready", plan::describe(&names));
    let _ = out.flush();
    drop(out);
    let limit = a.duration.map(|d| std::time::Duration::from_nanos(d.as_nanos()));
    let stopped = emu.stop_flag();
    while !signals::stop_requested()
        && !stopped.load(std::sync::atomic::Ordering::Relaxed)
        && limit.is_none_or(|l| started.elapsed() < l)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let report = emu.stop();
    crate::emit(&if a.json { json(&report) } else { table(&report) });
    report.error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gilbert_elliott_arguments() {
        assert_eq!(
            parse_gilbert_elliott("L2=1%,0.25").unwrap(),
            ("L2".into(), LossSpec::GilbertElliott { p: 0.01, r: 0.25, loss_good: 0.0, loss_bad: 1.0 })
        );
        assert_eq!(
            parse_gilbert_elliott("L1=0.1,0.5,0,50%").unwrap().1,
            LossSpec::GilbertElliott { p: 0.1, r: 0.5, loss_good: 0.0, loss_bad: 0.5 }
        );
        for bad in ["L2", "L2=1%", "L2=x,1", "L2=0,0", "L2=2,0.1", "L2=1,2,3"] {
            assert!(parse_gilbert_elliott(bad).is_err(), "{bad}");
        }
    }

    /// Every drop cause has its column and its JSON field, the policer's
    /// and the MTU's included.
    #[test]
    fn the_report_counts_each_drop_cause() {
        let stats = braid_sim::LinkStats {
            drops_queue: 1,
            drops_random: 2,
            drops_policed: 3,
            drops_mtu: 4,
            ..Default::default()
        };
        let r = Report { links: vec![braid_emu::LinkReport { name: "L1".into(), stats }], ..Default::default() };
        let t = table(&r);
        assert!(t.lines().next().unwrap().ends_with("policed       mtu"), "{t}");
        assert!(
            t.lines().nth(1).unwrap().split_whitespace().collect::<Vec<_>>().ends_with(&["1", "0", "2", "0", "3", "4"]),
            "{t}"
        );
        let j: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        let link = &j["links"][0];
        assert_eq!(
            (link["drops_queue"].as_u64(), link["drops_policed"].as_u64(), link["drops_mtu"].as_u64()),
            (Some(1), Some(3), Some(4))
        );
    }

    #[test]
    fn describes_each_path_bottleneck() {
        let sc = scenario::parse(braid_lab::DEFAULT_SCENARIO, "default").unwrap();
        let d = describe(&sc.topology, &[]).unwrap();
        // L1: 100 Mbit/s, 1 BDP of 10 ms = 84 packets, 5 ms one way; L2 0.05% loss.
        assert_eq!(d, "L1 100000000 126000 5.000 0.000000\nL2 100000000 250500 10.000 0.000500\n");
        // A Gilbert-Elliott model in place of L2's: p / (p + r) of the time
        // in the bad state, where every packet is lost.
        let model = parse_gilbert_elliott("L2=1%,0.25").unwrap();
        let d = describe(&sc.topology, &[model]).unwrap();
        assert_eq!(d, "L1 100000000 126000 5.000 0.000000\nL2 100000000 250500 10.000 0.038462\n");
        // scripts/testbed.sh reads words: a name with a space is refused.
        let spaced = braid_lab::DEFAULT_SCENARIO.replace("\"L1\"", "\"my link\"");
        let sc = scenario::parse(&spaced, "spaced").unwrap();
        assert!(describe(&sc.topology, &[]).unwrap_err().contains("\"my link\""));
    }
}
