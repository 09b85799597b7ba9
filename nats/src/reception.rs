//! [`Reception`]: the fan-in's reading of received messages — decoding, checking ranks,
//! counting what it rejects — without the connection, so that it can be tested and fuzzed
//! on bytes alone.

use std::collections::{HashMap, VecDeque};

use giving::vocab::keys;
use giving::vocab::keys::{NATS_DROPPED, NATS_REJECTED, RANK_END};
use giving::{Event, Value};
use giving_log::{LogHeader, StreamDecoder, StreamItem};

use crate::ranks::Ranks;
use crate::subject;

/// What a watcher of run `run` makes of the messages it receives, one subject's payload at a
/// time ([`take`](Reception::take)): the events of its ranks, in order per subject
/// ([`pop`](Reception::pop)), each rank's end, and a count of what it rejected — bytes that
/// are not a record, a record whose rank is not its subject's, a rank outside the world size.
/// The first rejection is said on stderr and given as `{instrument: "nats", nats_rejected: 1}`.
///
/// ```
/// use giving::Event;
/// use giving_nats::Reception;
///
/// let mut reception = Reception::new("nats://h:4222", "r").world_size(2);
/// let mut record = Vec::new();
/// let loss = Event::builder().field("loss", 0.5).build();
/// giving_log::encode_event(&loss, &mut record, "m").unwrap();
/// reception.take("giving.r.1", &record);
/// reception.take("giving.r.5", &record); // rank 5 of a world of 2
/// reception.take("giving.r.0", b"not a record");
/// let loss = reception.pop().unwrap();
/// assert_eq!(loss.get_as::<u64>("rank").unwrap(), 1);
/// assert_eq!(reception.rejected(), 2);
/// ```
pub struct Reception {
    url: String,
    run: String,
    decoders: HashMap<String, StreamDecoder>,
    /// The items of the message being read (kept to reuse its allocation).
    items: Vec<StreamItem>,
    ready: VecDeque<Event>,
    ranks: Ranks,
    headers: HashMap<u64, LogHeader>,
    garbage: u64,
    rejected: u64,
    rejected_reported: u64,
    world_size: Option<u64>,
}

impl Reception {
    /// A watcher of run `run` on the server at `url` (shown in what it says: mask its
    /// password first).
    pub fn new(url: &str, run: &str) -> Self {
        Self {
            url: url.to_owned(),
            run: run.to_owned(),
            decoders: HashMap::new(),
            items: Vec::new(),
            ready: VecDeque::new(),
            ranks: Ranks::default(),
            headers: HashMap::new(),
            garbage: 0,
            rejected: 0,
            rejected_reported: 0,
            world_size: None,
        }
    }

    /// Accepts only ranks below `world_size` (without it, a rank is checked against the world
    /// size its own events announce).
    pub fn world_size(mut self, world_size: u64) -> Self {
        self.world_size = Some(world_size);
        self
    }

    /// The next event decoded, if any.
    pub fn pop(&mut self) -> Option<Event> {
        self.ready.pop_front()
    }

    /// Whether every decoded event was popped.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    /// Counts something received that is not a message at all (a consumer's error).
    pub fn count_garbage(&mut self) {
        self.garbage += 1;
    }

    /// What rank `rank` said about itself when it started publishing, once received.
    pub fn header(&self, rank: u64) -> Option<&LogHeader> {
        self.headers.get(&rank)
    }

    /// The ranks heard from so far.
    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    /// Messages (or stretches of them) that were not records.
    pub fn garbage(&self) -> u64 {
        self.garbage
    }

    /// Records rejected (see [`Reception`]).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// The rejection count, when it grew since it was last given.
    pub fn final_report(&mut self) -> Option<Event> {
        (self.rejected > self.rejected_reported).then(|| self.rejected_event())
    }

