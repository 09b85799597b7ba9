//! [`Feed`]: a scope's events for all its lossless subscribers at once: an append-only log
//! in chunks, written once per event and read by every subscriber through a cursor of its
//! own. A leaf: it knows events, nothing of scopes or routing.
//!
//! Giving an event costs the same whatever the number of lossless subscribers: one slot
//! written, where a queue per subscriber would cost one push each. A chunk is freed when
//! every cursor has left it (each cursor holds its chunk; each chunk holds the next).
//!
//! # Why it is correct
//!
//! - **Writes.** One thread at a time uses the append cursor: the feed's *owner* (the one
//!   thread giving into it, which claimed it) without the lock, or, once no other thread owns
//!   it, whoever holds the feed's mutex. src/feed/owner.rs hands the cursor over: a thread that
//!   needs it (a second giving thread, a subscriber, a close) takes the claim away under the
//!   lock and waits for an append in progress to end. The slot's event is written, then its
//!   `ready` flag is stored with `Release`. One giving thread writes its events in the order it
//!   gives them, so each subscriber sees every thread's events in order. The owner's append is
//!   plain stores: no atomic read-modify-write, so its stores drain from the store buffer while
//!   it goes on instead of waiting at a locked instruction.
//! - **Reads without the lock.** A reader loads `ready` with `Acquire`; once true, the event
//!   written before it is visible, and slots are never rewritten (append only, no reuse), so
//!   the reader can clone the event without further synchronisation. A reader checks up to
//!   [`RUN`] slots at once and takes the run's other events without a look at their slots:
//!   slots stay ready once ready, and an end set later is past them (a close ends a reader at
//!   the events appended so far). Slots become ready in order (one thread at a time appends,
//!   each append ordered after the one before by program order, the lock, or the hand-over's
//!   wait for the owner's `end`), so a run whose last slot is ready is ready whole: one
//!   acquire checks it; otherwise each slot is acquired up to the first not ready. The
//!   reader's end is read once after the acquires, which orders a close before any of them.
//!   Which slots a reader skips (its own derivation's outputs) is read only in a chunk that
//!   has such a slot (a flag the append sets before it releases the slot).
//! - **Readers take turns.** A reader that has taken [`YIELD_AFTER_RUNS`] runs without once
//!   returning `Pending` wakes its own task and returns `Pending`: readers polled by one task
//!   then move through the feed together instead of each draining all that was given before
//!   the next starts. A wake-up of its own task is all it does, so nothing can be lost.
//! - **No lost wake-up, no fence per event.** A reader parks only under the mutex and only
//!   while nobody appends without it: it first takes the claim away (`Owner::release`, which
//!   waits for an append in progress; even from its own thread, whose later lock-free appends
//!   would not wake it), then re-checks its slot (and the end of the feed) and registers its
//!   waker. Every later append takes the lock and collects the registered wakers in the same
//!   critical section, so the two are ordered: either the append came first (the re-check
//!   sees the slot) or the registration did (the append wakes it). The feed is claimed again
//!   only by an append under the lock that finds no reader parked, after [`CLAIM_AFTER`] such
//!   appends in a row: taking the claim away costs the parking reader a `membarrier`, and a
//!   feed whose readers park often (a busy machine, ten readers on one task) keeps the lock
//!   rather than pay it at each park. So the lock-free append never has anyone to wake and
//!   checks nothing for it.
//! - **Spinning before parking.** A sole reader that finds nothing first waits about 1.6 µs
//!   without looking (64 spin-loop hints on this machine), then spins briefly, re-checking its
//!   slot's `ready` flag (a load, no lock): a loop that gives in bursts hands over the next
//!   events before the reader would have parked, and neither side makes a system call (a park
//!   and its wake-up cost microseconds each). Not looking at first keeps the reader off the
//!   cache line the giving thread writes next (see `sync::BLIND_SPINS`). With several readers
//!   none spins: readers polled by one task would each follow the loop live while the others
//!   fall behind. The spin only looks; the park protocol above is unchanged, so it cannot lose
//!   a wake-up.
//! - **Readers under load wait for ticks.** A reader that shares a core with the giving
//!   thread is woken by the first append after it parked, takes that core at once, takes the
//!   few events given meanwhile and parks again: thousands of park/wake cycles a second. After
//!   eight parks in a row less than 100 µs apart it sleeps until the pacer's next tick
//!   instead, as a paced reader does (below), until a tick finds nothing new
//!   (src/feed/load.rs). The protocol is the paced readers': nothing is lost.
//! - **Paced readers.** A reader polled with a pace ([`FeedReader::poll_advance`]) never
//!   parks as above:
//!   finding nothing, it registers as a *sleeper* under the lock and asks the pacer
//!   (src/pace.rs) to wake it at its period's next tick, leaving the claim where it is. So
//!   the giving thread keeps appending without the lock and never wakes it; the reader takes
//!   what came meanwhile in one batch. Nothing is lost: appends are visible to its next take
//!   whenever it runs, and an end wakes sleepers too (closing the feed or the reader takes the
//!   lock, under which the sleeper checked for the end before it registered).
//! - **Sole readers take by value without a clone.** An append reads the reader count inside
//!   the append (under the lock or the claim) and marks the slot *sole* if it is one. A
//!   subscriber counts itself under the lock, after quiescing the owner, so every append
//!   after its subscription (the only ones it can see) reads two or more; a reader that is
//!   gone no longer reads. So a sole slot is seen by one reader only, which takes its event
//!   by value by moving it out (no reference count touched: an atomic increment and a
//!   decrement saved per event) and resets the slot's `ready` flag, so that the chunk's drop,
//!   ordered after by the chunk's reference count, does not drop it again. The loom models
//!   check that no reader reaches a slot moved out.
//! - **Subscription at the call.** A cursor starts at the feed's tail, read under the mutex
//!   once no other thread owns the feed: every event appended after that is seen, none before.
//! - **Ends.** Closing the feed (the scope finished) takes the claim away for good, so every
//!   later append takes the lock and sees the feed closed; closing one reader (a derivation's
//!   input) records, under the mutex and once no other thread owns the feed, the index where
//!   the reader ends. A reader checks it after it has seen a slot ready, so an event appended
//!   after the close (ordered after it by the mutex or the hand-over, and before the `ready` the
//!   reader acquired) is never taken.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

#[cfg(not(all(test, giving_loom)))]
use crate::resting_pool::RestingPool;

use crate::Event;
use crate::arena::DropBatch;
use crate::pace;
use load::ParkRate;
use owner::Owner;
// Through the shim, so that the loom models check these (see src/sync.rs).
use crate::sync::{self, AtomicBool, AtomicU64, AtomicUsize, Mutex, MutexGuard, OnceLock};

/// Events per chunk: one allocation per this many events. The loom models use chunks of two,
/// so that a handful of events crosses a chunk boundary.
const CHUNK: usize = if cfg!(all(test, giving_loom)) { 2 } else { 256 };

/// No reader to skip (reader ids start at 1).
pub(crate) const NO_SKIP: u64 = 0;

