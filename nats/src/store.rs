//! JetStream: a run's subjects kept in a stream (`GIVING_<run>`), so that a watcher that joins
//! late replays the run from its first event ([`FanIn::replay`](crate::FanIn::replay)).
//!
//! Ranks publish with plain NATS as always; a stream whose subjects are `giving.<run>.>` makes
//! the server keep what they publish. The publisher creates it when asked
//! ([`NatsPublisher::store`](crate::NatsPublisher::store)), on a server started with JetStream
//! (`nats-server -js`).

use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};

use crate::error::NatsError;
use crate::subject::run_subjects;

/// How long a run is kept, by default.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The JetStream stream that keeps run `run`: `GIVING_<run>`, with any character a stream
/// name may not hold (`.`, `*`, `>`, `/`, `\`, whitespace) as `_`.
///
/// ```
/// assert_eq!(giving_nats::stream_name("exp-1"), "GIVING_exp-1");
/// ```
pub fn stream_name(run: &str) -> String {
    let safe: String = run
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("GIVING_{safe}")
}

/// Makes sure the stream keeping run `run` exists.
pub(crate) async fn ensure(
    client: &async_nats::Client,
    url: &str,
    run: &str,
) -> Result<(), NatsError> {
    let context = jetstream::new(client.clone());
    let config = stream::Config {
        name: stream_name(run),
        subjects: vec![run_subjects(run)?],
        max_age: DEFAULT_MAX_AGE,
        ..Default::default()
    };
    context
        .get_or_create_stream(config)
        .await
        .map(drop)
        .map_err(|e| NatsError::JetStream {
            url: url.to_owned(),
            run: run.to_owned(),
            message: e.to_string(),
        })
}

/// Every message of run `run` kept so far, then the new ones as they come, in order.
pub(crate) async fn replay(
    client: &async_nats::Client,
    url: &str,
    run: &str,
) -> Result<consumer::push::Ordered, NatsError> {
    let error = |message: String| NatsError::JetStream {
        url: url.to_owned(),
        run: run.to_owned(),
        message,
    };
    let context = jetstream::new(client.clone());
    let stream = context
        .get_stream(stream_name(run))
        .await
        .map_err(|e| error(format!("{e} (was it published with --publish-store?)")))?;
    let consumer = stream
        .create_consumer(consumer::push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(|e| error(e.to_string()))?;
    consumer.messages().await.map_err(|e| error(e.to_string()))
}
