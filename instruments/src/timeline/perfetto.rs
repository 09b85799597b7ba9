//! The Perfetto protobuf encoder: track descriptors on first use, interned names, one
//! `TracePacket` per record, each a complete `Trace.packet` field, so that a file cut anywhere
//! reads up to its last complete packet.

use std::collections::HashMap;
use std::sync::Arc;

use giving::{Timestamp, Value};

use super::model::{Args, Counter, Output, Process, Track};
use super::proto::{
    BuiltinClock, Clock, ClockSnapshot, CounterDescriptor, DebugAnnotation, InternedData,
    InternedString, ProcessDescriptor, SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE,
    ThreadDescriptor, TracePacket, TracePacketDefaults, TrackDescriptor, TrackEvent,
    TrackEventType,
};

/// The one packet sequence this encoder writes (interned names are per sequence).
const SEQUENCE: u32 = 1;
/// `Trace.packet`'s field number.
const TRACE_PACKET_FIELD: u32 = 1;
/// The clock of every timestamp: [`Timestamp`] counts nanoseconds since the Unix epoch (the
/// wall clock read once, then advanced by a monotonic counter), which is Perfetto's
/// `BUILTIN_CLOCK_REALTIME`. Declared as the sequence's default clock and, by a clock
/// snapshot, as the trace's clock, so that the trace processor takes the times as they are.
const TRACE_CLOCK: BuiltinClock = BuiltinClock::Realtime;

/// Encodes records as Perfetto `TracePacket`s into a byte buffer the sink drains.
#[derive(Default)]
pub(crate) struct PerfettoEncoder {
    out: Vec<u8>,
    started: bool,
    /// Whether the clock snapshot naming [`TRACE_CLOCK`] the trace's clock was written.
    clock_declared: bool,
    next_uuid: u64,
    processes: HashMap<u32, (u64, u32)>,
    threads: HashMap<(u32, u64), u64>,
    tracks: HashMap<Track, u64>,
    groups: HashMap<(u32, Arc<str>), u64>,
    counters: HashMap<Counter, u64>,
    names: HashMap<String, u64>,
    arg_names: HashMap<String, u64>,
    categories: HashMap<Arc<str>, u64>,
}

impl PerfettoEncoder {
    /// Takes the bytes encoded so far.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Bytes encoded and not yet taken.
    pub(crate) fn buffered(&self) -> usize {
        self.out.len()
    }

