//! The time-series figure of a run, as seed 004 draws one per scheduler:
//! per-subflow goodput, congestion window and smoothed RTT, and the
//! receiver's connection-level out-of-order queue, stacked over time.

use std::path::Path;

use braid_sim::Sim;
use plotters::prelude::*;

/// One line of one panel.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Builds the four panels' series from the simulator's samples: goodput
/// (Mbit/s), congestion window (kB) and smoothed RTT (ms) per subflow, and
/// each flow's out-of-order queue (kB).
pub fn series(sim: &Sim, flow_paths: &[Vec<String>]) -> [Vec<Series>; 4] {
    let rec = sim.recorder();
    let mut panels: [Vec<Series>; 4] = Default::default();
    for (f, paths) in flow_paths.iter().enumerate() {
        let name = &sim.flows()[f].name;
        for (s, path) in paths.iter().enumerate() {
            let rows: Vec<_> =
                rec.subflows.iter().filter(|r| r.flow as usize == f && r.subflow as usize == s).collect();
            let label = format!("{name} {path}");
            let goodput = rows
                .windows(2)
                .filter(|w| w[1].time > w[0].time)
                .map(|w| {
                    let dt = (w[1].time - w[0].time).as_secs_f64();
                    (w[1].time.as_secs_f64(), (w[1].received_new - w[0].received_new) as f64 * 8.0 / dt / 1e6)
                })
                .collect();
            panels[0].push(Series { label: label.clone(), points: goodput });
            let cwnd = rows.iter().map(|r| (r.time.as_secs_f64(), r.cwnd as f64 / 1e3)).collect();
            panels[1].push(Series { label: label.clone(), points: cwnd });
            let srtt = rows.iter().filter_map(|r| Some((r.time.as_secs_f64(), r.srtt?.as_millis_f64()))).collect();
            panels[2].push(Series { label, points: srtt });
        }
        let ooo = rec
            .subflows
            .iter()
            .filter(|r| r.flow as usize == f && r.subflow == 0)
            .map(|r| (r.time.as_secs_f64(), r.ooo_bytes as f64 / 1e3))
            .collect();
        panels[3].push(Series { label: name.clone(), points: ooo });
    }
    panels
}

/// Writes the figure to `file` (SVG).
pub fn write_timeseries(file: &Path, sim: &Sim, flow_paths: &[Vec<String>]) -> Result<(), String> {
    let titles = ["goodput (Mbit/s)", "congestion window (kB)", "smoothed RTT (ms)", "out-of-order queue (kB)"];
    write_panels(file, &titles, &series(sim, flow_paths), sim.now().as_secs_f64())
}

/// Writes panels stacked top to bottom, one title each, over time 0 to
/// `end` seconds (SVG, 250 pixels per panel).
pub fn write_panels(file: &Path, titles: &[&str], panels: &[Vec<Series>], end: f64) -> Result<(), String> {
    let end = end.max(1e-3);
    let root = SVGBackend::new(file, (900, 250 * panels.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (area, (title, lines)) in root.split_evenly((panels.len(), 1)).iter().zip(titles.iter().zip(panels)) {
        let top = lines.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max).max(1e-3) * 1.05;
        let mut chart = ChartBuilder::on(area)
            .caption(*title, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..end, 0.0..top)
            .map_err(|e| e.to_string())?;
        chart.configure_mesh().x_desc("time (s)").max_light_lines(2).draw().map_err(|e| e.to_string())?;
        for (k, s) in lines.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(1)))
                .map_err(|e| e.to_string())?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}
