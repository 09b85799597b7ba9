//! Where events live: in blocks of [`LINES`] cache lines that the thread making an event
//! allocates from, one allocation per block instead of one per event. A leaf: it knows
//! fields, nothing of scopes or routing.
//!
//! Each thread keeps one block it fills slot by slot; a slot takes the whole lines its header
//! and fields need (two for an event of one or two fields). An event is a pointer to its slot,
//! with a reference count of its own (so a clone is one atomic increment, as with `Arc`), and
//! its fields are dropped as soon as its last reference goes, not when its block does: a lazy
//! value (a tensor on a device) is freed when its event is. The block's memory is freed when
//! its thread has moved on to another block and every event of it has been dropped.
//!
//! # Why it is correct
//!
//! - **One writer per slot, before it is shared.** Only the thread that owns the block writes a
//!   slot, once, before the [`EventRef`] to it exists; everyone else reaches the slot through
//!   an `EventRef` and only reads it (or drops it, see below). Handing the `EventRef` to another
//!   thread (through a queue or a feed) is a release/acquire hand-off, so the fields are seen
//!   whole. A slot is given [`RESERVED`] lines while its fields are written and keeps the
//!   ones they take; the lines past them go to the next slot only if no other slot was taken
//!   meanwhile ([`Arena::keep`]), so slots never overlap. Nobody borrows a slot's lines past
//!   its own: its header is borrowed alone, its fields as a slice of those written.
//! - **Slots die once.** A slot's count is an `Arc`-style count: clones increment with
//!   `Relaxed`, drops decrement with `Release`, and the one that takes it to zero fences with
//!   `Acquire` before it drops the fields — so every use of the event happened before.
//! - **Blocks die once.** A block's `live` count starts at `LINES + 1`: one per line (used or
//!   not) and one for its thread. A slot dying takes off the lines it kept; the thread, when it
//!   moves to a new block or exits, takes off one plus the lines it never used. Whoever takes
//!   it to zero (`AcqRel`) frees the block: by then no slot is alive and its thread is gone
//!   from it.
//! - **No allocation on the give path's hot loop.** A new block is allocated every 64 to 256
//!   events; fields of up to [`INLINE`] entries are stored in the slot itself.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
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

/// A cache line: slots start on one and take whole ones.
const LINE: usize = 64;

/// Lines per block (16 KB): one allocation per 64 to 256 events, 128 of one or two fields.
const LINES: usize = 256;

/// Lines a slot is given while its fields are written: room for [`INLINE`] of them. Once they
/// are, the slot keeps only the lines they take (see [`Arena::keep`]).
const RESERVED: usize = std::mem::size_of::<Slot>() / LINE;

// Four lines at most per slot; a line index and count fit a byte.
const _: () = assert!(std::mem::size_of::<Slot>() == 4 * LINE);
const _: () = assert!(LINES <= u8::MAX as usize + 1);
// The header and two fields on the slot's first two lines (see `Slot`).
const _: () =
    assert!(std::mem::offset_of!(Slot, fields) + 2 * std::mem::size_of::<Field>() <= 2 * LINE);

/// References above this abort, as `Arc` does (a leak of clones, not a real count).
const MAX_REFS: u32 = i32::MAX as u32;

/// An event's slot: its header (24 bytes, the fields' count in it) and its fields right after,
/// in storage of the slot's own, from the start of a cache line. A slot takes the lines its
/// fields need and no more: an event of one or two fields (a field is 48 bytes, its [`Key`]
/// two words) two lines, three fields three, four or more (their `Vec` inline) at most four.
/// Slots do not share lines, so a reader of one event never reads a line the giving thread is
/// writing the next one on.
///
/// Four lines each, as slots were, a two-field event wrote three of them (a `SmallVec`'s length
/// word sat after its inline array, on the last line) and a batch of events took 256 bytes
/// each; now two lines and 128 bytes: on one CPU the giving thread went from 57–106 to 23–39 ns
/// of CPU per event (docs/architecture.md, "A compact event").
/// `an_event_of_two_fields_is_on_two_lines` checks the layout this relies on.
///
/// A slot's tail past the lines it keeps belongs to the next slot: only the header is ever
/// borrowed as a whole (`&Header`), the fields through a slice of those written.
#[repr(C, align(64))]
struct Slot {
    header: Header,
    fields: Stored,
}

