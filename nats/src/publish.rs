//! [`NatsPublisher`]: the instrument that publishes every event of a rank to NATS, fail-open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_nats::connection::State;
use giving::vocab::keys;
use giving::{Delivery, Event, Giver};
use giving_instruments::{Instrument, InstrumentError, SinkThread, Start};

use giving_log::redact_url;

use crate::auth::NatsAuth;
use crate::connect::options;
use crate::error::NatsError;
use crate::identity::Identity;
use crate::pump::{Link, PublishSummary, PumpConfig, pump};
use giving::vocab::keys::NATS_DROPPED;

/// Records kept while the server is unreachable, by default (about a minute of a fast loop's
/// steps; the oldest go first).
pub const DEFAULT_CAPACITY: usize = 65_536;
/// How long the end of a run waits for buffered records to reach the server, by default.
pub const DEFAULT_FINISH_WITHIN: Duration = Duration::from_secs(2);

/// How long the publisher waits for the JetStream stream to be made (events wait in the
/// bounded subscription meanwhile).
const STORE_WITHIN: Duration = Duration::from_secs(5);

/// Publishes every event of the run's scope on `giving.<run>.<rank>`, each as one record of
/// the MessagePack log's format (`docs/log-format.md`), tagged with the rank's [`Identity`];
/// an end record closes the run (the fan-in's mark that the rank is done).
///
/// **Fail-open.** Events are taken on a thread of its own (`giving-nats`) from a bounded
/// subscription, encoded there (lazy values resolved there) and kept in a bounded buffer
/// ([`capacity`](NatsPublisher::capacity)) while the server is unreachable: when it is full,
/// the oldest record is dropped and counted. The client reconnects by itself (also when the
/// server is down at start); sending resumes with the newest records kept. The drop count is
/// given into the run's scope as `{instrument: "nats", nats_dropped: N}` once a second while it
/// grows, and in the end record. The training loop only pays for a queue push, whatever the
/// server does; the run's end waits at most [`finish_within`](NatsPublisher::finish_within).
///
/// ```no_run
/// use giving::give;
/// use giving_instruments::Overseer;
/// use giving_nats::{Identity, NatsPublisher};
///
/// let me = Identity::from_env("exp1").unwrap();
/// let run = Overseer::new()
///     .with(NatsPublisher::new("nats://127.0.0.1:4222", me))
///     .run(|| give!(loss = 0.5));
/// assert!(run.problems.is_empty());
/// ```
pub struct NatsPublisher {
    url: String,
    auth: NatsAuth,
    identity: Identity,
    capacity: usize,
    finish_within: Duration,
    store: bool,
    thread: Option<SinkThread<PublishSummary>>,
    summary: Arc<Mutex<Option<PublishSummary>>>,
}

impl NatsPublisher {
    /// A publisher to the server at `url` (`nats://host:port`, or `host:port`) for the rank
    /// `identity`.
    pub fn new(url: &str, identity: Identity) -> Self {
        Self {
            url: url.to_owned(),
            auth: NatsAuth::default(),
            identity,
            capacity: DEFAULT_CAPACITY,
            finish_within: DEFAULT_FINISH_WITHIN,
            store: false,
            thread: None,
            summary: Arc::default(),
        }
    }

    /// Authenticates with `auth` (token, user and password, `.creds`, nkey, TLS); the URL's own
    /// credentials count without it.
    pub fn auth(mut self, auth: NatsAuth) -> Self {
        self.auth = auth;
        self
    }

    /// How many records are kept while the server is unreachable (default
    /// [`DEFAULT_CAPACITY`]); the subscription to the scope is bounded the same.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// How long the end of the run waits for the buffer to reach the server (default
    /// [`DEFAULT_FINISH_WITHIN`]); what is left then is dropped and counted.
    pub fn finish_within(mut self, within: Duration) -> Self {
        self.finish_within = within;
        self
    }