/// 32 bytes (24 used): two slots per cache line whatever address the chunk's allocation got,
/// so that the line the reader polls and the one the giving thread writes next are shared the
/// same way in every chunk (measured with the arena's aligned slots: quiet 83 → 68 ns per
/// event, docs/architecture.md).
#[repr(align(32))]
struct Slot {
    /// Set (`Release`) once the cells are written; reset (`Relaxed`) by a sole reader that
    /// moved the event out, so that the chunk does not drop it again.
    ready: AtomicBool,
    /// The feed had one reader when this event was appended: no other reader will ever see
    /// it, so that one may take it by value without a clone (see "Sole readers" in the
    /// module doc).
    sole: UnsafeCell<bool>,
    /// The reader that must not see this event (a derivation's own output), or [`NO_SKIP`].
    skip: UnsafeCell<u64>,
    event: UnsafeCell<MaybeUninit<Event>>,
}

struct Chunk {
    slots: Box<[Slot]>,
    next: OnceLock<sync::Arc<Chunk>>,
    /// Some slot of this chunk names a reader to skip: set (`Relaxed`) before that slot's
    /// `ready` is released, so a reader that acquired the slot sees it. A chunk without one
    /// (every chunk of a scope with no derivation) spares its readers a look at each slot's
    /// `skip`.
    skips: AtomicBool,
}

// SAFETY: a slot's cells are written once, by the cursor's one user (module doc), before
// its `ready` flag is released; readers touch them only after acquiring `ready`.
unsafe impl Sync for Chunk {}
// SAFETY: as for `Sync`: the cells hold `Event`s and `u64`s, both `Send`, and are handed
// between threads only through the `ready` flag's release/acquire.
unsafe impl Send for Chunk {}

/// Freed chunks' slot arrays wait in a [`RestingPool`] behind this many others (512 KB,
/// 16,384 events) before one is used again: a chunk is freed, and its flags reset, on a
/// reader's core, and reused at once its lines would have to come back from there (as the
/// event arena's blocks; see `src/resting_pool.rs`).
#[cfg(not(all(test, giving_loom)))]
const RESTING: usize = 64;

#[cfg(not(all(test, giving_loom)))]
fn pool() -> &'static RestingPool<Box<[Slot]>> {
    static POOL: std::sync::OnceLock<RestingPool<Box<[Slot]>>> = OnceLock::new();
    POOL.get_or_init(|| RestingPool::new(RESTING))
}

/// A freed chunk's slot array that has rested, if one is pooled.
#[cfg(not(all(test, giving_loom)))]
fn pooled() -> Option<Box<[Slot]>> {
    pool().take()
}

/// Keeps a freed chunk's (reset) slot array for reuse, unless the pool is full.
#[cfg(not(all(test, giving_loom)))]
fn give_to_pool(slots: Box<[Slot]>) {
    let _ = pool().give(slots);
}

// Under loom nothing is pooled: a slot's loom atomic must not outlive the model execution
// that made it, and the process-wide pool would carry it into the next one.
#[cfg(all(test, giving_loom))]
fn pooled() -> Option<Box<[Slot]>> {
    None
}

#[cfg(all(test, giving_loom))]
fn give_to_pool(_slots: Box<[Slot]>) {}

