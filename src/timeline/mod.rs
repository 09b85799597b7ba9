//! Timelines in libpvti's vocabulary: trace [`Channel`]s, [`tracepoint!`](crate::tracepoint)s
//! (scoped spans), [`instant!`](crate::instant) events and [`Graph`]s of counter [`Series`].
//!
//! They are ordinary events (keys in [`vocab::keys`](crate::vocab::keys), views in
//! [`vocab`](crate::vocab)), so they can be logged, replayed, filtered and charted like any
//! other; the timeline sink of `giving-instruments` writes them as a Perfetto trace. Each event
//! records the thread that gave it ([`ThreadInfo`]), so spans land on the thread they ran on.
//! With nobody listening, a tracepoint costs what `give!` costs: one relaxed load and a branch.
//!
//! ```
//! use giving::prelude::*;
//! use giving::timeline::{Channel, Graph};
//! use giving::vocab::{SpanEvent, SpanPhase};
//! use giving::{given, instant, tracepoint};
//!
//! let gv = given();
//! let events = gv.stream();
//! let app = Channel::new("MNIST Application");
//! let loss = Graph::new("Loss").series("Training Loss");
//! for epoch in 0..2 {
//!     let _epoch = tracepoint!(app, "Epoch {epoch}");
//!     instant!(app, "Epoch {epoch} begin");
//!     loss.add(1.0 / f64::from(epoch + 1));
//! }
//! gv.finish().unwrap();
//! let events: Vec<_> = futures::executor::block_on(events.collect());
//! let begin = SpanEvent::of(&events[0]).unwrap();
//! assert_eq!((begin.phase, begin.name, begin.channel), (SpanPhase::Begin, "Epoch 0", Some("MNIST Application")));
//! assert_eq!(events.len(), 8); // begin, instant, sample, end — twice
//! ```

use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::event::Origin;
use crate::give::give_with;
use crate::vocab::keys;
use crate::{Key, Value};

mod channels;
mod heatmap;
mod labeled;

use channels::ChannelState;
pub use channels::{disable_channel, enable_channel, enable_only_channels, list_channels};
pub use heatmap::Heatmap;

/// Span ids: unique in the process, so a begin and its end pair up in any stream.
static NEXT_SPAN: AtomicU64 = AtomicU64::new(1);

static TRACEPOINT_ORIGIN: Origin = Origin {
    file: file!(),
    line: line!(),
    module: module_path!(),
};

/// Whether a scope is open anywhere: the check `give!` makes before building an event, for
/// bridges (the `tracing` layer) that would otherwise build costly arguments for nobody.
///
/// ```
/// assert!(!giving::timeline::is_listening());
/// let gv = giving::given();
/// assert!(giving::timeline::is_listening());
/// gv.finish().unwrap();
/// ```
#[inline]
pub fn is_listening() -> bool {
    crate::give::is_listening()
}

/// The thread an event was given on: its id and name, as the timeline shows them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ThreadInfo {
    /// The operating system's thread id where it can be read (Linux: the `tid` that `top -H`
    /// and Perfetto show; the main thread's equals the process id), else a number unique in
    /// the process.
    pub tid: u64,
    /// The thread's name (`"main"` for the main thread), or `thread-<tid>` for an unnamed one.
    pub name: Arc<str>,
}

impl ThreadInfo {
    /// The calling thread's (read once per thread, then cached).
    ///
    /// ```
    /// let here = giving::timeline::ThreadInfo::current();
    /// let there = std::thread::spawn(giving::timeline::ThreadInfo::current).join().unwrap();
    /// assert_ne!(here.tid, there.tid);
    /// ```
    pub fn current() -> ThreadInfo {
        thread_local! {
            static CURRENT: ThreadInfo = ThreadInfo::read();
        }
        CURRENT.with(Clone::clone)
    }

