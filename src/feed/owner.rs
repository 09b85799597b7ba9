//! Who may append to a [`Feed`](super::Feed) without its lock: the one thread that gives into
//! it, while no other thread does.
//!
//! A scope is almost always given into by one thread (the training loop). That thread
//! *claims* the feed on an append under the lock and then appends without it: its append is
//! then plain stores, with no atomic read-modify-write. Anyone else who needs the append
//! cursor (a second giving thread, a subscriber, a close) *revokes* the claim under the lock
//! and waits for an append in progress to finish.
//!
//! # Why it is correct
//!
//! The owner announces an append (`appending = true`), then checks that it still owns the
//! feed; a revoker changes the owner, then checks that no append is announced. Between each
//! side's store and its load there must be a full fence, or both could miss the other's store
//! (a store buffered, a load done early). The owner appends per event and a revoker is rare, so
//! the fence is asymmetric: the owner's side is a compiler fence only ([`light_fence`]) and the
//! revoker's is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` ([`heavy_fence`]), which runs a
//! full memory barrier on every CPU running a thread of this process before it returns. Wherever
//! that barrier falls in the owner's program, the pair is ordered as if both sides had fenced:
//! before the owner's store, the owner's load sees the revoker's store; after its load, the
//! revoker's load sees the owner's store; between them, both. liburcu and folly's
//! `asymmetricThreadFence*` rest on the same argument. A reader about to park takes the claim
//! away the same way, so no reader is ever parked while the feed is claimed (see the feed's
//! module doc).
//!
//! Where `membarrier` is missing (not Linux, or a kernel or sandbox without the expedited
//! command) nobody claims a feed and every append takes the lock, as before. Under loom and
//! Miri both sides are `SeqCst` fences, which is what the argument above reduces to.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use crate::sync::{AtomicBool, AtomicU64};

/// Nobody owns the feed: the next append under the lock claims it.
const NOBODY: u64 = 0;
/// Several threads give into the feed: every append takes the lock, for good.
const SHARED: u64 = u64::MAX;

/// The feed's owner and whether it is inside a lock-free append.
pub(super) struct Owner {
    /// [`NOBODY`], [`SHARED`], or the [`thread_token`] of the thread appending without the lock.
    token: AtomicU64,
    /// The owner is between announcing an append ([`Owner::begin`]) and ending it.
    appending: AtomicBool,
}

impl Owner {
    pub(super) fn new() -> Self {
        Self {
            token: AtomicU64::new(NOBODY),
            appending: AtomicBool::new(false),
        }
    }

    /// Starts a lock-free append if the thread `me` owns the feed; the caller then appends and
    /// calls [`end`](Self::end). False: append under the lock.
    #[inline(always)]
    pub(super) fn begin(&self, me: u64) -> bool {
        if self.token.load(Ordering::Relaxed) != me {
            return false;
        }
        self.appending.store(true, Ordering::Relaxed);
        light_fence();
        // Re-checked after the announcement: a revoker that changed the owner before it will
        // see the announcement and wait (see the module doc).
        if self.token.load(Ordering::Relaxed) == me {
            return true;
        }
        self.appending.store(false, Ordering::Release);
        false
    }

    /// Ends a lock-free append: a revoker waiting for it may go on, and sees what it wrote.
    #[inline(always)]
    pub(super) fn end(&self) {
        self.appending.store(false, Ordering::Release);
    }

    /// Under the feed's lock, on an append by `me`: makes `me` the owner if nobody is and
    /// `may_claim`, or takes the feed from another owner for good (several threads give into
    /// it). Afterwards the lock holder may use the cursor.
    pub(super) fn settle(&self, me: u64, may_claim: bool) {
        match self.token.load(Ordering::Relaxed) {
            NOBODY if may_claim && claims_allowed() => self.token.store(me, Ordering::Relaxed),
            NOBODY | SHARED => {}
            owner if owner == me => {}
            _ => self.revoke(SHARED),
        }
    }

    /// Under the feed's lock: nobody appends without the lock until the feed is claimed again,
    /// not even `me` (a reader about to park, which a lock-free append would not wake).
    pub(super) fn release(&self, me: u64) {
        match self.token.load(Ordering::Relaxed) {
            NOBODY | SHARED => {}
            owner if owner == me => self.token.store(NOBODY, Ordering::Relaxed),
            _ => self.revoke(NOBODY),
        }
    }

    /// Under the feed's lock: takes the feed from another thread's claim, so that the lock
    /// holder (`me`) may use the cursor; the next append claims it again.
    pub(super) fn quiesce(&self, me: u64) {
        let owner = self.token.load(Ordering::Relaxed);
        if owner != NOBODY && owner != SHARED && owner != me {
            self.revoke(NOBODY);
        }
    }

    /// Under the feed's lock: no thread appends without the lock from now on (the feed is
    /// closing).
    pub(super) fn share(&self, me: u64) {
        match self.token.load(Ordering::Relaxed) {
            NOBODY | SHARED => self.token.store(SHARED, Ordering::Relaxed),
            owner if owner == me => self.token.store(SHARED, Ordering::Relaxed),
            _ => self.revoke(SHARED),
        }
    }

    /// Whether a thread may be appending without the lock (read under the lock, where only
    /// the lock holder changes the owner).
    #[cfg(test)]
    pub(super) fn is_claimed(&self) -> bool {
        !matches!(self.token.load(Ordering::Relaxed), NOBODY | SHARED)
    }

