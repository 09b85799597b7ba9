//! The PNG plot of a session (`configs.png`), drawn with plotters' bitmap backend; its text
//! comes from DejaVu Sans embedded in the binary (tuner/assets/, Bitstream Vera licence), so
//! it needs no fontconfig and no system font.
//!
//! Panels, left to right (PredTuner's `plot_configs`, with the speedup measured as well):
//!
//! 1. **Tuning set**: QoS loss on the tuning set (x, accuracy points) against speedup (y, ×):
//!    every kept configuration at its predicted speedup, the best ones also at their measured
//!    speedup, the exact network, and the keep threshold as a vertical line.
//! 2. **Tune vs test**: the best configurations' measured speedup (y) at their QoS loss on the
//!    tuning set and on the test set (x), with the threshold.
//! 3. **QoS model** (only when the session used one): predicted QoS (x, %) against the QoS
//!    measured on the tuning set (y, %), with the diagonal `y = x`.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::configs::{ConfigRecord, ConfigsFile};
use crate::error::Error;

const ORANGE: RGBColor = RGBColor(255, 127, 14);
const BLUE_: RGBColor = RGBColor(31, 119, 180);
const GREEN_: RGBColor = RGBColor(44, 160, 44);
const PURPLE: RGBColor = RGBColor(148, 103, 189);
/// The threshold lines' colour (the tests look for it).
pub(crate) const THRESHOLD: RGBColor = RGBColor(214, 39, 40);
const GRID: RGBColor = RGBColor(230, 230, 230);

/// Width and height of one panel, in pixels.
pub(crate) const PANEL: (u32, u32) = (620, 500);
/// Pixels below each panel's plotting area for the tick labels and the x axis' title.
pub(crate) const X_LABEL_AREA: u32 = 56;
/// Pixels left of each panel's plotting area for the tick labels and the y axis' title.
pub(crate) const Y_LABEL_AREA: u32 = 70;
/// Pixels around each panel.
const MARGIN: u32 = 14;
/// Pixels above each panel's plotting area for its title (plotters' caption: the font size
/// and its margin).
#[cfg(test)]
const CAPTION: u32 = 36;

/// The embedded font's family name.
const FONT: &str = "sans-serif";

/// Registers the embedded DejaVu Sans as plotters' `sans-serif`, once.
fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(
                FONT,
                FontStyle::Normal,
                include_bytes!("../assets/DejaVuSans.ttf"),
            )
            .map_err(|_| "the embedded DejaVu Sans font is not a valid font".to_owned())
        })
        .clone()
}

/// A range covering `values` and `floor` with a 5% margin, never empty.
fn span(values: impl Iterator<Item = f64>, floor: Range<f64>) -> Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((floor.start, floor.end), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let pad = ((hi - lo) * 0.05).max(0.05);
    (lo - pad)..(hi + pad)
}

type Panel<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// A series of one panel: its points, marker and legend label.
struct Series {
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    marker: Marker,
    label: &'static str,
}

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Triangle,
    Square,
}

/// A straight line of a panel, in data coordinates, with its legend label.
struct Line {
    from: (f64, f64),
    to: (f64, f64),
    colour: RGBColor,
    label: String,
}

