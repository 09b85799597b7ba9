//! Where events live: in blocks of [`SLOTS`] slots that the thread making an event allocates
//! from, one allocation per block instead of one per event. A leaf: it knows fields, nothing of
//! scopes or routing.
//!
//! Each thread keeps one block it fills slot by slot. An event is a pointer to its slot, with a
//! reference count of its own (so a clone is one atomic increment, as with `Arc`), and its
//! fields are dropped as soon as its last reference goes, not when its block does: a lazy value
//! (a tensor on a device) is freed when its event is. The block's memory is freed when its
//! thread has moved on to another block and every event of it has been dropped.
//!
//! # Why it is correct
//!
//! - **One writer per slot, before it is shared.** Only the thread that owns the block writes a
//!   slot, once, before the [`EventRef`] to it exists; everyone else reaches the slot through
//!   an `EventRef` and only reads it (or drops it, see below). Handing the `EventRef` to another
//!   thread (through a queue or a feed) is a release/acquire hand-off, so the fields are seen
//!   whole.
//! - **Slots die once.** A slot's count is an `Arc`-style count: clones increment with
//!   `Relaxed`, drops decrement with `Release`, and the one that takes it to zero fences with
//!   `Acquire` before it drops the fields — so every use of the event happened before.
//! - **Blocks die once.** A block's `live` count starts at `SLOTS + 1`: one per slot (used or
//!   not) and one for its thread. A slot dying decrements it; the thread, when it moves to a new
//!   block or exits, decrements it by one plus the slots it never used. Whoever takes it to zero
//!   (`AcqRel`) frees the block: by then no slot is alive and its thread is gone from it.
//! - **No allocation on the give path's hot loop.** A new block is allocated every
//!   [`SLOTS`] events; fields of up to [`INLINE`] entries are stored in the slot itself.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{NonNull, addr_of, addr_of_mut};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering, fence};

use smallvec::SmallVec;

use crate::Value;
use crate::clock::{Stamp, Timestamp};
use crate::field::{Field, Key, Origin};
use crate::resting_pool::RestingPool;

/// Fields stored in a slot without an allocation of their own.
pub(crate) const INLINE: usize = 4;

/// Fields being assembled and stored: inline up to [`INLINE`].
pub(crate) type Fields = SmallVec<[Field; INLINE]>;

/// Slots per block: one allocation per this many events.
const SLOTS: usize = 64;

// Four cache lines per slot: any more and the give path writes a line more per event.
const _: () = assert!(std::mem::size_of::<Slot>() == 256);

/// References above this abort, as `Arc` does (a leak of clones, not a real count).
const MAX_REFS: u32 = i32::MAX as u32;

/// Aligned to a cache line, and 256 bytes (four lines): a slot shares no line with its
/// neighbours, whatever address the block's allocation got. Unaligned, a slot's last line
/// (where its fields' length may sit) was also the next slot's first, which the giving
/// thread writes while the reader reads this one, and how often that happened depended on
/// where each block landed.
///
/// The fields first and the header last (`repr(C)`): the inline fields' length is the last
/// word of [`Fields`], so it shares the last line with the header, and an event of one field
/// is written and read on two lines (the first and the last), of two fields on three. Header
/// first, as it was, the same events took three and four lines (the header and the first
/// field on lines 0–1, the length alone on line 3). `the_header_shares_the_last_line_with_the_length`
/// checks the layout this relies on.
#[repr(C, align(64))]
struct Slot {
    fields: MaybeUninit<Fields>,
    refs: AtomicU32,
    /// Where this slot is in its block (to find the block from the slot).
    index: u16,
    /// The fields own nothing to free (see [`owns_nothing`]): the last reference, often on
    /// another core, then drops the event without reading the lines its fields are on.
    plain: bool,
    /// When it was given: scaled to a timestamp only when asked.
    time: Stamp,
    origin: Option<&'static Origin>,
}

/// The count first, on a line of its own (the slots' alignment pads it): every slot's death
/// decrements it, on whichever thread drops the event.
#[repr(C)]
struct Block {
    /// Slots not yet dead, plus one while the thread still allocates from the block.
    live: AtomicUsize,
    slots: [MaybeUninit<Slot>; SLOTS],
}

const BLOCK: Layout = Layout::new::<Block>();

