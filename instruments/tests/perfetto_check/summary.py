"""A trace as Perfetto's own protos read it (the `perfetto` pip package), summarised as JSON.

No code of giving's: interned names resolved per sequence, the sequence's default clock
applied, events sorted by time per track (file order at one time), each end closing the
innermost open slice of its track. The Rust tests assert on the summary.
"""
import json
import sys
from collections import defaultdict

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

trace = pb.Trace()
trace.ParseFromString(open(sys.argv[1], "rb").read())
TE = pb.TrackEvent
names, tracks, per_track, counters = {}, {}, defaultdict(list), defaultdict(list)
default_clock, primary_clock, clocks, unclocked = None, None, set(), 0
for order, packet in enumerate(trace.packet):
    if packet.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
        names.clear()
    defaults = packet.trace_packet_defaults
    if packet.HasField("trace_packet_defaults") and defaults.HasField("timestamp_clock_id"):
        default_clock = defaults.timestamp_clock_id
    if packet.HasField("clock_snapshot"):
        primary_clock = pb.BuiltinClock.Name(packet.clock_snapshot.primary_trace_clock)
    if packet.HasField("timestamp"):
        if packet.HasField("timestamp_clock_id"):
            clocks.add(pb.BuiltinClock.Name(packet.timestamp_clock_id))
        elif default_clock is not None:
            clocks.add(pb.BuiltinClock.Name(default_clock))
        else:
            unclocked += 1
    for name in packet.interned_data.event_names:
        names[name.iid] = name.name
    if packet.HasField("track_descriptor"):
        d = packet.track_descriptor
        tracks[d.uuid] = {
            "name": d.thread.thread_name if d.HasField("thread") else
                    d.process.process_name if d.HasField("process") else d.name,
            "parent": d.parent_uuid if d.HasField("parent_uuid") else None,
            "counter": d.HasField("counter"),
            "unit_name": d.counter.unit_name if d.counter.HasField("unit_name") else None,
        }
    if packet.HasField("track_event"):
        event = packet.track_event
        if event.type == TE.TYPE_COUNTER:
            value = event.double_counter_value if event.HasField("double_counter_value") \
                else event.counter_value
            counters[event.track_uuid].append(value)
        else:
            name = names.get(event.name_iid, event.name)
            per_track[event.track_uuid].append((packet.timestamp, order, event.type, name))

slices, instants, unmatched, still_open = [], [], 0, []
for uuid, events in per_track.items():
    stack = []
    for ts, _, kind, name in sorted(events):
        if kind == TE.TYPE_SLICE_BEGIN:
            stack.append({"track": uuid, "name": name, "begin": ts,
                          "parents": [s["name"] for s in stack]})
        elif kind == TE.TYPE_SLICE_END:
            if not stack:
                unmatched += 1
                continue
            done = stack.pop()
            done["end"] = ts
            slices.append(done)
        elif kind == TE.TYPE_INSTANT:
            instants.append({"track": uuid, "name": name, "at": ts})
    still_open += [s["name"] for s in stack]

print(json.dumps({
    "tracks": {str(k): v for k, v in tracks.items()},
    "slices": sorted(slices, key=lambda s: s["begin"]),
    "instants": instants,
    "counters": {str(k): v for k, v in counters.items()},
    "still_open": still_open,
    "unmatched_ends": unmatched,
    "clocks": sorted(clocks),
    "unclocked": unclocked,
    "primary_clock": primary_clock,
}))