    /// Replaces the owner by `to`, then waits until an append the owner announced before
    /// seeing that has ended.
    #[cold]
    fn revoke(&self, to: u64) {
        self.token.store(to, Ordering::Relaxed);
        heavy_fence();
        // The owner's append is a few stores; it lasts longer only if its thread was
        // descheduled in the middle, so yield rather than spin for long.
        let mut spins = 0u32;
        while self.appending.load(Ordering::Acquire) {
            spins += 1;
            if spins < 64 && !cfg!(all(test, giving_loom)) {
                std::hint::spin_loop();
            } else {
                yield_now();
            }
        }
    }
}

#[cfg(not(all(test, giving_loom)))]
fn yield_now() {
    std::thread::yield_now();
}

#[cfg(all(test, giving_loom))]
fn yield_now() {
    loom::thread::yield_now();
}

/// The owner's side of the asymmetric fence: keeps the compiler from moving its load above
/// its store; the revoker's [`heavy_fence`] orders them in the processor.
#[inline(always)]
pub(super) fn light_fence() {
    #[cfg(not(any(miri, all(test, giving_loom))))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(any(miri, all(test, giving_loom)))]
    crate::sync::fence(Ordering::SeqCst);
}

/// The revoker's side of the asymmetric fence: a full barrier on every CPU that runs a thread
/// of this process. Called only once [`fences_available`] said yes.
pub(super) fn heavy_fence() {
    #[cfg(all(target_os = "linux", not(any(miri, all(test, giving_loom)))))]
    {
        // SAFETY: the membarrier system call takes two integers and touches no memory of ours.
        let done = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                MEMBARRIER_CMD_PRIVATE_EXPEDITED,
                0 as libc::c_uint,
            )
        };
        // Registered by `fences_available`, the command cannot fail (EPERM is for an
        // unregistered process); going on without the barrier could lose an event.
        assert_eq!(
            done,
            0,
            "membarrier failed after registration: {}",
            std::io::Error::last_os_error()
        );
    }
    #[cfg(any(miri, all(test, giving_loom)))]
    crate::sync::fence(Ordering::SeqCst);
}

/// `MEMBARRIER_CMD_QUERY`, `MEMBARRIER_CMD_PRIVATE_EXPEDITED` and
/// `MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED` from `<linux/membarrier.h>`.
#[cfg(all(target_os = "linux", not(any(miri, all(test, giving_loom)))))]
const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
#[cfg(all(target_os = "linux", not(any(miri, all(test, giving_loom)))))]
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
#[cfg(all(target_os = "linux", not(any(miri, all(test, giving_loom)))))]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// Whether [`heavy_fence`] works here: asked (and the process registered for it) once.
pub(super) fn fences_available() -> bool {
    #[cfg(all(target_os = "linux", not(any(miri, all(test, giving_loom)))))]
    {
        static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVAILABLE.get_or_init(|| {
            // SAFETY: as in `heavy_fence`: integer arguments only.
            let supported = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_QUERY, 0) };
            supported >= 0
                && supported & libc::c_long::from(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0
                // SAFETY: as above.
                && unsafe {
                    libc::syscall(
                        libc::SYS_membarrier,
                        MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                        0,
                    )
                } == 0
        })
    }
    #[cfg(any(miri, all(test, giving_loom)))]
    {
        true
    }
    #[cfg(not(any(target_os = "linux", miri, all(test, giving_loom))))]
    {
        false
    }
}

/// Set to behave as where `membarrier` is refused (no claims: every append takes the lock),
/// for the tests and the peers bench of that path; see [`claims_allowed`].
static REFUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The environment variable that, set to anything, makes the process behave as where
/// `membarrier` is refused: `.ci/run` runs the fan-out tests again under it.
const REFUSE_ENV: &str = "GIVING_REFUSE_MEMBARRIER";

/// Makes feeds claimed from now on (or not) behave as where `membarrier` is refused. A feed
/// already claimed keeps its owner until someone revokes it, which works either way (the
/// fence was registered when it was claimed).
pub(crate) fn refuse_claims(refuse: bool) {
    REFUSED.store(refuse, Ordering::Relaxed);
}

/// Whether an append under the lock may claim a feed: the asymmetric fence works here and
/// neither [`refuse_claims`] nor [`REFUSE_ENV`] said otherwise. Asked under the feed's lock
/// only.
pub(super) fn claims_allowed() -> bool {
    static REFUSED_BY_ENV: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !REFUSED.load(Ordering::Relaxed)
        && !*REFUSED_BY_ENV.get_or_init(|| std::env::var_os(REFUSE_ENV).is_some())
        && fences_available()
}

/// A number for the calling thread, never [`NOBODY`] or [`SHARED`] and never reused.
#[inline(always)]
pub(super) fn thread_token() -> u64 {
    #[cfg(not(all(test, giving_loom)))]
    std::thread_local! {
        static TOKEN: Cell<u64> = const { Cell::new(NOBODY) };
    }
    #[cfg(all(test, giving_loom))]
    loom::thread_local! {
        static TOKEN: Cell<u64> = Cell::new(NOBODY);
    }
    TOKEN.with(|token| {
        let mine = token.get();
        if mine != NOBODY {
            return mine;
        }
        // A plain std counter under loom too: tokens need to be unique, not model-checked.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mine = NEXT.fetch_add(1, Ordering::Relaxed);
        token.set(mine);
        mine
    })
}
