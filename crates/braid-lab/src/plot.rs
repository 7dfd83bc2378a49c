//! The time-series figure of a run, as seed 004 draws one per scheduler:
//! per-subflow goodput, congestion window and smoothed RTT, and the
//! receiver's connection-level out-of-order queue, stacked over time.
//!
//! The figure's points are collected while the run samples ([`PlotData`] is
//! a sample sink) and thinned as they come: at most [`MAX_POINTS`] per line
//! and lines for the first [`MAX_LINES`] subflows and flows, so a long or
//! crowded run neither fills memory nor draws an unreadable figure.

use std::path::Path;

use braid_proto::Duration;
use braid_sim::{LinkSample, SampleSink, SubflowSample};
use plotters::prelude::*;

use crate::scenario::Scenario;

/// Points kept per line: about one per pixel of the figure's width.
pub const MAX_POINTS: u64 = 1000;
/// Lines drawn per panel; a legend of more is unreadable.
pub const MAX_LINES: usize = 16;

/// One subflow's kept samples: time (s), bytes received new, cwnd, SRTT.
#[derive(Clone, Debug, Default)]
struct SubflowPoints {
    label: String,
    points: Vec<(f64, u64, u64, Option<f64>)>,
    /// The latest sample, kept so the line reaches the end of the run.
    last: Option<(f64, u64, u64, Option<f64>)>,
}

#[derive(Clone, Debug, Default)]
struct FlowPoints {
    label: String,
    points: Vec<(f64, f64)>,
    last: Option<(f64, f64)>,
}

/// The figure's data, gathered from the samples of a run.
#[derive(Clone, Debug)]
pub struct PlotData {
    /// Keep every `stride`-th sample.
    stride: u64,
    /// Index of the sample being received, and its time.
    sample: Option<(u64, braid_proto::Instant)>,
    /// Index in `subflows` of each flow's first subflow (plotted or not).
    first: Vec<usize>,
    subflows: Vec<SubflowPoints>,
    flows: Vec<FlowPoints>,
    total_subflows: usize,
    end: f64,
}

impl PlotData {
    /// Ready for a run of `scenario` lasting `duration`.
    pub fn new(scenario: &Scenario, duration: Duration) -> Self {
        let samples = duration.as_nanos() / scenario.sample_interval.as_nanos().max(1) + 1;
        let first: Vec<usize> =
            scenario.flow_paths.iter().scan(0, |n, p| Some(std::mem::replace(n, *n + p.len()))).collect();
        let mut subflows = Vec::new();
        let mut flows = Vec::new();
        for (f, paths) in scenario.flow_paths.iter().enumerate() {
            let name = &scenario.flows[f].name;
            for p in paths {
                if subflows.len() < MAX_LINES {
                    subflows.push(SubflowPoints { label: format!("{name} {p}"), ..Default::default() });
                }
            }
            if flows.len() < MAX_LINES {
                flows.push(FlowPoints { label: name.clone(), ..Default::default() });
            }
        }
        PlotData {
            stride: samples.div_ceil(MAX_POINTS).max(1),
            sample: None,
            first,
            subflows,
            flows,
            total_subflows: scenario.flow_paths.iter().map(Vec::len).sum(),
            end: 0.0,
        }
    }

    /// Whether the sample at `time` is one of those kept.
    fn keep(&mut self, time: braid_proto::Instant) -> bool {
        let index = match self.sample {
            Some((i, t)) if t == time => i,
            Some((i, _)) => i + 1,
            None => 0,
        };
        self.sample = Some((index, time));
        index % self.stride == 0
    }
}

impl SampleSink for PlotData {
    fn subflow(&mut self, r: &SubflowSample) {
        let keep = self.keep(r.time);
        let t = r.time.as_nanos() as f64 / 1e9;
        self.end = t;
        let f = r.flow as usize;
        if let Some(s) = self.subflows.get_mut(self.first[f] + r.subflow as usize) {
            let p = (t, r.received_new, r.cwnd, r.srtt.map(|d| d.as_nanos() as f64 / 1e6));
            if keep {
                s.points.push(p);
            }
            s.last = Some(p);
        }
        if let (0, Some(flow)) = (r.subflow, self.flows.get_mut(f)) {
            let p = (t, r.ooo_bytes as f64 / 1e3);
            if keep {
                flow.points.push(p);
            }
            flow.last = Some(p);
        }
    }
    fn link(&mut self, _: &LinkSample) {}
}

