//! [`FanIn`]: every rank of a run, received from NATS as one stream of events.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use async_nats::Subscriber;
use async_nats::jetstream::consumer::push::Ordered;
use futures::StreamExt;
use giving::vocab::keys;
use giving::{Event, Giver, StopToken, Value};
use giving_log::{LogHeader, StreamDecoder, StreamItem};

use crate::connect::options;
use crate::error::NatsError;
use crate::ranks::Ranks;
use crate::subject::{self, run_subjects};
use giving::vocab::keys::{NATS_DROPPED, RANK_END};

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
        let subject = run_subjects(run)?;
        let client = options(url)
            .connect(url)
            .await
            .map_err(|e| NatsError::Connect {
                url: url.to_owned(),
                message: e.to_string(),
            })?;
        let subscriber =
            client
                .subscribe(subject.clone())
                .await
                .map_err(|e| NatsError::Subscribe {
                    subject: subject.clone(),
                    url: url.to_owned(),
                    message: e.to_string(),
                })?;
        // The subscription is registered with the server before `connect` returns, so that a
        // publisher started afterwards is not missed.
        let _ = tokio::time::timeout(Duration::from_secs(2), client.flush()).await;
        Ok(Self::new(url, run, Source::Live(subscriber), client))
    }

    /// Connects to the server at `url` and replays run `run` from its first event, as kept in
    /// its JetStream stream (the ranks published with [`NatsPublisher::store`](crate::NatsPublisher::store)),
    /// then goes on with what they publish: a watcher that joins late sees the whole run.
    /// Fails, saying so, when the server has no JetStream or the run was not kept.
    pub async fn replay(url: &str, run: &str) -> Result<Self, NatsError> {
        run_subjects(run)?;
        let client = options(url)
            .connect(url)
            .await
            .map_err(|e| NatsError::Connect {
                url: url.to_owned(),
                message: e.to_string(),
            })?;
        let messages = crate::store::replay(&client, url, run).await?;
        Ok(Self::new(
            url,
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
        while let Some(item) = decoder.next_item() {
            match item {
                StreamItem::Event(event) => {
                    let event = match (event.has(keys::RANK), rank) {
                        (false, Some(rank)) => event.with(keys::RANK, rank),
                        _ => event,
                    };
                    if let Some(rank) = event.get(keys::RANK).and_then(as_u64) {
                        let world = event.get(keys::WORLD_SIZE).and_then(as_u64);
                        self.ranks.saw(rank, world);
                    }
                    self.ready.push_back(event);
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
                    if let Some(rank) = rank {
                        self.headers.insert(rank, *header);
                    }
                }
                StreamItem::Garbage { .. } => self.garbage += 1,
            }
        }
        // A message is one record: what is left of it cannot be completed by the next.
        if decoder.pending() > 0 {
            self.garbage += 1;
            *decoder = StreamDecoder::new();
        }
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

    /// The server's address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Gives every event received into `giver`'s scopes until `until` says to stop; returns
    /// how many it gave.
    pub async fn forward(&mut self, giver: &Giver, until: &Until) -> u64 {
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