/// One scatter panel: title, axes with their titles, grid, lines, series and legend.
#[allow(clippy::too_many_arguments)]
fn panel(
    area: &Panel<'_>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    x: Range<f64>,
    y: Range<f64>,
    lines: &[Line],
    series: &[Series],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    // Headroom above the data for the legend, in the upper left corner: there it covers no
    // point (a small loss with a large speedup is what no knob gives).
    let rows = (lines.len() + series.len()) as f64;
    let y = y.start..y.end + (y.end - y.start) * 0.075 * rows;
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .caption(title, (FONT, 20))
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(8)
        .y_labels(8)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .draw()
        .map_err(e)?;
    for line in lines {
        let colour = line.colour;
        // A vertical line (a threshold) spans the headroom too.
        let to = if line.from.0 == line.to.0 {
            (line.to.0, y.end)
        } else {
            line.to
        };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![line.from, to],
                colour.stroke_width(2),
            )))
            .map_err(e)?
            .label(line.label.clone())
            .legend(move |(px, py)| {
                PathElement::new(vec![(px - 8, py), (px + 8, py)], colour.stroke_width(2))
            });
    }
    for s in series {
        let style = s.colour.filled();
        let points = s.points.iter().copied();
        let drawn = match s.marker {
            Marker::Circle => chart
                .draw_series(points.map(|p| Circle::new(p, 4, style)))
                .map_err(e)?
                .legend(move |p| Circle::new(p, 4, style)),
            Marker::Triangle => chart
                .draw_series(points.map(|p| TriangleMarker::new(p, 6, style)))
                .map_err(e)?
                .legend(move |p| TriangleMarker::new(p, 6, style)),
            Marker::Square => chart
                .draw_series(
                    points.map(|p| EmptyElement::at(p) + Rectangle::new([(-5, -5), (5, 5)], style)),
                )
                .map_err(e)?
                .legend(move |(x, y)| Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], style)),
        };
        drawn.label(s.label);
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()
        .map_err(e)?;
    Ok(())
}

/// Draws `file`'s configurations into the PNG `path`.
pub fn plot(file: &ConfigsFile, path: &Path) -> Result<(), Error> {
    let fail = |what: String| Error::Plot {
        path: path.to_path_buf(),
        what,
    };
    let root = BitMapBackend::new(path, size(file)).into_drawing_area();
    draw(file, &root).map_err(fail)?;
    root.present().map_err(|e| fail(e.to_string()))
}

/// The plot's size in pixels: two panels, three with a QoS model.
fn size(file: &ConfigsFile) -> (u32, u32) {
    (PANEL.0 * panels(file), PANEL.1)
}

fn panels(file: &ConfigsFile) -> u32 {
    if file.configs.iter().any(|c| c.predicted_qos.is_some()) {
        3
    } else {
        2
    }
}