/// Freed blocks wait in the pool behind this many others (4 MB, 16,384 events; the pool
/// holds at most twice as many, 8 MB) before one is used again. A block is freed where its last event is dropped, on a reader's core, whose
/// clones, drops and reads of the block's slots leave their lines in that core's cache; the
/// giving thread reusing the block at once had to take each line it writes back from there,
/// a round trip between the cores per line. On the development VM that trip is 60–80 ns
/// while the host keeps its two virtual CPUs near each other and about 340 ns while it does
/// not, and with three lines per event the hand-off ran at 155–195 ns per event in the far
/// placement: the "slow mode" of the last rounds (`examples/handoff_modes.rs` times the round
/// trip beside each hand-off). Left to rest behind 4 MB of other blocks, a block's lines
/// have left the reader's own L1 and L2 by the time it is reused: over 40 alternated
/// rounds, one subscriber by value 62 → 41 ns per event near, 197 → 109 far. Resting longer
/// helps far (2,048 blocks, 32 MB, past the reader's L3 too: 70) and costs near (66, the
/// first 131,072 events of a process all fresh memory), and holds eight times the memory.
const RESTING: usize = 256;

/// A freed block's memory, kept for the next block a thread needs: the allocator would
/// otherwise hand blocks freed on the consumer's thread back to the system and fault fresh
/// pages in on the giving thread (measured: a tenth of the give path's time).
struct Pooled(NonNull<Block>);

// SAFETY: a pooled block is plain memory that nobody references.
unsafe impl Send for Pooled {}

fn pool() -> &'static RestingPool<Pooled> {
    static POOL: std::sync::OnceLock<RestingPool<Pooled>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| RestingPool::new(RESTING))
}

impl Block {
    /// A new block with every slot counted live and one count for its thread.
    fn allocate() -> NonNull<Block> {
        let block = match pool().take() {
            Some(Pooled(block)) => block,
            None => {
                // SAFETY: the layout is not zero-sized. Slots stay uninitialised until written.
                let block = unsafe { alloc(BLOCK) }.cast::<Block>();
                let Some(block) = NonNull::new(block) else {
                    handle_alloc_error(BLOCK)
                };
                block
            }
        };
        // SAFETY: freshly allocated, aligned for `Block`; only the counter is written here.
        unsafe { addr_of_mut!((*block.as_ptr()).live).write(AtomicUsize::new(SLOTS + 1)) };
        block
    }

    /// Removes `count` from the block's live count; frees it if that was the last.
    ///
    /// # Safety
    /// `block` must be a live block and the caller must own `count` of its counts.
    unsafe fn release(block: NonNull<Block>, count: usize) {
        // SAFETY: the caller owns counts, so the block is alive.
        let live = unsafe { &*addr_of!((*block.as_ptr()).live) };
        if live.fetch_sub(count, Ordering::AcqRel) == count
            && let Err(Pooled(block)) = pool().give(Pooled(block))
        {
            // SAFETY: the count is zero: no slot is alive and no thread allocates from it.
            unsafe { dealloc(block.as_ptr().cast(), BLOCK) };
        }
    }

    /// The slot at `index`.
    ///
    /// # Safety
    /// `block` must be live and `index < SLOTS`.
    unsafe fn slot(block: NonNull<Block>, index: usize) -> *mut Slot {
        // SAFETY: in bounds of the block's allocation; no reference to other slots is made.
        unsafe {
            addr_of_mut!((*block.as_ptr()).slots)
                .cast::<Slot>()
                .add(index)
        }
    }
}

/// The block this thread fills.
struct Arena {
    block: Cell<Option<NonNull<Block>>>,
    /// The next slot to fill (`SLOTS`: the block is full, or there is none).
    next: Cell<usize>,
}

impl Arena {
    /// A slot to fill: in the current block, or in a new one when it is full.
    #[inline(always)]
    fn take(&self) -> (NonNull<Block>, usize) {
        let next = self.next.get();
        if let Some(block) = self.block.get()
            && next < SLOTS
        {
            self.next.set(next + 1);
            return (block, next);
        }
        self.take_in_new_block()
    }

    /// [`take`](Self::take) when the block is full (once per [`SLOTS`] events): out of line.
    #[cold]
    #[inline(never)]
    fn take_in_new_block(&self) -> (NonNull<Block>, usize) {
        self.retire();
        let block = Block::allocate();
        self.block.set(Some(block));
        self.next.set(1);
        (block, 0)
    }