    fn read() -> ThreadInfo {
        let tid = os_tid().unwrap_or_else(|| {
            // Far above any real tid, so the two kinds never collide.
            static NEXT: AtomicU64 = AtomicU64::new(1 << 40);
            NEXT.fetch_add(1, Ordering::Relaxed)
        });
        let name = match std::thread::current().name() {
            Some(name) => Arc::from(name),
            None => Arc::from(format!("thread-{tid}")),
        };
        ThreadInfo { tid, name }
    }

    /// The fields that say which thread gave an event.
    fn fields(&self) -> [(Key, Value); 2] {
        [
            (Key::from_static(keys::TID), Value::U64(self.tid)),
            (
                Key::from_static(keys::THREAD_NAME),
                Value::Str(self.name.clone()),
            ),
        ]
    }
}

/// The kernel's id of the calling thread: `/proc/thread-self` links to `<pid>/task/<tid>`.
/// Read once per thread (std has no `gettid`, and the core takes no libc dependency for it).
fn os_tid() -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// A trace channel: a named track of spans and instants on each thread that uses it
/// (libpvti's `createTraceChannel`). Cheap to clone; make one per part of an application.
///
/// [`Channel::thread`] is the thread's own track: spans on it nest with the slices the
/// timeline draws for `iterate` (epochs, steps).
///
/// A named channel can be switched off and on at run time, by name, as libpvti's
/// (`disable_channel`, [`enable_channel`], [`list_channels`], [`enable_only_channels`]): a
/// disabled channel's tracepoints and instants give nothing. Every `Channel` of one name
/// shares its switch.
///
/// ```
/// use giving::timeline::Channel;
///
/// let app = Channel::new("MNIST Application");
/// let answer = app.trace("compute", || 6 * 7);
/// assert_eq!(answer, 42);
/// assert_eq!(app.name(), "MNIST Application");
/// ```
#[derive(Debug, Clone)]
pub struct Channel {
    /// `None`: the thread's own track.
    state: Option<Arc<ChannelState>>,
}

/// Channels are equal when their names are (they share one switch).
impl PartialEq for Channel {
    fn eq(&self, other: &Channel) -> bool {
        self.state.is_some() == other.state.is_some() && self.name() == other.name()
    }
}

impl Eq for Channel {}

impl std::hash::Hash for Channel {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.state.is_some().hash(state);
        self.name().hash(state);
    }
}

impl Channel {
    /// A channel named `name` (libpvti's `createTraceChannel`): enabled unless it was
    /// disabled by name, or left out of [`enable_only_channels`]'s list.
    pub fn new(name: &str) -> Channel {
        Channel {
            state: Some(channels::state(name)),
        }
    }

    /// The thread's own track (no channel): spans nest with epochs and steps. Always enabled.
    pub fn thread() -> Channel {
        Channel { state: None }
    }

    /// The channel's name (`""` for [`Channel::thread`]).
    pub fn name(&self) -> &str {
        self.state.as_ref().map_or("", |state| &state.name)
    }