    /// Decodes one message of `subject`.
    pub fn take(&mut self, subject: &str, payload: &[u8]) {
        let rank = subject::rank_of(subject);
        // One lookup per message, and the subject copied only the first time it is seen: at
        // tens of thousands of messages a second, the fan-in's cost is per message.
        let decoder = match self.decoders.get_mut(subject) {
            Some(decoder) => decoder,
            None => self.decoders.entry(subject.to_owned()).or_default(),
        };
        decoder.push(payload);
        let mut items = std::mem::take(&mut self.items);
        items.extend(std::iter::from_fn(|| decoder.next_item()));
        // A message is one record: what is left of it cannot be completed by the next.
        let incomplete = decoder.pending() > 0;
        if incomplete {
            *decoder = StreamDecoder::new();
        }
        for item in items.drain(..) {
            match item {
                StreamItem::Event(event) => {
                    let event = match (event.has(keys::RANK), rank) {
                        (false, Some(rank)) => event.with(keys::RANK, rank),
                        _ => event,
                    };
                    if let Err(why) = self.check_rank(&event, rank) {
                        self.reject(subject, &why);
                        continue;
                    }
                    if let Some(rank) = event.get(keys::RANK).and_then(as_u64) {
                        let world = event.get(keys::WORLD_SIZE).and_then(as_u64);
                        self.ranks.saw(rank, world);
                    }
                    self.ready.push_back(event);
                }
                StreamItem::End { .. } if rank.is_none() => {
                    self.reject(subject, "an end record on a subject that names no rank");
                }
                StreamItem::End { .. }
                    if rank
                        .zip(self.world_size)
                        .is_some_and(|(rank, world)| rank >= world) =>
                {
                    self.reject(subject, "the end of a rank outside the world size");
                }
                StreamItem::End { events, dropped } => {
                    let mut end = Event::builder()
                        .field(keys::RUN, self.run.as_str())
                        .field(RANK_END, events)
                        .field(NATS_DROPPED, dropped)
                        // The rank's last event: a dashboard marks it done.
                        .field(keys::DONE, true);
                    if let Some(rank) = rank {
                        end = end.field(keys::RANK, rank);
                        self.ranks.ended(rank);
                    }
                    self.ready.push_back(end.build());
                }
                StreamItem::Header(header) => {
                    if let Some(rank) = rank
                        && self.world_size.is_none_or(|world| rank < world)
                    {
                        self.headers.insert(rank, *header);
                    }
                }
                StreamItem::Garbage { .. } => {
                    self.garbage += 1;
                    self.reject(subject, "bytes that are not a record");
                }
            }
        }
        self.items = items;
        if incomplete {
            self.garbage += 1;
            self.reject(subject, "an incomplete record");
        }
    }

    /// Why `event`, received on the subject of rank `subject_rank`, cannot be from a rank of
    /// this run: it names another rank than its subject, or a rank outside the world size (the
    /// one the watcher expects, else the one the event announces).
    fn check_rank(&self, event: &Event, subject_rank: Option<u64>) -> Result<(), String> {
        let Some(subject_rank) = subject_rank else {
            return Err("a subject that names no rank".to_owned());
        };
        let claimed = event.get(keys::RANK).and_then(as_u64);
        if claimed != Some(subject_rank) {
            return Err(format!(
                "rank {} published on the subject of rank {subject_rank}",
                event
                    .get(keys::RANK)
                    .map_or_else(|| "?".to_owned(), |value| format!("{value:?}"))
            ));
        }
        let world = self
            .world_size
            .or_else(|| event.get(keys::WORLD_SIZE).and_then(as_u64));
        match world {
            Some(world) if subject_rank >= world => Err(format!(
                "rank {subject_rank} is outside the world size {world}"
            )),
            _ => Ok(()),
        }
    }

    /// Counts a rejected record; the first is said on stderr and in the stream.
    fn reject(&mut self, subject: &str, why: &str) {
        self.rejected += 1;
        if self.rejected == 1 {
            eprintln!(
                "giving: nats: rejected a record on `{subject}` from `{}`: {why} (further rejections are counted as `{NATS_REJECTED}`)",
                self.url
            );
            let event = self.rejected_event();
            self.ready.push_back(event);
        }
    }

    fn rejected_event(&mut self) -> Event {
        self.rejected_reported = self.rejected;
        Event::builder()
            .field(keys::INSTRUMENT, "nats")
            .field(keys::RUN, self.run.as_str())
            .field(NATS_REJECTED, self.rejected)
            .build()
    }
}

impl std::fmt::Debug for Reception {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reception")
            .field("run", &self.run)
            .field("ranks", &self.ranks)
            .field("rejected", &self.rejected)
            .finish_non_exhaustive()
    }
}

fn as_u64(value: &Value) -> Option<u64> {
    match *value {
        Value::U64(u) => Some(u),
        Value::I64(i) => u64::try_from(i).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64) -> Vec<u8> {
        let mut record = Vec::new();
        giving_log::encode_event(&Event::builder().field("i", i).build(), &mut record, "m")
            .unwrap();
        record
    }

    #[test]
    fn a_cut_record_is_rejected_and_the_subject_reads_on_from_its_next_message() {
        let mut reception = Reception::new("nats://h:4222", "r").world_size(2);
        let whole = record(1);
        reception.take("giving.r.0", &whole[..whole.len() - 1]);
        assert_eq!((reception.garbage(), reception.rejected()), (1, 1));
        // The first rejection is given once, as an event.
        let said = reception.pop().unwrap();
        assert_eq!(said.get_as::<u64>(NATS_REJECTED).unwrap(), 1);
        for (subject, i) in [("giving.r.0", 2), ("giving.r.1", 3), ("giving.r.0", 4)] {
            reception.take(subject, &record(i));
        }
        let got: Vec<(u64, u64)> = std::iter::from_fn(|| reception.pop())
            .map(|e| (e.get_as("i").unwrap(), e.get_as(keys::RANK).unwrap()))
            .collect();
        assert_eq!(got, [(2, 0), (3, 1), (4, 0)]);
        assert_eq!(reception.rejected(), 1, "nothing else rejected");
    }
}