    /// Leaves the current block: its unused slots and this thread's count are given back.
    fn retire(&self) {
        if let Some(block) = self.block.take() {
            let unused = SLOTS - self.next.get();
            // SAFETY: this thread owns its count and the counts of the slots it never used.
            unsafe { Block::release(block, unused + 1) };
        }
        self.next.set(SLOTS);
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        self.retire();
    }
}

thread_local! {
    static ARENA: Arena = const {
        Arena {
            block: Cell::new(None),
            next: Cell::new(SLOTS),
        }
    };
}

/// Appends the field `key: value` to `fields`, the key and the value each stored in place.
///
/// Pushed as a tuple (`fields.push((key, value))`), the field is assembled on the stack (the
/// value's tag a one-byte store) and then copied with 16-byte loads that straddle those
/// stores, which the processor cannot forward from its store buffer: on the give path that
/// stall was half the giving thread's time (measured with `perf annotate` on the peers bench,
/// 103 → 64 ns per event end to end).
#[inline(always)]
pub(crate) fn push_field(fields: &mut impl FieldVec, key: Key, value: Value) {
    let len = fields.len();
    // The full case apart, with the call that grows the list: were the growth on the path of
    // the in-place write (a `reserve` first), the value would have to outlive a call and be
    // spilled to the stack, and the stall would be back (measured: 58-67 → 101-124 ns).
    if len == fields.capacity() {
        return fields.push((key, value));
    }
    // SAFETY: `len < capacity`: the slot at `len` is allocated and past the length, so
    // nothing is overwritten; it is written before the length counts it.
    unsafe {
        write_field(fields.as_mut_ptr().add(len), key, value);
        fields.set_len(len + 1);
    }
}

/// Writes `key` and `value` at `at`, each in place (see [`push_field`] for why).
///
/// # Safety
/// `at` must be valid for writes of a [`Field`]; what is there is overwritten, not dropped.
#[inline(always)]
unsafe fn write_field(at: *mut Field, key: Key, value: Value) {
    // SAFETY: the caller's. The tuple's parts are addressed by field, whatever order the
    // compiler lays them out in.
    unsafe {
        addr_of_mut!((*at).0).write(key);
        addr_of_mut!((*at).1).write(value);
    }
}

/// Appends fields to a new list (empty, inline): the first [`INLINE`] written in place and
/// counted in the list's length once, when the writer is dropped — also when the code making
/// the fields panics, so the fields written before are dropped with the list. `Fields`' own
/// `len`, `as_mut_ptr` and `set_len` each ask whether the list has spilled to the heap (a load
/// and a branch): per field, that was a sixth of the giving thread's instructions for
/// `give!(step, loss)` (callgrind, `examples/give_drain.rs late 1 200000 step`). Past the
/// inline capacity the list grows as [`push_field`] grows it.
pub(crate) struct InlineWriter<'a> {
    /// The list, held as a pointer: a `&mut` moved into the writer would be retagged as unique
    /// and, under Stacked Borrows, invalidate `inline`, which is derived from it.
    fields: *mut Fields,
    /// Where the inline fields start (taken once: the list is not moved while borrowed).
    inline: *mut Field,
    /// Fields written in place and not yet counted in the list's length; [`COUNTED`] once
    /// they are (the list has grown past its inline storage and counts its own).
    pending: usize,
    _list: PhantomData<&'a mut Fields>,
}

/// [`InlineWriter::pending`] once the list counts its fields itself.
const COUNTED: usize = usize::MAX;

impl<'a> InlineWriter<'a> {
    /// A writer appending to `fields`, which must be empty and inline (a new list: every
    /// caller makes one just before).
    #[inline(always)]
    pub(crate) fn new(fields: &'a mut Fields) -> Self {
        debug_assert!(fields.is_empty() && !fields.spilled(), "a new field list");
        let fields: *mut Fields = fields;
        // SAFETY: `fields` comes from a live `&mut` held for `'a`.
        let inline = unsafe { (*fields).as_mut_ptr() };
        Self {
            fields,
            inline,
            pending: 0,
            _list: PhantomData,
        }
    }

