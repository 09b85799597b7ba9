//! [`FanIn`]: every rank of a run, received from NATS as one stream of events.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_nats::Subscriber;
use async_nats::jetstream::consumer::push::Ordered;
use futures::{FutureExt, StreamExt};
use giving::vocab::keys::{INSTRUMENT, NATS_LOST};
use giving::{Event, Giver, StopToken};
use giving_log::{LogHeader, redact_url};

use crate::auth::NatsAuth;
use crate::connect::options_counting;
use crate::error::NatsError;
use crate::ranks::Ranks;
use crate::reception::Reception;
use crate::subject::run_subjects;

/// Subscribes to `giving.<run>.>` and yields the events of every rank as one stream, in the
/// order they arrive (each rank's in its own order). Events carry the publisher's tags
/// ([`RANK`](giving::vocab::keys::RANK), [`HOST`](giving::vocab::keys::HOST), …; an untagged record gets its rank from the
/// subject); a rank's end record becomes an event `{rank_end: events, nats_dropped, rank, run,
/// done: true}`.
/// Bytes that are not records, and records that are not from a rank of the run, are skipped
/// and counted ([`rejected`](FanIn::rejected); see [`Reception`]). The
/// client reconnects by itself, and subscribes again, if the server restarts. Messages the
/// client drops because the watcher fell behind are counted too ([`lost`](FanIn::lost)).
///
/// Give its events into a scope ([`forward`](FanIn::forward)) and every instrument — log,
/// trace, dashboard — consumes the ranks as it would one loop.
pub struct FanIn {
    url: String,
    run: String,
    source: Source,
    reception: Reception,
    /// Messages the client dropped because this fan-in fell behind (see [`FanIn::lost`]).
    lost: Arc<AtomicU64>,
    /// The count last given into the stream, and when.
    lost_reported: (u64, Option<Instant>),
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
        let lost = Arc::new(AtomicU64::new(0));
        let client = options_counting(url, auth, Some(lost.clone()))?
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
        Ok(Self::new(
            &shown,
            run,
            Source::Live(subscriber),
            client,
            lost,
        ))
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
        let lost = Arc::new(AtomicU64::new(0));
        let client = options_counting(url, auth, Some(lost.clone()))?
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
            lost,
        ))
    }

    fn new(
        url: &str,
        run: &str,
        source: Source,
        client: async_nats::Client,
        lost: Arc<AtomicU64>,
    ) -> Self {
        Self {
            url: url.to_owned(),
            run: run.to_owned(),
            source,
            reception: Reception::new(url, run),
            lost,
            lost_reported: (0, None),
            _client: client,
        }
    }

    /// Messages the NATS client dropped because this fan-in fell behind (a slow consumer: its
    /// queue of 65,536 messages was full), as the client reported them: a lower bound, since
    /// the reports pass through a bounded queue of their own. The first is said on stderr;
    /// the count is given into the stream as `{instrument: "nats", nats_lost}` when it grows
    /// (at most once a second) and at the end.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// `{instrument: "nats", nats_lost}` if the count grew since it was last given and
    /// `due` allows (a second after the last, or `at_end`).
    fn lost_event(&mut self, at_end: bool) -> Option<Event> {
        let lost = self.lost();
        let (reported, when) = self.lost_reported;
        let due = at_end || when.is_none_or(|when| when.elapsed() >= Duration::from_secs(1));
        if lost <= reported || !due {
            return None;
        }
        self.lost_reported = (lost, Some(Instant::now()));
        Some(
            Event::builder()
                .field(INSTRUMENT, "nats")
                .field(NATS_LOST, lost)
                .build(),
        )
    }

    /// The next event of any rank; `None` when the subscription closed.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.lost_event(false) {
                return Some(event);
            }
            if let Some(event) = self.reception.pop() {
                return Some(event);
            }
            match &mut self.source {
                Source::Live(subscriber) => {
                    let message = subscriber.next().await?;
                    self.reception
                        .take(message.subject.as_str(), &message.payload);
                }
                Source::Stored(messages) => match messages.next().await? {
                    Ok(message) => {
                        let (subject, payload) = (message.subject.clone(), message.payload.clone());
                        self.reception.take(subject.as_str(), &payload);
                    }
                    // The ordered consumer recreates itself after a gap; what it says is not
                    // a record.
                    Err(_) => self.reception.count_garbage(),
                },
            }
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
        self.reception.header(rank)
    }

    /// The ranks heard from so far.
    pub fn ranks(&self) -> &Ranks {
        self.reception.ranks()
    }

    /// Messages (or stretches of them) that were not records.
    pub fn garbage(&self) -> u64 {
        self.reception.garbage()
    }

    /// Records rejected: those [`garbage`](Self::garbage) counts, and events whose rank is not
    /// their subject's or is outside the world size (see [`world_size`](Self::world_size)).
    pub fn rejected(&self) -> u64 {
        self.reception.rejected()
    }

    /// Accepts only ranks below `world_size` (without it, a rank is checked against the world
    /// size its own events announce).
    pub fn world_size(mut self, world_size: u64) -> Self {
        self.reception = self.reception.world_size(world_size);
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
        if let Some(report) = self.reception.final_report() {
            giver.give(report);
        }
        if let Some(lost) = self.lost_event(true) {
            giver.give(lost);
        }
        given
    }

    async fn forward_events(&mut self, giver: &Giver, until: &Until) -> u64 {
        let mut given = 0;
        let mut last = tokio::time::Instant::now();
        loop {
            if until.done && self.reception.ranks().all_done() && self.reception.is_empty() {
                return given;
            }
            if until.stop.as_ref().is_some_and(StopToken::is_stopped) {
                return given;
            }
            if until.idle.is_some_and(|idle| last.elapsed() >= idle) {
                return given;
            }
            // A message already waiting is taken without arming a timer: at tens of
            // thousands of events a second, a timer per event is a cost the loop need not pay.
            // (`next` is cancel-safe: its state is in the subscription and the reception.)
            let next = match self.next().now_or_never() {
                Some(next) => Ok(next),
                None => tokio::time::timeout(STOP_POLL, self.next()).await,
            };
            match next {
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
            .field("ranks", self.reception.ranks())
            .finish_non_exhaustive()
    }
}
