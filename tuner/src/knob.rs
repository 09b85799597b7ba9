//! Approximation knobs: what can be done to one convolution layer instead of computing it
//! exactly, each with the cost factor the linear cost model charges for it.

use std::fmt;
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

/// One way of computing a convolution layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// The exact convolution.
    Baseline,
    /// Perforated convolution: only the output rows (or columns) `offset, offset + stride, …`
    /// are computed (a convolution with that stride), the others are linearly interpolated
    /// from their computed neighbours.
    Perforate {
        /// Rows or columns.
        axis: Axis,
        /// One computed row (column) in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first computed row (column), below `stride`.
        offset: usize,
    },
    /// Filter sampling: every `stride`-th element of each flattened `(channel, ky, kx)` filter,
    /// starting at `offset`, is skipped; the kept weights are scaled by `total / kept` so the
    /// expected sum is unchanged.
    Sample {
        /// One skipped element in `stride`: 2, 3 or 4.
        stride: usize,
        /// The first skipped element, below `stride`.
        offset: usize,
    },
    /// The convolution computed in half precision (f16 inputs, weights and outputs).
    Fp16,
}

impl Knob {
    /// Every knob, baseline first: the search space of one layer.
    pub fn all() -> Vec<Knob> {
        let mut knobs = vec![Knob::Baseline];
        for axis in [Axis::Rows, Axis::Cols] {
            for stride in 2..=4 {
                for offset in 0..2 {
                    knobs.push(Knob::Perforate {
                        axis,
                        stride,
                        offset,
                    });
                }
            }
        }
        for stride in 2..=4 {
            for offset in 0..2 {
                knobs.push(Knob::Sample { stride, offset });
            }
        }
        knobs.push(Knob::Fp16);
        knobs
    }

    /// The knob's identifier, as `--list-knobs` prints it and `configs.json` stores it:
    /// `baseline`, `perf_row_k2_o0`, `perf_col_k3_o1`, `samp_k4_o0`, `fp16`.
    pub fn id(&self) -> String {
        match *self {
            Knob::Baseline => "baseline".into(),
            Knob::Perforate {
                axis,
                stride,
                offset,
            } => {
                let axis = match axis {
                    Axis::Rows => "row",
                    Axis::Cols => "col",
                };
                format!("perf_{axis}_k{stride}_o{offset}")
            }
            Knob::Sample { stride, offset } => format!("samp_k{stride}_o{offset}"),
            Knob::Fp16 => "fp16".into(),
        }
    }

    /// The fraction of the exact layer's multiply-adds this knob performs, which the linear
    /// cost model charges: `1/stride` for perforation (the interpolation is a few additions
    /// per output, not counted), `(stride-1)/stride` for sampling, `1/2` for f16 (half the
    /// bytes moved and, where the hardware has it, twice the arithmetic rate).
    pub fn cost_factor(&self) -> f64 {
        match *self {
            Knob::Baseline => 1.0,
            Knob::Perforate { stride, .. } => 1.0 / stride as f64,
            Knob::Sample { stride, .. } => (stride - 1) as f64 / stride as f64,
            Knob::Fp16 => 0.5,
        }
    }

    /// Whether the search uses this knob unless told otherwise: every knob but `fp16`, which
    /// the CPU (`flex`) backend computes without f16 arithmetic, several times slower than the
    /// exact layer (docs/tuner.md gives the measurements). `--knobs` adds it back, e.g. on a
    /// GPU backend.
    pub fn default_search(&self) -> bool {
        *self != Knob::Fp16
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
                let what = match axis {
                    Axis::Rows => "rows",
                    Axis::Cols => "columns",
                };
                format!(
                    "compute output {what} {offset}, {offset}+{stride}, … and interpolate the rest"
                )
            }
            Knob::Sample { stride, offset } => {
                format!("skip filter elements {offset}, {offset}+{stride}, … and rescale the rest")
            }
            Knob::Fp16 => "half-precision convolution (f16)".into(),
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
    }
}