    /// Appends the field `key: value`.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: Key, value: Value) {
        if self.pending < INLINE {
            // SAFETY: the list was empty and inline when the writer was made, and only the
            // writer has added to it since, `pending` fields at the start of the inline
            // storage: the slot at `pending` is within the inline capacity and past what is
            // written.
            unsafe { write_field(self.inline.add(self.pending), key, value) };
            self.pending += 1;
        } else {
            self.grow(key, value);
        }
    }

    /// The field past the inline capacity: the written fields are counted and the list grows.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, key: Key, value: Value) {
        self.count();
        // SAFETY: the writer holds the list's `&mut` for its lifetime; `inline` is not used
        // again once the fields are counted.
        push_field(unsafe { &mut *self.fields }, key, value);
    }

    /// Counts the fields written in place in the list's length.
    #[inline(always)]
    fn count(&mut self) {
        if self.pending != COUNTED {
            // SAFETY: the first `pending` inline slots were written (see `push`); the list's
            // length was zero until now. The writer holds the list's `&mut`.
            unsafe { (*self.fields).set_len(self.pending) };
            self.pending = COUNTED;
        }
    }
}

impl Drop for InlineWriter<'_> {
    /// Counts what was written, also on a panic.
    #[inline(always)]
    fn drop(&mut self) {
        self.count();
    }
}

/// The growable field lists [`push_field`] writes into: an event's [`Fields`] and the plain
/// `Vec` that probes gather captures in.
pub(crate) trait FieldVec {
    fn len(&self) -> usize;
    fn capacity(&self) -> usize;
    /// Appends a field, growing the list (the out-of-line case).
    fn push(&mut self, field: Field);
    fn as_mut_ptr(&mut self) -> *mut Field;
    /// # Safety
    /// As `Vec::set_len`: the fields up to `len` are initialised and within the capacity.
    unsafe fn set_len(&mut self, len: usize);
}

/// [`FieldVec`] for a list type by its inherent methods of the same names.
macro_rules! field_vec {
    ($list:ty) => {
        impl FieldVec for $list {
            #[inline(always)]
            fn len(&self) -> usize {
                <$list>::len(self)
            }
            #[inline(always)]
            fn capacity(&self) -> usize {
                <$list>::capacity(self)
            }
            #[inline]
            fn push(&mut self, field: Field) {
                <$list>::push(self, field)
            }
            #[inline(always)]
            fn as_mut_ptr(&mut self) -> *mut Field {
                <$list>::as_mut_ptr(self)
            }
            #[inline(always)]
            unsafe fn set_len(&mut self, len: usize) {
                // SAFETY: the caller's.
                unsafe { <$list>::set_len(self, len) }
            }
        }
    };
}

field_vec!(Fields);
field_vec!(Vec<Field>);

/// Whether dropping `fields` frees nothing: stored inline, every key a `&'static str` and
/// every value a scalar (what `give!(step, loss)` makes). Read by the thread that has just
/// written them, while they are in its cache, so that the event's last reference — a reader
/// on another core — need not pull those lines over only to find nothing to free.
#[inline(always)]
fn owns_nothing(fields: &Fields) -> bool {
    !fields.spilled()
        && fields
            .iter()
            .all(|(key, value)| matches!(key, Key::Borrowed(_)) && value.is_scalar())
}

/// A counted reference to an event's slot: what [`Event`](crate::Event) is made of.
pub(crate) struct EventRef {
    slot: NonNull<Slot>,
}

// SAFETY: a slot is written once before its first `EventRef` exists and only read afterwards
// (see the module doc); its fields are `Send + Sync`.
unsafe impl Send for EventRef {}
// SAFETY: as for `Send`: after the single write, every access through an `EventRef` is a read
// (or the atomic count), so sharing `&EventRef` between threads is sound.
unsafe impl Sync for EventRef {}

impl EventRef {
    /// Stores an event in this thread's block (a block of its own while the thread exits).
    pub(crate) fn new(
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
        fields: Fields,
    ) -> Self {
        Self::build(time, origin, |slot_fields| *slot_fields = fields)
    }

    /// Stores an event whose fields come from `fields`, written straight into its slot (no
    /// copy of the inline fields through the stack: the give path's common case, inlined
    /// there).
    #[inline(always)]
    pub(crate) fn from_iter(
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
        fields: impl Iterator<Item = Field>,
    ) -> Self {
        Self::build(time, origin, |slot_fields| {
            // Known at compile time for the macros' arrays (an exact size hint).
            // Written in place and counted once, without the generic `extend`'s reserve and
            // capacity checks (a third of the give path's instructions for a one-field event).
            if fields.size_hint().1.is_some_and(|most| most <= INLINE) {
                let mut writer = InlineWriter::new(slot_fields);
                fields.for_each(|(key, value)| writer.push(key, value));
            } else {
                slot_fields.extend(fields);
            }
        })
    }