/// What every event has besides its fields: 24 bytes, at the start of its first line.
#[repr(C)]
struct Header {
    refs: AtomicU32,
    /// Which line of its block the slot starts on (to find the block from the slot).
    line: u8,
    /// How many lines the slot keeps: what it gives back to its block when it dies.
    lines: u8,
    /// Dropping the fields frees nothing: stored inline, every key a `&'static str` and every
    /// value a scalar (what `give!(step, loss)` makes). Known to the thread writing them (see
    /// [`InlineWriter`]), so that the event's last reference — a reader on another core — need
    /// not pull the fields' lines over only to find nothing to free.
    plain: bool,
    /// How many fields are stored inline, or [`SPILLED`]: they are in `fields.heap`.
    len: u8,
    /// When it was given: scaled to a timestamp only when asked.
    time: Stamp,
    origin: Option<&'static Origin>,
}

/// [`Header::len`] when the fields are on the heap (more than [`INLINE`]).
const SPILLED: u8 = u8::MAX;

/// A slot's fields: the first `len` of `inline`, or `heap` when `len` is [`SPILLED`].
#[repr(C)]
union Stored {
    inline: ManuallyDrop<[MaybeUninit<Field>; INLINE]>,
    heap: ManuallyDrop<Vec<Field>>,
}

/// A line of a block, to be part of a slot.
#[repr(C, align(64))]
struct Line([u8; LINE]);

/// The count first, on a line of its own (the lines' alignment pads it): every slot's death
/// takes its lines off it, on whichever thread drops the event.
#[repr(C)]
struct Block {
    /// Lines not given back: those of slots not yet dead and those not yet used, plus one
    /// while the thread still allocates from the block.
    live: AtomicUsize,
    lines: [MaybeUninit<Line>; LINES],
}

const BLOCK: Layout = Layout::new::<Block>();

/// Freed blocks wait in the pool behind this many others (2 MB, about 16,000 events of two
/// fields; the pool holds at most twice as many, 4 MB) before one is used again. A block is
/// freed where its last event is dropped, on a reader's core, whose clones, drops and reads
/// of the block's slots leave their lines in that core's cache; the giving thread reusing the
/// block at once had to take each line it writes back from there, a round trip between the
/// cores per line. On the development VM that trip is 60–80 ns while the host keeps its two
/// virtual CPUs near each other and about 340 ns while it does not, and with three lines per
/// event the hand-off ran at 155–195 ns per event in the far placement: the "slow mode" of
/// the last rounds (`examples/handoff_modes.rs` times the round trip beside each hand-off).
/// Left to rest behind 16,384 other events (then 4 MB of four-line slots), a block's lines
/// had left the reader's own L1 and L2 by the time it was reused: over 40 alternated rounds,
/// one subscriber by value 62 → 41 ns per event near, 197 → 109 far. Resting longer helps
/// far (2,048 blocks, 32 MB, past the reader's L3 too: 70) and costs near (66, the first
/// 131,072 events of a process all fresh memory), and holds eight times the memory. Since
/// events take two lines instead of four, the same number of events rest in half the memory.
const RESTING: usize = 128;

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
        unsafe { addr_of_mut!((*block.as_ptr()).live).write(AtomicUsize::new(LINES + 1)) };
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

    /// The slot starting at `line`.
    ///
    /// # Safety
    /// `block` must be live and `line + RESERVED <= LINES` (the whole `Slot` in the block).
    unsafe fn slot(block: NonNull<Block>, line: usize) -> *mut Slot {
        // SAFETY: in bounds of the block's allocation; no reference to other slots is made.
        unsafe {
            addr_of_mut!((*block.as_ptr()).lines)
                .cast::<Line>()
                .add(line)
                .cast::<Slot>()
        }
    }

    /// The block the slot at `slot` is in.
    ///
    /// # Safety
    /// `slot` is a live slot; its header's `line` written.
    unsafe fn of(slot: *mut Slot) -> NonNull<Block> {
        // SAFETY: the caller's: the slot starts `line` lines into its block's lines.
        unsafe {
            let line = usize::from((*slot).header.line);
            let block = slot
                .cast::<Line>()
                .sub(line)
                .byte_sub(std::mem::offset_of!(Block, lines))
                .cast::<Block>();
            NonNull::new_unchecked(block)
        }
    }
}

