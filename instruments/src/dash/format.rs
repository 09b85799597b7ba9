//! How the dashboard writes numbers, rates, durations, values and labels: pure functions of
//! their input, shared by the widgets and the plain line so both show a figure the same way.

use std::time::Duration;

use giving::Value;

/// A number for display: 4 significant digits, or scientific notation when tiny or huge.
pub(crate) fn number(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-3..1e6).contains(&a) {
        let digits = if a >= 1000.0 {
            0
        } else if a >= 100.0 {
            1
        } else if a >= 10.0 {
            2
        } else {
            3
        };
        format!("{x:.digits$}")
    } else {
        format!("{x:.3e}")
    }
}

/// A rate for display: `5.1k`, `12.0M`, `830`.
pub(crate) fn si(x: f64) -> String {
    let a = x.abs();
    if a >= 1e9 {
        format!("{:.1}G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// A duration as `m:ss` or `h:mm:ss`.
pub(crate) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A value for the keys table: numbers compactly, strings as is, lists and maps abridged.
pub(crate) fn show(value: &Value) -> String {
    let value = match value.resolved() {
        Ok(v) => v,
        Err(_) => return "(unreadable)".to_owned(),
    };
    match value {
        Value::F64(x) => number(*x),
        Value::List(items) if items.len() <= 4 => {
            let parts: Vec<String> = items.iter().map(show).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::List(items) => format!("[{} items]", items.len()),
        Value::Map(map) => format!("{{{} keys}}", map.len()),
        Value::Bytes(b) => format!("({} bytes)", b.len()),
        other => other.to_string(),
    }
}

/// An x-axis label: steps are whole numbers, so they are shown as such (`1200`, not
/// `1200.0`); anything else as [`number`].
pub(crate) fn step_label(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        number(x)
    }
}

/// An optional figure: `f(x)`, or `-` when there is none (a monitor that cannot read it).
pub(crate) fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_owned(), f)
}

/// A gauge's label: a done fraction in 0..=1 as a percentage, right-aligned (` 50%`).
pub(crate) fn percent(ratio: f64) -> String {
    format!("{:>3.0}%", 100.0 * ratio)
}

/// Memory used of total, in MB (`2048/81920 MB`), or `-` when unknown.
pub(crate) fn memory(used_total: Option<(f64, f64)>) -> String {
    used_total.map_or_else(
        || "-".to_owned(),
        |(used, total)| format!("{used:.0}/{total:.0} MB"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits_or_go_scientific() {
        assert_eq!(number(0.0), "0.000");
        assert_eq!(number(0.02), "0.020");
        assert_eq!(number(-1.5), "-1.500");
        assert_eq!(number(12.3456), "12.35");
        assert_eq!(number(123.456), "123.5");
        assert_eq!(number(3099.0), "3099");
        assert_eq!(number(0.0001), "1.000e-4");
        assert_eq!(number(2.5e6), "2.500e6");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn rates_take_an_si_prefix() {
        assert_eq!(si(830.4), "830");
        assert_eq!(si(3099.0), "3.1k");
        assert_eq!(si(12e6), "12.0M");
        assert_eq!(si(-4.2e9), "-4.2G");
    }

    #[test]
    fn clocks_show_hours_only_when_there_are_some() {
        assert_eq!(clock(Duration::from_millis(999)), "0:00");
        assert_eq!(clock(Duration::from_secs(32)), "0:32");
        assert_eq!(clock(Duration::from_secs(160)), "2:40");
        assert_eq!(clock(Duration::from_secs(3600 + 62)), "1:01:02");
    }

    #[test]
    fn values_are_shown_compactly() {
        assert_eq!(show(&Value::F64(0.25)), "0.250");
        assert_eq!(show(&Value::from("high")), "high");
        assert_eq!(
            show(&Value::from(vec![vec![1, 2], vec![3]])),
            "[[1, 2], [3]]"
        );
        assert_eq!(show(&Value::from(vec![1, 2, 3, 4, 5])), "[5 items]");
        assert_eq!(show(&Value::Bytes(vec![1, 2, 3])), "(3 bytes)");
        let map = [("a".to_owned(), Value::Null)].into_iter().collect();
        assert_eq!(show(&Value::Map(map)), "{1 keys}");
    }

    #[test]
    fn steps_are_labelled_as_whole_numbers() {
        assert_eq!(step_label(99.0), "99");
        assert_eq!(step_label(-3.0), "-3");
        assert_eq!(step_label(1.5), "1.500");
        assert_eq!(step_label(1e16), "1.000e16");
    }

    #[test]
    fn missing_figures_are_dashes() {
        assert_eq!(opt(None, number), "-");
        assert_eq!(opt(Some(0.75), |l| format!("{:.0}%", 100.0 * l)), "75%");
        assert_eq!(memory(None), "-");
        assert_eq!(memory(Some((2048.0, 81920.0))), "2048/81920 MB");
    }

    #[test]
    fn percentages_are_right_aligned() {
        assert_eq!(percent(0.0), "  0%");
        assert_eq!(percent(0.5), " 50%");
        assert_eq!(percent(1.0), "100%");
    }
}