impl Chunk {
    fn new() -> sync::Arc<Chunk> {
        // A pooled array's slots were reset when its chunk was freed (nothing ready).
        let slots = pooled().unwrap_or_else(|| {
            (0..CHUNK)
                .map(|_| Slot {
                    ready: AtomicBool::new(false),
                    sole: UnsafeCell::new(false),
                    skip: UnsafeCell::new(NO_SKIP),
                    event: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect()
        });
        sync::Arc::new(Chunk {
            slots,
            next: OnceLock::new(),
            skips: AtomicBool::new(false),
        })
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // The events, mostly from one giving thread's arena blocks in order, given back to
        // their blocks once per block rather than once per event.
        let mut events = DropBatch::new();
        for slot in self.slots.iter_mut() {
            if take_ready(&mut slot.ready) {
                // SAFETY: a ready slot holds an initialised event, taken out once, here.
                events.drop(unsafe { slot.event.get_mut().assume_init_read() }.into_ref());
            }
        }
        drop(events);
        // Every slot is reset (not ready): the array can serve a new chunk.
        give_to_pool(std::mem::take(&mut self.slots));
        // Free the chunks that only this one held, in a loop: dropping a long chain (a reader
        // that never read) recursively would overflow the stack.
        let mut next = self.next.take();
        while let Some(chunk) = next {
            next = sync::arc_into_inner(chunk).and_then(|mut chunk| chunk.next.take());
        }
    }
}

/// A slot's `ready` flag, reset to false: with the chunk owned, a plain write, no atomic
/// operation. Loom's atomics have no `get_mut`; its models pool nothing, so a swap will do.
#[inline]
fn take_ready(ready: &mut AtomicBool) -> bool {
    #[cfg(not(all(test, giving_loom)))]
    let ready = std::mem::replace(ready.get_mut(), false);
    #[cfg(all(test, giving_loom))]
    let ready = ready.swap(false, Ordering::Relaxed);
    ready
}

/// What one reader shares with the feed and with its [`Lag`](crate::Lag) handle.
pub(crate) struct ReaderState {
    id: u64,
    /// The index where this reader ends (`u64::MAX` while open).
    end: AtomicU64,
    /// Events taken so far (an index into the feed).
    taken: AtomicU64,
}

/// What the feed's mutex guards.
struct Tail {
    closed: bool,
    /// Parked readers: (reader id, waker).
    waiters: Vec<(u64, Waker)>,
    /// Paced readers waiting for their tick (see "Paced readers" in the module doc): woken
    /// by the pacer, and here only so that an end (the feed's or the reader's) wakes them at
    /// once. Appends never look at them.
    sleepers: Vec<(u64, Waker)>,
    /// Appends under the lock in a row that found no reader parked: the feed is claimed again
    /// only after [`CLAIM_AFTER`] of them (see "No lost wake-up" in the module doc).
    calm: u32,
}

/// Appends under the lock that must find no reader parked before the giving thread claims
/// the feed again: a reader that parks takes the claim away at the price of a `membarrier`,
/// so a feed whose readers park often (a machine whose cores are busy, ten readers on one
/// task, which do not spin) stays with the lock instead of paying it at every park. Under
/// loom the claim comes at once, so that the models reach the lock-free append.
const CLAIM_AFTER: u32 = if cfg!(all(test, giving_loom)) { 0 } else { 256 };

/// The end of the feed, where producers append: used by the feed's owner without the lock,
/// or by the lock holder once no thread owns it (see [`owner`]).
struct Cursor {
    chunk: sync::Arc<Chunk>,
    pos: usize,
    /// The index of the next event.
    index: u64,
}

/// A scope's append-only event log, read by every lossless subscriber; see the module doc.
pub(crate) struct Feed {
    tail: Mutex<Tail>,
    cursor: UnsafeCell<Cursor>,
    /// Which thread, if any, appends without the lock: never while a reader is parked.
    owner: Owner,
    /// The tail's index, readable without the lock (for `pending`).
    written: AtomicU64,
    /// Readers attached: with none, events are not written at all.
    readers: AtomicUsize,
    next_id: AtomicU64,
}

// SAFETY: the cursor is used only by the feed's owner thread, or by the holder of the feed's
// lock once no other thread owns it (`Owner::settle`, `Owner::quiesce`, `Owner::release`,
// `Owner::share` under the lock; see src/feed/owner.rs). Everything else is `Sync`.
unsafe impl Sync for Feed {}
// SAFETY: the cursor holds an `Arc<Chunk>`, which is `Send`.
unsafe impl Send for Feed {}

impl Feed {
    pub(crate) fn new() -> Self {
        Self {
            tail: Mutex::new(Tail {
                closed: false,
                waiters: Vec::new(),
                sleepers: Vec::new(),
                calm: 0,
            }),
            cursor: UnsafeCell::new(Cursor {
                chunk: Chunk::new(),
                pos: 0,
                index: 0,
            }),
            owner: Owner::new(),
            written: AtomicU64::new(0),
            readers: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
        }
    }

    #[inline]
    fn lock(&self) -> MutexGuard<'_, Tail> {
        sync::lock(&self.tail)
    }

    /// Whether a reader is attached (an event given now would be read).
    #[inline]
    pub(crate) fn has_readers(&self) -> bool {
        self.readers.load(Ordering::Relaxed) != 0
    }

    /// Appends `event`, which the reader `skip` (if any) will not see. Never blocks for long:
    /// the feed's owner appends with plain stores; anyone else holds the lock for a slot write
    /// (and, once per [`CHUNK`] events, an allocation). Inlined into the give path: called,
    /// its prologue, epilogue and the event's spill cost the giving thread 12 instructions per
    /// event (callgrind, `give_drain late 1 200000 step`: 194 → 182 with the call inlined).
    #[inline(always)]
    pub(crate) fn push(&self, event: Event, skip: u64) {
        let me = owner::thread_token();
        if !self.owner.begin(me) {
            return self.push_locked(event, skip, me);
        }
        // SAFETY: this thread owns the feed and has announced its append: nobody else uses
        // the cursor until it ends (see src/feed/owner.rs).
        let cursor = unsafe { &mut *self.cursor.get() };
        let retired = self.write(cursor, event, skip);
        self.owner.end();
        // No reader is parked while the feed is claimed (a reader takes the claim away before
        // it parks), so there is nobody to wake.
        drop(retired);
    }

    /// [`push`](Self::push) by a thread that does not own the feed: under the lock, after
    /// claiming the feed (when nobody owns it and no reader has parked for a while) or taking
    /// it from its owner for good.
    #[inline(never)]
    fn push_locked(&self, event: Event, skip: u64, me: u64) {
        let mut tail = self.lock();
        if tail.closed {
            return;
        }
        let may_claim = tail.waiters.is_empty() && tail.calm >= CLAIM_AFTER;
        self.owner.settle(me, may_claim);
        // SAFETY: the lock is held and no other thread owns the feed (just settled).
        let cursor = unsafe { &mut *self.cursor.get() };
        let retired = self.write(cursor, event, skip);
        let waiters = std::mem::take(&mut tail.waiters);
        tail.calm = if waiters.is_empty() {
            tail.calm.saturating_add(1)
        } else {
            0
        };
        drop(tail);
        wake(waiters);
        // Freed after the lock: freeing drops events, and an event's drop may run code that
        // gives.
        drop(retired);
    }

    /// Writes the event at the cursor's slot and publishes it. Returns the chunk it left if
    /// that one was full, for the caller to free once it holds nothing.
    #[inline(always)]
    fn write(&self, cursor: &mut Cursor, event: Event, skip: u64) -> Option<sync::Arc<Chunk>> {
        let retired = (cursor.pos == CHUNK).then(|| next_chunk(cursor));
        debug_assert!(cursor.pos < cursor.chunk.slots.len());
        // SAFETY: `pos < CHUNK` (a full chunk was just replaced), and every chunk has `CHUNK`
        // slots.
        let slot = unsafe { cursor.chunk.slots.get_unchecked(cursor.pos) };
        // Read here, inside the append: a subscriber counts itself under the lock before it
        // reads the cursor, and this append is ordered after that (it took the lock, or the
        // claim it appends under was taken under the lock after the subscriber revoked it).
        let sole = self.readers.load(Ordering::Relaxed) == 1;
        // SAFETY: this slot is past every reader's `ready` check (not ready yet) and only the
        // cursor's user writes; it is written once.
        unsafe {
            *slot.sole.get() = sole;
            *slot.skip.get() = skip;
            (*slot.event.get()).write(event);
        }
        if skip != NO_SKIP {
            // Before the release below, which publishes it with the slot.
            cursor.chunk.skips.store(true, Ordering::Relaxed);
        }
        slot.ready.store(true, Ordering::Release);
        cursor.pos += 1;
        cursor.index += 1;
        self.written.store(cursor.index, Ordering::Relaxed);
        retired
    }

    /// A reader that sees every event appended from now on.
    pub(crate) fn subscribe(self: &Arc<Self>) -> FeedReader {
        let tail = self.lock();
        self.owner.quiesce(owner::thread_token());
        // SAFETY: the lock is held and no other thread owns the feed (just quiesced).
        let cursor = unsafe { &*self.cursor.get() };
        let closed = tail.closed;
        let state = Arc::new(ReaderState {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            end: AtomicU64::new(if closed { cursor.index } else { u64::MAX }),
            taken: AtomicU64::new(cursor.index),
        });
        // Counted under the lock, with the giving thread quiesced: every append after this
        // one reads two readers or more, so it is never marked sole for another reader.
        let sole = self.readers.fetch_add(1, Ordering::SeqCst) == 0;
        FeedReader {
            checked: cursor.pos,
            sole,
            park_rate: ParkRate::default(),
            runs_in_a_row: 0,
            feed: self.clone(),
            chunk: cursor.chunk.clone(),
            pos: cursor.pos,
            index: cursor.index,
            state,
        }
    }

    /// Ends the feed: every reader ends once it has taken what was appended before.
    pub(crate) fn close(&self) {
        let waiters = {
            let mut tail = self.lock();
            // From now on every append takes the lock, and sees the feed closed.
            self.owner.share(owner::thread_token());
            tail.closed = true;
            let mut waiters = std::mem::take(&mut tail.waiters);
            waiters.append(&mut tail.sleepers);
            waiters
        };
        wake(waiters);
    }

    /// Ends one reader (a derivation's input) at the events appended so far; the others go on.
    pub(crate) fn close_reader(&self, state: &ReaderState) {
        let waker = {
            let mut tail = self.lock();
            self.owner.quiesce(owner::thread_token());
            // SAFETY: the lock is held and no other thread owns the feed (just quiesced).
            let index = unsafe { (*self.cursor.get()).index };
            state.end.fetch_min(index, Ordering::SeqCst);
            let parked = take_waker(&mut tail.waiters, state.id);
            let sleeping = take_waker(&mut tail.sleepers, state.id);
            parked.into_iter().chain(sleeping)
        };
        waker.for_each(Waker::wake);
    }

    /// Events appended and not yet taken by the reader `state`.
    pub(crate) fn pending(&self, state: &ReaderState) -> usize {
        let written = self.written.load(Ordering::Relaxed);
        let end = state.end.load(Ordering::Relaxed).min(written);
        end.saturating_sub(state.taken.load(Ordering::Relaxed)) as usize
    }
}

/// Links a new chunk after the cursor's full one and moves the cursor to it; returns the full
/// one. Out of line: once per [`CHUNK`] events.
#[cold]
#[inline(never)]
fn next_chunk(cursor: &mut Cursor) -> sync::Arc<Chunk> {
    let next = Chunk::new();
    // Only the cursor's user sets `next`, once per chunk.
    let _ = cursor.chunk.next.set(next.clone());
    cursor.pos = 0;
    std::mem::replace(&mut cursor.chunk, next)
}

/// Takes the reader `id`'s waker out of `list` (parked or sleeping readers), if it is there.
fn take_waker(list: &mut Vec<(u64, Waker)>, id: u64) -> Option<Waker> {
    let at = list.iter().position(|(w, _)| *w == id)?;
    Some(list.swap_remove(at).1)
}

/// Registers `waker` for the reader `id` in `list`, replacing the one it left before.
fn register(list: &mut Vec<(u64, Waker)>, id: u64, waker: &Waker) {
    match list.iter_mut().find(|(w, _)| *w == id) {
        Some((_, registered)) => registered.clone_from(waker),
        None => list.push((id, waker.clone())),
    }
}

/// Wakes the parked readers taken from the waiter list (after the lock is released). Readers
/// polled by one task (ten streams in a `join_all` or a `select!`) registered that task's
/// waker one after the other: a waker that would wake the same task as the one before it is
/// not woken again (`Waker::will_wake`), so such a task costs the giving thread one wake-up,
/// not one per stream.
fn wake(waiters: Vec<(u64, Waker)>) {
    let mut woken: Option<Waker> = None;
    for (_, waker) in waiters {
        if woken.as_ref().is_some_and(|w| w.will_wake(&waker)) {
            continue;
        }
        waker.wake_by_ref();
        woken = Some(waker);
    }
}

/// The longest run of events a reader checks at once (see [`FeedReader::take`]): 8 slots,
/// four cache lines of the feed. A run's check is one acquire (of its last slot) and some
/// bookkeeping, about a hundred instructions, which ten readers of a feed each pay per run.
/// Longer runs count fewer instructions (callgrind, `give_drain ref 10`: runs of 8 slots 54
/// per event and reader, 16 slots 44, 32 slots 41) but ran slower: ten readers on one CPU
/// (`taskset -c 0 give_drain ref 10 1000000 step`) took 420–560 ns per event with runs of 16
/// against 240–290 with runs of 8 (old build 300–340, alternated processes); not explained.
/// tokio's cooperative budget is charged once per run, so a reader behind yields after at
/// most 128 × 8 events.
const RUN: usize = if cfg!(all(test, giving_loom)) { 2 } else { 8 };

/// A reader that has taken this many runs without once returning `Pending` (256 events)
/// yields: it wakes its task and returns `Pending`, so that the task's other futures run.
/// Readers of one feed polled by one task (`join_all`, `select!`) then move through the feed
/// together, each taking the events the one before it has just brought into the core's cache,
/// instead of each draining everything given so far, from memory, before the next one starts.
/// tokio's cooperative budget ([`crate::coop`]) does the like only inside a tokio task, and
/// after 128 runs.
const YIELD_AFTER_RUNS: u32 = if cfg!(all(test, giving_loom)) { 4 } else { 32 };

/// How many slots ahead of its cursor a reader in a run prefetches.
const PREFETCH_AHEAD: usize = 4;

/// One lossless subscriber's cursor into a [`Feed`].
pub(crate) struct FeedReader {
    /// The end of the run of slots, from `pos` in the current chunk, already found ready,
    /// before the reader's end and not to be skipped: taken without a look at the slot.
    checked: usize,
    /// Whether this reader spins before parking: it was the feed's only reader when it
    /// subscribed or last parked (a heuristic; see the module doc, "Spinning before parking").
    sole: bool,
    /// How often this reader parks: one woken too often waits for the pacer's ticks.
    park_rate: ParkRate,
    /// Runs taken since this reader last returned `Pending` (see [`YIELD_AFTER_RUNS`]).
    runs_in_a_row: u32,
    feed: Arc<Feed>,
    chunk: sync::Arc<Chunk>,
    pos: usize,
    index: u64,
    state: Arc<ReaderState>,
}

/// What a reader finds where its cursor is.
enum Found {
    /// An event, taken: it is lent at [`FeedReader::current`] until the next take.
    Event,
    /// A slot skipped (this reader's own derivation output): look at the next.
    Skipped,
    /// Nothing appended yet.
    Nothing,
    /// The reader has ended.
    End,
}

impl FeedReader {
    /// This reader's shared state (its id, for skipping; for [`Feed::pending`]).
    pub(crate) fn state(&self) -> &Arc<ReaderState> {
        &self.state
    }