/// The block this thread fills.
struct Arena {
    block: Cell<Option<NonNull<Block>>>,
    /// The next line to fill (`LINES`: the block is full, or there is none).
    next: Cell<usize>,
}

impl Arena {
    /// A slot to fill, [`RESERVED`] lines from the returned one: in the current block, or in a
    /// new one when it has not that many left.
    #[inline(always)]
    fn take(&self) -> (NonNull<Block>, usize) {
        let next = self.next.get();
        if let Some(block) = self.block.get()
            && next <= LINES - RESERVED
        {
            self.next.set(next + RESERVED);
            return (block, next);
        }
        self.take_in_new_block()
    }

    /// Gives back the lines past the first `lines` of the slot taken at `line` of `block`,
    /// if it is the last one taken (no event was made while its fields were being written: a
    /// field expression that gives). Returns how many lines the slot keeps.
    #[inline(always)]
    fn keep(&self, block: NonNull<Block>, line: usize, lines: usize) -> usize {
        if self.next.get() == line + RESERVED && self.block.get() == Some(block) {
            self.next.set(line + lines);
            lines
        } else {
            RESERVED
        }
    }

    /// [`take`](Self::take) when the block is full (once per 64 to 256 events): out of line.
    #[cold]
    #[inline(never)]
    fn take_in_new_block(&self) -> (NonNull<Block>, usize) {
        self.retire();
        let block = Block::allocate();
        self.block.set(Some(block));
        self.next.set(RESERVED);
        (block, 0)
    }

