//! Procedurally drawn digit-like glyphs, an MNIST stand-in that needs no download.
//!
//! Each of the ten classes is a set of strokes (polylines) in a unit box. Every image draws its
//! class with its own random variations, all derived from `(seed, index)`:
//! stroke points jittered, a random affine map (scale, shear, rotation), a shift of up to about
//! 2.5 pixels, a random stroke width, antialiased rasterisation, then Gaussian pixel noise.

use super::ClassificationData;
use crate::rng::Rng;
use std::ops::Range;

/// Side of a digit image in pixels (images are `DIGIT_SIDE × DIGIT_SIDE`, one channel).
pub const DIGIT_SIDE: usize = 28;
/// Number of digit classes.
pub const DIGIT_CLASSES: usize = 10;

type Polyline = Vec<(f64, f64)>;

/// An elliptic arc from `a0` to `a1` degrees (y axis pointing down, so angles go clockwise).
fn arc(cx: f64, cy: f64, rx: f64, ry: f64, a0: f64, a1: f64) -> Polyline {
    let n = (((a1 - a0).abs() / 15.0).ceil() as usize).max(2);
    (0..=n)
        .map(|k| {
            let a = (a0 + (a1 - a0) * k as f64 / n as f64).to_radians();
            (cx + rx * a.cos(), cy + ry * a.sin())
        })
        .collect()
}

/// The strokes of glyph `digit` (0–9) in the unit box, y pointing down.
fn glyph(digit: usize) -> Vec<Polyline> {
    match digit {
        0 => vec![arc(0.5, 0.5, 0.28, 0.4, 0.0, 360.0)],
        1 => vec![vec![(0.34, 0.26), (0.52, 0.1), (0.52, 0.9)]],
        2 => {
            let mut top = arc(0.5, 0.32, 0.25, 0.22, 180.0, 380.0);
            top.extend([(0.25, 0.9), (0.8, 0.9)]);
            vec![top]
        }
        3 => vec![
            arc(0.5, 0.3, 0.22, 0.2, 200.0, 450.0),
            arc(0.5, 0.7, 0.24, 0.2, 270.0, 520.0),
        ],
        4 => vec![
            vec![(0.62, 0.1), (0.2, 0.65), (0.82, 0.65)],
            vec![(0.62, 0.1), (0.62, 0.9)],
        ],
        5 => vec![
            vec![(0.75, 0.1), (0.32, 0.1), (0.3, 0.47)],
            arc(0.5, 0.66, 0.24, 0.22, 225.0, 500.0),
        ],
        6 => vec![
            arc(0.5, 0.68, 0.22, 0.21, 0.0, 360.0),
            vec![(0.68, 0.1), (0.42, 0.3), (0.29, 0.64)],
        ],
        7 => vec![vec![(0.2, 0.1), (0.8, 0.1), (0.42, 0.9)]],
        8 => vec![
            arc(0.5, 0.3, 0.19, 0.19, 0.0, 360.0),
            arc(0.5, 0.7, 0.23, 0.21, 0.0, 360.0),
        ],
        9 => vec![
            arc(0.5, 0.32, 0.21, 0.2, 0.0, 360.0),
            vec![(0.71, 0.34), (0.66, 0.9)],
        ],
        _ => panic!("glyph: digit {digit} is not in 0..10"),
    }
}

/// Distance from point `p` to segment `a`–`b`.
fn segment_distance(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (qx, qy) = (a.0 + t * dx - p.0, a.1 + t * dy - p.1);
    (qx * qx + qy * qy).sqrt()
}

