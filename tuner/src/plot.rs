//! The PNG plot of a session, drawn with plotters' bitmap backend and no text at all, so that
//! it needs no font and works on a machine without fontconfig.
//!
//! Left panel: QoS loss (x) against predicted speedup (y); kept configurations in blue, the
//! best in orange, the exact network (0, 1) as a black square. Right panel, when the session
//! used a QoS model: predicted QoS (x) against measured QoS (y) with the diagonal `y = x` in
//! grey. Light grid lines fall on round values: every 0.5 QoS point (1 when the range is wider
//! than 5) and every 0.25× of speedup (0.5× above 4×); docs/tuner.md describes the layout.

use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::configs::ConfigsFile;
use crate::error::Error;

const ORANGE: RGBColor = RGBColor(255, 127, 14);
const BLUE_: RGBColor = RGBColor(31, 119, 180);
const GRID: RGBColor = RGBColor(225, 225, 225);

/// A range covering `values` with a margin, never empty.
fn span(values: impl Iterator<Item = f64>, floor: Range<f64>) -> Range<f64> {
    let (lo, hi) = values.fold((floor.start, floor.end), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let pad = ((hi - lo) * 0.05).max(1e-3);
    (lo - pad)..(hi + pad)
}

/// Values of the multiples of `step` inside `range`.
fn ticks(range: &Range<f64>, step: f64) -> Vec<f64> {
    let first = (range.start / step).ceil() as i64;
    let last = (range.end / step).floor() as i64;
    (first..=last.max(first - 1))
        .map(|i| i as f64 * step)
        .collect()
}

type Panel<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// One scatter panel: frame, grid, and the point series in order (later ones on top).
fn panel(
    area: &Panel<'_>,
    x: Range<f64>,
    y: Range<f64>,
    steps: (f64, f64),
    diagonal: bool,
    series: &[(Vec<(f64, f64)>, RGBColor)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .margin(24)
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(e)?;
    let plot = chart.plotting_area();
    for gx in ticks(&x, steps.0) {
        plot.draw(&PathElement::new(vec![(gx, y.start), (gx, y.end)], GRID))
            .map_err(e)?;
    }
    for gy in ticks(&y, steps.1) {
        plot.draw(&PathElement::new(vec![(x.start, gy), (x.end, gy)], GRID))
            .map_err(e)?;
    }
    if diagonal {
        let lo = x.start.max(y.start);
        let hi = x.end.min(y.end);
        plot.draw(&PathElement::new(
            vec![(lo, lo), (hi, hi)],
            RGBColor(150, 150, 150),
        ))
        .map_err(e)?;
    }
    plot.draw(&Rectangle::new([(x.start, y.start), (x.end, y.end)], BLACK))
        .map_err(e)?;
    for (points, colour) in series {
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(e)?;
    }
    Ok(())
}

fn step(range: &Range<f64>, small: f64, limit: f64) -> f64 {
    if range.end - range.start > limit {
        small * 2.0
    } else {
        small
    }
}

/// Draws `file`'s configurations into the PNG `path`.
pub fn plot(file: &ConfigsFile, path: &Path) -> Result<(), Error> {
    let fail = |what: String| Error::Plot {
        path: path.to_path_buf(),
        what,
    };
    let with_model = file.configs.iter().any(|c| c.predicted_qos.is_some());
    let width = if with_model { 1200 } else { 640 };
    let root = BitMapBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
    let panels = if with_model {
        root.split_evenly((1, 2))
    } else {
        vec![root.clone()]
    };

    let kept: Vec<(f64, f64)> = file
        .configs
        .iter()
        .filter(|c| !c.best)
        .map(|c| (c.qos_loss, c.predicted_speedup))
        .collect();
    let best: Vec<(f64, f64)> = file
        .configs
        .iter()
        .filter(|c| c.best)
        .map(|c| (c.qos_loss, c.predicted_speedup))
        .collect();
    let x = span(file.configs.iter().map(|c| c.qos_loss), 0.0..0.0);
    let y = span(file.configs.iter().map(|c| c.predicted_speedup), 1.0..1.0);
    let steps = (step(&x, 0.5, 5.0), step(&y, 0.25, 4.0));
    let exact = vec![(0.0, 1.0)];
    panel(
        &panels[0],
        x,
        y,
        steps,
        false,
        &[(kept, BLUE_), (best, ORANGE), (exact, BLACK)],
    )
    .map_err(fail)?;

    if with_model {
        let pairs: Vec<(f64, f64)> = file
            .configs
            .iter()
            .filter_map(|c| c.predicted_qos.map(|p| (p, c.qos)))
            .collect();
        let all = pairs.iter().flat_map(|&(a, b)| [a, b]);
        let range = span(all, file.baseline.qos..file.baseline.qos);
        let s = step(&range, 0.5, 5.0);
        panel(
            &panels[1],
            range.clone(),
            range,
            (s, s),
            true,
            &[(pairs, BLUE_)],
        )
        .map_err(fail)?;
    }
    root.present().map_err(|e| fail(e.to_string()))
}