    /// Leaves the current block: its unused lines and this thread's count are given back.
    fn retire(&self) {
        if let Some(block) = self.block.take() {
            let unused = LINES - self.next.get();
            // SAFETY: this thread owns its count and the counts of the lines it never used.
            unsafe { Block::release(block, unused + 1) };
        }
        self.next.set(LINES);
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
            next: Cell::new(LINES),
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

/// Appends fields to a new list (empty, inline) or to a new event's slot: the first
/// [`INLINE`] written in place and counted in the list's length once, when the writer is
/// dropped — also when the code making the fields panics, so the fields written before are
/// dropped with the list. `Fields`' own `len`, `as_mut_ptr` and `set_len` each ask whether the
/// list has spilled to the heap (a load and a branch): per field, that was a sixth of the
/// giving thread's instructions for `give!(step, loss)` (callgrind, `examples/give_drain.rs
/// late 1 200000 step`). Past the inline capacity the list grows as [`push_field`] grows it,
/// and a slot's fields move to a `Vec`.
pub(crate) struct InlineWriter<'a> {
    /// What the fields are written into (read only when they are counted or grow).
    into: Target,
    /// Where the inline fields start (taken once: the list is not moved while borrowed).
    inline: *mut Field,
    /// Fields written in place and not yet counted in the list's length; [`COUNTED`] once
    /// they are (the list has grown past its inline storage and counts its own).
    pending: usize,
    /// Some field written owns memory (a `String` key, a string value, …): a slot's fields
    /// are then not [`Header::plain`]. Known as each is written, while it is in registers.
    owns: bool,
    _list: PhantomData<&'a mut Fields>,
}

/// An [`InlineWriter`]'s list, held as a pointer: a `&mut` moved into the writer would be
/// retagged as unique and, under Stacked Borrows, invalidate `inline`, which is derived from it.
#[derive(Clone, Copy)]
enum Target {
    List(*mut Fields),
    Slot(*mut Slot),
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
            into: Target::List(fields),
            inline,
            pending: 0,
            owns: false,
            _list: PhantomData,
        }
    }

    /// A writer of the fields of the slot at `slot`, whose count is zero.
    ///
    /// # Safety
    /// `slot` is a slot being built that nothing else accesses while the writer lives.
    #[inline(always)]
    unsafe fn into_slot(slot: *mut Slot) -> Self {
        Self {
            into: Target::Slot(slot),
            // SAFETY: the caller's; a place, no reference made.
            inline: unsafe { addr_of_mut!((*slot).fields.inline) }.cast::<Field>(),
            pending: 0,
            owns: false,
            _list: PhantomData,
        }
    }

    /// Appends the field `key: value`.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: Key, value: Value) {
        if self.pending < INLINE {
            self.owns |= !(key.is_static() && value.is_scalar());
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

    /// Appends `fields`: a list already on the heap is kept as it is in a slot with nothing
    /// written yet (its `Vec` moved in, not copied into another), anything else field by field.
    #[inline]
    pub(crate) fn append(&mut self, fields: Fields) {
        match self.into {
            Target::Slot(slot) if fields.spilled() && self.pending == 0 => {
                self.owns = true;
                self.count();
                // SAFETY: the writer has the slot to itself (`into_slot`); nothing was written
                // in it, so the `Vec` takes the place of no field and is counted as `SPILLED`.
                unsafe {
                    addr_of_mut!((*slot).fields.heap).write(ManuallyDrop::new(fields.into_vec()));
                    addr_of_mut!((*slot).header.len).write(SPILLED);
                }
            }
            _ => fields
                .into_iter()
                .for_each(|(key, value)| self.push(key, value)),
        }
    }

    /// The field past the inline capacity: the written fields are counted and the list grows.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, key: Key, value: Value) {
        // Fields on the heap are freed with their event, whatever they are.
        self.owns = true;
        self.count();
        match self.into {
            // SAFETY: the writer holds the list's `&mut` for its lifetime; `inline` is not
            // used again once the fields are counted.
            Target::List(fields) => push_field(unsafe { &mut *fields }, key, value),
            // SAFETY: the writer has the slot to itself (`into_slot`); its fields are counted.
            Target::Slot(slot) => unsafe { spilled(slot) }.push((key, value)),
        }
    }

    /// Counts the fields written in place in the list's length (and, in a slot, says whether
    /// they own anything).
    #[inline(always)]
    fn count(&mut self) {
        if self.pending != COUNTED {
            match self.into {
                // SAFETY: the first `pending` inline slots were written (see `push`); the
                // list's length was zero until now. The writer holds the list's `&mut`.
                Target::List(fields) => unsafe { (*fields).set_len(self.pending) },
                // SAFETY: as for a list; at most `INLINE` (< `SPILLED`) fields are pending.
                Target::Slot(slot) => unsafe {
                    addr_of_mut!((*slot).header.len).write(self.pending as u8);
                    addr_of_mut!((*slot).header.plain).write(!self.owns);
                },
            }
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

/// The slot's fields as a `Vec`, moved there from the inline storage the first time.
///
/// # Safety
/// `slot` is a slot being built that nothing else accesses, its count up to date.
unsafe fn spilled<'a>(slot: *mut Slot) -> &'a mut Vec<Field> {
    // SAFETY: the caller's: `len` counts the inline fields, which are moved (not copied: the
    // count says `SPILLED` from here on) into the `Vec` that takes their storage's place.
    unsafe {
        let len = addr_of_mut!((*slot).header.len);
        if *len != SPILLED {
            let count = usize::from(*len);
            let mut heap = Vec::with_capacity(2 * INLINE);
            let inline = addr_of!((*slot).fields.inline).cast::<Field>();
            std::ptr::copy_nonoverlapping(inline, heap.as_mut_ptr(), count);
            heap.set_len(count);
            addr_of_mut!((*slot).fields.heap).write(ManuallyDrop::new(heap));
            len.write(SPILLED);
        }
        &mut *addr_of_mut!((*slot).fields.heap).cast::<Vec<Field>>()
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

/// The lines a slot keeps for fields stored as `len` says: its header and fields, whole lines.
#[inline(always)]
const fn lines_for(len: u8) -> usize {
    let fields = if len == SPILLED {
        std::mem::size_of::<Vec<Field>>()
    } else {
        len as usize * std::mem::size_of::<Field>()
    };
    (std::mem::offset_of!(Slot, fields) + fields).div_ceil(LINE)
}

impl Slot {
    /// The fields of the slot at `slot`.
    ///
    /// # Safety
    /// `slot` is live and its fields written; they live as long as `'a`.
    #[inline(always)]
    unsafe fn fields<'a>(slot: *const Slot) -> &'a [Field] {
        // SAFETY: the caller's; `len` counts the inline fields written, or says they are in
        // `heap`. Only the fields written are borrowed, not the whole inline storage (whose
        // tail may be another slot's).
        unsafe {
            if (*slot).header.len == SPILLED {
                &*addr_of!((*slot).fields.heap).cast::<Vec<Field>>()
            } else {
                let inline = addr_of!((*slot).fields.inline).cast::<Field>();
                std::slice::from_raw_parts(inline, usize::from((*slot).header.len))
            }
        }
    }

    /// Drops the fields.
    ///
    /// # Safety
    /// Once, by the slot's last reference; the fields are not used again.
    unsafe fn drop_fields(slot: *mut Slot) {
        // SAFETY: the caller's; `len` says where the fields are, as in `fields`.
        unsafe {
            if (*slot).header.len == SPILLED {
                std::ptr::drop_in_place(addr_of_mut!((*slot).fields.heap).cast::<Vec<Field>>());
            } else {
                let inline = addr_of_mut!((*slot).fields.inline).cast::<Field>();
                let count = usize::from((*slot).header.len);
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(inline, count));
            }
        }
    }
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
        Self::build(time, origin, |mut writer| writer.append(fields))
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
        // Written in place and counted once, without the generic `extend`'s reserve and
        // capacity checks (a third of the give path's instructions for a one-field event).
        // Inlined whatever the caller's size: called, the closure takes the writer through
        // memory (a probe's lone event: 29 instructions more, and 12 for the call).
        Self::build(
            time,
            origin,
            #[inline(always)]
            |mut writer| {
                fields.for_each(|(key, value)| writer.push(key, value));
            },
        )
    }

    /// Takes a slot, writes its header and empty fields in place, lets `fill` write the
    /// fields, and only then hands out the reference (if `fill` panics the slot is given back
    /// with the fields written so far).
    #[inline(always)]
    fn build(
        time: impl Into<Stamp>,
        origin: Option<&'static Origin>,
        fill: impl FnOnce(InlineWriter<'_>),
    ) -> Self {
        // The arena is kept as a pointer to give back the lines the fields do not take once
        // they are written, without a second look-up of the thread-local: it lives until the
        // thread exits, which it cannot do while this thread writes the fields.
        let (arena, block, line) = ARENA
            .try_with(|arena| {
                let (block, line) = arena.take();
                (std::ptr::from_ref(arena), block, line)
            })
            .unwrap_or_else(|_| {
                // The thread-local is gone (the thread is exiting): a block for this one
                // event, its thread's count and the lines past the slot's given back at once.
                let block = Block::allocate();
                // SAFETY: we own the thread count and the unused lines' counts.
                unsafe { Block::release(block, LINES + 1 - RESERVED) };
                (std::ptr::null(), block, 0)
            });
        // SAFETY: `line + RESERVED <= LINES`; the slot is unused and nobody else can reach it
        // yet. Each part is written on its own: a whole `Slot` written at once would be
        // assembled on the stack and copied, inline field storage included.
        let slot = unsafe {
            let slot = Block::slot(block, line);
            let header = addr_of_mut!((*slot).header);
            addr_of_mut!((*header).refs).write(AtomicU32::new(1));
            addr_of_mut!((*header).line).write(line as u8);
            // Until `fill` has returned: a panic in it drops the fields written so far and
            // gives back every line the slot was given.
            addr_of_mut!((*header).lines).write(RESERVED as u8);
            addr_of_mut!((*header).plain).write(false);
            addr_of_mut!((*header).len).write(0);
            addr_of_mut!((*header).time).write(time.into());
            addr_of_mut!((*header).origin).write(origin);
            NonNull::new_unchecked(slot)
        };
        // From here the slot is a complete event (with no fields): if `fill` panics (an
        // iterator's `next`, an allocation), the writer counts what it wrote and dropping
        // `event` drops that and gives the slot back.
        let event = Self { slot };
        // SAFETY: the only reference to this slot is `event`, which nobody else has seen; the
        // writer is dropped (its fields counted) when `fill` returns.
        fill(unsafe { InlineWriter::into_slot(slot.as_ptr()) });
        // SAFETY: as above; the fields (their count and `plain` with them) are written and
        // will not change. `arena`, if not null, is this thread's, alive (see above).
        unsafe {
            if !arena.is_null() {
                let header = addr_of_mut!((*slot.as_ptr()).header);
                let needed = lines_for(*addr_of!((*header).len));
                let lines = (*arena).keep(block, line, needed);
                addr_of_mut!((*header).lines).write(lines as u8);
            }
        }
        event
    }

    /// [`build`](Self::build), stamped now once `fill` has written the fields: a field
    /// expression that gives (a nested `give!`) then gives an event stamped before this one,
    /// as it is delivered before it, so a thread's events never go back in time.
    #[inline(always)]
    pub(crate) fn build_stamped_after(
        origin: Option<&'static Origin>,
        fill: impl FnOnce(InlineWriter<'_>),
    ) -> Self {
        let event = Self::build(Stamp::UNSET, origin, fill);
        // SAFETY: `event` is the only reference to its slot, and nobody has seen it yet.
        unsafe { addr_of_mut!((*event.slot.as_ptr()).header.time).write(Stamp::now()) };
        event
    }

    /// The slot's header (only: the lines past the slot's own may be another slot's).
    #[inline(always)]
    fn header(&self) -> &Header {
        // SAFETY: this reference keeps the slot alive; nobody writes its header any more
        // (but for the atomic count).
        unsafe { &*addr_of!((*self.slot.as_ptr()).header) }
    }

    /// The fields, in the order they were given.
    #[inline]
    pub(crate) fn fields(&self) -> &[Field] {
        // SAFETY: this reference keeps the slot alive; its fields are written.
        unsafe { Slot::fields(self.slot.as_ptr()) }
    }

    #[inline]
    pub(crate) fn time(&self) -> Timestamp {
        self.header().time.timestamp()
    }

    #[inline]
    pub(crate) fn origin(&self) -> Option<&'static Origin> {
        self.header().origin
    }

    /// Whether both refer to the same event.
    pub(crate) fn ptr_eq(&self, other: &EventRef) -> bool {
        self.slot == other.slot
    }

    /// Asks the processor to bring this event's first line — its header, with the count, and
    /// its first field — into this core's cache ahead of use, with a write hint (the next
    /// clone or drop is an atomic on it). A hint: no effect on what any access returns. The
    /// second line is left to be read on demand: prefetched too, it doubled the memory a
    /// reader that drops events unread pulls over (on one CPU, 20–26 → 28–60 ns of the
    /// reader's CPU per event). On the x86-64 baseline the crate compiles for (no `prfchw`),
    /// LLVM lowers the write hint to a read prefetch (`prefetcht0`); a real `prefetchw`, tried
    /// on 2026-11-28, made no measurable difference to a reader by value in either placement
    /// of the VM's two CPUs.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
            // SAFETY: prefetching is a hint that never faults or changes memory; the address
            // is this live slot's.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(self.slot.as_ptr().cast::<i8>()) };
        }
    }
}

impl Clone for EventRef {
    #[inline]
    fn clone(&self) -> Self {
        // Relaxed, as `Arc::clone`: a new reference comes from an existing one.
        if self.header().refs.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
            std::process::abort();
        }
        Self { slot: self.slot }
    }
}

