//! HPVM's rule for the rows (columns) a perforation skips, shared by the two ways a
//! perforated layer is computed ([`super::skip_perforate`] through burn's operations,
//! [`super::host_conv`] on the host).

/// Where output row `r < size` comes from in HPVM's perforation: `(lo, hi)` computed rows
/// whose mean it is (`lo == hi`: a copy). Rows are numbered in the full output.
pub(crate) fn hpvm_sources(size: usize, stride: usize, offset: usize) -> Vec<(usize, usize)> {
    (0..size)
        .map(|r| {
            if r % stride != offset {
                (r, r)
            } else if r == 0 {
                (1, 1)
            } else if r == size - 1 {
                (r - 1, r - 1)
            } else {
                (r - 1, r + 1)
            }
        })
        .collect()
}