    /// Takes a slot, writes its header and empty fields in place, lets `fill` write the
    /// fields, and only then hands out the reference (if `fill` panics the slot is given back
    /// with the fields written so far).
    #[inline(always)]
    fn build(
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
        fill: impl FnOnce(&mut Fields),
    ) -> Self {
        let (block, index) = ARENA.try_with(Arena::take).unwrap_or_else(|_| {
            // The thread-local is gone (the thread is exiting): a block for this one event,
            // its thread's count and unused slots given back at once.
            let block = Block::allocate();
            // SAFETY: we own the thread count and the unused slots' counts.
            unsafe { Block::release(block, SLOTS) };
            (block, 0)
        });
        // SAFETY: `index < SLOTS`; the slot is unused and nobody else can reach it yet. Each
        // part is written on its own: a whole `Slot` written at once would be assembled on the
        // stack and copied, inline field storage included (four cache lines per event).
        let slot = unsafe {
            let slot = Block::slot(block, index);
            addr_of_mut!((*slot).refs).write(AtomicU32::new(1));
            addr_of_mut!((*slot).index).write(index as u16);
            // Until `fill` has returned: a panic in it drops the fields written so far.
            addr_of_mut!((*slot).plain).write(false);
            addr_of_mut!((*slot).time).write(time.into());
            addr_of_mut!((*slot).origin).write(origin);
            addr_of_mut!((*slot).fields)
                .cast::<Fields>()
                .write(Fields::new());
            NonNull::new_unchecked(slot)
        };
        // From here the slot is a complete event (with no fields): if `fill` panics (an
        // iterator's `next`, an allocation), dropping `event` gives the slot back.
        let event = Self { slot };
        // SAFETY: the only reference to this slot is `event`, which nobody else has seen.
        let fields = unsafe { (*event.slot.as_ptr()).fields.assume_init_mut() };
        fill(fields);
        let plain = owns_nothing(fields);
        // SAFETY: as above; the fields are written and will not change.
        unsafe { addr_of_mut!((*event.slot.as_ptr()).plain).write(plain) };
        event
    }

    /// [`build`](Self::build), stamped now once `fill` has written the fields: a field
    /// expression that gives (a nested `give!`) then gives an event stamped before this one,
    /// as it is delivered before it, so a thread's events never go back in time.
    #[inline(always)]
    pub(crate) fn build_stamped_after(
        origin: Option<&'static Origin>,
        fill: impl FnOnce(&mut Fields),
    ) -> Self {
        let event = Self::build(Stamp::UNSET, origin, fill);
        // SAFETY: `event` is the only reference to its slot, and nobody has seen it yet.
        unsafe { addr_of_mut!((*event.slot.as_ptr()).time).write(Stamp::now()) };
        event
    }

    fn slot(&self) -> &Slot {
        // SAFETY: this reference keeps the slot alive; nobody writes it any more.
        unsafe { self.slot.as_ref() }
    }

    /// The fields, in the order they were given.
    #[inline]
    pub(crate) fn fields(&self) -> &[Field] {
        // SAFETY: initialised when the slot was written, dropped only with the last reference.
        unsafe { self.slot().fields.assume_init_ref() }
    }

    #[inline]
    pub(crate) fn time(&self) -> Timestamp {
        self.slot().time.timestamp()
    }

    #[inline]
    pub(crate) fn origin(&self) -> Option<&'static Origin> {
        self.slot().origin
    }

    /// Whether both refer to the same event.
    pub(crate) fn ptr_eq(&self, other: &EventRef) -> bool {
        self.slot == other.slot
    }

    /// Asks the processor to bring this event's slot into this core's cache ahead of use: its
    /// count's line with a write hint (the next clone or drop is an atomic on it) and its
    /// first line for reading. A hint: no effect on what any access returns. On the x86-64
    /// baseline the crate compiles for (no `prfchw`), LLVM lowers the write hint to a read
    /// prefetch (`prefetcht0`); a real `prefetchw`, tried on 2026-11-28, made no measurable
    /// difference to a reader by value in either placement of the VM's two CPUs.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _mm_prefetch};
            let slot = self.slot.as_ptr();
            // SAFETY: prefetching is a hint that never faults or changes memory; the
            // addresses are inside this live slot.
            unsafe {
                _mm_prefetch::<_MM_HINT_ET0>(std::ptr::addr_of!((*slot).refs).cast::<i8>());
                _mm_prefetch::<_MM_HINT_T0>(slot.cast::<i8>());
            }
        }
    }
}

