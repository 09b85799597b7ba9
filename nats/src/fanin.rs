//! [`FanIn`]: every rank of a run, received from NATS as one stream of events.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use async_nats::Subscriber;
use async_nats::jetstream::consumer::push::Ordered;
use futures::StreamExt;
use giving::vocab::keys;
use giving::{Event, Giver, StopToken, Value};
use giving_log::{LogHeader, StreamDecoder, StreamItem};

use giving_log::redact_url;

use crate::auth::NatsAuth;
use crate::connect::options;
use crate::error::NatsError;
use crate::ranks::Ranks;
use crate::subject::{self, run_subjects};
use giving::vocab::keys::{NATS_DROPPED, NATS_REJECTED, RANK_END};

/// Subscribes to `giving.<run>.>` and yields the events of every rank as one stream, in the
/// order they arrive (each rank's in its own order). Events carry the publisher's tags
/// ([`RANK`](keys::RANK), [`HOST`](keys::HOST), …; an untagged record gets its rank from the
/// subject); a rank's end record becomes an event `{rank_end: events, nats_dropped, rank, run,
/// done: true}`.
/// Bytes that are not records are skipped and counted ([`garbage`](FanIn::garbage)). The
/// client reconnects by itself, and subscribes again, if the server restarts.
///
/// Give its events into a scope ([`forward`](FanIn::forward)) and every instrument — log,
/// trace, dashboard — consumes the ranks as it would one loop.
pub struct FanIn {
    url: String,
    run: String,
    source: Source,
    decoders: HashMap<String, StreamDecoder>,
    ready: VecDeque<Event>,
    ranks: Ranks,
    headers: HashMap<u64, LogHeader>,
    garbage: u64,
    rejected: u64,
    rejected_reported: u64,
    world_size: Option<u64>,
    _client: async_nats::Client,
}

/// Where a fan-in's messages come from.
enum Source {
    /// What is published from now on.
    Live(Subscriber),
    /// What the run's JetStream stream kept, then what comes.
    Stored(Box<Ordered>),
}

/// When [`FanIn::forward`] stops.
#[derive(Debug, Clone, Default)]
pub struct Until {
    /// Stop once every rank seen has ended (see [`Ranks::all_done`]).
    pub done: bool,
    /// Stop when nothing arrived for this long.
    pub idle: Option<Duration>,
    /// Stop when this token is stopped (Ctrl-C through an Overseer).
    pub stop: Option<StopToken>,
}

/// How long [`FanIn::forward`] waits between looks at its stop token.
const STOP_POLL: Duration = Duration::from_millis(100);

impl FanIn {
    /// Connects to the server at `url` and subscribes to every rank of run `run`. Fails with
    /// the address when the server cannot be reached now.
    pub async fn connect(url: &str, run: &str) -> Result<Self, NatsError> {
        Self::connect_with(url, run, &NatsAuth::default()).await
    }