    /// The feed read.
    pub(crate) fn feed(&self) -> &Arc<Feed> {
        &self.feed
    }

    /// The reader's id, which a [`Feed::push`] names to be skipped by it.
    pub(crate) fn id(&self) -> u64 {
        self.state.id
    }

    /// Whether something was appended at the cursor (without taking it).
    fn has_next(&self) -> bool {
        let (chunk, pos) = if self.pos == CHUNK {
            match self.chunk.next.get() {
                Some(next) => (next, 0),
                None => return false,
            }
        } else {
            (&self.chunk, self.pos)
        };
        chunk.slots[pos].ready.load(Ordering::Acquire)
    }

    /// Waits briefly, without the lock or a system call, for an event at
    /// the cursor; true if one came.
    fn spin_for_next(&self) -> bool {
        sync::spin_until(|| self.has_next())
    }

    /// A reader in a run of at least [`PREFETCH_AHEAD`] more events asks for the event that
    /// far ahead to be brought into its cache: the slots were written on the giving thread's
    /// core, and each is a cache miss (its count's line, which the clone or the drop writes);
    /// asked ahead, several misses overlap instead of following one another. A reader that
    /// keeps up has no such run: the slot there is the one the loop writes next.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        // The models would look ahead too: a hint has nothing to check.
        if cfg!(all(test, giving_loom)) {
            return;
        }
        let ahead = self.pos + PREFETCH_AHEAD;
        if ahead < self.checked {
            // SAFETY: `ahead < checked <= CHUNK`, and the slots before `checked` were found
            // ready: their events were written before and are never written again, and the
            // chunk outlives this borrow.
            unsafe { (*self.chunk.slots.get_unchecked(ahead).event.get()).assume_init_ref() }
                .prefetch();
        }
    }

