//! Keeping freed memory in the process, so that burn's CPU backends stop faulting fresh pages
//! in at every step.
//!
//! burn's CPU backends (flex, ndarray) allocate every step's activations, gradients and
//! optimiser temporaries afresh and free them at the end of the step: hundreds of kilobytes to
//! megabytes per step for the bundled MLP. glibc's `malloc` returns memory at the top of its
//! heap to the system once more than `M_TRIM_THRESHOLD` of it is free, and serves blocks above
//! `M_MMAP_THRESHOLD` with a fresh `mmap`; both thresholds start low (128 KiB) and adapt only
//! when a mapped block is freed. Whether a run's steps land on memory that glibc keeps or on
//! memory it gives back and faults in again (zeroed by the kernel, one fault per 4 KiB page)
//! depends on where the long-lived allocations happen to sit, so the same loop runs in one of
//! two modes: measured on the 2-core development VM, 220–550 page faults per MLP step and 12–20k
//! images/s, or ~3 per step and 25–36k. Bare runs hit the slow mode too; an observer, whose
//! buffers are allocations like any other, moves the heap's layout and so the odds.
//!
//! [`keep_freed_memory`] raises both thresholds once, at the start of `main`, so that memory
//! freed by one step is reused by the next, as jemalloc does by default (it returns freed
//! pages after a 10-second decay, its `DIRTY_DECAY_MS_DEFAULT`, not on every free). Setting
//! one threshold turns glibc's adaptation of both off (`man mallopt`), so both are set. The price is a resident size that stays at
//! the run's peak, which is what a training process reaches anyway at every step.
//!
//! ```
//! let tuning = giving_burn::heap::keep_freed_memory();
//! println!("{tuning}"); // e.g. "glibc malloc keeps up to 1024 MiB freed at its top; blocks up to 32 MiB from its heap"
//! ```

use std::fmt;

/// Blocks up to this size come from the heap instead of a mapping of their own: glibc's
/// largest allowed value on 64-bit (`DEFAULT_MMAP_THRESHOLD_MAX`).
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// Free memory at the heap's top that glibc keeps instead of giving it back to the system.
pub const TRIM_THRESHOLD: usize = 1 << 30;

/// What [`keep_freed_memory`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeapTuning {
    /// glibc's thresholds were raised to [`MMAP_THRESHOLD`] and [`TRIM_THRESHOLD`].
    Applied {
        /// The new `M_MMAP_THRESHOLD`, in bytes.
        mmap_threshold: usize,
        /// The new `M_TRIM_THRESHOLD`, in bytes.
        trim_threshold: usize,
    },
    /// Nothing was changed: the user chose malloc's settings through this environment
    /// variable (`GLIBC_TUNABLES`, `MALLOC_TRIM_THRESHOLD_` or `MALLOC_MMAP_THRESHOLD_`),
    /// which is left to win.
    SetByUser(&'static str),
    /// Nothing was changed: malloc is not glibc's.
    NotGlibc,
    /// glibc refused a setting (`mallopt` returned 0): the one named.
    Refused(&'static str),
}

impl fmt::Display for HeapTuning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeapTuning::Applied {
                mmap_threshold,
                trim_threshold,
            } => write!(
                f,
                "glibc malloc keeps up to {} MiB freed at its top; blocks up to {} MiB from its heap",
                trim_threshold >> 20,
                mmap_threshold >> 20
            ),
            HeapTuning::SetByUser(variable) => {
                write!(f, "malloc left as it is: {variable} is set")
            }
            HeapTuning::NotGlibc => write!(f, "malloc left as it is: malloc is not glibc's"),
            HeapTuning::Refused(what) => write!(f, "glibc refused the setting {what}"),
        }
    }
}

/// The environment variables through which a user sets glibc malloc's thresholds themselves.
const USER_SETTINGS: [&str; 3] = [
    "GLIBC_TUNABLES",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
];

/// Makes glibc's `malloc` keep the memory a training step frees for the next step, instead of
/// returning it to the system and faulting it in again (see the module doc for the
/// measurement). Call it once, early in `main`, before the training allocates; it changes a
/// process-wide setting, so a library never calls it on its user's behalf. The `giving` CLI
/// calls it at start. Does nothing where malloc is not glibc's, or where the user already set
/// malloc's thresholds in the environment.
pub fn keep_freed_memory() -> HeapTuning {
    match USER_SETTINGS
        .into_iter()
        .find(|name| std::env::var_os(name).is_some())
    {
        Some(variable) => HeapTuning::SetByUser(variable),
        None => set_thresholds(),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> HeapTuning {
    // Setting M_TRIM_THRESHOLD also turns glibc's adaptive thresholds off, so the mmap
    // threshold must be set with it (or it would stay at 128 KiB for good).
    let settings = [
        ("M_MMAP_THRESHOLD", libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        ("M_TRIM_THRESHOLD", libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD),
    ];
    for (name, param, value) in settings {
        let value = libc::c_int::try_from(value).expect("the thresholds fit in a C int");
        // SAFETY: `mallopt` only sets malloc's parameters, under malloc's own lock; any value
        // is accepted or refused with 0.
        if unsafe { libc::mallopt(param, value) } == 0 {
            return HeapTuning::Refused(name);
        }
    }
    HeapTuning::Applied {
        mmap_threshold: MMAP_THRESHOLD,
        trim_threshold: TRIM_THRESHOLD,
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> HeapTuning {
    HeapTuning::NotGlibc
}