    /// Whether its tracepoints and instants are given (always, for [`Channel::thread`]).
    ///
    /// ```
    /// use giving::timeline::Channel;
    ///
    /// let io = Channel::new("doc is_enabled io");
    /// io.disable();
    /// assert!(!Channel::new("doc is_enabled io").is_enabled()); // one switch per name
    /// io.enable();
    /// assert!(io.is_enabled() && Channel::thread().is_enabled());
    /// ```
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.state.as_ref().is_none_or(|state| state.is_enabled())
    }

    /// Enables this channel (every `Channel` of its name); see [`enable_channel`].
    pub fn enable(&self) {
        enable_channel(self.name());
    }

    /// Disables this channel (every `Channel` of its name); see [`disable_channel`]. Nothing
    /// for [`Channel::thread`], which cannot be switched off.
    pub fn disable(&self) {
        if self.state.is_some() {
            disable_channel(self.name());
        }
    }

    /// A span named `name` on this channel, ended when the guard drops (see
    /// [`tracepoint!`](crate::tracepoint), which formats the name only when someone
    /// listens).
    pub fn tracepoint(&self, name: &str) -> Tracepoint {
        if !is_listening() || !self.is_enabled() {
            return Tracepoint::disabled();
        }
        Tracepoint::begin_at(&TRACEPOINT_ORIGIN, self, Arc::from(name))
    }

    /// A span named `name` with arguments (shown with the slice; given under
    /// [`ARGS`](crate::vocab::keys::ARGS) in the begin event): for bridges such as the
    /// `tracing` layer, whose spans carry fields.
    ///
    /// ```
    /// use giving::timeline::Channel;
    /// use giving::Value;
    ///
    /// let args = [("layer".to_owned(), Value::from(3u64))].into_iter().collect();
    /// let _span = Channel::thread().tracepoint_with("forward", args);
    /// ```
    pub fn tracepoint_with(&self, name: &str, args: BTreeMap<String, Value>) -> Tracepoint {
        if !is_listening() || !self.is_enabled() {
            return Tracepoint::disabled();
        }
        Tracepoint::begin(
            &TRACEPOINT_ORIGIN,
            self,
            Arc::from(name),
            Some(Value::Map(args)),
            false,
        )
    }

    /// Runs `f` inside a span named `name`, and returns what it returns (the span ends also
    /// if `f` panics).
    pub fn trace<R>(&self, name: &str, f: impl FnOnce() -> R) -> R {
        let _span = self.tracepoint(name);
        f()
    }

    /// Gives an instant event named `name` on this channel (see [`instant!`](crate::instant)).
    pub fn instant(&self, name: &str) {
        if is_listening() && self.is_enabled() {
            instant_at(&TRACEPOINT_ORIGIN, self, Arc::from(name));
        }
    }

    /// Gives an instant event named `name` with more fields, as keys of the event itself (so
    /// a numeric field is charted like any numeric key): for bridges such as the `tracing`
    /// layer.
    ///
    /// ```
    /// use giving::timeline::Channel;
    /// use giving::Value;
    ///
    /// Channel::new("events").instant_with("checkpoint", [("loss".to_owned(), Value::from(0.5))]);
    /// ```
    pub fn instant_with(&self, name: &str, fields: impl IntoIterator<Item = (String, Value)>) {
        if is_listening() && self.is_enabled() {
            give_with(&TRACEPOINT_ORIGIN, || {
                let mut all = instant_fields(self, Arc::from(name));
                all.extend(fields.into_iter().map(|(k, v)| (Key::from(k), v)));
                all
            });
        }
    }

    fn fields(&self, fields: &mut crate::event::Fields) {
        if let Some(state) = &self.state {
            fields.push((
                Key::from_static(keys::CHANNEL),
                Value::Str(state.name.clone()),
            ));
        }
    }
}

/// A span on a [`Channel`], open until this guard drops or [`end`](Tracepoint::end)s it.
/// Made by [`tracepoint!`](crate::tracepoint) or [`Channel::tracepoint`]; nestable.
///
/// Gives `{span_begin: name, span_id, channel?, tid, thread_name}` when made and
/// `{span_end: name, span_id, channel?, tid, thread_name}` when it ends. When nobody listened
/// at its start it gives nothing, even if someone listens by its end.
#[must_use = "a tracepoint ends when dropped: bind it (`let _t = tracepoint!(…)`)"]
#[derive(Debug)]
pub struct Tracepoint {
    /// Boxed: with nobody listening the guard is one null pointer, set and tested inline.
    /// `ManuallyDrop`: the field then has no drop glue, which the compiler would call out of
    /// line after every guard even when it holds nothing; `drop` takes it out itself.
    open: Option<ManuallyDrop<Box<Open>>>,
}

#[derive(Debug)]
struct Open {
    origin: &'static Origin,
    name: Arc<str>,
    id: u64,
    channel: Channel,
    thread: ThreadInfo,
    /// Begun by [`Channel::begin`]: paired by label, drawn on the label's own track.
    by_label: bool,
}

