//! The Server-Sent Events stream of one client: a batch per period with what changed since
//! the last, built when the connection can take it, so a stalled client holds no queue.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use giving::Timestamp;
use tokio::time::{Instant, MissedTickBehavior};

use super::shared::Shared;
use super::state::ClientView;

/// A comment line sent when nothing changed for this long, so proxies and the browser keep
/// the connection open.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// One client's stream of SSE frames: at once the whole state, then every `every` what
/// changed (nothing when nothing did). A batch is built only when the previous one was taken:
/// a client that does not read misses intermediate states rather than queueing them, and its
/// next batch carries every chart's points it lacks, already thinned. Ends when the server
/// shuts down.
pub(crate) fn events(shared: Arc<Shared>, every: Duration) -> impl Stream<Item = Bytes> + Send {
    // The first batch goes at once, without a tick: the first tick is one period later.
    let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let start = (shared, ticks, ClientView::default(), Instant::now(), true);
    futures::stream::unfold(
        start,
        |(shared, mut ticks, mut view, mut last_sent, first)| async move {
            let mut wait = !first;
            loop {
                if wait {
                    tokio::select! {
                        _ = ticks.tick() => {}
                        () = shared.shutdown.cancelled() => return None,
                    }
                }
                wait = true;
                let frame = match shared.state().batch(&mut view, Timestamp::now()) {
                    // `retry` makes a browser that lost the stream reconnect within a second.
                    Some(json) if first => format!("retry: 1000\nevent: state\ndata: {json}\n\n"),
                    Some(json) => format!("event: state\ndata: {json}\n\n"),
                    None if last_sent.elapsed() >= KEEPALIVE => ": keepalive\n\n".to_owned(),
                    None => continue,
                };
                last_sent = Instant::now();
                return Some((Bytes::from(frame), (shared, ticks, view, last_sent, false)));
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::shared::tests::shared;
    use futures::StreamExt;
    use giving::Event;
    use giving::vocab::keys;

    fn text(frame: Bytes) -> String {
        String::from_utf8(frame.to_vec()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn sends_the_state_at_once_then_only_changes_each_period() {
        let shared = shared();
        let mut events = Box::pin(events(shared.clone(), Duration::from_millis(250)));
        let first = text(events.next().await.unwrap());
        assert!(
            first.starts_with("retry: 1000\nevent: state\ndata: {"),
            "{first}"
        );

        shared
            .state()
            .observe(&Event::new([(keys::LOSS, giving::Value::F64(0.5))]));
        let before = Instant::now();
        let second = text(events.next().await.unwrap());
        // The next batch waits for the period, and carries the new point only.
        assert!(
            before.elapsed() >= Duration::from_millis(200),
            "{:?}",
            before.elapsed()
        );
        assert!(second.contains(r#""from":0,"key":"loss""#), "{second}");
        assert!(second.contains("[[0.0,0.5]]"), "{second}");

        // Nothing new: a keepalive comment after 15 s, not a batch.
        let before = Instant::now();
        let third = text(events.next().await.unwrap());
        assert_eq!(third, ": keepalive\n\n");
        assert!(before.elapsed() >= KEEPALIVE - Duration::from_millis(300));
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_stalls_gets_one_batch_with_everything_it_missed() {
        let shared = shared();
        let mut events = Box::pin(events(shared.clone(), Duration::from_millis(250)));
        events.next().await.unwrap();
        // The client reads nothing for a minute while 10 000 events arrive.
        for step in 0..10_000u64 {
            shared.state().observe(&Event::new([
                (keys::STEP, giving::Value::U64(step)),
                (keys::LOSS, giving::Value::F64(1.0)),
            ]));
        }
        tokio::time::advance(Duration::from_secs(60)).await;
        let batch = text(events.next().await.unwrap());
        let json: serde_json::Value =
            serde_json::from_str(batch.trim_start_matches("event: state\ndata: ").trim()).unwrap();
        let points = json["series"][0]["points"].as_array().unwrap().len();
        assert!(
            points < 2 * crate::web::series::KEPT_POINTS,
            "{points} points"
        );
        assert_eq!(json["events"].as_u64(), Some(10_000));
    }

    #[tokio::test(start_paused = true)]
    async fn ends_when_the_server_shuts_down() {
        let shared = shared();
        let mut events = Box::pin(events(shared.clone(), Duration::from_millis(250)));
        events.next().await.unwrap();
        shared.shutdown.cancel();
        assert!(events.next().await.is_none());
    }
}
