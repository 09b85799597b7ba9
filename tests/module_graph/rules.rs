//! The core's layering that a cycle check alone does not keep: the subscriber queue is a leaf
//! that knows events (and the pacer, itself a leaf) only, and scope state neither routes nor
//! builds streams.

use std::collections::BTreeSet;

use crate::crate_tree;
use crate::graph::edges;

/// The top-level modules that the core's top-level module `module` (and everything under it)
/// uses.
fn top_level_uses(module: &str) -> BTreeSet<String> {
    edges(&crate_tree("src/lib.rs"))
        .into_iter()
        .filter(|edge| edge.from.first().is_some_and(|m| m == module))
        .filter_map(|edge| edge.to.first().cloned())
        .filter(|to| to != module)
        .collect()
}

#[test]
fn the_queue_and_the_pacer_are_leaves_and_scope_state_neither_routes_nor_streams() {
    let queue = top_level_uses("queue");
    assert!(
        queue.iter().all(|m| m == "event" || m == "pace"),
        "the subscriber queue must know events (and the pacer) only, it uses {queue:?}"
    );
    let pace = top_level_uses("pace");
    assert!(
        pace.is_empty(),
        "the pacer wakes wakers and must know nothing of the crate, it uses {pace:?}"
    );
    let scope = top_level_uses("scope");
    assert!(!scope.is_empty(), "scope's uses were not found");
    assert!(
        !scope.contains("routing"),
        "scope state must not route: {scope:?}"
    );
    assert!(
        !scope.contains("stream"),
        "scope state must not build streams: {scope:?}"
    );
}
