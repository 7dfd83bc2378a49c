//! The report's charts as SVG text (plotters' SVG backend, as
//! `crate::plot` draws a run's time series): bars, heatmaps and
//! distribution curves.

use plotters::prelude::*;

/// One named series of a bar chart: a value per category.
pub struct Bars {
    pub label: String,
    pub values: Vec<f64>,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn color(k: usize) -> RGBColor {
    // Colour-blind-safe (Okabe-Ito), then plotters' palette.
    const OKABE_ITO: [(u8, u8, u8); 8] = [
        (0, 114, 178),
        (230, 159, 0),
        (0, 158, 115),
        (204, 121, 167),
        (86, 180, 233),
        (213, 94, 0),
        (240, 228, 66),
        (0, 0, 0),
    ];
    match OKABE_ITO.get(k) {
        Some(&(r, g, b)) => RGBColor(r, g, b),
        None => {
            let c = Palette99::pick(k).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

/// Grouped (or, with `stacked`, stacked) bars: one group per category, one
/// bar (or layer) per series.
pub fn bars(
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[Bars],
    stacked: bool,
    size: (u32, u32),
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = categories.len().max(1);
        let top = if stacked {
            (0..n)
                .map(|i| series.iter().map(|s| s.values.get(i).copied().unwrap_or(0.0)).sum::<f64>())
                .fold(0.0, f64::max)
        } else {
            series.iter().flat_map(|s| s.values.iter().copied()).fold(0.0, f64::max)
        };
        let top = if top > 0.0 { top * 1.1 } else { 1.0 };
        // Categories written GROUP/NAME show NAME on the axis and each
        // GROUP once, above its first bar.
        let short: Vec<String> = categories.iter().map(|c| c.rsplit('/').next().unwrap_or(c).to_string()).collect();
        let names = category_names(&short);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top * 1.08)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n + 1)
            .x_label_style(("sans-serif", if n > 8 { 10 } else { 12 }))
            .x_label_formatter(&names)
            .y_desc(y_label)
            .draw()
            .map_err(err)?;
        let mut last_group = None;
        for (i, c) in categories.iter().enumerate() {
            let Some((group, _)) = c.rsplit_once('/') else { continue };
            if last_group != Some(group) {
                last_group = Some(group);
                chart
                    .draw_series(std::iter::once(Text::new(
                        group.to_string(),
                        (i as f64 - 0.45, top * 1.04),
                        ("sans-serif", 12),
                    )))
                    .map_err(err)?;
            }
        }
        let k = series.len().max(1) as f64;
        for (j, s) in series.iter().enumerate() {
            let c = color(j);
            let rects: Vec<Rectangle<(f64, f64)>> = s
                .values
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let x = i as f64 - 0.5;
                    if stacked {
                        let below: f64 = series[..j].iter().map(|t| t.values.get(i).copied().unwrap_or(0.0)).sum();
                        Rectangle::new([(x + 0.15, below), (x + 0.85, below + v)], c.filled())
                    } else {
                        let w = 0.8 / k;
                        let x0 = x + 0.1 + w * j as f64;
                        Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v)], c.filled())
                    }
                })
                .collect();
            chart
                .draw_series(rects)
                .map_err(err)?
                .label(s.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The boxed list of series labels.
fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<
        'a,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// Labels integer positions with category names, nothing in between.
fn category_names(names: &[String]) -> impl Fn(&f64) -> String {
    let names = names.to_vec();
    move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    }
}

/// A heatmap of `values[row][col]` in [0, 1], each cell labelled.
pub fn heatmap(
    title: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    size: (u32, u32),
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (nr, nc) = (rows.len().max(1), cols.len().max(1));
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5..nc as f64 - 0.5, -0.5..nr as f64 - 0.5)
            .map_err(err)?;
        let (fx, fy) = (category_names(cols), category_names(rows));
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nc + 1)
            .y_labels(nr + 1)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(err)?;
        for (r, row) in values.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let (x, y) = (c as f64 - 0.5, r as f64 - 0.5);
                let fill = match v {
                    // White to dark blue.
                    Some(v) => {
                        let t = v.clamp(0.0, 1.0);
                        RGBColor((255.0 - 247.0 * t) as u8, (255.0 - 207.0 * t) as u8, (255.0 - 148.0 * t) as u8)
                    }
                    None => RGBColor(220, 220, 220),
                };
                chart
                    .draw_series(std::iter::once(Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled())))
                    .map_err(err)?;
                let text = v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
                let ink = if v.is_some_and(|v| v > 0.55) { WHITE } else { BLACK };
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (x + 0.4, y + 0.55),
                        ("sans-serif", 13).into_font().color(&ink),
                    )))
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Step curves, one per series (empirical distributions).
pub fn curves(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    size: (u32, u32),
) -> Result<String, String> {
    lines(title, x_label, y_label, series, Some(1.05), false, size)
}