/// One line of one panel.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The four panels' lines: goodput (Mbit/s), congestion window (kB) and
/// smoothed RTT (ms) per subflow, and each flow's out-of-order queue (kB).
pub fn series(data: &PlotData) -> [Vec<Series>; 4] {
    let mut panels: [Vec<Series>; 4] = Default::default();
    for s in &data.subflows {
        let mut rows = s.points.clone();
        if let Some(last) = s.last.filter(|l| rows.last().is_none_or(|p| p.0 < l.0)) {
            rows.push(last);
        }
        let goodput =
            rows.windows(2).map(|w| (w[1].0, (w[1].1 - w[0].1) as f64 * 8.0 / (w[1].0 - w[0].0) / 1e6)).collect();
        panels[0].push(Series { label: s.label.clone(), points: goodput });
        let cwnd = rows.iter().map(|r| (r.0, r.2 as f64 / 1e3)).collect();
        panels[1].push(Series { label: s.label.clone(), points: cwnd });
        let srtt = rows.iter().filter_map(|r| Some((r.0, r.3?))).collect();
        panels[2].push(Series { label: s.label.clone(), points: srtt });
    }
    for f in &data.flows {
        let mut points = f.points.clone();
        if let Some(last) = f.last.filter(|l| points.last().is_none_or(|p| p.0 < l.0)) {
            points.push(last);
        }
        panels[3].push(Series { label: f.label.clone(), points });
    }
    panels
}

/// Writes the figure to `file` (SVG).
pub fn write_timeseries(file: &Path, data: &PlotData) -> Result<(), String> {
    let mut titles = ["goodput (Mbit/s)", "congestion window (kB)", "smoothed RTT (ms)", "out-of-order queue (kB)"]
        .map(String::from);
    if data.total_subflows > data.subflows.len() {
        for t in &mut titles[..3] {
            *t += &format!(", first {} of {} subflows", data.subflows.len(), data.total_subflows);
        }
    }
    if data.first.len() > data.flows.len() {
        titles[3] += &format!(", first {} of {} flows", data.flows.len(), data.first.len());
    }
    write_panels(file, &titles, &series(data), data.end)
}

/// Writes panels stacked top to bottom, one title each, over time 0 to
/// `end` seconds (SVG, 250 pixels per panel).
pub fn write_panels(file: &Path, titles: &[impl AsRef<str>], panels: &[Vec<Series>], end: f64) -> Result<(), String> {
    let end = end.max(1e-3);
    let root = SVGBackend::new(file, (900, 250 * panels.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (area, (title, lines)) in root.split_evenly((panels.len(), 1)).iter().zip(titles.iter().zip(panels)) {
        let top = lines.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max).max(1e-3) * 1.05;
        let mut chart = ChartBuilder::on(area)
            .caption(title.as_ref(), ("sans-serif", 16))
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

#[cfg(test)]
mod tests {
    use super::*;
    use braid_proto::Instant;

    /// However long the run, a line keeps at most about MAX_POINTS points,
    /// the last sample among them, and at most MAX_LINES lines are drawn.
    #[test]
    fn points_and_lines_are_bounded() {
        let flows: String = (0..20).map(|i| format!("[[flow]]\nname = \"f{i}\"\nsubflows = 2\n")).collect();
        let toml = format!("sample_interval = \"1ms\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"1Gbit\"\n{flows}");
        let scenario = crate::parse(&toml, "t.toml").unwrap();
        let duration = Duration::from_secs(100);
        let mut data = PlotData::new(&scenario, duration);
        let samples = duration.as_nanos() / 1_000_000 + 1;
        for k in 0..samples {
            for flow in 0..20 {
                for subflow in 0..2 {
                    data.subflow(&SubflowSample {
                        time: Instant::from_nanos(k * 1_000_000),
                        flow,
                        subflow,
                        delivered: k,
                        received_new: k * 1000,
                        cwnd: 1,
                        srtt: None,
                        bytes_in_flight: 0,
                        retransmissions: 0,
                        ooo_bytes: 0,
                    });
                }
            }
        }
        let panels = series(&data);
        assert!(panels.iter().all(|p| p.len() == MAX_LINES), "{:?}", panels.iter().map(Vec::len).collect::<Vec<_>>());
        let cwnd = &panels[1][0].points;
        let most = MAX_POINTS as usize + 1;
        assert!((most * 9 / 10..=most).contains(&cwnd.len()), "{} points", cwnd.len());
        assert_eq!(cwnd.last().unwrap().0, 100.0, "the line reaches the end");
        // Goodput over thinned samples is still the true rate: 8 Mbit/s.
        assert!(panels[0][3].points.iter().all(|p| (p.1 - 8.0).abs() < 1e-6), "{:?}", &panels[0][3].points[..3]);
    }
}
