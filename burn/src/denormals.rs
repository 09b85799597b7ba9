//! Flushing denormal (subnormal) floats to zero on the CPU threads that train, as TensorFlow
//! does by default and PyTorch's `torch.set_flush_denormal(True)` asks.
//!
//! As a model converges, its gradients, optimiser moments and some activations shrink below
//! `f32::MIN_POSITIVE` (1.2e-38); x86 cores compute on such subnormal numbers through a slow
//! microcode path, tens of times slower per operation. Measured on the 2-core development VM
//! with the bundled MLP on flex: the first 10 steps of a run at 20–36k images/s, and the same
//! run at 11–15k after 2,000 steps, bare or observed alike; with denormals flushed, 20–32k for
//! the whole run. Throughput that decays with the length of the run makes every comparison of
//! runs of different lengths (a bench against `giving train`) say more about convergence than
//! about the code.
//!
//! The setting is per thread (x86's `MXCSR`, aarch64's `FPCR`), and a thread starts with its
//! creator's (on Linux): [`flush_denormals`] sets it on the calling thread, so on the threads
//! it starts afterwards, and on every worker of rayon's global pool, which burn's CPU backends
//! (flex, through gemm) run their parallel kernels on, by building that pool with a start
//! handler (whichever thread first starts it). Call it first thing in `main`, before burn has run anything: rayon's global pool
//! can be built only once. What changes numerically: results below 1.2e-38 in magnitude become
//! 0 (FTZ) and such inputs are read as 0 (DAZ), which is below any loss or gradient a training
//! run can tell apart. GPU backends are not affected.
//!
//! ```
//! let flush = giving_burn::denormals::flush_denormals();
//! if flush.this_thread {
//!     let tiny = std::hint::black_box(f32::MIN_POSITIVE);
//!     assert_eq!(tiny / 2.0, 0.0); // would be a subnormal 5.9e-39
//! }
//! println!("{flush}");
//! ```

use std::fmt;

/// What [`flush_denormals`] set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenormalFlush {
    /// Denormals are flushed to zero on the calling thread (false on an architecture other than
    /// x86_64 and aarch64).
    pub this_thread: bool,
    /// rayon's global pool was built with every worker flushing; false with the reason where
    /// the pool existed already (someone used rayon first) or could not be built.
    pub rayon_workers: Result<(), String>,
}

impl fmt::Display for DenormalFlush {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let thread = if self.this_thread {
            "denormals flushed to zero on this thread"
        } else {
            "denormals kept (no flush-to-zero control on this CPU)"
        };
        match &self.rayon_workers {
            Ok(()) => write!(f, "{thread} and on rayon's workers"),
            Err(why) => write!(f, "{thread}; rayon's workers not set: {why}"),
        }
    }
}

/// Flushes denormals to zero on this thread and on rayon's global pool (see the module doc).
/// Call it once, first thing in `main`: it sets process-wide state (the global pool), so a
/// library never calls it on its user's behalf. The `giving` CLI calls it at start unless
/// `GIVING_KEEP_DENORMALS` is set.
pub fn flush_denormals() -> DenormalFlush {
    let this_thread = flush_denormals_on_this_thread();
    let rayon_workers = rayon::ThreadPoolBuilder::new()
        .start_handler(|_| {
            flush_denormals_on_this_thread();
        })
        .build_global()
        .map_err(|e| e.to_string());
    DenormalFlush {
        this_thread,
        rayon_workers,
    }
}

/// Flushes denormals to zero on the calling thread only (for a thread of your own that runs
/// burn's CPU kernels); true where the CPU has the control.
pub fn flush_denormals_on_this_thread() -> bool {
    set_flush_mode()
}

#[cfg(target_arch = "x86_64")]
fn set_flush_mode() -> bool {
    /// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
    const FTZ_DAZ: u32 = 0x8040;
    let mut csr: u32 = 0;
    // SAFETY: `stmxcsr` stores this thread's MXCSR (SSE, part of x86_64) into `csr`, and
    // `ldmxcsr` loads it back with the two flush bits set: no rounding mode changes, only
    // results that the default mode would make subnormal (which is the point). The compiler
    // folds constants as if in the default mode; a folded subnormal stays one, as before.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &raw mut csr, options(nostack, preserves_flags));
        csr |= FTZ_DAZ;
        std::arch::asm!("ldmxcsr [{}]", in(reg) &raw const csr, options(nostack, preserves_flags, readonly));
    }
    true
}

#[cfg(target_arch = "aarch64")]
fn set_flush_mode() -> bool {
    /// FPCR's flush-to-zero bit (FZ).
    const FZ: u64 = 1 << 24;
    let mut fpcr: u64;
    // SAFETY: reading and writing this thread's FPCR; only the FZ bit changes.
    unsafe {
        std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags));
        std::arch::asm!("msr fpcr, {}", in(reg) fpcr | FZ, options(nomem, nostack, preserves_flags));
    }
    true
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn set_flush_mode() -> bool {
    false
}