    /// Takes the next event of the run already checked, if any: no atomic load, no look at
    /// the slot. Ten readers of a feed each pay this per event, and the full check
    /// ([`take`](Self::take)) once per run of up to [`RUN`] events.
    #[inline(always)]
    pub(crate) fn take_checked(&mut self) -> bool {
        if self.pos >= self.checked {
            return false;
        }
        self.pos += 1;
        self.index += 1;
        self.state.taken.store(self.index, Ordering::Relaxed);
        self.prefetch_ahead();
        true
    }

    /// Takes the event at the cursor if it is there (no lock), and checks the run of events
    /// after it (up to [`RUN`], in this chunk) for [`take_checked`](Self::take_checked).
    #[inline]
    fn take(&mut self) -> Found {
        if self.take_checked() {
            return Found::Event;
        }
        if self.pos == CHUNK {
            match self.chunk.next.get() {
                Some(next) => {
                    self.chunk = next.clone();
                    self.pos = 0;
                    self.checked = 0;
                }
                None => return Found::Nothing,
            }
        }
        debug_assert!(self.pos < CHUNK);
        let limit = CHUNK.min(self.pos + RUN);
        let slots = &self.chunk.slots[self.pos..limit];
        // The slots found ready, in order; the last one acquired, so every cell before it is
        // visible. Slots are published in order: one thread at a time appends, each append
        // ordered after the one before (program order, the lock, or the hand-over's wait for
        // the owner's `end`), so the last slot of the run ready means the run is, and a
        // reader behind the loop checks a run with one load.
        let ready = if slots[slots.len() - 1].ready.load(Ordering::Acquire) {
            slots.len()
        } else {
            slots[..slots.len() - 1]
                .iter()
                .position(|slot| !slot.ready.load(Ordering::Acquire))
                .unwrap_or(slots.len() - 1)
        };
        if ready == 0 {
            return Found::Nothing;
        }
        // After the acquires: a close ordered before any of these events' appends is visible
        // (appends are ordered, so it is ordered before the last one acquired too).
        let open = self
            .state
            .end
            .load(Ordering::Relaxed)
            .saturating_sub(self.index);
        if open == 0 {
            return Found::End;
        }
        let ready = ready.min(usize::try_from(open).unwrap_or(usize::MAX));
        let id = self.state.id;
        // A slot found ready (acquired above) had its cells written before, never again.
        // SAFETY: `slot` is one of the `ready` slots (see above).
        let skip_of = |slot: &Slot| unsafe { *slot.skip.get() };
        // Read after the acquires: a skip written before any of them is seen.
        let skips = self.chunk.skips.load(Ordering::Relaxed);
        let skipped = skips && skip_of(&slots[0]) == id;
        let run = if skipped {
            0
        } else if !skips {
            ready
        } else {
            1 + slots[1..ready]
                .iter()
                .position(|slot| skip_of(slot) == id)
                .unwrap_or(ready - 1)
        };
        self.pos += 1;
        self.index += 1;
        self.state.taken.store(self.index, Ordering::Relaxed);
        if skipped {
            return Found::Skipped;
        }
        // The first of the run is taken here, the rest by `take_checked`.
        self.checked = self.pos - 1 + run;
        self.prefetch_ahead();
        Found::Event
    }

    /// Takes the next event this reader may see, past its own derivation's outputs:
    /// `Some(true)` taken, `Some(false)` the reader has ended, `None` nothing appended yet.
    #[inline(always)]
    fn take_unskipped(&mut self) -> Option<bool> {
        loop {
            match self.take() {
                Found::Event => return Some(true),
                Found::Skipped => continue,
                Found::End => return Some(false),
                Found::Nothing => return None,
            }
        }
    }

    /// The slot of the event taken last: the cursor is just past it, in the same chunk.
    #[inline(always)]
    fn taken_slot(&self) -> &Slot {
        debug_assert!(self.pos > 0 && self.pos <= CHUNK, "no event taken");
        // SAFETY: `0 < pos <= CHUNK`, so `pos - 1` is a slot of this chunk.
        let slot = unsafe { self.chunk.slots.get_unchecked(self.pos - 1) };
        // The models check what two arguments rest on: no reader reaches a slot whose event
        // another reader moved out (sole readers), and a slot of a run checked by its last
        // slot alone was published to this reader (slots are published in order): loom
        // lets this load return an older `false` unless the store happened before it.
        #[cfg(all(test, giving_loom))]
        assert!(
            slot.ready.load(Ordering::Relaxed),
            "a slot read that was not ready: moved out by its sole reader, or not published to this reader"
        );
        slot
    }

    /// The event taken last, in place in its chunk: valid until the cursor moves again, which
    /// needs `&mut self`, and the chunk cannot go before this reader leaves it.
    #[inline]
    pub(crate) fn current(&self) -> &Event {
        // SAFETY: `take` returned `Found::Event` for this slot (the cursor is past it, in the
        // same chunk): it is ready, so its event was written before and is never written again.
        unsafe { (*self.taken_slot().event.get()).assume_init_ref() }
    }

    /// The event taken last, by value: moved out of its slot when this reader is the only one
    /// that will ever see it (no reference count touched), else a clone. Call once per event
    /// taken, after nothing else borrowed it ([`current`](Self::current) needs `&self`).
    #[inline]
    pub(crate) fn take_current(&mut self) -> Event {
        let slot = self.taken_slot();
        // SAFETY: the slot was found ready (acquired), so its cells were written before and
        // are never written again by the cursor's user.
        if unsafe { *slot.sole.get() } {
            // SAFETY: a sole slot is seen by this reader only (the feed had no other reader
            // when it was appended, and later subscribers start after it), and this reader
            // takes it once: the event is moved out once, and the flag reset (by its only
            // reader; the chunk's drop comes after, through the chunk's reference count)
            // tells the chunk not to drop it.
            unsafe {
                let event = (*slot.event.get()).assume_init_read();
                slot.ready.store(false, Ordering::Relaxed);
                return event;
            }
        }
        self.current().clone()
    }

    /// Moves the cursor past the next event, which is then lent at
    /// [`current`](Self::current) (`true`), or finds the reader ended (`false`). Reading in
    /// place touches no reference count: ten readers of an event cost little more than one.
    /// A reader `pace`d by a period waits for the pacer's tick instead of being woken by the
    /// next append (see "Paced readers" in the module doc).
    #[inline]
    pub(crate) fn poll_advance(
        &mut self,
        cx: &mut Context<'_>,
        pace: Option<Duration>,
    ) -> Poll<bool> {
        // The common case, an event of a run already checked, stays small enough to inline
        // into the stream's poll; checking a run, skipping, spinning and parking are out of
        // line. tokio's cooperative budget is charged once per run, not per event.
        if self.take_checked() {
            return Poll::Ready(true);
        }
        self.poll_past_run(cx, pace)
    }