impl Clone for EventRef {
    #[inline]
    fn clone(&self) -> Self {
        // Relaxed, as `Arc::clone`: a new reference comes from an existing one.
        if self.slot().refs.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
            std::process::abort();
        }
        Self { slot: self.slot }
    }
}

impl Drop for EventRef {
    #[inline]
    fn drop(&mut self) {
        if let Some(block) = self.drop_slot() {
            // SAFETY: `drop_slot` gave this slot's count in `block` to the caller.
            unsafe { Block::release(block, 1) };
        }
    }
}

impl EventRef {
    /// Drops this reference; if it was the last, drops the fields and returns the block
    /// whose count the slot held, for the caller to give back ([`Block::release`]). The
    /// caller must then not use `self` again (it is dropped or forgotten after).
    #[inline]
    fn drop_slot(&mut self) -> Option<NonNull<Block>> {
        let refs = &self.slot().refs;
        // The last reference (the common case: a feed's slot, or an event taken by value
        // from it) needs no read-modify-write: with a count of one, held by this reference,
        // nobody else can clone or drop the event, so reading one (`Acquire`, ordered after
        // every other reference's `Release` decrement) makes this the last use. A locked
        // decrement costs the reader of a busy feed a few nanoseconds per event.
        if refs.load(Ordering::Acquire) != 1 && refs.fetch_sub(1, Ordering::Release) != 1 {
            return None;
        }
        fence(Ordering::Acquire);
        let slot = self.slot.as_ptr();
        // SAFETY: this was the last reference: the fields are dropped once, here; the slot's
        // count in its block goes to the caller. `index` locates the block the slot is in.
        unsafe {
            let index = (*slot).index as usize;
            let block = slot
                .sub(index)
                .byte_sub(std::mem::offset_of!(Block, slots))
                .cast::<Block>();
            if !(*slot).plain {
                (*slot).fields.assume_init_drop();
            }
            Some(NonNull::new_unchecked(block))
        }
    }
}

/// Drops events one after the other and gives their slots back to their blocks once per run
/// of events from the same block, not once per event: each give-back is a locked decrement
/// of the block's count, and a feed's chunk (256 events, most from one giving thread's
/// blocks of 64, in order) is freed by its last reader, on the core that reads, in one loop.
/// Counts not yet given back keep their block alive; they are given back when an event of
/// another block comes, and when the batch is dropped (unwinding too).
pub(crate) struct DropBatch {
    /// The block of the last events dropped, and how many of its counts this batch holds.
    held: Option<(NonNull<Block>, usize)>,
}

impl DropBatch {
    pub(crate) fn new() -> Self {
        Self { held: None }
    }

    /// Drops `event` (its fields now, if this was its last reference).
    #[inline]
    pub(crate) fn drop(&mut self, event: EventRef) {
        let mut event = std::mem::ManuallyDrop::new(event);
        let Some(block) = event.drop_slot() else {
            return;
        };
        match &mut self.held {
            Some((held, count)) if *held == block => *count += 1,
            _ => {
                self.give_back();
                self.held = Some((block, 1));
            }
        }
    }

    fn give_back(&mut self) {
        if let Some((block, count)) = self.held.take() {
            // SAFETY: this batch holds `count` of `block`'s counts, from `drop_slot`.
            unsafe { Block::release(block, count) };
        }
    }
}

impl Drop for DropBatch {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    use crate::drop_count::Counted;

    fn fields_with(drops: &Arc<AtomicUsize>) -> Fields {
        let lazy = Value::lazy(Counted(drops.clone()));
        smallvec::smallvec![("x".into(), lazy)]
    }

