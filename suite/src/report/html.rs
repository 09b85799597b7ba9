//! `giving suite report --html FILE`: the report as one self-contained HTML page — the
//! tables, a rate-over-time plot per benchmark (SVG drawn by plotters, inline), and each
//! process's output in collapsible blocks.

use std::fmt::Write as _;
use std::path::PathBuf;

use plotters::prelude::*;

use super::load::{BenchData, RunData, tail};
use super::table::Report;

/// The page for `report`, computed from `run`.
pub fn html(report: &Report, run: &RunData) -> String {
    let mut page = String::new();
    let title = format!("giving suite report: {}", run.dir.display());
    let _ = writeln!(
        page,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{STYLE}</style></head><body>\n<h1>{}</h1>",
        escape(&title),
        escape(&title)
    );
    // The text report is the reference: the page shows it as it prints, then the plots.
    let _ = writeln!(
        page,
        "<pre class=\"report\">{}</pre>",
        escape(&report.to_string())
    );
    for bench in run.benches.iter().filter(|b| !b.processes.is_empty()) {
        let _ = writeln!(page, "<section><h2>{}</h2>", escape(&bench.name));
        page.push_str(&rate_plot(bench));
        for p in &bench.processes {
            let status = match (&p.stopped, p.success) {
                (Some(why), true) => format!("ok, stopped: {why}"),
                (_, true) => "ok".to_owned(),
                (_, false) => "failed".to_owned(),
            };
            let _ = writeln!(
                page,
                "<details><summary>{}.{} ({}, {} rates, {} events)</summary>",
                escape(&bench.name),
                escape(&p.tag),
                escape(&status),
                p.rates.len(),
                p.events
            );
            for stream in ["stdout", "stderr"] {
                // `{bench}.{tag}.{stream}` (`with_extension` would replace the tag's end).
                let text = tail(&PathBuf::from(format!("{}.{stream}", p.stem.display())));
                let _ = writeln!(
                    page,
                    "<h3>{stream}</h3><pre>{}</pre>",
                    if text.is_empty() {
                        "(empty)".to_owned()
                    } else {
                        escape(&text)
                    }
                );
            }
            page.push_str("</details>\n");
        }
        page.push_str("</section>\n");
    }
    page.push_str("</body></html>\n");
    page
}

/// An SVG of every process's rates against the time since its first event; a note when there
/// is no rate to plot.
fn rate_plot(bench: &BenchData) -> String {
    let points: Vec<&(f64, f64)> = bench.processes.iter().flat_map(|p| &p.rate_times).collect();
    if points.is_empty() {
        return "<p>No rate to plot.</p>\n".to_owned();
    }
    let x_max = points.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-3) * 1.02;
    let y_max = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 300)).into_drawing_area();
        // Drawing into a string cannot fail but for a bad range, excluded above: a failure
        // leaves the SVG partial, which the page still shows.
        let _ = draw(&root, bench, x_max, y_max);
        let _ = root.present();
    }
    format!("<div class=\"plot\">{svg}</div>\n")
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    bench: &BenchData,
    x_max: f64,
    y_max: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{}: rate over time", bench.name),
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the process's first event")
        .y_desc("rate")
        .draw()?;
    for (i, p) in bench.processes.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                p.rate_times.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(p.tag.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Text made safe inside HTML elements and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:60em}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}\
pre.report{font-size:.9em}details{margin:.3em 0}summary{cursor:pointer}";

#[cfg(test)]
mod tests {
    #[test]
    fn escape_makes_markup_text() {
        assert_eq!(
            super::escape("<b>\"a\" & 'b'</b>"),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
    }
}