impl Tracepoint {
    /// A tracepoint that gives nothing (nobody was listening).
    #[doc(hidden)]
    #[inline(always)]
    pub fn disabled() -> Tracepoint {
        Tracepoint { open: None }
    }

    /// Gives the begin event now (the macro's slow path), unless the channel is disabled.
    #[doc(hidden)]
    pub fn begin_at(origin: &'static Origin, channel: &Channel, name: Arc<str>) -> Tracepoint {
        if !channel.is_enabled() {
            return Tracepoint::disabled();
        }
        Tracepoint::begin(origin, channel, name, None, false)
    }

    /// Gives the begin event (with `args`, if any) and returns the guard that gives the end.
    fn begin(
        origin: &'static Origin,
        channel: &Channel,
        name: Arc<str>,
        args: Option<Value>,
        by_label: bool,
    ) -> Tracepoint {
        let open = Open {
            origin,
            name,
            id: NEXT_SPAN.fetch_add(1, Ordering::Relaxed),
            channel: channel.clone(),
            thread: ThreadInfo::current(),
            by_label,
        };
        open.give(keys::SPAN_BEGIN, args);
        Tracepoint {
            open: Some(ManuallyDrop::new(Box::new(open))),
        }
    }

    /// The span's id (shared by its begin and end events), `None` when it gives nothing.
    pub fn id(&self) -> Option<u64> {
        self.open.as_ref().map(|open| open.id)
    }

    /// Ends the span now (the same as dropping the guard).
    pub fn end(self) {}
}

impl Open {
    fn give(&self, phase: &'static str, args: Option<Value>) {
        give_with(self.origin, || {
            let mut fields = crate::event::Fields::new();
            fields.push((Key::from_static(phase), Value::Str(self.name.clone())));
            fields.push((Key::from_static(keys::SPAN_ID), Value::U64(self.id)));
            self.channel.fields(&mut fields);
            fields.extend(self.thread.fields());
            if let Some(args) = args {
                fields.push((Key::from_static(keys::ARGS), args));
            }
            if self.by_label {
                fields.push((Key::from_static(keys::BY_LABEL), Value::Bool(true)));
            }
            fields
        });
    }
}

impl Drop for Tracepoint {
    #[inline(always)]
    fn drop(&mut self) {
        // The common case (nobody listened) stays inline; giving the end does not.
        if self.open.is_some() {
            self.end_now();
        }
    }
}

impl Tracepoint {
    #[inline(never)]
    fn end_now(&mut self) {
        if let Some(open) = self.open.take() {
            ManuallyDrop::into_inner(open).give(keys::SPAN_END, None);
        }
    }
}

/// Gives an instant event (the macro's slow path), unless the channel is disabled.
#[doc(hidden)]
pub fn instant_at(origin: &'static Origin, channel: &Channel, name: Arc<str>) {
    if channel.is_enabled() {
        give_with(origin, || instant_fields(channel, name));
    }
}

fn instant_fields(channel: &Channel, name: Arc<str>) -> crate::event::Fields {
    let mut fields = crate::event::Fields::new();
    fields.push((Key::from_static(keys::INSTANT), Value::Str(name)));
    channel.fields(&mut fields);
    fields.extend(ThreadInfo::current().fields());
    fields
}

/// Opens a span on a channel, named with `format!` syntax, ended when the returned
/// [`Tracepoint`] guard drops (libpvti's `Tracepoint`). The name is formatted only when
/// someone listens; otherwise this costs what `give!` costs.
///
/// ```
/// use giving::timeline::Channel;
/// use giving::tracepoint;
///
/// let app = Channel::new("app");
/// for epoch in 0..3 {
///     let _epoch = tracepoint!(app, "Epoch {epoch}");
///     let _inner = tracepoint!(app, "forward"); // nested
/// }
/// ```
#[macro_export]
macro_rules! tracepoint {
    ($channel:expr, $($name:tt)+) => {
        if $crate::__private::is_listening() {
            $crate::timeline::Tracepoint::begin_at(
                $crate::__origin!(),
                &$channel,
                ::std::sync::Arc::from(::std::format!($($name)+)),
            )
        } else {
            $crate::timeline::Tracepoint::disabled()
        }
    };
}

