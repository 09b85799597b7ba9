//! Knobs declared in a JSON file, in PredTuner's format (`get_knobs_from_file`, its
//! `default_approx_params.json`): a list of objects, each with a `class` and that class's
//! arguments.
//!
//! ```json
//! [
//!   {"class": "FP32Baseline", "name": "11"},
//!   {"class": "PerforateConv2dStride", "name": "121", "direction_is_row": false,
//!    "stride": 2, "offset": 0, "use_fp16": false, "exp_speedup": 2.0},
//!   {"class": "Conv2dSampling", "name": "231", "skip_every": 2, "skip_offset": 0,
//!    "interp_rate": 1.0, "use_fp16": false, "exp_speedup": 2.0},
//!   {"class": "FP16Approx", "name": "12", "exp_speedup": 1.5},
//!   {"class": "PerforateSparse", "name": "s1", "direction_is_row": true, "stride": 3, "offset": 0}
//! ]
//! ```
//!
//! The classes are PredTuner's four conv knobs and this tuner's `PerforateSparse`; `use_fp16:
//! true` declares HPVM's FP16 perforation (`perf_fp16_*`, HPVM's 151–168) or sampling
//! (`samp_fp16_*`, 261–269). A knob this tuner cannot compute (an `interp_rate` other than 1, a
//! stride outside 2–4, an offset not below the stride) and an unknown class or key are refused
//! with the file, the line and the key. `devices`, `baseline_priority` and `exp_speedup` are read
//! and not used: the search decides the device, and the linear cost model charges each knob its
//! multiply-adds ([`Knob::cost_factor`]) rather than a declared speedup.

use std::path::Path;

use serde::Deserialize;

use crate::error::Error;
use crate::knob::{Axis, Knob};

/// One declared knob, by PredTuner class. Fields that only PredTuner uses are accepted (so
/// that its files load) and never read.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "class", deny_unknown_fields)]
enum Declared {
    FP32Baseline {
        name: String,
        #[serde(default)]
        devices: Vec<String>,
        #[serde(default)]
        baseline_priority: Option<i64>,
    },
    FP16Approx {
        name: String,
        #[serde(default)]
        exp_speedup: Option<f64>,
        #[serde(default)]
        devices: Vec<String>,
        #[serde(default)]
        baseline_priority: Option<i64>,
    },
    PerforateConv2dStride {
        name: String,
        direction_is_row: bool,
        stride: usize,
        offset: usize,
        #[serde(default)]
        use_fp16: bool,
        #[serde(default)]
        exp_speedup: Option<f64>,
        #[serde(default)]
        devices: Vec<String>,
    },
    Conv2dSampling {
        name: String,
        skip_every: usize,
        skip_offset: usize,
        #[serde(default = "one")]
        interp_rate: f64,
        #[serde(default)]
        use_fp16: bool,
        #[serde(default)]
        exp_speedup: Option<f64>,
        #[serde(default)]
        devices: Vec<String>,
    },
    PerforateSparse {
        name: String,
        direction_is_row: bool,
        stride: usize,
        offset: usize,
    },
}

fn one() -> f64 {
    1.0
}

