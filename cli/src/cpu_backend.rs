//! The process-wide settings the CLI makes for burn's CPU backends before anything runs, and
//! what they were, for the benchmarks to say what they ran under (docs/burn.md, "Two lines at
//! the top of `main`").

use std::sync::OnceLock;

use giving_burn::denormals::DenormalFlush;
use giving_burn::heap::HeapTuning;

/// What [`configure`] did to malloc's settings.
static HEAP: OnceLock<HeapTuning> = OnceLock::new();

/// What [`configure`] did to the threads' floating-point mode (unset: `GIVING_KEEP_DENORMALS`).
static DENORMALS: OnceLock<DenormalFlush> = OnceLock::new();

/// Keeps freed memory in the process and flushes denormals (unless `GIVING_KEEP_DENORMALS` is
/// set). Called first thing in `main`: before anything allocates, and before burn builds
/// rayon's pool.
pub(crate) fn configure() {
    // burn's CPU backends free and allocate megabytes per step, and glibc would otherwise
    // give them back and fault them in again at every step in some runs and not others
    // (docs/architecture.md, "Training under an observer").
    let _ = HEAP.set(giving_burn::heap::keep_freed_memory());
    // A converging model's tiny gradients would otherwise run through the CPU's slow
    // subnormal path, halving throughput as training goes on.
    if std::env::var_os("GIVING_KEEP_DENORMALS").is_none() {
        let _ = DENORMALS.set(giving_burn::denormals::flush_denormals());
    }
}

/// Two lines that say what [`configure`] set: the heap's and the floats'.
pub(crate) fn describe() -> [String; 2] {
    let heap = HEAP
        .get()
        .map_or_else(|| "not configured".to_owned(), ToString::to_string);
    let floats = DENORMALS.get().map_or_else(
        || "denormals kept (GIVING_KEEP_DENORMALS is set)".to_owned(),
        ToString::to_string,
    );
    [format!("heap: {heap}"), format!("floats: {floats}")]
}
