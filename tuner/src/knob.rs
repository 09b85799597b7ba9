//! Approximation knobs: what can be done to one convolution layer instead of computing it
//! exactly, each with the cost factor the linear cost model charges for it.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::error::Error;

/// The axis a perforated convolution skips along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Output rows are skipped (computed every `stride` rows).
    Rows,
    /// Output columns are skipped.
    Cols,
}

impl Axis {
    /// The dimension of an NCHW tensor this axis runs along (2: height, 3: width).
    pub fn tensor_dim(self) -> usize {
        match self {
            Axis::Rows => 2,
            Axis::Cols => 3,
        }
    }

    /// What this axis skips, for descriptions: `"rows"` or `"columns"`.
    pub fn plural(self) -> &'static str {
        match self {
            Axis::Rows => "rows",
            Axis::Cols => "columns",
        }
    }
}

/// One way of computing a convolution layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// The exact convolution.
    Baseline,
    /// Perforated convolution as HPVM and PredTuner define it: the output rows (or columns)
    /// `offset, offset + stride, …` are skipped and the others computed exactly; a skipped
    /// row is the mean of its two neighbours, the first row copies the second and the last
    /// row copies the one before it.
    Perforate {
        /// Rows or columns.
        axis: Axis,
        /// One skipped row (column) in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first skipped row (column), below `stride`.
        offset: usize,
    },
    /// This project's aggressive perforation (not in HPVM): only the output rows (columns)
    /// `offset, offset + stride, …` are computed, the others linearly interpolated between
    /// computed neighbours (copies of the nearest one at the borders). For stride 2 it is
    /// HPVM's perforation with the other offset, so only strides 3 and 4 exist.
    PerforateSparse {
        /// Rows or columns.
        axis: Axis,
        /// One computed row (column) in `stride`: 3 or 4.
        stride: usize,
        /// The first computed row (column), below `stride`.
        offset: usize,
    },
    /// Filter sampling as HPVM and PredTuner define it: the elements `offset, offset + stride,
    /// …` of each flattened `(channel, ky, kx)` filter are skipped — except for `stride` 3
    /// on a 3×3 kernel, where channel `c` skips its elements `(c + offset) % 3, … + 3, …` so
    /// that not the same kernel column is skipped in every channel — and the kept weights
    /// are multiplied by `stride / (stride − 1)`.
    Sample {
        /// One skipped element in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first skipped element, below `stride`.
        offset: usize,
    },
    /// The convolution computed in half precision (f16 inputs, weights and outputs).
    Fp16,
    /// HPVM's perforation ([`Knob::Perforate`]) computed in half precision (HPVM's
    /// `perf_fp16`, knobs 151–168; PredTuner's `PerforateConv2dStride` with `use_fp16`): the
    /// input, weights and bias cast to f16, the computed rows and the interpolation in f16,
    /// the output cast back to f32.
    PerforateFp16 {
        /// Rows or columns.
        axis: Axis,
        /// One skipped row (column) in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first skipped row (column), below `stride`.
        offset: usize,
    },
    /// HPVM's filter sampling ([`Knob::Sample`]) computed in half precision (HPVM's
    /// `samp_fp16`, knobs 261–269): the input and the weights cast to f16, the kept weights
    /// rescaled and the convolution computed in f16, the output cast back to f32.
    SampleFp16 {
        /// One skipped element in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first skipped element, below `stride`.
        offset: usize,
    },
}

/// Every `(axis, stride, offset)` of a perforation with these strides: rows first, then
/// columns, each stride with every offset below it.
pub(crate) fn perforations(
    strides: RangeInclusive<usize>,
) -> impl Iterator<Item = (Axis, usize, usize)> {
    [Axis::Rows, Axis::Cols].into_iter().flat_map(move |axis| {
        strides
            .clone()
            .flat_map(move |stride| (0..stride).map(move |offset| (axis, stride, offset)))
    })
}

/// Every `(stride, offset)` of HPVM's filter sampling: strides 2 to 4, every offset.
fn samplings() -> impl Iterator<Item = (usize, usize)> {
    (2..=4).flat_map(|stride| (0..stride).map(move |offset| (stride, offset)))
}

