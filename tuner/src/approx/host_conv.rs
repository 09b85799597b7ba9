//! HPVM's perforation and filter sampling as HPVM's CPU runtime computes them, on a backend
//! that keeps its tensors in host memory (`Flex`): an im2col of only the output positions that
//! are computed and the filter elements that are kept, and one matrix product per image
//! (`gemm`, the crate `Flex`'s own convolution runs on), so the product shrinks by the knob's
//! factor. Expressed through burn's operations instead (strided convolutions, a gather, an
//! im2col of shifted slices), the same knobs cost more on `Flex` than the exact layer they
//! replace: each strided convolution converts the whole input to its own layout, and the
//! gathers and concatenations move every output value several times.
//!
//! Skipped rows (columns) are filled by HPVM's rule ([`super::hpvm_rows`]: the mean of the two
//! neighbours, a copy at either end), in the same pass that puts the computed ones in place.
//! A layer perforated along its columns works on each image transposed (rows and columns of
//! the image and of the kernel swapped), so that its im2col, like every other's, copies whole
//! contiguous lines instead of gathering single values.

use burn::prelude::Backend;
use burn::tensor::Tensor;
use rayon::prelude::*;

use giving_models::host::{map_host, on_host};

use super::hpvm_rows::hpvm_sources;
use crate::knob::Axis;

/// The output positions whose im2col columns are built and multiplied at once: whole lines,
/// about this many positions, so that the columns (`positions × elements` values: 288 kB
/// for a 32-channel 3×3 layer) stay in the core's cache between being written and read by the
/// product, as `flex`'s own convolution tiles its im2col.
const BLOCK_POSITIONS: usize = 256;

/// Every filter element `(c, ky, kx)` of a `[out, channels, kh, kw]` weight, in memory order.
pub(crate) fn every_element([_, channels, kh, kw]: [usize; 4]) -> Vec<(usize, usize, usize)> {
    (0..channels)
        .flat_map(|c| (0..kh).flat_map(move |ky| (0..kw).map(move |kx| (c, ky, kx))))
        .collect()
}

/// Which output positions a [`HostConv`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Positions {
    /// Every one.
    All,
    /// Every row (column) but `offset, offset + stride, …`, which are interpolated.
    Perforated {
        axis: Axis,
        stride: usize,
        offset: usize,
    },
}

/// A same-padded, stride-1 convolution over a subset of its filter elements (rescaled) and of
/// its output positions, computed on the host.
///
/// It works in a *working space*: the image itself, or its transpose for a layer perforated
/// along its columns; there, whole lines (rows) are computed or skipped.
#[derive(Debug, Clone)]
pub(crate) struct HostConv {
    out_channels: usize,
    in_channels: usize,
    /// `[out_channels, elements]`, row-major.
    weight: Vec<f32>,
    /// One per output channel (zeros without a bias).
    bias: Vec<f32>,
    /// The kept filter elements `(channel, ky, kx)` in working space: output `(y, x)` reads
    /// input `(channel, y + ky, x + kx)` of the image padded by `padding`.
    elements: Vec<(usize, usize, usize)>,
    /// The zeros around each input plane in working space, rows and columns.
    padding: [usize; 2],
    /// The lines skipped in working space, `(stride, offset)`: none, or HPVM's perforation.
    skip: Option<(usize, usize)>,
    /// Whether the working space is the transpose of the image (a column perforation).
    transposed: bool,
}

impl HostConv {
    /// A convolution of `weight` (`[out, in, kh, kw]`, row-major) padded by `padding`, keeping
    /// the filter elements `(c, ky, kx)` of `kept` (every channel's taps in any order), each
    /// multiplied by `scale`, and computing `positions`.
    ///
    /// `None` where the backend does not keep its tensors on the host (its operations are kept).
    pub(crate) fn new<B: Backend>(
        weight: &Tensor<B, 4>,
        bias: Option<&Tensor<B, 1>>,
        [ph, pw]: [usize; 2],
        kept: &[(usize, usize, usize)],
        scale: f32,
        positions: Positions,
    ) -> Option<Self> {
        if !on_host::<B>() {
            return None;
        }
        let [out_channels, in_channels, kh, kw] = weight.dims();
        let full = weight.clone().into_data().to_vec::<f32>().ok()?;
        let mut packed = Vec::with_capacity(out_channels * kept.len());
        for o in 0..out_channels {
            let filter = &full[o * in_channels * kh * kw..(o + 1) * in_channels * kh * kw];
            packed.extend(
                kept.iter()
                    .map(|&(c, ky, kx)| filter[(c * kh + ky) * kw + kx] * scale),
            );
        }
        let bias = match bias {
            Some(b) => b.clone().into_data().to_vec::<f32>().ok()?,
            None => vec![0.0; out_channels],
        };
        let (skip, transposed) = match positions {
            Positions::All => (None, false),
            Positions::Perforated {
                axis,
                stride,
                offset,
            } => (Some((stride, offset)), axis == Axis::Cols),
        };
        let (elements, padding) = if transposed {
            let swapped = kept.iter().map(|&(c, ky, kx)| (c, kx, ky)).collect();
            (swapped, [pw, ph])
        } else {
            (kept.to_vec(), [ph, pw])
        };
        Some(Self {
            out_channels,
            in_channels,
            weight: packed,
            bias,
            elements,
            padding,
            skip,
            transposed,
        })
    }