    fn uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.next_uuid
    }

    /// Writes `packet`, after the clock snapshot when it is the first with a time (the
    /// snapshot reads the trace's clock at that time).
    fn packet(&mut self, packet: TracePacket) {
        if let Some(at) = packet.timestamp
            && !self.clock_declared
        {
            self.clock_declared = true;
            self.write(TracePacket {
                timestamp: Some(at),
                timestamp_clock_id: Some(TRACE_CLOCK as u32),
                clock_snapshot: Some(ClockSnapshot {
                    clocks: vec![Clock {
                        clock_id: Some(TRACE_CLOCK as u32),
                        timestamp: Some(at),
                    }],
                    primary_trace_clock: Some(TRACE_CLOCK as i32),
                }),
                ..TracePacket::default()
            });
        }
        self.write(packet);
    }

    /// Writes one packet of the sequence; the first clears its state and sets its defaults.
    fn write(&mut self, mut packet: TracePacket) {
        packet.trusted_packet_sequence_id = Some(SEQUENCE);
        let mut flags = packet.sequence_flags.unwrap_or(0);
        if !self.started {
            flags |= SEQ_INCREMENTAL_STATE_CLEARED;
            packet.trace_packet_defaults = Some(TracePacketDefaults {
                timestamp_clock_id: Some(TRACE_CLOCK as u32),
            });
            self.started = true;
        }
        packet.sequence_flags = (flags != 0).then_some(flags);
        prost::encoding::message::encode(TRACE_PACKET_FIELD, &packet, &mut self.out);
    }

    fn descriptor(&mut self, descriptor: TrackDescriptor) {
        self.packet(TracePacket {
            track_descriptor: Some(descriptor),
            ..TracePacket::default()
        });
    }

    fn process_uuid(&mut self, index: u32) -> (u64, u32) {
        if let Some(known) = self.processes.get(&index) {
            return *known;
        }
        // A record of a process never announced (cannot happen from the recorder): a process
        // track of its own, so the trace stays valid.
        self.process(&Process {
            index,
            pid: index,
            name: format!("process {index}"),
        });
        self.processes[&index]
    }

    fn thread_uuid(&mut self, track: &Track) -> u64 {
        if let Some(uuid) = self.threads.get(&(track.process, track.tid)) {
            return *uuid;
        }
        let (parent, pid) = self.process_uuid(track.process);
        let uuid = self.uuid();
        self.descriptor(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            thread: Some(ThreadDescriptor {
                pid: Some(as_i32(u64::from(pid))),
                tid: Some(as_i32(track.tid)),
                thread_name: Some(track.thread_name.to_string()),
            }),
            ..TrackDescriptor::default()
        });
        self.threads.insert((track.process, track.tid), uuid);
        uuid
    }

    fn track_uuid(&mut self, track: &Track) -> u64 {
        if let Some(uuid) = self.tracks.get(track) {
            return *uuid;
        }
        let uuid = match (&track.channel, &track.lane) {
            (None, None) => self.thread_uuid(track),
            (Some(channel), None) => {
                let thread = self.thread_uuid(track);
                self.named_track(thread, channel)
            }
            // A label's track, under its channel's (or its thread's).
            (channel, Some(lane)) => {
                let parent = self.track_uuid(&Track {
                    channel: channel.clone(),
                    lane: None,
                    ..track.clone()
                });
                self.named_track(parent, lane)
            }
        };
        self.tracks.insert(track.clone(), uuid);
        uuid
    }

    /// A new track named `name` under `parent`.
    fn named_track(&mut self, parent: u64, name: &str) -> u64 {
        let uuid = self.uuid();
        self.descriptor(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            name: Some(name.to_owned()),
            ..TrackDescriptor::default()
        });
        uuid
    }

    fn counter_uuid(&mut self, counter: &Counter) -> u64 {
        if let Some(uuid) = self.counters.get(counter) {
            return *uuid;
        }
        let (process, _) = self.process_uuid(counter.process);
        let parent = match &counter.group {
            None => process,
            Some(group) => match self.groups.get(&(counter.process, group.clone())) {
                Some(uuid) => *uuid,
                None => {
                    let uuid = self.uuid();
                    self.descriptor(TrackDescriptor {
                        uuid: Some(uuid),
                        parent_uuid: Some(process),
                        name: Some(group.to_string()),
                        ..TrackDescriptor::default()
                    });
                    self.groups.insert((counter.process, group.clone()), uuid);
                    uuid
                }
            },
        };
        let uuid = self.uuid();
        self.descriptor(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            name: Some(counter.name.clone()),
            counter: Some(CounterDescriptor {
                unit_name: counter.unit.as_deref().map(str::to_owned),
            }),
            ..TrackDescriptor::default()
        });
        self.counters.insert(counter.clone(), uuid);
        uuid
    }

    /// A track event with its name, category and arguments interned in `interned`.
    fn named_event(
        &mut self,
        kind: TrackEventType,
        track: &Track,
        name: &str,
        args: &Args,
        interned: &mut InternedData,
    ) -> TrackEvent {
        let track_uuid = self.track_uuid(track);
        let name_iid = intern(&mut self.names, name, &mut interned.event_names);
        let category_iids = match &track.channel {
            Some(channel) => {
                let next = self.categories.len() as u64 + 1;
                let iid = *self.categories.entry(channel.clone()).or_insert_with(|| {
                    interned.event_categories.push(InternedString {
                        iid: Some(next),
                        name: Some(channel.to_string()),
                    });
                    next
                });
                vec![iid]
            }
            None => Vec::new(),
        };
        let debug_annotations = args
            .iter()
            .map(|(key, value)| {
                let mut annotation = annotation(value);
                annotation.name_iid = Some(intern(
                    &mut self.arg_names,
                    key,
                    &mut interned.debug_annotation_names,
                ));
                annotation
            })
            .collect();
        TrackEvent {
            r#type: Some(kind as i32),
            track_uuid: Some(track_uuid),
            name_iid: Some(name_iid),
            category_iids,
            debug_annotations,
            ..TrackEvent::default()
        }
    }

    fn event_packet(&mut self, at: Timestamp, event: TrackEvent, interned: InternedData) {
        let has_interned = !(interned.event_names.is_empty()
            && interned.debug_annotation_names.is_empty()
            && interned.event_categories.is_empty());
        self.packet(TracePacket {
            timestamp: Some(at.as_nanos()),
            track_event: Some(event),
            interned_data: has_interned.then_some(interned),
            sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
            ..TracePacket::default()
        });
    }
}