/// Gives an instant event on a channel, named with `format!` syntax (libpvti's
/// `Tracepoint.event`): for errors, stops, learning-rate changes. The name is formatted only
/// when someone listens.
///
/// ```
/// use giving::timeline::Channel;
/// use giving::instant;
///
/// let events = Channel::new("Instant Events");
/// for epoch in 0..3 {
///     instant!(events, "Epoch {epoch} begin");
/// }
/// ```
#[macro_export]
macro_rules! instant {
    ($channel:expr, $($name:tt)+) => {
        if $crate::__private::is_listening() {
            $crate::timeline::instant_at(
                $crate::__origin!(),
                &$channel,
                ::std::sync::Arc::from(::std::format!($($name)+)),
            );
        }
    };
}

/// A graph: a group of counter [`Series`] drawn together (libpvti's `Graph`).
///
/// ```
/// use giving::timeline::Graph;
///
/// let loss = Graph::new("Loss");
/// let (training, validation) = (loss.series("Training Loss"), loss.series("Validation Loss"));
/// training.add(0.7);
/// validation.add(0.9);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Graph {
    name: Arc<str>,
    unit: Option<Arc<str>>,
}

impl Graph {
    /// A graph named `name`, its values without a unit.
    pub fn new(name: &str) -> Graph {
        Graph {
            name: Arc::from(name),
            unit: None,
        }
    }

    /// A graph named `name` whose values are in `unit` (libpvti's `Graph(name, unit)`): the
    /// viewer labels its counter tracks' values with it (Perfetto's
    /// `CounterDescriptor.unit_name`). An empty unit is no unit.
    ///
    /// ```
    /// use giving::timeline::Graph;
    ///
    /// let memory = Graph::with_unit("Memory", "MB");
    /// assert_eq!(memory.unit(), Some("MB"));
    /// memory.series("host").add(512.0);
    /// ```
    pub fn with_unit(name: &str, unit: &str) -> Graph {
        Graph {
            name: Arc::from(name),
            unit: (!unit.is_empty()).then(|| Arc::from(unit)),
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The unit of its values, if it has one.
    pub fn unit(&self) -> Option<&str> {
        self.unit.as_deref()
    }

    /// A series of this graph: a counter track named `name` in the graph's group.
    pub fn series(&self, name: &str) -> Series {
        Series {
            graph: self.name.clone(),
            name: Arc::from(name),
            unit: self.unit.clone(),
        }
    }
}

/// One series of a [`Graph`]: each [`add`](Series::add) is a sample on its counter track,
/// given as `{graph, series, value, unit?}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Series {
    graph: Arc<str>,
    name: Arc<str>,
    unit: Option<Arc<str>>,
}

impl Series {
    /// The series' name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The graph it belongs to.
    pub fn graph(&self) -> &str {
        &self.graph
    }

    /// Adds a sample now (nothing when nobody listens).
    pub fn add(&self, value: f64) {
        if is_listening() {
            give_with(&TRACEPOINT_ORIGIN, || {
                let mut fields = crate::event::Fields::new();
                fields.push((
                    Key::from_static(keys::GRAPH),
                    Value::Str(self.graph.clone()),
                ));
                fields.push((
                    Key::from_static(keys::SERIES),
                    Value::Str(self.name.clone()),
                ));
                fields.push((Key::from_static(keys::VALUE), Value::F64(value)));
                if let Some(unit) = &self.unit {
                    fields.push((Key::from_static(keys::UNIT), Value::Str(unit.clone())));
                }
                fields
            });
        }
    }
}
