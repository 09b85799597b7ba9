//! The channels of the process by name, enabled or not: libpvti's `enableTraceChannel`,
//! `disableTraceChannel`, `listTraceChannels` and its `channels` option, at run time.
//!
//! Every [`Channel`](super::Channel) of one name shares one switch, so a channel can be
//! switched by name from anywhere (an option, a command), also before it is made. A disabled
//! channel's tracepoints and instants give nothing, as libpvti leaves a disabled channel's
//! events out of the trace file; the check is one relaxed load, made only when someone
//! listens.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// One channel name's switch.
#[derive(Debug)]
pub(super) struct ChannelState {
    pub(super) name: Arc<str>,
    enabled: AtomicBool,
}

impl ChannelState {
    pub(super) fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    fn set(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }
}

struct Registry {
    channels: BTreeMap<Arc<str>, Arc<ChannelState>>,
    /// Whether a name seen for the first time starts enabled: yes, unless a list of the
    /// channels to enable was given ([`enable_only_channels`]).
    default_enabled: bool,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            Mutex::new(Registry {
                channels: BTreeMap::new(),
                default_enabled: true,
            })
        })
        .lock()
        // The registry holds no invariant a panic could break halfway.
        .unwrap_or_else(PoisonError::into_inner)
}

/// The switch of channel `name`, made (enabled or not, as the policy says) the first time.
pub(super) fn state(name: &str) -> Arc<ChannelState> {
    let mut registry = registry();
    let enabled = registry.default_enabled;
    registry
        .channels
        .entry(Arc::from(name))
        .or_insert_with_key(|name| {
            Arc::new(ChannelState {
                name: name.clone(),
                enabled: AtomicBool::new(enabled),
            })
        })
        .clone()
}

/// Enables channel `name` (libpvti's `enableTraceChannel`): its tracepoints and instants are
/// given again from now on.
///
/// ```
/// use giving::timeline::{Channel, disable_channel, enable_channel};
///
/// let io = Channel::new("doc enable io");
/// disable_channel("doc enable io");
/// assert!(!io.is_enabled());
/// enable_channel("doc enable io");
/// assert!(io.is_enabled());
/// ```
pub fn enable_channel(name: &str) {
    state(name).set(true);
}

/// Disables channel `name` (libpvti's `disableTraceChannel`): its tracepoints and instants
/// give nothing until it is enabled again. A span open when its channel is disabled still
/// gives its end, so that the trace's slices balance.
pub fn disable_channel(name: &str) {
    state(name).set(false);
}

/// The channels named so far and whether each is enabled, by name (libpvti's
/// `listTraceChannels`). [`Channel::thread`](super::Channel::thread) is not among them: the
/// thread's own track cannot be switched off.
///
/// ```
/// use giving::timeline::{Channel, disable_channel, list_channels};
///
/// let _a = Channel::new("doc list a");
/// disable_channel("doc list b");
/// let listed = list_channels();
/// assert!(listed.contains(&("doc list a".to_owned(), true)));
/// assert!(listed.contains(&("doc list b".to_owned(), false)));
/// ```
pub fn list_channels() -> Vec<(String, bool)> {
    registry()
        .channels
        .values()
        .map(|state| (state.name.to_string(), state.is_enabled()))
        .collect()
}

/// libpvti's `channels` option: with `Some(names)`, only those channels are enabled — the
/// others named so far are disabled, and so is any channel named later; an empty list, or
/// `None`, enables every channel, now and later ("if empty or not set, all channels are
/// enabled"). [`enable_channel`] and [`disable_channel`] still switch one afterwards.
///
/// Process-wide, as libpvti's: not run here, since doctests may share a process and this
/// would switch off their channels (`tests/timeline_channels.rs` runs it alone).
///
/// ```no_run
/// use giving::timeline::{Channel, enable_only_channels};
///
/// let kept = Channel::new("doc only kept");
/// enable_only_channels(Some(&["doc only kept"]));
/// let later = Channel::new("doc only later");
/// assert!(kept.is_enabled() && !later.is_enabled());
/// enable_only_channels(None::<&[&str]>);
/// assert!(later.is_enabled());
/// ```
pub fn enable_only_channels<S: AsRef<str>>(names: Option<&[S]>) {
    let names: Option<Vec<&str>> = names
        .filter(|names| !names.is_empty())
        .map(|names| names.iter().map(AsRef::as_ref).collect());
    let mut registry = registry();
    registry.default_enabled = names.is_none();
    if let Some(names) = &names {
        for name in names {
            if !registry.channels.contains_key(*name) {
                registry.channels.insert(
                    Arc::from(*name),
                    Arc::new(ChannelState {
                        name: Arc::from(*name),
                        enabled: AtomicBool::new(true),
                    }),
                );
            }
        }
    }
    for state in registry.channels.values() {
        state.set(
            names
                .as_ref()
                .is_none_or(|names| names.contains(&&*state.name)),
        );
    }
}