impl Output for PerfettoEncoder {
    fn process(&mut self, process: &Process) {
        if self.processes.contains_key(&process.index) {
            return;
        }
        let uuid = self.uuid();
        self.descriptor(TrackDescriptor {
            uuid: Some(uuid),
            process: Some(ProcessDescriptor {
                pid: Some(as_i32(u64::from(process.pid))),
                process_name: Some(process.name.clone()),
                cmdline: Vec::new(),
            }),
            ..TrackDescriptor::default()
        });
        self.processes.insert(process.index, (uuid, process.pid));
    }

    fn begin(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        let mut interned = InternedData::default();
        let event = self.named_event(TrackEventType::SliceBegin, track, name, args, &mut interned);
        self.event_packet(at, event, interned);
    }

    fn end(&mut self, at: Timestamp, track: &Track) {
        let track_uuid = self.track_uuid(track);
        self.packet(TracePacket {
            timestamp: Some(at.as_nanos()),
            track_event: Some(TrackEvent {
                r#type: Some(TrackEventType::SliceEnd as i32),
                track_uuid: Some(track_uuid),
                ..TrackEvent::default()
            }),
            ..TracePacket::default()
        });
    }

    fn instant(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        let mut interned = InternedData::default();
        let event = self.named_event(TrackEventType::Instant, track, name, args, &mut interned);
        self.event_packet(at, event, interned);
    }

    fn counter(&mut self, at: Timestamp, counter: &Counter, value: f64) {
        let track_uuid = self.counter_uuid(counter);
        self.packet(TracePacket {
            timestamp: Some(at.as_nanos()),
            track_event: Some(TrackEvent {
                r#type: Some(TrackEventType::Counter as i32),
                track_uuid: Some(track_uuid),
                double_counter_value: Some(value),
                ..TrackEvent::default()
            }),
            ..TracePacket::default()
        });
    }
}

/// The id of `name`, added to `new` (this packet's interned data) the first time.
fn intern(known: &mut HashMap<String, u64>, name: &str, new: &mut Vec<InternedString>) -> u64 {
    if let Some(iid) = known.get(name) {
        return *iid;
    }
    let iid = known.len() as u64 + 1;
    known.insert(name.to_owned(), iid);
    new.push(InternedString {
        iid: Some(iid),
        name: Some(name.to_owned()),
    });
    iid
}

/// An argument's value (lists and maps as their text; the recorder has read lazy values).
fn annotation(value: &Value) -> DebugAnnotation {
    let mut annotation = DebugAnnotation::default();
    match value {
        Value::Bool(b) => annotation.bool_value = Some(*b),
        Value::U64(u) => annotation.uint_value = Some(*u),
        Value::I64(i) => annotation.int_value = Some(*i),
        Value::F64(x) => annotation.double_value = Some(*x),
        Value::Str(s) => annotation.string_value = Some(s.to_string()),
        other => annotation.string_value = Some(other.to_string()),
    }
    annotation
}

/// Perfetto's pids and tids are `int32`; larger ids (our synthetic thread numbers off Linux)
/// are folded into range.
fn as_i32(id: u64) -> i32 {
    i32::try_from(id).unwrap_or((id % i32::MAX as u64) as i32)
}
