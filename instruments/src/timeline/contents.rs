//! [`Contents`]: what a decoded trace shows — tracks, slices with their nesting, instants,
//! counter values — resolved as a viewer would (interned names, events sorted by time on
//! each track, each end closing the innermost open slice).

use std::collections::{BTreeMap, HashMap};

use super::error::TraceError;
use super::proto::{SEQ_INCREMENTAL_STATE_CLEARED, TrackEventType};
use super::read::Decoded;

/// A track of the trace, from its descriptor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrackInfo {
    /// The track's name (a channel, a counter, a graph; the thread's or process's name).
    pub name: String,
    /// The parent track's uuid.
    pub parent: Option<u64>,
    /// The process id, for process and thread tracks.
    pub pid: Option<i32>,
    /// The thread id, for thread tracks.
    pub tid: Option<i32>,
    /// Whether it is a counter track.
    pub counter: bool,
}

/// A slice: a begin and its end on one track.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The track's uuid.
    pub track: u64,
    /// The slice's name.
    pub name: String,
    /// Begin and end, in nanoseconds.
    pub begin: u64,
    /// End, in nanoseconds.
    pub end: u64,
    /// The enclosing slice on the same track (an index into [`Contents::slices`]).
    pub parent: Option<usize>,
    /// Its arguments, as text.
    pub args: BTreeMap<String, String>,
}

/// An instant event.
#[derive(Debug, Clone, PartialEq)]
pub struct Instant {
    /// The track's uuid.
    pub track: u64,
    /// Its name.
    pub name: String,
    /// When, in nanoseconds.
    pub at: u64,
}

/// What a trace shows, ready to check.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Contents {
    /// Every declared track by uuid.
    pub tracks: BTreeMap<u64, TrackInfo>,
    /// Every slice, ordered by begin time per track.
    pub slices: Vec<Slice>,
    /// Every instant.
    pub instants: Vec<Instant>,
    /// Counter values by counter track uuid, in time order.
    pub counters: BTreeMap<u64, Vec<(u64, f64)>>,
}

impl Contents {
    /// The uuid of the track named `name` (the first one).
    pub fn track_named(&self, name: &str) -> Option<u64> {
        self.tracks
            .iter()
            .find(|(_, track)| track.name == name)
            .map(|(uuid, _)| *uuid)
    }

    /// The uuid of the thread track of thread `tid`.
    pub fn thread_track(&self, tid: i32) -> Option<u64> {
        self.tracks
            .iter()
            .find(|(_, track)| track.tid == Some(tid))
            .map(|(uuid, _)| *uuid)
    }

    /// The values of the counter track named `name`.
    pub fn counter(&self, name: &str) -> &[(u64, f64)] {
        self.tracks
            .iter()
            .filter(|(_, track)| track.counter && track.name == name)
            .find_map(|(uuid, _)| self.counters.get(uuid))
            .map_or(&[], Vec::as_slice)
    }

    /// The slices named `name`.
    pub fn slices_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Slice> + 'a {
        self.slices.iter().filter(move |slice| slice.name == name)
    }

    /// The chain of enclosing slices of slice `index`, innermost first.
    pub fn ancestors(&self, index: usize) -> impl Iterator<Item = &Slice> + '_ {
        std::iter::successors(self.slices[index].parent, |i| self.slices[*i].parent)
            .map(|i| &self.slices[i])
    }
}

/// A track event waiting to be paired: (time, order in the file, event).
struct Pending {
    at: u64,
    order: usize,
    kind: TrackEventType,
    name: String,
    args: BTreeMap<String, String>,
}