    /// The layer's output for `x` `[batch, in, h, w]`, or `x` back where it cannot be computed
    /// here (not `f32`, another channel count, a side too small to perforate).
    pub(crate) fn forward<B: Backend>(
        &self,
        x: Tensor<B, 4>,
    ) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
        let [_, channels, h, w] = x.dims();
        let [lines, _] = self.working([h, w]);
        let too_small = self.skip.is_some() && lines < 2;
        if channels != self.in_channels || too_small || h == 0 || w == 0 {
            return Err(x);
        }
        map_host(x, |values, [batch, _, h, w]| {
            let mut out = vec![0.0f32; batch * self.out_channels * h * w];
            if batch > 0 {
                self.run(values, &mut out, [h, w]);
            }
            (out, [batch, self.out_channels, h, w])
        })
    }

    /// `x` through `host` where there is one and it can compute `x` (`Ok`), else `x` back for
    /// burn's operations: how a layer that holds an optional host product runs.
    pub(crate) fn first<B: Backend>(
        host: Option<&HostConv>,
        x: Tensor<B, 4>,
    ) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
        match host {
            Some(host) => host.forward(x),
            None => Err(x),
        }
    }

    /// The matrix product an image of `h × w` pixels takes: `[out channels, positions
    /// computed, filter elements kept]` (`m`, `n`, `k` of its GEMM).
    #[cfg(test)]
    pub(crate) fn product_shape(&self, h: usize, w: usize) -> [usize; 3] {
        let [lines, length] = self.working([h, w]);
        [
            self.out_channels,
            self.computed(lines).len() * length,
            self.elements.len(),
        ]
    }

    /// `[lines, line length]` of an `h × w` image in working space.
    fn working(&self, [h, w]: [usize; 2]) -> [usize; 2] {
        if self.transposed { [w, h] } else { [h, w] }
    }

    /// The computed lines of `lines` in working space.
    fn computed(&self, lines: usize) -> Vec<usize> {
        (0..lines)
            .filter(|r| {
                self.skip
                    .is_none_or(|(stride, offset)| r % stride != offset)
            })
            .collect()
    }

    /// Computes every image of `input` into `out`, images side by side on rayon's threads.
    fn run(&self, input: &[f32], out: &mut [f32], [h, w]: [usize; 2]) {
        let [lines, length] = self.working([h, w]);
        let computed = self.computed(lines);
        let m = computed.len() * length;
        let k = self.elements.len();
        let block = (BLOCK_POSITIONS / length).max(1) * length;
        let direct = self.skip.is_none();
        let [ph, pw] = self.padding;
        let padded_side = [lines + 2 * ph, length + 2 * pw];
        out.par_chunks_mut(self.out_channels * h * w)
            .zip(input.par_chunks(self.in_channels * h * w))
            .for_each_init(
                || {
                    let product = if direct {
                        vec![]
                    } else {
                        vec![0.0f32; self.out_channels * m]
                    };
                    // The border stays zero: each image overwrites only the inside.
                    let padded = vec![0.0f32; self.in_channels * padded_side[0] * padded_side[1]];
                    (padded, vec![0.0f32; k * block], product)
                },
                |(padded, columns, product), (image_out, image)| {
                    self.pad(image, [h, w], padded);
                    if direct {
                        self.multiply(padded, padded_side, &computed, length, columns, image_out);
                    } else {
                        self.multiply(padded, padded_side, &computed, length, columns, product);
                        self.place(product, image_out, [h, w], &computed);
                    }
                },
            );
    }

    /// `image` (`in_channels × h × w`) into `padded` in working space (transposed where the
    /// columns are perforated), with `padding` zeros around each plane.
    fn pad(&self, image: &[f32], [h, w]: [usize; 2], padded: &mut [f32]) {
        let [ph, pw] = self.padding;
        let [lines, length] = self.working([h, w]);
        let wp = length + 2 * pw;
        for (source, plane) in image
            .chunks_exact(h * w)
            .zip(padded.chunks_exact_mut((lines + 2 * ph) * wp))
        {
            let inside = &mut plane[ph * wp..];
            if self.transposed {
                for (y, row) in source.chunks_exact(w).enumerate() {
                    for (x, &v) in row.iter().enumerate() {
                        inside[x * wp + pw + y] = v;
                    }
                }
            } else {
                for (row, line) in source.chunks_exact(w).zip(inside.chunks_exact_mut(wp)) {
                    line[pw..pw + w].copy_from_slice(row);
                }
            }
        }
    }

    /// `columns[e][i·length + x]`: the input under kept element `e` for output position
    /// `(lines[i], x)` in working space, read from `padded` (`[rows, cols]` of `side`).
    fn im2col(
        &self,
        padded: &[f32],
        [hp, wp]: [usize; 2],
        lines: &[usize],
        length: usize,
        columns: &mut [f32],
    ) {
        let m = lines.len() * length;
        for (&(c, ky, kx), block) in self.elements.iter().zip(columns.chunks_exact_mut(m)) {
            let plane = &padded[c * hp * wp..(c + 1) * hp * wp];
            for (&y, segment) in lines.iter().zip(block.chunks_exact_mut(length)) {
                let from = (y + ky) * wp + kx;
                segment.copy_from_slice(&plane[from..from + length]);
            }
        }
    }

    /// `target[o][p] = bias[o] + Σ_e weight[o][e] · columns[e][p]` for the `m` positions of
    /// `target`, the columns built and multiplied one block of lines at a time
    /// ([`BLOCK_POSITIONS`]).
    fn multiply(
        &self,
        padded: &[f32],
        padded_side: [usize; 2],
        computed: &[usize],
        length: usize,
        columns: &mut [f32],
        target: &mut [f32],
    ) {
        let k = self.elements.len();
        let m = computed.len() * length;
        for (row, &b) in target.chunks_exact_mut(m).zip(&self.bias) {
            row.fill(b);
        }
        let block_lines = (BLOCK_POSITIONS / length).max(1);
        for (b, lines) in computed.chunks(block_lines).enumerate() {
            let mb = lines.len() * length;
            let block = &mut columns[..k * mb];
            self.im2col(padded, padded_side, lines, length, block);
            let first = b * block_lines * length;
            assert!(target.len() >= (self.out_channels - 1) * m + first + mb);
            assert_eq!(self.weight.len(), self.out_channels * k);
            // SAFETY: every matrix lies inside its slice (the lengths checked above): the
            // destination is `out_channels × mb` starting at position `first` of `target`'s
            // rows, `m` apart; `weight` is `out_channels × k` with rows `k` apart; `block` is
            // `k × mb` with rows `mb` apart; the three slices do not overlap.
            unsafe {
                gemm::gemm(
                    self.out_channels,
                    mb,
                    k,
                    target.as_mut_ptr().add(first),
                    1,
                    m as isize,
                    true,
                    self.weight.as_ptr(),
                    1,
                    k as isize,
                    block.as_ptr(),
                    1,
                    mb as isize,
                    1.0f32,
                    1.0f32,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
        }
    }

    /// Puts the computed lines of `product` (working space) in place in `out` (`[out, h, w]`)
    /// and fills the skipped ones by HPVM's rule.
    fn place(&self, product: &[f32], out: &mut [f32], [h, w]: [usize; 2], computed: &[usize]) {
        let Some((stride, offset)) = self.skip else {
            return;
        };
        let [lines, length] = self.working([h, w]);
        let m = computed.len() * length;
        let sources = hpvm_sources(lines, stride, offset);
        for (plane, values) in out.chunks_exact_mut(h * w).zip(product.chunks_exact(m)) {
            if self.transposed {
                // Working line `x` is output column `x`: written down the rows.
                for (&x, column) in computed.iter().zip(values.chunks_exact(length)) {
                    for (y, &v) in column.iter().enumerate() {
                        plane[y * w + x] = v;
                    }
                }
                for row in plane.chunks_exact_mut(w) {
                    fill_skipped(row, 1, &sources, stride, offset);
                }
            } else {
                for (&y, row) in computed.iter().zip(values.chunks_exact(length)) {
                    plane[y * w..(y + 1) * w].copy_from_slice(row);
                }
                fill_skipped(plane, w, &sources, stride, offset);
            }
        }
    }
}

/// Fills the skipped lines `offset, offset + stride, …` of `lines` (each `width` values, one
/// after the other) from the computed ones by HPVM's rule (`sources`, [`hpvm_sources`]): a
/// copy is taken as it is, never added to itself.
fn fill_skipped(
    lines: &mut [f32],
    width: usize,
    sources: &[(usize, usize)],
    stride: usize,
    offset: usize,
) {
    for r in (offset..sources.len()).step_by(stride) {
        let (lo, hi) = sources[r];
        for x in 0..width {
            lines[r * width + x] = if lo == hi {
                lines[lo * width + x]
            } else {
                (lines[lo * width + x] + lines[hi * width + x]) * 0.5
            };
        }
    }
}
