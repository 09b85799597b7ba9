use std::ops::{Add, Sub};

/// The primitive numbers (`i8`..`i128`, `u8`..`u128`, `isize`, `usize`, `f32`, `f64`) as the
/// numeric reductions see them: summable, comparable and convertible to `f64` (with `as`
/// semantics, so a very large `u64` loses precision in an average, as it would in Python).
pub trait Numeric: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> {
    /// Zero.
    const ZERO: Self;

    /// The value as an `f64` (`as` conversion).
    fn to_f64(self) -> f64;

    /// An `f64` as this type (`as` conversion); used to produce NaN / ±∞ results.
    fn from_f64(value: f64) -> Self;

    /// `false` for NaN and ±∞; always `true` for integers.
    fn is_finite_num(self) -> bool;
}

macro_rules! int_numeric {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            const ZERO: Self = 0;
            #[inline]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline]
            fn from_f64(value: f64) -> Self { value as $t }
            #[inline]
            fn is_finite_num(self) -> bool { true }
        }
    )*};
}

int_numeric!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

macro_rules! float_numeric {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            const ZERO: Self = 0.0;
            #[inline]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline]
            fn from_f64(value: f64) -> Self { value as $t }
            #[inline]
            fn is_finite_num(self) -> bool { self.is_finite() }
        }
    )*};
}

float_numeric!(f32, f64);

/// Counts of the non-finite values in a window, so that a rolling sum can keep a sum of the
/// finite values only (subtracting ∞ or NaN back out of a sum is impossible) and still give the
/// IEEE answer for the window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NonFinite {
    nan: usize,
    pos_inf: usize,
    neg_inf: usize,
}

impl NonFinite {
    /// Records `x` if it is not finite; returns `true` if it was recorded.
    #[inline]
    pub(crate) fn add<T: Numeric>(&mut self, x: T, delta: isize) -> bool {
        if x.is_finite_num() {
            return false;
        }
        let slot = if x.partial_cmp(&x).is_none() {
            &mut self.nan
        } else if x > T::ZERO {
            &mut self.pos_inf
        } else {
            &mut self.neg_inf
        };
        *slot = slot.wrapping_add_signed(delta);
        true
    }

    /// Whether the window holds any non-finite value.
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.nan + self.pos_inf + self.neg_inf > 0
    }

    /// The IEEE sum of the non-finite values of the window, if any (NaN, +∞, -∞, or NaN for
    /// +∞ + -∞).
    #[inline]
    pub(crate) fn sum(&self) -> Option<f64> {
        if self.nan > 0 || (self.pos_inf > 0 && self.neg_inf > 0) {
            Some(f64::NAN)
        } else if self.pos_inf > 0 {
            Some(f64::INFINITY)
        } else if self.neg_inf > 0 {
            Some(f64::NEG_INFINITY)
        } else {
            None
        }
    }
}