impl Declared {
    /// The knob, or which key this tuner cannot honour and why.
    fn knob(&self) -> Result<Knob, (String, &'static str, String)> {
        let axis = |row: bool| if row { Axis::Rows } else { Axis::Cols };
        let refuse = |name: &str, key: &'static str, why: String| Err((name.to_owned(), key, why));
        match *self {
            Declared::FP32Baseline { .. } => Ok(Knob::Baseline),
            Declared::FP16Approx { .. } => Ok(Knob::Fp16),
            Declared::PerforateConv2dStride {
                ref name,
                direction_is_row,
                stride,
                offset,
                use_fp16,
                ..
            } => {
                let axis = axis(direction_is_row);
                let knob = if use_fp16 {
                    Knob::PerforateFp16 {
                        axis,
                        stride,
                        offset,
                    }
                } else {
                    Knob::Perforate {
                        axis,
                        stride,
                        offset,
                    }
                };
                check(name, knob, stride, offset, "stride", "offset")
            }
            Declared::Conv2dSampling {
                ref name,
                skip_every,
                skip_offset,
                interp_rate,
                use_fp16,
                ..
            } => {
                if interp_rate != 1.0 {
                    return refuse(
                        name,
                        "interp_rate",
                        format!("only 1.0 (HPVM's rescale) is implemented, not {interp_rate}"),
                    );
                }
                let (stride, offset) = (skip_every, skip_offset);
                let knob = if use_fp16 {
                    Knob::SampleFp16 { stride, offset }
                } else {
                    Knob::Sample { stride, offset }
                };
                check(
                    name,
                    knob,
                    skip_every,
                    skip_offset,
                    "skip_every",
                    "skip_offset",
                )
            }
            Declared::PerforateSparse {
                ref name,
                direction_is_row,
                stride,
                offset,
            } => {
                let knob = Knob::PerforateSparse {
                    axis: axis(direction_is_row),
                    stride,
                    offset,
                };
                check(name, knob, stride, offset, "stride", "offset")
            }
        }
    }
}

/// `knob` if it is one of [`Knob::all`], else which of its two keys is out of range.
fn check(
    name: &str,
    knob: Knob,
    stride: usize,
    offset: usize,
    stride_key: &'static str,
    offset_key: &'static str,
) -> Result<Knob, (String, &'static str, String)> {
    if Knob::all().contains(&knob) {
        return Ok(knob);
    }
    let (key, why) = if offset >= stride {
        (
            offset_key,
            format!("{offset} is not below the stride {stride}"),
        )
    } else {
        (stride_key, format!("{stride} is not an implemented stride"))
    };
    Err((name.to_owned(), key, why))
}