impl Drop for EventRef {
    #[inline]
    fn drop(&mut self) {
        if let Some((block, lines)) = self.drop_slot() {
            // SAFETY: `drop_slot` gave this slot's counts in `block` to the caller.
            unsafe { Block::release(block, lines) };
        }
    }
}

impl EventRef {
    /// Drops this reference; if it was the last, drops the fields and returns the block
    /// whose counts the slot held and how many (its lines), for the caller to give back
    /// ([`Block::release`]). The caller must then not use `self` again (it is dropped or
    /// forgotten after).
    #[inline]
    fn drop_slot(&mut self) -> Option<(NonNull<Block>, usize)> {
        let refs = &self.header().refs;
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
        // counts in its block go to the caller.
        unsafe {
            let header = addr_of!((*slot).header);
            let lines = usize::from((*header).lines);
            if !(*header).plain {
                Slot::drop_fields(slot);
            }
            Some((Block::of(slot), lines))
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
        let Some((block, lines)) = event.drop_slot() else {
            return;
        };
        match &mut self.held {
            Some((held, count)) if *held == block => *count += lines,
            _ => {
                self.give_back();
                self.held = Some((block, lines));
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

    /// The cache lines (of a slot's four) that a slot's header (its fields' count in it) and
    /// its first `count` inline fields occupy.
    fn lines_of_an_event_with(count: usize) -> std::collections::BTreeSet<usize> {
        let at = std::mem::offset_of!(Slot, fields);
        let header = std::mem::offset_of!(Slot, header);
        let header_bytes = header..header + std::mem::size_of::<Header>();
        let field_bytes = at..(at + count * std::mem::size_of::<Field>());
        header_bytes
            .chain(field_bytes)
            .map(|byte| byte / 64)
            .collect()
    }

    #[test]
    fn an_event_of_two_fields_is_on_two_lines() {
        // What the slot's layout is for: one or two fields on two lines, three on three.
        assert_eq!(lines_of_an_event_with(1), [0, 1].into());
        assert_eq!(lines_of_an_event_with(2), [0, 1].into());
        assert_eq!(lines_of_an_event_with(3), [0, 1, 2].into());
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
            event.header().plain
        };
        let scalar = |key: &'static str| (Key::from_static(key), Value::F64(0.5));
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
            Key::from("loss".to_owned()),
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
                (0..LINES + 5)
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
        assert_eq!(drops.load(Ordering::SeqCst), LINES + 5);
    }

    /// The live count of the block `event`'s slot is in.
    fn live_count(event: &EventRef) -> usize {
        // SAFETY: `event` keeps its slot, and so its block, alive; the count is atomic.
        unsafe { (*addr_of!((*block_of(event).as_ptr()).live)).load(Ordering::SeqCst) }
    }

    /// The block `event`'s slot is in.
    fn block_of(event: &EventRef) -> NonNull<Block> {
        // SAFETY: `event` keeps its slot alive.
        unsafe { Block::of(event.slot.as_ptr()) }
    }

    #[test]
    fn a_slot_keeps_the_lines_its_fields_take_and_a_block_fills_up() {
        let scalar = |key: &'static str| (Key::from_static(key), Value::F64(0.5));
        let sizes: Vec<(usize, usize)> = std::thread::spawn(move || {
            (0..=INLINE + 1)
                .map(|count| {
                    let first = EventRef::from_iter(
                        Timestamp::from_nanos(1),
                        None,
                        (0..count).map(|_| scalar("x")),
                    );
                    let next = EventRef::new(Timestamp::from_nanos(2), None, Fields::new());
                    // SAFETY: both are alive, in the thread's block, one after the other.
                    let apart = unsafe { next.slot.as_ptr().byte_offset_from(first.slot.as_ptr()) };
                    (count, apart as usize / LINE)
                })
                .collect()
        })
        .join()
        .unwrap();
        // Counts 0–2: header and fields on the first two lines (one for none); then a line
        // more per field; past the inline capacity the fields' `Vec` sits in the first line.
        assert_eq!(sizes, [(0, 1), (1, 2), (2, 2), (3, 3), (4, 4), (5, 1)]);
        // Two-line events until fewer lines than a slot's reservation are left.
        let per_block = std::thread::spawn(move || {
            let events: Vec<EventRef> = (0..LINES)
                .map(|_| {
                    EventRef::from_iter(Timestamp::from_nanos(1), None, [scalar("x")].into_iter())
                })
                .collect();
            let first = block_of(&events[0]);
            events.iter().take_while(|e| block_of(e) == first).count()
        })
        .join()
        .unwrap();
        assert_eq!(per_block, (LINES - RESERVED) / 2 + 1);
    }

    #[test]
    fn a_slot_written_while_a_field_expression_gives_keeps_its_whole_reservation() {
        std::thread::spawn(|| {
            let mut inner = None;
            let outer = EventRef::build(Stamp::UNSET, None, |mut writer| {
                writer.push(Key::from_static("a"), Value::U64(1));
                inner = Some(EventRef::new(Timestamp::from_nanos(1), None, Fields::new()));
                writer.push(Key::from_static("b"), Value::U64(2));
            });
            let inner = inner.unwrap();
            let after = EventRef::new(Timestamp::from_nanos(2), None, Fields::new());
            // SAFETY: all three are alive, in the thread's block.
            let (to_inner, to_after) = unsafe {
                (
                    inner.slot.as_ptr().byte_offset_from(outer.slot.as_ptr()) as usize / LINE,
                    after.slot.as_ptr().byte_offset_from(inner.slot.as_ptr()) as usize / LINE,
                )
            };
            assert_eq!((to_inner, to_after), (RESERVED, 1));
            assert_eq!(outer.header().lines as usize, RESERVED);
            assert_eq!(outer.fields().len(), 2);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_drop_batch_drops_fields_at_once_and_gives_each_block_its_counts_back() {
        let drops = Arc::new(AtomicUsize::new(0));
        // Two blocks' worth of two-line events, made on a thread that is gone: each block's
        // count is then the lines of its live slots only.
        let events: Vec<EventRef> = std::thread::spawn({
            let drops = drops.clone();
            move || {
                (0..2 * ((LINES - RESERVED) / 2 + 1))
                    .map(|i| {
                        EventRef::new(Timestamp::from_nanos(i as u64), None, fields_with(&drops))
                    })
                    .collect()
            }
        })
        .join()
        .unwrap();
        let total = events.len();
        let first = block_of(&events[0]);
        let per_block = events.iter().take_while(|e| block_of(e) == first).count();
        assert!(per_block > 2 && block_of(&events[per_block + 3]) != first);
        let kept = [events[per_block - 1].clone(), events[per_block + 3].clone()];
        let mut batch = DropBatch::new();
        for (i, event) in events.into_iter().enumerate() {
            batch.drop(event);
            // Fields go with their last reference, not with the batch.
            let kept_so_far = usize::from(i >= per_block - 1) + usize::from(i >= per_block + 3);
            assert_eq!(drops.load(Ordering::SeqCst), i + 1 - kept_so_far);
        }
        // The first block's counts were given back when the second block's events came; the
        // second's are held until the batch goes (two lines an event).
        assert_eq!(live_count(&kept[0]), 2);
        assert_eq!(total, 2 * per_block, "two full blocks");
        assert_eq!(live_count(&kept[1]), 2 * per_block);
        drop(batch);
        assert_eq!(live_count(&kept[1]), 2);
        drop(kept);
        assert_eq!(drops.load(Ordering::SeqCst), total);
    }

    #[test]
    fn fields_written_in_place_are_read_back_in_order() {
        // Every count the in-place write takes (one field, several, the inline capacity) and
        // past it (the slot's fields moved to the heap), so that Miri checks each write
        // against the ones before it.
        for count in 1..=INLINE + 3 {
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
            assert_eq!(event.header().len == SPILLED, count > INLINE);
        }
    }

    #[test]
    fn fields_moved_to_the_heap_are_each_dropped_once_with_their_event() {
        let drops = Arc::new(AtomicUsize::new(0));
        for count in [INLINE, INLINE + 1, 3 * INLINE] {
            drops.store(0, Ordering::SeqCst);
            let fields = (0..count).map(|i| {
                let key = Key::from(format!("k{i}"));
                (key, Value::lazy(Counted(drops.clone())))
            });
            let event = EventRef::from_iter(Timestamp::from_nanos(4), None, fields);
            let clone = event.clone();
            drop(event);
            assert_eq!(clone.fields().len(), count);
            assert_eq!(clone.fields()[count - 1].0, format!("k{}", count - 1));
            assert_eq!(drops.load(Ordering::SeqCst), 0);
            drop(clone);
            assert_eq!(drops.load(Ordering::SeqCst), count, "{count} fields");
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
                Key::from_static(["a", "b", "c", "d", "e", "f"][i]),
                value,
            );
        }
        assert!(fields.spilled());
        let buffer = fields.as_ptr();
        let event = EventRef::new(Timestamp::from_nanos(5), None, fields);
        assert_eq!(
            event.fields().as_ptr(),
            buffer,
            "the list's heap buffer kept, not copied"
        );
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
