//! Procedural 32×32 RGB images of ten shape classes, a CIFAR-shaped stand-in that needs no
//! download (the network the tuner approximates is trained and tuned on it).
//!
//! Each class is a signed-distance shape (disc, ring, square, frame, triangle, plus, cross,
//! two horizontal bars, two vertical bars, diamond). Every image draws its class with its own
//! random variations, all derived from `(seed, split, index)`: size, position, rotation,
//! foreground and background colours (a gradient), then Gaussian pixel noise. Colour carries
//! no class information, so a model has to look at the outline; rings, frames and discs, or
//! crosses and pluses, differ only in fine detail, which is what approximations blur first.

use super::ClassificationData;
use crate::rng::Rng;

/// Side of a shape image in pixels (images are `3 × SHAPE_SIDE × SHAPE_SIDE`, channel first).
pub const SHAPE_SIDE: usize = 32;
/// Number of shape classes.
pub const SHAPE_CLASSES: usize = 10;

/// The three disjoint splits of the shapes dataset, drawn from independent random streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// Training images.
    Train,
    /// The tuning set: the tuner measures QoS on it.
    Tune,
    /// The test set: configurations found are checked on it.
    Test,
}

impl Split {
    fn stream(self) -> u64 {
        match self {
            Split::Train => 0x7472_6169,
            Split::Tune => 0x7475_6e65,
            Split::Test => 0x7465_7374,
        }
    }
}

/// Signed distance (negative inside, in shape units: the shape spans about `[-1, 1]²`) from
/// `(u, v)` to the outline of class `class`.
// 0.7071 (≈ 1/√2) rotates by 45°; it is kept as written rather than as `FRAC_1_SQRT_2` because
// the images, hence the cached weights and the figures in docs/tuner.md, depend on its bits.
#[allow(clippy::approx_constant)]
fn distance(class: usize, u: f64, v: f64) -> f64 {
    let (au, av) = (u.abs(), v.abs());
    let bar = |w: f64, h: f64, x: f64, y: f64| (x.abs() - w).max(y.abs() - h);
    match class {
        0 => (u * u + v * v).sqrt() - 0.95,
        1 => ((u * u + v * v).sqrt() - 0.72).abs() - 0.24,
        2 => au.max(av) - 0.8,
        3 => (au.max(av) - 0.66).abs() - 0.2,
        4 => (-v - 0.55).max(au * 0.866 + v * 0.5 - 0.45),
        5 => bar(0.26, 1.0, u, v).min(bar(1.0, 0.26, u, v)),
        6 => {
            let (p, q) = ((u + v) * 0.7071, (u - v) * 0.7071);
            bar(0.24, 1.05, p, q).min(bar(1.05, 0.24, p, q))
        }
        7 => (au - 0.95).max((av - 0.5).abs() - 0.22),
        8 => (av - 0.95).max((au - 0.5).abs() - 0.22),
        _ => (au + av) * 0.7071 - 0.72,
    }
}

/// A random RGB colour in `[0, 1]³`.
fn colour(rng: &mut Rng) -> [f64; 3] {
    [rng.uniform(), rng.uniform(), rng.uniform()]
}

fn brightness(c: [f64; 3]) -> f64 {
    (c[0] + c[1] + c[2]) / 3.0
}

/// Draws one image of `class` into `out` (`3 × side × side`, channel first), values centred
/// near 0.
pub fn render_shape(class: usize, rng: &mut Rng, out: &mut [f32]) {
    let side = SHAPE_SIDE;
    let scale = rng.range(6.5, 11.0); // pixels per shape unit
    let cx = side as f64 / 2.0 + rng.range(-4.0, 4.0);
    let cy = side as f64 / 2.0 + rng.range(-4.0, 4.0);
    let angle = rng.range(-0.35, 0.35);
    let (sin, cos) = angle.sin_cos();
    let fg = colour(rng);
    // The background differs from the shape in brightness, so the outline is always visible,
    // but by a random amount (harder images exist).
    let mut bg0 = colour(rng);
    for _ in 0..8 {
        if (brightness(bg0) - brightness(fg)).abs() > 0.2 {
            break;
        }
        bg0 = colour(rng);
    }
    let bg1 = bg0.map(|c| (c + rng.range(-0.25, 0.25)).clamp(0.0, 1.0));
    let noise = rng.range(0.03, 0.12);
    for y in 0..side {
        for x in 0..side {
            let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
            let (u, v) = (
                (cos * dx + sin * dy) / scale,
                (-sin * dx + cos * dy) / scale,
            );
            // Antialiased coverage of the pixel: distance in pixels through a unit ramp.
            let coverage = (0.5 - distance(class, u, v) * scale).clamp(0.0, 1.0);
            let t = y as f64 / side as f64;
            for c in 0..3 {
                let bg = bg0[c] * (1.0 - t) + bg1[c] * t;
                let value = bg * (1.0 - coverage) + fg[c] * coverage + noise * rng.normal();
                out[c * side * side + y * side + x] = (value - 0.5) as f32;
            }
        }
    }
}

/// `len` shape images of split `split`, deterministic in `(seed, split)`: classes are drawn
/// uniformly, image `i` is the same whatever `len` is.
pub fn shapes(seed: u64, split: Split, len: usize) -> ClassificationData {
    let dim = 3 * SHAPE_SIDE * SHAPE_SIDE;
    let mut features = vec![0.0f32; len * dim];
    let mut labels = Vec::with_capacity(len);
    let base = Rng::new(seed).fork(split.stream());
    for (i, image) in features.chunks_exact_mut(dim).enumerate() {
        let mut rng = base.fork(i as u64);
        let class = rng.below(SHAPE_CLASSES);
        render_shape(class, &mut rng, image);
        labels.push(class as u32);
    }
    ClassificationData {
        features,
        labels,
        dim,
        classes: SHAPE_CLASSES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_disjoint() {
        let a = shapes(3, Split::Tune, 20);
        assert_eq!(a, shapes(3, Split::Tune, 20));
        assert_eq!(a.row(5), shapes(3, Split::Tune, 6).row(5));
        assert_ne!(a.row(0), shapes(3, Split::Test, 1).row(0));
        assert_ne!(a.row(0), shapes(4, Split::Tune, 1).row(0));
        assert!(a.labels.iter().all(|&l| (l as usize) < SHAPE_CLASSES));
        assert_eq!(a.dim, 3 * 32 * 32);
    }

    #[test]
    fn every_class_draws_a_visible_shape() {
        for class in 0..SHAPE_CLASSES {
            // Centre pixel versus corner: inside/outside differ for every class but the
            // hollow ones, whose ring is off-centre; count changed pixels instead.
            let inside = (0..SHAPE_SIDE * SHAPE_SIDE)
                .filter(|&p| {
                    let (x, y) = (
                        (p % SHAPE_SIDE) as f64 - 15.5,
                        (p / SHAPE_SIDE) as f64 - 15.5,
                    );
                    distance(class, x / 8.0, y / 8.0) < 0.0
                })
                .count();
            assert!(
                (40..900).contains(&inside),
                "class {class}: {inside} pixels"
            );
        }
    }
}