    /// As [`connect`](Self::connect), authenticating with `auth`.
    pub async fn connect_with(url: &str, run: &str, auth: &NatsAuth) -> Result<Self, NatsError> {
        let subject = run_subjects(run)?;
        let shown = redact_url(url);
        let client = options(url, auth)?
            .connect(url)
            .await
            .map_err(|e| NatsError::Connect {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        let subscriber =
            client
                .subscribe(subject.clone())
                .await
                .map_err(|e| NatsError::Subscribe {
                    subject: subject.clone(),
                    url: shown.clone(),
                    message: e.to_string(),
                })?;
        // The subscription is registered with the server before `connect` returns, so that a
        // publisher started afterwards is not missed.
        let _ = tokio::time::timeout(Duration::from_secs(2), client.flush()).await;
        Ok(Self::new(&shown, run, Source::Live(subscriber), client))
    }

    /// Connects to the server at `url` and replays run `run` from its first event, as kept in
    /// its JetStream stream (the ranks published with [`NatsPublisher::store`](crate::NatsPublisher::store)),
    /// then goes on with what they publish: a watcher that joins late sees the whole run.
    /// Fails, saying so, when the server has no JetStream or the run was not kept.
    pub async fn replay(url: &str, run: &str) -> Result<Self, NatsError> {
        Self::replay_with(url, run, &NatsAuth::default()).await
    }

    /// As [`replay`](Self::replay), authenticating with `auth`.
    pub async fn replay_with(url: &str, run: &str, auth: &NatsAuth) -> Result<Self, NatsError> {
        run_subjects(run)?;
        let shown = redact_url(url);
        let client = options(url, auth)?
            .connect(url)
            .await
            .map_err(|e| NatsError::Connect {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        let messages = crate::store::replay(&client, &shown, run).await?;
        Ok(Self::new(
            &shown,
            run,
            Source::Stored(Box::new(messages)),
            client,
        ))
    }

    fn new(url: &str, run: &str, source: Source, client: async_nats::Client) -> Self {
        Self {
            url: url.to_owned(),
            run: run.to_owned(),
            source,
            decoders: HashMap::new(),
            ready: VecDeque::new(),
            ranks: Ranks::default(),
            headers: HashMap::new(),
            garbage: 0,
            rejected: 0,
            rejected_reported: 0,
            world_size: None,
            _client: client,
        }
    }

    /// The next event of any rank; `None` when the subscription closed.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            match &mut self.source {
                Source::Live(subscriber) => {
                    let message = subscriber.next().await?;
                    self.take(message.subject.as_str(), &message.payload);
                }
                Source::Stored(messages) => match messages.next().await? {
                    Ok(message) => {
                        let (subject, payload) = (message.subject.clone(), message.payload.clone());
                        self.take(subject.as_str(), &payload);
                    }
                    // The ordered consumer recreates itself after a gap; what it says is not
                    // a record.
                    Err(_) => self.garbage += 1,
                },
            }
        }
    }

    /// Decodes one message of `subject`.
    fn take(&mut self, subject: &str, payload: &[u8]) {
        let rank = subject::rank_of(subject);
        let decoder = self.decoders.entry(subject.to_owned()).or_default();
        decoder.push(payload);
        while let Some(item) = self
            .decoders
            .get_mut(subject)
            .and_then(StreamDecoder::next_item)
        {
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
        // A message is one record: what is left of it cannot be completed by the next.
        let decoder = self.decoders.entry(subject.to_owned()).or_default();
        if decoder.pending() > 0 {
            *decoder = StreamDecoder::new();
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

    /// The merged events as a `Stream`, for the operators of `giving::prelude` (each rank's
    /// rates: `.where_(["rate"]).group_by(…)`), ending when the subscription closes.
    pub fn into_stream(self) -> impl futures::Stream<Item = Event> + Send {
        futures::stream::unfold(self, |mut fan_in| async move {
            let event = fan_in.next().await?;
            Some((event, fan_in))
        })
    }

    /// What rank `rank` said about itself when it started publishing (its log header:
    /// command line, host, pid, crate versions), once received.
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

    /// Records rejected: those [`garbage`](Self::garbage) counts, and events whose rank is not
    /// their subject's or is outside the world size (see [`world_size`](Self::world_size)).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Accepts only ranks below `world_size` (without it, a rank is checked against the world
    /// size its own events announce).
    pub fn world_size(mut self, world_size: u64) -> Self {
        self.world_size = Some(world_size);
        self
    }

    /// The server's address (its password masked).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Gives every event received into `giver`'s scopes until `until` says to stop; returns
    /// how many it gave.
    pub async fn forward(&mut self, giver: &Giver, until: &Until) -> u64 {
        let given = self.forward_events(giver, until).await;
        if self.rejected > self.rejected_reported {
            giver.give(self.rejected_event());
        }
        given
    }

    async fn forward_events(&mut self, giver: &Giver, until: &Until) -> u64 {
        let mut given = 0;
        let mut last = tokio::time::Instant::now();
        loop {
            if until.done && self.ranks.all_done() && self.ready.is_empty() {
                return given;
            }
            if until.stop.as_ref().is_some_and(StopToken::is_stopped) {
                return given;
            }
            if until.idle.is_some_and(|idle| last.elapsed() >= idle) {
                return given;
            }
            match tokio::time::timeout(STOP_POLL, self.next()).await {
                Ok(Some(event)) => {
                    giver.give(event);
                    given += 1;
                    last = tokio::time::Instant::now();
                }
                Ok(None) => return given,
                Err(_) => {}
            }
        }
    }
}

impl std::fmt::Debug for FanIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanIn")
            .field("url", &self.url)
            .field("run", &self.run)
            .field("ranks", &self.ranks)
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
