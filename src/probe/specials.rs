//! The specials every instrumented function has, at fixed indices of its variable table (the
//! `#[probe]` macro writes `#enter`, `#exit`, `#value`, `#error` first, in this order).

/// The index of `#exit`.
pub(crate) const EXIT: usize = 1;
/// The index of `#value`.
pub(crate) const VALUE: usize = 2;
/// The index of `#error`.
pub(crate) const ERROR: usize = 3;
/// How many specials precede the arguments.
pub(crate) const SPECIALS: usize = 4;