    /// Keep the run in a JetStream stream (created if needed: see
    /// [`stream_name`](crate::stream_name)), so that a watcher that joins late replays it
    /// ([`FanIn::replay`](crate::FanIn::replay)). Needs a server with JetStream
    /// (`nats-server -js`); without it, stderr says so once and events are published as
    /// usual.
    pub fn store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    /// The rank's identity.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// A handle to what the publisher did, filled in when the run finishes.
    pub fn summary(&self) -> Arc<Mutex<Option<PublishSummary>>> {
        self.summary.clone()
    }
}

/// The async-nats client as the pump's [`Link`].
struct Client(async_nats::Client, String);

impl Link for Client {
    fn is_up(&self) -> bool {
        self.0.connection_state() == State::Connected
    }

    async fn send(&self, record: Vec<u8>) -> bool {
        self.0.publish(self.1.clone(), record.into()).await.is_ok()
    }
}

/// Gives the drop count into the rank's scope, and says once on stderr that events are being
/// dropped.
fn reporter(giver: Giver, url: String) -> impl Fn(u64) {
    let said = AtomicBool::new(false);
    move |dropped| {
        if !said.swap(true, Ordering::Relaxed) {
            eprintln!(
                "giving: nats: `{url}` unreachable: events are being dropped (counted as \
                 `{NATS_DROPPED}`); training goes on"
            );
        }
        giver.give(
            Event::builder()
                .field(keys::INSTRUMENT, "nats")
                .field(NATS_DROPPED, dropped)
                .build(),
        );
    }
}

impl Instrument for NatsPublisher {
    fn name(&self) -> &str {
        "nats"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let stream = start
            .given()
            .stream_with(Delivery::Bounded(self.capacity))
            .paced(giving_instruments::SINK_PACE);
        let lag = stream.lag();
        let shown = redact_url(&self.url);
        // Bad settings (an address that is not one, a credentials file that cannot be read)
        // fail the start, before any event is taken; a refused login is reported by the
        // client as it retries.
        let connect = options(&self.url, &self.auth).map_err(InstrumentError::other)?;
        let report = reporter(start.given().giver(), shown.clone());
        let config = PumpConfig {
            identity: self.identity.clone(),
            capacity: self.capacity,
            finish_within: self.finish_within,
        };
        let url = self.url.clone();
        let summary = self.summary.clone();
        let store = self.store;
        let thread = SinkThread::spawn("giving-nats", move |_control| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| InstrumentError::other(NatsError::Runtime(e)))?;
            let done = runtime.block_on(async {
                let client = connect
                    .retry_on_initial_connect()
                    .connect(url.as_str())
                    .await
                    .map_err(|e| NatsError::Connect {
                        url: shown.clone(),
                        message: e.to_string(),
                    })?;
                if store {
                    let run = config.identity.run_name().to_owned();
                    let ensured = tokio::time::timeout(
                        STORE_WITHIN,
                        crate::store::ensure(&client, &shown, &run),
                    )
                    .await;
                    match ensured {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => eprintln!("giving: nats: {error}; the run is not kept"),
                        Err(_) => eprintln!(
                            "giving: nats: JetStream on `{shown}` did not answer within {STORE_WITHIN:?}; the run is not kept"
                        ),
                    }
                }
                let link = Client(client, config.identity.subject());
                let done = pump(&link, stream, || lag.dropped(), report, config).await;
                // What was handed to the connection reaches the server (bounded wait).
                let _ = tokio::time::timeout(Duration::from_millis(500), link.0.flush()).await;
                Ok::<_, NatsError>(done)
            });
            let done = done.map_err(InstrumentError::other)?;
            *summary.lock().unwrap_or_else(PoisonError::into_inner) = Some(done);
            Ok(done)
        })?;
        self.thread = Some(thread);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InstrumentError> {
        SinkThread::join_started(&mut self.thread)
    }
}

impl std::fmt::Debug for NatsPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsPublisher")
            .field("url", &redact_url(&self.url))
            .field("auth", &self.auth)
            .field("subject", &self.identity.subject())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}
