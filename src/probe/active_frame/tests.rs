//! The pool's hold on the probes of the plans its frames keep, and the frameless path's.

use std::sync::Arc;

use super::*;
use crate::probe::channel::{Receiver, channel};
use crate::probe::frame::Frame;
use crate::probe::plan::ActiveProbe;
use crate::probe::selector::Selector;
use crate::probe::site::{SiteInfo, SiteRef};

const VARIABLES: &[&str] = &["#enter", "#exit", "#value", "#error", "v"];
const TYPES: &[&str] = &["", "", "", "", ""];

/// The site of a test function `name` with one variable `v` (no arguments, sync).
const fn site_info(name: &'static str) -> SiteInfo {
    SiteInfo {
        name,
        module: module_path!(),
        file: file!(),
        line: line!(),
        variables: VARIABLES,
        arguments: 0,
        types: TYPES,
        overridable: &[],
        is_async: false,
    }
}

static KEPT: Site = Site::new(site_info("pool_test_kept"));
inventory::submit! { SiteRef(&KEPT) }

static OTHER: Site = Site::new(site_info("pool_test_other"));
inventory::submit! { SiteRef(&OTHER) }

/// A call of `site`, which the probes below match: its frame is taken from the pool and
/// returned to it. (It gives no event: `v` is not assigned, so no clock is read, which Miri's
/// isolation refuses.)
fn call(site: &'static Site) {
    drop(Frame::enter(site));
}

fn register(selector: &str) -> Arc<ActiveProbe> {
    // Events have nowhere to go: the probe's sender drops them.
    register_streamed(selector).0
}

/// A registered probe and its stream's end.
fn register_streamed(selector: &str) -> (Arc<ActiveProbe>, Receiver) {
    let (sender, receiver) = channel();
    let probe = ActiveProbe::register(
        Selector::parse(selector).unwrap(),
        sender,
        Box::new(|| true),
    )
    .unwrap();
    (probe, receiver)
}

#[test]
fn a_pooled_frame_lets_go_of_an_ended_probe_at_its_threads_next_change_of_plan() {
    // A thread of its own: a pool of its own.
    std::thread::spawn(|| {
        // Probes that read `v` at the exit: a lone `f > v` would take no frame (`direct`).
        let kept = register("pool_test_kept(v)");
        let other = register("pool_test_other(v)");
        // Nested, so that the pool keeps a frame of each (a frame goes to the pool only when
        // its call returns, and the next call of any function may reuse it).
        let outer = Frame::enter(&KEPT);
        call(&OTHER);
        drop(outer);
        kept.unregister();
        // The pooled frame of `pool_test_kept` still holds the plan that named the probe.
        assert_eq!(Arc::strong_count(&kept), 2);
        // The thread's next call that loads a plan (another function's, changed) drops it.
        let third = register("pool_test_other(v)");
        call(&OTHER);
        assert_eq!(Arc::strong_count(&kept), 1);
        other.unregister();
        third.unregister();
    })
    .join()
    .unwrap();
}

static DIRECT: Site = Site::new(site_info("pool_test_direct"));
inventory::submit! { SiteRef(&DIRECT) }

/// `v`'s index in [`VARIABLES`].
const V: usize = 4;

#[test]
#[cfg_attr(miri, ignore = "gives events, which read the clock")]
fn lone_probes_give_without_a_frame_and_their_thread_lets_go_of_an_ended_one() {
    use futures::StreamExt;
    use futures::executor::block_on;

    std::thread::spawn(|| {
        // A call of `pool_test_direct` assigning `v`: whether it took no frame.
        let call_assigning = |v: u64| {
            let frame = Frame::enter(&DIRECT);
            frame.var(V, &v);
            frame.is_direct()
        };
        let next_v = |stream: &mut Receiver| block_on(stream.next()).unwrap().get_as::<u64>("v");
        let (first, mut lone) = register_streamed("pool_test_direct > v");
        assert!(call_assigning(7));
        assert_eq!(next_v(&mut lone).unwrap(), 7);
        // The thread keeps the plan, and the probe with it, while the site's epoch holds.
        first.unregister();
        assert_eq!(Arc::strong_count(&first), 2);
        // A probe that reads `v` at the exit needs a frame: the next call takes one.
        let (second, mut at_exit) = register_streamed("pool_test_direct(v)");
        assert!(!call_assigning(8));
        assert_eq!(next_v(&mut at_exit).unwrap(), 8);
        // The frameless cache drops its stale plan at its own next reload: one more lone probe.
        second.unregister();
        let (third, mut third_stream) = register_streamed("pool_test_direct > v");
        assert!(call_assigning(9));
        assert_eq!(Arc::strong_count(&first), 1);
        assert_eq!(next_v(&mut third_stream).unwrap(), 9);
        // The ended probe got nothing after its end.
        first.sender.close();
        assert!(block_on(lone.next()).is_none());
        third.unregister();
    })
    .join()
    .unwrap();
}

static NEST_OUTER: Site = Site::new(site_info("pool_test_nest_outer"));
inventory::submit! { SiteRef(&NEST_OUTER) }

static NEST_INNER: Site = Site::new(site_info("pool_test_nest_inner"));
inventory::submit! { SiteRef(&NEST_INNER) }

#[test]
#[cfg_attr(miri, ignore = "gives events, which read the clock")]
fn a_lone_probe_under_functions_it_reads_nothing_of_takes_no_frame_and_asks_the_stack() {
    use futures::StreamExt;
    use futures::executor::block_on;

    std::thread::spawn(|| {
        // A call of `pool_test_nest_inner` assigning `v`: whether it took no frame.
        let call_assigning = |v: u64| {
            let frame = Frame::enter(&NEST_INNER);
            frame.var(V, &v);
            frame.is_direct()
        };
        let (probe, mut stream) =
            register_streamed("pool_test_nest_outer > pool_test_nest_inner > v");
        // Not inside `pool_test_nest_outer`: no event.
        assert!(call_assigning(1));
        let outer = Frame::enter(&NEST_OUTER);
        assert!(call_assigning(2));
        drop(outer);
        // Its call returned: no event again.
        assert!(call_assigning(3));
        let outer = Frame::enter(&NEST_OUTER);
        assert!(call_assigning(4));
        drop(outer);
        let mut next_v = || block_on(stream.next()).unwrap().get_as::<u64>("v").unwrap();
        assert_eq!(next_v(), 2);
        assert_eq!(next_v(), 4);
        probe.unregister();
    })
    .join()
    .unwrap();
}
