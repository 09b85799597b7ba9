//! The synchronisation primitives the feed's append/park/wake protocol is built from (its
//! atomics, its mutex, and the counted, once-set links between its chunks),
//! imported through here so that its loom models (`src/feed/loom_models.rs`) can swap in
//! loom's checked versions: tokio's and crossbeam's pattern.
//!
//! In every ordinary build these are plain re-exports (`std`'s atomics, `Arc` and `OnceLock`,
//! parking_lot's mutex), so production code compiles to exactly what it would naming them
//! directly. Only a test build with
//! `RUSTFLAGS="--cfg giving_loom"` takes loom's (they panic outside `loom::model`, so nothing else in
//! such a build may run).

#[cfg(not(all(test, giving_loom)))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
// parking_lot's: its lock and unlock are one atomic operation each inline, with no poison
// flag to check on either side (the feed's append takes it once per event, and nothing
// user-supplied runs under it, so there is nothing a poison flag would protect).
#[cfg(not(all(test, giving_loom)))]
pub(crate) use parking_lot::{Mutex, MutexGuard};

#[cfg(all(test, giving_loom))]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

// A full fence, for the feed's asymmetric fences where the real ones cannot run (Miri, loom):
// see src/feed/owner.rs.
#[cfg(all(test, giving_loom))]
pub(crate) use loom::sync::atomic::fence;
#[cfg(all(test, giving_loom))]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(all(miri, not(all(test, giving_loom))))]
pub(crate) use std::sync::atomic::fence;

/// Locks `mutex`: parking_lot's cannot be poisoned; loom's (std's API) is recovered if it
/// was, since nothing under the feed's lock can leave it half-updated.
#[cfg(not(all(test, giving_loom)))]
#[inline]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock()
}

#[cfg(all(test, giving_loom))]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(not(all(test, giving_loom)))]
pub(crate) use std::sync::{Arc, OnceLock};

/// `Arc::into_inner`: the value if this was the last reference (the feed frees a chain of
/// chunks with it, in a loop).
#[cfg(not(all(test, giving_loom)))]
#[inline]
pub(crate) fn arc_into_inner<T>(arc: Arc<T>) -> Option<T> {
    Arc::into_inner(arc)
}

#[cfg(all(test, giving_loom))]
pub(crate) use loom::sync::Arc;

/// Loom's `Arc` has no `into_inner`; `try_unwrap` differs only when two threads drop their
/// last references at once (both may fail; the value is then dropped normally, recursively),
/// which the models' short chains tolerate.
#[cfg(all(test, giving_loom))]
pub(crate) fn arc_into_inner<T>(arc: Arc<T>) -> Option<T> {
    Arc::try_unwrap(arc).ok()
}

#[cfg(all(test, giving_loom))]
pub(crate) use loom_once::OnceLock;

/// The part of `std::sync::OnceLock` the feed uses (a chunk's `next` link), made of loom's
/// primitives so that loom sees the link's release (`set`) and acquire (`get`): with std's,
/// loom would see a reader reach the next chunk's slots with no happens-before edge to their
/// creation and report a causality violation that the real `OnceLock` does not have.
#[cfg(all(test, giving_loom))]
mod loom_once {
    use loom::cell::UnsafeCell;
    use loom::sync::Mutex;
    use loom::sync::atomic::{AtomicBool, Ordering};

    pub(crate) struct OnceLock<T> {
        /// Whether `value` is set; stored with `Release` after the write.
        set: AtomicBool,
        /// Serialises setters (the feed sets under its own mutex anyway).
        setting: Mutex<()>,
        value: UnsafeCell<Option<T>>,
    }

    // SAFETY: as std's `OnceLock`: the value is written once, before `set` is released, and
    // only read after `set` is acquired; `take` needs `&mut self`.
    unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}

    impl<T> OnceLock<T> {
        pub(crate) fn new() -> Self {
            Self {
                set: AtomicBool::new(false),
                setting: Mutex::new(()),
                value: UnsafeCell::new(None),
            }
        }

        pub(crate) fn get(&self) -> Option<&T> {
            if !self.set.load(Ordering::Acquire) {
                return None;
            }
            // SAFETY: `set` was acquired, so the one write happened before, and the value is
            // never written again while shared.
            self.value.with(|value| unsafe { (*value).as_ref() })
        }

        pub(crate) fn set(&self, value: T) -> Result<(), T> {
            let _setting = self.setting.lock().unwrap_or_else(|e| e.into_inner());
            if self.set.load(Ordering::Relaxed) {
                return Err(value);
            }
            // SAFETY: no reader looks at the value before `set` is true, and setters are
            // serialised by `setting`.
            self.value.with_mut(|slot| unsafe { *slot = Some(value) });
            self.set.store(true, Ordering::Release);
            Ok(())
        }

        pub(crate) fn take(&mut self) -> Option<T> {
            self.set.store(false, Ordering::Relaxed);
            // SAFETY: `&mut self`: no other access.
            self.value.with_mut(|slot| unsafe { (*slot).take() })
        }
    }
}

/// Spin-loop hints a reader waits *without looking* once it has caught up, before its first
/// look: while it does not look, the giving thread's stores to the next slots find their cache
/// lines in its own cache, and the events that arrive meanwhile are then taken in one run. A
/// reader looking right away keeps pulling the line the giving thread writes next, and each
/// look costs that thread a transfer of the line back. 64 hints are about 1.6 µs on this
/// 2-core VM's EPYC (a `pause` takes 25 ns there). Measured with the feed's lock-free append,
/// 1M events of `give!(step, loss)` and one subscriber by reference, runs interleaved: without
/// the wait 38–109 ns per event, with 32 hints 38–87, 64 hints 28–63, 128 hints 43–90 (the
/// machine's slow phases, 200–300 ns for every setting alike, left out).
const BLIND_SPINS: u32 = if cfg!(all(test, giving_loom)) { 0 } else { 64 };

/// Rounds of doubling spins a reader then waits for the next event, looking after each,
/// before it parks (15 spin-loop hints in all). Measured on the 2-core VM with 1M events and
/// one subscriber, before the blind wait above: 4 rounds gave 49–136 ns per event over 12
/// runs, 7 rounds 54–251 ns, 10 rounds 91–279 ns; a longer spin keeps the slot's cache line
/// away from the giving thread. The loom models do not spin: the spin only looks (it cannot
/// lose a wake-up), and each look multiplies the interleavings loom must run.
const SPIN_ROUNDS: u32 = if cfg!(all(test, giving_loom)) { 0 } else { 4 };

/// Waits briefly, without a lock or a system call, until `ready` holds: true if it did within
/// [`BLIND_SPINS`] spin-loop hints and then [`SPIN_ROUNDS`] rounds of doubling ones: a feed's
/// sole reader (a scope's only lossless subscriber, or a probe's stream) spins so before it
/// parks.
pub(crate) fn spin_until(ready: impl Fn() -> bool) -> bool {
    for _ in 0..BLIND_SPINS {
        std::hint::spin_loop();
    }
    for round in 0..SPIN_ROUNDS {
        for _ in 0..1u32 << round {
            std::hint::spin_loop();
        }
        if ready() {
            return true;
        }
    }
    false
}