/// Renders one image of `digit` with the variations drawn from `rng`, into `out`
/// (`DIGIT_SIDE²` pixels in `[0, 1]`, row-major).
pub fn render_digit(digit: usize, rng: &mut Rng, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        DIGIT_SIDE * DIGIT_SIDE,
        "render_digit: bad buffer"
    );
    out.fill(0.0);
    let glyph_px = 20.0;
    let (sx, sy) = (rng.range(0.8, 1.1), rng.range(0.8, 1.1));
    let shear = rng.range(-0.25, 0.25);
    let angle = rng.range(-0.2, 0.2);
    let (sin, cos) = angle.sin_cos();
    let shift = (rng.range(-2.5, 2.5), rng.range(-2.5, 2.5));
    let half_width = rng.range(0.7, 1.6);
    let jitter = 0.02;
    let centre = DIGIT_SIDE as f64 / 2.0;
    let map = |(u, v): (f64, f64)| {
        let (x, y) = (u - 0.5, v - 0.5);
        let (x, y) = (sx * x + shear * y, sy * y);
        let (x, y) = (cos * x - sin * y, sin * x + cos * y);
        (
            centre + glyph_px * x + shift.0,
            centre + glyph_px * y + shift.1,
        )
    };
    for stroke in glyph(digit) {
        let points: Vec<(f64, f64)> = stroke
            .into_iter()
            .map(|(u, v)| map((u + jitter * rng.normal(), v + jitter * rng.normal())))
            .collect();
        for pair in points.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let reach = half_width + 1.0;
            let clampi = |v: f64| (v.max(0.0) as usize).min(DIGIT_SIDE - 1);
            let (x0, x1) = (clampi(a.0.min(b.0) - reach), clampi(a.0.max(b.0) + reach));
            let (y0, y1) = (clampi(a.1.min(b.1) - reach), clampi(a.1.max(b.1) + reach));
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let d = segment_distance((x as f64 + 0.5, y as f64 + 0.5), a, b);
                    let v = (half_width + 0.5 - d).clamp(0.0, 1.0) as f32;
                    let px = &mut out[y * DIGIT_SIDE + x];
                    *px = px.max(v);
                }
            }
        }
    }
    let noise = rng.range(0.05, 0.2);
    for px in out.iter_mut() {
        *px = (*px + (noise * rng.normal()) as f32).clamp(0.0, 1.0);
    }
}

/// Generates the digit images with indices `indices` of the infinite dataset of seed `seed`.
///
/// Image `i` has label `i % 10` and is a pure function of `(seed, i)`, so disjoint index
/// ranges give disjoint train and validation sets, e.g. `digits(0..10_000, s)` and
/// `digits(10_000..12_000, s)`. Features are `DIGIT_SIDE²` pixels in `[0, 1]`.
pub fn digits(indices: Range<u64>, seed: u64) -> ClassificationData {
    let base = Rng::new(seed);
    let pixels = DIGIT_SIDE * DIGIT_SIDE;
    let n = (indices.end.saturating_sub(indices.start)) as usize;
    let mut features = vec![0.0f32; n * pixels];
    let mut labels = Vec::with_capacity(n);
    for (row, index) in features.chunks_exact_mut(pixels).zip(indices) {
        let label = (index % DIGIT_CLASSES as u64) as usize;
        let mut rng = base.fork(index);
        render_digit(label, &mut rng, row);
        labels.push(label as u32);
    }
    ClassificationData {
        features,
        labels,
        dim: pixels,
        classes: DIGIT_CLASSES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_deterministic_and_disjoint() {
        let a = digits(0..50, 3);
        assert_eq!(a, digits(0..50, 3));
        assert_ne!(a, digits(0..50, 4));
        let tail = digits(40..50, 3);
        assert_eq!(&a.features[40 * 784..], &tail.features[..]);
        assert_eq!(a.labels[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert!(a.features.iter().all(|p| (0.0..=1.0).contains(p)));
    }

    #[test]
    fn glyphs_have_ink_in_the_frame() {
        let d = digits(0..200, 1);
        for i in 0..d.len() {
            let ink: f32 = d.row(i).iter().filter(|&&p| p > 0.5).map(|_| 1.0).sum();
            assert!(
                ink > 15.0,
                "image {i} (digit {}) has {ink} inked pixels",
                d.labels[i]
            );
        }
    }

    #[test]
    fn class_means_differ() {
        // The mean images of different classes must be far apart, or nothing can learn them.
        let d = digits(0..1000, 2);
        let mut means = vec![0.0f32; 10 * 784];
        for i in 0..d.len() {
            let c = d.labels[i] as usize;
            for (m, p) in means[c * 784..(c + 1) * 784].iter_mut().zip(d.row(i)) {
                *m += p / 100.0;
            }
        }
        for a in 0..10 {
            for b in a + 1..10 {
                let dist: f32 = (0..784)
                    .map(|k| (means[a * 784 + k] - means[b * 784 + k]).powi(2))
                    .sum();
                assert!(dist > 2.0, "digits {a} and {b} look alike: {dist}");
            }
        }
    }
}
