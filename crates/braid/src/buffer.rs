//! `braid buffer`: each model's recommended send and receive buffer for a
//! set of paths (seed 003).

use braid_lab::buffer::{parse_path, recommend};
use clap::Args as ClapArgs;

#[derive(ClapArgs)]
pub struct Args {
    /// A path as RATE/RTT[/RTO], e.g. 100Mbit/10ms or 20Mbit/100ms/300ms; repeat for each path.
    #[arg(long = "path", required = true, value_parser = parse_path)]
    paths: Vec<braid_lab::buffer::PathSpec>,
    /// Linux's net.ipv4.tcp_adv_win_scale for eq. 1 (1 since Linux 3.x; 2 before).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    adv_win_scale: u32,
}

pub fn run(a: Args) -> Result<(), String> {
    let mut text = format!("{:<30} {:>14} {:>14}   {}\n", "model", "send buffer", "recv buffer", "formula");
    for r in recommend(&a.paths, a.adv_win_scale) {
        text += &format!("{:<30} {:>14} {:>14}   {}\n", r.model, human(r.send_bytes), human(r.recv_bytes), r.formula);
    }
    text += "RTO, when not given: 200 ms (Linux's floor) + RTT\n";
    crate::emit(&text);
    Ok(())
}

fn human(bytes: f64) -> String {
    match bytes {
        b if b >= 1024.0 * 1024.0 => format!("{:.2} MiB", b / 1024.0 / 1024.0),
        b if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b => format!("{b:.0} B"),
    }
}