    /// [`poll_advance`](Self::poll_advance) once [`take_checked`](Self::take_checked) has
    /// found the checked run used up: for a caller that tried it first (the stream's poll).
    #[inline]
    pub(crate) fn poll_past_run(
        &mut self,
        cx: &mut Context<'_>,
        pace: Option<Duration>,
    ) -> Poll<bool> {
        crate::coop::budgeted(cx, |cx| self.poll_unchecked(cx, pace))
    }

    /// [`poll_advance`](Self::poll_advance) past the run already checked.
    #[inline(never)]
    fn poll_unchecked(&mut self, cx: &mut Context<'_>, pace: Option<Duration>) -> Poll<bool> {
        if self.runs_in_a_row >= YIELD_AFTER_RUNS {
            // Let the task's other futures run: woken at once, nothing is lost.
            self.runs_in_a_row = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let polled = match self.take() {
            Found::Event => {
                self.runs_in_a_row += 1;
                return Poll::Ready(true);
            }
            Found::End => return Poll::Ready(false),
            Found::Skipped | Found::Nothing => match pace {
                Some(period) => self.sleep_until_tick(period, cx),
                None => self.poll_slow(cx),
            },
        };
        if polled.is_pending() {
            self.runs_in_a_row = 0;
        }
        polled
    }

    /// [`poll_advance`](Self::poll_advance) past the fast path: the next slot, a spin, then a
    /// park.
    #[inline(never)]
    fn poll_slow(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        loop {
            if let Some(taken) = self.take_unskipped() {
                return Poll::Ready(taken);
            }
            // A reader woken so often that the wake-ups cost more than the events waits for
            // the pacer's tick instead, until a tick finds nothing (src/feed/load.rs).
            if self.park_rate.waits_for_tick(self.index) {
                return self.sleep_until_tick(load::LOAD_PERIOD, cx);
            }
            // The loop often gives again within a fraction of a microsecond: wait briefly
            // before parking, since a park costs both sides a system call (see the module
            // doc, "Spinning before parking"). Only a sole reader spins: readers polled by one
            // task (`join_all`, `select!`, a thread draining streams in turn) would each wait
            // for the next event while the others have events to take.
            if self.sole && !self.park_rate.under_load() && self.spin_for_next() {
                continue;
            }
            // Park under the lock: re-check, then register (see the module doc). The re-check
            // only looks: taking (which may free a chunk, and events with it) happens unlocked.
            let feed = self.feed.clone();
            let mut tail = feed.lock();
            // No lock-free append from here on: its owner, even this thread, would not wake
            // this reader. Then the re-check and the registration are the mutex protocol's.
            feed.owner.release(owner::thread_token());
            tail.calm = 0;
            if self.has_next() {
                continue;
            }
            // Nothing left: every append before the close is ready, so this is the end.
            if tail.closed || self.index >= self.state.end.load(Ordering::Relaxed) {
                return Poll::Ready(false);
            }
            // Read here, where the lock is held anyway, rather than before every spin: the
            // count shares its cache line with what the giving thread writes per event.
            self.sole = self.feed.readers.load(Ordering::Relaxed) == 1;
            // A reader back from waiting for ticks leaves the sleepers (where only an end
            // would find it, to wake it once more).
            if !tail.sleepers.is_empty() {
                take_waker(&mut tail.sleepers, self.state.id);
            }
            register(&mut tail.waiters, self.state.id, cx.waker());
            drop(tail);
            // Not under loom: its models have no ticks, and check the wake-up protocol.
            if !cfg!(all(test, giving_loom)) {
                self.park_rate.parked(std::time::Instant::now());
            }
            return Poll::Pending;
        }
    }

    /// [`poll_slow`](Self::poll_slow)'s wait for a paced reader: no spin, and no claim taken
    /// away (an append never wakes it, so the giving thread may go on without the lock); it
    /// sleeps until the pacer's next tick, or until the feed or the reader ends.
    #[inline(never)]
    fn sleep_until_tick(&mut self, period: Duration, cx: &mut Context<'_>) -> Poll<bool> {
        loop {
            if let Some(taken) = self.take_unskipped() {
                return Poll::Ready(taken);
            }
            let feed = self.feed.clone();
            let mut tail = feed.lock();
            // Under the lock, an end is final: a close waited for the append in progress
            // (`Owner::share`) and the reader's end is set under this lock, so every event
            // before it is ready and seen by this re-check.
            if self.has_next() {
                continue;
            }
            if tail.closed || self.index >= self.state.end.load(Ordering::Relaxed) {
                return Poll::Ready(false);
            }
            register(&mut tail.sleepers, self.state.id, cx.waker());
            drop(tail);
            pace::wake_at_next_tick(period, cx.waker());
            return Poll::Pending;
        }
    }
}

impl Drop for FeedReader {
    fn drop(&mut self) {
        // Nothing is pending for a reader that is gone.
        self.state.end.fetch_min(self.index, Ordering::SeqCst);
        let retired = {
            let mut tail = self.feed.lock();
            let id = self.state.id;
            tail.waiters.retain(|(w, _)| *w != id);
            tail.sleepers.retain(|(w, _)| *w != id);
            // Readers subscribe under the lock, so none can appear while it is held: with
            // the last one gone, the events of the tail chunk are freed now, not when the loop
            // fills it.
            let last = self.feed.readers.fetch_sub(1, Ordering::SeqCst) == 1;
            last.then(|| {
                self.feed.owner.quiesce(owner::thread_token());
                // SAFETY: the lock is held and no other thread owns the feed (just quiesced).
                let cursor = unsafe { &mut *self.feed.cursor.get() };
                cursor.pos = 0;
                std::mem::replace(&mut cursor.chunk, Chunk::new())
            })
        };
        drop(retired);
    }
}

mod load;
#[cfg(all(test, giving_loom))]
mod loom_models;
mod owner;

pub(crate) use owner::refuse_claims;

// Under loom the feed's atomics are loom's, usable only inside `loom::model`.
#[cfg(all(test, not(giving_loom)))]
mod tests {
    use super::*;
    use crate::drop_count::Counted;
    use futures::task::noop_waker_ref;

    fn event(i: u64) -> Event {
        Event::new([("i", crate::Value::from(i))])
    }