/// Draws the panels on `root`.
fn draw(file: &ConfigsFile, root: &Panel<'_>) -> Result<(), String> {
    register()?;
    let fail = |e: String| e;
    let with_model = panels(file) == 3;
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let areas = root.split_evenly((1, panels(file) as usize));
    let keep_loss = file.settings.keep_loss(file.baseline.qos);
    let test_keep_loss = file.settings.keep_loss(file.baseline.test_qos);
    let best: Vec<&ConfigRecord> = file.configs.iter().filter(|c| c.best).collect();

    // 1. Tuning set: loss against predicted and measured speedup.
    let points = |configs: &[&ConfigRecord], y: fn(&ConfigRecord) -> Option<f64>| {
        configs
            .iter()
            .filter_map(|c| y(c).map(|s| (c.qos_loss, s)))
            .collect::<Vec<_>>()
    };
    let others: Vec<&ConfigRecord> = file.configs.iter().filter(|c| !c.best).collect();
    let speedups = file
        .configs
        .iter()
        .flat_map(|c| [Some(c.predicted_speedup), c.measured_speedup])
        .flatten();
    let y = span(speedups, 1.0..1.0);
    let x = span(
        file.configs.iter().map(|c| c.qos_loss),
        0.0..keep_loss.max(0.0),
    );
    let threshold = |loss: f64, y: &Range<f64>, label: String| Line {
        from: (loss, y.start),
        to: (loss, y.end),
        colour: THRESHOLD,
        label,
    };
    panel(
        &areas[0],
        "QoS loss and speedup (tuning set)",
        "QoS loss on the tuning set (accuracy points)",
        "Speedup over the exact network (×)",
        x.clone(),
        y.clone(),
        &[threshold(
            keep_loss,
            &y,
            format!("keep threshold ({keep_loss:.2} points)"),
        )],
        &[
            Series {
                points: points(&others, |c| Some(c.predicted_speedup)),
                colour: BLUE_,
                marker: Marker::Circle,
                label: "predicted speedup (kept)",
            },
            Series {
                points: points(&best, |c| Some(c.predicted_speedup)),
                colour: ORANGE,
                marker: Marker::Circle,
                label: "predicted speedup (best)",
            },
            Series {
                points: points(&best, |c| c.measured_speedup),
                colour: GREEN_,
                marker: Marker::Triangle,
                label: "measured speedup (best)",
            },
            Series {
                points: vec![(0.0, 1.0)],
                colour: BLACK,
                marker: Marker::Square,
                label: "exact network",
            },
        ],
    )
    .map_err(fail)?;

    // 2. Tune vs test: the best configurations' measured speedup at both losses.
    let measured = |loss: fn(&ConfigRecord, f64) -> Option<f64>| {
        best.iter()
            .filter_map(|c| Some((loss(c, file.baseline.test_qos)?, c.measured_speedup?)))
            .collect::<Vec<_>>()
    };
    let tune_points = measured(|c, _| Some(c.qos_loss));
    let test_points = measured(|c, base| c.test_qos.map(|q| base - q));
    let x = span(
        tune_points.iter().chain(&test_points).map(|p| p.0),
        0.0..keep_loss.max(test_keep_loss).max(0.0),
    );
    let y = span(
        tune_points.iter().chain(&test_points).map(|p| p.1),
        1.0..1.0,
    );
    panel(
        &areas[1],
        "Best configurations: tuning vs test set",
        "QoS loss (accuracy points)",
        "Measured speedup (×)",
        x,
        y.clone(),
        &[threshold(
            test_keep_loss,
            &y,
            format!("keep threshold ({test_keep_loss:.2} points)"),
        )],
        &[
            Series {
                points: tune_points,
                colour: ORANGE,
                marker: Marker::Circle,
                label: "loss on the tuning set",
            },
            Series {
                points: test_points,
                colour: PURPLE,
                marker: Marker::Triangle,
                label: "loss on the test set",
            },
        ],
    )
    .map_err(fail)?;

    // 3. The QoS model: predicted against measured tuning QoS.
    if with_model {
        let pairs: Vec<(f64, f64)> = file
            .configs
            .iter()
            .filter_map(|c| c.predicted_qos.map(|p| (p, c.qos)))
            .collect();
        let all = pairs.iter().flat_map(|&(a, b)| [a, b]);
        let range = span(all, file.baseline.qos..file.baseline.qos);
        panel(
            &areas[2],
            "QoS model: predicted vs measured",
            "Predicted QoS on the tuning set (accuracy %)",
            "Measured QoS on the tuning set (accuracy %)",
            range.clone(),
            range.clone(),
            &[Line {
                from: (range.start, range.start),
                to: (range.end, range.end),
                colour: RGBColor(150, 150, 150),
                label: "measured = predicted".into(),
            }],
            &[Series {
                points: pairs,
                colour: BLUE_,
                marker: Marker::Circle,
                label: "validated configurations",
            }],
        )
        .map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::configs::{Baseline, DataInfo, Dropped, FORMAT, NetworkInfo, Timing};
    use crate::settings::TuneSettings;

    fn record(
        loss: f64,
        predicted: f64,
        measured: f64,
        test_loss: f64,
        best: bool,
    ) -> ConfigRecord {
        ConfigRecord {
            knobs: vec!["baseline".into(); 4],
            qos: 90.0 - loss,
            qos_loss: loss,
            predicted_qos: Some(90.0 - loss + 0.3),
            test_qos: Some(89.0 - test_loss),
            predicted_speedup: predicted,
            measured_speedup: Some(measured),
            pareto: best,
            best,
        }
    }

    fn file() -> ConfigsFile {
        ConfigsFile {
            format: FORMAT,
            network: NetworkInfo {
                channels: vec![4; 4],
                hidden: 8,
                side: 32,
                classes: 10,
                weights: PathBuf::from("w.mpk"),
            },
            data: DataInfo {
                seed: 0,
                tune_size: 10,
                test_size: 10,
            },
            settings: TuneSettings::new(),
            baseline: Baseline {
                qos: 90.0,
                test_qos: 89.0,
            },
            timing: Timing::default(),
            profile: None,
            dropped: Dropped::default(),
            configs: vec![
                record(0.0, 1.0, 1.0, 0.0, true),
                record(0.8, 1.4, 1.3, 1.1, true),
                record(1.6, 1.9, 1.7, 2.0, true),
                record(2.5, 2.3, 2.1, 2.9, true),
                record(1.2, 1.3, 1.1, 1.0, false),
                record(2.9, 1.8, 1.5, 3.1, false),
            ],
        }
    }

    /// Pixels of `rgb` (a `width`-wide RGB buffer) in the rectangle `x × y` for which `test`
    /// holds.
    fn count(
        rgb: &[u8],
        width: u32,
        x: Range<u32>,
        y: Range<u32>,
        test: impl Fn([u8; 3]) -> bool,
    ) -> usize {
        y.flat_map(|row| x.clone().map(move |col| (row * width + col) as usize * 3))
            .filter(|&i| test([rgb[i], rgb[i + 1], rgb[i + 2]]))
            .count()
    }

    #[test]
    fn the_plot_has_titles_axis_labels_legends_and_threshold_lines() {
        let file = file();
        let (width, height) = size(&file);
        assert_eq!(width, 3 * PANEL.0);
        let mut rgb = vec![0u8; (width * height * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
            draw(&file, &root).unwrap();
            root.present().unwrap();
        }
        if let Some(path) = std::env::var_os("GIVING_PLOT_OUT") {
            plot(&file, Path::new(&path)).unwrap();
        }
        let dark = |p: [u8; 3]| p.iter().all(|&c| c < 90);
        let (w, h) = PANEL;
        for panel in 0..3 {
            let left = panel * w;
            // The title, above the plotting area.
            let title = count(
                &rgb,
                width,
                left..left + w,
                MARGIN..MARGIN + CAPTION - 8,
                dark,
            );
            // The x axis' title, at the bottom of the label area under the plotting area.
            let bottom = h - MARGIN;
            let x_title = count(
                &rgb,
                width,
                left + Y_LABEL_AREA..left + w,
                bottom - 22..bottom,
                dark,
            );
            // The y axis' title, written upwards at the left of the label area.
            let y_title = count(
                &rgb,
                width,
                left + MARGIN..left + MARGIN + 22,
                MARGIN + CAPTION..bottom - X_LABEL_AREA,
                dark,
            );
            // The legend, in the upper left corner of the plotting area.
            let plot_left = left + MARGIN + Y_LABEL_AREA;
            let legend = count(
                &rgb,
                width,
                plot_left..plot_left + 260,
                MARGIN + CAPTION..MARGIN + CAPTION + 110,
                dark,
            );
            for (what, n) in [
                ("title", title),
                ("x title", x_title),
                ("y title", y_title),
                ("legend", legend),
            ] {
                assert!(n > 60, "panel {panel}: {what} has {n} dark pixels");
            }
        }
        // The keep threshold, a vertical line across the first two panels' plotting areas.
        for panel in 0..2 {
            let left = panel * w;
            let red = count(&rgb, width, left..left + w, 0..h, |p| p == [214, 39, 40]);
            assert!(red > 300, "panel {panel}: {red} threshold pixels");
        }
        // The series: predicted (orange), measured (green) and test (purple) markers.
        let colour = |c: [u8; 3]| move |p: [u8; 3]| p == c;
        assert!(count(&rgb, width, 0..w, 0..h, colour([255, 127, 14])) > 100);
        assert!(count(&rgb, width, 0..w, 0..h, colour([44, 160, 44])) > 100);
        assert!(count(&rgb, width, w..2 * w, 0..h, colour([148, 103, 189])) > 100);
    }
}
