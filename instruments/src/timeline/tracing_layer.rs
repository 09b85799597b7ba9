//! [`GivingLayer`]: `tracing` spans and events as giving timeline events, on the thread they
//! ran on — so spans from any crate (burn's `tracing` feature: tensor ops, autotuning) share
//! the timeline of the training loop.

use std::cell::RefCell;
use std::collections::BTreeMap;

use giving::Value;
use giving::timeline::{Channel, Tracepoint};
use tracing::field::{Field, Visit};
use tracing::span;
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

thread_local! {
    /// The spans entered on this thread and not yet exited, innermost last: each `tracing`
    /// enter is one slice, ended by its exit on the same thread.
    static ENTERED: RefCell<Vec<(span::Id, Tracepoint)>> = const { RefCell::new(Vec::new()) };
}

/// A `tracing-subscriber` [`Layer`] that gives each entered `tracing` span as a
/// [tracepoint](giving::tracepoint) (its fields as the slice's arguments) and each `tracing`
/// event as an [instant](giving::instant) named by its message, with its fields as keys of
/// the event — so a numeric field (`loss = 0.5`) is charted as a counter. Nothing is given
/// while nobody listens.
///
/// Spans go on the thread's own track by default, nested with the loop's epochs and steps;
/// [`GivingLayer::channel`] puts them on a channel instead.
///
/// ```
/// use giving::prelude::*;
/// use giving::vocab::{SpanEvent, SpanPhase};
/// use giving_instruments::timeline::GivingLayer;
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let subscriber = tracing_subscriber::registry().with(GivingLayer::new());
/// let gv = giving::given();
/// let events = gv.stream();
/// tracing::subscriber::with_default(subscriber, || {
///     let _outer = tracing::info_span!("forward", layer = 3).entered();
///     tracing::info!(loss = 0.5, "computed");
/// });
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(events.collect());
/// let begin = SpanEvent::of(&events[0]).unwrap();
/// assert_eq!((begin.phase, begin.name), (SpanPhase::Begin, "forward"));
/// assert_eq!(events[1].get_as::<f64>("loss").unwrap(), 0.5);
/// assert_eq!(SpanEvent::of(&events[2]).unwrap().phase, SpanPhase::End);
/// ```
#[derive(Debug, Clone, Default)]
pub struct GivingLayer {
    channel: Option<Channel>,
}

impl GivingLayer {
    /// A layer that puts spans and events on each thread's own track.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts spans and events on channel `name` (a track of its own on each thread).
    pub fn channel(mut self, name: &str) -> Self {
        self.channel = Some(Channel::new(name));
        self
    }

    fn target(&self) -> Channel {
        self.channel.clone().unwrap_or_else(Channel::thread)
    }
}

/// A span's fields, kept in its extensions until it is entered.
struct Fields(BTreeMap<String, Value>);

impl<S> Layer<S> for GivingLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let mut fields = Collect::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Fields(fields.fields));
        }
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut extensions = span.extensions_mut();
            if let Some(Fields(fields)) = extensions.get_mut::<Fields>() {
                let mut more = Collect::default();
                values.record(&mut more);
                fields.extend(more.fields);
            }
        }
    }

    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        if !giving::timeline::is_listening() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let args = span
            .extensions()
            .get::<Fields>()
            .map(|Fields(fields)| fields.clone())
            .unwrap_or_default();
        let tracepoint = self.target().tracepoint_with(span.name(), args);
        ENTERED.with(|entered| entered.borrow_mut().push((id.clone(), tracepoint)));
    }

    fn on_exit(&self, id: &span::Id, _ctx: Context<'_, S>) {
        // The innermost entry of this span on this thread; dropping it gives the end. Taken
        // out of the stack before it drops, so a scope's pipeline giving is never borrowed.
        let exited = ENTERED.with(|entered| {
            let mut entered = entered.borrow_mut();
            let at = entered.iter().rposition(|(entered, _)| entered == id)?;
            Some(entered.remove(at))
        });
        drop(exited);
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !giving::timeline::is_listening() {
            return;
        }
        let mut fields = Collect::default();
        event.record(&mut fields);
        let name = fields
            .message
            .take()
            .unwrap_or_else(|| event.metadata().name().to_owned());
        self.target().instant_with(&name, fields.fields);
    }
}

/// Collects a span's or event's fields as giving values; an event's `message` apart.
#[derive(Default)]
struct Collect {
    fields: BTreeMap<String, Value>,
    message: Option<String>,
}

impl Collect {
    fn put(&mut self, field: &Field, value: Value) {
        self.fields.insert(field.name().to_owned(), value);
    }
}

impl Visit for Collect {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::F64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::U64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = Some(value.to_owned());
        } else {
            self.put(field, Value::from(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message = Some(text);
        } else {
            self.put(field, Value::from(text.as_str()));
        }
    }
}