    /// The cache lines (of a slot's four) that a slot's header, its fields' length and its
    /// first `count` inline fields occupy.
    fn lines_of_an_event_with(count: usize) -> std::collections::BTreeSet<usize> {
        let fields = Fields::new();
        // Where the inline fields start within `Fields`; the length word is the other end.
        let data = fields.as_ptr().addr() - std::ptr::addr_of!(fields).addr();
        let inline_bytes = INLINE * std::mem::size_of::<Field>();
        assert_eq!(std::mem::size_of::<Fields>(), inline_bytes + 8);
        let length = if data == 0 { inline_bytes } else { 0 };
        let at = std::mem::offset_of!(Slot, fields);
        let header = [
            std::mem::offset_of!(Slot, refs),
            std::mem::offset_of!(Slot, index),
            std::mem::offset_of!(Slot, time),
            std::mem::offset_of!(Slot, origin),
        ];
        let field_bytes = (at + data)..(at + data + count * std::mem::size_of::<Field>());
        header
            .into_iter()
            .chain([at + length])
            .chain(field_bytes)
            .map(|byte| byte / 64)
            .collect()
    }

    #[test]
    fn the_header_shares_the_last_line_with_the_length() {
        // What the slot's layout is for: one field on two lines, two on three.
        assert_eq!(lines_of_an_event_with(1), [0, 3].into());
        assert_eq!(lines_of_an_event_with(2), [0, 1, 3].into());
    }