impl Knob {
    /// Every knob, baseline first: the search space of one layer.
    pub fn all() -> Vec<Knob> {
        let mut knobs = vec![Knob::Baseline];
        // HPVM's knob set: every stride with every offset (HPVM's ids 121–138 and 231–239).
        knobs.extend(
            perforations(2..=4).map(|(axis, stride, offset)| Knob::Perforate {
                axis,
                stride,
                offset,
            }),
        );
        knobs.extend(samplings().map(|(stride, offset)| Knob::Sample { stride, offset }));
        knobs.extend(
            perforations(3..=4).map(|(axis, stride, offset)| Knob::PerforateSparse {
                axis,
                stride,
                offset,
            }),
        );
        knobs.push(Knob::Fp16);
        // HPVM's FP16 knob set (151–168 and 261–269), after the others so that adding them
        // left every other knob's position unchanged.
        knobs.extend(
            perforations(2..=4).map(|(axis, stride, offset)| Knob::PerforateFp16 {
                axis,
                stride,
                offset,
            }),
        );
        knobs.extend(samplings().map(|(stride, offset)| Knob::SampleFp16 { stride, offset }));
        knobs
    }

    /// The f32 knob that this one computes in half precision (`perf_fp16_*` → `perf_*`,
    /// `samp_fp16_*` → `samp_*`); `None` for the others.
    pub fn in_f32(&self) -> Option<Knob> {
        match *self {
            Knob::PerforateFp16 {
                axis,
                stride,
                offset,
            } => Some(Knob::Perforate {
                axis,
                stride,
                offset,
            }),
            Knob::SampleFp16 { stride, offset } => Some(Knob::Sample { stride, offset }),
            _ => None,
        }
    }

    /// The knob's identifier, as `--list-knobs` prints it and `configs.json` stores it:
    /// `baseline`, `perf_row_k2_o0`, `perf_col_k3_o2`, `sparse_row_k4_o1`, `samp_k4_o3`,
    /// `fp16`, `perf_fp16_row_k2_o0`, `samp_fp16_k4_o3` (HPVM's knob names `perf_fp16` and
    /// `samp_fp16` with the f32 knob's parameters).
    pub fn id(&self) -> String {
        let axis_id = |axis| match axis {
            Axis::Rows => "row",
            Axis::Cols => "col",
        };
        match *self {
            Knob::Baseline => "baseline".into(),
            Knob::Perforate {
                axis,
                stride,
                offset,
            } => format!("perf_{}_k{stride}_o{offset}", axis_id(axis)),
            Knob::PerforateSparse {
                axis,
                stride,
                offset,
            } => format!("sparse_{}_k{stride}_o{offset}", axis_id(axis)),
            Knob::Sample { stride, offset } => format!("samp_k{stride}_o{offset}"),
            Knob::Fp16 => "fp16".into(),
            Knob::PerforateFp16 {
                axis,
                stride,
                offset,
            } => format!("perf_fp16_{}_k{stride}_o{offset}", axis_id(axis)),
            Knob::SampleFp16 { stride, offset } => format!("samp_fp16_k{stride}_o{offset}"),
        }
    }

    /// The fraction of the exact layer's multiply-adds this knob performs, which the linear
    /// cost model charges: `(stride-1)/stride` for HPVM's perforation and for sampling (the
    /// inverse of HPVM's expected speedups 2, 1.5, 1.33), `1/stride` for the sparse
    /// perforation (the interpolation is a few additions per output, not counted), `1/2`
    /// for f16 (half the bytes moved and, where the hardware has it, twice the arithmetic
    /// rate), and the f32 knob's factor times `1/2` for the f16 perforation and sampling
    /// (HPVM's expected speedups for them, 3, 2.25 and 2, are its f32 ones times 1.5).
    pub fn cost_factor(&self) -> f64 {
        match *self {
            Knob::Baseline => 1.0,
            Knob::Perforate { stride, .. } => (stride - 1) as f64 / stride as f64,
            Knob::PerforateSparse { stride, .. } => 1.0 / stride as f64,
            Knob::Sample { stride, .. } => (stride - 1) as f64 / stride as f64,
            Knob::Fp16 => 0.5,
            Knob::PerforateFp16 { .. } | Knob::SampleFp16 { .. } => {
                0.5 * self.in_f32().map_or(1.0, |k| k.cost_factor())
            }
        }
    }

    /// Whether the search uses this knob unless told otherwise. HPVM's FP32 knob set
    /// (baseline, perforation, sampling) always; the f16 knobs (`fp16`, `perf_fp16_*`,
    /// `samp_fp16_*`: HPVM's GPU set) only where f16 arithmetic is native (`f16_native`: the
    /// wgpu and cuda backends), since the CPU (`flex`) backend computes them several times
    /// slower than the exact layer (docs/tuner.md gives the measurements); never the sparse
    /// perforation, which is not HPVM's. `--knobs` names any of them.
    pub fn default_search(&self, f16_native: bool) -> bool {
        match self {
            Knob::Fp16 | Knob::PerforateFp16 { .. } | Knob::SampleFp16 { .. } => f16_native,
            Knob::PerforateSparse { .. } => false,
            _ => true,
        }
    }

