//! Which public types of the core can cross threads (Send), be shared (Sync) and be moved
//! after pinning (Unpin), as futures and ratatui check theirs: a change that loses one of
//! these breaks users' pipelines, so it must fail here first.

use giving::keyed::{
    Affix, AsKey, Augment, CollectBetween, DisplayEvents, Format, GroupWrap, KFilter, KFlatten,
    KGroup, KGroupBy, KMap, KMerge, Keep, KeyOf, Keyed, Sole, Tag, TryKeyOf, WMap, Where, WhereAny,
    WrapGroup,
};
use giving::timeline::{Channel, Graph, Series, ThreadInfo, Tracepoint};
use giving::vocab::{
    CounterSample, InstantEvent, ProgressEvent, RateEvent, SpanEvent, SpanPhase, StepEvent,
};
use giving::*;

fn send<T: Send>() {}
fn sync<T: Sync>() {}
fn unpin<T: Unpin>() {}
fn all<T: Send + Sync + Unpin>() {}

type Events = EventStream;
type Ready = std::future::Ready<()>;

#[test]
fn values_and_events() {
    all::<Value>();
    all::<Event>();
    all::<EventBuilder>();
    all::<Key>();
    all::<Origin>();
    all::<Timestamp>();
    all::<ValueError>();
    all::<TypeMismatch>();
    all::<LazyValue>();
    all::<ResolveError>();
    all::<Template>();
    all::<TemplateError>();
    all::<WrapStep>();
    all::<WrapMark<'static>>();
    all::<StepEvent<'static>>();
    all::<ProgressEvent<'static>>();
    all::<RateEvent<'static>>();
    all::<SpanEvent<'static>>();
    all::<SpanPhase>();
    all::<InstantEvent<'static>>();
    all::<CounterSample<'static>>();
    all::<SpecialKey>();
}

#[test]
fn scopes_streams_and_pipelines() {
    all::<Given>();
    all::<GivenHandle>();
    all::<Giver>();
    all::<StopToken>();
    all::<Delivery>();
    all::<EventStream>();
    all::<Lag>();
    all::<Pipeline<u64>>();
    all::<PipelineError>();
    all::<FinishError>();
    all::<InGiven<Ready>>();
    // A guard that keeps the thread in a scope must stay on that thread.
    unpin::<Entered>();
    // Context guards stay on their thread, like `Entered`.
    unpin::<Inherited>();
    // `wrap!`'s guard gives its `end` event from wherever it is dropped.
    all::<Wrap>();
}

#[test]
fn iterate_is_send_when_its_parts_are() {
    // Its builder takes non-Send closures (a device sync borrowing the device), so Iterate is
    // neither Send nor Sync; it is Unpin.
    unpin::<Iterate<'static, std::vec::IntoIter<u32>>>();
}

#[test]
fn keyed_adapters() {
    send::<Keyed<Events, Where>>();
    send::<Keyed<Events, WhereAny>>();
    send::<Keyed<Events, Keep>>();
    send::<Keyed<Events, KeyOf<f64>>>();
    send::<Keyed<Events, TryKeyOf<f64>>>();
    send::<Keyed<Events, Augment<fn(&Event) -> u8>>>();
    send::<Keyed<Events, AsKey>>();
    send::<Keyed<Events, Format>>();
    send::<Keyed<Events, CollectBetween>>();
    send::<Keyed<Events, Tag>>();
    send::<Keyed<Events, KMap<fn(&Event) -> u8>>>();
    send::<Keyed<Events, KFilter<fn(&Event) -> bool>>>();
    send::<Keyed<Events, KMerge>>();
    send::<Keyed<Events, Sole<f64>>>();
    send::<DisplayEvents<Events>>();
    send::<Affix<Events, Events>>();
    send::<KFlatten<Events>>();
    send::<GroupWrap<Events>>();
    send::<WrapGroup<Events>>();
    sync::<WrapGroup<Events>>();
    send::<KGroupBy<Events>>();
    send::<KGroup>();
    send::<WMap<fn(&Event) -> u8, fn(&Event, &Event) -> u8, Events>>();
    unpin::<Keyed<Events, Where>>();
}

#[test]
fn probes() {
    use giving::probe::{Capture, Element, ProbeSite, Role, Selector, SelectorError};
    all::<Probe>();
    all::<Override>();
    all::<ProbeError>();
    all::<Selector>();
    all::<SelectorError>();
    all::<Element>();
    all::<Capture>();
    all::<Role>();
    all::<ProbeSite>();
}

#[test]
fn timeline() {
    all::<Channel>();
    all::<Graph>();
    all::<Series>();
    all::<ThreadInfo>();
    // A tracepoint guard may end on another thread (a span handed to a worker).
    all::<Tracepoint>();
}