/// Lines, one per series, from x = 0 (or the smallest x) up; the y axis
/// from 0 to `y_max` (or the largest value, with room); with `markers`, a
/// dot on every point (sweeps with few points).
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    y_max: Option<f64>,
    markers: bool,
    size: (u32, u32),
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let xs = || series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
        let left = xs().fold(0.0, f64::min);
        let right = xs().fold(0.0, f64::max).max(left + 1e-9) * 1.05;
        let top =
            y_max.unwrap_or_else(|| series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(left..right, 0.0..top.max(1e-9))
            .map_err(err)?;
        chart.configure_mesh().x_desc(x_label).y_desc(y_label).max_light_lines(2).draw().map_err(err)?;
        for (k, (label, points)) in series.iter().enumerate() {
            let c = color(k);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                .map_err(err)?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            if markers {
                chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(err)?;
            }
        }
        legend(&mut chart, quietest_corner(series, (left, right), top))?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The corner of the plot whose box (the outer 40% of the width, 30% of
/// the height) holds the fewest points, so the legend hides the least;
/// lower right when several tie.
fn quietest_corner(series: &[(String, Vec<(f64, f64)>)], (left, right): (f64, f64), top: f64) -> SeriesLabelPosition {
    let (east, west) = (left + 0.6 * (right - left), left + 0.4 * (right - left));
    let (north, south) = (0.7 * top, 0.3 * top);
    let corners = [
        (SeriesLabelPosition::LowerRight, (east, f64::INFINITY), (f64::NEG_INFINITY, south)),
        (SeriesLabelPosition::UpperRight, (east, f64::INFINITY), (north, f64::INFINITY)),
        (SeriesLabelPosition::UpperLeft, (f64::NEG_INFINITY, west), (north, f64::INFINITY)),
        (SeriesLabelPosition::LowerLeft, (f64::NEG_INFINITY, west), (f64::NEG_INFINITY, south)),
    ];
    let points = || series.iter().flat_map(|s| s.1.iter());
    let crowd = |x: (f64, f64), y: (f64, f64)| {
        points().filter(|p| (x.0..=x.1).contains(&p.0) && (y.0..=y.1).contains(&p.1)).count()
    };
    corners.into_iter().min_by_key(|(_, x, y)| crowd(*x, *y)).map_or(SeriesLabelPosition::LowerRight, |c| c.0)
}

/// The empirical CDF of `values` as a step curve; with `complementary`,
/// 1 - CDF taken just below each value (the share at or above it).
pub fn ecdf(values: &[f64], complementary: bool) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut points = Vec::with_capacity(2 * v.len() + 1);
    points.push((0.0, if complementary { 1.0 } else { 0.0 }));
    for (i, &x) in v.iter().enumerate() {
        let (before, after) = (i as f64 / n, (i + 1) as f64 / n);
        if complementary {
            points.push((x, 1.0 - before));
            points.push((x, 1.0 - after));
        } else {
            points.push((x, before));
            points.push((x, after));
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_where_the_lines_are_not() {
        let corner =
            |points: Vec<(f64, f64)>| format!("{:?}", quietest_corner(&[("s".into(), points)], (0.0, 10.0), 1.0));
        // Along the bottom on the right: not there; the upper right is empty.
        let low_right: Vec<(f64, f64)> = (0..100).map(|i| (f64::from(i) / 10.0, 0.1)).collect();
        assert_eq!(corner(low_right), "UpperRight");
        // High everywhere: lower right, as when nothing is in the way.
        let high: Vec<(f64, f64)> = (0..100).map(|i| (f64::from(i) / 10.0, 0.9)).collect();
        assert_eq!(corner(high), "LowerRight");
        // Falling from the upper left to the lower right: a corner off it.
        let falling: Vec<(f64, f64)> = (0..100).map(|i| (f64::from(i) / 10.0, 1.0 - f64::from(i) / 100.0)).collect();
        assert!(["UpperRight", "LowerLeft"].contains(&corner(falling).as_str()));
    }

    #[test]
    fn ecdf_steps_through_sorted_values() {
        assert_eq!(ecdf(&[2.0, 1.0], false), [(0.0, 0.0), (1.0, 0.0), (1.0, 0.5), (2.0, 0.5), (2.0, 1.0)]);
        assert_eq!(ecdf(&[2.0, 1.0], true), [(0.0, 1.0), (1.0, 1.0), (1.0, 0.5), (2.0, 0.5), (2.0, 0.0)]);
    }

    #[test]
    fn charts_are_svg() {
        let b = bars(
            "t",
            "y",
            &["a".into(), "b".into()],
            &[Bars { label: "s".into(), values: vec![1.0, 2.0] }],
            false,
            (300, 200),
        )
        .unwrap();
        assert!(b.starts_with("<svg") && b.contains("<rect"), "{b}");
        let h = heatmap("h", &["r".into()], &["c".into()], &[vec![Some(0.5)]], (200, 150)).unwrap();
        assert!(h.contains("0.500"));
    }
}