impl Decoded {
    /// What the trace shows: names resolved, slices paired and nested per track. A slice end
    /// with no open slice, a slice never ended, or an interned name never defined is an error
    /// ([`TraceError::Damaged`], naming the track or the id).
    ///
    /// ```
    /// use giving::timeline::Channel;
    /// use giving_instruments::Overseer;
    /// use giving_instruments::timeline::{Trace, TraceFormat, read};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let trace = Trace::in_dir(dir.path(), TraceFormat::Perfetto).unwrap();
    /// let path = trace.path().to_path_buf();
    /// Overseer::new().with(trace).run(|| {
    ///     let app = Channel::thread();
    ///     let _outer = app.tracepoint("outer");
    ///     let _inner = app.tracepoint("inner");
    /// });
    /// let contents = read(&path).unwrap().contents().unwrap();
    /// let inner = contents.slices.iter().position(|s| s.name == "inner").unwrap();
    /// assert_eq!(contents.ancestors(inner).next().unwrap().name, "outer");
    /// ```
    pub fn contents(&self) -> Result<Contents, TraceError> {
        let mut contents = Contents::default();
        let mut names: HashMap<u64, String> = HashMap::new();
        let mut arg_names: HashMap<u64, String> = HashMap::new();
        let mut per_track: BTreeMap<u64, Vec<Pending>> = BTreeMap::new();
        let bad = |message: String| TraceError::Damaged { offset: 0, message };
        for (order, packet) in self.packets.iter().enumerate() {
            if packet.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
                names.clear();
                arg_names.clear();
            }
            if let Some(interned) = &packet.interned_data {
                for name in &interned.event_names {
                    names.insert(name.iid.unwrap_or(0), name.name.clone().unwrap_or_default());
                }
                for name in &interned.debug_annotation_names {
                    let text = name.name.clone().unwrap_or_default();
                    arg_names.insert(name.iid.unwrap_or(0), text);
                }
            }
            if let Some(descriptor) = &packet.track_descriptor {
                let thread = descriptor.thread.as_ref();
                let process = descriptor.process.as_ref();
                let name = descriptor
                    .name
                    .clone()
                    .or_else(|| thread.and_then(|t| t.thread_name.clone()))
                    .or_else(|| process.and_then(|p| p.process_name.clone()))
                    .unwrap_or_default();
                contents.tracks.insert(
                    descriptor.uuid.unwrap_or(0),
                    TrackInfo {
                        name,
                        parent: descriptor.parent_uuid,
                        pid: thread.and_then(|t| t.pid).or(process.and_then(|p| p.pid)),
                        tid: thread.and_then(|t| t.tid),
                        counter: descriptor.counter.is_some(),
                    },
                );
            }
            let Some(event) = &packet.track_event else {
                continue;
            };
            let track = event.track_uuid.unwrap_or(0);
            let at = packet.timestamp.unwrap_or(0);
            let kind = TrackEventType::try_from(event.r#type.unwrap_or(0))
                .unwrap_or(TrackEventType::Unspecified);
            if kind == TrackEventType::Counter {
                let value = event
                    .double_counter_value
                    .or(event.counter_value.map(|v| v as f64))
                    .unwrap_or(f64::NAN);
                contents
                    .counters
                    .entry(track)
                    .or_default()
                    .push((at, value));
                continue;
            }
            let name = match (event.name_iid, &event.name) {
                (_, Some(name)) => name.clone(),
                (Some(iid), None) => names
                    .get(&iid)
                    .cloned()
                    .ok_or_else(|| bad(format!("event name id {iid} never interned")))?,
                (None, None) => String::new(),
            };
            let mut args = BTreeMap::new();
            for annotation in &event.debug_annotations {
                let key = match (annotation.name_iid, &annotation.name) {
                    (_, Some(name)) => name.clone(),
                    (Some(iid), None) => arg_names
                        .get(&iid)
                        .cloned()
                        .ok_or_else(|| bad(format!("argument name id {iid} never interned")))?,
                    (None, None) => String::new(),
                };
                let value = annotation
                    .string_value
                    .clone()
                    .or(annotation.uint_value.map(|v| v.to_string()))
                    .or(annotation.int_value.map(|v| v.to_string()))
                    .or(annotation.double_value.map(|v| v.to_string()))
                    .or(annotation.bool_value.map(|v| v.to_string()))
                    .unwrap_or_default();
                args.insert(key, value);
            }
            per_track.entry(track).or_default().push(Pending {
                at,
                order,
                kind,
                name,
                args,
            });
        }
        for values in contents.counters.values_mut() {
            values.sort_by_key(|(at, _)| *at);
        }
        for (track, mut events) in per_track {
            // As a viewer does: by time, and in file order at one time.
            events.sort_by_key(|event| (event.at, event.order));
            let mut open: Vec<usize> = Vec::new();
            for event in events {
                match event.kind {
                    TrackEventType::SliceBegin => {
                        contents.slices.push(Slice {
                            track,
                            name: event.name,
                            begin: event.at,
                            end: event.at,
                            parent: open.last().copied(),
                            args: event.args,
                        });
                        open.push(contents.slices.len() - 1);
                    }
                    TrackEventType::SliceEnd => {
                        let index = open.pop().ok_or_else(|| {
                            bad(format!(
                                "slice end at {} on track {track} ends nothing",
                                event.at
                            ))
                        })?;
                        contents.slices[index].end = event.at;
                    }
                    TrackEventType::Instant => contents.instants.push(Instant {
                        track,
                        name: event.name,
                        at: event.at,
                    }),
                    _ => {}
                }
            }
            if let Some(index) = open.last() {
                let slice = &contents.slices[*index];
                return Err(bad(format!(
                    "slice `{}` on track {track} never ends",
                    slice.name
                )));
            }
        }
        Ok(contents)
    }
}