    /// The reader's next event, polled again when it yielded (returned `Pending` having woken
    /// itself: see `YIELD_AFTER_RUNS`); `Pending` only when it parked.
    fn next(reader: &mut FeedReader) -> Poll<Option<u64>> {
        let wakes = Arc::new(Counting(Default::default()));
        let waker = futures::task::waker(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        loop {
            let woken = wakes.0.load(Ordering::SeqCst);
            match reader.poll_advance(&mut cx, None) {
                Poll::Pending if wakes.0.load(Ordering::SeqCst) > woken => continue,
                polled => {
                    return polled
                        .map(|taken| taken.then(|| reader.current().get_as::<u64>("i").unwrap()));
                }
            }
        }
    }

    #[test]
    fn readers_see_what_is_appended_after_they_subscribe_across_chunks() {
        let feed = Arc::new(Feed::new());
        feed.push(event(0), NO_SKIP); // no reader: not even written
        let mut first = feed.subscribe();
        for i in 1..=CHUNK as u64 + 10 {
            feed.push(event(i), NO_SKIP);
        }
        let mut second = feed.subscribe();
        feed.push(event(1000), NO_SKIP);
        for i in 1..=CHUNK as u64 + 10 {
            assert_eq!(next(&mut first), Poll::Ready(Some(i)));
        }
        assert_eq!(next(&mut first), Poll::Ready(Some(1000)));
        assert_eq!(next(&mut first), Poll::Pending);
        assert_eq!(next(&mut second), Poll::Ready(Some(1000)));
        assert_eq!(feed.pending(first.state()), 0);
        feed.push(event(1001), NO_SKIP);
        assert_eq!(feed.pending(first.state()), 1);
        feed.close();
        feed.push(event(1002), NO_SKIP);
        assert_eq!(next(&mut first), Poll::Ready(Some(1001)));
        assert_eq!(next(&mut first), Poll::Ready(None));
        assert_eq!(next(&mut second), Poll::Ready(Some(1001)));
        assert_eq!(next(&mut second), Poll::Ready(None));
    }

    #[test]
    fn a_closed_reader_ends_where_it_was_closed_and_skips_its_own_outputs() {
        let feed = Arc::new(Feed::new());
        let mut derived = feed.subscribe();
        let mut sink = feed.subscribe();
        feed.push(event(1), NO_SKIP);
        feed.push(event(2), derived.id());
        feed.close_reader(derived.state());
        feed.push(event(3), derived.id());
        assert_eq!(next(&mut derived), Poll::Ready(Some(1)));
        assert_eq!(next(&mut derived), Poll::Ready(None));
        for i in 1..=3 {
            assert_eq!(next(&mut sink), Poll::Ready(Some(i)));
        }
        assert_eq!(next(&mut sink), Poll::Pending);
    }

    /// A waker that counts its wake-ups.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl futures::task::ArcWake for Counting {
        fn wake_by_ref(this: &Arc<Self>) {
            this.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn readers_parked_by_one_task_cost_the_giving_thread_one_wake_up() {
        let feed = Arc::new(Feed::new());
        let task = Arc::new(Counting(Default::default()));
        let other = Arc::new(Counting(Default::default()));
        let (task_waker, other_waker) = (
            futures::task::waker(task.clone()),
            futures::task::waker(other.clone()),
        );
        let mut readers: Vec<FeedReader> = (0..4).map(|_| feed.subscribe()).collect();
        // Three readers polled by one task, the fourth by another; all find nothing and park.
        for (i, reader) in readers.iter_mut().enumerate() {
            let waker = if i < 3 { &task_waker } else { &other_waker };
            let mut cx = Context::from_waker(waker);
            assert_eq!(reader.poll_advance(&mut cx, None), Poll::Pending);
        }
        feed.push(event(1), NO_SKIP);
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        assert_eq!(other.0.load(Ordering::SeqCst), 1);
        for reader in &mut readers {
            assert_eq!(next(reader), Poll::Ready(Some(1)));
        }
    }

    #[test]
    fn a_run_taken_unchecked_stops_at_a_skipped_slot_and_at_the_readers_end() {
        let feed = Arc::new(Feed::new());
        let mut derived = feed.subscribe();
        let mut sink = feed.subscribe();
        // Skipped slots and the reader's end fall inside runs of `RUN` slots.
        let skipped = [3, 4, 9];
        for i in 0..12 {
            let skip = if skipped.contains(&i) {
                derived.id()
            } else {
                NO_SKIP
            };
            feed.push(event(i), skip);
        }
        feed.close_reader(derived.state());
        feed.push(event(12), NO_SKIP);
        let seen = |reader: &mut FeedReader| -> Vec<u64> {
            std::iter::from_fn(|| match next(reader) {
                Poll::Ready(Some(i)) => Some(i),
                _ => None,
            })
            .collect()
        };
        let expected: Vec<u64> = (0..12).filter(|i| !skipped.contains(i)).collect();
        assert_eq!(seen(&mut derived), expected);
        assert_eq!(next(&mut derived), Poll::Ready(None));
        assert_eq!(seen(&mut sink), (0..=12).collect::<Vec<u64>>());
        assert_eq!(feed.pending(sink.state()), 0);
    }

    #[test]
    fn the_giving_thread_claims_the_feed_and_a_second_giving_thread_shares_it_for_good() {
        let feed = Arc::new(Feed::new());
        let mut reader = feed.subscribe();
        let mut given = 0..;
        let mut give = |feed: &Feed| feed.push(event(given.next().unwrap()), NO_SKIP);
        // Claimed once `CLAIM_AFTER` appends in a row found no reader parked, where the
        // asymmetric fence is available (Linux with membarrier, Miri).
        for _ in 0..CLAIM_AFTER {
            give(&feed);
        }
        assert!(!feed.owner.is_claimed());
        give(&feed);
        assert_eq!(feed.owner.is_claimed(), owner::claims_allowed());
        // A subscriber on another thread takes the claim away; the next append claims again.
        let other = std::thread::scope(|s| s.spawn(|| feed.subscribe()).join().unwrap());
        assert!(!feed.owner.is_claimed());
        give(&feed);
        assert_eq!(feed.owner.is_claimed(), owner::claims_allowed());
        // A reader about to park takes it away too, and the count starts again.
        for _ in 0..=CLAIM_AFTER + 1 {
            assert!(matches!(next(&mut reader), Poll::Ready(Some(_))));
        }
        assert_eq!(next(&mut reader), Poll::Pending);
        assert!(!feed.owner.is_claimed());
        give(&feed);
        assert!(!feed.owner.is_claimed());
        // Claimed again after a calm run, then a second giving thread makes every append take
        // the lock from then on.
        for _ in 0..=CLAIM_AFTER {
            give(&feed);
        }
        assert_eq!(feed.owner.is_claimed(), owner::claims_allowed());
        std::thread::scope(|s| s.spawn(|| feed.push(event(1000), NO_SKIP)).join().unwrap());
        for _ in 0..=CLAIM_AFTER {
            give(&feed);
        }
        assert!(!feed.owner.is_claimed());
        let seen: Vec<u64> = std::iter::from_fn(|| match next(&mut reader) {
            Poll::Ready(Some(i)) => Some(i),
            _ => None,
        })
        .collect();
        // Everything given after the reader parked, in order: the owner's, the second
        // thread's, the owner's.
        let first = CLAIM_AFTER as u64 + 2;
        let expected: Vec<u64> = (first..=first + CLAIM_AFTER as u64 + 1)
            .chain([1000])
            .chain(first + CLAIM_AFTER as u64 + 2..=first + 2 * CLAIM_AFTER as u64 + 2)
            .collect();
        assert_eq!(seen, expected);
        drop(other);
        feed.close();
        assert_eq!(next(&mut reader), Poll::Ready(None));
    }

    /// Polls `reader` with `waker` until it parks or sleeps, counting the events it takes (it
    /// yields every `YIELD_AFTER_RUNS` runs: `take_all` takes fewer than that many events).
    fn take_all(reader: &mut FeedReader, waker: &Waker) -> usize {
        let mut cx = Context::from_waker(waker);
        let mut taken = 0;
        while reader.poll_advance(&mut cx, None) == Poll::Ready(true) {
            taken += 1;
        }
        assert!(taken < YIELD_AFTER_RUNS as usize * RUN);
        taken
    }

    #[test]
    fn readers_polled_by_one_task_take_turns_through_a_long_run() {
        let feed = Arc::new(Feed::new());
        let mut readers: Vec<FeedReader> = (0..2).map(|_| feed.subscribe()).collect();
        let given = 3 * YIELD_AFTER_RUNS as usize * RUN;
        for i in 0..given as u64 {
            feed.push(event(i), NO_SKIP);
        }
        feed.close();
        let wakes = Arc::new(Counting(Default::default()));
        let waker = futures::task::waker(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        // As `join_all` polls them: each reader in turn until it returns `Pending`.
        let mut turns: Vec<Vec<u64>> = Vec::new();
        let mut ended = [false; 2];
        while !ended.iter().all(|&e| e) {
            for (reader, ended) in readers.iter_mut().zip(&mut ended) {
                let mut turn = Vec::new();
                while !*ended {
                    match reader.poll_advance(&mut cx, None) {
                        Poll::Ready(true) => {
                            turn.push(reader.current().get_as::<u64>("i").unwrap());
                        }
                        Poll::Ready(false) => *ended = true,
                        Poll::Pending => break,
                    }
                }
                turns.push(turn);
            }
        }
        // Each turn is a yield (the task woken) or the end: both readers took every event, in
        // order, in turns of `YIELD_AFTER_RUNS` runs, alternating.
        let turn = YIELD_AFTER_RUNS as usize * RUN;
        assert_eq!(wakes.0.load(Ordering::SeqCst), 6);
        for (i, taken) in turns.iter().enumerate() {
            let first = (i / 2 * turn) as u64;
            let expected: Vec<u64> = (first..(first + turn as u64).min(given as u64)).collect();
            assert_eq!(*taken, expected, "turn {i}");
        }
    }

    /// Waits (in real time: the pacer's clock) until `count` exceeds `seen`.
    fn wait_for_wake_up(count: &std::sync::atomic::AtomicUsize, seen: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while count.load(Ordering::SeqCst) <= seen {
            assert!(std::time::Instant::now() < deadline, "no tick came");
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    // Parks must come less than 100 µs apart, which Miri's speed never allows.
    #[cfg_attr(miri, ignore)]
    #[test]
    fn a_reader_parked_again_and_again_waits_for_ticks_and_the_loop_wakes_nobody() {
        let feed = Arc::new(Feed::new());
        let wakes = Arc::new(Counting(Default::default()));
        let waker = futures::task::waker(wakes.clone());
        let mut reader = feed.subscribe();
        // Give and take one event at a time: each take ends in a park that the next append
        // wakes. Quick enough parks in a row (a preempted test thread breaks a run; the
        // bound is generous) turn the reader to ticks.
        let mut given = 0;
        while !reader.park_rate.under_load() {
            assert!(given < 100_000, "the reader never turned to ticks");
            feed.push(event(given), NO_SKIP);
            given += 1;
            assert_eq!(take_all(&mut reader, &waker), 1);
        }
        // It parked last (registered as a waiter): the next append still wakes it once.
        let woken = wakes.0.load(Ordering::SeqCst);
        feed.push(event(given), NO_SKIP);
        assert_eq!(wakes.0.load(Ordering::SeqCst), woken + 1);
        // Now it sleeps until a tick, not parked: appends wake nobody (they wake waiters
        // only). The wake-ups are counted from before it went to sleep, since a tick may come
        // at any moment after.
        let woken = wakes.0.load(Ordering::SeqCst);
        assert_eq!(take_all(&mut reader, &waker), 1);
        assert!(feed.lock().waiters.is_empty());
        assert_eq!(feed.lock().sleepers.len(), 1);
        for i in 1..=3 {
            feed.push(event(given + i), NO_SKIP);
        }
        // The tick wakes it, and it takes the three in one batch, then sleeps again.
        wait_for_wake_up(&wakes.0, woken);
        let woken = wakes.0.load(Ordering::SeqCst);
        assert_eq!(take_all(&mut reader, &waker), 3);
        assert!(reader.park_rate.under_load());
        // A tick that finds nothing: parked again, and woken by the next append at once.
        wait_for_wake_up(&wakes.0, woken);
        assert_eq!(take_all(&mut reader, &waker), 0);
        assert!(!reader.park_rate.under_load());
        assert_eq!(feed.lock().waiters.len(), 1);
        assert!(feed.lock().sleepers.is_empty());
        let woken = wakes.0.load(Ordering::SeqCst);
        feed.push(event(given + 4), NO_SKIP);
        assert_eq!(wakes.0.load(Ordering::SeqCst), woken + 1);
        assert_eq!(take_all(&mut reader, &waker), 1);
    }

    #[test]
    fn a_sole_reader_takes_events_by_value_without_a_clone_and_each_is_dropped_once() {
        let drops = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = || Event::new([("x", crate::Value::lazy(Counted(drops.clone())))]);
        let mut cx = Context::from_waker(noop_waker_ref());
        let feed = Arc::new(Feed::new());
        let mut first = feed.subscribe();
        feed.push(counted(), NO_SKIP);
        assert_eq!(first.poll_advance(&mut cx, None), Poll::Ready(true));
        // Moved out: the chunk, which `first` still holds, no longer holds the event, so
        // dropping the one taken drops its fields (a clone would leave them to the chunk).
        drop(first.take_current());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // With a second reader the next event is cloned for each, and lives until both have
        // left its chunk.
        let mut second = feed.subscribe();
        feed.push(counted(), NO_SKIP);
        for reader in [&mut first, &mut second] {
            assert_eq!(reader.poll_advance(&mut cx, None), Poll::Ready(true));
            drop(reader.take_current());
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // Back to one reader: moved again; then every event was dropped exactly once.
        drop(second);
        feed.push(counted(), NO_SKIP);
        assert_eq!(first.poll_advance(&mut cx, None), Poll::Ready(true));
        drop(first.take_current());
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        drop(first);
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_long_unread_chain_is_freed_without_recursion() {
        let feed = Arc::new(Feed::new());
        let reader = feed.subscribe();
        // Under Miri (about a million times slower) 20 chunks still exercise the loop that
        // frees them; the full chain is what would overflow a recursive drop.
        let chunks = if cfg!(miri) { 20 } else { 20_000 };
        for i in 0..(CHUNK * chunks) as u64 {
            feed.push(event(i), NO_SKIP);
        }
        drop(reader); // `chunks` chunks behind it: freed in a loop
        assert!(!feed.has_readers());
    }
}