    /// When the search uses this knob, if not always, and why, for `--list-knobs`; `None` for
    /// the knobs searched by default on every backend.
    pub fn opt_in_reason(&self) -> Option<&'static str> {
        match self {
            Knob::Fp16 | Knob::PerforateFp16 { .. } | Knob::SampleFp16 { .. } => Some(
                "searched by default on wgpu and cuda; on flex only with --knobs: f16 is \
                     slower than exact on the CPU",
            ),
            Knob::PerforateSparse { .. } => {
                Some("searched only with --knobs: not an HPVM knob, far more aggressive")
            }
            _ => None,
        }
    }

    /// A one-line description for `--list-knobs`.
    pub fn describe(&self) -> String {
        match *self {
            Knob::Baseline => "exact convolution".into(),
            Knob::Perforate {
                axis,
                stride,
                offset,
            } => {
                let what = axis.plural();
                format!(
                    "skip output {what} {offset}, {offset}+{stride}, … (mean of the neighbours)"
                )
            }
            Knob::PerforateSparse {
                axis,
                stride,
                offset,
            } => {
                let what = axis.plural();
                format!(
                    "compute only output {what} {offset}, {offset}+{stride}, … and interpolate the rest"
                )
            }
            Knob::Sample { stride, offset } => {
                format!(
                    "skip filter elements {offset}, {offset}+{stride}, … and scale the rest by {stride}/{}",
                    stride - 1
                )
            }
            Knob::Fp16 => "half-precision convolution (f16)".into(),
            Knob::PerforateFp16 { .. } | Knob::SampleFp16 { .. } => {
                let f32_knob = self.in_f32().map(|k| k.describe()).unwrap_or_default();
                format!("{f32_knob}, in f16")
            }
        }
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

impl FromStr for Knob {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Knob::all()
            .into_iter()
            .find(|k| k.id() == s)
            .ok_or_else(|| Error::UnknownKnob(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        let all = Knob::all();
        for knob in &all {
            assert_eq!(knob.id().parse::<Knob>().unwrap(), *knob);
            assert!(knob.cost_factor() > 0.0 && knob.cost_factor() <= 1.0);
        }
        let mut ids: Vec<_> = all.iter().map(Knob::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        assert_eq!(all[0], Knob::Baseline);
        assert!("perf_row_k5_o0".parse::<Knob>().is_err());
        assert!("sparse_row_k2_o0".parse::<Knob>().is_err());
        // HPVM's FP32 knobs: 18 perforations and 9 samplings, every offset below the stride.
        let hpvm = |k: &&Knob| matches!(k, Knob::Perforate { .. } | Knob::Sample { .. });
        assert_eq!(all.iter().filter(hpvm).count(), 27);
        assert!("perf_col_k4_o3".parse::<Knob>().is_ok());
        assert!("samp_k3_o2".parse::<Knob>().is_ok());
        // The search defaults to exactly HPVM's FP32 set and the baseline.
        let default: Vec<_> = all.iter().filter(|k| k.default_search(false)).collect();
        assert_eq!(default.len(), 28);
        // Where f16 is native, HPVM's GPU set as well: `fp16` and the 27 FP16 knobs.
        let on_gpu: Vec<_> = all.iter().filter(|k| k.default_search(true)).collect();
        assert_eq!(on_gpu.len(), 28 + 28);
        assert!(
            on_gpu
                .iter()
                .all(|k| !matches!(k, Knob::PerforateSparse { .. }))
        );
        // HPVM's FP16 knobs: 18 perforations (151–168) and 9 samplings (261–269), opt-in,
        // each the f32 knob in f16 at half its cost.
        let fp16: Vec<_> = all.iter().filter(|k| k.in_f32().is_some()).collect();
        assert_eq!(fp16.len(), 27);
        for knob in fp16 {
            let f32_knob = knob.in_f32().unwrap();
            assert!(hpvm(&&f32_knob) && all.contains(&f32_knob), "{knob}");
            assert!(
                !knob.default_search(false) && knob.default_search(true),
                "{knob}"
            );
            assert_eq!(knob.cost_factor(), 0.5 * f32_knob.cost_factor());
            let id = knob.id();
            let stem = id
                .strip_prefix("perf_fp16_")
                .or(id.strip_prefix("samp_fp16_"));
            assert!(f32_knob.id().ends_with(stem.unwrap()), "{id} vs {f32_knob}");
        }
        assert_eq!(
            "perf_fp16_col_k2_o0".parse::<Knob>().unwrap(),
            Knob::PerforateFp16 {
                axis: Axis::Cols,
                stride: 2,
                offset: 0
            }
        );
        assert!("samp_fp16_k4_o3".parse::<Knob>().is_ok());
        assert!("samp_fp16_k4_o4".parse::<Knob>().is_err());
    }
}