/// The line (1-based) of the `index`-th top-level object of the JSON array `text`.
fn object_line(text: &str, index: usize) -> usize {
    let mut depth = 0usize;
    let mut seen = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1;
    for c in text.chars() {
        match c {
            '\n' => line += 1,
            _ if in_string => match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            },
            '"' => in_string = true,
            '{' | '[' => {
                if c == '{' && depth == 1 {
                    if seen == index {
                        return line;
                    }
                    seen += 1;
                }
                depth += 1;
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c != '\n' && !in_string {
            escaped = false;
        }
    }
    line
}

/// The knobs declared in the JSON file at `path`, in its order, duplicates removed; the
/// baseline is always the search's first allele whether declared or not.
pub fn knobs_from_file(path: &Path) -> Result<Vec<Knob>, Error> {
    let bad = |what: String| Error::BadKnobs {
        path: path.to_path_buf(),
        what,
    };
    let text = crate::error::read_text(path)?;
    // A syntax error: serde_json names its line and column. The objects are then read one by
    // one, so that a bad one (unknown class or key, missing key, wrong type) is named by its
    // index and line, where serde_json would point after the whole object.
    let values: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let declared: Vec<Declared> = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v)
                .map_err(|e| bad(format!("knob {i} (line {}): {e}", object_line(&text, i))))
        })
        .collect::<Result<_, _>>()?;
    let mut knobs = vec![];
    for (i, d) in declared.iter().enumerate() {
        let knob = d.knob().map_err(|(name, key, why)| {
            bad(format!(
                "knob {i} (name {name:?}, line {}): `{key}`: {why}",
                object_line(&text, i)
            ))
        })?;
        if !knobs.contains(&knob) {
            knobs.push(knob);
        }
    }
    if knobs.is_empty() {
        return Err(bad("declares no knob".into()));
    }
    Ok(knobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Vec<Knob>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knobs.json");
        std::fs::write(&path, text).unwrap();
        knobs_from_file(&path).map_err(|e| {
            let e = e.to_string();
            assert!(e.contains("knobs.json"), "{e}");
            e
        })
    }

    #[test]
    fn reads_predtuners_format() {
        let knobs = load(
            r#"[{"class": "FP32Baseline", "name": "11", "devices": ["cpu"], "baseline_priority": 1},
 {"direction_is_row": false, "stride": 3, "offset": 2, "use_fp16": false,
  "class": "PerforateConv2dStride", "name": "127", "exp_speedup": 1.5, "devices": ["cpu"]},
 {"skip_every": 4, "skip_offset": 3, "interp_rate": 1.0, "use_fp16": false,
  "class": "Conv2dSampling", "name": "239", "exp_speedup": 1.33, "devices": ["cpu"]},
 {"class": "FP16Approx", "name": "12", "exp_speedup": 1.5},
 {"class": "PerforateSparse", "name": "s", "direction_is_row": true, "stride": 4, "offset": 1},
 {"direction_is_row": false, "stride": 2, "offset": 0, "use_fp16": true,
  "class": "PerforateConv2dStride", "name": "151", "exp_speedup": 3.0, "devices": ["gpu"]},
 {"skip_every": 3, "skip_offset": 2, "interp_rate": 1.0, "use_fp16": true,
  "class": "Conv2dSampling", "name": "265", "exp_speedup": 2.25, "devices": ["gpu"]}]"#,
        )
        .unwrap();
        assert_eq!(
            knobs,
            vec![
                Knob::Baseline,
                Knob::Perforate {
                    axis: Axis::Cols,
                    stride: 3,
                    offset: 2
                },
                Knob::Sample {
                    stride: 4,
                    offset: 3
                },
                Knob::Fp16,
                Knob::PerforateSparse {
                    axis: Axis::Rows,
                    stride: 4,
                    offset: 1
                },
                Knob::PerforateFp16 {
                    axis: Axis::Cols,
                    stride: 2,
                    offset: 0
                },
                Knob::SampleFp16 {
                    stride: 3,
                    offset: 2
                },
            ]
        );
    }

    #[test]
    fn bad_declarations_name_the_file_line_and_key() {
        let perf = |extra: &str| {
            format!(
                "[\n  {{\"class\": \"FP32Baseline\", \"name\": \"11\"}},\n  {{\"class\": \"PerforateConv2dStride\", \"name\": \"1\",\n   \"direction_is_row\": true, {extra}}}\n]"
            )
        };
        let cases = [
            (
                perf(r#""stride": 4, "offset": 4, "use_fp16": true"#),
                vec!["line 3", "`offset`", "not below the stride 4"],
            ),
            (
                perf(r#""stride": 3, "offset": 3"#),
                vec!["line 3", "`offset`", "not below the stride 3"],
            ),
            (
                perf(r#""stride": 5, "offset": 0"#),
                vec!["line 3", "`stride`", "5 is not an implemented"],
            ),
            (
                perf(r#""stride": 2, "ofset": 0"#),
                vec!["knob 1 (line 3)", "unknown field `ofset`"],
            ),
            (
                perf(r#""offset": 0"#),
                vec!["knob 1 (line 3)", "missing field `stride`"],
            ),
            (
                perf(r#""stride": "two", "offset": 0"#),
                vec!["knob 1 (line 3)", "invalid type", "expected usize"],
            ),
            (
                r#"[{"class": "PromiseSim", "name": "1"}]"#.to_owned(),
                vec!["knob 0 (line 1)", "unknown variant `PromiseSim`"],
            ),
            (
                r#"[{"class": "Conv2dSampling", "name": "x", "skip_every": 2, "skip_offset": 0, "interp_rate": 0.5}]"#
                    .to_owned(),
                vec!["`interp_rate`", "0.5"],
            ),
            ("[".to_owned(), vec!["EOF", "line 1"]),
            ("[1]".to_owned(), vec!["knob 0 (line 1)", "invalid type"]),
            ("[]".to_owned(), vec!["declares no knob"]),
        ];
        for (text, expected) in cases {
            let err = load(&text).unwrap_err();
            for e in expected {
                assert!(err.contains(e), "{e:?} not in {err}");
            }
        }
    }
}