    #[test]
    fn fields_are_dropped_with_their_last_reference_not_with_their_block() {
        let drops = Arc::new(AtomicUsize::new(0));
        let first = EventRef::new(Timestamp::from_nanos(1), None, fields_with(&drops));
        let kept = EventRef::new(Timestamp::from_nanos(2), None, fields_with(&drops));
        let clone = first.clone();
        drop(first);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(clone);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(kept.time(), Timestamp::from_nanos(2));
        drop(kept);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn only_fields_that_own_nothing_are_left_undropped() {
        let plain = |fields: Fields| {
            let event = EventRef::new(Timestamp::from_nanos(1), None, fields);
            event.slot().plain
        };
        let scalar = |key: &'static str| (Key::Borrowed(key), Value::F64(0.5));
        assert!(plain(Fields::new()));
        assert!(plain(smallvec::smallvec![scalar("loss"), scalar("step")]));
        let flags = [
            Value::Null,
            Value::Bool(true),
            Value::I64(-1),
            Value::U64(1),
        ];
        assert!(plain(flags.into_iter().map(|v| ("x".into(), v)).collect()));
        // Each of these owns memory that only their drop frees (Miri reports it as a leak
        // if it is not: `cargo miri test arena::`).
        assert!(!plain(smallvec::smallvec![(
            Key::Owned("loss".to_owned()),
            Value::F64(0.5)
        )]));
        assert!(!plain(smallvec::smallvec![
            scalar("step"),
            ("name".into(), Value::from("mlp"))
        ]));
        assert!(!plain(smallvec::smallvec![(
            "bytes".into(),
            Value::Bytes(vec![1, 2])
        )]));
        // Past the inline capacity the fields live on the heap, scalars or not.
        assert!(!plain((0..=INLINE).map(|_| scalar("x")).collect()));
    }

    #[test]
    fn events_outlive_their_thread_and_blocks_across_threads() {
        let drops = Arc::new(AtomicUsize::new(0));
        let events: Vec<EventRef> = std::thread::spawn({
            let drops = drops.clone();
            move || {
                (0..SLOTS * 3 + 5)
                    .map(|i| {
                        EventRef::new(Timestamp::from_nanos(i as u64), None, fields_with(&drops))
                    })
                    .collect()
            }
        })
        .join()
        .unwrap();
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event.time(), Timestamp::from_nanos(i as u64));
            assert_eq!(event.fields()[0].0, "x");
        }
        drop(events);
        assert_eq!(drops.load(Ordering::SeqCst), SLOTS * 3 + 5);
    }

    /// The live count of the block `event`'s slot is in.
    fn live_count(event: &EventRef) -> usize {
        let slot = event.slot.as_ptr();
        // SAFETY: `event` keeps its slot, and so its block, alive; the count is atomic.
        unsafe {
            let block = slot
                .sub((*slot).index as usize)
                .byte_sub(std::mem::offset_of!(Block, slots))
                .cast::<Block>();
            (*addr_of!((*block).live)).load(Ordering::SeqCst)
        }
    }

    #[test]
    fn a_drop_batch_drops_fields_at_once_and_gives_each_block_its_counts_back() {
        let drops = Arc::new(AtomicUsize::new(0));
        // Two full blocks, made on a thread that is gone: each block's count is then its
        // live slots only.
        let events: Vec<EventRef> = std::thread::spawn({
            let drops = drops.clone();
            move || {
                (0..SLOTS * 2)
                    .map(|i| {
                        EventRef::new(Timestamp::from_nanos(i as u64), None, fields_with(&drops))
                    })
                    .collect()
            }
        })
        .join()
        .unwrap();
        let kept = [events[SLOTS - 1].clone(), events[SLOTS + 3].clone()];
        let mut batch = DropBatch::new();
        for (i, event) in events.into_iter().enumerate() {
            batch.drop(event);
            // Fields go with their last reference, not with the batch.
            let kept_so_far = usize::from(i >= SLOTS - 1) + usize::from(i >= SLOTS + 3);
            assert_eq!(drops.load(Ordering::SeqCst), i + 1 - kept_so_far);
        }
        // The first block's counts were given back when the second block's events came; the
        // second's are held until the batch goes.
        assert_eq!(live_count(&kept[0]), 1);
        assert_eq!(live_count(&kept[1]), SLOTS);
        drop(batch);
        assert_eq!(live_count(&kept[1]), 1);
        drop(kept);
        assert_eq!(drops.load(Ordering::SeqCst), SLOTS * 2);
    }

    #[test]
    fn fields_written_in_place_are_read_back_in_order() {
        // Every count the in-place write takes (one field, several, the inline capacity), so
        // that Miri checks each write against the ones before it.
        for count in 1..=INLINE {
            let fields = (0..count).map(|i| {
                let key: &'static str = ["a", "b", "c", "d", "e", "f", "g", "h"][i % 8];
                (key.into(), Value::from(i as u64))
            });
            let event = EventRef::from_iter(Timestamp::from_nanos(3), None, fields);
            let read: Vec<_> = event
                .fields()
                .iter()
                .map(|(key, value)| (key.to_string(), value.clone()))
                .collect();
            assert_eq!(read.len(), count);
            for (i, (key, value)) in read.iter().enumerate() {
                assert_eq!(key, ["a", "b", "c", "d", "e", "f", "g", "h"][i % 8]);
                assert_eq!(*value, Value::from(i as u64));
            }
        }
    }

    #[test]
    fn fields_pushed_in_place_are_read_back_in_order_inline_and_spilled() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut fields = Fields::new();
        // Past the inline capacity, so that both the in-place write and the spill are taken
        // (and checked by Miri); a value with a destructor, to see each dropped once.
        for i in 0..INLINE + 2 {
            let value = if i % 2 == 0 {
                Value::lazy(Counted(drops.clone()))
            } else {
                Value::from(i as u64)
            };
            push_field(
                &mut fields,
                Key::Borrowed(["a", "b", "c", "d", "e", "f"][i]),
                value,
            );
        }
        assert!(fields.spilled());
        let event = EventRef::new(Timestamp::from_nanos(5), None, fields);
        let keys: Vec<&str> = event.fields().iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(event.fields()[3].1, Value::from(3u64));
        drop(event);
        assert_eq!(drops.load(Ordering::SeqCst), INLINE.div_ceil(2) + 1);
    }

    #[test]
    fn a_panicking_field_iterator_gives_its_slot_back_with_the_fields_made_so_far() {
        let drops = Arc::new(AtomicUsize::new(0));
        // Without an upper bound (the general extend), then with one of at most `INLINE`
        // (written in place, as the macros' arrays are).
        for bounded in [false, true] {
            let made = fields_with(&drops);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let fields = made
                    .into_iter()
                    .chain(std::iter::from_fn(|| panic!("no more")));
                if bounded {
                    EventRef::from_iter(Timestamp::from_nanos(0), None, fields.take(INLINE))
                } else {
                    EventRef::from_iter(Timestamp::from_nanos(0), None, fields)
                }
            }));
            assert!(result.is_err());
        }
        // The field written before each panic was dropped with its half-built event.
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        // The thread's block goes on serving slots.
        let next = EventRef::new(Timestamp::from_nanos(7), None, Fields::new());
        assert_eq!(next.time(), Timestamp::from_nanos(7));
    }
}
